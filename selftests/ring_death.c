// SPDX-License-Identifier: GPL-2.0
/*
 * ring_death: what the survivor sees when its peer goes away.
 *
 * Owns the peer-death contract: the last release of a role (every fd
 * closed and every mapping gone; process death does both) sets
 * BATON_STATE_*_GONE, bumps *_deaths and wakes the other side; a new
 * attach clears the bit. A parked producer then gets EPIPE, and so does
 * every later park; a consumer drains exactly what was published, then
 * sees end of stream (EPIPE), with no loss and no duplicate, even when the
 * producer was SIGKILLed mid-stream. A mapping alone keeps a role
 * attached.
 */
#include "common.h"

FIXTURE(death) {
	int dev;
	char name[BATON_NAME_MAX];
};

FIXTURE_SETUP(death)
{
	BT_REQUIRE_DEV();
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	bt_make_name(self->name, sizeof(self->name), "death");
}

FIXTURE_TEARDOWN(death)
{
	if (self->dev > 0) {
		_test_unlink(self->dev, self->name);
		close(self->dev);
	}
}

static uint32_t hdr_state(const struct baton_ring_hdr *h)
{
	return __atomic_load_n(&h->state, __ATOMIC_ACQUIRE);
}

TEST_F(death, consumer_close_gives_parked_producer_epipe)
{
	struct baton_ring_params p = bt_params(2, 8);
	struct baton_ring_stats st;
	struct baton_ring *pr;
	struct bt_sync go;
	uint64_t v = 0;
	int64_t t0;
	pid_t pid;
	int rc;

	ASSERT_EQ(0, bt_sync_init(&go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct baton_ring_offsets off;
		volatile uint8_t *ppg;
		struct baton_ring *c;

		if (bt_sync_wait(&go, 20000))
			_exit(2);
		if (baton_ring_open(self->name, BATON_ROLE_CONSUMER,
				    BATON_BACKEND_KMOD, &c))
			_exit(3);
		ppg = bt_map_ro_by_fd(baton_ring_fd(c), BT_PROD, &off);
		if (!ppg)
			_exit(4);
		/* close only once the producer is parked on the full ring */
		if (bt_wait_flag(BT_WORD(ppg, off.prod_waiting, uint32_t),
				 20000))
			_exit(5);
		if (bt_wait_sleeping(getppid(), 20000))
			_exit(25);
		munmap((void *)ppg, off.prod_size);
		baton_ring_close(c);
		bt_sleep_ms(2000);	/* alive: the close did it, not exit */
		_exit(0);
	}
	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_PRODUCER,
				       &pr));
	ASSERT_EQ(0, baton_spsc_try_push(pr, &v, sizeof(v)));
	ASSERT_EQ(0, baton_spsc_try_push(pr, &v, sizeof(v)));
	ASSERT_EQ(0, bt_sync_post(&go));
	t0 = bt_now_ns();
	rc = baton_spsc_push(pr, &v, sizeof(v), 20 * BT_NSEC);
	EXPECT_EQ(-EPIPE, rc);
	EXPECT_GT(t0 + 15 * BT_NSEC, bt_now_ns());
	EXPECT_TRUE(baton_ring_peer_gone(pr));
	EXPECT_TRUE(hdr_state(pr->hdr) & BATON_STATE_CONSUMER_GONE);
	EXPECT_FALSE(hdr_state(pr->hdr) & BATON_STATE_PRODUCER_GONE);
	ASSERT_EQ(0, baton_ring_stats(pr, &st));
	EXPECT_EQ(1, st.consumer_deaths);
	EXPECT_EQ(0, st.producer_deaths);
	EXPECT_LT(0, st.parks_full);

	/* and every later park, library or raw */
	EXPECT_EQ(-EPIPE, baton_ring_park(pr, 5 * BT_NSEC));
	EXPECT_EQ(-EPIPE, baton_spsc_push(pr, &v, sizeof(v), 5 * BT_NSEC));
	EXPECT_EQ(EPIPE, _test_park(baton_ring_fd(pr), 0, 2, 0));
	EXPECT_EQ(EPIPE, _test_park(baton_ring_fd(pr), BATON_PARK_DEADLINE, 2,
				    bt_now_ns() + 5 * BT_NSEC));
	EXPECT_GT(t0 + 15 * BT_NSEC, bt_now_ns());
	EXPECT_EQ(0, bt_wait_timeout(pid, 20000));
	baton_ring_close(pr);
	bt_sync_close(&go);
}

