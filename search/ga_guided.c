/* Model-guided breeding (ga.h, pf_ga_guide; docs/search.md §10): a generation keeps its
 * whole measured population, breeds `pool` children for every one it will measure with the
 * released operators (and, with lookahead, more pools from parents ranked by their
 * predictions), lets the guide choose which to measure, and the commit keeps the best N by
 * Pareto rank, crowding deciding the last rank. Children not chosen are forgotten (not
 * `seen`): a later generation may breed and choose them. */
#include "search/ga_internal.h"

#include "base/arena.h"
#include "search/pareto.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Draws per pool member before the pool is given up (a small space runs out of new genomes). */
#define POOL_TRIES 20
/* Failed crossovers in a row after which the pool takes mutants (a converged population). */
#define CROSSOVER_FAILS 100

static void free_pool(pf_ga_member *pool, int n)
{
    for (int i = 0; i < n; i++) {
        free(pool[i].text);
        pf_schedule_free(&pool[i].sched);
    }
    free(pool);
}

/* A new pool member from `child` (consumed), unless it would run the code of one seen or of
 * one already in the pool (pf_ga_same_code_text: of 54 children a guided median search
 * measured, 15-29 re-ran a measured candidate's code with `median_y_loop step 1` added or
 * dropped; its prediction is the measured one's, so the optimism of the guide made it look
 * ahead of itself). The member keeps the schedule its text describes, as offer does. */
static bool pool_add(pf_ga *ga, pf_strmap *in_pool, pf_schedule *child, pf_ga_origin origin,
                     pf_ga_member *m)
{
    char *text = pf_schedule_text(ga->prog, child), *code = pf_ga_same_code_text(ga, child);
    pf_schedule parsed;
    pf_error err;
    bool fresh = !pf_strmap_get(&ga->seen_code, code, NULL) && pf_strmap_add(in_pool, code, 0) &&
                 pf_schedule_parse(ga->prog, text, "<genome>", &parsed, &err) == 0;
    free(code);
    pf_schedule_free(child);
    if (!fresh) {
        ga->rejected++;
        free(text);
        return false;
    }
    memset(m, 0, sizeof *m);
    m->text = text;
    m->sched = parsed;
    m->origin = origin;
    m->time = m->error = INFINITY;
    m->pred_time = m->pred_error = NAN;
    return true;
}

/* Up to `size` pool members bred from ga->pop: mutants and crossover children in the
 * released GA's proportions. Returns how many. */
static int breed_pool(pf_ga *ga, const int *rank, pf_strmap *in_pool, pf_ga_member *pool,
                      int size)
{
    double keep = ga->p.elite_frac < 1 ? 1 - ga->p.elite_frac : 1;
    int n_mut = (int)lround(size * fmin(1, ga->p.mutant_frac / keep)), n = 0, fails = 0;
    for (int t = 0; n < size && t < POOL_TRIES * size; t++) {
        bool crossover = n >= n_mut && fails < CROSSOVER_FAILS;
        pf_schedule child;
        pf_ga_breed_child(ga, rank, crossover, &child);
        pf_ga_origin o = crossover ? PF_ORIGIN_CROSSOVER : PF_ORIGIN_MUTANT;
        if (pool_add(ga, in_pool, &child, o, &pool[n])) {
            n++;
            fails = 0;
        } else {
            fails += crossover;
        }
    }
    return n;
}

/* Neighbours taken per frontier member, at most. */
#define NEAR_MAX 32

/* The sampling neighbours (pf_genome_neighbours) of the population's rank 0, the measured
 * frontier, and each member with another's execution schedule
 * (pf_genome_exec_transplants: the median's frontier had the exact program at 16 lanes and
 * `grid 1 2 1` at 8, 1.4x slower than at 16, which the GA found and the guided search did
 * not), as pool members: the models predict best next to what was measured, and the
 * released operators, which redraw a gene from the templates, seldom breed the next grid of a
 * good one (bilateral filter, seeds 11-13: the plain GA's frontier walks `loop_pixels grid`
 * 1 2, 2 2, 1 4, 2 4, 4 4, 1 8, 2 8, 4 8; the guided search had measured 4-5 of them). Random
 * execution mutants of the frontier as well made it worse (+10% of the GA's area, from +4%).
 * And each member with a strided stage at the other vector width (pf_genome_width_neighbours).
 * Returns how many; pool has room for 3 x NEAR_MAX per rank-0 member. */
