// SPDX-License-Identifier: GPL-2.0
/*
 * pool: buffer pools against the real module (Documentation/pool.rst).
 *
 * The ioctls: every geometry rule of BATON_IOC_POOL_CREATE (EINVAL,
 * E2BIG), names (EEXIST, ENOENT after unlink), the holder limit (EMFILE),
 * the feature bit. The library: every buffer of a class once, then
 * ENOMEM, then recovery; forged and stale handles touch nothing; buffers
 * handed from process to process through a ring, contents intact. Deaths:
 * kill -9 of a holder at random points of an allocate/fill/send/free loop,
 * 200 times, and after each every buffer is allocatable exactly once by
 * the survivor, within 100 ms. Decay: idle buffers' pages go back (the
 * data region's resident size falls) while a live buffer's contents stay.
 */
#include "common.h"
#include "pool_handoff.h"

#include <sched.h>

#define KILL_ROUNDS	200

static struct baton_pool_params small_pool(uint32_t count, uint32_t decay_ms)
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

static void raw_create_init(struct baton_pool_create *k, const char *name)
{
	memset(k, 0, sizeof(*k));
	k->size = sizeof(*k);
	k->mode = 0600;
	k->nr_classes = 1;
	k->max_holders = 4;
	k->classes[0].buf_shift = 12;
	k->classes[0].count = 16;
	snprintf(k->name, sizeof(k->name), "%s", name);
}

/* 0 or the errno of BATON_IOC_POOL_CREATE; closes the fd it gets. */
static int raw_create(const struct baton_pool_create *in)
{
	struct baton_pool_create k = *in;
	int dev = bt_dev_open(), ret;

	if (dev < 0)
		return errno;
	ret = ioctl(dev, BATON_IOC_POOL_CREATE, &k) ? errno : 0;
	if (!ret)
		close(k.out_fd);
	close(dev);
	return ret;
}

TEST(create_rejects_bad_geometry)
{
	struct baton_pool_create k;
	char name[64];

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "geo");
#define BAD(field_change, err) do {					\
		raw_create_init(&k, name);				\
		field_change;						\
		EXPECT_EQ(err, raw_create(&k));				\
	} while (0)
	BAD(k.flags = 1, EINVAL);
	BAD(k.reserved0 = 1, EINVAL);
	BAD(k.reserved[1] = 1, EINVAL);
	BAD(k.mode = 01000, EINVAL);
	BAD(k.nr_classes = 0, EINVAL);
	BAD(k.nr_classes = BATON_POOL_CLASSES_MAX + 1, EINVAL);
	BAD(k.classes[0].buf_shift = 11, EINVAL);
	BAD(k.classes[0].buf_shift = 23, EINVAL);
	BAD(k.classes[0].count = 0, EINVAL);
	BAD(k.classes[0].count = BATON_POOL_COUNT_MAX + 1, EINVAL);
	BAD(k.classes[1].count = 1, EINVAL);	/* past nr_classes */
	BAD((k.nr_classes = 2, k.classes[1].buf_shift = 12,
	     k.classes[1].count = 1), EINVAL);	/* same size twice */
	BAD((k.nr_classes = 2, k.classes[0].buf_shift = 13,
	     k.classes[1].buf_shift = 12, k.classes[1].count = 1), EINVAL);
	BAD(k.decay_ms = BATON_POOL_DECAY_MIN_MS - 1, EINVAL);
	BAD(k.decay_ms = BATON_POOL_DECAY_MAX_MS + 1, EINVAL);
	BAD(k.keep = 17, EINVAL);
	BAD(k.max_holders = 0, EINVAL);
	BAD(k.max_holders = BATON_POOL_HOLDERS_MAX + 1, EINVAL);
	BAD(k.name[0] = 0, EINVAL);
	BAD(k.name[0] = '/', EINVAL);
	/* 65536 buffers of each size from 128 KiB to 4 MiB: 504 GiB */
	BAD(({
		uint32_t i;

		k.nr_classes = 6;
		for (i = 0; i < 6; i++) {
			k.classes[i].buf_shift = 17 + i;
			k.classes[i].count = BATON_POOL_COUNT_MAX;
		}
	}), E2BIG);
#undef BAD
	raw_create_init(&k, name);
	ASSERT_EQ(0, raw_create(&k));
	/* Its only fd was closed; the name stays until unlinked. */
	EXPECT_EQ(EEXIST, raw_create(&k));
	EXPECT_EQ(0, baton_pool_unlink(name));
}

