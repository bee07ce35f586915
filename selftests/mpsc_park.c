// SPDX-License-Identifier: GPL-2.0
/*
 * mpsc_park: who may silence a parked MPSC producer, and what polling
 * producers cost the consumer.
 *
 * Owns the producers' waiting state of an MPSC ring on the kmod backend:
 * it is the kernel's (a word in the read-only header), so a producer that
 * zeroes the old shared word in the producer page cannot make the
 * consumer skip the wake another, parked, producer needs; a producer
 * that polled once costs the consumer at most one wake per arm, not a
 * wake on every release until it closes. On both backends a push given a
 * deadline (baton_mpsc_push_timeout) on a full ring returns -ETIMEDOUT
 * holding no ticket, and is woken by the consumer's release when it
 * frees a slot; and baton_ring_park() on an MPSC handle waits for what
 * the MPSC calls wait for (a published ticket, a free next slot) without
 * uncounting a producer parked in a push.
 */
#include "mpsc_common.h"

FIXTURE(parked_producers) {
	int dev;
	char name[BATON_NAME_MAX];
};

FIXTURE_SETUP(parked_producers)
{
	BT_REQUIRE_DEV();
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	bt_make_name(self->name, sizeof(self->name), "mpk");
}

FIXTURE_TEARDOWN(parked_producers)
{
	if (self->dev > 0) {
		_test_unlink(self->dev, self->name);
		close(self->dev);
	}
}

/*
 * Child: a producer takes the ticket after a full ring's last one and
 * parks on its slot with a deadline, through the raw ioctl so the
 * library's own retries cannot hide a lost wake. 0: woken with its slot
 * free (then it publishes); 10: the deadline passed, i.e. nobody woke it.
 */
static int parked_producer(const char *name, int64_t timeout_ns)
{
	struct baton_ring *pr;
	uint64_t m[2], t;
	int rc;

	if (baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_KMOD,
			    &pr))
		return 3;
	t = baton_mpsc_prod_reserve(pr, 1);
	do {
		rc = _test_park(baton_ring_fd(pr), BATON_PARK_DEADLINE, t,
				bt_now_ns() + timeout_ns);
	} while (rc == EINTR);
	if (rc == ETIMEDOUT)
		return 10;
	if (rc || !baton_mpsc_prod_slot_free(pr, t))
		return 11;
	mp_msg(m, 1, 0);
	memcpy(baton_ring_slot(pr, t), m, MP_MSG);
	baton_mpsc_prod_publish(pr, t);
	baton_mpsc_prod_done(pr);
	baton_ring_close(pr);
	return 0;
}

/*
 * Producer A zeroes the producer page's waiting word (it may write that
 * page) while producer B is parked on a full ring; the consumer's release
 * must still wake B.
 */
TEST_F_TIMEOUT(parked_producers, other_producer_cannot_silence_wake, 60)
{
	struct baton_ring_params p = mp_params(2, 2);
	struct baton_ring_info info;
	struct baton_ring *c, *a;
	volatile uint8_t *apg;
	uint64_t m[2];
	pid_t pid;
	int i;

	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_KMOD, &a));
	for (i = 0; i < 2; i++) {
		mp_msg(m, 0, i);
		ASSERT_EQ(0, baton_mpsc_push(a, m, MP_MSG));
	}
	test_info(baton_ring_fd(a), &info);
	apg = bt_map(baton_ring_fd(a), &info.out_off, BT_PROD,
		     PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, apg);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(parked_producer(self->name, 5 * BT_NSEC));
	ASSERT_EQ(0, bt_wait_flag(BT_WORD(apg, info.out_off.prod_waiting,
					  uint32_t), 20000));
	ASSERT_EQ(0, bt_wait_sleeping(pid, 20000));
	/* A, which may write its page, silences B's flag there. */
	*BT_WORD(apg, info.out_off.prod_waiting, uint32_t) = 0;
	ASSERT_EQ(0, baton_mpsc_try_pop(c, m, sizeof(m), NULL));
	EXPECT_EQ(0, bt_wait_timeout(pid, 20000))
		TH_LOG("10: the parked producer was never woken");
	for (i = 0; i < 2; i++)
		EXPECT_EQ(0, baton_mpsc_pop(c, m, sizeof(m), 5 * BT_NSEC, NULL));
	munmap((void *)apg, info.out_off.prod_size);
	baton_ring_close(a);
	baton_ring_close(c);
}

/*
 * A producer that polled a full ring once is woken once: the consumer's
 * releases after that make no wake call each.
 */
