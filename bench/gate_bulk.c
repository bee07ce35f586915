/* SPDX-License-Identifier: MIT */
/*
 * bench/gate_bulk.c: the perf gate's harness for the bulk copy forms
 * (bench/perf-gate.sh runs it under callgrind; see gate_spsc.c for how
 * the count is taken). One process, memfd-backend rings of 1024 slots of
 * 64 bytes, producer and consumer in the same thread. An operation is one
 * batch of 32 messages (divide by 32 for a message):
 *
 *   spsc_push_bulk64  baton_spsc_try_push_bulk64() of 32 messages
 *   spsc_pop_bulk64   baton_spsc_try_pop_bulk64() of 32 messages
 *   spsc_push_bulk8   baton_spsc_try_push_bulk8(): 8-byte messages into
 *                     the 64-byte slots, the slot-by-slot copy
 *   spsc_pop_bulk8    baton_spsc_try_pop_bulk8(), likewise
 *   mpsc_push_bulk64  baton_mpsc_push_bulk64() of 32 messages: one
 *                     fetch_add, one or two copies, 32 publications
 *   mpsc_pop_bulk64   baton_mpsc_try_pop_bulk64() of 32 messages
 *
 * One message sits in the ring before the loop starts, so one batch in 32
 * straddles the ring's end and is copied in two pieces, as in a stream.
 * GATE_INJECT(): bench/gate.h.
 *
 * gate-paths: spsc_push_bulk64 spsc_pop_bulk64 spsc_push_bulk8 spsc_pop_bulk8 mpsc_push_bulk64 mpsc_pop_bulk64
 */
#define _GNU_SOURCE
#include <baton.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate.h"

#define BATCH 32

struct msg64 {
	uint64_t w[8];
};

GATE_NOINLINE int gate_op_spsc_push_bulk64(struct baton_ring *p,
					   const struct msg64 *m)
{
	GATE_INJECT();
	return baton_spsc_try_push_bulk64(p, m, BATCH);
}

GATE_NOINLINE int gate_op_spsc_pop_bulk64(struct baton_ring *c,
					  struct msg64 *m)
{
	GATE_INJECT();
	return baton_spsc_try_pop_bulk64(c, m, BATCH);
}

GATE_NOINLINE int gate_op_spsc_push_bulk8(struct baton_ring *p,
					  const uint64_t *m)
{
	GATE_INJECT();
	return baton_spsc_try_push_bulk8(p, m, BATCH);
}

GATE_NOINLINE int gate_op_spsc_pop_bulk8(struct baton_ring *c, uint64_t *m)
{
	GATE_INJECT();
	return baton_spsc_try_pop_bulk8(c, m, BATCH);
}

GATE_NOINLINE int gate_op_mpsc_push_bulk64(struct baton_ring *p,
					   const struct msg64 *m)
{
	GATE_INJECT();
	return baton_mpsc_push_bulk64(p, m, BATCH, NULL);
}

GATE_NOINLINE int gate_op_mpsc_pop_bulk64(struct baton_ring *c,
					  struct msg64 *m)
{
	GATE_INJECT();
	return baton_mpsc_try_pop_bulk64(c, m, BATCH, NULL);
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "gate_bulk: %s: %s\n", what, strerror(-rc));
	exit(2);
}

static void open_pair(uint32_t kind, struct baton_ring **p,
		      struct baton_ring **c)
{
	struct baton_ring_params prm = {
		.kind = kind,
		.slot_count = 1024,
		.slot_size = 64,
		.mode = 0600,
		.backend = BATON_BACKEND_MEMFD,
		.max_producers = 1,
	};
	char name[BATON_NAME_MAX];
	int rc;

	snprintf(name, sizeof(name), "gate-bulk-%d", (int)getpid());
	rc = baton_ring_create(name, &prm, BATON_ROLE_CONSUMER, c);
	if (rc < 0)
		die("baton_ring_create", rc);
	rc = baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_MEMFD, p);
	if (rc < 0)
		die("baton_ring_open", rc);
	baton_ring_unlink(name, BATON_BACKEND_MEMFD);
}