TEST(names_holders_and_feature_bit)
{
	struct baton_pool_params p = small_pool(16, 0);
	struct baton_pool *pool, *other[8];
	struct baton_version v = { .size = sizeof(v) };
	char name[64];
	int dev, i;

	BT_REQUIRE_DEV();
	dev = bt_dev_open();
	ASSERT_GE(dev, 0);
	ASSERT_EQ(0, ioctl(dev, BATON_IOC_VERSION, &v));
	EXPECT_TRUE(v.out_features & BATON_FEAT_POOL);
	close(dev);

	bt_make_name(name, sizeof(name), "names");
	p.max_holders = 3;
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	EXPECT_EQ(-EEXIST, baton_pool_create(name, &p, &other[0]));
	ASSERT_EQ(0, baton_pool_open(name, &other[0]));
	ASSERT_EQ(0, baton_pool_open(name, &other[1]));
	EXPECT_EQ(-EMFILE, baton_pool_open(name, &other[2]));
	baton_pool_close(other[1]);
	ASSERT_EQ(0, baton_pool_open(name, &other[1]));
	for (i = 0; i < 2; i++)
		baton_pool_close(other[i]);
	EXPECT_EQ(0, baton_pool_unlink(name));
	EXPECT_EQ(-ENOENT, baton_pool_open(name, &other[0]));
	EXPECT_EQ(-ENOENT, baton_pool_unlink(name));
	/* Unlinked but open: still usable. */
	{
		uint64_t h;

		ASSERT_EQ(0, baton_pool_alloc(pool, 100, &h));
		EXPECT_EQ(0, baton_pool_free(pool, h));
	}
	baton_pool_close(pool);
}

