/* SPDX-License-Identifier: MIT */
/*
 * bench/gate_mpsc.c: the perf gate's harness for the MPSC fast path
 * (bench/perf-gate.sh runs it under callgrind; see gate_spsc.c for how
 * the count is taken). One process, one memfd-backend MPSC ring, one
 * producer handle and the consumer in the same thread, so an operation's
 * instruction count depends on nothing but the code. Paths:
 *
 *   mpsc_push   baton_mpsc_push() of an 8-byte message: the claim, the
 *               fetch_add ticket, the slot check, the copy, the publish
 *               with its wake decision, the claim cleared
 *   mpsc_pop    baton_mpsc_try_pop() of that message: peek the sequence,
 *               copy, release with its wake decision
 *
 *   mpsc_pop_wait  baton_mpsc_pop() (blocking, timeout -1) of a message
 *               that is there: the blocking pop's fast exit
 *
 * Push then pop in one loop: every push finds its slot free, every pop a
 * message. GATE_INJECT(): bench/gate.h.
 *
 * gate-paths: mpsc_push mpsc_pop mpsc_pop_wait
 */
#define _GNU_SOURCE
#include <baton.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate.h"

GATE_NOINLINE int gate_op_mpsc_push(struct baton_ring *p, uint64_t v)
{
	GATE_INJECT();
	return baton_mpsc_push(p, &v, sizeof(v));
}

GATE_NOINLINE uint64_t gate_op_mpsc_pop(struct baton_ring *c)
{
	uint64_t v = ~0ull;

	GATE_INJECT();
	if (baton_mpsc_try_pop(c, &v, sizeof(v), NULL) != 0)
		abort();
	return v;
}

GATE_NOINLINE uint64_t gate_op_mpsc_pop_wait(struct baton_ring *c)
{
	uint64_t v = ~0ull;

	GATE_INJECT();
	if (baton_mpsc_pop(c, &v, sizeof(v), -1, NULL) != 0)
		abort();
	return v;
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "gate_mpsc: %s: %s\n", what, strerror(-rc));
	exit(2);
}

int main(int argc, char **argv)
{
	struct baton_ring_params prm = {
		.kind = BATON_RING_MPSC,
		.slot_count = 1024,
		.slot_size = 64,
		.mode = 0600,
		.backend = BATON_BACKEND_MEMFD,
		.max_producers = 1,
	};
	struct baton_ring *p, *c;
	char name[BATON_NAME_MAX];
	uint64_t n, i;
	int rc;

	if (argc != 3 || (strcmp(argv[1], "mpsc_push") && strcmp(argv[1], "mpsc_pop") &&
			  strcmp(argv[1], "mpsc_pop_wait"))) {
		fprintf(stderr, "usage: gate_mpsc mpsc_push|mpsc_pop|mpsc_pop_wait N\n");
		return 2;
	}
	n = strtoull(argv[2], NULL, 0);
	snprintf(name, sizeof(name), "gate-mpsc-%d", (int)getpid());
	rc = baton_ring_create(name, &prm, BATON_ROLE_CONSUMER, &c);
	if (rc < 0)
		die("baton_ring_create", rc);
	rc = baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_MEMFD, &p);
	if (rc < 0)
		die("baton_ring_open", rc);
	baton_ring_unlink(name, BATON_BACKEND_MEMFD);
	for (i = 0; i < n; i++) {
		if (gate_op_mpsc_push(p, i))
			abort();
		if ((strcmp(argv[1], "mpsc_pop_wait") ? gate_op_mpsc_pop(c) :
		     gate_op_mpsc_pop_wait(c)) != i)
			abort();
	}
	baton_ring_close(p);
	baton_ring_close(c);
	printf("gate: path=%s calls=%llu\n", argv[1], (unsigned long long)n);
	return 0;
}