TEST_F(parked_producers, polled_producer_costs_one_wake)
{
	struct baton_ring_params p = mp_params(2, 2);
	struct pollfd pfd = { .events = POLLOUT };
	struct baton_ring *c, *a;
	uint64_t m[2];
	int i;

	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_KMOD, &a));
	for (i = 0; i < 2; i++) {
		mp_msg(m, 0, i);
		ASSERT_EQ(0, baton_mpsc_push(a, m, MP_MSG));
	}
	pfd.fd = baton_ring_fd(a);
	EXPECT_EQ(0, poll(&pfd, 1, 20)) TH_LOG("a full ring is not writable");
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, baton_mpsc_try_pop(c, m, sizeof(m), NULL));
	for (i = 0; i < 2; i++) {
		mp_msg(m, 0, 2 + i);
		ASSERT_EQ(0, baton_mpsc_push(a, m, MP_MSG));
		ASSERT_EQ(0, baton_mpsc_try_pop(c, m, sizeof(m), NULL));
	}
	EXPECT_GE(1, c->wake_calls)
		TH_LOG("%llu wakes for one poll arm",
		       (unsigned long long)c->wake_calls);
	baton_ring_close(a);
	baton_ring_close(c);
}

/* The consumer process: after @go, waits 100 ms, takes one message. */
static int slow_consumer(const char *name, int backend, struct bt_sync *go,
			 struct bt_sync *done)
{
	struct baton_ring *c;
	uint64_t m[2];

	if (baton_ring_open(name, BATON_ROLE_CONSUMER, backend, &c))
		return 2;
	if (bt_sync_post(done) || bt_sync_wait(go, 10000))
		return 3;
	bt_sleep_ms(100);
	if (baton_mpsc_pop(c, m, sizeof(m), 5 * BT_NSEC, NULL) != 0)
		return 4;
	/* Stay attached until told: our exit would be an EPIPE. */
	if (bt_sync_wait(go, 10000))
		return 5;
	baton_ring_close(c);
	return 0;
}

