// SPDX-License-Identifier: MIT
/*
 * Buffer pools on the memfd backend (lib/pool_memfd.c), between real
 * processes on this host: the pool file and its geometry rules, every
 * buffer once then ENOMEM then recovery, forged and stale handles, buffers
 * through a ring between processes, a scribbled header, and what the
 * holders do for each other without a module: a holder killed at random
 * points of its alloc/fill/free loop loses and duplicates nothing (its
 * buffers come back when a survivor next looks), a sent buffer survives
 * its sender, and idle pages go back from the slow paths (decay).
 */
#include "kselftest_harness.h"
#include "common.h"
#include "../pool_handoff.h"

#include <sched.h>
#include <sys/stat.h>

#define KILL_ROUNDS	200
#define SENT_MAGIC	0x77

static struct baton_pool_params two_classes(uint32_t count, uint32_t decay_ms)
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

static void pool_file(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "/dev/shm/baton-pool.%s", name);
}

/* Allocate class 0 until ENOMEM; how many, and how many indices twice. */
static int alloc_all(struct baton_pool *pool, uint64_t *h, int max, int *dups)
{
	uint8_t seen[1024];
	int n = 0;

	memset(seen, 0, sizeof(seen));
	*dups = 0;
	while (n < max && !baton_pool_alloc(pool, 4096, &h[n])) {
		if (seen[BATON_POOL_H_INDEX(h[n]) % 1024]++)
			(*dups)++;
		n++;
	}
	return n;
}

static void free_all(struct baton_pool *pool, uint64_t *h, int n)
{
	while (n--)
		baton_pool_free(pool, h[n]);
}

TEST(null_handles_are_einval)
{
	uint64_t h = 0;
	struct baton_pool_info info;

	EXPECT_EQ(-EINVAL, baton_pool_alloc(NULL, 64, &h));
	EXPECT_EQ(-EINVAL, baton_pool_free(NULL, BATON_POOL_HANDLE(0, 0, 1)));
	EXPECT_EQ(-EINVAL, baton_pool_give(NULL, BATON_POOL_HANDLE(0, 0, 1)));
	EXPECT_EQ(-EINVAL, baton_pool_take(NULL, BATON_POOL_HANDLE(0, 0, 1)));
	EXPECT_EQ(-EINVAL, baton_pool_info(NULL, &info));
	EXPECT_EQ(-EINVAL, baton_pool_check(NULL, BATON_POOL_HANDLE(0, 0, 1)));
	EXPECT_EQ(NULL, baton_pool_ptr(NULL, BATON_POOL_HANDLE(0, 0, 1)));
	EXPECT_EQ((size_t)0, baton_pool_buf_size(NULL, BATON_POOL_HANDLE(0, 0, 1)));
	baton_pool_close(NULL);
}

/* The module's geometry rules, the same errno on memfd. */
TEST(create_rejects_bad_geometry_and_names)
{
	struct baton_pool_params p = two_classes(16, 0);
	struct baton_pool *pool = NULL;
	char name[64];

	force_memfd();
	ring_name(name, sizeof(name), "geo");
	p.classes[1].buf_shift = 12;			/* not increasing */
	EXPECT_EQ(-EINVAL, baton_pool_create(name, &p, &pool));
	p = two_classes(16, 0);
	p.classes[0].buf_shift = 11;			/* below 4 KiB */
	EXPECT_EQ(-EINVAL, baton_pool_create(name, &p, &pool));
	p = two_classes(16, 0);
	p.classes[1].buf_shift = 23;			/* above 4 MiB */
	EXPECT_EQ(-EINVAL, baton_pool_create(name, &p, &pool));
	p = two_classes(0, 0);				/* empty class */
	EXPECT_EQ(-EINVAL, baton_pool_create(name, &p, &pool));
	p = two_classes(BATON_POOL_COUNT_MAX + 1, 0);
	EXPECT_EQ(-EINVAL, baton_pool_create(name, &p, &pool));
	p = two_classes(16, 5);				/* decay too short */
	EXPECT_EQ(-EINVAL, baton_pool_create(name, &p, &pool));
	p = two_classes(16, 0);
	p.keep = 9;					/* class 1 has 8 */
	EXPECT_EQ(-EINVAL, baton_pool_create(name, &p, &pool));
	p = two_classes(16, 0);
	p.max_holders = BATON_POOL_HOLDERS_MAX + 1;
	EXPECT_EQ(-EINVAL, baton_pool_create(name, &p, &pool));
	p = two_classes(16, 0);
	p.mode = 01777;
	EXPECT_EQ(-EINVAL, baton_pool_create(name, &p, &pool));
	p = two_classes(BATON_POOL_COUNT_MAX, 0);	/* 128 + 256 GiB */
	p.classes[0].buf_shift = 21;
	p.classes[1].buf_shift = 22;
	p.classes[1].count = BATON_POOL_COUNT_MAX;
	EXPECT_EQ(-E2BIG, baton_pool_create(name, &p, &pool));
	p.classes[1].count = 1;			/* fits the rules, not /dev/shm */
	EXPECT_EQ(-ENOSPC, baton_pool_create(name, &p, &pool));
	p = two_classes(16, 0);
	EXPECT_EQ(-EINVAL, baton_pool_create("a/b", &p, &pool));
	EXPECT_EQ(-EINVAL, baton_pool_create("", &p, &pool));
	EXPECT_EQ(NULL, pool);
	EXPECT_EQ(-ENOENT, baton_pool_open(name, &pool));
	EXPECT_EQ(-ENOENT, baton_pool_unlink(name));
}

