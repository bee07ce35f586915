// SPDX-License-Identifier: GPL-2.0
/*
 * abi_words: the four answers abi.rst and mpsc.rst give a second
 * implementation (issue 17), checked through the raw ABI only.
 *
 * Owns: what BATON_IOC_RING_CREATE / _OPEN (and the epoch ones) return on
 * success and what out_fd means on failure; where SPSC indices start;
 * where each MPSC sequence word sits and what it holds at create, after a
 * publication, a free and a tombstone; what park and poll say before the
 * peer role has ever attached ("not yet", never "gone") and after it came
 * and left ("gone").
 */
#include "mpsc_common.h"

FIXTURE(abi_words) {
	int dev;
	char name[BATON_NAME_MAX];
};

FIXTURE_SETUP(abi_words)
{
	BT_REQUIRE_DEV();
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	bt_make_name(self->name, sizeof(self->name), "aw");
}

FIXTURE_TEARDOWN(abi_words)
{
	if (self->dev > 0) {
		_test_unlink(self->dev, self->name);
		_test_epoch_unlink(self->dev, self->name);
		close(self->dev);
	}
}

static bool fd_open_cloexec(int fd)
{
	int fl = fcntl(fd, F_GETFD);

	return fl >= 0 && (fl & FD_CLOEXEC);
}

/* Success: the ioctl returns 0, the new fd is in out_fd and only there. */
TEST_F(abi_words, create_and_open_return_0_and_the_fd_in_out_fd)
{
	struct baton_ring_create c;
	struct baton_ring_open o;
	struct baton_epoch_create ec;
	struct baton_epoch_open eo;
	int rc;

	bt_create_init(&c, self->name, BATON_ROLE_CONSUMER, 4, 64, 0600);
	c.out_fd = -1;
	rc = ioctl(self->dev, BATON_IOC_RING_CREATE, &c);
	ASSERT_EQ(0, rc);
	ASSERT_TRUE(fd_open_cloexec(c.out_fd));
	EXPECT_NE(self->dev, c.out_fd);

	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.role = BATON_ROLE_PRODUCER;
	o.out_fd = -1;
	snprintf(o.name, sizeof(o.name), "%s", self->name);
	rc = ioctl(self->dev, BATON_IOC_RING_OPEN, &o);
	ASSERT_EQ(0, rc);
	ASSERT_TRUE(fd_open_cloexec(o.out_fd));
	EXPECT_NE(c.out_fd, o.out_fd);
	close(o.out_fd);	/* a second open below takes the role again */
	o.role = BATON_ROLE_CONSUMER;	/* taken by the creator's fd */

	/*
	 * Failure: -1 and errno; nothing is installed. The kernel may have
	 * written out_fd before the step that failed (here the role check,
	 * after the copy-out): out_* mean nothing unless the ioctl returned 0.
	 */
	o.out_fd = -1;
	errno = 0;
	rc = ioctl(self->dev, BATON_IOC_RING_OPEN, &o);
	EXPECT_EQ(-1, rc);
	EXPECT_EQ(EBUSY, errno);
	if (o.out_fd >= 0)
		EXPECT_FALSE(fd_open_cloexec(o.out_fd))
			TH_LOG("fd %d installed by a failed open", o.out_fd);

	memset(&ec, 0, sizeof(ec));
	ec.size = sizeof(ec);
	ec.max_participants = 2;
	ec.queue_len = 4;
	ec.mode = 0600;
	ec.out_fd = -1;
	snprintf(ec.name, sizeof(ec.name), "%s", self->name);
	ASSERT_EQ(0, ioctl(self->dev, BATON_IOC_EPOCH_CREATE, &ec));
	ASSERT_TRUE(fd_open_cloexec(ec.out_fd));
	memset(&eo, 0, sizeof(eo));
	eo.size = sizeof(eo);
	eo.out_fd = -1;
	snprintf(eo.name, sizeof(eo.name), "%s", self->name);
	ASSERT_EQ(0, ioctl(self->dev, BATON_IOC_EPOCH_OPEN, &eo));
	ASSERT_TRUE(fd_open_cloexec(eo.out_fd));
	close(eo.out_fd);
	close(ec.out_fd);
	close(c.out_fd);
}