static void push_deadline(struct __test_metadata *_metadata, int backend)
{
	struct baton_ring_params p = mp_params(2, 2);
	char name[BATON_NAME_MAX];
	struct baton_mpsc_stats st;
	struct bt_sync go, done;
	struct baton_ring *pr;
	uint64_t m[2];
	int64_t t0;
	pid_t pid;

	p.backend = backend;
	bt_make_name(name, sizeof(name), "mpt");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &pr));
	ASSERT_EQ(0, bt_sync_init(&go));
	ASSERT_EQ(0, bt_sync_init(&done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(slow_consumer(name, backend, &go, &done));
	ASSERT_EQ(0, bt_sync_wait(&done, 10000));
	mp_msg(m, 0, 0);
	ASSERT_EQ(0, baton_mpsc_try_push(pr, m, sizeof(m)));
	ASSERT_EQ(0, baton_mpsc_try_push(pr, m, sizeof(m)));
	/* Full, nobody pops: the deadline ends it, and no ticket is held. */
	t0 = bt_now_ns();
	EXPECT_EQ(-ETIMEDOUT, baton_mpsc_push_timeout(pr, m, sizeof(m),
						      50 * BT_MSEC));
	TH_LOG("full ring: -ETIMEDOUT after %.1f ms (deadline 50 ms)",
	       (double)(bt_now_ns() - t0) / 1e6);
	EXPECT_LE(t0 + 50 * BT_MSEC, bt_now_ns());	/* not before it */
	ASSERT_EQ(0, baton_mpsc_stats(pr, &st));
	EXPECT_EQ(2U, st.tail);
	EXPECT_EQ(-ETIMEDOUT, baton_mpsc_push_timeout(pr, m, sizeof(m), 0));
	/* The consumer frees a slot in 100 ms: the parked push goes in. */
	ASSERT_EQ(0, bt_sync_post(&go));
	t0 = bt_now_ns();
	EXPECT_EQ(0, baton_mpsc_push_timeout(pr, m, sizeof(m), 5 * BT_NSEC));
	ASSERT_EQ(0, baton_mpsc_stats(pr, &st));
	EXPECT_EQ(3U, st.tail);
	EXPECT_LE(1U, st.park_calls);
	TH_LOG("%s: room after %.1f ms, %llu park calls",
	       backend == BATON_BACKEND_KMOD ? "kmod" : "memfd",
	       (double)(bt_now_ns() - t0) / 1e6,
	       (unsigned long long)st.park_calls);
	ASSERT_EQ(0, bt_sync_post(&go));
	EXPECT_EQ(0, bt_wait_timeout(pid, 10000));
	bt_sync_close(&go);
	bt_sync_close(&done);
	baton_ring_close(pr);
	baton_ring_unlink(name, backend);
}

TEST_F_TIMEOUT(parked_producers, push_deadline_kmod, 60)
{
	push_deadline(_metadata, BATON_BACKEND_KMOD);
}

TEST_F_TIMEOUT(parked_producers, push_deadline_memfd, 60)
{
	push_deadline(_metadata, BATON_BACKEND_MEMFD);
}

/* A child producer's last step: publish held ticket @t, then close. */
static void publish_and_close(struct baton_ring *pr, uint32_t prod, uint64_t t)
{
	uint64_t m[2];

	mp_msg(m, prod, t);
	memcpy(baton_ring_slot(pr, t), m, MP_MSG);
	baton_mpsc_prod_publish(pr, t);
	baton_mpsc_prod_done(pr);
	baton_ring_close(pr);
}

/*
 * Child: a producer that takes a ticket, says so, and publishes it only
 * when told (a producer between its fetch_add and its publish).
 */
static int ticket_holder(const char *name, int backend, struct bt_sync *held,
			 struct bt_sync *go)
{
	struct baton_ring *pr;
	uint64_t t;

	if (baton_ring_open(name, BATON_ROLE_PRODUCER, backend, &pr))
		return 2;
	t = baton_mpsc_prod_reserve(pr, 1);
	if (bt_sync_post(held) || bt_sync_wait(go, 10000))
		return 3;
	publish_and_close(pr, 1, t);
	return 0;
}

/*
 * baton_ring_park() on an MPSC consumer sleeps on the slot at its head:
 * a ticket taken but not published is not a message, so the park runs
 * to its deadline instead of returning at once (memfd took the SPSC
 * path, which compares the ticket counter with the head); the publish
 * then ends a park.
 */
static void consumer_ring_park(struct __test_metadata *_metadata, int backend)
{
	struct baton_ring_params p = mp_params(4, 2);
	char name[BATON_NAME_MAX];
	struct bt_sync held, go;
	struct baton_ring *c;
	uint64_t m[2];
	int64_t t0;
	pid_t pid;

	p.backend = backend;
	bt_make_name(name, sizeof(name), "mcp");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &c));
	ASSERT_EQ(0, bt_sync_init(&held));
	ASSERT_EQ(0, bt_sync_init(&go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(ticket_holder(name, backend, &held, &go));
	ASSERT_EQ(0, bt_sync_wait(&held, 10000));
	EXPECT_EQ(-EAGAIN, baton_mpsc_try_pop(c, m, sizeof(m), NULL));
	t0 = bt_now_ns();
	EXPECT_EQ(-ETIMEDOUT, baton_ring_park(c, 50 * BT_MSEC));
	EXPECT_LE(40 * BT_MSEC, bt_now_ns() - t0);
	ASSERT_EQ(0, bt_sync_post(&go));
	EXPECT_EQ(0, baton_ring_park(c, 5 * BT_NSEC));
	EXPECT_EQ(0, baton_mpsc_try_pop(c, m, sizeof(m), NULL));
	EXPECT_TRUE(mp_ok(m));
	EXPECT_EQ(0, bt_wait_timeout(pid, 10000));
	bt_sync_close(&held);
	bt_sync_close(&go);
	baton_ring_close(c);
	baton_ring_unlink(name, backend);
}

TEST_F_TIMEOUT(parked_producers, consumer_ring_park_kmod, 60)
{
	consumer_ring_park(_metadata, BATON_BACKEND_KMOD);
}

TEST_F_TIMEOUT(parked_producers, consumer_ring_park_memfd, 60)
{
	consumer_ring_park(_metadata, BATON_BACKEND_MEMFD);
}

/*
 * Child: takes a ticket on a full ring and waits on its slot, parked
 * until the consumer frees it.
 */
static int parked_pusher(const char *name, int backend)
{
	struct baton_ring *pr;
	uint64_t t;

	if (baton_ring_open(name, BATON_ROLE_PRODUCER, backend, &pr))
		return 2;
	t = baton_mpsc_prod_reserve(pr, 1);
	if (baton_mpsc_prod_wait(pr, t))
		return 4;
	publish_and_close(pr, 2, t);
	return 0;
}

/*
 * baton_ring_park() on an MPSC producer sleeps until the slot of the next
 * ticket is free, holding no ticket, beside another producer parked in a
 * push: a full ring runs it to its deadline, and it leaves the parked
 * push counted, so the consumer's releases wake both (memfd took the
 * SPSC path: it slept on the producers' summary word and zeroed it on
 * the way out; kmod asked about a ticket the handle never held).
 * One try; returns the consumer's wake calls of its release.
 */
static uint64_t producer_ring_park_try(struct __test_metadata *_metadata,
				       int backend)
{
	struct baton_ring_params p = mp_params(2, 3);
	char name[BATON_NAME_MAX];
	struct baton_mpsc_stats st;
	struct baton_ring *c, *pr;
	uint64_t m[2];
	int64_t t0;
	pid_t pid;
	int i;

	p.backend = backend;
	bt_make_name(name, sizeof(name), "mpp");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &c));
	ASSERT_EQ(0, baton_ring_open(name, BATON_ROLE_PRODUCER, backend, &pr));
	mp_msg(m, 1, 0);
	ASSERT_EQ(0, baton_mpsc_try_push(pr, m, sizeof(m)));
	ASSERT_EQ(0, baton_mpsc_try_push(pr, m, sizeof(m)));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(parked_pusher(name, backend));
	/* The pusher takes ticket 2 and parks on its slot (spin: < 1 ms). */
	for (i = 0; i < 10000; i++) {
		ASSERT_EQ(0, baton_mpsc_stats(c, &st));
		if (st.tail == 3)
			break;
		bt_sleep_ms(1);
	}
	ASSERT_EQ(3U, st.tail);
	/*
	 * The pusher is counted in the producers' waiting word once it
	 * parks (memfd: the producer page's summary; kmod: the header's
	 * word, which the kernel arms). On a slow VM (TCG, KCSAN or RT) that
	 * came more than 100 ms after its ticket, and the release below then
	 * had no one to wake (seen twice on memfd). Wait for it, both.
	 */
	for (i = 0; i < 20000 &&
		    !baton__wait_armed(__atomic_load_n(c->prod_waiting,
						       __ATOMIC_ACQUIRE)); i++)
		bt_sleep_ms(1);
	ASSERT_TRUE(baton__wait_armed(__atomic_load_n(c->prod_waiting,
						      __ATOMIC_ACQUIRE)));
	/*
	 * Counted is not yet asleep: on memfd the pusher counts itself in
	 * the summary, then arms its own word (a membarrier, slow on a
	 * loaded KCSAN VM), and the release wakes only an armed word. A
	 * release in that window frees the slot the pusher's re-check then
	 * finds, with no wake (CI, KCSAN: all five tries). Wait for sleep.
	 */
	ASSERT_EQ(0, bt_wait_sleeping(pid, 20000));
	t0 = bt_now_ns();
	EXPECT_EQ(-ETIMEDOUT, baton_ring_park(pr, 50 * BT_MSEC));
	EXPECT_LE(40 * BT_MSEC, bt_now_ns() - t0);
	/* The park of another producer leaves the pusher counted. */
	EXPECT_TRUE(baton__wait_armed(__atomic_load_n(c->prod_waiting,
						      __ATOMIC_ACQUIRE)));
	/*
	 * One pop frees ticket 2's slot, and its release wakes the parked
	 * pusher: the park above left it counted.
	 */
	EXPECT_EQ(0, baton_mpsc_pop(c, m, sizeof(m), 5 * BT_NSEC, NULL));
	ASSERT_EQ(0, baton_mpsc_stats(c, &st));
	EXPECT_EQ(0, bt_wait_timeout(pid, 10000));
	/* The next frees ticket 3's: the park ends and the push fits. */
	EXPECT_EQ(0, baton_mpsc_pop(c, m, sizeof(m), 5 * BT_NSEC, NULL));
	EXPECT_EQ(0, baton_ring_park(pr, 5 * BT_NSEC));
	EXPECT_EQ(0, baton_mpsc_try_push(pr, m, sizeof(m)));
	baton_ring_close(pr);
	baton_ring_close(c);
	baton_ring_unlink(name, backend);
	return st.wake_calls;
}