TEST(names_modes_and_holders)
{
	struct baton_pool_params p = two_classes(16, 0);
	struct baton_pool *pool, *more[4];
	struct baton_pool_info info;
	char name[64], path[128];
	struct stat st;
	int i;

	force_memfd();
	ring_name(name, sizeof(name), "names");
	p.mode = 0640;
	p.max_holders = 3;
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	EXPECT_EQ(-EEXIST, baton_pool_create(name, &p, &more[0]));
	pool_file(path, sizeof(path), name);
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_EQ(0640U, st.st_mode & 0777);
	/* Three holder indices: the fourth open is EMFILE. */
	ASSERT_EQ(0, baton_pool_open(name, &more[0]));
	ASSERT_EQ(0, baton_pool_open(name, &more[1]));
	EXPECT_EQ(-EMFILE, baton_pool_open(name, &more[2]));
	ASSERT_EQ(0, baton_pool_info(more[1], &info));
	EXPECT_EQ(2U, info.holder);
	/* A closed holder's index is free again. */
	baton_pool_close(more[0]);
	ASSERT_EQ(0, baton_pool_open(name, &more[0]));
	ASSERT_EQ(0, baton_pool_info(more[0], &info));
	EXPECT_EQ(1U, info.holder);
	/* Unlinked: open handles keep working, the name is gone. */
	ASSERT_EQ(0, baton_pool_unlink(name));
	EXPECT_EQ(-ENOENT, baton_pool_open(name, &more[2]));
	for (i = 0; i < 2; i++) {
		uint64_t h;

		ASSERT_EQ(0, baton_pool_alloc(more[i], 4096, &h));
		EXPECT_EQ(0, baton_pool_free(more[i], h));
		baton_pool_close(more[i]);
	}
	baton_pool_close(pool);
}

/* A scribbled or truncated header: EPROTO at open, nothing mapped. */
TEST(scribbled_header_is_eproto)
{
	struct baton_pool_params p = two_classes(16, 0);
	struct baton_pool *pool, *other = NULL;
	char name[64], path[128];
	uint32_t bad = 12345;
	int fd;

	force_memfd();
	ring_name(name, sizeof(name), "scrib");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	/*
	 * Closed first: a file cut short under a live holder's mappings is
	 * SIGBUS for it, as for any shared file (memfd-backend.rst).
	 */
	baton_pool_close(pool);
	pool_file(path, sizeof(path), name);
	fd = open(path, O_RDWR);
	ASSERT_LE(0, fd);
	/* classes[0].qcap: no longer the layout the classes give. */
	ASSERT_EQ(4, pwrite(fd, &bad, 4, offsetof(struct baton_pool_hdr, classes) +
			    offsetof(struct baton_pool_class_layout, qcap)));
	EXPECT_EQ(-EPROTO, baton_pool_open(name, &other));
	ASSERT_EQ(0, ftruncate(fd, 4096));
	EXPECT_EQ(-EPROTO, baton_pool_open(name, &other));
	EXPECT_EQ(NULL, other);
	close(fd);
	baton_pool_unlink(name);
}

