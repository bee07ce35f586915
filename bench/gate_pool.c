/* SPDX-License-Identifier: MIT */
/*
 * bench/gate_pool.c: the perf gate's harness for buffer pools' inline
 * fast paths (bench/perf-gate.sh runs it under callgrind; see gate_spsc.c
 * for how the count is taken). One process, one memfd-backend pool of
 * 4 KiB buffers whose magazine is warm, so that every call stays in the
 * magazine: an allocation and a free in turn. Paths:
 *
 *   pool_alloc   baton_pool_alloc(): the class that fits, a magazine pop
 *   pool_alloc_buf
 *                baton_pool_alloc_buf(): the same and the buffer's address
 *                (from the class's base, no check: the handle is ours)
 *   pool_free    baton_pool_free(): the handle's checks, the descriptor's
 *                owner check and new generation, a magazine push
 *   pool_alloc_idle, pool_free_idle
 *                the same on a pool with decay_ms, whose magazines the
 *                decay reaches (Documentation/pool.rst, "Idle
 *                magazines"): the allocation also stores OWNED and
 *                loads the reap word (Y13), the free leaves IDLE
 *
 * GATE_INJECT(): bench/gate.h.
 *
 * gate-paths: pool_alloc pool_alloc_buf pool_free pool_alloc_idle pool_free_idle pool_send pool_recv pool_send_mpsc pool_recv_mpsc
 */
#define _GNU_SOURCE
#include <baton.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate.h"

GATE_NOINLINE uint64_t gate_op_pool_alloc(struct baton_pool *p)
{
	uint64_t h = 0;

	GATE_INJECT();
	if (baton_pool_alloc(p, 4096, &h))
		abort();
	return h;
}

GATE_NOINLINE uint64_t gate_op_pool_alloc_buf(struct baton_pool *p, void **buf)
{
	uint64_t h = 0;

	GATE_INJECT();
	if (baton_pool_alloc_buf(p, 4096, &h, buf))
		abort();
	return h;
}

GATE_NOINLINE void gate_op_pool_free(struct baton_pool *p, uint64_t h)
{
	GATE_INJECT();
	if (baton_pool_free(p, h))
		abort();
}

GATE_NOINLINE uint64_t gate_op_pool_alloc_idle(struct baton_pool *p)
{
	uint64_t h = 0;

	GATE_INJECT();
	if (baton_pool_alloc(p, 4096, &h))
		abort();
	return h;
}

GATE_NOINLINE void gate_op_pool_free_idle(struct baton_pool *p, uint64_t h)
{
	GATE_INJECT();
	if (baton_pool_free(p, h))
		abort();
}

GATE_NOINLINE void gate_op_pool_send(struct baton_ring *r, struct baton_pool *p,
				     uint64_t h)
{
	GATE_INJECT();
	if (baton_pool_send(r, p, h, 4096, 0))
		abort();
}

GATE_NOINLINE uint64_t gate_op_pool_recv(struct baton_ring *r,
					 struct baton_pool *p)
{
	uint64_t h = 0, len = 0;

	GATE_INJECT();
	if (baton_pool_recv(r, p, &h, &len, 0))
		abort();
	return h;
}

GATE_NOINLINE void gate_op_pool_send_mpsc(struct baton_ring *r,
					  struct baton_pool *p, uint64_t h)
{
	GATE_INJECT();
	if (baton_pool_send(r, p, h, 4096, 0))
		abort();
}

GATE_NOINLINE uint64_t gate_op_pool_recv_mpsc(struct baton_ring *r,
					      struct baton_pool *p)
{
	uint64_t h = 0, len = 0;

	GATE_INJECT();
	if (baton_pool_recv(r, p, &h, &len, 0))
		abort();
	return h;
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "gate_pool: %s: %s\n", what, strerror(-rc));
	exit(2);
}

/*
 * pool_send, pool_recv (and their _mpsc forms): a ring in this process,
 * both roles, and a buffer that goes round: allocate, send, receive,
 * free. The first send binds the ring (a watch of its file, on memfd),
 * outside the count.
 */