/*
 * A consumer that scribbled its head and left: the producer's park says
 * the consumer has gone (EPIPE), not that the indices disagree; nobody
 * will read them again.
 */
TEST_F(death, scribbled_head_then_consumer_gone_gives_epipe)
{
	struct baton_ring_params p = bt_params(2, 8);
	struct baton_ring *pr;
	uint64_t v = 0;
	pid_t pid;

	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_PRODUCER,
				       &pr));
	ASSERT_EQ(0, baton_spsc_try_push(pr, &v, sizeof(v)));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct baton_ring *c;

		if (baton_ring_open(self->name, BATON_ROLE_CONSUMER,
				    BATON_BACKEND_KMOD, &c))
			_exit(3);
		__atomic_store_n(c->head, 1000003, __ATOMIC_RELEASE);
		_exit(0);	/* no close: death releases the role */
	}
	ASSERT_EQ(0, bt_wait_timeout(pid, 20000));
	ASSERT_TRUE(hdr_state(pr->hdr) & BATON_STATE_CONSUMER_GONE);
	EXPECT_EQ(EPIPE, _test_park(baton_ring_fd(pr), 0, 1, 0));
	EXPECT_EQ(EPIPE, _test_park(baton_ring_fd(pr), BATON_PARK_DEADLINE, 1,
				    bt_now_ns() + 5 * BT_NSEC));
	EXPECT_EQ(-EPIPE, baton_ring_park(pr, 5 * BT_NSEC));
	baton_ring_close(pr);
}

/* The producer dies without closing anything while the consumer sleeps. */
TEST_F(death, producer_death_wakes_parked_consumer)
{
	struct baton_ring_params p = bt_params(8, 8);
	struct baton_ring_stats st;
	struct baton_ring_offsets off;
	volatile uint8_t *cpg;
	struct baton_ring *c;
	uint64_t v;
	int64_t t0;
	pid_t pid;

	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	cpg = bt_map_ro_by_fd(baton_ring_fd(c), BT_CONS, &off);
	ASSERT_NE(NULL, cpg);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct baton_ring *pr;

		if (baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_KMOD, &pr))
			_exit(3);
		if (bt_wait_flag(BT_WORD(cpg, off.cons_waiting, uint32_t),
				 20000))
			_exit(4);
		if (bt_wait_sleeping(getppid(), 20000))
			_exit(24);
		kill(getpid(), SIGKILL);
		_exit(5);
	}
	t0 = bt_now_ns();
	EXPECT_EQ(-EPIPE, baton_spsc_pop(c, &v, sizeof(v), 20 * BT_NSEC));
	EXPECT_GT(t0 + 15 * BT_NSEC, bt_now_ns()) TH_LOG("not woken");
	EXPECT_EQ(128 + SIGKILL, bt_wait_timeout(pid, 20000));
	ASSERT_EQ(0, baton_ring_stats(c, &st));
	EXPECT_EQ(1, st.producer_deaths);
	EXPECT_EQ(0, st.tail);
	EXPECT_TRUE(baton_ring_peer_gone(c));
	EXPECT_EQ(0, *BT_WORD(cpg, off.cons_waiting, uint32_t));
	munmap((void *)cpg, off.cons_size);
	baton_ring_close(c);
}

/* SIGKILL tests get their own fixture: the variants apply to them only. */
FIXTURE(kill) {
	char name[BATON_NAME_MAX];
};

FIXTURE_VARIANT(kill) {
	bool midstream;	/* killed while pushing into a full ring */
};

FIXTURE_VARIANT_ADD(kill, idle) {
	.midstream = false,
};

FIXTURE_VARIANT_ADD(kill, midstream) {
	.midstream = true,
};

FIXTURE_SETUP(kill)
{
	BT_REQUIRE_DEV();
	bt_make_name(self->name, sizeof(self->name), "kill");
}

FIXTURE_TEARDOWN(kill)
{
	baton_ring_unlink(self->name, BATON_BACKEND_KMOD);
}

#define KILL_K		1000

