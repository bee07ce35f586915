/* SPDX-License-Identifier: GPL-2.0 */
/*
 * selftests/pool_cases.h: the pool cases both backends run, for
 * selftests/pool.c (kmod, in the VM) and selftests/host/pool_memfd.c
 * (memfd, on the host). Needs only libbaton and libc. Each case is a
 * function that returns 0, or the number of the step that failed (the
 * caller's test asserts 0 and prints it), so one body serves two
 * harness setups.
 *
 * The cases: every buffer once, then ENOMEM, then recovery; an
 * allocation with its address (pc_alloc_buf()); forged and stale handles; buffers through a ring between processes; a sent buffer
 * that survives its sender; 200 kill -9s of a holder at random points of
 * an alloc/fill/free loop beside a survivor (pc_kill_loop()); fan-out
 * (pc_share_and_put(), and pf_run(): three readers, one killed per round);
 * and kill -9 in the middle of hand-offs (ph_run()), described here:
 *
 * Each round of ph_run() starts a sender (allocate, fill, baton_pool_send()) and a
 * receiver (baton_pool_recv(), check, free) on one pool and one SPSC ring,
 * kills one of them at a random moment (the sender on odd rounds, the
 * receiver on even ones) and stops the other. Every few rounds a drainer
 * receives what is left in the ring, and then every buffer must be
 * allocatable again, each once. A buffer's first word is its handle and
 * its last byte the handle's low byte: a receiver that got a buffer
 * someone else also holds, or one rewritten since it was sent, exits with
 * a code that says so. A message whose sender died before its give is
 * -ESTALE to the receiver (the buffer went back), counted, not an error.
 */
#ifndef BATON_SELFTEST_POOL_CASES_H
#define BATON_SELFTEST_POOL_CASES_H

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "baton.h"

/* ---- shared helpers and cases ---- */

static inline uint64_t ph_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}


#define PC_KILL_ROUNDS	200
#define PC_OP_NS	(5LL * 1000000000)	/* one bounded operation */

/* Two classes: @count of 4 KiB and 8 of 64 KiB, 8 holders. */
static inline struct baton_pool_params pc_params(uint32_t count,
						 uint32_t decay_ms)
{
	struct baton_pool_params p;

	memset(&p, 0, sizeof(p));
	p.nr_classes = 2;
	p.decay_ms = decay_ms;
	p.max_holders = 8;
	p.classes[0].buf_shift = 12;
	p.classes[0].count = count;
	p.classes[1].buf_shift = 16;
	p.classes[1].count = 8;
	return p;
}

/* An SPSC ring of 64 slots of 16 bytes on @backend. */
static inline struct baton_ring_params pc_ring_params(int backend)
{
	struct baton_ring_params rp;

	memset(&rp, 0, sizeof(rp));
	rp.kind = BATON_RING_SPSC;
	rp.slot_count = 64;
	rp.slot_size = 16;
	rp.mode = 0600;
	rp.backend = backend;
	return rp;
}

/* Allocate class 0 until ENOMEM (at most @max); how many, and dups. */
static inline int pc_alloc_all(struct baton_pool *pool, uint64_t *h, int max,
			       int *dups)
{
	static uint8_t seen[BATON_POOL_COUNT_MAX];
	int n = 0;

	memset(seen, 0, sizeof(seen));
	*dups = 0;
	while (n < max && !baton_pool_alloc(pool, 4096, &h[n])) {
		if (seen[BATON_POOL_H_INDEX(h[n])]++)
			(*dups)++;
		n++;
	}
	return n;
}

/* As pc_alloc_all(), @n buffers, each allowed 5 s to come back. */
static inline int pc_alloc_all_wait(struct baton_pool *pool, uint64_t *h,
				    int n, int *dups)
{
	static uint8_t seen[BATON_POOL_COUNT_MAX];
	int got = 0;

	memset(seen, 0, sizeof(seen));
	*dups = 0;
	while (got < n &&
	       !baton_pool_alloc_wait(pool, 4096, &h[got], 5000000000LL)) {
		if (seen[BATON_POOL_H_INDEX(h[got])]++)
			(*dups)++;
		got++;
	}
	return got;
}

static inline void pc_free_all(struct baton_pool *pool, uint64_t *h, int n)
{
	while (n--)
		baton_pool_free(pool, h[n]);
}

/*
 * A burst from a second holder of pool @name: allocate all of class 0 (at
 * most 80), write every page, free them all, close, so that its magazine
 * goes back too. How many it got (-1: the open failed); *@dups as
 * pc_alloc_all().
 */
static inline int pc_burst(const char *name, int *dups)
{
	struct baton_pool *burst;
	uint64_t h[80];
	int n, i;

	if (baton_pool_open(name, &burst))
		return -1;
	n = pc_alloc_all(burst, h, 80, dups);
	for (i = 0; i < n; i++)
		memset(baton_pool_ptr(burst, h[i]), 0xcd, 4096);
	pc_free_all(burst, h, n);
	baton_pool_close(burst);
	return n;
}

/* Every buffer once, ENOMEM, E2BIG, contents kept, recovery, twice round. */
static inline int pc_every_buffer_once(const char *name)
{
	struct baton_pool_params p = pc_params(64, 0);
	struct baton_pool *pool;
	uint64_t h[80], again;
	int n, dups, i, step = 0;

	if (baton_pool_create(name, &p, &pool))
		return 1;
	n = pc_alloc_all(pool, h, 80, &dups);
	if (n != 64 || dups)
		step = 2;
	else if (baton_pool_alloc(pool, 1, &again) != -ENOMEM)
		step = 3;
	else if (baton_pool_alloc(pool, (1 << 16) + 1, &again) != -E2BIG)
		step = 4;
	for (i = 0; !step && i < n; i++) {
		if (baton_pool_buf_size(pool, h[i]) != 4096)
			step = 5;
		else
			memset(baton_pool_ptr(pool, h[i]), i, 4096);
	}
	for (i = 0; !step && i < n; i++)
		if (((uint8_t *)baton_pool_ptr(pool, h[i]))[4095] != (i & 0xff))
			step = 6;
	/* One back, one out: the same buffer, a new generation. */
	if (!step && (baton_pool_free(pool, h[7]) ||
		      baton_pool_alloc(pool, 4096, &again) ||
		      BATON_POOL_H_INDEX(again) != BATON_POOL_H_INDEX(h[7]) ||
		      BATON_POOL_H_GEN(again) == BATON_POOL_H_GEN(h[7])))
		step = 7;
	h[7] = again;
	/* Twice round the whole class through the shared queue. */
	for (i = 0; !step && i < 2; i++) {
		pc_free_all(pool, h, n);
		n = pc_alloc_all(pool, h, 80, &dups);
		if (n != 64 || dups)
			step = 8;
	}
	pc_free_all(pool, h, n);
	baton_pool_close(pool);
	baton_pool_unlink(name);
	return step;
}

/*
 * Class 1 of pc_alloc_buf(), by size: two buffers from refills, then the
 * same two again from the magazine they were freed to, whose addresses
 * come from the class's own base and shift (buffer 0 of any class would
 * not tell). Non-zero if an address is not baton_pool_ptr()'s.
 */
static inline int pc_alloc_buf_class1(struct baton_pool *pool)
{
	uint64_t h[2];
	void *buf;
	int i, round, bad = 0;

	for (round = 0; round < 2 && !bad; round++) {
		for (i = 0; i < 2; i++)
			if (baton_pool_alloc_buf(pool, 4097, &h[i], &buf) ||
			    buf != baton_pool_ptr(pool, h[i]) ||
			    baton_pool_buf_size(pool, h[i]) != 65536)
				return 1 + i;
		bad = BATON_POOL_H_INDEX(h[0]) + BATON_POOL_H_INDEX(h[1]) == 0;
		for (i = 0; i < 2; i++)
			bad |= baton_pool_free(pool, h[i]) != 0;
	}
	return bad;
}

/*
 * baton_pool_alloc_buf() once per buffer of class 0 (64, so the magazine
 * empties and refills from the queue several times) and once of class 1:
 * each address is baton_pool_ptr()'s for the handle it came with, in the
 * class the size asks for, and no two are one; then ENOMEM, E2BIG and a
 * NULL @buf, each leaving *buf NULL (or untouched, for the NULL @buf). On
 * a pool with @decay_ms, the allocations take the idle magazines' path
 * (OWNED, then the reap word).
 */
static inline int pc_alloc_buf(const char *name, uint32_t decay_ms)
{
	struct baton_pool_params p = pc_params(64, decay_ms);
	static uint8_t seen[64];
	struct baton_pool *pool;
	uint64_t h[65], big;
	void *buf;
	int n = 0, step = 0;

	memset(seen, 0, sizeof(seen));
	p.classes[1].count = 16;	/* a magazine of 2 (none below 16) */
	if (baton_pool_create(name, &p, &pool))
		return 1;
	while (!step && n < 65 &&
	       !baton_pool_alloc_buf(pool, n % 2 ? 1 : 4096, &h[n], &buf)) {
		if (!buf || buf != baton_pool_ptr(pool, h[n]) ||
		    baton_pool_buf_size(pool, h[n]) != 4096 ||
		    seen[BATON_POOL_H_INDEX(h[n]) % 64]++)
			step = 2;
		else
			memset(buf, n, 4096);	/* ours: a fault would say */
		n++;
	}
	if (!step && (n != 64 || buf))
		step = 3;	/* 64, then ENOMEM with *buf NULL */
	else if (!step && pc_alloc_buf_class1(pool))
		step = 4;
	else if (!step && (baton_pool_alloc_buf(pool, 65537, &big, &buf) != -E2BIG ||
			   buf))
		step = 5;
	buf = &buf;
	if (!step && (baton_pool_alloc_buf(pool, 1, &big, NULL) != -EINVAL ||
		      baton_pool_alloc_buf(pool, 1, NULL, &buf) != -EINVAL ||
		      buf))
		step = 6;
	if (!step && (baton_pool_free(pool, h[5]) ||
		      baton_pool_alloc_buf(pool, 4096, &h[5], &buf) ||
		      buf != baton_pool_ptr(pool, h[5])))
		step = 7;	/* the one freed comes back, at its own address */
	pc_free_all(pool, h, n);
	baton_pool_close(pool);
	baton_pool_unlink(name);
	return step;
}

/* Forged handles are EINVAL, another's or a stale one ESTALE. */
static inline int pc_forged_and_stale(const char *name)
{
	struct baton_pool_params p = pc_params(16, 0);
	struct baton_pool *pool, *peer;
	uint64_t h, mine;
	int step = 0;
	uint8_t *b;

	if (baton_pool_create(name, &p, &pool))
		return 1;
	if (baton_pool_open(name, &peer)) {
		baton_pool_close(pool);
		baton_pool_unlink(name);
		return 2;
	}
	if (baton_pool_alloc(pool, 10, &h) || !(b = baton_pool_ptr(pool, h)))
		step = 3;
	if (!step) {
		memset(b, 0x5a, 4096);
		if (baton_pool_free(pool, h | (1ULL << 27)) != -EINVAL ||
		    baton_pool_free(pool, BATON_POOL_HANDLE(2, 0, 1)) != -EINVAL ||
		    baton_pool_free(pool, BATON_POOL_HANDLE(0, 16, 1)) != -EINVAL ||
		    baton_pool_free(pool, BATON_POOL_HANDLE(0, 0, 0)) != -EINVAL ||
		    baton_pool_ptr(pool, BATON_POOL_HANDLE(0, 1u << 23, 1)) ||
		    baton_pool_check(pool, 0) != -EINVAL)
			step = 4;
		else if (baton_pool_free(peer, h) != -ESTALE ||
			 baton_pool_check(peer, h) ||
			 baton_pool_free(pool, h + (1ULL << 32)) != -ESTALE ||
			 b[100] != 0x5a)
			step = 5;
		else if (baton_pool_free(pool, h) ||
			 baton_pool_check(pool, h) != -ESTALE ||
			 baton_pool_free(pool, h) != -ESTALE)
			step = 6;
		else if (baton_pool_alloc(pool, 10, &mine) ||
			 baton_pool_free(pool, h) != -ESTALE ||
			 baton_pool_check(pool, mine) ||
			 baton_pool_free(pool, mine))
			step = 7;
	}
	baton_pool_close(peer);
	baton_pool_close(pool);
	baton_pool_unlink(name);
	return step;
}

