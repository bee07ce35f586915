/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the host tests: backend forcing, unique ring names,
 * self-checking messages, and producer/consumer loops that the threaded
 * and forked tests both drive. Included after kselftest_harness.h.
 *
 * Every message carries its sequence number in word 0 and a keyed hash of
 * (seq, word index) in every further word, so a consumer detects loss,
 * duplication, reordering and torn or stale slot contents, and both sides
 * keep a running checksum of everything they wrote or read.
 */
#ifndef BATON_HOST_COMMON_H
#define BATON_HOST_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "baton.h"

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#else
#define UNDER_TSAN 0
#endif

/* TSan makes every atomic access a runtime call; scale the loops down. */
#define SCALE(n) (UNDER_TSAN ? (n) / 8 : (n))

/* Per-operation timeout in the blocking tests: a hang becomes a failure. */
#define OP_TIMEOUT_NS (5LL * 1000 * 1000 * 1000)

static inline void force_memfd(void)
{
	setenv("BATON_BACKEND", "memfd", 1);
}

/* Unique per process (each harness test is a fork) and per call. */
static inline void ring_name(char *buf, size_t len, const char *tag)
{
	static unsigned int n;

	snprintf(buf, len, "t.%d.%s.%u", (int)getpid(), tag, n++);
}

static inline void shm_path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "/dev/shm/baton.%s", name);
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static inline uint64_t fill_msg(void *slot, uint32_t slot_size, uint64_t seq)
{
	uint64_t *w = slot, sum = seq;
	uint32_t i;

	w[0] = seq;
	for (i = 1; i < slot_size / 8; i++) {
		w[i] = mix64(seq * 8191 + i);
		sum += w[i];
	}
	return sum;
}

/* 0 if the slot holds message seq intact, else -EBADMSG. */
static inline int check_msg(const void *slot, uint32_t slot_size, uint64_t seq,
			    uint64_t *sum)
{
	const uint64_t *w = slot;
	uint32_t i;

	if (w[0] != seq)
		return -EBADMSG;
	*sum += seq;
	for (i = 1; i < slot_size / 8; i++) {
		if (w[i] != mix64(seq * 8191 + i))
			return -EBADMSG;
		*sum += w[i];
	}
	return 0;
}

/* What one side of a transfer did; filled by produce()/consume(). */
struct xfer {
	struct baton_ring *r;
	uint64_t count;		/* messages to move */
	uint32_t batch;		/* max batch; 0: single-message push/pop */
	int64_t timeout_ns;	/* per blocking call */
	uint64_t sum;		/* checksum of what was written/read */
	uint64_t bad_seq;	/* first sequence number that failed */
	int err;		/* 0 or a negative errno */
};

/* Batch sizes cycle 1..batch so reservations straddle the wrap point. */
static inline void produce(struct xfer *x)
{
	struct baton_ring *r = x->r;
	uint64_t seq = 0, idx;
	uint8_t buf[65536];
	uint32_t want = 1;
	int got, i;

	while (seq < x->count) {
		if (!x->batch) {
			x->sum += fill_msg(buf, r->slot_size, seq);
			got = baton_spsc_push(r, buf, r->slot_size,
					      x->timeout_ns);
			if (got != 0) {
				x->err = got < 0 ? got : -EPROTO;
				x->bad_seq = seq;
				return;
			}
			seq++;
			continue;
		}
		if (want > x->count - seq)
			want = (uint32_t)(x->count - seq);
		got = baton_spsc_prod_reserve_wait(r, want, &idx,
						   x->timeout_ns);
		if (got <= 0 || (uint32_t)got > want) {
			x->err = got < 0 ? got : -EPROTO;
			x->bad_seq = seq;
			return;
		}
		for (i = 0; i < got; i++)
			x->sum += fill_msg(baton_ring_slot(r, idx + i),
					   r->slot_size, seq + i);
		baton_spsc_prod_submit(r, (uint32_t)got);
		seq += (uint64_t)got;
		want = want % x->batch + 1;
	}
}

static inline void consume(struct xfer *x)
{
	struct baton_ring *r = x->r;
	uint64_t seq = 0, idx;
	uint8_t buf[65536];
	uint32_t want = 1;
	int got, i;

	while (seq < x->count) {
		if (!x->batch) {
			got = baton_spsc_pop(r, buf, r->slot_size,
					     x->timeout_ns);
			if (got != 0) {
				x->err = got < 0 ? got : -EPROTO;
				x->bad_seq = seq;
				return;
			}
			if (check_msg(buf, r->slot_size, seq, &x->sum)) {
				x->err = -EBADMSG;
				x->bad_seq = seq;
				return;
			}
			seq++;
			continue;
		}
		got = baton_spsc_cons_peek_wait(r, want, &idx, x->timeout_ns);
		if (got <= 0 || (uint32_t)got > want) {
			x->err = got < 0 ? got : -EPROTO;
			x->bad_seq = seq;
			return;
		}
		for (i = 0; i < got; i++) {
			if (check_msg(baton_ring_slot(r, idx + i),
				      r->slot_size, seq + i, &x->sum)) {
				x->err = -EBADMSG;
				x->bad_seq = seq + i;
				return;
			}
		}
		baton_spsc_cons_release(r, (uint32_t)got);
		seq += (uint64_t)got;
		want = want % x->batch + 1;
	}
}

static inline void *produce_thread(void *arg)
{
	produce(arg);
	return NULL;
}

static inline void *consume_thread(void *arg)
{
	consume(arg);
	return NULL;
}

/* Wait for a child and return its exit code, or 128 + signal. */
static inline int wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

/* Results a forked child hands back through a MAP_SHARED|MAP_ANONYMOUS page. */
struct child_report {
	uint64_t sum;
	uint64_t park_calls;
	uint64_t wake_calls;
	uint64_t bad_seq;
	int err;
	int done;
};

static inline struct child_report *report_page(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * A child that opens a producer of MPSC ring @name, takes ticket 0 and
 * never publishes it, then waits to be killed: a producer that dies
 * holding a ticket. Returns its pid once it holds the ticket, or -1.
 */
static inline pid_t fork_ticket0_holder(const char *name)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct baton_ring *pa;

		if (baton_ring_open(name, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_AUTO, &pa))
			_exit(2);
		if (baton_mpsc_prod_reserve(pa, 1) != 0)
			_exit(3);
		(void)!write(fds[1], "x", 1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	if (pid > 0 && read(fds[0], &c, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(fds[0]);
	return pid;
}

#endif /* BATON_HOST_COMMON_H */
