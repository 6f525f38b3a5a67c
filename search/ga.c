/* One generation of the released GA (see ga.h): Pareto ranks, elitism, tournament mutants and
 * crossover children, the `seen` set; and its checkpoint form. */
#include "search/ga.h"
#include "search/ga_internal.h"

#include "base/arena.h"
#include "search/pareto.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pf_ga_params pf_ga_params_default(void)
{
    pf_ga_params p = { 100, 200, 2, 0.3, 0.3, 1, true, pf_genome_params_default() };
    return p;
}

char *pf_schedule_text(const pf_program *prog, const pf_schedule *s)
{
    pf_strbuf sb;
    pf_sb_init(&sb);
    pf_schedule_print(prog, s, &sb);
    return pf_sb_take(&sb);
}

void pf_ga_init(pf_ga *ga, const pf_program *prog, const pf_ga_params *p)
{
    memset(ga, 0, sizeof *ga);
    ga->p = *p;
    ga->prog = prog;
    pf_genome_ctx_init(&ga->ctx, prog, &p->genome);
    pf_rng_seed(&ga->rng, p->seed);
    ga->generation = -1;
    pf_strmap_init(&ga->seen);
    pf_strmap_init(&ga->seen_code);
}

static void free_members(pf_ga_member *m, int n)
{
    for (int i = 0; i < n; i++) {
        free(m[i].text);
        pf_schedule_free(&m[i].sched);
    }
    free(m);
}

void pf_ga_free(pf_ga *ga)
{
    free_members(ga->pop, ga->n_pop);
    free_members(ga->next, ga->n_next);
    pf_genome_ctx_free(&ga->ctx);
    pf_strmap_free(&ga->seen);
    pf_strmap_free(&ga->seen_code);
    memset(ga, 0, sizeof *ga);
}

char *pf_ga_same_code_text(const pf_ga *ga, const pf_schedule *s)
{
    pf_schedule c;
    pf_schedule_copy(&c, s);
    for (int l = 0; l < c.n_loops; l++)
        /* a full grid too: a guided bilateral search measured 12 of 54 children with
         * `grid 1 1` genes, 1.00-1.24x the exact time */
        if (pf_gene_skips_nothing(&c.approx[l]) || pf_gene_full_grid(&c.approx[l]))
            memset(&c.approx[l], 0, sizeof c.approx[l]);  /* PF_GENE_EXACT */
    char *text = pf_schedule_text(ga->prog, &c);
    pf_schedule_free(&c);
    return text;
}

static void mark_same_code(pf_ga *ga, const pf_schedule *s)
{
    char *text = pf_ga_same_code_text(ga, s);
    pf_strmap_add(&ga->seen_code, text, 0);
    free(text);
}

void pf_ga_mark_seen(pf_ga *ga, const char *text)
{
    pf_strmap_add(&ga->seen, text, 0);
    pf_schedule s;
    pf_error err;
    if (pf_schedule_parse(ga->prog, text, "<seen>", &s, &err) == 0) {
        mark_same_code(ga, &s);
        pf_schedule_free(&s);
    }
}

/* Takes s into the next generation unless its text was seen; frees s otherwise. The member
 * keeps the schedule its text describes (fractions rounded to six digits, as evaluated and as
 * a checkpoint restores it), so that a resumed run breeds from the same genomes. */
static bool offer(pf_ga *ga, pf_schedule *s, pf_ga_origin origin)
{
    char *text = pf_schedule_text(ga->prog, s);
    if (!pf_strmap_add(&ga->seen, text, 0)) {
        ga->rejected++;
        free(text);
        pf_schedule_free(s);
        return false;
    }
    pf_schedule parsed;
    pf_error err;
    if (pf_schedule_parse(ga->prog, text, "<genome>", &parsed, &err) == 0) {
        pf_schedule_free(s);
        *s = parsed;
    }
    mark_same_code(ga, s);
    pf_ga_member *m = &ga->next[ga->n_next++];
    memset(m, 0, sizeof *m);
    m->text = text;
    m->origin = origin;
    m->sched = *s;
    m->time = m->error = INFINITY;
    m->pred_time = m->pred_error = NAN;
    return true;
}

/* Fresh genomes per slot before the slot is given up (a small space can run out of them). */
#define SLOT_TRIES 100

/* The structured seeds take at most half of the population after the exact program, so that
 * random one-gene genomes keep the released GA's diversity. */
static int offer_seeds(pf_ga *ga)
{
    int max = (ga->p.population - 1) / 2;
    if (!ga->p.seeds || max < 1)
        return 0;
    pf_schedule *seeds = pf_xcalloc((size_t)max, sizeof *seeds);
    int n = pf_genome_seeds(&ga->ctx, max, seeds), taken = 0;
    for (int i = 0; i < n; i++)
        taken += offer(ga, &seeds[i], PF_ORIGIN_INITIAL);
    free(seeds);
    return taken;
}