/* Allocate every buffer of class 0; returns how many, all distinct. */
static int alloc_all(struct baton_pool *pool, uint64_t *h, int max,
		     int *dups)
{
	static uint8_t seen[BATON_POOL_COUNT_MAX];
	int n = 0, rc;

	memset(seen, 0, sizeof(seen));
	*dups = 0;
	while (n < max && !(rc = baton_pool_alloc(pool, 4096, &h[n]))) {
		if (seen[BATON_POOL_H_INDEX(h[n])]++)
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

TEST(every_buffer_once_then_enomem_then_recovery)
{
	struct baton_pool_params p = small_pool(64, 0);
	struct baton_pool *pool;
	uint64_t h[80], again;
	int n, dups, i;
	char name[64];

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "all");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	n = alloc_all(pool, h, 80, &dups);
	EXPECT_EQ(64, n);
	EXPECT_EQ(0, dups);
	EXPECT_EQ(-ENOMEM, baton_pool_alloc(pool, 1, &again));
	EXPECT_EQ(-E2BIG, baton_pool_alloc(pool, (1 << 16) + 1, &again));
	for (i = 0; i < n; i++) {
		uint8_t *b = baton_pool_ptr(pool, h[i]);

		ASSERT_NE(NULL, b);
		EXPECT_EQ(4096, baton_pool_buf_size(pool, h[i]));
		memset(b, i, 4096);
	}
	for (i = 0; i < n; i++)
		EXPECT_EQ(i & 0xff, ((uint8_t *)baton_pool_ptr(pool, h[i]))[4095]);
	/* One back, one out: the same buffer, a new generation. */
	ASSERT_EQ(0, baton_pool_free(pool, h[7]));
	ASSERT_EQ(0, baton_pool_alloc(pool, 4096, &again));
	EXPECT_EQ(BATON_POOL_H_INDEX(h[7]), BATON_POOL_H_INDEX(again));
	EXPECT_NE(BATON_POOL_H_GEN(h[7]), BATON_POOL_H_GEN(again));
	h[7] = again;
	/* Twice round the whole class through the shared queue. */
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
	struct baton_pool_params p = small_pool(16, 0);
	struct baton_pool *pool, *peer;
	uint64_t h, mine;
	char name[64];
	uint8_t *b;

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "forged");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	ASSERT_EQ(0, baton_pool_open(name, &peer));
	ASSERT_EQ(0, baton_pool_alloc(pool, 10, &h));
	b = baton_pool_ptr(pool, h);
	ASSERT_NE(NULL, b);
	memset(b, 0x5a, 4096);

	/* Forged: reserved bits, a class or index past the pool, gen 0. */
	EXPECT_EQ(-EINVAL, baton_pool_free(pool, h | (1ULL << 27)));
	EXPECT_EQ(-EINVAL, baton_pool_free(pool, BATON_POOL_HANDLE(2, 0, 1)));
	EXPECT_EQ(-EINVAL, baton_pool_free(pool, BATON_POOL_HANDLE(0, 16, 1)));
	EXPECT_EQ(-EINVAL, baton_pool_free(pool, BATON_POOL_HANDLE(0, 0, 0)));
	EXPECT_EQ(NULL, baton_pool_ptr(pool, BATON_POOL_HANDLE(0, 1u << 23, 1)));
	EXPECT_EQ(-EINVAL, baton_pool_check(pool, 0));
	/* Another holder's buffer: not ours to free. */
	EXPECT_EQ(-ESTALE, baton_pool_free(peer, h));
	EXPECT_EQ(0, baton_pool_check(peer, h));
	/* A generation that is not the buffer's. */
	EXPECT_EQ(-ESTALE, baton_pool_free(pool, h + (1ULL << 32)));
	EXPECT_EQ(0x5a, b[100]);
	/* Freed: stale for every call, and a second free does nothing. */
	ASSERT_EQ(0, baton_pool_free(pool, h));
	EXPECT_EQ(-ESTALE, baton_pool_check(pool, h));
	EXPECT_EQ(-ESTALE, baton_pool_free(pool, h));
	ASSERT_EQ(0, baton_pool_alloc(pool, 10, &mine));
	EXPECT_EQ(-ESTALE, baton_pool_free(pool, h));
	EXPECT_EQ(0, baton_pool_check(pool, mine));
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
	if (baton_ring_open(rname, BATON_ROLE_CONSUMER, BATON_BACKEND_KMOD, &r))
		return 11;
	for (i = 0; i < n; i++) {
		uint64_t h, len;
		uint8_t *b;
		uint64_t j;

		if (baton_pool_recv(r, pool, &h, &len, 5 * BT_NSEC))
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

TEST(buffers_cross_processes_through_a_ring)
{
	struct baton_pool_params p = small_pool(32, 0);
	struct baton_ring_params rp = bt_params(64, 16);
	char pname[64], rname[64];
	struct baton_pool *pool;
	struct baton_ring *r;
	int i, n = 3000;
	pid_t pid;

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "xp");
	bt_make_name(rname, sizeof(rname), "xr");
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
		ASSERT_EQ(0, baton_pool_send(r, pool, h, size, 5 * BT_NSEC));
		/* Sent: ours no more. */
		EXPECT_EQ(-ESTALE, baton_pool_free(pool, h));
	}
	EXPECT_EQ(0, bt_wait_timeout(pid, 60000));
	baton_ring_close(r);
	baton_ring_unlink(rname, BATON_BACKEND_KMOD);
	{
		uint64_t hs[40];
		int dups;

		/* Every buffer back, each once. */
		EXPECT_EQ(32, alloc_all(pool, hs, 40, &dups));
		EXPECT_EQ(0, dups);
	}
	baton_pool_close(pool);
	baton_pool_unlink(pname);
}

/*
 * Child: allocate, fill, free at random until killed, or, with @stop,
 * until *@stop is set: then it frees all it holds and exits 0. Tells the
 * parent it has started through @go. Exit codes name the failing step.
 */
