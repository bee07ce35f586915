/* SPDX-License-Identifier: MIT */
/*
 * bench/gate_spsc.c: the perf gate's harness for the SPSC fast path and the
 * wake decision (bench/perf-gate.sh runs it under callgrind). One process,
 * one memfd-backend ring, producer and consumer handles in the same thread,
 * so the instruction count of an operation depends on nothing but the code.
 *
 * Each gated operation is one noinline function named gate_op_<path>; the
 * script runs `valgrind --tool=callgrind --collect-atstart=no
 * --toggle-collect=gate_op_<path>` and divides the collected instructions
 * by the number of calls, which this program prints. Paths:
 *
 *   spsc_push    baton_spsc_prod_reserve(1) + an 8-byte store + submit(1)
 *   spsc_pop     baton_spsc_cons_peek(1) + an 8-byte load + release(1)
 *   wake_check   the publish-then-decide step alone: submit(0) with the
 *                consumer's waiting flag clear (tail store, flag load,
 *                branch not taken), i.e. what every publication pays
 *   wake_call    the same with the flag set: the decision taken and the
 *                library's wake call up to the syscall instruction (the
 *                kernel's side is not counted by callgrind)
 *   spsc_push_wait  baton_spsc_push() (blocking, timeout -1) of 8 bytes
 *                   into a ring with room: the blocking form's fast exit,
 *                   the call, its checks and the first poll that succeeds
 *   spsc_pop_wait   baton_spsc_pop() of that message, likewise
 *
 * The ring is drained in the same loop (push, then pop), so every push
 * finds room and every pop finds a message; the producer's refresh of its
 * cached head (once per slot_count pushes) is part of the average, as in a
 * real stream.
 *
 * GATE_INJECT() (bench/gate.h) is the self-test's stand-in for a costlier
 * commit; empty otherwise.
 *
 * Read by perf-gate.sh, which measures each path and compares it with its
 * line in bench/perf-gate.baseline:
 * gate-paths: spsc_push spsc_pop wake_check wake_call spsc_push_wait spsc_pop_wait
 */
#define _GNU_SOURCE
#include <baton.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate.h"

static uint64_t sink;

GATE_NOINLINE void gate_op_spsc_push(struct baton_ring *p, uint64_t v)
{
	uint64_t idx;

	GATE_INJECT();
	if (!baton_spsc_prod_reserve(p, 1, &idx))
		abort();
	*(uint64_t *)baton_ring_slot(p, idx) = v;
	baton_spsc_prod_submit(p, 1);
}

GATE_NOINLINE uint64_t gate_op_spsc_pop(struct baton_ring *c)
{
	uint64_t idx, v;

	GATE_INJECT();
	if (!baton_spsc_cons_peek(c, 1, &idx))
		abort();
	v = *(const uint64_t *)baton_ring_slot(c, idx);
	baton_spsc_cons_release(c, 1);
	return v;
}

GATE_NOINLINE int gate_op_spsc_push_wait(struct baton_ring *p, uint64_t v)
{
	GATE_INJECT();
	return baton_spsc_push(p, &v, sizeof(v), -1);
}

GATE_NOINLINE uint64_t gate_op_spsc_pop_wait(struct baton_ring *c)
{
	uint64_t v = ~0ull;

	GATE_INJECT();
	if (baton_spsc_pop(c, &v, sizeof(v), -1) != 0)
		abort();
	return v;
}

GATE_NOINLINE void gate_op_wake_check(struct baton_ring *p)
{
	GATE_INJECT();
	baton_spsc_prod_submit(p, 0);
}

GATE_NOINLINE void gate_op_wake_call(struct baton_ring *p)
{
	GATE_INJECT();
	baton_spsc_prod_submit(p, 0);
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "gate_spsc: %s: %s\n", what, strerror(-rc));
	exit(2);
}

int main(int argc, char **argv)
{
	struct baton_ring_params prm = {
		.kind = BATON_RING_SPSC,
		.slot_count = 1024,
		.slot_size = 64,
		.mode = 0600,
		.backend = BATON_BACKEND_MEMFD,
	};
	struct baton_ring *p, *c;
	char name[BATON_NAME_MAX];
	const char *path;
	uint64_t n, i;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: gate_spsc PATH N (PATH: see gate-paths)\n");
		return 2;
	}
	path = argv[1];
	n = strtoull(argv[2], NULL, 0);
	snprintf(name, sizeof(name), "gate-spsc-%d", (int)getpid());
	rc = baton_ring_create(name, &prm, BATON_ROLE_PRODUCER, &p);
	if (rc < 0)
		die("baton_ring_create", rc);
	rc = baton_ring_open(name, BATON_ROLE_CONSUMER, BATON_BACKEND_MEMFD, &c);
	if (rc < 0)
		die("baton_ring_open", rc);
	/* The name is not needed once both handles exist. */
	baton_ring_unlink(name, BATON_BACKEND_MEMFD);

	if (!strcmp(path, "spsc_push") || !strcmp(path, "spsc_pop")) {
		for (i = 0; i < n; i++) {
			gate_op_spsc_push(p, i);
			if (gate_op_spsc_pop(c) != i)
				abort();
		}
	} else if (!strcmp(path, "spsc_push_wait") ||
		   !strcmp(path, "spsc_pop_wait")) {
		for (i = 0; i < n; i++) {
			if (gate_op_spsc_push_wait(p, i) != 0)
				abort();
			if (gate_op_spsc_pop_wait(c) != i)
				abort();
		}
	} else if (!strcmp(path, "wake_check")) {
		for (i = 0; i < n; i++)
			gate_op_wake_check(p);
	} else if (!strcmp(path, "wake_call")) {
		/*
		 * Raise the consumer's flag as a parked consumer would, before
		 * every call: a waker may take the episode (memfd clears the
		 * PARKED bit it saw). The futex wake finds no sleeper and
		 * returns at once.
		 */
		for (i = 0; i < n; i++) {
			__atomic_store_n(c->cons_waiting, 1, __ATOMIC_RELAXED);
			gate_op_wake_call(p);
		}
		__atomic_store_n(c->cons_waiting, 0, __ATOMIC_RELAXED);
	} else {
		fprintf(stderr, "gate_spsc: unknown path %s\n", path);
		return 2;
	}
	sink += i;
	baton_ring_close(c);
	baton_ring_close(p);
	/* What the script divides by. */
	printf("gate: path=%s calls=%llu\n", path, (unsigned long long)n);
	return 0;
}