TEST(every_buffer_once_then_enomem_then_recovery)
{
	struct baton_pool_params p = two_classes(64, 0);
	struct baton_pool *pool;
	uint64_t h[80], again;
	int n, dups, i;
	char name[64];

	force_memfd();
	ring_name(name, sizeof(name), "all");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	n = alloc_all(pool, h, 80, &dups);
	EXPECT_EQ(64, n);
	EXPECT_EQ(0, dups);
	EXPECT_EQ(-ENOMEM, baton_pool_alloc(pool, 1, &again));
	EXPECT_EQ(-E2BIG, baton_pool_alloc(pool, (1 << 16) + 1, &again));
	for (i = 0; i < n; i++)
		memset(baton_pool_ptr(pool, h[i]), i, 4096);
	for (i = 0; i < n; i++)
		EXPECT_EQ(i & 0xff, ((uint8_t *)baton_pool_ptr(pool, h[i]))[4095]);
	ASSERT_EQ(0, baton_pool_free(pool, h[7]));
	ASSERT_EQ(0, baton_pool_alloc(pool, 4096, &again));
	EXPECT_EQ(BATON_POOL_H_INDEX(h[7]), BATON_POOL_H_INDEX(again));
	EXPECT_NE(BATON_POOL_H_GEN(h[7]), BATON_POOL_H_GEN(again));
	h[7] = again;
	for (i = 0; i < 2; i++) {
		free_all(pool, h, n);
		n = alloc_all(pool, h, 80, &dups);
		EXPECT_EQ(64, n);
		EXPECT_EQ(0, dups);
	}
	free_all(pool, h, n);
	baton_pool_close(pool);
	baton_pool_unlink(name);
}

TEST(forged_and_stale_handles_touch_nothing)
{
	struct baton_pool_params p = two_classes(16, 0);
	struct baton_pool *pool, *peer;
	uint64_t h, mine;
	char name[64];
	uint8_t *b;

	force_memfd();
	ring_name(name, sizeof(name), "forged");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	ASSERT_EQ(0, baton_pool_open(name, &peer));
	ASSERT_EQ(0, baton_pool_alloc(pool, 10, &h));
	b = baton_pool_ptr(pool, h);
	ASSERT_NE(NULL, b);
	memset(b, 0x5a, 4096);
	EXPECT_EQ(-EINVAL, baton_pool_free(pool, h | (1ULL << 27)));
	EXPECT_EQ(-EINVAL, baton_pool_free(pool, BATON_POOL_HANDLE(2, 0, 1)));
	EXPECT_EQ(-EINVAL, baton_pool_free(pool, BATON_POOL_HANDLE(0, 16, 1)));
	EXPECT_EQ(-EINVAL, baton_pool_free(pool, BATON_POOL_HANDLE(0, 0, 0)));
	EXPECT_EQ(-ESTALE, baton_pool_free(peer, h));
	EXPECT_EQ(-ESTALE, baton_pool_free(pool, h + (1ULL << 32)));
	EXPECT_EQ(0x5a, b[100]);
	ASSERT_EQ(0, baton_pool_free(pool, h));
	EXPECT_EQ(-ESTALE, baton_pool_check(pool, h));
	EXPECT_EQ(-ESTALE, baton_pool_free(pool, h));
	ASSERT_EQ(0, baton_pool_alloc(pool, 10, &mine));
	EXPECT_EQ(-ESTALE, baton_pool_free(pool, h));
	EXPECT_EQ(0, baton_pool_free(pool, mine));
	baton_pool_close(peer);
	baton_pool_close(pool);
	baton_pool_unlink(name);
}