static void churn(const char *pname, struct bt_sync *go, unsigned int seed,
		  volatile uint32_t *stop)
{
	struct baton_pool *pool;
	uint64_t held[48];
	int n = 0;

	if (baton_pool_open(pname, &pool))
		_exit(20);
	bt_sync_post(go);
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

static pid_t start_churn(struct __test_metadata *_metadata, const char *pname,
			 unsigned int seed, volatile uint32_t *stop)
{
	struct bt_sync go;
	pid_t pid;

	ASSERT_EQ(0, bt_sync_init(&go));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		churn(pname, &go, seed, stop);
	ASSERT_EQ(0, bt_sync_wait(&go, 10000));
	bt_sync_close(&go);
	return pid;
}

/*
 * 200 rounds: a victim churns the class beside a survivor that runs all
 * along (so the survivor runs into whatever each death left: holes,
 * unreleased entries, UNSTICK); the victim is killed 0 to 3 ms in. Every
 * 25 rounds the survivor stops and gives its buffers back, and every
 * buffer must be allocatable again, each once; then a new survivor. How
 * long the buffers took to come back is reported, not asserted.
 */
#define CHECK_EVERY	25
/* A fixture only for its timeout: 200 rounds of forks on a debug kernel. */
FIXTURE(deaths) {
	int unused;
};

FIXTURE_SETUP(deaths)
{
}

FIXTURE_TEARDOWN(deaths)
{
}

TEST_F_TIMEOUT(deaths, kill9_at_any_point_loses_and_duplicates_nothing, 600)
{
	struct baton_pool_params p = small_pool(64, 0);
	struct baton_pool_info info;
	struct baton_pool *pool;
	volatile uint32_t *stop;
	uint64_t h[80];
	int round, worst_ms = 0;
	pid_t survivor = 0;
	char pname[64];

	BT_REQUIRE_DEV();
	stop = mmap(NULL, BT_PAGE, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, stop);
	bt_make_name(pname, sizeof(pname), "kill");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	for (round = 0; round < KILL_ROUNDS; round++) {
		int64_t t0;
		int dups, n, ms;
		pid_t victim;

		if (!survivor) {
			*stop = 0;
			survivor = start_churn(_metadata, pname,
					       round * 104729 + 3, stop);
		}
		victim = start_churn(_metadata, pname, round * 7919 + 1, NULL);
		usleep((round * 37) % 3000);
		kill(victim, SIGKILL);
		EXPECT_EQ(128 + SIGKILL, bt_wait(victim));
		if ((round + 1) % CHECK_EVERY)
			continue;
		__atomic_store_n(stop, 1, __ATOMIC_RELEASE);
		ASSERT_EQ(0, bt_wait_timeout(survivor, 30000))
			TH_LOG("round %d: the survivor", round);
		survivor = 0;
		/* Every buffer, each once (the repair work may be due). */
		t0 = bt_now_ns();
		for (;;) {
			n = alloc_all(pool, h, 80, &dups);
			ASSERT_EQ(0, dups) TH_LOG("round %d", round);
			if (n == 64 || bt_now_ns() - t0 > 10 * BT_NSEC)
				break;
			free_all(pool, h, n);
			bt_sleep_ms(1);
		}
		ms = (int)((bt_now_ns() - t0) / BT_MSEC);
		worst_ms = ms > worst_ms ? ms : worst_ms;
		ASSERT_EQ(64, n) TH_LOG("round %d: %d of 64 buffers", round, n);
		free_all(pool, h, n);
	}
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	EXPECT_GT(info.reclaimed, 0);
	EXPECT_EQ(0, info.bad_words);
	ksft_print_msg("%d kills: %llu buffers reclaimed, %llu queue entries repaired; every buffer back within %d ms at worst\n",
		       KILL_ROUNDS, (unsigned long long)info.reclaimed,
		       (unsigned long long)info.repaired, worst_ms);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
	munmap((void *)stop, BT_PAGE);
}

/*
 * kill -9 of a sender or a receiver at any point of a hand-off: nothing
 * lost, nothing twice (pool_handoff.h). The fixture is for the timeout.
 */
TEST_F_TIMEOUT(deaths, kill9_in_send_and_receive_loses_nothing, 600)
{
	struct baton_pool_params p = small_pool(PH_BUFFERS, 0);
	struct baton_ring_params rp = bt_params(PH_SLOTS, 16);
	char pname[64], rname[64];
	struct ph_report rep;
	struct baton_pool *pool;
	struct baton_ring *r;
	int rc;

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "hand");
	bt_make_name(rname, sizeof(rname), "handr");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	ASSERT_EQ(0, baton_ring_create(rname, &rp, BATON_ROLE_PRODUCER, &r));
	baton_ring_close(r);
	rc = ph_run(pool, pname, rname, BATON_BACKEND_KMOD, KILL_ROUNDS, &rep);
	ksft_print_msg("%d kills in hand-offs: %llu buffers received, %llu messages stale (sender died before its give)\n",
		       KILL_ROUNDS, (unsigned long long)rep.received,
		       (unsigned long long)rep.stale);
	EXPECT_EQ(0, rc) TH_LOG("round %d: %s (code %d, %d buffers)", rep.round,
				rep.what, rep.code, rep.buffers);
	EXPECT_LT(0U, rep.received);
	baton_ring_unlink(rname, BATON_BACKEND_KMOD);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
}

