// SPDX-License-Identifier: GPL-2.0
/*
 * mpsc_ring: BATON_RING_MPSC against the real module.
 *
 * Owns the MPSC contract short of producer death (mpsc_death.c): create
 * rules (max_producers 1..64, EINVAL outside), the producer limit (EBUSY,
 * like a second SPSC producer) and index reuse, the layout (sequence and
 * claim regions, struct baton_mpsc_hdr, seq[i] = i at create), the
 * role-scoped mappings (seq writable by both, a producer's claim mapping
 * is its own page, the consumer gets none), exactly-once in-order delivery
 * from 1..8 producer processes, a full ring with producers parked on their
 * slots (no lost wakeup under a stress loop; the counters name parks and
 * wakes), try-push's -EAGAIN on a full ring without a ticket taken, batch
 * reservation, a consumer that leaves a parked producer (EPIPE), also
 * in the middle of a batch (baton_mpsc_push_batch_n() says how much is out),
 * and poll() between a batch release's slot stores and its head store.
 */
#include "mpsc_common.h"

FIXTURE(mpsc_ring) {
	int dev;
	char name[BATON_NAME_MAX];
};

FIXTURE_SETUP(mpsc_ring)
{
	BT_REQUIRE_DEV();
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	bt_make_name(self->name, sizeof(self->name), "mp");
}

FIXTURE_TEARDOWN(mpsc_ring)
{
	if (self->dev > 0) {
		_test_unlink(self->dev, self->name);
		close(self->dev);
	}
}

TEST_F(mpsc_ring, feature_bit)
{
	uint64_t feat = 0;

	ASSERT_EQ(0, baton_abi_version(NULL, &feat));
	EXPECT_TRUE(feat & BATON_FEAT_RING_MPSC);
}

TEST_F(mpsc_ring, create_rules)
{
	struct baton_ring_create c;

	EXPECT_EQ(EINVAL, _mp_create(self->dev, self->name,
				     BATON_ROLE_CONSUMER, 8, 0, NULL));
	EXPECT_EQ(EINVAL, _mp_create(self->dev, self->name,
				     BATON_ROLE_CONSUMER, 8,
				     BATON_MPSC_PRODUCERS_MAX + 1, NULL));
	EXPECT_EQ(EINVAL, _mp_create(self->dev, self->name,
				     BATON_ROLE_CONSUMER, 12, 2, NULL));
	/* SPSC keeps its rule */
	bt_create_init(&c, self->name, BATON_ROLE_CONSUMER, 8, 8, 0600);
	c.max_producers = 2;
	EXPECT_EQ(EINVAL, bt_ioctl(self->dev, BATON_IOC_RING_CREATE, &c));
	c.kind = 3;
	c.max_producers = 1;
	EXPECT_EQ(EINVAL, bt_ioctl(self->dev, BATON_IOC_RING_CREATE, &c));
	EXPECT_EQ(0, _mp_create(self->dev, self->name, BATON_ROLE_CONSUMER, 8,
				BATON_MPSC_PRODUCERS_MAX, NULL));
}

/* max_producers producer fds, then EBUSY; the lowest index comes back. */
TEST_F(mpsc_ring, producer_limit_and_reuse)
{
	struct baton_ring_create c;
	struct baton_ring_info info;
	struct baton_ring_open o;
	int fds[3], i, cons;

	cons = -1;
	ASSERT_EQ(0, _mp_create(self->dev, self->name, BATON_ROLE_PRODUCER, 8,
				3, &c));
	fds[0] = c.out_fd;
	for (i = 1; i < 3; i++) {
		ASSERT_EQ(0, _test_ring_open(self->dev, self->name,
					     BATON_ROLE_PRODUCER, &o));
		fds[i] = o.out_fd;
		EXPECT_EQ(BATON_RING_MPSC, o.out_kind);
	}
	EXPECT_EQ(EBUSY, _test_ring_open(self->dev, self->name,
					 BATON_ROLE_PRODUCER, NULL));
	test_info(fds[0], &info);
	EXPECT_EQ(3, info.out_producers);
	cons = test_ring_open(self->dev, self->name, BATON_ROLE_CONSUMER,
			      NULL);
	EXPECT_EQ(EBUSY, _test_ring_open(self->dev, self->name,
					 BATON_ROLE_CONSUMER, NULL));
	close(fds[1]);
	ASSERT_EQ(0, _test_ring_open(self->dev, self->name,
				     BATON_ROLE_PRODUCER, &o));
	fds[1] = o.out_fd;
	EXPECT_EQ(EBUSY, _test_ring_open(self->dev, self->name,
					 BATON_ROLE_PRODUCER, NULL));
	for (i = 0; i < 3; i++)
		close(fds[i]);
	close(cons);
}