/* Child: take N buffers from the ring, check each, free it. */
static int recv_and_check(const char *pname, const char *rname, int n)
{
	struct baton_pool *pool;
	struct baton_ring *r;
	int i;

	if (baton_pool_open(pname, &pool))
		return 10;
	if (baton_ring_open(rname, BATON_ROLE_CONSUMER, BATON_BACKEND_MEMFD, &r))
		return 11;
	for (i = 0; i < n; i++) {
		uint64_t h, len, j;
		uint8_t *b;

		if (baton_pool_recv(r, pool, &h, &len, OP_TIMEOUT_NS))
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

static struct baton_ring_params ring16(void)
{
	struct baton_ring_params rp;

	memset(&rp, 0, sizeof(rp));
	rp.kind = BATON_RING_SPSC;
	rp.slot_count = 64;
	rp.slot_size = 16;
	rp.backend = BATON_BACKEND_MEMFD;
	return rp;
}

TEST(buffers_cross_processes_through_a_ring)
{
	struct baton_pool_params p = two_classes(32, 0);
	struct baton_ring_params rp = ring16();
	char pname[64], rname[64];
	struct baton_pool *pool;
	struct baton_ring *r;
	int i, n = 3000, dups;
	uint64_t hs[40];
	pid_t pid;

	force_memfd();
	ring_name(pname, sizeof(pname), "xp");
	ring_name(rname, sizeof(rname), "xr");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	ASSERT_EQ(0, baton_ring_create(rname, &rp, BATON_ROLE_PRODUCER, &r));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(recv_and_check(pname, rname, n));
	for (i = 0; i < n; i++) {
		size_t size = i % 3 ? 3000 : 60000;
		uint64_t h, j;
		uint8_t *b;
		int rc;

		while ((rc = baton_pool_alloc(pool, size, &h)) == -ENOMEM)
			sched_yield();
		ASSERT_EQ(0, rc);
		b = baton_pool_ptr(pool, h);
		for (j = 0; j < size; j += 511)
			b[j] = (uint8_t)(i + j);
		ASSERT_EQ(0, baton_pool_send(r, pool, h, size, OP_TIMEOUT_NS));
		EXPECT_EQ(-ESTALE, baton_pool_free(pool, h));
	}
	EXPECT_EQ(0, wait_child(pid));
	baton_ring_close(r);
	baton_ring_unlink(rname, BATON_BACKEND_MEMFD);
	/* Every buffer back (the child's magazine at its close), each once. */
	EXPECT_EQ(32, alloc_all(pool, hs, 40, &dups));
	EXPECT_EQ(0, dups);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
}

/*
 * Child: allocate, fill, free at random until killed, or until *@stop:
 * then it frees what it holds and exits 0. Posts @go once it holds a
 * holder index. Exit codes name the failing step.
 */
static void churn(const char *pname, volatile uint32_t *go, unsigned int seed,
		  volatile uint32_t *stop)
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

static pid_t start_churn(const char *pname, volatile uint32_t *go,
			 unsigned int seed, volatile uint32_t *stop)
{
	uint64_t end = now_ns() + 10ULL * 1000000000;
	pid_t pid;

	__atomic_store_n(go, 0, __ATOMIC_RELEASE);
	pid = fork();
	if (!pid)
		churn(pname, go, seed, stop);
	while (pid > 0 && !__atomic_load_n(go, __ATOMIC_ACQUIRE) &&
	       now_ns() < end)
		usleep(100);
	return pid;
}

/*
 * 200 rounds: a victim churns class 0 beside a survivor that runs all
 * along, and is killed 0 to 3 ms in. Every 25 rounds the survivor stops
 * and frees what it holds, and every buffer must be allocatable again,
 * each once; how long that took (the repair happens when someone looks)
 * is printed, not asserted.
 */
TEST(kill9_at_any_point_loses_and_duplicates_nothing)
{
	struct baton_pool_params p = two_classes(64, 0);
	volatile uint32_t *shared;
	struct baton_pool_info info;
	struct baton_pool *pool;
	int round, worst_ms = 0;
	pid_t survivor = 0;
	uint64_t h[80];
	char pname[64];

	if (UNDER_TSAN)
		SKIP(return, "fork and kill: not under TSan");
	force_memfd();
	shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, shared);
	ring_name(pname, sizeof(pname), "kill");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	for (round = 0; round < KILL_ROUNDS; round++) {
		int dups, n, ms;
		uint64_t t0;
		pid_t victim;

		if (!survivor) {
			shared[0] = 0;
			survivor = start_churn(pname, &shared[1],
					       round * 104729 + 3, &shared[0]);
			ASSERT_LT(0, survivor);
		}
		victim = start_churn(pname, &shared[2], round * 7919 + 1, NULL);
		ASSERT_LT(0, victim);
		usleep((round * 37) % 3000);
		kill(victim, SIGKILL);
		EXPECT_EQ(128 + SIGKILL, wait_child(victim));
		if ((round + 1) % 25)
			continue;
		__atomic_store_n(&shared[0], 1, __ATOMIC_RELEASE);
		ASSERT_EQ(0, wait_child(survivor)) TH_LOG("round %d", round);
		survivor = 0;
		t0 = now_ns();
		for (;;) {
			n = alloc_all(pool, h, 80, &dups);
			ASSERT_EQ(0, dups) TH_LOG("round %d", round);
			if (n == 64 || now_ns() - t0 > 10ULL * 1000000000)
				break;
			free_all(pool, h, n);
			usleep(1000);
		}
		ms = (int)((now_ns() - t0) / 1000000);
		worst_ms = ms > worst_ms ? ms : worst_ms;
		ASSERT_EQ(64, n) TH_LOG("round %d: %d of 64 buffers", round, n);
		free_all(pool, h, n);
	}
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	EXPECT_LT(0U, info.reclaimed);
	EXPECT_EQ(0U, info.bad_words);
	ksft_print_msg("%d kills: %llu buffers reclaimed, %llu queue entries repaired; every buffer back within %d ms at worst\n",
		       KILL_ROUNDS, (unsigned long long)info.reclaimed,
		       (unsigned long long)info.repaired, worst_ms);
	fflush(stdout);		/* the harness's child ends with _exit() */
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	munmap((void *)shared, 4096);
}

/* A sender that dies after sending: its buffer is the receiver's. */
TEST(sent_buffer_survives_its_senders_death)
{
	struct baton_pool_params p = two_classes(16, 0);
	struct baton_ring_params rp = ring16();
	char pname[64], rname[64];
	struct baton_pool_info info;
	volatile uint32_t *sent;
	struct baton_pool *pool;
	struct baton_ring *r;
	uint64_t h, len, hs[20];
	int dups;
	pid_t pid;

	if (UNDER_TSAN)
		SKIP(return, "fork and kill: not under TSan");
	force_memfd();
	ring_name(pname, sizeof(pname), "sent");
	ring_name(rname, sizeof(rname), "sentr");
	sent = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sent);
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	ASSERT_EQ(0, baton_ring_create(rname, &rp, BATON_ROLE_CONSUMER, &r));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		struct baton_pool *cp;
		struct baton_ring *cr;
		uint64_t ch, other;

		if (baton_pool_open(pname, &cp) ||
		    baton_ring_open(rname, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_MEMFD, &cr))
			_exit(30);
		if (baton_pool_alloc(cp, 4096, &ch) ||
		    baton_pool_alloc(cp, 4096, &other))
			_exit(31);
		memset(baton_pool_ptr(cp, ch), SENT_MAGIC, 4096);
		if (baton_pool_send(cr, cp, ch, 4096, OP_TIMEOUT_NS))
			_exit(32);
		__atomic_store_n(sent, 1, __ATOMIC_RELEASE);
		pause();
		_exit(33);
	}
	while (!__atomic_load_n(sent, __ATOMIC_ACQUIRE))
		usleep(100);
	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, wait_child(pid));
	ASSERT_EQ(0, baton_pool_recv(r, pool, &h, &len, OP_TIMEOUT_NS));
	EXPECT_EQ(4096U, len);
	EXPECT_EQ(SENT_MAGIC, ((uint8_t *)baton_pool_ptr(pool, h))[0]);
	EXPECT_EQ(SENT_MAGIC, ((uint8_t *)baton_pool_ptr(pool, h))[4095]);
	EXPECT_EQ(0, baton_pool_free(pool, h));
	/* The kept one (and the dead magazine) come back: all 16, once. */
	EXPECT_EQ(16, alloc_all(pool, hs, 20, &dups));
	EXPECT_EQ(0, dups);
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	EXPECT_LE(1U, info.reclaimed);
	baton_ring_close(r);
	baton_ring_unlink(rname, BATON_BACKEND_MEMFD);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	munmap((void *)sent, 4096);
}