/*
 * What baton_pool_send() and baton_pool_recv() refuse, each with its
 * errno and nothing changed: the short paths (lib/pool.c)
 * hand everything unusual to the full ones, and these are the cases they
 * hand over. Two holders of one pool in this process, the sender's and
 * the receiver's, and a ring of @kind with two 16-byte slots. 0 or the
 * failing step.
 */
static inline int pc_send_recv_refusals(const char *pname, const char *rname,
					uint32_t kind, int backend)
{
	struct baton_ring_params rp = pc_ring_params(backend);
	struct baton_pool_params p = pc_params(16, 0);
	struct baton_pool *snd, *rcv;
	struct baton_ring *prod, *cons;
	uint64_t h[3], other, got, len;
	int step = 0;

	rp.kind = kind;
	rp.max_producers = kind == BATON_RING_MPSC ? 2 : 0;
	rp.slot_count = 2;
	if (baton_pool_create(pname, &p, &snd))
		return 1;
	if (baton_pool_open(pname, &rcv)) {
		baton_pool_close(snd);
		baton_pool_unlink(pname);
		return 2;
	}
	if (baton_ring_create(rname, &rp, BATON_ROLE_PRODUCER, &prod))
		step = 3;
	else if (baton_ring_open(rname, BATON_ROLE_CONSUMER, backend, &cons))
		step = 4;
	if (!step && (baton_pool_alloc(snd, 4096, &h[0]) ||
		      baton_pool_alloc(snd, 4096, &h[1]) ||
		      baton_pool_alloc(snd, 4096, &h[2]) ||
		      baton_pool_alloc(rcv, 4096, &other)))
		step = 5;
	/* Forged handles, a handle of another holder, the wrong role. */
	if (!step &&
	    (baton_pool_send(prod, snd, h[0] | (1ULL << 27), 1, 0) != -EINVAL ||
	     baton_pool_send(prod, snd, BATON_POOL_HANDLE(2, 0, 1), 1, 0) != -EINVAL ||
	     baton_pool_send(prod, snd, BATON_POOL_HANDLE(0, 16, 1), 1, 0) != -EINVAL ||
	     baton_pool_send(prod, snd, h[0] & 0xffffffffULL, 1, 0) != -EINVAL ||
	     baton_pool_send(prod, snd, other, 1, 0) != -ESTALE ||
	     baton_pool_send(prod, snd, h[0] + (1ULL << 32), 1, 0) != -ESTALE ||
	     baton_pool_send(NULL, snd, h[0], 1, 0) != -EINVAL ||
	     baton_pool_send(prod, NULL, h[0], 1, 0) != -EINVAL ||
	     baton_pool_send(cons, snd, h[0], 1, 0) >= 0))
		step = 6;
	/* None of them pushed anything or gave anything. */
	else if (!step && (baton_pool_recv(cons, rcv, &got, &len, 0) != -ETIMEDOUT ||
			   baton_pool_check(snd, h[0]) || baton_pool_check(rcv, other)))
		step = 7;
	/* Two fill the ring; a third finds no room and stays the sender's. */
	else if (!step && (baton_pool_send(prod, snd, h[0], 100, 0) ||
			   baton_pool_send(prod, snd, h[1], 200, 0) ||
			   baton_pool_send(prod, snd, h[2], 300, 0) != -ETIMEDOUT ||
			   baton_pool_check(snd, h[2]) ||
			   baton_pool_send(prod, snd, h[0], 100, 0) != -ESTALE))
		step = 8;
	/* The receive's own refusals leave the message where it was. */
	else if (!step && (baton_pool_recv(cons, rcv, &got, NULL, 0) != -EINVAL ||
			   baton_pool_recv(cons, rcv, NULL, &len, 0) != -EINVAL ||
			   baton_pool_recv(cons, NULL, &got, &len, 0) != -EINVAL ||
			   baton_pool_recv(NULL, rcv, &got, &len, 0) != -EINVAL ||
			   baton_pool_recv(prod, rcv, &got, &len, 0) >= 0))
		step = 9;
	else if (!step && (baton_pool_recv(cons, rcv, &got, &len, 0) ||
			   got != h[0] || len != 100 ||
			   baton_pool_free(snd, h[0]) != -ESTALE ||
			   baton_pool_free(rcv, got)))
		step = 10;
	/*
	 * A message whose buffer its sender took back and freed: consumed
	 * as -ESTALE, the buffer left alone. Then the ring is empty.
	 */
	else if (!step && (baton_pool_take(snd, h[1]) || baton_pool_free(snd, h[1]) ||
			   baton_pool_recv(cons, rcv, &got, &len, 0) != -ESTALE ||
			   baton_pool_check(rcv, h[1]) != -ESTALE ||
			   baton_pool_recv(cons, rcv, &got, &len, 0) != -ETIMEDOUT))
		step = 11;
	/* And the ring still carries what comes next. */
	else if (!step && (baton_pool_send(prod, snd, h[2], 300, 0) ||
			   baton_pool_recv(cons, rcv, &got, &len, 0) ||
			   got != h[2] || len != 300 || baton_pool_free(rcv, got) ||
			   baton_pool_free(rcv, other)))
		step = 12;
	if (step != 3) {
		if (step != 4)
			baton_ring_close(cons);
		baton_ring_close(prod);
		baton_ring_unlink(rname, backend);
	}
	baton_pool_close(rcv);
	baton_pool_close(snd);
	baton_pool_unlink(pname);
	return step;
}

/* Child: take @n buffers from the ring, check each, free it. */
static inline int pc_recv_and_check(const char *pname, const char *rname,
				    int backend, int n)
{
	struct baton_pool *pool;
	struct baton_ring *r;
	int i;

	if (baton_pool_open(pname, &pool))
		return 10;
	if (baton_ring_open(rname, BATON_ROLE_CONSUMER, backend, &r))
		return 11;
	for (i = 0; i < n; i++) {
		uint64_t h, len, j;
		uint8_t *b;

		if (baton_pool_recv(r, pool, &h, &len, PC_OP_NS))
			return 12;
		b = baton_pool_ptr(pool, h);
		if (!b || len > baton_pool_buf_size(pool, h))
			return 13;
		for (j = 0; j < len; j += 511)
			if (b[j] != (uint8_t)(i + j))
				return 14;
		if (baton_pool_free(pool, h))
			return 15;
	}
	baton_ring_close(r);
	baton_pool_close(pool);
	return 0;
}

/* Exit code, or 128 + signal. */
static inline int ph_wait(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * Holders preempted in the middle of a refill: two processes on one CPU
 * allocate and free bursts of PC_PREEMPT_BURST buffers for
 * PC_PREEMPT_MS, so the scheduler stops each of them at random points
 * while the other moves the queue's head and tail on by hundreds. Half
 * the pool is always on the queue, so an allocation that says ENOMEM is
 * wrong, and nothing is scribbled, so a bad word counted is wrong too: a
 * refill that read the head, was preempted, then read the tail took the
 * distance between a stale head and a fresh tail (more than the queue
 * holds) for a scribbled tail, answered as for an empty class and
 * counted a bad word (lib/pool.c, refill()). 0, a step, or 100 + the
 * first failing child's exit code (1: ENOMEM; 2: another error; 3: no
 * open).
 */
#define PC_PREEMPT_BUFS		256
#define PC_PREEMPT_BURST	48
#define PC_PREEMPT_MS		1500

static inline int pc_preempted_cycler(const char *pname, int cpu)
{
	uint64_t h[PC_PREEMPT_BURST], end;
	struct baton_pool *pool;
	struct timespec ts;
	cpu_set_t set;
	int i, rc;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);	/* best effort */
	if (baton_pool_open(pname, &pool))
		_exit(3);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 +
	      PC_PREEMPT_MS;
	for (;;) {
		for (i = 0; i < PC_PREEMPT_BURST; i++) {
			rc = baton_pool_alloc(pool, 4096, &h[i]);
			if (rc)
				_exit(rc == -ENOMEM ? 1 : 2);
		}
		for (i = 0; i < PC_PREEMPT_BURST; i++)
			if (baton_pool_free(pool, h[i]))
				_exit(2);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if ((uint64_t)ts.tv_sec * 1000 +
		    (uint64_t)ts.tv_nsec / 1000000 >= end)
			break;
	}
	baton_pool_close(pool);
	_exit(0);
}

static inline int pc_refill_survives_preemption(const char *pname,
						uint64_t *bad_words)
{
	struct baton_pool_params p = pc_params(PC_PREEMPT_BUFS, 0);
	uint64_t all[PC_PREEMPT_BUFS + 8];
	struct baton_pool_info info;
	struct baton_pool *pool;
	int i, rc, dups, step = 0;
	pid_t pid[2];

	if (baton_pool_create(pname, &p, &pool))
		return 1;
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		if (!pid[i])
			pc_preempted_cycler(pname, 0);
	}
	for (i = 0; i < 2; i++) {
		rc = pid[i] < 0 ? 99 : ph_wait(pid[i]);
		if (rc && !step)
			step = 100 + rc;
	}
	if (baton_pool_info(pool, &info))
		step = step ? step : 2;
	*bad_words = info.bad_words;
	/* Every buffer back, each once, once both have closed. */
	if (!step && (pc_alloc_all(pool, all, PC_PREEMPT_BUFS + 8, &dups) !=
			      PC_PREEMPT_BUFS || dups))
		step = 3;
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	return step;
}

/*
 * 3000 buffers of two sizes from this process to a child through a ring;
 * then every buffer is back, each once. 0, a step, or 100 + the child's
 * exit code.
 */
static inline int pc_cross_processes(const char *pname, const char *rname,
				     int backend)
{
	struct baton_pool_params p = pc_params(32, 0);
	struct baton_ring_params rp = pc_ring_params(backend);
	struct baton_pool *pool;
	struct baton_ring *r;
	int i, n = 3000, dups, step = 0, rc;
	uint64_t hs[40];
	pid_t pid;

	if (baton_pool_create(pname, &p, &pool))
		return 1;
	if (baton_ring_create(rname, &rp, BATON_ROLE_PRODUCER, &r))
		return 2;
	pid = fork();
	if (pid < 0)
		return 3;
	if (!pid)
		_exit(pc_recv_and_check(pname, rname, backend, n));
	for (i = 0; i < n && !step; i++) {
		size_t size = i % 3 ? 3000 : 60000;
		uint64_t h, j;
		uint8_t *b;

		while ((rc = baton_pool_alloc(pool, size, &h)) == -ENOMEM)
			sched_yield();
		if (rc) {
			step = 4;
			break;
		}
		b = baton_pool_ptr(pool, h);
		for (j = 0; j < size; j += 511)
			b[j] = (uint8_t)(i + j);
		if (baton_pool_send(r, pool, h, size, PC_OP_NS))
			step = 5;
		else if (baton_pool_free(pool, h) != -ESTALE)
			step = 6;	/* sent: ours no more */
	}
	if (step)
		kill(pid, SIGKILL);
	rc = ph_wait(pid);
	if (!step && rc)
		step = 100 + rc;
	baton_ring_close(r);
	baton_ring_unlink(rname, backend);
	/* Every buffer back (the child's magazine at its close), each once. */
	if (!step && (pc_alloc_all(pool, hs, 40, &dups) != 32 || dups))
		step = 7;
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	return step;
}

/*
 * Child: open a producer of MPSC ring @rname, sleep @delay_ms, take one
 * ticket and die holding it (a tombstone for the consumer).
 */
static inline pid_t pc_lost_ticket(const char *rname, int backend,
				   int delay_ms)
{
	pid_t pid = fork();
	struct baton_ring *r;

	if (pid)
		return pid;
	if (baton_ring_open(rname, BATON_ROLE_PRODUCER, backend, &r))
		_exit(2);
	usleep((useconds_t)delay_ms * 1000);
	baton_mpsc_prod_reserve(r, 1);
	_exit(0);
}