TEST_F(mpsc_ring, layout_and_header)
{
	const struct baton_ring_hdr *h;
	const struct baton_mpsc_hdr *mh;
	struct baton_ring_offsets o;
	struct baton_ring_create c;
	const uint64_t *seq;
	uint32_t i;

	ASSERT_EQ(0, _mp_create(self->dev, self->name, BATON_ROLE_CONSUMER,
				1024, 5, &c));
	o = c.out_off;
	EXPECT_NE(0, o.seq_mmap);
	EXPECT_NE(0, o.claim_mmap);
	EXPECT_EQ(0, o.seq_mmap % BT_PAGE);
	EXPECT_EQ(0, o.claim_mmap % BT_PAGE);
	EXPECT_LE(1024 * 8, o.seq_size);
	EXPECT_EQ(BT_PAGE, o.claim_size);
	EXPECT_LE(sizeof(struct baton_ring_hdr), o.mpsc_hdr);
	EXPECT_GE(o.hdr_size, o.mpsc_hdr + sizeof(struct baton_mpsc_hdr));
	EXPECT_EQ(0, o.reserved1);
	h = bt_map(c.out_fd, &o, BT_HDR, PROT_READ);
	ASSERT_NE(MAP_FAILED, h);
	EXPECT_EQ(BATON_RING_MPSC, h->kind);
	EXPECT_EQ(0, memcmp(&o, &h->off, sizeof(o)));
	mh = (const void *)((const uint8_t *)h + o.mpsc_hdr);
	EXPECT_EQ(5, mh->max_producers);
	EXPECT_EQ(0, mh->producers);
	EXPECT_EQ(0, mh->tombstones_written);
	seq = mmap(NULL, o.seq_size, PROT_READ, MAP_SHARED, c.out_fd,
		   (off_t)o.seq_mmap);
	ASSERT_NE(MAP_FAILED, seq);
	for (i = 0; i < 1024; i++)
		ASSERT_EQ(i, seq[i]);
	munmap((void *)seq, o.seq_size);
	munmap((void *)h, o.hdr_size);
	close(c.out_fd);
}

/* Who may map what (uapi table): seq rw for both, claim: own page only. */
TEST_F(mpsc_ring, mappings_by_role)
{
	struct baton_ring_create c;
	struct baton_ring_offsets o;
	struct baton_ring_open o1;
	volatile uint64_t *seqc, *seqp;
	volatile struct baton_mpsc_claim *a, *b;
	const struct baton_mpsc_hdr *mh;
	const uint8_t *h;
	int cons, pa, pb;

	ASSERT_EQ(0, _mp_create(self->dev, self->name, BATON_ROLE_CONSUMER, 8,
				4, &c));
	cons = c.out_fd;
	o = c.out_off;
	pa = test_ring_open(self->dev, self->name, BATON_ROLE_PRODUCER, &o1);
	pb = test_ring_open(self->dev, self->name, BATON_ROLE_PRODUCER, NULL);

	seqc = mmap(NULL, o.seq_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    cons, (off_t)o.seq_mmap);
	ASSERT_NE(MAP_FAILED, seqc);
	seqp = mmap(NULL, o.seq_size, PROT_READ | PROT_WRITE, MAP_SHARED, pa,
		    (off_t)o.seq_mmap);
	ASSERT_NE(MAP_FAILED, seqp);
	seqc[3] = 77;
	EXPECT_EQ(77, seqp[3]);
	seqc[3] = 3;

	/* the consumer maps no claim at all */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, o.claim_size, PROT_READ, MAP_SHARED,
				   cons, (off_t)o.claim_mmap));
	EXPECT_EQ(EACCES, errno);
	/* one page, not more */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 2 * o.claim_size, PROT_READ,
				   MAP_SHARED, pa, (off_t)o.claim_mmap));
	EXPECT_EQ(EINVAL, errno);
	/* a page inside the claim region is not a region start */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, o.claim_size, PROT_READ, MAP_SHARED,
				   pa, (off_t)(o.claim_mmap + BT_PAGE)));
	EXPECT_EQ(EINVAL, errno);
	a = mmap(NULL, o.claim_size, PROT_READ | PROT_WRITE, MAP_SHARED, pa,
		 (off_t)o.claim_mmap);
	ASSERT_NE(MAP_FAILED, a);
	b = mmap(NULL, o.claim_size, PROT_READ | PROT_WRITE, MAP_SHARED, pb,
		 (off_t)o.claim_mmap);
	ASSERT_NE(MAP_FAILED, b);
	/* reset at attach: idle */
	EXPECT_EQ(BATON_MPSC_NONE, a->floor);
	EXPECT_EQ(0, a->count);
	/* different pages: A's scribbles never reach B's claim */
	a->floor = 5;
	a->count = 9;
	EXPECT_EQ(BATON_MPSC_NONE, b->floor);
	EXPECT_EQ(0, b->count);

	h = bt_map(cons, &o, BT_HDR, PROT_READ);
	ASSERT_NE(MAP_FAILED, h);
	mh = (const void *)(h + o.mpsc_hdr);
	EXPECT_EQ(2, mh->producers);
	munmap((void *)a, o.claim_size);
	munmap((void *)seqp, o.seq_size);	/* it holds pa too */
	seqp = NULL;
	close(pa);
	EXPECT_EQ(1, mh->producers);
	/* the index comes back reset */
	pa = test_ring_open(self->dev, self->name, BATON_ROLE_PRODUCER, NULL);
	a = mmap(NULL, o.claim_size, PROT_READ, MAP_SHARED, pa,
		 (off_t)o.claim_mmap);
	ASSERT_NE(MAP_FAILED, a);
	EXPECT_EQ(BATON_MPSC_NONE, a->floor);
	EXPECT_EQ(0, a->count);
	munmap((void *)a, o.claim_size);
	munmap((void *)b, o.claim_size);
	munmap((void *)seqc, o.seq_size);
	munmap((void *)h, o.hdr_size);
	close(pa);
	close(pb);
	close(cons);
}