static int breed_neighbours(pf_ga *ga, const int *rank, pf_strmap *in_pool, pf_ga_member *pool)
{
    pf_schedule near[NEAR_MAX];
    const pf_schedule **front = pf_xmalloc(sizeof *front * (size_t)(ga->n_pop + 1));
    int n = 0, n_front = 0;
    for (int i = 0; i < ga->n_pop; i++)
        if (rank[i] == 0 && ga->pop[i].measured)
            front[n_front++] = &ga->pop[i].sched;
    for (int i = 0; i < n_front; i++) {
        int k = pf_genome_neighbours(&ga->ctx, front[i], near, NEAR_MAX);
        for (int j = 0; j < k; j++)
            n += pool_add(ga, in_pool, &near[j], PF_ORIGIN_MUTANT, &pool[n]);
        k = pf_genome_exec_transplants(&ga->ctx, front[i], front, n_front, near, NEAR_MAX);
        for (int j = 0; j < k; j++)
            n += pool_add(ga, in_pool, &near[j], PF_ORIGIN_MUTANT, &pool[n]);
        k = pf_genome_width_neighbours(&ga->ctx, front[i], near, NEAR_MAX);
        for (int j = 0; j < k; j++)
            n += pool_add(ga, in_pool, &near[j], PF_ORIGIN_MUTANT, &pool[n]);
    }
    free(front);
    return n;
}

static void best_order(const pf_ga_member *m, int count, int *order);

/* One lookahead step: the best N of the measured population and the pool so far (pool
 * members at their predictions, the ones without a finite prediction as invalid) become the
 * parents of up to `size` more pool members. The measured members keep their measurements, so
 * a step never forgets what is known; parents are shallow copies, ga->pop is put back. */
static int breed_ahead(pf_ga *ga, pf_strmap *in_pool, pf_ga_member *pool, int n, int size)
{
    ga->guide.predict(ga->guide.ctx, pool, n);
    int count = ga->n_pop + n, N = ga->p.population;
    pf_ga_member *all = pf_xmalloc(sizeof *all * (size_t)(count + 1));
    memcpy(all, ga->pop, sizeof *all * (size_t)ga->n_pop);
    for (int i = 0; i < n; i++) {
        pf_ga_member *v = &all[ga->n_pop + i];
        *v = pool[i];
        bool known = isfinite(v->pred_time) && isfinite(v->pred_error);
        v->time = known ? v->pred_time : INFINITY;
        v->error = known ? v->pred_error : INFINITY;
    }
    int *order = pf_xmalloc(sizeof *order * (size_t)(count + 1));
    best_order(all, count, order);
    int np = count < N ? count : N;
    pf_ga_member *parents = pf_xmalloc(sizeof *parents * (size_t)(np + 1));
    double *t = pf_xmalloc(sizeof *t * 2 * (size_t)(np + 1)), *e = t + np;
    for (int i = 0; i < np; i++) {
        parents[i] = all[order[i]];
        t[i] = parents[i].time;
        e[i] = parents[i].error;
    }
    int *rank = pf_xmalloc(sizeof *rank * (size_t)(np + 1));
    pf_pareto_rank(t, e, np, rank);
    pf_ga_member *saved = ga->pop;
    int saved_n = ga->n_pop;
    ga->pop = parents;
    ga->n_pop = np;
    int bred = breed_pool(ga, rank, in_pool, pool + n, size);
    ga->pop = saved;
    ga->n_pop = saved_n;
    free(rank);
    free(t);
    free(parents);
    free(order);
    free(all);
    return bred;
}