/* Message j of the stream, word w: what the pops check. */
static uint64_t word_of(uint64_t j, int w)
{
	return j * 8 + (uint64_t)w;
}

static void fill(struct msg64 *m, uint64_t first)
{
	for (int i = 0; i < BATCH; i++)
		for (int w = 0; w < 8; w++)
			m[i].w[w] = word_of(first + (uint64_t)i, w);
}

static void check(const struct msg64 *m, uint64_t first, int words)
{
	for (int i = 0; i < BATCH; i++)
		for (int w = 0; w < words; w++)
			if (m[i].w[w] != word_of(first + (uint64_t)i, w))
				abort();
}

static void run_spsc64(uint64_t n)
{
	struct msg64 in[BATCH], out[BATCH];
	struct baton_ring *p, *c;
	uint64_t i;

	open_pair(BATON_RING_SPSC, &p, &c);
	fill(in, 0);
	/* The one message that makes every 32nd batch wrap. */
	if (baton_spsc_try_push_bulk64(p, in, 1) != 1)
		abort();
	for (i = 0; i < n; i++) {
		fill(in, 1 + i * BATCH);
		if (gate_op_spsc_push_bulk64(p, in) != BATCH)
			abort();
		if (gate_op_spsc_pop_bulk64(c, out) != BATCH)
			abort();
		check(out, i * BATCH, 8);
	}
	baton_ring_close(p);
	baton_ring_close(c);
}

static void run_spsc8(uint64_t n)
{
	uint64_t in[BATCH], out[BATCH], i;
	struct baton_ring *p, *c;
	int k;

	open_pair(BATON_RING_SPSC, &p, &c);
	in[0] = 0;
	if (baton_spsc_try_push_bulk8(p, in, 1) != 1)
		abort();
	for (i = 0; i < n; i++) {
		for (k = 0; k < BATCH; k++)
			in[k] = 1 + i * BATCH + (uint64_t)k;
		if (gate_op_spsc_push_bulk8(p, in) != BATCH)
			abort();
		if (gate_op_spsc_pop_bulk8(c, out) != BATCH)
			abort();
		for (k = 0; k < BATCH; k++)
			if (out[k] != i * BATCH + (uint64_t)k)
				abort();
	}
	baton_ring_close(p);
	baton_ring_close(c);
}

static void run_mpsc64(uint64_t n)
{
	struct msg64 in[BATCH], out[BATCH];
	struct baton_ring *p, *c;
	uint64_t i;

	open_pair(BATON_RING_MPSC, &p, &c);
	fill(in, 0);
	if (baton_mpsc_push_bulk64(p, in, 1, NULL) != 1)
		abort();
	for (i = 0; i < n; i++) {
		fill(in, 1 + i * BATCH);
		if (gate_op_mpsc_push_bulk64(p, in) != BATCH)
			abort();
		if (gate_op_mpsc_pop_bulk64(c, out) != BATCH)
			abort();
		check(out, i * BATCH, 8);
	}
	baton_ring_close(p);
	baton_ring_close(c);
}

int main(int argc, char **argv)
{
	uint64_t n;

	if (argc != 3) {
		fprintf(stderr, "usage: gate_bulk PATH N (PATH: see gate-paths)\n");
		return 2;
	}
	n = strtoull(argv[2], NULL, 0);
	if (!strncmp(argv[1], "spsc_", 5) && strstr(argv[1], "bulk64"))
		run_spsc64(n);
	else if (!strncmp(argv[1], "spsc_", 5) && strstr(argv[1], "bulk8"))
		run_spsc8(n);
	else if (!strncmp(argv[1], "mpsc_", 5) && strstr(argv[1], "bulk64"))
		run_mpsc64(n);
	else {
		fprintf(stderr, "gate_bulk: unknown path %s\n", argv[1]);
		return 2;
	}
	printf("gate: path=%s calls=%llu\n", argv[1], (unsigned long long)n);
	return 0;
}