/*
 * kmod: the waiting word is the kernel's, cleared only by a WAKE that
 * dequeues the pusher, so one try must see the wake. memfd: the pusher
 * looks at the ring again at the end of each 5 ms sleep slice; a release
 * landing as a slice ends finds it uncounted and rightly wakes nobody
 * (the pusher finds its slot free itself), as in the host ring_park
 * tests (CI: wake_calls 0 once, on 6.12-rt). So one try in five must see
 * it; a park that zeroes the word, the bug, fails all five.
 */
static void producer_ring_park(struct __test_metadata *_metadata, int backend)
{
	int tries = backend == BATON_BACKEND_MEMFD ? 5 : 1, i;
	uint64_t wakes = 0;

	for (i = 0; i < tries && !wakes; i++)
		wakes = producer_ring_park_try(_metadata, backend);
	TH_LOG("%d tries", i);
	EXPECT_LE(1U, wakes) TH_LOG("no release woke the parked pusher");
}

TEST_F_TIMEOUT(parked_producers, producer_ring_park_kmod, 60)
{
	producer_ring_park(_metadata, BATON_BACKEND_KMOD);
}

TEST_F_TIMEOUT(parked_producers, producer_ring_park_memfd, 60)
{
	producer_ring_park(_metadata, BATON_BACKEND_MEMFD);
}

TEST_HARNESS_MAIN
