// SPDX-License-Identifier: MIT
/*
 * bench/death_epipe: how long after `kill -9` of a peer the survivor's
 * blocking call returns -EPIPE (issue 13, item 7), on whichever backend
 * BATON_BACKEND picks (the host suite runs memfd, bench/vm-suite.sh kmod).
 *
 * Four ring cases and a baseline, each RUNS times (default 11), in
 * rounds (every case once a round):
 *   spsc_cons  a consumer parked in baton_spsc_pop(); its producer dies
 *   spsc_prod  a producer parked in baton_spsc_push() on a full ring; its
 *              consumer dies
 *   mpsc_cons  an MPSC consumer parked in baton_mpsc_pop(); its only
 *              producer dies
 *   mpsc_prod  an MPSC producer parked in baton_mpsc_push() on a full
 *              ring; the consumer dies
 *   waitpid    the baseline, no ring: the parent blocked in waitpid(2) on
 *              the same child, the kernel's own notice of the death
 * The peer is a forked child that attaches and then waits in pause(). A
 * thread of the survivor sleeps SETTLE_NS (so the survivor is parked, past
 * its spin) plus the round's phase (PHASE_SPAN_NS), reads the clock and
 * sends SIGKILL; the survivor reads the clock when the call returns.
 * The figure is the difference: the kernel's teardown of the dead
 * process, the wake or the memfd backend's bounded sleep slice, and the
 * survivor's scheduling. Targets (printed, never
 * asserted): kmod <= 1 ms, memfd <= 10 ms.
 *
 * Why the baseline: most of a kill-to-EPIPE is the kernel tearing the
 * process down (exit_mm() runs before its files are released), which
 * baton cannot shorten and which TCG emulation, where the kmod figures
 * are taken, slows many times over. waitpid(2) returns only once the
 * child is a zombie, after its files went, so a ring's EPIPE at or under
 * it says baton added nothing to what the kernel itself takes to say a
 * process has died; the difference is baton's own share.
 *
 *   death_epipe [RUNS]
 * Output: one line per case,
 *   death,BACKEND,CASE,RUNS,median_us,min_us,max_us,epipe_runs
 * (for waitpid, epipe_runs counts the runs that reaped a SIGKILLed child).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "baton.h"
#include "bench.h"

#define SETTLE_NS	(20ULL * 1000 * 1000)
/*
 * The memfd backend's sleep slice (lib/backend_memfd.c, DEATH_SLICE_NS):
 * a parked survivor learns of the death when a slice ends. SETTLE_NS is
 * a multiple of it, so a kill after SETTLE_NS alone lands just before a
 * slice's end, every run, and the figure would be the best case (about
 * 0.3 ms on memfd instead of a median near half a slice). Each round
 * kills at its own phase within one slice, spread evenly over the rounds.
 */
#define PHASE_SPAN_NS	(5ULL * 1000 * 1000)
#define MAX_RUNS	101

enum which { SPSC_CONS, SPSC_PROD, MPSC_CONS, MPSC_PROD, WAITPID, NCASES };

static const char *const case_name[NCASES] = {
	"spsc_cons", "spsc_prod", "mpsc_cons", "mpsc_prod", "waitpid",
};

struct killer {
	pid_t pid;
	uint64_t delay_ns;	/* SETTLE_NS plus this round's phase */
	uint64_t t_kill;
};

static void *kill_later(void *arg)
{
	struct killer *k = arg;

	usleep((useconds_t)(k->delay_ns / 1000));
	k->t_kill = bench_now_ns();
	kill(k->pid, SIGKILL);
	return NULL;
}

static int survivor_role(enum which w)
{
	return w == SPSC_CONS || w == MPSC_CONS ? BATON_ROLE_CONSUMER :
						  BATON_ROLE_PRODUCER;
}

/* The child: attach as the peer, say so, wait to be killed. */
static void peer(const char *name, int role, int fd)
{
	struct baton_ring *r;
	char c = 1;

	if (baton_ring_open(name, role, BATON_BACKEND_AUTO, &r))
		_exit(2);
	if (write(fd, &c, 1) != 1)
		_exit(3);
	for (;;)
		pause();
}

/* Fill the survivor's ring when it is a producer, so its next push parks. */
static int fill(struct baton_ring *r, enum which w)
{
	uint64_t v = 0;

	if (w == SPSC_PROD)
		while (baton_spsc_try_push(r, &v, sizeof(v)) == 0)
			;
	if (w == MPSC_PROD)
		while (baton_mpsc_try_push(r, &v, sizeof(v)) == 0)
			;
	return 0;
}

static int blocking_call(struct baton_ring *r, enum which w)
{
	uint64_t v = 0;

	switch (w) {
	case SPSC_CONS:
		return baton_spsc_pop(r, &v, sizeof(v), 5000000000LL);
	case SPSC_PROD:
		return baton_spsc_push(r, &v, sizeof(v), 5000000000LL);
	case MPSC_CONS:
		return baton_mpsc_pop(r, &v, sizeof(v), 5000000000LL, NULL);
	default:
		return baton_mpsc_push(r, &v, sizeof(v));
	}
}