static void propose_initial(pf_ga *ga)
{
    pf_schedule s;
    pf_schedule_init(&s, ga->prog);
    offer(ga, &s, PF_ORIGIN_INITIAL);  /* the exact program, default execution schedule */
    for (int slot = 1 + offer_seeds(ga); slot < ga->p.population; slot++)
        for (int t = 0; t < SLOT_TRIES; t++) {
            pf_genome_initial(&ga->ctx, &ga->rng, &s);
            if (offer(ga, &s, PF_ORIGIN_INITIAL))
                break;
        }
}

int pf_ga_tournament(pf_rng *r, const int *rank, int n, int k)
{
    if (k > n)
        k = n;
    int *picked = pf_xmalloc(sizeof *picked * (size_t)(k + 1));
    int best = -1;
    for (int i = 0; i < k; i++) {
        int c;
        bool again;
        do {  /* distinct individuals */
            c = pf_rng_below(r, n);
            again = false;
            for (int j = 0; j < i; j++)
                again |= picked[j] == c;
        } while (again);
        picked[i] = c;
        if (best < 0 || rank[c] < rank[best])
            best = c;
    }
    free(picked);
    return best;
}

static int *rank_population(const pf_ga *ga)
{
    int n = ga->n_pop;
    double *t = pf_xmalloc(sizeof *t * 2 * (size_t)(n + 1)), *e = t + n;
    for (int i = 0; i < n; i++) {
        t[i] = ga->pop[i].time;
        e[i] = ga->pop[i].error;
    }
    int *rank = pf_xmalloc(sizeof *rank * (size_t)(n + 1));
    pf_pareto_rank(t, e, n, rank);
    free(t);
    return rank;
}

static const int *sort_ranks;
static int cmp_rank(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    if (sort_ranks[a] != sort_ranks[b])
        return sort_ranks[a] - sort_ranks[b];
    return a - b;  /* stable */
}

static void keep_elites(pf_ga *ga, const int *rank, int n_elite)
{
    int *order = pf_xmalloc(sizeof *order * (size_t)(ga->n_pop + 1));
    for (int i = 0; i < ga->n_pop; i++)
        order[i] = i;
    sort_ranks = rank;
    qsort(order, (size_t)ga->n_pop, sizeof *order, cmp_rank);
    for (int i = 0; i < n_elite && i < ga->n_pop; i++) {
        const pf_ga_member *src = &ga->pop[order[i]];
        pf_ga_member *m = &ga->next[ga->n_next++];
        *m = *src;
        m->text = pf_xstrdup(src->text);
        m->origin = PF_ORIGIN_ELITE;
        pf_schedule_copy(&m->sched, &src->sched);
    }
    free(order);
}

void pf_ga_breed_child(pf_ga *ga, const int *rank, bool crossover, pf_schedule *child)
{
    int n = ga->n_pop, k = ga->p.tournament;
    const pf_ga_member *a = &ga->pop[pf_ga_tournament(&ga->rng, rank, n, k)];
    if (crossover) {
        const pf_ga_member *b = &ga->pop[pf_ga_tournament(&ga->rng, rank, n, k)];
        pf_genome_crossover(&ga->ctx, &ga->rng, &a->sched, &b->sched, child);
    } else {
        pf_schedule_copy(child, &a->sched);
        pf_genome_mutate(&ga->ctx, &ga->rng, child);
    }
}

/* One child of a tournament winner (mutant) or of two (crossover); false if it was seen. */
static bool breed_one(pf_ga *ga, const int *rank, bool crossover)
{
    pf_schedule child;
    pf_ga_breed_child(ga, rank, crossover, &child);
    return offer(ga, &child, crossover ? PF_ORIGIN_CROSSOVER : PF_ORIGIN_MUTANT);
}

/* Fills slots up to `upto`. Crossover of a converged population keeps giving its parents back;
 * a slot that finds no new child that way takes a mutant, and one that finds none at all stays
 * empty (the generation is smaller: a tiny space is exhausted). */
static void breed(pf_ga *ga, const int *rank, int upto, bool crossover)
{
    for (int slot = ga->n_next; slot < upto; slot++) {
        bool found = false;
        for (int t = 0; t < SLOT_TRIES && !found; t++)
            found = breed_one(ga, rank, crossover);
        for (int t = 0; t < SLOT_TRIES && !found && crossover; t++)
            found = breed_one(ga, rank, false);
    }
}