/* ---- data ---- */

/* A producer process: count messages; 0 or the step that failed. */
static int run_producer(const char *name, uint32_t id, uint64_t count,
			int mode, struct bt_sync *up)
{
	struct baton_ring *pr;
	uint64_t m[4][2], seq = 0;
	int ret;

	if (baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_KMOD,
			    &pr))
		return 3;
	/* attached: end of stream now waits for this producer too */
	if (up)
		bt_sync_post(up);
	while (seq < count) {
		if (mode == 2 && count - seq >= 4) {
			for (ret = 0; ret < 4; ret++)
				mp_msg(m[ret], id, seq + ret);
			ret = baton_mpsc_push_batch(pr, m, MP_MSG, 4);
			if (ret == 4)	/* a batch returns its count */
				ret = 0;
			seq += 4;
		} else if (mode == 1) {
			mp_msg(m[0], id, seq);
			ret = baton_mpsc_try_push(pr, m[0], MP_MSG);
			if (ret == -EAGAIN) {
				sched_yield();
				continue;
			}
			seq++;
		} else {
			mp_msg(m[0], id, seq);
			ret = baton_mpsc_push(pr, m[0], MP_MSG);
			seq++;
		}
		if (ret)
			return 4;
	}
	baton_ring_close(pr);
	return 0;
}

FIXTURE(mpsc_fan_in) {
	char name[BATON_NAME_MAX];
};

FIXTURE_VARIANT(mpsc_fan_in) {
	uint32_t producers;
	uint32_t slots;
	uint64_t msgs;		/* per producer */
	int mode;		/* 0 push, 1 try-push, 2 batch of 4 */
};

FIXTURE_VARIANT_ADD(mpsc_fan_in, p1) {
	.producers = 1, .slots = 16, .msgs = 1500,
};

FIXTURE_VARIANT_ADD(mpsc_fan_in, p2) {
	.producers = 2, .slots = 16, .msgs = 1500,
};

FIXTURE_VARIANT_ADD(mpsc_fan_in, p4_tiny) {
	.producers = 4, .slots = 2, .msgs = 800,
};

FIXTURE_VARIANT_ADD(mpsc_fan_in, p8) {
	.producers = 8, .slots = 8, .msgs = 500,
};

FIXTURE_VARIANT_ADD(mpsc_fan_in, p4_try_push) {
	.producers = 4, .slots = 8, .msgs = 500, .mode = 1,
};

FIXTURE_VARIANT_ADD(mpsc_fan_in, p4_batch) {
	.producers = 4, .slots = 8, .msgs = 500, .mode = 2,
};