/*
 * The baseline run: microseconds from the kill to waitpid()'s return
 * (*@reaped: 1 when it reaped the child killed by SIGKILL), or -1.
 */
static double waitpid_run(uint64_t delay_ns, int *reaped)
{
	struct killer k = { .delay_ns = delay_ns };
	uint64_t t_ret;
	int fds[2], st = 0;
	pthread_t t;
	char c = 1;

	if (pipe(fds))
		return -1;
	k.pid = fork();
	if (k.pid == 0) {
		if (write(fds[1], &c, 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	if (k.pid < 0 || read(fds[0], &c, 1) != 1)
		return -1;
	pthread_create(&t, NULL, kill_later, &k);
	*reaped = waitpid(k.pid, &st, 0) == k.pid && WIFSIGNALED(st) &&
		  WTERMSIG(st) == SIGKILL;
	t_ret = bench_now_ns();
	pthread_join(t, NULL);
	close(fds[0]);
	close(fds[1]);
	return (double)(t_ret - k.t_kill) / 1000.0;
}

/* One run: microseconds from the kill to the return, or -1. */
static double one_run(enum which w, uint64_t delay_ns, int *epipe)
{
	struct baton_ring_params p = {
		.kind = w >= MPSC_CONS ? BATON_RING_MPSC : BATON_RING_SPSC,
		.slot_count = 4, .slot_size = 8, .mode = 0600,
		.backend = BATON_BACKEND_AUTO,
		.max_producers = w >= MPSC_CONS ? 2 : 0,
	};
	int role = survivor_role(w), fds[2], ret, st;
	struct killer k = { .delay_ns = delay_ns };
	struct baton_ring *r;
	char name[64], c;
	pthread_t t;
	uint64_t t_ret;

	if (w == WAITPID)
		return waitpid_run(delay_ns, epipe);
	snprintf(name, sizeof(name), "bench.death.%d", (int)getpid());
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
	if (baton_ring_create(name, &p, role, &r) || pipe(fds))
		return -1;
	k.pid = fork();
	if (k.pid == 0)
		peer(name, role == BATON_ROLE_CONSUMER ? BATON_ROLE_PRODUCER :
							 BATON_ROLE_CONSUMER,
		     fds[1]);
	if (k.pid < 0 || read(fds[0], &c, 1) != 1)
		return -1;
	fill(r, w);
	pthread_create(&t, NULL, kill_later, &k);
	ret = blocking_call(r, w);
	t_ret = bench_now_ns();
	pthread_join(t, NULL);
	waitpid(k.pid, &st, 0);
	close(fds[0]);
	close(fds[1]);
	baton_ring_close(r);
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
	*epipe = ret == -EPIPE;
	return (double)(t_ret - k.t_kill) / 1000.0;
}

/* One case's line from its @n runs in @us, @ok of them EPIPE (reaped). */
static void report(const char *backend, enum which w, double *us, int n,
		   int ok)
{
	struct bench_summary s;

	if (!n) {
		printf("death,%s,%s,0,NA,NA,NA,0\n", backend, case_name[w]);
		return;
	}
	bench_summarize(us, n, &s);
	printf("death,%s,%s,%d,%.0f,%.0f,%.0f,%d\n", backend, case_name[w], n,
	       s.median, s.min, s.max, ok);
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 11;
	const char *backend = baton_backend_name(
		baton_backend_resolve(BATON_BACKEND_AUTO));
	static double us[NCASES][MAX_RUNS];
	int n[NCASES] = { 0 }, ok[NCASES] = { 0 };
	int w, i, e;

	if (runs < 1 || runs > MAX_RUNS) {
		fprintf(stderr, "usage: death_epipe [RUNS <= %d]\n", MAX_RUNS);
		return 2;
	}
	bench_watchdog(600, "death_epipe");
	printf("# kill -9 of the peer to the survivor's EPIPE, %s backend, "
	       "%d runs in rounds; target <= %s\n", backend, runs,
	       strcmp(backend, "kmod") ? "10 ms" : "1 ms");
	printf("# baseline: waitpid, the parent's own wait for the same "
	       "kill (no ring)\n");
	/*
	 * In rounds, every case once per round, so a slow stretch of the
	 * machine (TCG, a neighbour) lands on the baseline and the rings alike.
	 */
	for (i = 0; i < runs; i++) {
		uint64_t delay = SETTLE_NS +
				 (2 * (uint64_t)i + 1) * PHASE_SPAN_NS / (2 * runs);

		for (w = 0; w < NCASES; w++) {
			double v = one_run((enum which)w, delay, &e);

			if (v < 0)
				continue;
			us[w][n[w]++] = v;
			ok[w] += e;
		}
	}
	for (w = 0; w < NCASES; w++)
		report(backend, (enum which)w, us[w], n[w], ok[w]);
	return 0;
}