static void run_handoff(struct baton_pool *p, const char *path, uint64_t n)
{
	int mpsc = strstr(path, "_mpsc") != NULL;
	struct baton_ring_params prm = {
		.kind = mpsc ? BATON_RING_MPSC : BATON_RING_SPSC,
		.slot_count = 64,
		.slot_size = 16,
		.mode = 0600,
		.backend = BATON_BACKEND_MEMFD,
		.max_producers = mpsc ? 2 : 0,
	};
	char name[BATON_NAME_MAX];
	struct baton_ring *tx, *rx;
	int send = !strncmp(path, "pool_send", 9);
	uint64_t i, h;
	int rc;

	snprintf(name, sizeof(name), "gate-pool-ring-%d", (int)getpid());
	rc = baton_ring_create(name, &prm, BATON_ROLE_PRODUCER, &tx);
	if (rc < 0)
		die("baton_ring_create", rc);
	rc = baton_ring_open(name, BATON_ROLE_CONSUMER, BATON_BACKEND_MEMFD, &rx);
	if (rc < 0)
		die("baton_ring_open", rc);
	for (i = 0; i <= n; i++) {
		if (baton_pool_alloc(p, 4096, &h))
			abort();
		if (send && i)
			mpsc ? gate_op_pool_send_mpsc(tx, p, h) :
			       gate_op_pool_send(tx, p, h);
		else if (baton_pool_send(tx, p, h, 4096, 0))
			abort();
		if (!send && i)
			h = mpsc ? gate_op_pool_recv_mpsc(rx, p) :
				   gate_op_pool_recv(rx, p);
		else if (baton_pool_recv(rx, p, &h, &(uint64_t){ 0 }, 0))
			abort();
		if (baton_pool_free(p, h))
			abort();
	}
	baton_ring_close(rx);
	baton_ring_close(tx);
	baton_ring_unlink(name, BATON_BACKEND_MEMFD);
}

static int known_path(const char *path)
{
	static const char *const paths[] = {
		"pool_alloc", "pool_alloc_buf", "pool_free", "pool_alloc_idle",
		"pool_free_idle", "pool_send", "pool_recv",
		"pool_send_mpsc", "pool_recv_mpsc",
	};
	size_t i;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (!strcmp(path, paths[i]))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct baton_pool_params prm = {
		.nr_classes = 1,
		.max_holders = 4,
		.mode = 0600,
		.classes = { { .buf_shift = 12, .count = 256 } },
	};
	char name[BATON_NAME_MAX];
	struct baton_pool *p;
	uint64_t n, i, h;
	int rc, idle, with_buf;
	void *buf;

	if (argc != 3 || !known_path(argv[1])) {
		fprintf(stderr, "usage: gate_pool pool_alloc|pool_alloc_buf|pool_free|pool_alloc_idle|pool_free_idle|pool_send|pool_recv|pool_send_mpsc|pool_recv_mpsc N\n");
		return 2;
	}
	idle = strstr(argv[1], "_idle") != NULL;
	with_buf = !strcmp(argv[1], "pool_alloc_buf");
	/* Long enough that no decay tick comes within the run. */
	if (idle)
		prm.decay_ms = BATON_POOL_DECAY_MAX_MS;
	n = strtoull(argv[2], NULL, 0);
	setenv("BATON_BACKEND", "memfd", 1);
	snprintf(name, sizeof(name), "gate-pool-%d", (int)getpid());
	rc = baton_pool_create(name, &prm, &p);
	if (rc < 0)
		die("baton_pool_create", rc);
	baton_pool_unlink(name);
	if (!strncmp(argv[1], "pool_send", 9) || !strncmp(argv[1], "pool_recv", 9)) {
		run_handoff(p, argv[1], n);
		goto done;
	}
	/* Warm: the magazine holds buffers, and none of the calls below
	 * empties or overfills it. */
	h = idle ? gate_op_pool_alloc_idle(p) : gate_op_pool_alloc(p);
	idle ? gate_op_pool_free_idle(p, h) : gate_op_pool_free(p, h);
	for (i = 0; i < n; i++) {
		if (with_buf) {
			h = gate_op_pool_alloc_buf(p, &buf);
		} else {
			h = idle ? gate_op_pool_alloc_idle(p) : gate_op_pool_alloc(p);
			buf = baton_pool_ptr(p, h);
		}
		*(volatile uint8_t *)buf = (uint8_t)i;
		idle ? gate_op_pool_free_idle(p, h) : gate_op_pool_free(p, h);
	}
done:
	baton_pool_close(p);
	printf("gate: path=%s calls=%llu\n", argv[1], (unsigned long long)n);
	return 0;
}