/*
 * baton_pool_recv() on an MPSC ring passes over a dead producer's
 * tombstone: a lost slot carries no buffer. With nothing behind it the
 * receive times out, by its own deadline (not a fresh timeout from the
 * tombstone on: the ticket is lost 800 ms into a 1 s wait); with a
 * message behind it, the message comes.
 */
static inline int pc_recv_passes_tombstones(const char *pname,
					    const char *rname, int backend)
{
	struct baton_pool_params p = pc_params(8, 0);
	struct baton_ring_params rp = pc_ring_params(backend);
	struct baton_ring *c, *pr;
	struct baton_pool *pool;
	uint64_t h, got, len, t0;
	int step = 0;

	rp.kind = BATON_RING_MPSC;
	rp.max_producers = 3;
	if (baton_pool_create(pname, &p, &pool))
		return 1;
	if (baton_ring_create(rname, &rp, BATON_ROLE_CONSUMER, &c))
		return 2;
	/* a live producer: the stream has not ended */
	if (baton_ring_open(rname, BATON_ROLE_PRODUCER, backend, &pr))
		step = 3;
	/* one ticket lost before the receive, one 800 ms into it */
	if (!step && ph_wait(pc_lost_ticket(rname, backend, 0)))
		step = 7;
	if (!step) {
		pid_t pid = pc_lost_ticket(rname, backend, 800);

		t0 = ph_now_ns();
		if (baton_pool_recv(c, pool, &got, &len, 1000000000LL) !=
		    -ETIMEDOUT)
			step = 4;
		else if (ph_now_ns() - t0 > 1500000000ULL)
			step = 5;
		if (ph_wait(pid))
			step = step ? step : 6;
	}
	if (!step) {
		if (ph_wait(pc_lost_ticket(rname, backend, 0)) ||
		    baton_pool_alloc(pool, 100, &h) ||
		    baton_pool_send(pr, pool, h, 100, PC_OP_NS))
			step = 8;
		else if (baton_pool_recv(c, pool, &got, &len, PC_OP_NS) ||
			 got != h || len != 100)
			step = 9;
		else if (baton_pool_free(pool, got))
			step = 10;
	}
	if (step != 3)
		baton_ring_close(pr);
	baton_ring_close(c);
	baton_ring_unlink(rname, backend);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	return step;
}

/*
 * baton_pool_recv()'s deadline on an SPSC ring, whether the wait is for a
 * message or for the commit of one that came: a timeout of 0 only looks;
 * an empty ring waits out the timeout; a message whose sender (another
 * holder) has pushed it but not yet given the buffer is waited on to the
 * timeout and left in the ring, and received once the give comes. The
 * library reads the clock only once a wait begins, so these are the
 * paths that arm the deadline late.
 */
#define PC_RECV_WAIT_NS	(100LL * 1000000)

/*
 * A wait from @t0 lasted its timeout, and not 100 times it: the upper
 * bound catches a doubled or endless wait and leaves a slow VM room.
 */
static inline int pc_waited_its_timeout(uint64_t t0)
{
	uint64_t took = ph_now_ns() - t0;

	return took >= (uint64_t)PC_RECV_WAIT_NS &&
	       took < 100 * (uint64_t)PC_RECV_WAIT_NS;
}

static inline int pc_recv_deadline_steps(struct baton_ring *prod,
					 struct baton_ring *cons,
					 struct baton_pool *sender,
					 struct baton_pool *receiver)
{
	struct { uint64_t handle, len; } m;
	uint64_t h, got, len, t0;

	if (baton_pool_recv(cons, receiver, &got, &len, 0) != -ETIMEDOUT)
		return 10;
	t0 = ph_now_ns();
	if (baton_pool_recv(cons, receiver, &got, &len, PC_RECV_WAIT_NS) !=
	    -ETIMEDOUT)
		return 11;
	if (!pc_waited_its_timeout(t0))
		return 12;
	/* a push without its give: what a sender between the two leaves */
	if (baton_pool_alloc(sender, 100, &h))
		return 13;
	m.handle = h;
	m.len = 100;
	if (baton_spsc_push(prod, &m, sizeof(m), PC_OP_NS))
		return 14;
	t0 = ph_now_ns();
	if (baton_pool_recv(cons, receiver, &got, &len, PC_RECV_WAIT_NS) !=
	    -ETIMEDOUT)
		return 15;
	if (!pc_waited_its_timeout(t0))
		return 16;
	if (baton_pool_recv(cons, receiver, &got, &len, 0) != -ETIMEDOUT)
		return 17;
	if (baton_pool_give(sender, h))
		return 18;
	if (baton_pool_recv(cons, receiver, &got, &len, 0) || got != h ||
	    len != 100)
		return 19;
	if (baton_pool_free(receiver, got))
		return 20;
	return 0;
}

static inline int pc_recv_deadlines(const char *pname, const char *rname,
				    int backend)
{
	struct baton_pool_params p = pc_params(8, 0);
	struct baton_ring_params rp = pc_ring_params(backend);
	struct baton_pool *sender, *receiver = NULL;
	struct baton_ring *prod, *cons = NULL;
	int step = 0;

	if (baton_pool_create(pname, &p, &sender))
		return 1;
	if (baton_pool_open(pname, &receiver))
		step = 2;
	if (!step && baton_ring_create(rname, &rp, BATON_ROLE_PRODUCER, &prod))
		step = 3;
	if (!step && baton_ring_open(rname, BATON_ROLE_CONSUMER, backend,
				     &cons))
		step = 4;
	if (!step)
		step = pc_recv_deadline_steps(prod, cons, sender, receiver);
	if (!step || step > 3) {
		baton_ring_close(cons);
		baton_ring_close(prod);
		baton_ring_unlink(rname, backend);
	}
	baton_pool_close(receiver);
	baton_pool_close(sender);
	baton_pool_unlink(pname);
	return step;
}

/*
 * A sender killed after sending one buffer and keeping another: the sent
 * one is the receiver's, intact, and the kept one (and the dead holder's
 * magazine) come back: all 16, once.
 */
static inline int pc_sent_survives(const char *pname, const char *rname,
				   int backend)
{
	struct baton_pool_params p = pc_params(16, 0);
	struct baton_ring_params rp = pc_ring_params(backend);
	volatile uint32_t *sent;
	struct baton_pool *pool;
	struct baton_ring *r;
	uint64_t h, len, hs[20];
	int dups, step = 0;
	uint8_t *b;
	pid_t pid;

	sent = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sent == MAP_FAILED)
		return 1;
	if (baton_pool_create(pname, &p, &pool) ||
	    baton_ring_create(rname, &rp, BATON_ROLE_CONSUMER, &r))
		return 2;
	pid = fork();
	if (pid < 0)
		return 3;
	if (!pid) {
		struct baton_pool *cp;
		struct baton_ring *cr;
		uint64_t ch, other;

		if (baton_pool_open(pname, &cp) ||
		    baton_ring_open(rname, BATON_ROLE_PRODUCER, backend, &cr))
			_exit(30);
		if (baton_pool_alloc(cp, 4096, &ch) ||
		    baton_pool_alloc(cp, 4096, &other))
			_exit(31);
		memset(baton_pool_ptr(cp, ch), 0x77, 4096);
		if (baton_pool_send(cr, cp, ch, 4096, PC_OP_NS))
			_exit(32);
		__atomic_store_n(sent, 1, __ATOMIC_RELEASE);
		pause();
		_exit(33);
	}
	while (!__atomic_load_n(sent, __ATOMIC_ACQUIRE))
		usleep(100);
	kill(pid, SIGKILL);
	if (ph_wait(pid) != 128 + SIGKILL)
		step = 4;
	else if (baton_pool_recv(r, pool, &h, &len, PC_OP_NS) || len != 4096)
		step = 5;
	else if (!(b = baton_pool_ptr(pool, h)) || b[0] != 0x77 ||
		 b[4095] != 0x77)
		step = 6;
	else if (baton_pool_free(pool, h))
		step = 7;
	else if (pc_alloc_all(pool, hs, 20, &dups) != 16 || dups)
		step = 8;
	baton_ring_close(r);
	baton_ring_unlink(rname, backend);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	munmap((void *)sent, 4096);
	return step;
}

/*
 * Child: allocate, fill, free at random until killed, or, with @stop,
 * until *@stop is set: then it frees all it holds and exits 0. Posts @go
 * once it holds a holder index. Exit codes name the failing step.
 */
static inline void pc_churn(const char *pname, volatile uint32_t *go,
			    unsigned int seed, volatile uint32_t *stop)
{
	struct baton_pool *pool;
	uint64_t held[48];
	int n = 0;

	if (baton_pool_open(pname, &pool))
		_exit(20);
	__atomic_store_n(go, 1, __ATOMIC_RELEASE);
	while (!stop || !__atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
		seed = seed * 1103515245 + 12345;
		if (n < 48 && (seed >> 16) % 3) {
			if (!baton_pool_alloc(pool, 4096, &held[n])) {
				memset(baton_pool_ptr(pool, held[n]), 1, 64);
				n++;
			}
		} else if (n) {
			unsigned int k = (seed >> 8) % n;

			if (baton_pool_free(pool, held[k]))
				_exit(21);
			held[k] = held[--n];
		}
	}
	while (n)
		if (baton_pool_free(pool, held[--n]))
			_exit(22);
	baton_pool_close(pool);
	_exit(0);
}

static inline pid_t pc_start_churn(const char *pname, volatile uint32_t *go,
				   unsigned int seed, volatile uint32_t *stop)
{
	uint64_t end;
	pid_t pid;

	__atomic_store_n(go, 0, __ATOMIC_RELEASE);
	pid = fork();
	if (!pid)
		pc_churn(pname, go, seed, stop);
	end = ph_now_ns() + 10000000000ULL;
	while (pid > 0 && !__atomic_load_n(go, __ATOMIC_ACQUIRE) &&
	       ph_now_ns() < end)
		usleep(100);
	return pid;
}

/* What pc_kill_loop() saw; on failure, the round and the step. */
struct pc_kill_report {
	int round;
	int step;
	int buffers;
	int worst_ms;
};

/*
 * @rounds rounds on @pool (pc_params(64, 0), opened as @pool by the
 * caller): a victim churns class 0 beside a survivor that runs all along
 * (so the survivor runs into whatever each death left: holes, unreleased
 * entries, UNSTICK) and is killed 0 to 3 ms in. Every 25 rounds the
 * survivor stops and gives its buffers back, and every buffer must be
 * allocatable again, each once (how long that took is reported, not
 * asserted); then a new survivor. 0 or a step.
 */
static inline int pc_kill_loop(struct baton_pool *pool, const char *pname,
			       int rounds, struct pc_kill_report *rep)
{
	volatile uint32_t *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t survivor = 0;
	uint64_t h[80];
	int round;

	memset(rep, 0, sizeof(*rep));
	if (sh == MAP_FAILED)
		return 1;
	for (round = 0; round < rounds && !rep->step; round++) {
		int dups = 0, n = 0, ms;
		uint64_t t0;
		pid_t victim;

		rep->round = round;
		if (!survivor) {
			sh[0] = 0;
			survivor = pc_start_churn(pname, &sh[1],
						  round * 104729 + 3, &sh[0]);
			if (survivor < 0)
				rep->step = 2;
		}
		victim = pc_start_churn(pname, &sh[2], round * 7919 + 1, NULL);
		if (victim < 0) {
			rep->step = 3;
			break;
		}
		usleep((useconds_t)((round * 37) % 3000));
		kill(victim, SIGKILL);
		if (ph_wait(victim) != 128 + SIGKILL)
			rep->step = 4;
		if (rep->step || (round + 1) % 25)
			continue;
		__atomic_store_n(&sh[0], 1, __ATOMIC_RELEASE);
		if (ph_wait(survivor) != 0)
			rep->step = 5;
		survivor = 0;
		t0 = ph_now_ns();
		while (!rep->step) {
			n = pc_alloc_all(pool, h, 80, &dups);
			if (dups)
				rep->step = 6;
			if (n == 64 || ph_now_ns() - t0 > 10000000000ULL)
				break;
			pc_free_all(pool, h, n);
			usleep(1000);
		}
		ms = (int)((ph_now_ns() - t0) / 1000000);
		rep->worst_ms = ms > rep->worst_ms ? ms : rep->worst_ms;
		rep->buffers = n;
		if (!rep->step && n != 64)
			rep->step = 7;
		pc_free_all(pool, h, n);
	}
	if (survivor > 0) {
		kill(survivor, SIGKILL);
		ph_wait(survivor);
	}
	munmap((void *)sh, 4096);
	return rep->step;
}