/* SPSC: tail and head are 0 at create, at their documented offsets. */
TEST_F(abi_words, spsc_indices_start_at_0)
{
	struct baton_ring_create c;
	struct baton_ring_info info;
	uint8_t *prod, *cons;
	uint64_t v;
	int fd;

	fd = test_ring_create(self->dev, self->name, BATON_ROLE_CONSUMER, 8,
			      64, 0600, &c);
	prod = bt_map(fd, &c.out_off, BT_PROD, PROT_READ);
	cons = bt_map(fd, &c.out_off, BT_CONS, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, prod);
	ASSERT_NE(MAP_FAILED, cons);
	memcpy(&v, prod + c.out_off.prod_tail, sizeof(v));
	EXPECT_EQ(0, v);
	memcpy(&v, cons + c.out_off.cons_head, sizeof(v));
	EXPECT_EQ(0, v);
	test_info(fd, &info);
	EXPECT_EQ(0, info.out_head);
	EXPECT_EQ(0, info.out_tail);
	/* a consumer at 0 with nothing published: not before its time */
	EXPECT_EQ(ETIMEDOUT, _test_park(fd, BATON_PARK_DEADLINE, 0,
					bt_now_ns() + 20 * BT_MSEC));
	bt_unmap(&c.out_off, BT_PROD, prod);
	bt_unmap(&c.out_off, BT_CONS, cons);
	close(fd);
}

/* The u64 at byte @off of the sequence region, read as bytes. */
static uint64_t seq_word(const struct mp_raw *r, size_t off)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)r->seq + off, sizeof(v));
	return v;
}

/*
 * MPSC: slot j's sequence word is the u64 at byte 8 * j of the region at
 * off.seq_mmap, ticket t's slot is t & (slot_count - 1); j at create,
 * t + 1 once published, t + slot_count once freed, (t + 1) | TOMB when
 * the kernel tombstoned it (the pid in the slot's first 8 bytes).
 */
TEST_F(abi_words, mpsc_sequence_words_at_documented_offsets)
{
	const uint32_t n = 4;
	struct baton_ring_create cr;
	struct mp_raw c, p;
	uint64_t t, w[2], m[2];
	struct bt_sync s;
	pid_t victim;
	uint32_t j;

	ASSERT_EQ(0, _mp_create(self->dev, self->name, BATON_ROLE_CONSUMER, n,
				4, &cr));
	ASSERT_EQ(0, mp_raw_map(&c, cr.out_fd, BATON_ROLE_CONSUMER, n, MP_MSG,
				&cr.out_off));
	EXPECT_LE(n * sizeof(uint64_t), cr.out_off.seq_size);
	EXPECT_EQ(0, cr.out_off.seq_size % BT_PAGE);
	EXPECT_EQ(0, *c.tail);
	for (j = 0; j < n; j++)
		EXPECT_EQ(j, seq_word(&c, 8 * j));

	ASSERT_EQ(0, mp_raw_open(self->name, BATON_ROLE_PRODUCER, &p));
	EXPECT_EQ(BATON_MPSC_NONE, p.claim->floor);
	EXPECT_EQ(0, p.claim->count);
	/* two laps and a half through slot words 0..3 */
	for (t = 0; t < 2 * n + 2; t++) {
		mp_raw_floor(&p);
		ASSERT_EQ(t, mp_raw_take(&p, 1));
		mp_raw_claim(&p, t, 1);
		ASSERT_EQ(t, seq_word(&c, 8 * (t % n)));
		mp_msg(m, 1, t);
		mp_raw_fill(&p, t, m);
		mp_raw_done(&p);
		EXPECT_EQ(t + 1, seq_word(&c, 8 * (t % n)));
		ASSERT_EQ(MP_RAW_MSG, mp_raw_pop(&c, bt_now_ns() + BT_NSEC, w));
		EXPECT_EQ(m[0], w[0]);
		EXPECT_EQ(t + n, seq_word(&c, 8 * (t % n)));
	}
	/* a tombstone: a producer that dies holding ticket t */
	ASSERT_EQ(0, bt_sync_init(&s));
	victim = fork();
	ASSERT_LE(0, victim);
	if (!victim) {
		struct mp_raw v;

		if (mp_raw_open(self->name, BATON_ROLE_PRODUCER, &v))
			_exit(3);
		mp_raw_floor(&v);
		mp_raw_take(&v, 1);
		bt_sync_post(&s);
		pause();
		_exit(4);
	}
	ASSERT_EQ(0, bt_sync_wait(&s, 20000));
	kill(victim, SIGKILL);
	ASSERT_EQ(128 + SIGKILL, bt_wait_timeout(victim, 20000));
	ASSERT_EQ(MP_RAW_TOMB, mp_raw_pop(&c, bt_now_ns() + 5 * BT_NSEC, w));
	EXPECT_EQ((uint64_t)victim, w[0]);
	EXPECT_EQ(t + n, seq_word(&c, 8 * (t % n)));	/* freed since */
	EXPECT_EQ(1, c.mh->tombstones_written);
	bt_sync_close(&s);
	mp_raw_unmap(&p);
	mp_raw_unmap(&c);
}

