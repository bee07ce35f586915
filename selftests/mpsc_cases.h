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
 * slots past the head then belong to the next lap already; the next
 * consumer must resume behind all of them, deliver the rest in order and
 * nothing twice, and read what producers publish into the freed slots.
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

#define MC_SLOTS	8
#define MC_FREED	5	/* slots the dead consumer freed past its head */
#define MC_MSG		16
#define MC_WAIT_NS	(5 * 1000000000LL)

/* A child consumer: peek all MC_SLOTS, free MC_FREED of them (M), die. */
static inline void mc_die_mid_release(const char *name, uint32_t backend)
{
	struct baton_ring *c;
	uint64_t idx;
	uint32_t i;

	if (baton_ring_open(name, BATON_ROLE_CONSUMER, backend, &c))
		_exit(3);
	if (baton_mpsc_cons_peek_n(c, MC_SLOTS, &idx) != MC_SLOTS)
		_exit(4);
	for (i = 0; i < MC_FREED; i++)
		__atomic_store_n(&c->seq[(idx + i) & c->mask],
				 idx + i + c->slot_count, __ATOMIC_RELEASE);
	raise(SIGKILL);
	_exit(5);
}

static inline int mc_resume_after_partial_release(const char *name,
						  uint32_t backend)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_MPSC,
		.slot_count = MC_SLOTS,
		.slot_size = MC_MSG,
		.mode = 0600,
		.backend = backend,
		.max_producers = 2,
	};
	struct baton_ring *pr = NULL, *c = NULL;
	uint64_t m[2] = { 0 }, seq, want;
	int st, ret = 0;
	pid_t pid;

	if (baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &pr))
		return 1;
	for (seq = 0; seq < MC_SLOTS; seq++) {
		m[0] = seq;
		if (baton_mpsc_try_push(pr, m, sizeof(m))) {
			ret = 2;
			goto out;
		}
	}
	pid = fork();
	if (pid < 0) {
		ret = 3;
		goto out;
	}
	if (!pid)
		mc_die_mid_release(name, backend);
	if (waitpid(pid, &st, 0) != pid || !WIFSIGNALED(st) ||
	    WTERMSIG(st) != SIGKILL) {
		ret = 4;
		goto out;
	}
	if (baton_ring_open(name, BATON_ROLE_CONSUMER, backend, &c)) {
		ret = 5;
		goto out;
	}
	/* Into the slots the dead consumer freed, behind the rest. */
	for (; seq < MC_SLOTS + MC_FREED; seq++) {
		m[0] = seq;
		if (baton_mpsc_try_push(pr, m, sizeof(m))) {
			ret = 6;
			goto out;
		}
	}
	for (want = MC_FREED; want < seq; want++) {
		memset(m, 0xff, sizeof(m));
		if (baton_mpsc_pop(c, m, sizeof(m), MC_WAIT_NS, NULL) < 0 ||
		    m[0] != want) {
			ret = 7;
			goto out;
		}
	}
	/* Nothing more, and nothing delivered twice. */
	if (baton_mpsc_try_pop(c, m, sizeof(m), NULL) != -EAGAIN)
		ret = 8;
out:
	baton_ring_close(c);
	baton_ring_close(pr);
	return ret;
}

#endif