/* ---- a ring nobody reads again ---- */

/*
 * Class 0 allocatable, counted as pc_alloc_all() does, then freed again;
 * asked until it says @want or 1 s passes (a returned buffer the kernel
 * could not queue at once is queued by the repair work, 5 ms later; on
 * memfd what the dead held comes back at a holder's next repair, which
 * these allocations run at most every 100 ms).
 */
static inline int pc_class0_free_count(struct baton_pool *pool, int want)
{
	uint64_t hs[24];
	int n = 0, dups, tries;

	for (tries = 0; tries < 100; tries++) {
		n = pc_alloc_all(pool, hs, 24, &dups);
		pc_free_all(pool, hs, n);
		if (dups)
			return -1;
		if (n == want)
			break;
		usleep(10000);
	}
	return n;
}

/* A child that receives @n buffers (checked, freed), then dies. */
static inline void pc_receive_then_die(const char *pname, const char *rname,
				       int backend, int n)
{
	struct baton_pool *cp;
	struct baton_ring *cr;
	uint64_t h, len;

	if (baton_pool_open(pname, &cp) ||
	    baton_ring_open(rname, BATON_ROLE_CONSUMER, backend, &cr))
		_exit(40);
	while (n--) {
		if (baton_pool_recv(cr, cp, &h, &len, PC_OP_NS) || len != 4096)
			_exit(41);
		if (baton_pool_free(cp, h))
			_exit(42);
	}
	raise(SIGKILL);
	_exit(43);
}

/*
 * A ring nobody reads again (BATON_RING_IOC_BIND_POOL, which the first
 * baton_pool_send() through a ring makes): six buffers sent into a ring
 * of @kind, a receiver takes two and is killed. The four left stay SENT
 * while the ring can still be read (a consumer attaching later gets the
 * next one, intact; the ring's name alone keeps the rest, and so does a
 * consumer's fd after the unlink); once the ring has neither they come
 * back, each once, but not the one the later
 * consumer gave on (baton_pool_give(), as for a transport of its own):
 * that one is in flight elsewhere. kmod: when the ring is destroyed;
 * memfd: at the sender's next repair after the ring lost its name and
 * its consumer (Documentation/pool.rst). 0 or the failing step.
 */
static inline int pc_unread_ring_returns(const char *pname,
					 const char *rname, uint32_t kind,
					 int backend)
{
	struct baton_ring_params rp = pc_ring_params(backend);
	struct baton_pool_params p = pc_params(16, 0);
	struct baton_ring *prod, *cons;
	struct baton_pool *pool;
	uint64_t h[6], got, len;
	int i, step = 0;
	pid_t pid;

	rp.kind = kind;
	rp.max_producers = kind == BATON_RING_MPSC ? 2 : 0;
	if (baton_pool_create(pname, &p, &pool) ||
	    baton_ring_create(rname, &rp, BATON_ROLE_PRODUCER, &prod))
		return 1;
	for (i = 0; i < 6 && !step; i++) {
		if (baton_pool_alloc(pool, 4096, &h[i]))
			step = 2;
		else
			memset(baton_pool_ptr(pool, h[i]), 0x40 + i, 4096);
		if (!step && baton_pool_send(prod, pool, h[i], 4096, PC_OP_NS))
			step = 3;
	}
	pid = step ? -1 : fork();
	if (!pid)
		pc_receive_then_die(pname, rname, backend, 2);
	if (!step && ph_wait(pid) != 128 + SIGKILL)
		step = 4;
	else if (!step && pc_class0_free_count(pool, 12) != 12)
		step = 5;	/* the receiver's death took none of the four */
	else if (!step && baton_ring_open(rname, BATON_ROLE_CONSUMER,
					  backend, &cons))
		step = 6;
	if (!step) {
		if (baton_pool_recv(cons, pool, &got, &len, PC_OP_NS) ||
		    got != h[2] ||
		    ((uint8_t *)baton_pool_ptr(pool, got))[4095] != 0x42 ||
		    baton_pool_give(pool, got))
			step = 7;
		baton_ring_close(cons);
	}
	baton_ring_close(prod);
	/* Past a memfd holder's 100 ms between looks at its rings' files. */
	usleep(250000);
	if (!step && pc_class0_free_count(pool, 12) != 12)
		step = 8;	/* no fd, but a name: three still SENT */
	else if (!step && baton_ring_open(rname, BATON_ROLE_CONSUMER,
					  backend, &cons))
		step = 13;
	baton_ring_unlink(rname, backend);
	if (!step) {
		/*
		 * No name, but a consumer: it may still read them. Past a
		 * memfd holder's 100 ms between looks at its rings' files.
		 */
		usleep(250000);
		if (pc_class0_free_count(pool, 12) != 12)
			step = 14;
		baton_ring_close(cons);
	}
	if (!step && pc_class0_free_count(pool, 15) != 15)
		step = 9;
	else if (!step && baton_pool_check(pool, h[5]) != -ESTALE)
		step = 10;
	else if (!step && (baton_pool_take(pool, got) ||
			   baton_pool_free(pool, got)))
		step = 11;	/* the given one was not taken */
	else if (!step && pc_class0_free_count(pool, 16) != 16)
		step = 12;
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	return step;
}

/*
 * Sends into a ring that already lost its reader: one buffer through a
 * ring and back, then the consumer closes and the name goes (memfd: the
 * sender's next look finds the ring unreadable and empty, and drops its
 * watch), then two more sends into it. When the ring goes (kmod: the
 * sender's close destroys it; memfd: the sender watches it again at the
 * send and its next look finds it unreadable) both come back. 0 or the
 * failing step.
 */
static inline int pc_sends_into_unread_ring_return(const char *pname,
						   const char *rname,
						   int backend)
{
	struct baton_ring_params rp = pc_ring_params(backend);
	struct baton_pool_params p = pc_params(16, 0);
	struct baton_ring *prod, *cons;
	struct baton_pool *pool;
	uint64_t h, got, len;
	int i, step = 0;

	if (baton_pool_create(pname, &p, &pool) ||
	    baton_ring_create(rname, &rp, BATON_ROLE_PRODUCER, &prod))
		return 1;
	if (baton_pool_alloc(pool, 4096, &h) ||
	    baton_pool_send(prod, pool, h, 4096, PC_OP_NS))
		step = 2;
	else if (baton_ring_open(rname, BATON_ROLE_CONSUMER, backend, &cons))
		step = 3;
	if (!step) {
		if (baton_pool_recv(cons, pool, &got, &len, PC_OP_NS) ||
		    got != h || baton_pool_free(pool, got))
			step = 4;
		baton_ring_close(cons);
	}
	baton_ring_unlink(rname, backend);
	usleep(250000);		/* memfd: past a look, which drops the watch */
	if (!step && pc_class0_free_count(pool, 16) != 16)
		step = 5;
	for (i = 0; i < 2 && !step; i++)
		if (baton_pool_alloc(pool, 4096, &h) ||
		    baton_pool_send(prod, pool, h, 4096, PC_OP_NS))
			step = 6;
	usleep(250000);		/* memfd: past the next look */
	baton_ring_close(prod);
	if (!step && pc_class0_free_count(pool, 16) != 16)
		step = 7;	/* the two sent after the drop stayed SENT */
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	return step;
}

/* ---- fork() ---- */

/*
 * Holder A's child B, forked with A's handle open: every call on the
 * inherited handle is -EBADF (NULL for the address), and the close frees
 * only B's copy. Posts B's verdict in @sh[0] (1, or a step), then sleeps.
 */
static inline void pc_forked_child(struct baton_pool *ap, const uint64_t *h,
				   volatile uint32_t *sh)
{
	struct baton_pool_info info;
	uint32_t r = 1;
	uint64_t x;

	if (baton_pool_alloc(ap, 4096, &x) != -EBADF)
		r = 20;
	else if (baton_pool_free(ap, h[0]) != -EBADF)
		r = 21;
	else if (baton_pool_ptr(ap, h[0]))
		r = 22;
	else if (baton_pool_info(ap, &info) != -EBADF)
		r = 23;
	else if (baton_pool_check(ap, h[0]) != -EBADF)
		r = 24;
	baton_pool_close(ap);
	__atomic_store_n(&sh[0], r, __ATOMIC_RELEASE);
	pause();
	_exit(0);
}

/*
 * A pool handle is its process's: holder A, with 4 buffers, forks B and
 * is killed while B lives on. B can use nothing of A's handle, and
 * holds nothing of A alive (no fd, no mapping): every buffer comes back
 * at A's death. 0, a step, or 100 + B's failed check.
 */
static inline int pc_fork_inherits_nothing(const char *pname)
{
	struct baton_pool_params p = pc_params(16, 0);
	volatile uint32_t *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct baton_pool *pool;
	uint64_t hs[20], end;
	int dups, n = 0, step = 0;
	pid_t a;

	if (sh == MAP_FAILED || baton_pool_create(pname, &p, &pool))
		return 1;
	a = fork();
	if (a < 0)
		return 2;
	if (!a) {
		struct baton_pool *ap;
		uint64_t h[4];
		pid_t b;
		int i;

		if (baton_pool_open(pname, &ap))
			_exit(10);
		for (i = 0; i < 4; i++)
			if (baton_pool_alloc(ap, 4096, &h[i]))
				_exit(11);
		b = fork();
		if (b < 0)
			_exit(12);
		if (!b)
			pc_forked_child(ap, h, sh);
		__atomic_store_n(&sh[2], (uint32_t)b, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&sh[0], __ATOMIC_ACQUIRE))
			usleep(100);
		__atomic_store_n(&sh[1], (uint32_t)b, __ATOMIC_RELEASE);
		pause();
		_exit(13);
	}
	end = ph_now_ns() + 10000000000ULL;
	while (!__atomic_load_n(&sh[1], __ATOMIC_ACQUIRE) && ph_now_ns() < end)
		usleep(100);
	if (!sh[1])
		step = 3;
	else if (sh[0] != 1)
		step = 100 + (int)sh[0];
	kill(a, SIGKILL);
	if (ph_wait(a) != 128 + SIGKILL && !step)
		step = 4;
	/* B lives on: A's buffers come back all the same. */
	if (!step && ((n = pc_alloc_all(pool, hs, 20, &dups)) != 16 || dups))
		step = 5;
	if (sh[2])
		kill((pid_t)sh[2], SIGKILL);	/* A's orphan: init reaps it */
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	munmap((void *)sh, 4096);
	return step;
}

/* ---- parking on an empty class ---- */

/*
 * Child: open @pname, post @sh[0], then one baton_pool_alloc_wait() of up
 * to 10 s; its result in @sh[1] (1: a buffer; else 100 + errno) and how
 * long it waited, in ms, in @sh[2]. Exits holding the buffer.
 */
static inline void pc_park_child(const char *pname, volatile uint32_t *sh)
{
	struct baton_pool *pool;
	uint64_t h, t0;
	int rc;

	if (baton_pool_open(pname, &pool))
		_exit(60);
	__atomic_store_n(&sh[0], 1, __ATOMIC_RELEASE);
	t0 = ph_now_ns();
	rc = baton_pool_alloc_wait(pool, 4096, &h, 10000000000LL);
	sh[2] = (uint32_t)((ph_now_ns() - t0) / 1000000);
	__atomic_store_n(&sh[1], rc ? 100 + (uint32_t)-rc : 1, __ATOMIC_RELEASE);
	_exit(0);
}

static inline pid_t pc_start_parker(const char *pname, volatile uint32_t *sh)
{
	pid_t pid;

	sh[0] = sh[1] = sh[2] = 0;
	pid = fork();
	if (!pid)
		pc_park_child(pname, sh);
	while (pid > 0 && !__atomic_load_n(&sh[0], __ATOMIC_ACQUIRE))
		usleep(100);
	usleep(50000);	/* parked by now, most likely */
	return pid;
}