/* A sender that dies after sending: its buffer is the receiver's. */
TEST(sent_buffer_survives_its_senders_death)
{
	struct baton_pool_params p = small_pool(16, 0);
	struct baton_ring_params rp = bt_params(16, 16);
	char pname[64], rname[64];
	struct baton_pool_info info;
	struct baton_pool *pool;
	struct baton_ring *r;
	uint64_t h, len;
	struct bt_sync sent;
	uint8_t *b;
	pid_t pid;

	BT_REQUIRE_DEV();
	bt_make_name(pname, sizeof(pname), "sent");
	bt_make_name(rname, sizeof(rname), "sentr");
	ASSERT_EQ(0, baton_pool_create(pname, &p, &pool));
	ASSERT_EQ(0, baton_ring_create(rname, &rp, BATON_ROLE_CONSUMER, &r));
	ASSERT_EQ(0, bt_sync_init(&sent));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		struct baton_pool *cp;
		struct baton_ring *cr;
		uint64_t ch, other;

		if (baton_pool_open(pname, &cp) ||
		    baton_ring_open(rname, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_KMOD, &cr))
			_exit(30);
		/* One sent, one kept: the kept one must come back. */
		if (baton_pool_alloc(cp, 4096, &ch) ||
		    baton_pool_alloc(cp, 4096, &other))
			_exit(31);
		memset(baton_pool_ptr(cp, ch), 0x77, 4096);
		if (baton_pool_send(cr, cp, ch, 4096, BT_NSEC))
			_exit(32);
		bt_sync_post(&sent);
		pause();
		_exit(33);
	}
	ASSERT_EQ(0, bt_sync_wait(&sent, 10000));
	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, bt_wait(pid));
	bt_sync_close(&sent);
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	EXPECT_GE(info.reclaimed, 1);
	/* The message is still in the ring, and its buffer intact. */
	ASSERT_EQ(0, baton_pool_recv(r, pool, &h, &len, BT_NSEC));
	EXPECT_EQ(4096, len);
	b = baton_pool_ptr(pool, h);
	ASSERT_NE(NULL, b);
	EXPECT_EQ(0x77, b[0]);
	EXPECT_EQ(0x77, b[4095]);
	EXPECT_EQ(0, baton_pool_free(pool, h));
	baton_ring_close(r);
	baton_ring_unlink(rname, BATON_BACKEND_KMOD);
	baton_pool_close(pool);
	baton_pool_unlink(pname);
}

/* Resident pages of [addr, addr + len) in this process. */
static size_t resident_pages(void *addr, size_t len)
{
	size_t pages = len / BT_PAGE, i, n = 0;
	unsigned char *vec = malloc(pages);

	if (!vec || mincore(addr, len, vec)) {
		free(vec);
		return (size_t)-1;
	}
	for (i = 0; i < pages; i++)
		n += vec[i] & 1;
	free(vec);
	return n;
}

/*
 * Poll the pool's decay counter until it reaches @want or 10 s pass (a
 * generous bound: the test is about what decays, not when); the count.
 */
static uint64_t wait_decayed(struct baton_pool *pool, uint64_t want,
			     struct baton_pool_info *info)
{
	int64_t end = bt_now_ns() + 10 * BT_NSEC;

	do {
		bt_sleep_ms(10);
		if (baton_pool_info(pool, info))
			return 0;
	} while (info->decayed < want && bt_now_ns() < end);
	return info->decayed;
}

/* keep: that many buffers of each class stay resident however idle. */
TEST(decay_leaves_keep_buffers_resident)
{
	struct baton_pool_params p = small_pool(64, 20);
	struct baton_pool_info info;
	struct baton_pool *pool, *burst;
	uint64_t h[80];
	char name[64];
	int n, dups, i;

	BT_REQUIRE_DEV();
	p.keep = 8;	/* at most every class's count (class 1 has 8) */
	bt_make_name(name, sizeof(name), "keep");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	ASSERT_EQ(0, baton_pool_open(name, &burst));
	n = alloc_all(burst, h, 80, &dups);
	ASSERT_EQ(64, n);
	for (i = 0; i < n; i++)
		memset(baton_pool_ptr(burst, h[i]), 0xcd, 4096);
	free_all(burst, h, n);
	baton_pool_close(burst);
	ASSERT_EQ(56, wait_decayed(pool, 56, &info));
	/* Several more windows: still 56, the other 8 are kept. */
	bt_sleep_ms(200);
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	EXPECT_EQ(56, info.decayed);
	baton_pool_close(pool);
	baton_pool_unlink(name);
}

