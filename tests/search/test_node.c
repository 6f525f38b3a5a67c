/* The node protocol (search/node.h) with real processes: a timing waits for the builds under
 * way, a build asked for while a worker wants to time waits until that timing is over, a
 * dead holder releases the node; and the screening rule and the running frontier
 * (pf_screen_may_reach, pf_front_add). Orders of events are checked, never durations: a
 * broken protocol shows as an event that comes too early. */
#include "search/evaluate.h"
#include "search/node.h"
#include "tests/harness/harness.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A child process: its events come to the parent on `events` (one letter each), and it waits
 * for the parent's go on its own pipe between steps. */
typedef struct actor {
    pid_t pid;
    int go[2];
} actor;

static int events[2];
static const char *lock_path;  /* named in the parent: the children share one file */

static void say(char c)
{
    if (write(events[1], &c, 1) != 1)
        _exit(3);
}

static void wait_go(actor *a)
{
    char c;
    if (read(a->go[0], &c, 1) != 1)
        _exit(4);
}

static void go(actor *a)
{
    char c = 'g';
    CU_ASSERT_EQUAL(write(a->go[1], &c, 1), 1);
}

/* The next event, or 0 when none comes within ms. */
static char next_event(int ms)
{
    struct pollfd p = { events[0], POLLIN, 0 };
    char c = 0;
    if (poll(&p, 1, ms) == 1 && read(events[0], &c, 1) != 1)
        c = 0;
    return c;
}

typedef void (*script_fn)(actor *a, pf_node *n);

static void start(actor *a, script_fn fn)
{
    if (!lock_path)
        lock_path = pf_test_tmp("node.lock");
    CU_ASSERT_EQUAL_FATAL(pipe(a->go), 0);
    fflush(NULL);
    a->pid = fork();
    CU_ASSERT_FATAL(a->pid >= 0);
    if (a->pid == 0) {
        pf_node n;
        pf_error err;
        if (pf_node_open(&n, lock_path, &err) != 0)
            _exit(2);
        fn(a, &n);
        pf_node_close(&n);
        _exit(0);
    }
}

static void finish(actor *a)
{
    int status;
    waitpid(a->pid, &status, 0);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(a->go[0]);
    close(a->go[1]);
}

/* A: builds until told to stop. */
static void builder(actor *a, pf_node *n)
{
    pf_node_build_begin(n);
    say('A');
    wait_go(a);
    say('a');
    pf_node_build_end(n);
}

/* B: announces its wish to time, then times until told to stop. */
static void timer(actor *a, pf_node *n)
{
    pf_node_time_announce(n);
    say('W');
    pf_node_time_acquire(n);
    say('T');
    wait_go(a);
    say('t');
    pf_node_time_end(n);
}

/* C: a build asked for after B's wish. */
static void late_builder(actor *a, pf_node *n)
{
    (void)a;
    pf_node_build_begin(n);
    say('C');
    pf_node_build_end(n);
}

static void test_timing_waits_for_builds_and_builds_wait_for_timing(void)
{
    CU_ASSERT_EQUAL_FATAL(pipe(events), 0);
    actor a, b, c;
    start(&a, builder);
    CU_ASSERT_EQUAL(next_event(30000), 'A');
    start(&b, timer);
    CU_ASSERT_EQUAL(next_event(30000), 'W');
    start(&c, late_builder);
    /* B may not time while A builds; C may not build while B waits to time */
    CU_ASSERT_EQUAL(next_event(300), 0);
    go(&a);
    CU_ASSERT_EQUAL(next_event(30000), 'a');
    CU_ASSERT_EQUAL(next_event(30000), 'T');
    CU_ASSERT_EQUAL(next_event(300), 0);  /* C still waits: B is timing */
    go(&b);
    CU_ASSERT_EQUAL(next_event(30000), 't');
    CU_ASSERT_EQUAL(next_event(30000), 'C');
    finish(&a);
    finish(&b);
    finish(&c);
    close(events[0]);
    close(events[1]);
}