/*
 * Class 0 of 8 buffers (no magazine: every free reaches the queue), all
 * held: baton_pool_alloc_wait() times out (-ETIMEDOUT, after its
 * timeout); a parked allocator in another process gets the buffer this
 * one frees; and one whose class is held by a process that is killed
 * gets one of that process's buffers. How long the parkers waited is
 * printed by the caller (@woken_ms), not asserted. 0 or a step.
 */
static inline int pc_alloc_waits(const char *pname, int *woken_ms)
{
	struct baton_pool_params p = pc_params(8, 0);
	volatile uint32_t *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct baton_pool *pool;
	uint64_t h[8], x, t0;
	int dups, step = 0;
	pid_t w, holder;

	if (sh == MAP_FAILED || baton_pool_create(pname, &p, &pool))
		return 1;
	if (pc_alloc_all(pool, h, 8, &dups) != 8 || dups)
		step = 2;
	t0 = ph_now_ns();
	if (!step && baton_pool_alloc_wait(pool, 4096, &x, 20000000) !=
			     -ETIMEDOUT)
		step = 3;
	if (!step && ph_now_ns() - t0 < 20000000)
		step = 4;
	if (!step && baton_pool_alloc_wait(pool, 4096, &x, 0) != -ETIMEDOUT)
		step = 5;
	/* Woken by a free in another process. */
	w = step ? -1 : pc_start_parker(pname, sh);
	if (!step && w < 0)
		step = 6;
	if (!step && baton_pool_free(pool, h[7]))
		step = 7;
	if (w > 0 && ph_wait(w) != 0 && !step)
		step = 8;
	if (!step && sh[1] != 1)
		step = 9;
	woken_ms[0] = (int)sh[2];
	/* Woken by the death of the holder of every buffer. */
	pc_free_all(pool, h, 7);
	holder = step ? -1 : fork();
	if (!holder) {
		struct baton_pool *hp;
		uint64_t hh[8];
		int got = 0;

		if (baton_pool_open(pname, &hp))
			_exit(70);
		/* All 8: the one the dead parker held comes back too. */
		while (got < 8)
			if (!baton_pool_alloc(hp, 4096, &hh[got]))
				got++;
			else
				usleep(1000);
		__atomic_store_n(&sh[3], 1, __ATOMIC_RELEASE);
		pause();
		_exit(71);
	}
	while (holder > 0 && !__atomic_load_n(&sh[3], __ATOMIC_ACQUIRE))
		usleep(100);
	w = step ? -1 : pc_start_parker(pname, sh);
	if (holder > 0) {
		kill(holder, SIGKILL);
		if (ph_wait(holder) != 128 + SIGKILL && !step)
			step = 10;
	}
	if (w > 0 && ph_wait(w) != 0 && !step)
		step = 11;
	if (!step && sh[1] != 1)
		step = 12;
	woken_ms[1] = (int)sh[2];
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	munmap((void *)sh, 4096);
	return step;
}

/* ---- kill -9 in the middle of hand-offs ---- */

#define PH_BUFFERS	32
#define PH_SLOTS	64
#define PH_CHECK_EVERY	25
#define PH_STEP_NS	(5LL * 1000000)		/* one bounded wait */

struct ph_shared {
	uint32_t stop;
	uint32_t ready;
	uint64_t received;
	uint64_t stale;
	uint32_t holder[4];	/* fan-out: the readers' holder indices */
};

enum { PH_OK = 0, PH_SETUP = 40, PH_FOREIGN = 41, PH_FREE = 42,
       PH_RECV = 43, PH_SEND = 44 };

static inline void ph_fill(struct baton_pool *pool, uint64_t h)
{
	uint8_t *b = baton_pool_ptr(pool, h);

	memcpy(b, &h, sizeof(h));
	b[4095] = (uint8_t)h;
}

static inline int ph_intact(struct baton_pool *pool, uint64_t h)
{
	uint8_t *b = baton_pool_ptr(pool, h);
	uint64_t w;

	if (!b)
		return 0;
	memcpy(&w, b, sizeof(w));
	return w == h && b[4095] == (uint8_t)h;
}

static inline void ph_sender(const char *pname, const char *rname, int backend,
			     struct ph_shared *sh)
{
	struct baton_pool *pool;
	struct baton_ring *r;
	uint64_t h;

	if (baton_pool_open(pname, &pool) ||
	    baton_ring_open(rname, BATON_ROLE_PRODUCER, backend, &r))
		_exit(PH_SETUP);
	__atomic_fetch_add(&sh->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		int rc = baton_pool_alloc(pool, 4096, &h);

		if (rc == -ENOMEM) {
			usleep(100);
			continue;
		}
		if (rc)
			_exit(PH_SEND);
		ph_fill(pool, h);
		rc = baton_pool_send(r, pool, h, 4096, PH_STEP_NS);
		if (rc && baton_pool_free(pool, h))
			_exit(PH_FREE);		/* not sent: still ours */
	}
	baton_ring_close(r);
	baton_pool_close(pool);
	_exit(PH_OK);
}

/*
 * Receive from @r until stopped and the ring stays empty for a step; check
 * each buffer, then free it, or with @shared put it (fan-out). Exits.
 */
static inline void ph_receive_loop(struct baton_pool *pool,
				   struct baton_ring *r, struct ph_shared *sh,
				   int shared)
{
	uint64_t h, len;

	for (;;) {
		int rc = shared ?
			baton_pool_recv_shared(r, pool, &h, &len, PH_STEP_NS) :
			baton_pool_recv(r, pool, &h, &len, PH_STEP_NS);

		if (rc == 0) {
			if (!ph_intact(pool, h))
				_exit(PH_FOREIGN);
			if (shared ? baton_pool_put(pool, h) :
				     baton_pool_free(pool, h))
				_exit(PH_FREE);
			__atomic_fetch_add(&sh->received, 1, __ATOMIC_RELAXED);
		} else if (rc == -ESTALE) {
			__atomic_fetch_add(&sh->stale, 1, __ATOMIC_RELAXED);
		} else if (rc == -ETIMEDOUT || rc == -EPIPE) {
			if (__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE))
				break;
			if (rc == -EPIPE)
				usleep(100);
		} else {
			_exit(PH_RECV);
		}
	}
	baton_ring_close(r);
	baton_pool_close(pool);
	_exit(PH_OK);
}

static inline void ph_receiver(const char *pname, const char *rname,
			       int backend, struct ph_shared *sh)
{
	struct baton_pool *pool;
	struct baton_ring *r;

	if (baton_pool_open(pname, &pool) ||
	    baton_ring_open(rname, BATON_ROLE_CONSUMER, backend, &r))
		_exit(PH_SETUP);
	__atomic_fetch_add(&sh->ready, 1, __ATOMIC_RELEASE);
	ph_receive_loop(pool, r, sh, 0);
}

static inline pid_t ph_start(const char *pname, const char *rname, int backend,
			     struct ph_shared *sh, int sender)
{
	uint32_t before = __atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE);
	uint64_t end = ph_now_ns() + 10000000000ULL;
	pid_t pid = fork();

	if (!pid) {
		if (sender)
			ph_sender(pname, rname, backend, sh);
		ph_receiver(pname, rname, backend, sh);
	}
	while (pid > 0 && __atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) ==
				  before && ph_now_ns() < end)
		usleep(100);
	return pid;
}

/* Allocate until ENOMEM: how many, and whether an index came twice. */
static inline int ph_count_all(struct baton_pool *pool, int *dups)
{
	uint64_t h[PH_BUFFERS + 8];
	uint8_t seen[PH_BUFFERS] = { 0 };
	int n = 0;

	*dups = 0;
	while (n < PH_BUFFERS + 8 && !baton_pool_alloc(pool, 4096, &h[n])) {
		if (BATON_POOL_H_INDEX(h[n]) >= PH_BUFFERS ||
		    seen[BATON_POOL_H_INDEX(h[n])]++)
			(*dups)++;
		n++;
	}
	for (int i = 0; i < n; i++)
		baton_pool_free(pool, h[i]);
	return n;
}

/* What a run saw; on failure, where and why. */
struct ph_report {
	int round;
	int code;		/* 0, or a process's exit code, or -n */
	const char *what;
	int buffers;		/* at the failing check */
	uint64_t received;
	uint64_t stale;
};

/* Every buffer allocatable, each once: 0, or -1 with @rep saying which. */
static inline int ph_all_back(struct baton_pool *pool, struct ph_report *rep)
{
	int dups, n = ph_count_all(pool, &dups);

	rep->buffers = n;
	if (n == PH_BUFFERS && !dups)
		return 0;
	rep->code = dups ? -2 : -3;
	rep->what = dups ? "a buffer twice" : "a buffer lost";
	return -1;
}

/*
 * @rounds rounds on pool @pname (PH_BUFFERS buffers of 4 KiB, opened by
 * the caller as @pool) and SPSC ring @rname (PH_SLOTS slots of 16 bytes,
 * existing, no role held). 0, or -1 with @rep saying what failed.
 */
static inline int ph_run(struct baton_pool *pool, const char *pname,
			 const char *rname, int backend, int rounds,
			 struct ph_report *rep)
{
	struct ph_shared *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int round, rc = 0;

	memset(rep, 0, sizeof(*rep));
	if (sh == MAP_FAILED)
		return -1;
	for (round = 0; round < rounds && !rc; round++) {
		pid_t s, r, victim, other;
		int n;

		sh->stop = 0;
		s = ph_start(pname, rname, backend, sh, 1);
		r = ph_start(pname, rname, backend, sh, 0);
		victim = round % 2 ? s : r;
		other = round % 2 ? r : s;
		usleep((useconds_t)((round * 37) % 3000));
		kill(victim, SIGKILL);
		rep->round = round;
		if ((rep->code = ph_wait(victim)) != 128 + SIGKILL) {
			rep->what = round % 2 ? "sender" : "receiver";
			rc = -1;
		}
		__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
		if ((n = ph_wait(other)) != 0 && !rc) {
			rep->code = n;
			rep->what = round % 2 ? "receiver" : "sender";
			rc = -1;
		}
		if (rc || (round + 1) % PH_CHECK_EVERY)
			continue;
		/* What the ring still holds goes to a drainer, then all back. */
		sh->stop = 1;
		r = ph_start(pname, rname, backend, sh, 0);
		if ((n = ph_wait(r)) != 0) {
			rep->code = n;
			rep->what = "drainer";
			rc = -1;
			continue;
		}
		if (ph_all_back(pool, rep))
			rc = -1;
	}
	rep->received = sh->received;
	rep->stale = sh->stale;
	munmap(sh, 4096);
	return rc;
}

/* ---- fan-out: one buffer, several readers ---- */

/* Ring @i of a fan-out test: the base name and a digit. */
static inline void pf_ring_name(char *buf, size_t len, const char *base, int i)
{
	snprintf(buf, len, "%.56s%c", base, (char)('0' + i));
}

/*
 * Wait until @h is no longer allocated (the release or repair freed it),
 * on memfd opening a fresh handle now and then: an open repairs the dead.
 * Not on kmod: a fresh handle would take the dead reader's index, and its
 * close would give up that index's part, hiding a part nobody gave up.
 * 0, or -1 after 5 s.
 */
static inline int pc_wait_freed(const char *pname, struct baton_pool *s,
				uint64_t h, int backend)
{
	uint64_t end = ph_now_ns() + 5000000000ULL;
	struct baton_pool *fresh;

	do {
		if (backend == BATON_BACKEND_MEMFD &&
		    !baton_pool_open(pname, &fresh))
			baton_pool_close(fresh);
		if (baton_pool_check(s, h) == -ESTALE)
			return 0;
		usleep(1000);
	} while (ph_now_ns() < end);
	return -1;
}

/*
 * Child of pc_share_reader_dies(): open the pool, post our holder index in
 * sh[1] and sh[0] = 1; with @clear, once sh[2] says the buffer sh[3]..[4]
 * is shared, clear our bit in its readers' mask as a last put's first
 * step does, and post sh[0] = 2. Then wait to be killed.
 */
