/* Shared by the GA's files (ga.c: the released GA; ga_guided.c: model-guided breeding). */
#ifndef PF_SEARCH_GA_INTERNAL_H
#define PF_SEARCH_GA_INTERNAL_H

#include "search/ga.h"

/* One child of a tournament winner (mutant) or of two (crossover) into *child (initialised). */
void pf_ga_breed_child(pf_ga *ga, const int *rank, bool crossover, pf_schedule *child);
/* Takes s into the next generation unless its text was seen (frees s then); false if seen. */
bool pf_ga_offer(pf_ga *ga, pf_schedule *s, pf_ga_origin origin);
/* s's text with every gene that skips nothing left out (pf_gene_skips_nothing: it lowers to the
 * exact loop; and a grid of spacing 1 on every variable and channel, which computes every point
 * and at best fills nothing): two genomes with equal such texts run the same code, or the same
 * with a pass that fills nothing (a re-measurement, not a new candidate). */
char *pf_ga_same_code_text(const pf_ga *ga, const pf_schedule *s);
/* Guided breeding: pool x measure children, `choose` picks those measured (ga_guided.c). */
void pf_ga_breed_guided(pf_ga *ga, const int *rank);
/* Keeps the best n of m members by Pareto rank, the last rank kept by crowding (the points
 * farthest from their neighbours); frees the others. Returns n (or m when m <= n). */
int pf_ga_truncate(pf_ga_member *m, int count, int n);

#endif
