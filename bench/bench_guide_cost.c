/* bench_guide_cost: what the guided search's models cost per generation at a paper-scale
 * record count (docs/search.md §10): N distinct genomes of an app (its initial population's
 * kind of one-gene genomes, then mutants of them), each given a made-up measurement, the models
 * fitted on them, and K children (mutants) predicted: the work of one guided generation once a
 * search has measured N candidates. Nothing is compiled or timed but the models themselves;
 * the times it prints are CPU work of one process (label them as measured under load on a
 * shared machine).
 * Usage: bench_guide_cost [APP.pf] [N ...]   (default apps/blur.pf; N 100 500 1000 3000) */
#include "base/arena.h"
#include "base/clock.h"
#include "codegen/compile.h"
#include "lang/lang.h"
#include "search/ga.h"
#include "search/genome.h"
#include "search/model.h"
#include "search/rng.h"
#include "search/strmap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* n distinct genomes: one-gene ones, then mutants of earlier ones (as a search's records). */
static int make_genomes(const pf_program *prog, const pf_genome_ctx *c, pf_rng *r, int n,
                        pf_schedule *out)
{
    pf_strmap seen;
    pf_strmap_init(&seen);
    int k = 0;
    for (int tries = 0; k < n && tries < 50 * n; tries++) {
        pf_schedule s;
        pf_genome_initial(c, r, &s);
        for (int m = k > 0 ? (int)(pf_rng_next(r) % 6) : 0; m > 0; m--)
            pf_genome_mutate(c, r, &s);
        char *text = pf_schedule_text(prog, &s);
        if (pf_strmap_add(&seen, text, k))
            out[k++] = s;
        else
            pf_schedule_free(&s);
        free(text);
    }
    pf_strmap_free(&seen);
    return k;
}

static void one_size(const pf_program *prog, const pf_genome_ctx *c, int n, int children)
{
    pf_rng r;
    pf_rng_seed(&r, 5);
    pf_schedule *g = pf_xcalloc((size_t)(n + children), sizeof *g);
    int got = make_genomes(prog, c, &r, n + children, g);
    if (got < n + children) {
        printf("%6d  only %d distinct genomes\n", n, got);
        n = got - children;
    }
    pf_model m;
    pf_model_init(&m, prog, pf_host_plan_target().vector_lanes);
    for (int i = 0; i < n; i++) {
        char *text = pf_schedule_text(prog, &g[i]);
        /* a made-up measurement: fewer samples, faster; more genes, more error */
        double t = 0.2 + pf_rng_uniform(&r), e = pf_genome_count(&g[i]) * pf_rng_uniform(&r);
        pf_model_add(&m, text, t, e);
        free(text);
    }
    double t0 = pf_now_ms();
    pf_model_fit(&m);
    double t1 = pf_now_ms();
    for (int i = n; i < n + children; i++) {
        double t, e;
        pf_model_predict(&m, &g[i], &t, &e);
    }
    double t2 = pf_now_ms();
    printf("%6d %8.0f %8d %10.0f %12.2f\n", m.n, t1 - t0, children, t2 - t1,
           (t2 - t1) / children);
    pf_model_free(&m);
    for (int i = 0; i < got; i++)
        pf_schedule_free(&g[i]);
    free(g);
}

int main(int argc, char **argv)
{
    const char *app = argc > 1 && argv[1][0] != '-' && !atoi(argv[1]) ? argv[1]
                                                                       : PF_SOURCE_DIR
                                                                         "/apps/blur.pf";
    pf_error err;
    pf_program *prog = pf_load_program(app, &err);
    if (!prog) {
        fprintf(stderr, "bench_guide_cost: %s\n", err.msg);
        return 1;
    }
    pf_genome_params p = pf_genome_params_default();
    pf_genome_ctx c;
    pf_genome_ctx_init(&c, prog, &p);
    printf("# bench_guide_cost: %s; the models' fit and 280 predictions (population 100: 14 "
           "measured x 20 bred) per generation\n# records  fit ms children predict ms  ms/child\n",
           app);
    int sizes[] = { 100, 500, 1000, 3000 }, n_sizes = 4, given = 0;
    for (int i = 1; i < argc; i++)
        if (atoi(argv[i]) > 0)
            sizes[given++ % 4] = atoi(argv[i]);
    for (int i = 0; i < (given ? (given < 4 ? given : 4) : n_sizes); i++)
        one_size(prog, &c, sizes[i], 280);
    pf_genome_ctx_free(&c);
    pf_program_free(prog);
    return 0;
}