/*
 * SIGKILL the producer after it published K messages. idle: it published
 * exactly KILL_K into a big ring and stopped. midstream: it keeps pushing
 * into a small ring; the consumer takes KILL_K and kills it while it is
 * parked on the full ring or in the middle of a push. Either way the
 * consumer must then drain exactly the published tail, in order, and see
 * end of stream.
 */
TEST_F_TIMEOUT(kill, producer_sigkill_drain_exact, 120)
{
	struct baton_ring_params p = bt_params(variant->midstream ? 64 : 2048,
					       8);
	struct baton_ring_stats st;
	struct baton_ring *c;
	struct bt_sync ready, go;
	uint64_t got = 0, v, k;
	pid_t pid;
	int rc;

	ASSERT_EQ(0, bt_sync_init(&ready));
	ASSERT_EQ(0, bt_sync_init(&go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct baton_ring *pr;
		uint64_t i;

		if (bt_sync_wait(&go, 20000))
			_exit(2);
		if (baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_KMOD, &pr))
			_exit(3);
		for (i = 0; variant->midstream || i < KILL_K; i++) {
			v = bt_mix(i);
			if (baton_spsc_push(pr, &v, sizeof(v), -1) != 0)
				_exit(4);
		}
		bt_sync_post(&ready);
		pause();
		_exit(5);
	}
	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	ASSERT_EQ(0, bt_sync_post(&go));
	if (variant->midstream) {
		for (; got < KILL_K; got++) {
			ASSERT_EQ(0, baton_spsc_pop(c, &v, sizeof(v),
						    20 * BT_NSEC));
			ASSERT_EQ(bt_mix(got), v);
		}
	} else {
		ASSERT_EQ(0, bt_sync_wait(&ready, 60000));
	}
	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, bt_wait_timeout(pid, 20000));

	/* what it published before dying is what we must get */
	ASSERT_EQ(0, baton_ring_stats(c, &st));
	k = st.tail;
	if (variant->midstream) {
		EXPECT_LE(KILL_K, k);
		EXPECT_GE(KILL_K + 64, k);
	} else {
		EXPECT_EQ(KILL_K, k);
	}
	EXPECT_EQ(1, st.producer_deaths);
	EXPECT_TRUE(baton_ring_peer_gone(c));
	for (;;) {
		rc = baton_spsc_pop(c, &v, sizeof(v), 10 * BT_NSEC);
		if (rc != 0)
			break;
		ASSERT_EQ(bt_mix(got), v) TH_LOG("message %llu lost or doubled",
						 (unsigned long long)got);
		got++;
	}
	EXPECT_EQ(-EPIPE, rc);
	EXPECT_EQ(k, got);
	ASSERT_EQ(0, baton_ring_stats(c, &st));
	EXPECT_EQ(k, st.tail) TH_LOG("tail moved after the producer died");
	EXPECT_EQ(k, st.head);
	baton_ring_close(c);
	bt_sync_close(&ready);
	bt_sync_close(&go);
}

/* End of stream only once drained; the data outlives its producer. */
TEST_F(death, end_of_stream_after_drain)
{
	struct baton_ring_params p = bt_params(8, 8);
	struct baton_ring *pr, *c;
	uint64_t v;
	int i;

	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_KMOD, &pr));
	for (v = 0; v < 3; v++) {
		ASSERT_EQ(0, baton_spsc_try_push(pr, &v, sizeof(v)));
	}
	EXPECT_FALSE(baton_ring_peer_gone(c));
	baton_ring_close(pr);
	EXPECT_TRUE(baton_ring_peer_gone(c));
	/* not drained: a park with the current head returns 0, not EPIPE */
	EXPECT_EQ(0, _test_park(baton_ring_fd(c), BATON_PARK_DEADLINE, 0,
				bt_now_ns() + 5 * BT_NSEC));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(0, baton_spsc_pop(c, &v, sizeof(v), 5 * BT_NSEC));
		EXPECT_EQ(i, v);
	}
	EXPECT_EQ(-EPIPE, baton_spsc_pop(c, &v, sizeof(v), 5 * BT_NSEC));
	EXPECT_EQ(EPIPE, _test_park(baton_ring_fd(c), BATON_PARK_DEADLINE, 3,
				    bt_now_ns() + 5 * BT_NSEC));
	EXPECT_EQ(EPIPE, _test_park(baton_ring_fd(c), 0, 3, 0));
	baton_ring_close(c);
}