FIXTURE_SETUP(mpsc_fan_in)
{
	BT_REQUIRE_DEV();
	bt_make_name(self->name, sizeof(self->name), "fan");
}

FIXTURE_TEARDOWN(mpsc_fan_in)
{
	baton_ring_unlink(self->name, BATON_BACKEND_KMOD);
}

/*
 * Exactly once, in order per producer: P processes, then end of stream
 * (EPIPE) once all have gone and the ring is drained. Small rings keep
 * producers parked on their slots; a lost wakeup hangs into the timeout.
 */
TEST_F_TIMEOUT(mpsc_fan_in, exactly_once_in_order, 180)
{
	struct baton_ring_params p = mp_params(variant->slots,
					       variant->producers);
	uint64_t next[8] = { 0 }, m[2], total = 0;
	struct baton_mpsc_stats st;
	struct baton_ring *c;
	struct bt_sync up;
	uint32_t i, n = variant->producers;
	pid_t pid[8];
	int rc;

	ASSERT_EQ(0, bt_sync_init(&up));
	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	for (i = 0; i < n; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i])
			_exit(run_producer(self->name, i, variant->msgs,
					   variant->mode, &up));
	}
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, bt_sync_wait(&up, 30000));
	for (;;) {
		rc = baton_mpsc_pop(c, m, sizeof(m), 30 * BT_NSEC, NULL);
		if (rc != 0)
			break;
		ASSERT_TRUE(mp_ok(m));
		ASSERT_GT(n, mp_prod(m));
		ASSERT_EQ(next[mp_prod(m)], mp_seq(m))
			TH_LOG("producer %u: lost, doubled or reordered",
			       mp_prod(m));
		next[mp_prod(m)]++;
		total++;
	}
	EXPECT_EQ(-EPIPE, rc);
	EXPECT_EQ(n * variant->msgs, total);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(variant->msgs, next[i]);
		EXPECT_EQ(0, bt_wait_timeout(pid[i], 30000));
	}
	ASSERT_EQ(0, baton_mpsc_stats(c, &st));
	EXPECT_EQ(total, st.head);
	EXPECT_EQ(total, st.tail);
	EXPECT_EQ(n, st.producer_deaths);
	EXPECT_EQ(0, st.tombstones_written);
	EXPECT_EQ(0, st.tombstones_skipped);
	TH_LOG("P=%u: parks_full %llu parks_empty %llu wakes_of_producer %llu wakes_of_consumer %llu",
	       n, (unsigned long long)st.parks_full,
	       (unsigned long long)st.parks_empty,
	       (unsigned long long)st.wakes_of_producer,
	       (unsigned long long)st.wakes_of_consumer);
	baton_ring_close(c);
	bt_sync_close(&up);
}

/*
 * Stress: a two-slot ring, three producers, a consumer that sleeps now
 * and then, so producers park on occupied slots and the consumer on
 * unpublished ones, over and over. Every message arrives, nothing hangs.
 */
/*
 * Wait until some producer has parked on the full ring (parks_full > 0),
 * polling the consumer's stats: 0, or -ETIMEDOUT after @ms milliseconds.
 */
static int wait_for_full_park(struct baton_ring *c, int ms)
{
	struct baton_mpsc_stats st;

	for (;;) {
		if (baton_mpsc_stats(c, &st))
			return -EIO;
		if (st.parks_full)
			return 0;
		if (ms-- <= 0)
			return -ETIMEDOUT;
		bt_sleep_ms(1);
	}
}

