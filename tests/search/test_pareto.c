/* Pareto ranking, frontier and areas on hand cases; the tournament's odds; the GA's
 * generation makeup (elites, mutants, crossover), its seen set, checkpoint round trip. */
#include "search/ga.h"
#include "search/pareto.h"
#include "tests/harness/harness.h"
#include "tests/search/search_test_util.h"

#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_rank_hand_cases(void)
{
    double t[] = { 1.0, 0.5, 0.6, 0.2 }, e[] = { 0, 1, 2, 3 };
    int rank[4];
    pf_pareto_rank(t, e, 4, rank);
    CU_ASSERT(rank[0] == 0 && rank[1] == 0 && rank[2] == 1 && rank[3] == 0);
    /* Equal points: the released rule keeps strictly faster ones, so a twin goes one down. */
    double t2[] = { 1, 1, INFINITY, NAN }, e2[] = { 1, 1, INFINITY, 2 };
    int r2[4];
    pf_pareto_rank(t2, e2, 4, r2);
    CU_ASSERT(r2[0] == 0 && r2[1] == 1);
    CU_ASSERT(r2[2] >= 2 && r2[3] >= 2);  /* invalid points come last */
    /* Three fronts. */
    double t3[] = { 3, 2, 1, 4, 3, 2, 5 }, e3[] = { 1, 2, 3, 2, 3, 4, 5 };
    int r3[7], want[] = { 0, 0, 0, 1, 1, 1, 2 };
    pf_pareto_rank(t3, e3, 7, r3);
    for (int i = 0; i < 7; i++)
        CU_ASSERT_EQUAL(r3[i], want[i]);
}

static void test_front_sorted_by_error(void)
{
    double t[] = { 0.25, 1.0, 0.5, 0.7, INFINITY }, e[] = { 5, 0, 2, 3, INFINITY };
    int f[5];
    int n = pf_pareto_front(t, e, 5, f);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT(f[0] == 1 && f[1] == 2 && f[2] == 0);
}

static void test_areas_hand_cases(void)
{
    /* T(e) = 1 on [0, 2), 0.5 on [2, 5), 0.25 on [5, 10]: (2 + 1.5 + 1.25) / 10. */
    double t[] = { 1.0, 0.5, 0.25, 0.9 }, e[] = { 0, 2, 5, 12 };
    PF_ASSERT_NEAR(pf_frontier_area(t, e, 4, 10), 0.475, 1e-12);
    PF_ASSERT_NEAR(pf_frontier_area(t, e, 4, 4), (2 + 1.0) / 4, 1e-12);
    PF_ASSERT_NEAR(pf_frontier_area(NULL, NULL, 0, 10), 1.0, 1e-12);  /* nothing: no speedup */
    /* Non-monotone (re-measured) points: the step function takes the minimum so far. */
    double t2[] = { 0.4, 0.8 }, e2[] = { 1, 3 };
    PF_ASSERT_NEAR(pf_frontier_area(t2, e2, 2, 10), (1 + 0.4 * 9) / 10, 1e-12);
    /* Released: (0.25,5) (0.5,2) (1,0); error at 0.6 = 1.6; trapezoid 0.5 * 1.6 * 0.4. */
    PF_ASSERT_NEAR(pf_frontier_area_released(t, e, 4), 0.32, 1e-12);
    double t3[] = { 0.7, 1.0 }, e3[] = { 1, 0 };
    CU_ASSERT(isinf(pf_frontier_area_released(t3, e3, 2)));
    PF_ASSERT_NEAR(pf_frontier_best_time(t, e, 4, 3), 0.5, 1e-12);
}

static void test_tournament_odds(void)
{
    pf_rng r;
    pf_rng_seed(&r, 1);
    int rank[10];
    for (int i = 0; i < 10; i++)
        rank[i] = i;
    int wins = 0, n = 100000;
    for (int k = 0; k < n; k++)
        wins += pf_ga_tournament(&r, rank, 10, 2) == 0;
    /* The best of 10 wins a size-2 tournament when picked: 1 - C(9,2)/C(10,2) = 0.2. */
    PF_ASSERT_NEAR((double)wins / n, 0.2, 0.01);
    int worst = 0;
    for (int k = 0; k < n; k++)
        worst += pf_ga_tournament(&r, rank, 10, 2) == 9;
    CU_ASSERT_EQUAL(worst, 0);  /* two distinct picks: the worst never wins */
    CU_ASSERT_EQUAL(pf_ga_tournament(&r, rank, 10, 50), 0);
    int ties[3] = { 0, 0, 0 }, first[3] = { 0 };
    for (int k = 0; k < 30000; k++)
        first[pf_ga_tournament(&r, ties, 3, 3)]++;  /* ties: the first picked wins */
    for (int i = 0; i < 3; i++)
        PF_ASSERT_NEAR(first[i] / 30000.0, 1.0 / 3, 0.02);
}