int pf_ga_propose(pf_ga *ga)
{
    free_members(ga->next, ga->n_next);
    ga->n_next = 0;
    ga->next = pf_xcalloc((size_t)ga->p.population + (size_t)ga->guide.measure + 1,
                          sizeof *ga->next);
    if (ga->generation < 0 || ga->n_pop == 0) {
        propose_initial(ga);
        return ga->n_next;
    }
    int N = ga->p.population;
    int n_elite = (int)floor(ga->p.elite_frac * N);
    int n_mut = (int)floor((ga->p.elite_frac + ga->p.mutant_frac) * N);
    int *rank = rank_population(ga);
    if (ga->guide.choose) {
        keep_elites(ga, rank, ga->n_pop);  /* (mu + lambda): the commit keeps the best N */
        pf_ga_breed_guided(ga, rank);
    } else {
        keep_elites(ga, rank, n_elite);
        breed(ga, rank, n_mut, false);
        breed(ga, rank, N, true);
    }
    free(rank);
    return ga->n_next;
}

void pf_ga_measured(pf_ga *ga, int i, double time, double error)
{
    ga->next[i].measured = true;
    ga->next[i].time = isnan(time) ? INFINITY : time;
    ga->next[i].error = isnan(error) ? INFINITY : error;
}

void pf_ga_commit(pf_ga *ga)
{
    free_members(ga->pop, ga->n_pop);
    ga->pop = ga->next;
    ga->n_pop = ga->n_next;
    if (ga->guide.choose && ga->n_pop > ga->p.population)
        ga->n_pop = pf_ga_truncate(ga->pop, ga->n_pop, ga->p.population);
    ga->next = NULL;
    ga->n_next = 0;
    ga->generation++;
}

/* ---- for the guided breeding (ga_guided.c) ---- */

bool pf_ga_offer(pf_ga *ga, pf_schedule *s, pf_ga_origin origin)
{
    return offer(ga, s, origin);
}

/* ---- checkpoint ---- */

static json_object *num_or_null(double v)
{
    return isfinite(v) ? json_object_new_double(v) : NULL;
}

json_object *pf_ga_to_json(const pf_ga *ga)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "generation", json_object_new_int(ga->generation));
    json_object *rng = json_object_new_array();
    for (int i = 0; i < 4; i++) {
        char hex[20];
        snprintf(hex, sizeof hex, "%016" PRIx64, ga->rng.s[i]);
        json_object_array_add(rng, json_object_new_string(hex));
    }
    json_object_object_add(o, "rng", rng);
    json_object_object_add(o, "rejected_duplicates", json_object_new_int64(ga->rejected));
    json_object *pop = json_object_new_array();
    for (int i = 0; i < ga->n_pop; i++) {
        json_object *m = json_object_new_object();
        json_object_object_add(m, "time", num_or_null(ga->pop[i].time));
        json_object_object_add(m, "error", num_or_null(ga->pop[i].error));
        json_object_object_add(m, "schedule", json_object_new_string(ga->pop[i].text));
        json_object_array_add(pop, m);
    }
    json_object_object_add(o, "population", pop);
    return o;
}

static double get_num(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && v ? json_object_get_double(v) : INFINITY;
}

static int read_rng(pf_ga *ga, json_object *o, pf_error *err)
{
    json_object *rng;
    if (!json_object_object_get_ex(o, "rng", &rng) || json_object_array_length(rng) != 4)
        return pf_fail(err, "the checkpoint has no generator state");
    for (int i = 0; i < 4; i++) {
        const char *hex = json_object_get_string(json_object_array_get_idx(rng, (size_t)i));
        ga->rng.s[i] = strtoull(hex ? hex : "0", NULL, 16);
    }
    return 0;
}

static int read_member(pf_ga *ga, json_object *j, pf_ga_member *m, pf_error *err)
{
    json_object *v;
    const char *text = json_object_object_get_ex(j, "schedule", &v) ? json_object_get_string(v)
                                                                     : NULL;
    if (!text || pf_schedule_parse(ga->prog, text, "<checkpoint>", &m->sched, err) != 0)
        return pf_fail_prefix(err, "a checkpointed genome");
    m->text = pf_schedule_text(ga->prog, &m->sched);
    m->measured = true;
    m->time = get_num(j, "time");
    m->error = get_num(j, "error");
    return 0;
}

int pf_ga_from_json(pf_ga *ga, json_object *o, pf_error *err)
{
    json_object *v, *pop;
    if (!json_object_object_get_ex(o, "generation", &v) ||
        !json_object_object_get_ex(o, "population", &pop) || read_rng(ga, o, err) != 0)
        return pf_fail(err, "the checkpoint lacks the GA state");
    ga->generation = json_object_get_int(v);
    if (json_object_object_get_ex(o, "rejected_duplicates", &v))
        ga->rejected = json_object_get_int64(v);
    free_members(ga->pop, ga->n_pop);
    ga->n_pop = (int)json_object_array_length(pop);
    ga->pop = pf_xcalloc((size_t)ga->n_pop + 1, sizeof *ga->pop);
    for (int i = 0; i < ga->n_pop; i++)
        if (read_member(ga, json_object_array_get_idx(pop, (size_t)i), &ga->pop[i], err)) {
            ga->n_pop = i;
            return -1;
        }
    return 0;
}