/* The tombstone word itself, before the consumer frees it. */
TEST_F(abi_words, mpsc_tombstone_word)
{
	struct baton_ring_create cr;
	struct mp_raw c;
	struct bt_sync s;
	uint64_t pid;
	pid_t victim;

	ASSERT_EQ(0, _mp_create(self->dev, self->name, BATON_ROLE_CONSUMER, 4,
				2, &cr));
	ASSERT_EQ(0, mp_raw_map(&c, cr.out_fd, BATON_ROLE_CONSUMER, 4, MP_MSG,
				&cr.out_off));
	ASSERT_EQ(0, bt_sync_init(&s));
	victim = fork();
	ASSERT_LE(0, victim);
	if (!victim) {
		struct mp_raw v;

		if (mp_raw_open(self->name, BATON_ROLE_PRODUCER, &v))
			_exit(3);
		mp_raw_floor(&v);
		mp_raw_take(&v, 2);
		mp_raw_claim(&v, 0, 2);
		bt_sync_post(&s);
		pause();
		_exit(4);
	}
	ASSERT_EQ(0, bt_sync_wait(&s, 20000));
	kill(victim, SIGKILL);
	ASSERT_EQ(128 + SIGKILL, bt_wait_timeout(victim, 20000));
	/* park at 0 decides ticket 0 and returns */
	ASSERT_EQ(0, _test_park(c.fd, BATON_PARK_DEADLINE, 0,
				bt_now_ns() + 5 * BT_NSEC));
	EXPECT_EQ(1 | BATON_MPSC_TOMB, seq_word(&c, 0));
	memcpy(&pid, c.slot, sizeof(pid));
	EXPECT_EQ((uint64_t)victim, pid);
	EXPECT_EQ(1, seq_word(&c, 8));	/* ticket 1: not decided yet */
	bt_sync_close(&s);
	mp_raw_unmap(&c);
}

static short poll_now(int fd, short events)
{
	struct pollfd pfd = { .fd = fd, .events = events };

	return poll(&pfd, 1, 20) == 1 ? pfd.revents : 0;
}

/*
 * Before the peer role has ever attached, park and poll say "not yet":
 * the consumer sleeps (to its deadline) and polls not readable, no HUP;
 * the producer's park returns at once while there is room, and its poll
 * says writable, no ERR. "Gone" (EPIPE, EPOLLHUP, EPOLLERR) comes only
 * once a peer that did attach has left.
 */
FIXTURE(before_peer_attached) {
	int dev;
	char name[BATON_NAME_MAX];
};

FIXTURE_VARIANT(before_peer_attached) {
	uint32_t kind;
};

FIXTURE_VARIANT_ADD(before_peer_attached, spsc) {
	.kind = BATON_RING_SPSC,
};