void pf_ga_breed_guided(pf_ga *ga, const int *rank)
{
    int k = ga->guide.measure, size = k * (ga->guide.pool > 0 ? ga->guide.pool : 1);
    int steps = ga->guide.predict && ga->guide.lookahead > 0 ? ga->guide.lookahead : 0;
    int front = 0;
    for (int i = 0; i < ga->n_pop; i++)
        front += rank[i] == 0;
    pf_ga_member *pool = pf_xcalloc((size_t)size * (size_t)(steps + 1) +
                                        (size_t)front * 3 * NEAR_MAX + 1, sizeof *pool);
    pf_strmap in_pool;
    pf_strmap_init(&in_pool);
    int n = breed_pool(ga, rank, &in_pool, pool, size);
    n += breed_neighbours(ga, rank, &in_pool, pool + n);
    for (int s = 0; s < steps && n > 0; s++)
        n += breed_ahead(ga, &in_pool, pool, n, size);
    pf_strmap_free(&in_pool);
    int *chosen = pf_xmalloc(sizeof *chosen * (size_t)(k + 1));
    int c = n > 0 ? ga->guide.choose(ga->guide.ctx, ga, pool, n, k, chosen) : 0;
    for (int i = 0; i < c; i++) {
        pf_ga_member *m = &pool[chosen[i]];
        double pt = m->pred_time, pe = m->pred_error;
        bool taken = pf_ga_offer(ga, &m->sched, m->origin);
        memset(&m->sched, 0, sizeof m->sched);  /* the generation's now, or freed */
        if (!taken)
            continue;
        ga->next[ga->n_next - 1].pred_time = pt;
        ga->next[ga->n_next - 1].pred_error = pe;
    }
    free(chosen);
    free_pool(pool, n);
}

/* ---- truncation: the best n by rank, crowding on the last rank ---- */

typedef struct order_key {
    int index, rank;
    double crowd;
} order_key;

static int cmp_key(const void *x, const void *y)
{
    const order_key *a = x, *b = y;
    if (a->rank != b->rank)
        return a->rank - b->rank;
    if (a->crowd != b->crowd)
        return a->crowd > b->crowd ? -1 : 1;
    return a->index - b->index;
}

static const pf_ga_member *crowd_members;
static int cmp_error(const void *x, const void *y)
{
    const pf_ga_member *a = &crowd_members[*(const int *)x], *b = &crowd_members[*(const int *)y];
    if (a->error != b->error)
        return a->error < b->error ? -1 : 1;
    return *(const int *)x - *(const int *)y;
}

/* NSGA-II's crowding distance within each rank, on error and log time (the front's ends: +inf). */
static void crowding(const pf_ga_member *m, order_key *key, int count)
{
    int *idx = pf_xmalloc(sizeof *idx * (size_t)(count + 1));
    for (int r = 0;; r++) {
        int n = 0;
        for (int i = 0; i < count; i++)
            if (key[i].rank == r)
                idx[n++] = i;
        if (n == 0)
            break;
        crowd_members = m;
        qsort(idx, (size_t)n, sizeof *idx, cmp_error);
        for (int j = 0; j < n; j++) {
            const pf_ga_member *a = &m[idx[j > 0 ? j - 1 : j]], *b = &m[idx[j + 1 < n ? j + 1 : j]];
            bool end = j == 0 || j == n - 1 || !isfinite(a->time) || !isfinite(b->time);
            key[idx[j]].crowd = end ? INFINITY
                                    : (b->error - a->error) + fabs(log(a->time / b->time));
        }
    }
    free(idx);
}

/* The members' indices from best to worst: by Pareto rank, on the same rank by crowding. */
static void best_order(const pf_ga_member *m, int count, int *order)
{
    double *t = pf_xmalloc(sizeof *t * 2 * (size_t)(count + 1)), *e = t + count;
    int *rank = pf_xmalloc(sizeof *rank * (size_t)(count + 1));
    order_key *key = pf_xmalloc(sizeof *key * (size_t)(count + 1));
    for (int i = 0; i < count; i++) {
        t[i] = m[i].time;
        e[i] = m[i].error;
    }
    pf_pareto_rank(t, e, count, rank);
    for (int i = 0; i < count; i++)
        key[i] = (order_key){ i, rank[i], 0 };
    crowding(m, key, count);
    qsort(key, (size_t)count, sizeof *key, cmp_key);
    for (int i = 0; i < count; i++)
        order[i] = key[i].index;
    free(key);
    free(rank);
    free(t);
}

int pf_ga_truncate(pf_ga_member *m, int count, int n)
{
    if (count <= n)
        return count;
    int *order = pf_xmalloc(sizeof *order * (size_t)count);
    best_order(m, count, order);
    pf_ga_member *kept = pf_xmalloc(sizeof *kept * (size_t)count);
    for (int i = 0; i < count; i++) {
        kept[i] = m[order[i]];
        if (i >= n) {
            free(kept[i].text);
            pf_schedule_free(&kept[i].sched);
        }
    }
    memcpy(m, kept, sizeof *m * (size_t)n);
    free(kept);
    free(order);
    return n;
}
