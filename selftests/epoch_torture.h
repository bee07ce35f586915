/* SPDX-License-Identifier: GPL-2.0 */
/*
 * selftests/epoch_torture.h: the epoch torture core, shared by the VM test
 * (selftests/epoch_torture.c, kmod backend) and the host test
 * (selftests/host/epoch_torture.c, memfd backend under the sanitizers).
 * No harness here: children report through exit codes.
 *
 * A table of ET_SLOTS object ids lives in a shared anonymous mapping with
 * a pool of objects. Reader processes enter the domain, read every slot's
 * object several times and count one violation for each poisoned one they
 * can reach. Writer processes own disjoint slots and objects: each
 * replaces an object (the new one is unpoisoned before it is published),
 * calls baton_epoch_destroy_sync() on the old one and then poisons it and
 * puts it on its own free list. Any violation means a destroyer was let go
 * while a reader could still reach the object.
 */
#ifndef BATON_EPOCH_TORTURE_H
#define BATON_EPOCH_TORTURE_H

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "baton.h"

#define ET_WRITERS	2
#define ET_SLOTS_PER_W	8
#define ET_SLOTS	(ET_WRITERS * ET_SLOTS_PER_W)
#define ET_OBJS_PER_W	(ET_SLOTS_PER_W * 16)
#define ET_OBJS		(ET_WRITERS * ET_OBJS_PER_W)
#define ET_POISON	0xdeaddeaddeaddeadULL

struct et_obj {
	uint64_t poison;	/* 0 while live */
	uint64_t payload[7];
};

struct et_shared {
	uint64_t table[ET_SLOTS];		/* object ids */
	struct et_obj pool[ET_OBJS];
	uint64_t violations;
	uint64_t sections;
	uint64_t destroys;
	uint64_t timeouts;
	uint32_t stop;
	uint32_t ready;
};

static inline uint64_t et_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline struct et_shared *et_setup(void)
{
	struct et_shared *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int w, i;

	if (s == MAP_FAILED)
		return NULL;
	memset(s, 0, sizeof(*s));
	for (w = 0; w < ET_WRITERS; w++)
		for (i = 0; i < ET_SLOTS_PER_W; i++)
			s->table[w * ET_SLOTS_PER_W + i] =
				(uint64_t)(w * ET_OBJS_PER_W + i);
	return s;
}

static inline int et_open(const char *name, int backend,
			  struct baton_epoch **d)
{
	int ret = baton_epoch_open(name, backend, d);

	if (ret)
		return ret;
	ret = baton_epoch_register(*d);
	if (ret < 0) {
		baton_epoch_close(*d);
		return ret;
	}
	return 0;
}

/* One reader process: exit code 0, or the step that failed. */
static inline int et_reader(struct et_shared *s, const char *name,
			    int backend)
{
	struct baton_epoch *d;
	uint64_t bad = 0, n = 0;
	int i, k;

	if (et_open(name, backend, &d))
		return 10;
	__atomic_fetch_add(&s->ready, 1, __ATOMIC_RELAXED);
	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		uint64_t snap[ET_SLOTS];

		/* The snapshot: every id once, then use them for a while. */
		baton_epoch_enter(d);
		for (i = 0; i < ET_SLOTS; i++)
			snap[i] = __atomic_load_n(&s->table[i],
						  __ATOMIC_ACQUIRE) % ET_OBJS;
		for (k = 0; k < 64; k++)
			for (i = 0; i < ET_SLOTS; i++)
				if (__atomic_load_n(&s->pool[snap[i]].poison,
						    __ATOMIC_RELAXED))
					bad++;
		/* Now and then a long section, across many cycles. */
		if ((n & 15) == 0)
			usleep(200);
		for (i = 0; i < ET_SLOTS; i++)
			if (__atomic_load_n(&s->pool[snap[i]].poison,
					    __ATOMIC_RELAXED))
				bad++;
		baton_epoch_exit(d);
		n++;
	}
	__atomic_fetch_add(&s->violations, bad, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->sections, n, __ATOMIC_RELAXED);
	baton_epoch_close(d);
	return 0;
}

/* One writer process owning slots and objects of index w. */
static inline int et_writer(struct et_shared *s, const char *name,
			    int backend, int w)
{
	uint64_t free_ids[ET_OBJS_PER_W], n = 0;
	struct baton_epoch *d;
	int nfree = 0, i, ret;
	unsigned int rnd = (unsigned int)w * 7919u + 1;

	if (et_open(name, backend, &d))
		return 20;
	for (i = ET_SLOTS_PER_W; i < ET_OBJS_PER_W; i++)
		free_ids[nfree++] = (uint64_t)(w * ET_OBJS_PER_W + i);
	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		int slot = w * ET_SLOTS_PER_W + (int)((rnd = rnd * 1103515245u +
						      12345u) >> 16) % ET_SLOTS_PER_W;
		uint64_t nid = free_ids[--nfree], old;

		__atomic_store_n(&s->pool[nid].poison, 0, __ATOMIC_RELAXED);
		/* Publish: the unpoisoned object before its id. */
		old = __atomic_exchange_n(&s->table[slot], nid,
					  __ATOMIC_ACQ_REL);
		do {
			ret = baton_epoch_destroy_sync(d, old, (uint64_t)slot,
						       5000000000LL, NULL);
			/* A full queue: let a cycle drain it, then retry. */
			if (ret == -ENOSPC)
				baton_epoch_collect(d, NULL, NULL);
		} while (ret == -ENOSPC);
		if (ret) {
			__atomic_fetch_add(&s->timeouts, 1, __ATOMIC_RELAXED);
			baton_epoch_close(d);
			return 21;
		}
		/* Torn down on our own thread, after the proof. */
		__atomic_store_n(&s->pool[old].poison, ET_POISON,
				 __ATOMIC_RELAXED);
		free_ids[nfree++] = old;
		n++;
	}
	__atomic_fetch_add(&s->destroys, n, __ATOMIC_RELAXED);
	baton_epoch_close(d);
	return 0;
}

/*
 * Run readers and writers for ms milliseconds; 0 or the first non-zero
 * child status (exit code, or 128 + signal).
 */
static inline int et_run(struct et_shared *s, const char *name, int backend,
			 int readers, long ms)
{
	pid_t pids[16];
	int n = 0, i, st, rc = 0;

	for (i = 0; i < readers + ET_WRITERS && n < 16; i++) {
		pid_t pid = fork();

		if (pid < 0)
			break;
		if (pid == 0)
			_exit(i < readers ? et_reader(s, name, backend) :
					    et_writer(s, name, backend,
						      i - readers));
		pids[n++] = pid;
	}
	usleep((useconds_t)ms * 1000);
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++) {
		if (waitpid(pids[i], &st, 0) < 0)
			return -1;
		if (!rc)
			rc = WIFEXITED(st) ? WEXITSTATUS(st) :
					     128 + WTERMSIG(st);
	}
	return n == readers + ET_WRITERS ? rc : -1;
}

#endif /* BATON_EPOCH_TORTURE_H */