/* D: times and never says it is done (it is killed). */
static void dies_timing(actor *a, pf_node *n)
{
    (void)a;
    pf_node_time_begin(n);
    say('D');
    for (;;)
        pause();
}

static void test_dead_holder_releases_the_node(void)
{
    CU_ASSERT_EQUAL_FATAL(pipe(events), 0);
    actor d, c;
    start(&d, dies_timing);
    CU_ASSERT_EQUAL(next_event(30000), 'D');
    start(&c, late_builder);
    CU_ASSERT_EQUAL(next_event(300), 0);
    kill(d.pid, SIGKILL);
    CU_ASSERT_EQUAL(next_event(30000), 'C');
    int status;
    waitpid(d.pid, &status, 0);
    CU_ASSERT(WIFSIGNALED(status));
    close(d.go[0]);
    close(d.go[1]);
    finish(&c);
    close(events[0]);
    close(events[1]);
}

static void test_node_without_lock_file(void)
{
    pf_node n;
    pf_error err;
    CU_ASSERT_EQUAL(pf_node_open(&n, NULL, &err), 0);
    pf_node_build_begin(&n);  /* no locks: nothing waits */
    pf_node_build_end(&n);
    pf_node_time_begin(&n);
    pf_node_time_end(&n);
    pf_node_close(&n);
    CU_ASSERT_EQUAL(pf_node_open(&n, "/nonexistent-dir/x.lock", &err), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent-dir/x.lock"));
}

static void test_screening_rule(void)
{
    pf_front_point f[] = { { 0.0, 0.9 }, { 1.0, 0.5 }, { 3.0, 0.2 } };
    /* beaten by more than the margin by a point with no more error: not worth full timing */
    CU_ASSERT(!pf_screen_may_reach(f, 3, 1.5, 0.8, 0.2));   /* 0.5 < 0.64 */
    CU_ASSERT(pf_screen_may_reach(f, 3, 1.5, 0.6, 0.2));    /* 0.5 >= 0.48: may reach */
    CU_ASSERT(pf_screen_may_reach(f, 3, 0.5, 0.95, 0.2));   /* only (0, .9) has less error */
    CU_ASSERT(!pf_screen_may_reach(f, 3, 0.5, 1.2, 0.2));   /* .9 < .96 */
    /* nothing measured yet: everything may reach the frontier */
    CU_ASSERT(pf_screen_may_reach(NULL, 0, 2.0, 3.0, 0.2));
    CU_ASSERT(pf_screen_may_reach(f, 3, 0.0, 0.9, 0.0));     /* a tie is no proof */
}

static void test_front_add_keeps_nondominated(void)
{
    pf_front_point *f = NULL;
    int n = 0;
    CU_ASSERT(pf_front_add(&f, &n, 2.0, 0.5));
    CU_ASSERT(pf_front_add(&f, &n, 0.0, 1.0));
    CU_ASSERT(!pf_front_add(&f, &n, 2.5, 0.6));  /* dominated by (2, .5) */
    CU_ASSERT(!pf_front_add(&f, &n, 2.0, 0.5));  /* already there */
    CU_ASSERT(pf_front_add(&f, &n, 1.0, 0.4));   /* dominates (2, .5) */
    CU_ASSERT_EQUAL_FATAL(n, 2);
    for (int i = 0; i < n; i++)
        CU_ASSERT(!(f[i].error == 2.0 && f[i].time == 0.5));
    free(f);
}

PF_TEST_SUITE(search_node, PF_TEST(test_timing_waits_for_builds_and_builds_wait_for_timing),
              PF_TEST(test_dead_holder_releases_the_node), PF_TEST(test_node_without_lock_file),
              PF_TEST(test_screening_rule), PF_TEST(test_front_add_keeps_nondominated))