TEST_F_TIMEOUT(mpsc_ring, full_ring_parked_producers, 120)
{
	struct baton_ring_params p = mp_params(2, 3);
	struct baton_mpsc_stats st;
	uint64_t next[3] = { 0 }, m[2], total = 0;
	const uint64_t per = 400;
	struct baton_ring *c;
	struct bt_sync up;
	pid_t pid[3];
	int i, rc;

	ASSERT_EQ(0, bt_sync_init(&up));
	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	for (i = 0; i < 3; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i])
			_exit(run_producer(self->name, i, per, 0, &up));
	}
	/*
	 * All three attached before the first pop: two that finished and
	 * closed before the third's open (a slow fork) would leave a ring
	 * with no producer, whose pop says EPIPE.
	 */
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, bt_sync_wait(&up, 30000));
	while (total < 3 * per) {
		rc = baton_mpsc_pop(c, m, sizeof(m), 30 * BT_NSEC, NULL);
		ASSERT_EQ(0, rc) TH_LOG("after %llu messages",
					(unsigned long long)total);
		ASSERT_TRUE(mp_ok(m));
		ASSERT_EQ(next[mp_prod(m)], mp_seq(m));
		next[mp_prod(m)]++;
		total++;
		/*
		 * Let the producers fill the ring and park. The first pause
		 * lasts until a producer has parked: on a debug kernel under
		 * TCG a producer can spin past any fixed short pause (seen in
		 * CI: no full park in 24 pauses of 2 ms).
		 */
		if (total == 50) {
			ASSERT_EQ(0, wait_for_full_park(c, 10000))
				TH_LOG("no producer parked on a full ring in 10 s");
		} else if (total % 50 == 0) {
			bt_sleep_ms(2);
		}
	}
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, bt_wait_timeout(pid[i], 30000));
	ASSERT_EQ(0, baton_mpsc_stats(c, &st));
	EXPECT_LT(0, st.parks_full) TH_LOG("no producer ever parked");
	EXPECT_LT(0, st.wakes_of_producer);
	TH_LOG("parks_full %llu parks_empty %llu wakes_of_producer %llu wakes_of_consumer %llu",
	       (unsigned long long)st.parks_full,
	       (unsigned long long)st.parks_empty,
	       (unsigned long long)st.wakes_of_producer,
	       (unsigned long long)st.wakes_of_consumer);
	baton_ring_close(c);
	bt_sync_close(&up);
}

/* try-push on a full ring: -EAGAIN, and the tail did not move. */
TEST_F(mpsc_ring, try_push_full_takes_no_ticket)
{
	struct baton_ring_params p = mp_params(4, 2);
	struct baton_ring *c, *a, *b;
	struct baton_mpsc_stats st;
	uint64_t m[2];
	int i;

	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_KMOD, &a));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_KMOD, &b));
	for (i = 0; i < 4; i++) {
		mp_msg(m, i & 1, i);
		ASSERT_EQ(0, baton_mpsc_try_push(i & 1 ? b : a, m, MP_MSG));
	}
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(-EAGAIN, baton_mpsc_try_push(a, m, MP_MSG));
		EXPECT_EQ(-EAGAIN, baton_mpsc_try_push(b, m, MP_MSG));
	}
	ASSERT_EQ(0, baton_mpsc_stats(c, &st));
	EXPECT_EQ(4, st.tail);
	EXPECT_EQ(0, st.parks_full);
	EXPECT_EQ(0, a->wake_calls + b->wake_calls)
		TH_LOG("nobody parked: no syscall");
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, baton_mpsc_try_pop(c, m, sizeof(m), NULL));
		EXPECT_EQ((uint64_t)(i & 1) << 48 | (uint64_t)i, m[0]);
	}
	EXPECT_EQ(0, c->wake_calls);
	baton_ring_close(a);
	baton_ring_close(b);
	baton_ring_close(c);
}

/*
 * poll() of the consumer's fd reads the shared head, which a batch
 * release (baton_mpsc_cons_release_n()) stores once, after the slot
 * stores of the whole batch. A poller that looks in between (another
 * thread of the consumer's process, an event loop) finds next-lap
 * sequence words at that head: readable, not an error. Before, it read
 * EPOLLERR for the length of every release. The release here is the
 * library's, with its head store sent to a private word, as if the poll
 * came between its last slot store and the head's.
 */
TEST_F(mpsc_ring, poll_mid_batch_release_is_readable)
{
	struct baton_ring_params p = mp_params(8, 1);
	struct baton_ring *c, *pr;
	uint64_t m[2], idx, held, *head;
	struct pollfd pfd;
	int i;

	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_KMOD, &pr));
	for (i = 0; i < 8; i++) {
		mp_msg(m, 0, i);
		ASSERT_EQ(0, baton_mpsc_try_push(pr, m, MP_MSG));
	}
	ASSERT_EQ(8, baton_mpsc_cons_peek_n(c, 8, &idx));
	head = c->head;
	held = *head;
	c->head = &held;
	baton_mpsc_cons_release_n(c, 5);
	pfd.fd = baton_ring_fd(c);
	pfd.events = POLLIN;
	EXPECT_EQ(1, poll(&pfd, 1, 0));
	EXPECT_EQ(POLLIN, pfd.revents) TH_LOG("freed a lap on: %#x",
					     pfd.revents);
	/* Ticket 8 into slot 0: published for the next lap, still readable. */
	mp_msg(m, 0, 8);
	ASSERT_EQ(0, baton_mpsc_try_push(pr, m, MP_MSG));
	EXPECT_EQ(1, poll(&pfd, 1, 0));
	EXPECT_EQ(POLLIN, pfd.revents) TH_LOG("published a lap on: %#x",
					     pfd.revents);
	/* The head store lands: 5, 6, 7 and 8 follow, in order. */
	c->head = head;
	__atomic_store_n(head, held, __ATOMIC_RELEASE);
	for (i = 5; i <= 8; i++) {
		ASSERT_EQ(0, baton_mpsc_try_pop(c, m, sizeof(m), NULL));
		EXPECT_EQ((uint64_t)i, m[0]);
	}
	baton_ring_close(pr);
	baton_ring_close(c);
}

