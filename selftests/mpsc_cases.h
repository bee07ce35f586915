/* SPDX-License-Identifier: GPL-2.0 */
/*
 * selftests/mpsc_cases.h: MPSC cases both backends run, for
 * selftests/mpsc_death.c (kmod, in the VM) and selftests/host/mpsc_basic.c
 * (memfd, on the host). Needs only libbaton and libc. Each case returns 0,
 * or the number of the step that failed, so one body serves two harness
 * setups (as selftests/pool_cases.h does).
 *
 * The case: a consumer killed inside baton_mpsc_cons_release_n(), after
 * its sequence stores (M) and before its one head store (C). Several
 * slots past the head then belong to the next lap already, some free,
 * some published again; the next consumer must resume behind all of them,
 * deliver the rest in order and nothing twice, and read what producers
 * publish into the freed slots. The child runs the real release_n() with
 * its head pointer aimed at a private word, so C lands nowhere: exactly
 * what a kill between the two leaves in the shared words.
 */
#ifndef BATON_SELFTEST_MPSC_CASES_H
#define BATON_SELFTEST_MPSC_CASES_H

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <baton.h>

#define MC_MSG		16
#define MC_WAIT_NS	(5 * 1000000000LL)

/* A child consumer: peek the whole ring, release @freed of it, die. */
static inline void mc_die_mid_release(const char *name, uint32_t backend,
				      uint32_t slots, uint32_t freed)
{
	struct baton_ring *c;
	uint64_t idx, lost_head;

	if (baton_ring_open(name, BATON_ROLE_CONSUMER, backend, &c))
		_exit(3);
	if (baton_mpsc_cons_peek_n(c, slots, &idx) != slots)
		_exit(4);
	/* Killed after the M stores: the C store goes nowhere shared. */
	lost_head = *c->head;
	c->head = &lost_head;
	baton_mpsc_cons_release_n(c, freed);
	raise(SIGKILL);
	_exit(5);
}

static inline int mc_push_range(struct baton_ring *pr, uint64_t from,
				uint64_t to)
{
	uint64_t m[2] = { 0 };

	for (; from < to; from++) {
		m[0] = from;
		if (baton_mpsc_try_push(pr, m, sizeof(m)))
			return -1;
	}
	return 0;
}

/*
 * A ring of @slots, full; the dead consumer freed @freed of them (from
 * the head); @early of those are published again before the next
 * consumer attaches, the rest after.
 */
static inline int mc_resume_after_partial_release(const char *name,
						  uint32_t backend,
						  uint32_t slots,
						  uint32_t freed,
						  uint32_t early)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_MPSC,
		.slot_count = slots,
		.slot_size = MC_MSG,
		.mode = 0600,
		.backend = backend,
		.max_producers = 2,
	};
	struct baton_ring *pr = NULL, *c = NULL;
	uint64_t m[2], want;
	int st, ret = 0;
	pid_t pid;

	if (baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &pr))
		return 1;
	if (mc_push_range(pr, 0, slots)) {
		ret = 2;
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		ret = 3;
		goto out;
	}
	if (!pid)
		mc_die_mid_release(name, backend, slots, freed);
	if (waitpid(pid, &st, 0) != pid || !WIFSIGNALED(st) ||
	    WTERMSIG(st) != SIGKILL) {
		ret = 4;
		goto out;
	}
	/* Into the slots the dead consumer freed: before it resumes, */
	if (mc_push_range(pr, slots, slots + early)) {
		ret = 5;
		goto out;
	}
	if (baton_ring_open(name, BATON_ROLE_CONSUMER, backend, &c)) {
		ret = 6;
		goto out;
	}
	/* and after. */
	if (mc_push_range(pr, slots + early, slots + freed)) {
		ret = 7;
		goto out;
	}
	for (want = freed; want < slots + freed; want++) {
		memset(m, 0xff, sizeof(m));
		if (baton_mpsc_pop(c, m, sizeof(m), MC_WAIT_NS, NULL) < 0 ||
		    m[0] != want) {
			ret = 8;
			goto out;
		}
	}
	/* Nothing more, and nothing delivered twice. */
	if (baton_mpsc_try_pop(c, m, sizeof(m), NULL) != -EAGAIN)
		ret = 9;
out:
	baton_ring_close(c);
	baton_ring_close(pr);
	return ret;
}

/*
 * The geometries both backends run: slots, freed, published early. A full
 * lap freed and republished; the smallest ring.
 */
static const uint32_t mc_geometries[][3] = {
	{ 8, 5, 3 }, { 8, 8, 8 }, { 8, 2, 0 }, { 2, 2, 1 },
};

/* Every geometry on ring @name: 0, or 10 * (geometry + 1) + the step. */
static inline int mc_resume_cases(const char *name, uint32_t backend)
{
	unsigned int i;
	int ret;

	for (i = 0; i < sizeof(mc_geometries) / sizeof(mc_geometries[0]); i++) {
		ret = mc_resume_after_partial_release(name, backend,
						      mc_geometries[i][0],
						      mc_geometries[i][1],
						      mc_geometries[i][2]);
		baton_ring_unlink(name, backend);
		if (ret)
			return 10 * (int)(i + 1) + ret;
	}
	return 0;
}

#endif