TEST(decay_gives_idle_pages_back_and_keeps_live_ones)
{
	struct baton_pool_params p = small_pool(64, 50);
	struct baton_pool *pool, *burst;
	struct baton_pool_info info;
	uint64_t h[80], live;
	int64_t burst_end;
	size_t before, after;
	uint8_t *lp, *base;
	int n, dups, i;
	char name[64];

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "decay");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	/* The live buffer: class 1 (64 KiB), in use all along. */
	ASSERT_EQ(0, baton_pool_alloc(pool, 65536, &live));
	lp = baton_pool_ptr(pool, live);
	memset(lp, 0xab, 65536);
	/*
	 * A burst of class 0 from a second holder, which then closes: its
	 * magazine goes back too, so all of class 0 is on the queue.
	 */
	ASSERT_EQ(0, baton_pool_open(name, &burst));
	n = alloc_all(burst, h, 80, &dups);
	ASSERT_EQ(64, n);
	for (i = 0; i < n; i++)
		memset(baton_pool_ptr(burst, h[i]), 0xcd, 4096);
	free_all(burst, h, n);
	baton_pool_close(burst);
	burst_end = bt_now_ns();
	/* mincore() of a shared file mapping: the pool's page cache. */
	base = baton_pool_ptr(pool, BATON_POOL_HANDLE(0, 0, 1));
	before = resident_pages(base, 64 * 4096);
	EXPECT_EQ(64, before);
	/* Idle: the timer gives them back (decay_ms 50, window ~50 ms). */
	ASSERT_EQ(64, wait_decayed(pool, 64, &info));
	ksft_print_msg("64 idle buffers decayed %lld ms after the burst\n",
		       (long long)((bt_now_ns() - burst_end) / BT_MSEC));
	EXPECT_EQ(64 * 4096, info.decayed_bytes);
	after = resident_pages(base, 64 * 4096);
	EXPECT_EQ(0, after);
	EXPECT_EQ(16, resident_pages(lp, 65536));
	for (i = 0; i < 65536; i++)
		ASSERT_EQ(0xab, lp[i]);
	/* Decayed buffers come back zeroed, on first touch, no syscall. */
	n = alloc_all(pool, h, 80, &dups);
	EXPECT_EQ(64, n);
	for (i = 0; i < n; i++)
		EXPECT_EQ(0, ((uint8_t *)baton_pool_ptr(pool, h[i]))[100]);
	free_all(pool, h, n);
	baton_pool_free(pool, live);
	baton_pool_close(pool);
	baton_pool_unlink(name);
}

/*
 * Large buffers a holder freed are not hoarded where the decay cannot
 * reach them: a magazine keeps at most 1 MiB of a class, so of 16 frames
 * of 1 MiB a stage freed, all 16 decay while it keeps its handle open.
 */
TEST(decay_reaches_large_buffers_a_live_holder_freed)
{
	struct baton_pool_params p;
	struct baton_pool_info info;
	struct baton_pool *pool;
	uint64_t h[16];
	char name[64];
	int i;

	BT_REQUIRE_DEV();
	memset(&p, 0, sizeof(p));
	p.nr_classes = 1;
	p.decay_ms = 20;
	p.classes[0].buf_shift = 20;
	p.classes[0].count = 64;
	bt_make_name(name, sizeof(name), "big");
	ASSERT_EQ(0, baton_pool_create(name, &p, &pool));
	for (i = 0; i < 16; i++) {
		ASSERT_EQ(0, baton_pool_alloc(pool, 1 << 20, &h[i]));
		memset(baton_pool_ptr(pool, h[i]), 0xee, 1 << 20);
	}
	for (i = 0; i < 16; i++)
		ASSERT_EQ(0, baton_pool_free(pool, h[i]));
	ASSERT_EQ(0, baton_pool_info(pool, &info));
	EXPECT_EQ(0U, info.classes[0].cached);
	EXPECT_EQ(16U, wait_decayed(pool, 16, &info));
	EXPECT_EQ(16ULL << 20, info.decayed_bytes);
	baton_pool_close(pool);
	baton_pool_unlink(name);
}

TEST_HARNESS_MAIN