/* A producer parked on its slot gets EPIPE when the consumer goes. */
TEST_F_TIMEOUT(mpsc_ring, consumer_gone_parked_producer_epipe, 60)
{
	struct baton_ring_params p = mp_params(2, 2);
	struct baton_ring *pr;
	uint64_t m[2] = { 0, 0 };
	struct bt_sync go;
	int64_t t0;
	pid_t pid;

	ASSERT_EQ(0, bt_sync_init(&go));
	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_PRODUCER,
				       &pr));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct baton_ring *c;

		if (baton_ring_open(self->name, BATON_ROLE_CONSUMER,
				    BATON_BACKEND_KMOD, &c))
			_exit(3);
		bt_sync_post(&go);
		/* close once the producer sleeps on its slot */
		if (bt_wait_flag(c->prod_waiting, 20000))
			_exit(4);
		if (bt_wait_sleeping(getppid(), 20000))
			_exit(5);
		baton_ring_close(c);
		_exit(0);
	}
	ASSERT_EQ(0, bt_sync_wait(&go, 20000));
	ASSERT_EQ(0, baton_mpsc_push(pr, m, MP_MSG));
	ASSERT_EQ(0, baton_mpsc_push(pr, m, MP_MSG));
	t0 = bt_now_ns();
	EXPECT_EQ(-EPIPE, baton_mpsc_push(pr, m, MP_MSG));
	EXPECT_GT(t0 + 15 * BT_NSEC, bt_now_ns());
	/* the handle abandoned its ticket: it refuses from now on */
	EXPECT_EQ(-EPIPE, baton_mpsc_try_push(pr, m, MP_MSG));
	EXPECT_EQ(0, *pr->prod_waiting);
	EXPECT_EQ(0, bt_wait_timeout(pid, 20000));
	baton_ring_close(pr);
	bt_sync_close(&go);
}

/*
 * A batch cut short by the consumer's exit says how much of it is out:
 * a full 4-slot ring, a batch of 4 parked on its first slot, the consumer
 * pops 2 and leaves; exactly those 2 are published, then EPIPE.
 */
TEST_F_TIMEOUT(mpsc_ring, batch_cut_short_reports_published, 60)
{
	struct baton_ring_params p = mp_params(4, 2);
	uint64_t m[4] = { 1, 2, 3, 4 };
	struct baton_ring *pr;
	uint32_t published = 99;
	struct bt_sync go;
	pid_t pid;
	int i;

	ASSERT_EQ(0, bt_sync_init(&go));
	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_PRODUCER,
				       &pr));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct baton_ring *c;
		uint64_t v;

		if (baton_ring_open(self->name, BATON_ROLE_CONSUMER,
				    BATON_BACKEND_KMOD, &c))
			_exit(3);
		bt_sync_post(&go);
		/* the batch is reserved once the producer sleeps on slot 0 */
		if (bt_wait_flag(c->prod_waiting, 20000))
			_exit(4);
		if (bt_wait_sleeping(getppid(), 20000))
			_exit(5);
		for (i = 0; i < 2; i++)
			if (baton_mpsc_try_pop(c, &v, sizeof(v), NULL) != 0)
				_exit(6);
		baton_ring_close(c);
		_exit(0);
	}
	ASSERT_EQ(0, bt_sync_wait(&go, 20000));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, baton_mpsc_push(pr, &m[i], MP_MSG));
	EXPECT_EQ(-EPIPE, baton_mpsc_push_batch_n(pr, m, MP_MSG, 4,
						  &published));
	EXPECT_EQ(2, published);
	EXPECT_EQ(0, bt_wait_timeout(pid, 20000));
	baton_ring_close(pr);
	bt_sync_close(&go);
}

TEST_HARNESS_MAIN