static inline void pc_share_child(const char *pname, volatile uint32_t *sh,
				  int clear)
{
	struct baton_pool *child;
	struct baton_pool_info ic;

	if (baton_pool_open(pname, &child) || baton_pool_info(child, &ic))
		_exit(1);
	sh[1] = ic.holder;
	__atomic_store_n(&sh[0], 1, __ATOMIC_RELEASE);
	if (clear) {
		uint64_t h, a;
		struct baton_pool_desc *d;

		while (!__atomic_load_n(&sh[2], __ATOMIC_ACQUIRE))
			usleep(100);
		h = (uint64_t)sh[4] << 32 | sh[3];
		d = &baton__pool_fast(child)->cls[0].desc[BATON_POOL_H_INDEX(h)];
		a = __atomic_load_n(&d->aux, __ATOMIC_ACQUIRE);
		if (!__atomic_compare_exchange_n(&d->aux, &a,
						 a & ~(1ULL << ic.holder), 0,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			_exit(2);
		__atomic_store_n(&sh[0], 2, __ATOMIC_RELEASE);
	}
	for (;;)
		pause();
}

/*
 * A reader process killed while it holds its part of a shared buffer: the
 * buffer stays the other reader's (@r1) until r1's put, then goes back.
 * With @clear the child is the only reader and is killed after clearing
 * its bit but before taking the buffer (between a last put's two
 * compare-and-swaps): the release, or the repair, must free it. 0 or the
 * failing step.
 */
static inline int pc_share_reader_dies(const char *pname, struct baton_pool *s,
				       struct baton_pool *r1, int clear,
				       int backend)
{
	volatile uint32_t *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint32_t want = clear ? 2 : 1;
	struct baton_pool_info i1;
	struct baton_pool *fresh;
	uint64_t h = 0, end, mask;
	int step = 0;
	pid_t pid;

	if (sh == MAP_FAILED || baton_pool_info(r1, &i1))
		return 20;
	pid = fork();
	if (pid < 0)
		return 21;
	if (!pid)
		pc_share_child(pname, sh, clear);
	end = ph_now_ns() + 10000000000ULL;
	while (!__atomic_load_n(&sh[0], __ATOMIC_ACQUIRE) && ph_now_ns() < end)
		usleep(100);
	mask = 1ULL << sh[1] | (clear ? 0 : 1ULL << i1.holder);
	if (!sh[0] || baton_pool_alloc(s, 4096, &h))
		step = 22;
	else if (baton_pool_share(s, h, mask))
		step = 23;
	sh[3] = (uint32_t)h;
	sh[4] = (uint32_t)(h >> 32);
	__atomic_store_n(&sh[2], 1, __ATOMIC_RELEASE);
	while (!step && __atomic_load_n(&sh[0], __ATOMIC_ACQUIRE) != want &&
	       ph_now_ns() < end)
		usleep(100);
	if (!step && sh[0] != want)
		step = 24;
	kill(pid, SIGKILL);
	if (ph_wait(pid) != 128 + SIGKILL && !step)
		step = 25;
	if (!step && !clear) {
		/* The repair (memfd) first: r1's part must survive it. */
		if (backend == BATON_BACKEND_MEMFD &&
		    baton_pool_open(pname, &fresh))
			step = 26;
		else if (backend == BATON_BACKEND_MEMFD)
			baton_pool_close(fresh);
		if (!step && baton_pool_check(s, h))
			step = 27;	/* freed while r1 reads it */
		if (!step && baton_pool_put(r1, h))
			step = 28;
	}
	if (!step && pc_wait_freed(pname, s, h, backend))
		step = clear ? 29 : 30;	/* the dead reader's part kept it */
	munmap((void *)sh, 4096);
	return step;
}

/*
 * A reader killed while baton_pool_send_shared() waits on another
 * reader's full ring: its release (memfd: a repair) may run before the
 * share names it, and then the sender must give up its part itself.
 * Ring A is the child's, ring B (full, PH_SLOTS dummy messages) r1's.
 * 0 or the failing step.
 */
static inline int pc_reader_dies_while_sending(const char *pname,
					       const char *rbase, int backend,
					       struct baton_pool *s,
					       struct baton_pool *r1)
{
	volatile uint32_t *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct baton_ring_params rp = pc_ring_params(backend);
	struct baton_ring *ra, *rb, *rbc;
	struct baton_pool_reader rd[2];
	struct baton_pool_info i1;
	char an[64], bn[64];
	uint64_t h = 0, dummy[2] = { 0, 0 }, end;
	uint32_t got = 0;
	pid_t pid, killer;
	int step = 0, i;

	pf_ring_name(an, sizeof(an), rbase, 7);
	pf_ring_name(bn, sizeof(bn), rbase, 8);
	if (sh == MAP_FAILED || baton_pool_info(r1, &i1) ||
	    baton_ring_create(an, &rp, BATON_ROLE_PRODUCER, &ra) ||
	    baton_ring_create(bn, &rp, BATON_ROLE_PRODUCER, &rb) ||
	    baton_ring_open(bn, BATON_ROLE_CONSUMER, backend, &rbc))
		return 40;
	for (i = 0; i < PH_SLOTS; i++)
		if (baton_spsc_try_push(rb, dummy, sizeof(dummy)))
			return 41;
	pid = fork();
	if (pid < 0)
		return 42;
	if (!pid)
		pc_share_child(pname, sh, 0);
	end = ph_now_ns() + 10000000000ULL;
	while (!__atomic_load_n(&sh[0], __ATOMIC_ACQUIRE) && ph_now_ns() < end)
		usleep(100);
	killer = fork();
	if (!killer) {
		usleep(200000);
		kill(pid, SIGKILL);
		_exit(0);
	}
	rd[0].ring = ra;
	rd[0].holder = sh[1];
	rd[0].reserved = 0;
	rd[1].ring = rb;
	rd[1].holder = i1.holder;
	rd[1].reserved = 0;
	if (!sh[0] || baton_pool_alloc(s, 4096, &h))
		step = 43;
	else if (baton_pool_send_shared(s, h, 4096, rd, 2, 2000000000LL,
					&got) != -ETIMEDOUT || got != 1)
		step = 44;	/* A got it, B's ring was full */
	ph_wait(killer);
	kill(pid, SIGKILL);
	if (ph_wait(pid) != 128 + SIGKILL && !step)
		step = 45;
	if (!step && pc_wait_freed(pname, s, h, backend))
		step = 46;	/* shared with a reader released before the share */
	baton_ring_close(rbc);
	baton_ring_close(rb);
	baton_ring_close(ra);
	baton_ring_unlink(an, backend);
	baton_ring_unlink(bn, backend);
	munmap((void *)sh, 4096);
	return step;
}

/* pc_reader_dies_while_sending() on a pool of its own. */
static inline int pc_share_while_sending(const char *pname, const char *rbase,
					 int backend)
{
	struct baton_pool_params p = pc_params(16, 0);
	struct baton_pool *s, *r1;
	int step;

	if (baton_pool_create(pname, &p, &s))
		return 1;
	if (baton_pool_open(pname, &r1))
		return 2;
	step = pc_reader_dies_while_sending(pname, rbase, backend, s, r1);
	baton_pool_close(r1);
	baton_pool_close(s);
	baton_pool_unlink(pname);
	return step;
}

/*
 * baton_pool_send_shared() refuses, before it pushes anything, a reader
 * with a non-zero reserved word, a holder index a mask cannot name
 * (BATON_POOL_SHARE_MAX, below the pool's max_holders: pc_share_and_put()
 * makes 40), and the same holder twice: -EINVAL, the ring still empty
 * and buffer @h still @s's. 0 or the failing step (33..37).
 */
static inline int pc_send_shared_refusals(const char *pname,
					  struct baton_pool *s, uint64_t h,
					  uint32_t holder, int backend)
{
	struct baton_ring_params rp = pc_ring_params(backend);
	struct baton_pool_reader rd[2];
	struct baton_ring *prod, *cons;
	char rname[BATON_NAME_MAX];
	uint64_t m[2];
	int step = 0;

	snprintf(rname, sizeof(rname), "%.50s.rd", pname);
	baton_ring_unlink(rname, backend);
	if (baton_ring_create(rname, &rp, BATON_ROLE_PRODUCER, &prod))
		return 33;
	rd[0].ring = prod;
	rd[0].holder = holder;
	rd[0].reserved = 1;
	rd[1] = rd[0];
	rd[1].reserved = 0;
	if (baton_pool_send_shared(s, h, 1, rd, 1, 0, NULL) != -EINVAL)
		step = 34;	/* reserved */
	rd[0].reserved = 0;
	rd[0].holder = BATON_POOL_SHARE_MAX;
	if (!step && baton_pool_send_shared(s, h, 1, rd, 1, 0, NULL) != -EINVAL)
		step = 35;	/* an index a mask cannot name */
	rd[0].holder = holder;
	if (!step && baton_pool_send_shared(s, h, 1, rd, 2, 0, NULL) != -EINVAL)
		step = 36;	/* the same reader twice */
	if (!step && baton_ring_open(rname, BATON_ROLE_CONSUMER, backend,
				     &cons))
		step = 37;
	if (!step) {
		/* Nothing was pushed, and the buffer did not move. */
		if (baton_spsc_try_pop(cons, m, sizeof(m)) != -EAGAIN ||
		    baton_pool_check(s, h))
			step = 37;
		baton_ring_close(cons);
	}
	baton_ring_close(prod);
	baton_ring_unlink(rname, backend);
	return step;
}

/*
 * Share and put between three handles of this process (holders 0, 1, 2):
 * the buffer stays allocated until the last reader's put; a second put, a
 * put by a non-reader, a free by the sharer and bad masks are refused;
 * then every buffer is back, once. 0 or the failing step.
 */
static inline int pc_share_and_put(const char *pname, int backend)
{
	struct baton_pool_params p = pc_params(16, 0);
	struct baton_pool *s, *r1, *r2;
	struct baton_pool_info i1, i2;
	struct baton_pool_reader rd;
	uint64_t h, hs[24], mask;
	int step = 0, dups;

	p.max_holders = 40;	/* past BATON_POOL_SHARE_MAX: step 35 */
	if (baton_pool_create(pname, &p, &s))
		return 1;
	if (baton_pool_open(pname, &r1) || baton_pool_open(pname, &r2))
		return 2;
	if (baton_pool_info(r1, &i1) || baton_pool_info(r2, &i2))
		return 3;
	mask = 1ULL << i1.holder | 1ULL << i2.holder;
	if (baton_pool_alloc(s, 4096, &h))
		return 4;
	ph_fill(s, h);
	rd.ring = NULL;
	rd.holder = i1.holder;
	rd.reserved = 0;
	if (baton_pool_share(s, h, 0) != -EINVAL)
		step = 5;
	else if (baton_pool_send_shared(s, h, 1, &rd, 0, 0, NULL) != -EINVAL)
		step = 31;	/* no reader */
	else if (baton_pool_send_shared(s, h, 1, &rd, 1, 0, NULL) != -EINVAL)
		step = 32;	/* no ring */
	else if ((step = pc_send_shared_refusals(pname, s, h, i1.holder,
						 backend)))
		;	/* 33..37: its step */
	else if (baton_pool_share(s, h, 1ULL << 32) != -EINVAL)
		step = 6;
	else if (baton_pool_share(s, h + (1ULL << 32), mask) != -ESTALE)
		step = 7;
	else if (baton_pool_share(s, h, mask))
		step = 8;
	else if (baton_pool_share(s, h, mask) != -ESTALE)
		step = 9;	/* not ours any more */
	else if (baton_pool_free(s, h) != -ESTALE)
		step = 10;
	else if (baton_pool_put(s, h) != -ESTALE)
		step = 11;	/* the sharer is no reader */
	else if (!ph_intact(r1, h) || !ph_intact(r2, h))
		step = 12;
	else if (baton_pool_put(r1, h))
		step = 13;
	else if (baton_pool_put(r1, h) != -ESTALE)
		step = 14;	/* put twice */
	else if (baton_pool_check(s, h))
		step = 15;	/* r2 still reads it */
	else if (baton_pool_put(r2, h))
		step = 16;
	else if (baton_pool_check(s, h) != -ESTALE)
		step = 17;	/* the last put freed it */
	else if (baton_pool_put(r2, h) != -ESTALE)
		step = 18;
	if (!step)
		step = pc_share_reader_dies(pname, s, r1, 0, backend);
	if (!step)
		step = pc_share_reader_dies(pname, s, r1, 1, backend);
	baton_pool_close(r1);
	baton_pool_close(r2);
	if (!step && (pc_alloc_all(s, hs, 24, &dups) != 16 || dups))
		step = 19;
	baton_pool_close(s);
	baton_pool_unlink(pname);
	return step;
}

#define PF_READERS	3
_Static_assert(PF_READERS <= sizeof(((struct ph_shared *)0)->holder) /
			      sizeof(uint32_t), "ph_shared.holder holds the readers");
#define PF_ROUNDS	40
#define PF_MSGS		24


/* Reader @i: receive from ring i, check, put, until stopped and empty. */
static inline void pf_reader(const char *pname, const char *rbase, int i,
			     int backend, struct ph_shared *sh)
{
	struct baton_pool_info info;
	struct baton_pool *pool;
	struct baton_ring *r;
	char rname[64];

	pf_ring_name(rname, sizeof(rname), rbase, i);
	if (baton_pool_open(pname, &pool) || baton_pool_info(pool, &info) ||
	    baton_ring_open(rname, BATON_ROLE_CONSUMER, backend, &r))
		_exit(PH_SETUP);
	__atomic_store_n(&sh->holder[i], info.holder, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sh->ready, 1, __ATOMIC_RELEASE);
	ph_receive_loop(pool, r, sh, 1);
}

static inline pid_t pf_start(const char *pname, const char *rbase, int i,
			     int backend, struct ph_shared *sh)
{
	uint32_t before = __atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE);
	uint64_t end = ph_now_ns() + 10000000000ULL;
	pid_t pid = fork();

	if (!pid)
		pf_reader(pname, rbase, i, backend, sh);
	while (pid > 0 && __atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) ==
				  before && ph_now_ns() < end)
		usleep(100);
	if (pid > 0 && __atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) == before) {
		kill(pid, SIGKILL);	/* not ready in 10 s: a failed round */
		ph_wait(pid);
		return -1;
	}
	return pid;
}