FIXTURE_VARIANT_ADD(before_peer_attached, mpsc) {
	.kind = BATON_RING_MPSC,
};

FIXTURE_SETUP(before_peer_attached)
{
	BT_REQUIRE_DEV();
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	bt_make_name(self->name, sizeof(self->name), "pv");
}

FIXTURE_TEARDOWN(before_peer_attached)
{
	if (self->dev > 0) {
		_test_unlink(self->dev, self->name);
		close(self->dev);
	}
}

static int aw_create(int dev, const char *name, uint32_t kind, uint32_t role,
		     struct baton_ring_create *c)
{
	bt_create_init(c, name, role, 4, MP_MSG, 0600);
	c->kind = kind;
	c->max_producers = kind == BATON_RING_MPSC ? 2 : 0;
	return bt_ioctl(dev, BATON_IOC_RING_CREATE, c);
}

TEST_F(before_peer_attached, consumer_before_any_producer_waits)
{
	struct baton_ring_create c;
	struct baton_ring_open o;
	int64_t t0;

	ASSERT_EQ(0, aw_create(self->dev, self->name, variant->kind,
			       BATON_ROLE_CONSUMER, &c));
	t0 = bt_now_ns();
	EXPECT_EQ(ETIMEDOUT, _test_park(c.out_fd, BATON_PARK_DEADLINE, 0,
					t0 + 50 * BT_MSEC));
	EXPECT_LE(t0 + 50 * BT_MSEC, bt_now_ns());
	EXPECT_EQ(0, poll_now(c.out_fd, POLLIN));
	/* a producer that came and left without publishing: end of stream */
	ASSERT_EQ(0, _test_ring_open(self->dev, self->name,
				     BATON_ROLE_PRODUCER, &o));
	close(o.out_fd);
	EXPECT_EQ(EPIPE, _test_park(c.out_fd, BATON_PARK_DEADLINE, 0,
				    bt_now_ns() + 5 * BT_NSEC));
	EXPECT_EQ(POLLHUP, poll_now(c.out_fd, POLLIN));
	/* one attaching again: not gone any more */
	ASSERT_EQ(0, _test_ring_open(self->dev, self->name,
				     BATON_ROLE_PRODUCER, &o));
	EXPECT_EQ(ETIMEDOUT, _test_park(c.out_fd, BATON_PARK_DEADLINE, 0,
					bt_now_ns() + 20 * BT_MSEC));
	EXPECT_EQ(0, poll_now(c.out_fd, POLLIN));
	close(o.out_fd);
	close(c.out_fd);
}

TEST_F(before_peer_attached, producer_before_any_consumer_has_room)
{
	struct baton_ring_create c;
	struct baton_ring_open o;

	ASSERT_EQ(0, aw_create(self->dev, self->name, variant->kind,
			       BATON_ROLE_PRODUCER, &c));
	/* room for index 0: the park returns at once */
	EXPECT_EQ(0, _test_park(c.out_fd, BATON_PARK_DEADLINE, 0,
				bt_now_ns() + 5 * BT_NSEC));
	EXPECT_EQ(POLLOUT, poll_now(c.out_fd, POLLOUT));
	/* SPSC: full at 4 (head 0); MPSC: ticket 4 waits for slot 0 */
	EXPECT_EQ(ETIMEDOUT, _test_park(c.out_fd, BATON_PARK_DEADLINE, 4,
					bt_now_ns() + 20 * BT_MSEC));
	/* a consumer that came and left: gone */
	ASSERT_EQ(0, _test_ring_open(self->dev, self->name,
				     BATON_ROLE_CONSUMER, &o));
	close(o.out_fd);
	EXPECT_EQ(EPIPE, _test_park(c.out_fd, BATON_PARK_DEADLINE, 4,
				    bt_now_ns() + 5 * BT_NSEC));
	EXPECT_TRUE(poll_now(c.out_fd, POLLOUT) & POLLERR);
	close(c.out_fd);
}

TEST_HARNESS_MAIN