TEST_F(death, state_bits_and_death_counters)
{
	const struct baton_ring_hdr *h1, *h2;
	struct baton_ring_create cr;
	struct baton_ring_offsets off;
	int cons, prod, i;

	cons = test_ring_create(self->dev, self->name, BATON_ROLE_CONSUMER, 4,
				8, 0600, &cr);
	off = cr.out_off;
	h1 = bt_map(cons, &off, BT_HDR, PROT_READ);
	ASSERT_NE(MAP_FAILED, h1);
	EXPECT_EQ(0, hdr_state(h1));
	for (i = 1; i <= 3; i++) {
		prod = test_ring_open(self->dev, self->name,
				      BATON_ROLE_PRODUCER, NULL);
		EXPECT_EQ(0, hdr_state(h1)) TH_LOG("attach %d left a bit", i);
		close(prod);
		EXPECT_EQ(BATON_STATE_PRODUCER_GONE, hdr_state(h1));
		EXPECT_EQ(i, h1->producer_deaths);
		EXPECT_EQ(0, h1->consumer_deaths);
	}

	/* now the consumer side, watched through a producer's header map */
	prod = test_ring_open(self->dev, self->name, BATON_ROLE_PRODUCER, NULL);
	h2 = bt_map(prod, &off, BT_HDR, PROT_READ);
	ASSERT_NE(MAP_FAILED, h2);
	EXPECT_EQ(0, hdr_state(h2));
	munmap((void *)h1, off.hdr_size);
	close(cons);
	EXPECT_EQ(BATON_STATE_CONSUMER_GONE, hdr_state(h2));
	EXPECT_EQ(1, h2->consumer_deaths);
	EXPECT_EQ(3, h2->producer_deaths);
	cons = test_ring_open(self->dev, self->name, BATON_ROLE_CONSUMER, NULL);
	EXPECT_EQ(0, hdr_state(h2));
	munmap((void *)h2, off.hdr_size);
	close(prod);
	close(cons);
	/* both released: both bits, seen by a fresh attach's header */
	prod = test_ring_open(self->dev, self->name, BATON_ROLE_PRODUCER, NULL);
	h2 = bt_map(prod, &off, BT_HDR, PROT_READ);
	ASSERT_NE(MAP_FAILED, h2);
	EXPECT_EQ(BATON_STATE_CONSUMER_GONE, hdr_state(h2));
	EXPECT_EQ(4, h2->producer_deaths);
	EXPECT_EQ(2, h2->consumer_deaths);
	munmap((void *)h2, off.hdr_size);
	close(prod);
}

/* A mapping holds the role after its fd is closed, until munmap. */
TEST_F(death, mapping_alone_keeps_role)
{
	const struct baton_ring_hdr *h;
	struct baton_ring_create cr;
	struct baton_ring_offsets off;
	struct baton_ring_info info;
	int cons, prod;
	void *m;

	cons = test_ring_create(self->dev, self->name, BATON_ROLE_CONSUMER, 4,
				8, 0600, &cr);
	off = cr.out_off;
	h = bt_map(cons, &off, BT_HDR, PROT_READ);
	ASSERT_NE(MAP_FAILED, h);
	prod = test_ring_open(self->dev, self->name, BATON_ROLE_PRODUCER, NULL);
	m = bt_map(prod, &off, BT_SLOTS, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, m);
	close(prod);

	test_info(cons, &info);
	EXPECT_EQ(1, info.out_producers);
	EXPECT_EQ(0, hdr_state(h));
	EXPECT_EQ(0, h->producer_deaths);
	EXPECT_EQ(EBUSY, _test_ring_open(self->dev, self->name,
					 BATON_ROLE_PRODUCER, NULL));
	/* the mapping is live: what it writes the consumer can read */
	*(volatile uint64_t *)m = 0xfeed;
	munmap(m, off.slots_size);

	test_info(cons, &info);
	EXPECT_EQ(0, info.out_producers);
	EXPECT_EQ(BATON_STATE_PRODUCER_GONE, hdr_state(h));
	EXPECT_EQ(1, h->producer_deaths);
	prod = test_ring_open(self->dev, self->name, BATON_ROLE_PRODUCER, NULL);
	m = bt_map(prod, &off, BT_SLOTS, PROT_READ);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ(0xfeed, *(volatile uint64_t *)m);
	munmap(m, off.slots_size);
	close(prod);
	munmap((void *)h, off.hdr_size);
	close(cons);
}