/*
 * One round: three readers, PF_MSGS buffers to all of them, one reader
 * killed at a random message, after which the sender names only the
 * others (as a sender would once it learns of the death; a share naming
 * a dead reader's index keeps the buffer until that index's next holder
 * is done). The victim must die of the kill or exit 0, survivors exit 0.
 * 0 or the step.
 */
static inline int pf_round(struct baton_pool *pool, const char *pname,
			   const char *rbase, struct baton_ring **rings,
			   int backend, struct ph_shared *sh, int round)
{
	struct baton_pool_reader rd[PF_READERS];
	int victim = round % PF_READERS, kill_at = (round * 7) % PF_MSGS;
	int i, m, n = PF_READERS, step = 0, rc;
	pid_t pid[PF_READERS];
	uint64_t h;

	sh->stop = 0;
	for (i = 0; i < PF_READERS; i++) {
		pid[i] = pf_start(pname, rbase, i, backend, sh);
		if (pid[i] < 0) {
			while (i--) {
				kill(pid[i], SIGKILL);
				ph_wait(pid[i]);
			}
			return 30;	/* a reader not started in 10 s */
		}
		rd[i].ring = rings[i];
		rd[i].holder = __atomic_load_n(&sh->holder[i], __ATOMIC_ACQUIRE);
		rd[i].reserved = 0;
	}
	for (m = 0; m < PF_MSGS && !step; m++) {
		uint32_t sent;

		if (m == kill_at) {
			kill(pid[victim], SIGKILL);
			rc = ph_wait(pid[victim]);
			if (rc != 0 && rc != 128 + SIGKILL)
				step = 100 + rc;
			pid[victim] = 0;
			rd[victim] = rd[--n];
		}
		rc = baton_pool_alloc_wait(pool, 4096, &h, PC_OP_NS);
		if (rc) {
			step = 31;
			break;
		}
		ph_fill(pool, h);
		rc = baton_pool_send_shared(pool, h, 4096, rd, (uint32_t)n,
					    PC_OP_NS, &sent);
		if (rc && !sent && baton_pool_free(pool, h))
			step = 32;
		else if (rc && rc != -ETIMEDOUT)
			step = 33;
	}
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < PF_READERS; i++) {
		if (!pid[i])
			continue;
		rc = ph_wait(pid[i]);
		if (rc)
			step = step ? step : 100 + rc;
	}
	return step;
}

/*
 * Fan-out with reader deaths: PF_ROUNDS rounds of pf_round() on a pool
 * of PH_BUFFERS buffers; every 10 rounds, and at the end, every buffer
 * is allocatable again, each once (on memfd after an open, which repairs
 * the dead readers). 0, or -1 with @rep saying what failed.
 */
static inline int pf_run(const char *pname, const char *rbase, int backend,
			 struct ph_report *rep)
{
	struct baton_pool_params p = pc_params(PH_BUFFERS, 0);
	struct baton_ring_params rp = pc_ring_params(backend);
	struct baton_ring *rings[PF_READERS];
	struct baton_pool *pool, *fresh;
	struct ph_shared *sh;
	char rname[64];
	int round, i, n, rc = 0;

	memset(rep, 0, sizeof(*rep));
	sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || baton_pool_create(pname, &p, &pool))
		return -1;
	for (i = 0; i < PF_READERS; i++) {
		pf_ring_name(rname, sizeof(rname), rbase, i);
		if (baton_ring_create(rname, &rp, BATON_ROLE_PRODUCER,
				      &rings[i]))
			return -1;
	}
	for (round = 0; round < PF_ROUNDS && !rc; round++) {
		rep->round = round;
		rep->code = pf_round(pool, pname, rbase, rings, backend, sh,
				     round);
		if (rep->code) {
			rep->what = "a round";
			rc = -1;
			break;
		}
		if ((round + 1) % 10)
			continue;
		/* Drain what the rings hold, then every buffer back once. */
		sh->stop = 1;
		for (i = 0; i < PF_READERS && !rc; i++) {
			pid_t pid = pf_start(pname, rbase, i, backend, sh);

			if ((n = pid < 0 ? -1 : ph_wait(pid)) != 0) {
				rep->code = n;
				rep->what = "drainer";
				rc = -1;
			}
		}
		if (rc)
			break;
		/* memfd: an open repairs the dead (not on kmod: pc_wait_freed). */
		if (backend == BATON_BACKEND_MEMFD) {
			if (baton_pool_open(pname, &fresh)) {
				rc = -1;
				break;
			}
			baton_pool_close(fresh);
		}
		if (ph_all_back(pool, rep))
			rc = -1;
	}
	rep->received = sh->received;
	rep->stale = sh->stale;
	for (i = 0; i < PF_READERS; i++) {
		baton_ring_close(rings[i]);
		pf_ring_name(rname, sizeof(rname), rbase, i);
		baton_ring_unlink(rname, backend);
	}
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	munmap(sh, 4096);
	return rc;
}

/* ---- queue words no holder leaves there ---- */

/*
 * Every holder maps the free queues and descriptors read-write, on both
 * backends, so any holder can write a word that no holder, live or dead,
 * ever leaves there. The library must not spin on one for ever
 * (Documentation/pool.rst, "Words no holder leaves there"). Each case writes such a
 * word through the test's own mapping, then checks that every buffer
 * still comes out once. Before the fixes, each spun until the harness's
 * timeout.
 */

/* Class 0 of a fresh pool of pc_params(64, 0) named @name, name gone. */
static inline struct baton_pool_cls *pc_scribble_pool(const char *name,
						      struct baton_pool **pool)
{
	struct baton_pool_params prm = pc_params(64, 0);

	if (baton_pool_create(name, &prm, pool))
		return NULL;
	baton_pool_unlink(name);
	return &baton__pool_fast(*pool)->cls[0];
}

/* Make the buffer the head entry names KERNEL for holder index @by. */
static inline void pc_head_buffer_kernel(struct baton_pool_cls *c, uint32_t by)
{
	uint64_t v = c->q[*c->head & (c->qcap - 1)].value;

	__atomic_store_n(&c->desc[v & 0xffffffffu].state,
			 BATON_POOL_STATE(v >> 32, BATON_POOL_KERNEL, by),
			 __ATOMIC_RELEASE);
}

/*
 * The head's buffer left KERNEL for holder index @by (0: none): a taker
 * drops the entry (memfd at once; the module's decay, which KERNEL stands
 * for there, within KERNEL_WAIT_MS) and the other 63 come out once.
 */
static inline int pc_kernel_word_at_head(const char *name, uint32_t by)
{
	struct baton_pool_cls *c;
	struct baton_pool *pool;
	uint64_t h[80];
	int n, dups;

	c = pc_scribble_pool(name, &pool);
	if (!c)
		return 1;
	pc_head_buffer_kernel(c, by);
	n = pc_alloc_all(pool, h, 80, &dups);
	pc_free_all(pool, h, n);
	baton_pool_close(pool);
	return n != 63 || dups ? 2 : 0;
}

/*
 * The entry of the next free's ticket, scribbled to a seq of no lap: the
 * freer publishes over it, and all 64 buffers come out again, once.
 * *@bad: the pool's bad_words after it (counted on memfd only).
 */
static inline int pc_scribbled_freer_entry(const char *name, uint64_t *bad)
{
	struct baton_pool_info info;
	struct baton_pool_cls *c;
	struct baton_pool *pool;
	uint64_t h[80], t;
	int n, dups, step = 0;

	c = pc_scribble_pool(name, &pool);
	if (!c)
		return 1;
	n = pc_alloc_all(pool, h, 80, &dups);
	if (n != 64 || dups) {
		step = 2;
	} else {
		t = __atomic_load_n(c->tail, __ATOMIC_ACQUIRE);
		__atomic_store_n(&c->q[t & (c->qcap - 1)].seq,
				 t + c->qcap / 2, __ATOMIC_RELEASE);
		pc_free_all(pool, h, n);
		n = pc_alloc_all(pool, h, 80, &dups);
		if (n != 64 || dups)
			step = 3;
	}
	pc_free_all(pool, h, n);
	*bad = baton_pool_info(pool, &info) ? 0 : info.bad_words;
	baton_pool_close(pool);
	return step;
}

/*
 * As pc_scribbled_freer_entry(), but the scribble is the one value of a
 * lap back, t - qcap ("not yet published"), after the head has passed
 * t - qcap: that entry's freer published it before any taker moved the
 * head past it, so nobody will publish it now. The freer used to wait
 * for it for ever (UNSTICK finds nothing to do there), and with it every
 * free that flushes and every close; the alarm ends that (the test dies
 * of SIGALRM). Now it publishes over it, counted.
 */
static inline int pc_scribbled_freer_entry_a_lap_back(const char *name,
						      uint64_t *bad)
{
	struct baton_pool_info info;
	struct baton_pool_cls *c;
	struct baton_pool *pool;
	uint64_t h[80], t;
	int n, dups, lap, step = 0;

	c = pc_scribble_pool(name, &pool);
	if (!c)
		return 1;
	/* Three laps of 64: the queue's tickets go past qcap (128). */
	for (lap = 0, n = 0; lap < 3; lap++) {
		n = pc_alloc_all(pool, h, 80, &dups);
		if (n != 64 || dups)
			break;
		if (lap < 2)
			pc_free_all(pool, h, n);
	}
	t = __atomic_load_n(c->tail, __ATOMIC_ACQUIRE);
	if (n != 64 || dups || t < c->qcap ||
	    __atomic_load_n(c->head, __ATOMIC_ACQUIRE) <= t - c->qcap) {
		step = 2;
	} else {
		alarm(20);
		__atomic_store_n(&c->q[t & (c->qcap - 1)].seq, t - c->qcap,
				 __ATOMIC_RELEASE);
		pc_free_all(pool, h, n);
		n = pc_alloc_all(pool, h, 80, &dups);
		alarm(0);
		if (n != 64 || dups)
			step = 3;
	}
	pc_free_all(pool, h, n);
	*bad = baton_pool_info(pool, &info) ? 0 : info.bad_words;
	baton_pool_close(pool);
	return step;
}

