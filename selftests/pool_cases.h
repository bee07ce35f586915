/* SPDX-License-Identifier: GPL-2.0 */
/*
 * selftests/pool_handoff.h: kill -9 in the middle of hand-offs, for
 * selftests/pool.c (kmod, in the VM) and selftests/host/pool_memfd.c
 * (memfd, on the host). Needs only libbaton and libc.
 *
 * Each round starts a sender (allocate, fill, baton_pool_send()) and a
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
#ifndef BATON_SELFTEST_POOL_HANDOFF_H
#define BATON_SELFTEST_POOL_HANDOFF_H

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "baton.h"

#define PH_BUFFERS	32
#define PH_SLOTS	64
#define PH_CHECK_EVERY	25
#define PH_STEP_NS	(5LL * 1000000)		/* one bounded wait */

struct ph_shared {
	uint32_t stop;
	uint32_t ready;
	uint64_t received;
	uint64_t stale;
};

enum { PH_OK = 0, PH_SETUP = 40, PH_FOREIGN = 41, PH_FREE = 42,
       PH_RECV = 43, PH_SEND = 44 };

static inline uint64_t ph_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

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

/* Receives until stopped and the ring stays empty for a step. */
static inline void ph_receiver(const char *pname, const char *rname,
			       int backend, struct ph_shared *sh)
{
	struct baton_pool *pool;
	struct baton_ring *r;
	uint64_t h, len;

	if (baton_pool_open(pname, &pool) ||
	    baton_ring_open(rname, BATON_ROLE_CONSUMER, backend, &r))
		_exit(PH_SETUP);
	__atomic_fetch_add(&sh->ready, 1, __ATOMIC_RELEASE);
	for (;;) {
		int rc = baton_pool_recv(r, pool, &h, &len, PH_STEP_NS);

		if (rc == 0) {
			if (!ph_intact(pool, h))
				_exit(PH_FOREIGN);
			if (baton_pool_free(pool, h))
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

/* Exit code, or 128 + signal. */
static inline int ph_wait(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
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
		int dups, n;

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
		n = ph_count_all(pool, &dups);
		rep->buffers = n;
		if (n != PH_BUFFERS || dups) {
			rep->code = dups ? -2 : -3;
			rep->what = dups ? "a buffer twice" : "a buffer lost";
			rc = -1;
		}
	}
	rep->received = sh->received;
	rep->stale = sh->stale;
	munmap(sh, 4096);
	return rc;
}

#endif /* BATON_SELFTEST_POOL_HANDOFF_H */