/* Measures the proposed generation with the fake measurements and commits it. */
static void measure_and_commit(pf_ga *ga)
{
    for (int i = 0; i < ga->n_next; i++)
        if (!ga->next[i].measured) {
            double t, e;
            st_fake_measure(ga->next[i].text, &t, &e);
            pf_ga_measured(ga, i, t, e);
        }
    pf_ga_commit(ga);
}

static void test_generation_makeup(void)
{
    pf_program *p = st_load_app("demosaic");
    pf_ga_params gp = pf_ga_params_default();
    gp.population = 20;
    gp.seed = 7;
    gp.seeds = false;  /* the released GA's first generation (seeds: test_seeds_come_first) */
    pf_ga ga;
    pf_ga_init(&ga, p, &gp);
    CU_ASSERT_EQUAL(pf_ga_propose(&ga), 20);
    CU_ASSERT_STRING_EQUAL(ga.next[0].text, "# perfora schedule 1\n");  /* the exact program */
    for (int i = 1; i < 20; i++)
        CU_ASSERT_EQUAL(pf_genome_count(&ga.next[i].sched), 1);
    pf_strmap all;
    pf_strmap_init(&all);
    for (int i = 0; i < 20; i++)
        CU_ASSERT(pf_strmap_add(&all, ga.next[i].text, 0));
    measure_and_commit(&ga);
    for (int g = 1; g < 6; g++) {
        CU_ASSERT_EQUAL(pf_ga_propose(&ga), 20);
        int count[4] = { 0 };
        for (int i = 0; i < ga.n_next; i++) {
            pf_ga_member *m = &ga.next[i];
            count[m->origin]++;
            CU_ASSERT_EQUAL(m->measured, m->origin == PF_ORIGIN_ELITE);
            if (m->origin == PF_ORIGIN_ELITE) {  /* kept with its old measurement */
                double t, e;
                st_fake_measure(m->text, &t, &e);
                CU_ASSERT(m->time == t && m->error == e);
            } else {
                CU_ASSERT(pf_strmap_add(&all, m->text, 0));  /* never seen before */
            }
        }
        CU_ASSERT_EQUAL(count[PF_ORIGIN_ELITE], 6);      /* floor(0.3 N) */
        CU_ASSERT_EQUAL(count[PF_ORIGIN_MUTANT], 6);     /* up to floor(0.6 N) */
        CU_ASSERT_EQUAL(count[PF_ORIGIN_CROSSOVER], 8);  /* the rest */
        measure_and_commit(&ga);
    }
    pf_strmap_free(&all);
    pf_ga_free(&ga);
    pf_program_free(p);
}

/* Elites are the best ranks: every elite's rank <= every non-elite's of the old population. */
static void test_elites_are_best_ranked(void)
{
    pf_program *p = st_load_app("blur");
    pf_ga_params gp = pf_ga_params_default();
    gp.population = 12;
    pf_ga ga;
    pf_ga_init(&ga, p, &gp);
    pf_ga_propose(&ga);
    measure_and_commit(&ga);
    double t[12], e[12];
    int rank[12];
    for (int i = 0; i < ga.n_pop; i++) {
        t[i] = ga.pop[i].time;
        e[i] = ga.pop[i].error;
    }
    pf_pareto_rank(t, e, ga.n_pop, rank);
    int worst_elite = -1;
    pf_ga_propose(&ga);
    for (int i = 0; i < ga.n_next; i++)
        for (int k = 0; k < ga.n_pop; k++)
            if (ga.next[i].origin == PF_ORIGIN_ELITE && strcmp(ga.next[i].text,
                                                               ga.pop[k].text) == 0)
                worst_elite = rank[k] > worst_elite ? rank[k] : worst_elite;
    int better_left_out = 0;
    for (int k = 0; k < ga.n_pop; k++) {
        bool elite = false;
        for (int i = 0; i < ga.n_next; i++)
            elite |= strcmp(ga.next[i].text, ga.pop[k].text) == 0;
        better_left_out += !elite && rank[k] < worst_elite;
    }
    CU_ASSERT_EQUAL(better_left_out, 0);
    pf_ga_free(&ga);
    pf_program_free(p);
}