/*
 * kill -9 of a sender or a receiver at any point of a hand-off: nothing
 * lost, nothing twice (selftests/pool_handoff.h).
 */
TEST(kill9_in_send_and_receive_loses_nothing)
{
	struct baton_pool_params p = two_classes(PH_BUFFERS, 0);
	struct baton_ring_params rp = ring16();
	char pname[64], rname[64];
	struct ph_report rep;
	struct baton_pool *pool;
	struct baton_ring *r;
	int rc;

	if (UNDER_TSAN)
		SKIP(return, "fork and kill: not under TSan");
	force_memfd();
	ring_name(pname, sizeof(pname), "hand");
	ring_name(rname, sizeof(rname), "handr");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	ASSERT_EQ(0, baton_ring_create(rname, &rp, BATON_ROLE_PRODUCER, &r));
	baton_ring_close(r);
	rc = ph_run(pool, pname, rname, BATON_BACKEND_MEMFD, 200, &rep);
	ksft_print_msg("200 kills in hand-offs: %llu buffers received, %llu messages stale (sender died before its give)\n",
		       (unsigned long long)rep.received,
		       (unsigned long long)rep.stale);
	fflush(stdout);
	EXPECT_EQ(0, rc) TH_LOG("round %d: %s (code %d, %d buffers)", rep.round,
				rep.what, rep.code, rep.buffers);
	EXPECT_LT(0U, rep.received);
	baton_ring_unlink(rname, BATON_BACKEND_MEMFD);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
}