/*
 * The head entry of a class still on its first lap (head < qcap)
 * scribbled to head - qcap + 1: "the lap before's, not yet released"
 * only by a wrap-round, since there was no lap before. An allocation
 * used to spin on it for ever, the timed one past its deadline too (the
 * alarm ends that); it answers as for an empty class now, and with the
 * word put back every buffer comes out once.
 */
static inline int pc_scribbled_head_entry_first_lap(const char *name,
						    uint64_t *bad)
{
	struct baton_pool_info info;
	struct baton_pool_cls *c;
	struct baton_pool *pool;
	uint64_t h[80], x, hd, was;
	int n = 0, dups, step = 0;

	c = pc_scribble_pool(name, &pool);
	if (!c)
		return 1;
	hd = __atomic_load_n(c->head, __ATOMIC_ACQUIRE);
	if (hd >= c->qcap)
		return 2;
	was = c->q[hd & (c->qcap - 1)].seq;
	alarm(20);
	__atomic_store_n(&c->q[hd & (c->qcap - 1)].seq, hd - c->qcap + 1,
			 __ATOMIC_RELEASE);
	if (baton_pool_alloc(pool, 1, &x) != -ENOMEM)
		step = 3;
	else if (baton_pool_alloc_wait(pool, 1, &x, 10 * 1000000LL) !=
		 -ETIMEDOUT)
		step = 4;
	__atomic_store_n(&c->q[hd & (c->qcap - 1)].seq, was,
			 __ATOMIC_RELEASE);
	alarm(0);
	if (!step) {
		n = pc_alloc_all(pool, h, 80, &dups);
		if (n != 64 || dups)
			step = 5;
	}
	pc_free_all(pool, h, n);
	*bad = baton_pool_info(pool, &info) ? 0 : info.bad_words;
	baton_pool_close(pool);
	return step;
}

/*
 * The tail scribbled 2^40 tickets ahead of the head with every buffer
 * taken: no freer holds those tickets and none will publish them, so an
 * allocation answers as for an empty class (ENOMEM; a wait, ETIMEDOUT at
 * its deadline) instead of filling holes ticket by ticket for years. The
 * alarm ends a spinning one (the test dies of SIGALRM). The tail put
 * back, all 64 buffers come out again, once. *@bad: bad_words after.
 */
static inline int pc_scribbled_tail(const char *name, uint64_t *bad)
{
	struct baton_pool_info info;
	struct baton_pool_cls *c;
	struct baton_pool *pool;
	uint64_t h[80], x;
	int n, dups, step = 0;

	c = pc_scribble_pool(name, &pool);
	if (!c)
		return 1;
	n = pc_alloc_all(pool, h, 80, &dups);
	if (n != 64 || dups) {
		step = 2;
		goto out;
	}
	alarm(20);
	__atomic_fetch_add(c->tail, 1ULL << 40, __ATOMIC_ACQ_REL);
	if (baton_pool_alloc(pool, 1, &x) != -ENOMEM)
		step = 3;
	else if (baton_pool_alloc_wait(pool, 1, &x, 10 * 1000000LL) !=
		 -ETIMEDOUT)
		step = 4;
	__atomic_fetch_sub(c->tail, 1ULL << 40, __ATOMIC_ACQ_REL);
	alarm(0);
	if (step)
		goto out;
	pc_free_all(pool, h, n);
	n = pc_alloc_all(pool, h, 80, &dups);
	if (n != 64 || dups)
		step = 5;
out:
	pc_free_all(pool, h, n);
	*bad = baton_pool_info(pool, &info) ? 0 : info.bad_words;
	baton_pool_close(pool);
	return step;
}

/* ---- decay under steady traffic ---- */

/*
 * 256 buffers of 64 KiB: a magazine holds 32 (an eighth, at most
 * BATON_POOL_MAG). A round uses more than that, so that its frees pass
 * the slow path, from which the memfd backend runs its decay: traffic
 * that never leaves a magazine drives no upkeep there (pool.rst).
 */
#define PC_TRAFFIC_BUFS		256
#define PC_TRAFFIC_STEP		40	/* buffers in use per round */
#define PC_TRAFFIC_DECAY_MS	1000
#define PC_TRAFFIC_NS		(15LL * 1000000000)

/* Resident pages of [addr, addr + len): the pool's shared file pages. */
static inline long pc_resident_pages(void *addr, size_t len)
{
	static unsigned char vec[PC_TRAFFIC_BUFS * 16];
	size_t pages = len / 4096, i;
	long n = 0;

	if (pages > sizeof(vec) || mincore(addr, len, vec))
		return -1;
	for (i = 0; i < pages; i++)
		n += vec[i] & 1;
	return n;
}

/* One round of traffic: allocate, fill and free PC_TRAFFIC_STEP buffers. */
static inline int pc_traffic_round(struct baton_pool *pool, int round)
{
	uint64_t h[PC_TRAFFIC_STEP];
	int i;

	for (i = 0; i < PC_TRAFFIC_STEP; i++) {
		if (baton_pool_alloc(pool, 65536, &h[i]))
			return -1;
		memset(baton_pool_ptr(pool, h[i]), round, 65536);
	}
	for (i = 0; i < PC_TRAFFIC_STEP; i++)
		if (baton_pool_free(pool, h[i]))
			return -1;
	return 0;
}

/*
 * Decay under steady traffic: after a burst of all 256 buffers, a holder
 * keeps allocating, filling and freeing 40 of them every 5 ms, through
 * the free queue. With a FIFO queue that alone reuses every buffer well
 * within decay_ms, so none is ever idle that long; the buffers the
 * traffic does not need must still go back (within 15 s: a bound, not a
 * timing), and then every buffer is allocatable once. On memfd the decay
 * runs from the traffic's own slow paths. 0 or a step.
 */
static inline int pc_decay_under_traffic(const char *name, long *rounds,
					 long *resident)
{
	static uint64_t h[PC_TRAFFIC_BUFS + 1];
	struct baton_pool_params p;
	struct baton_pool *pool;
	uint64_t end;
	int n, dups, i, step = 0;
	uint8_t *base;

	memset(&p, 0, sizeof(p));
	p.nr_classes = 1;
	p.decay_ms = PC_TRAFFIC_DECAY_MS;
	p.max_holders = 8;
	p.classes[0].buf_shift = 16;
	p.classes[0].count = PC_TRAFFIC_BUFS;
	if (++step, baton_pool_create(name, &p, &pool))
		return step;
	n = pc_alloc_all(pool, h, PC_TRAFFIC_BUFS + 1, &dups);
	if (++step, n != PC_TRAFFIC_BUFS || dups)
		return step;
	for (i = 0; i < n; i++)
		memset(baton_pool_ptr(pool, h[i]), 0xcd, 65536);
	pc_free_all(pool, h, n);
	base = baton_pool_ptr(pool, BATON_POOL_HANDLE(0, 0, 1));
	*resident = pc_resident_pages(base, (size_t)PC_TRAFFIC_BUFS << 16);
	if (++step, *resident != PC_TRAFFIC_BUFS * 16)
		return step;
	end = ph_now_ns() + PC_TRAFFIC_NS;
	for (*rounds = 0; ph_now_ns() < end; ++*rounds) {
		if (pc_traffic_round(pool, (int)*rounds))
			return step + 1;
		*resident = pc_resident_pages(base,
					      (size_t)PC_TRAFFIC_BUFS << 16);
		/* The round's 40 and a magazine, with room to spare. */
		if (*resident <= 3 * PC_TRAFFIC_STEP * 16)
			break;
		usleep(5000);
	}
	step += 2;
	if (*resident > 3 * PC_TRAFFIC_STEP * 16)
		return step;
	/*
	 * Waiting allocations: the loop above stops as soon as the pages
	 * went, which may be in the middle of the decay's pass, while
	 * buffers it took are still between FREE and COLD (a slow kernel,
	 * KCSAN under QEMU, truncates for seconds). A plain allocation
	 * that finds none of them yet says ENOMEM; these wait (5 s each at
	 * most) for the pass to hand them back.
	 */
	n = pc_alloc_all_wait(pool, h, PC_TRAFFIC_BUFS, &dups);
	if (++step, n != PC_TRAFFIC_BUFS || dups)
		return step;
	pc_free_all(pool, h, n);
	baton_pool_close(pool);
	baton_pool_unlink(name);
	return 0;
}

/*
 * Idle magazines (pool.rst): @h names PC_REAPED_BUFS buffers of 64 KiB
 * that this holder wrote, freed into its magazine, and whose pages a
 * decay then gave back (the caller waited for info.decayed). None is in
 * memory; the next PC_REAPED_BUFS allocations, all from the magazine,
 * come back zeroed and keep what is written in them. 0 or a step.
 */
#define PC_REAPED_BUFS	16

/*
 * The other half: allocate PC_REAPED_BUFS buffers of 64 KiB into @h, write
 * every byte, and free them into the magazine, which then holds them all.
 * 0 or a step.
 */
static inline int pc_magazine_of_written(struct baton_pool *pool, uint64_t *h)
{
	struct baton_pool_info info;
	int i, step = 0;

	for (i = 0; i < PC_REAPED_BUFS; i++) {
		if (++step, baton_pool_alloc(pool, 65536, &h[i]))
			return step;
		memset(baton_pool_ptr(pool, h[i]), 0x5a, 65536);
	}
	for (i = 0; i < PC_REAPED_BUFS; i++)
		if (++step, baton_pool_free(pool, h[i]))
			return step;
	if (++step, baton_pool_info(pool, &info) ||
		    info.classes[0].cached != PC_REAPED_BUFS)
		return step;
	return 0;
}

static inline int pc_reaped_magazine_comes_back(struct baton_pool *pool,
						uint64_t *h)
{
	struct baton_pool_info info;
	int i, step = 0;
	uint8_t *b;

	for (i = 0; i < PC_REAPED_BUFS; i++)
		if (++step, pc_resident_pages(baton_pool_ptr(pool, h[i]),
					      65536) != 0)
			return step;
	for (i = 0; i < PC_REAPED_BUFS; i++) {
		if (++step, baton_pool_alloc(pool, 65536, &h[i]))
			return step;
		b = baton_pool_ptr(pool, h[i]);
		if (++step, b[0] || b[65535])
			return step;
		memset(b, i + 1, 65536);
	}
	if (++step, baton_pool_info(pool, &info) || info.classes[0].cached)
		return step;
	for (i = 0; i < PC_REAPED_BUFS; i++) {
		b = baton_pool_ptr(pool, h[i]);
		if (++step, b[0] != i + 1 || b[65535] != i + 1)
			return step;
		if (++step, baton_pool_free(pool, h[i]))
			return step;
	}
	return 0;
}

/*
 * A holder whose magazine a decay keeps reaping while it works (Y13):
 * for @ns, allocate 1 to 32 buffers of 16 KiB, tag every page of each,
 * sleep up to 25 ms (the bottom of the magazine ages meanwhile, while the
 * holder pops from the top), check the tags and free them. A page given
 * back under a live buffer reads zero. Returns the tags lost, or -1 when
 * an allocation or a free failed; *@rounds counts the rounds.
 */
static inline long pc_tagged_rounds(struct baton_pool *pool, uint64_t ns,
				    uint64_t *rounds)
{
	uint64_t h[32], end = ph_now_ns() + ns, tag;
	unsigned int seed = 1;
	long lost = 0;
	int i, k, pg;

	for (*rounds = 0; ph_now_ns() < end; ++*rounds) {
		k = 1 + (int)(rand_r(&seed) % 32);
		for (i = 0; i < k; i++) {
			uint64_t *w;

			if (baton_pool_alloc(pool, 16384, &h[i]))
				return -1;
			w = baton_pool_ptr(pool, h[i]);
			for (pg = 0; pg < 4; pg++)
				w[pg * 512] = h[i] ^ ((uint64_t)pg << 60);
		}
		usleep((rand_r(&seed) % 26) * 1000);
		for (i = 0; i < k; i++) {
			const uint64_t *w = baton_pool_ptr(pool, h[i]);

			for (pg = 0; pg < 4; pg++) {
				tag = h[i] ^ ((uint64_t)pg << 60);
				lost += w[pg * 512] != tag;
			}
			if (baton_pool_free(pool, h[i]))
				return -1;
		}
	}
	return lost;
}

#endif /* BATON_SELFTEST_POOL_CASES_H */