static void test_seen_rejects_duplicates(void)
{
    pf_program *p = st_load_app("bilateral_filter");  /* 2 loops: a small space */
    pf_ga_params gp = pf_ga_params_default();
    gp.population = 30;
    gp.genome.exec_rate = 0;
    gp.genome.mode = PF_MODE_LOOP;
    pf_ga ga;
    pf_ga_init(&ga, p, &gp);
    pf_strmap all;
    pf_strmap_init(&all);
    for (int g = 0; g < 8; g++) {
        pf_ga_propose(&ga);
        for (int i = 0; i < ga.n_next; i++)
            if (ga.next[i].origin != PF_ORIGIN_ELITE)
                CU_ASSERT(pf_strmap_add(&all, ga.next[i].text, 0));
        measure_and_commit(&ga);
    }
    CU_ASSERT(ga.rejected > 0);  /* duplicates were proposed, and refused */
    pf_strmap_free(&all);
    pf_ga_free(&ga);
    pf_program_free(p);
}

static void test_checkpoint_round_trip(void)
{
    pf_program *p = st_load_app("unsharp_mask");
    pf_ga_params gp = pf_ga_params_default();
    gp.population = 10;
    pf_ga a, b;
    pf_ga_init(&a, p, &gp);
    for (int g = 0; g < 3; g++) {
        pf_ga_propose(&a);
        measure_and_commit(&a);
    }
    json_object *o = pf_ga_to_json(&a);
    json_object *copy = json_tokener_parse(json_object_to_json_string(o));
    pf_ga_init(&b, p, &gp);
    CU_ASSERT_EQUAL(pf_ga_from_json(&b, copy, NULL), 0);
    CU_ASSERT_EQUAL(b.generation, a.generation);
    CU_ASSERT_EQUAL(b.n_pop, a.n_pop);
    for (int i = 0; i < a.n_pop; i++) {
        CU_ASSERT_STRING_EQUAL(b.pop[i].text, a.pop[i].text);
        CU_ASSERT(b.pop[i].time == a.pop[i].time && b.pop[i].error == a.pop[i].error);
        pf_ga_mark_seen(&b, a.pop[i].text);
    }
    CU_ASSERT(memcmp(&a.rng, &b.rng, sizeof a.rng) == 0);
    json_object_put(o);
    json_object_put(copy);
    pf_ga_free(&a);
    pf_ga_free(&b);
    pf_program_free(p);
}

/* With seeds, the first generation is the exact program, then the structured seeds (at most
 * half of the rest), then random one-gene genomes. */
static void test_seeds_come_first(void)
{
    pf_program *p = st_load_app("blur");
    pf_ga_params gp = pf_ga_params_default();
    gp.population = 12;
    pf_ga ga;
    pf_ga_init(&ga, p, &gp);
    CU_ASSERT_EQUAL(pf_ga_propose(&ga), 12);
    pf_genome_ctx c;
    pf_genome_ctx_init(&c, p, &gp.genome);
    pf_schedule seeds[5];
    CU_ASSERT_EQUAL_FATAL(pf_genome_seeds(&c, 5, seeds), 5);  /* (12 - 1) / 2 */
    for (int i = 0; i < 5; i++) {
        CU_ASSERT(pf_schedule_equal(&ga.next[1 + i].sched, &seeds[i]));
        pf_schedule_free(&seeds[i]);
    }
    for (int i = 6; i < 12; i++)
        CU_ASSERT_EQUAL(pf_genome_count(&ga.next[i].sched), 1);
    pf_genome_ctx_free(&c);
    pf_ga_free(&ga);
    pf_program_free(p);
}

PF_TEST_SUITE(search_pareto_ga, PF_TEST(test_seeds_come_first), PF_TEST(test_rank_hand_cases),
              PF_TEST(test_front_sorted_by_error), PF_TEST(test_areas_hand_cases),
              PF_TEST(test_tournament_odds), PF_TEST(test_generation_makeup),
              PF_TEST(test_elites_are_best_ranked), PF_TEST(test_seen_rejects_duplicates),
              PF_TEST(test_checkpoint_round_trip))