/* Bytes the pool file holds in memory now. */
static uint64_t file_bytes(const char *name)
{
	char path[128];
	struct stat st;

	pool_file(path, sizeof(path), name);
	return stat(path, &st) ? 0 : (uint64_t)st.st_blocks * 512;
}

/*
 * Decay from the slow paths: after a burst of class 0 and an idle spell,
 * a holder that keeps freeing class 1 (no magazine: every free is a slow
 * path) has class 0's pages given back, oldest first, except @keep of
 * them, while a live buffer keeps its contents; the decayed ones come
 * back zeroed.
 */
TEST(decay_from_the_slow_paths_keeps_live_and_kept_buffers)
{
	struct baton_pool_params p = two_classes(64, 20);
	struct baton_pool *pool, *burst;
	struct baton_pool_info info;
	uint64_t h[80], live, tick, before, after;
	int n, dups, i, rounds = 0;
	char name[64];
	uint8_t *lp;

	force_memfd();
	p.keep = 8;
	ring_name(name, sizeof(name), "decay");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	ASSERT_EQ(0, baton_pool_alloc(pool, 65536, &live));
	lp = baton_pool_ptr(pool, live);
	memset(lp, 0xab, 65536);
	ASSERT_EQ(0, baton_pool_open(name, &burst));
	n = alloc_all(burst, h, 80, &dups);
	ASSERT_EQ(64, n);
	for (i = 0; i < n; i++)
		memset(baton_pool_ptr(burst, h[i]), 0xcd, 4096);
	free_all(burst, h, n);
	baton_pool_close(burst);
	before = file_bytes(name);
	/* Idle: nothing runs on memfd while every holder sleeps. */
	usleep(100 * 1000);
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	EXPECT_EQ(0U, info.decayed);
	/* Slow paths from now on: decay runs every decay_ms / 4. */
	do {
		ASSERT_EQ(0, baton_pool_alloc(pool, 65536, &tick));
		ASSERT_EQ(0, baton_pool_free(pool, tick));
		usleep(2000);
		ASSERT_EQ(0, baton_pool_info(pool, &info));
	} while (info.decayed < 56 && ++rounds < 5000);
	EXPECT_EQ(56U, info.decayed);
	usleep(100 * 1000);
	ASSERT_EQ(0, baton_pool_alloc(pool, 65536, &tick));
	ASSERT_EQ(0, baton_pool_free(pool, tick));
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	EXPECT_EQ(56U, info.decayed);		/* the other 8 are kept */
	EXPECT_EQ(56U * 4096, info.decayed_bytes);
	after = file_bytes(name);
	EXPECT_EQ(56U * 4096, before - after);
	for (i = 0; i < 65536; i++)
		ASSERT_EQ(0xab, lp[i]);
	n = alloc_all(pool, h, 80, &dups);
	EXPECT_EQ(64, n);
	for (i = 0, dups = 0; i < n; i++)
		dups += ((uint8_t *)baton_pool_ptr(pool, h[i]))[100] == 0;
	EXPECT_EQ(56, dups);			/* zeroed: the decayed ones */
	free_all(pool, h, n);
	baton_pool_free(pool, live);
	baton_pool_close(pool);
	baton_pool_unlink(name);
}

TEST_HARNESS_MAIN
