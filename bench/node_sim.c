/* The node protocol simulated (see node_sim.h): an event loop over worker states. */
#include "bench/node_sim.h"

#include <math.h>
#include <stdlib.h>

typedef enum { IDLE, READY, BUILD, WAIT, TIME } sim_state;

typedef struct sim {
    const sim_job *jobs;
    int n, workers, next, done;
    bool barriers;
    sim_state *state;
    int *job;
    double *until;  /* BUILD, TIME: when it ends; WAIT: when it began (first come, first timed) */
    int *first;     /* first[j]: index of the first job of j's generation */
} sim;

static int count(const sim *s, sim_state st)
{
    int k = 0;
    for (int w = 0; w < s->workers; w++)
        k += s->state[w] == st;
    return k;
}

/* Applies the protocol's rules at time t until nothing changes. */
static void settle(sim *s, double t)
{
    for (bool changed = true; changed;) {
        changed = false;
        for (int w = 0; w < s->workers; w++)
            if (s->state[w] == IDLE && s->next < s->n &&
                (!s->barriers || s->done >= s->first[s->next])) {
                s->job[w] = s->next++;
                s->state[w] = READY;
                changed = true;
            }
        if (count(s, WAIT) == 0 && count(s, TIME) == 0)
            for (int w = 0; w < s->workers; w++)
                if (s->state[w] == READY) {
                    s->state[w] = BUILD;
                    s->until[w] = t + s->jobs[s->job[w]].build_ms;
                    changed = true;
                }
        if (count(s, BUILD) == 0 && count(s, TIME) == 0 && count(s, WAIT) > 0) {
            int first = -1;
            for (int w = 0; w < s->workers; w++)
                if (s->state[w] == WAIT && (first < 0 || s->until[w] < s->until[first]))
                    first = w;
            s->state[first] = TIME;
            s->until[first] = t + s->jobs[s->job[first]].timing_ms;
            changed = true;
        }
    }
}

double sim_node(const sim_job *jobs, int n, int workers, bool barriers)
{
    sim s = { jobs, n, workers, 0, 0, barriers, calloc((size_t)workers, sizeof(sim_state)),
              calloc((size_t)workers, sizeof(int)), calloc((size_t)workers, sizeof(double)),
              calloc((size_t)n + 1, sizeof(int)) };
    for (int j = 1; j < n; j++)
        s.first[j] = jobs[j].generation == jobs[j - 1].generation ? s.first[j - 1] : j;
    double t = 0;
    while (s.done < n) {
        settle(&s, t);
        int w = -1;  /* the next build or timing to end */
        for (int k = 0; k < workers; k++)
            if ((s.state[k] == BUILD || s.state[k] == TIME) && (w < 0 || s.until[k] < s.until[w]))
                w = k;
        if (w < 0)
            break;  /* nothing runs: cannot happen with n > 0 */
        t = s.until[w];
        if (s.state[w] == BUILD) {
            s.state[w] = WAIT;
            s.until[w] = t;
        } else {
            s.state[w] = IDLE;
            s.done++;
        }
    }
    free(s.state);
    free(s.job);
    free(s.until);
    free(s.first);
    return t;
}