/* Same, across processes: a process that kept only a mapping, then died. */
TEST_F(death, mapping_holder_death_releases_role)
{
	const struct baton_ring_hdr *h;
	struct baton_ring_create cr;
	struct baton_ring_offsets off;
	struct bt_sync ready;
	int cons, prod;
	pid_t pid;

	cons = test_ring_create(self->dev, self->name, BATON_ROLE_CONSUMER, 4,
				8, 0600, &cr);
	off = cr.out_off;
	h = bt_map(cons, &off, BT_HDR, PROT_READ);
	ASSERT_NE(MAP_FAILED, h);
	ASSERT_EQ(0, bt_sync_init(&ready));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct baton_ring_open o;
		void *m;

		if (_test_ring_open(self->dev, self->name, BATON_ROLE_PRODUCER,
				    &o))
			_exit(3);
		prod = o.out_fd;
		m = bt_map(prod, &off, BT_PROD, PROT_READ | PROT_WRITE);
		if (m == MAP_FAILED)
			_exit(5);
		close(prod);
		bt_sync_post(&ready);
		pause();
		_exit(6);
	}
	ASSERT_EQ(0, bt_sync_wait(&ready, 20000));
	EXPECT_EQ(EBUSY, _test_ring_open(self->dev, self->name,
					 BATON_ROLE_PRODUCER, NULL));
	EXPECT_EQ(0, h->producer_deaths);
	EXPECT_EQ(0, hdr_state(h));
	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, bt_wait_timeout(pid, 20000));
	EXPECT_EQ(1, h->producer_deaths);
	EXPECT_EQ(BATON_STATE_PRODUCER_GONE, hdr_state(h));
	EXPECT_EQ(0, _test_ring_open(self->dev, self->name,
				     BATON_ROLE_PRODUCER, NULL));
	munmap((void *)h, off.hdr_size);
	close(cons);
	bt_sync_close(&ready);
}

/*
 * exec() is a release too: the ring fd is O_CLOEXEC and the old mm, with
 * every mapping of the ring, is gone, while the process lives on.
 */
TEST_F(death, exec_releases_role)
{
	const struct baton_ring_hdr *h;
	struct baton_ring_create cr;
	struct baton_ring_info info;
	struct bt_sync go;
	char path[PATH_MAX];
	int cons, i;
	pid_t pid;

	if (bt_helper_path(path, sizeof(path), "ring_peer"))
		SKIP(return, "helpers/ring_peer not found");
	cons = test_ring_create(self->dev, self->name, BATON_ROLE_CONSUMER, 4,
				8, 0600, &cr);
	h = bt_map(cons, &cr.out_off, BT_HDR, PROT_READ);
	ASSERT_NE(MAP_FAILED, h);
	ASSERT_EQ(0, bt_sync_init(&go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct baton_ring *pr;

		if (baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_KMOD, &pr))
			_exit(3);
		if (bt_sync_wait(&go, 20000))
			_exit(4);
		/* Long, and killed below: still asleep however slow we are. */
		execl(path, path, "sleep", "60000", NULL);
		_exit(5);
	}
	/* attached, through an fd and four mappings */
	for (i = 0; i < 2000; i++) {
		test_info(cons, &info);
		if (info.out_producers)
			break;
		bt_sleep_ms(5);
	}
	EXPECT_EQ(1, info.out_producers);
	bt_sync_post(&go);
	for (i = 0; i < 2000 && !(hdr_state(h) & BATON_STATE_PRODUCER_GONE);
	     i++)
		bt_sleep_ms(5);
	EXPECT_EQ(BATON_STATE_PRODUCER_GONE, hdr_state(h));
	EXPECT_EQ(1, h->producer_deaths);
	/* the helper still runs: it was the exec, not the exit */
	EXPECT_EQ(0, bt_wait_sleeping(pid, 5000));
	test_info(cons, &info);
	EXPECT_EQ(0, info.out_producers);
	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, bt_wait_timeout(pid, 20000));
	munmap((void *)h, cr.out_off.hdr_size);
	close(cons);
	bt_sync_close(&go);
}

TEST_HARNESS_MAIN
