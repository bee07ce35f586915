// SPDX-License-Identifier: GPL-2.0
/*
 * ring_bulk: the bulk copy forms (Documentation/bulk.rst) on the kmod
 * backend, between processes: an SPSC stream of 64-byte messages in
 * batches that straddle the ring's end, both sides blocking through the
 * kernel when the ring is full or empty; an MPSC ring fed by two producer
 * processes with baton_mpsc_push_bulk on a ring small enough that they
 * park on their slots, drained with baton_mpsc_try_pop_bulk (exactly
 * once, in order per producer); and a tombstone the kernel wrote for a
 * producer killed holding its ticket, in the middle of what would be one
 * consumer batch: the batch stops before it, the next call reports the
 * loss with the dead producer's pid, the one after takes the rest.
 */
#include "mpsc_common.h"

FIXTURE(bulk) {
	int dev;
	char name[BATON_NAME_MAX];
};

FIXTURE_SETUP(bulk)
{
	BT_REQUIRE_DEV();
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	bt_make_name(self->name, sizeof(self->name), "bulk");
}

FIXTURE_TEARDOWN(bulk)
{
	if (self->dev > 0) {
		_test_unlink(self->dev, self->name);
		close(self->dev);
	}
}

#define SPSC_MSGS	200000
#define WAIT_NS		(10 * BT_NSEC)

/* Word w of SPSC message j. */
static uint64_t word(uint64_t j, uint32_t w)
{
	return bt_mix(j * 8 + w);
}

/* Child: push SPSC_MSGS messages in batches of 1..13; 0 or an exit code. */
static int spsc_producer(const char *name)
{
	uint64_t in[13 * 8], j = 0, idx;
	struct baton_ring *p;
	uint32_t round = 0, i, w;

	if (baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_KMOD, &p))
		return 3;
	while (j < SPSC_MSGS) {
		uint32_t n = 1 + round++ % 13;
		int k;

		if (n > SPSC_MSGS - j)
			n = (uint32_t)(SPSC_MSGS - j);
		for (i = 0; i < n; i++)
			for (w = 0; w < 8; w++)
				in[i * 8 + w] = word(j + i, w);
		k = baton_spsc_try_push_bulk64(p, in, n);
		if (k < 0)
			return 4;
		if (!k && baton_spsc_prod_reserve_wait(p, 1, &idx, WAIT_NS) < 0)
			return 5;
		j += (uint64_t)k;
	}
	baton_ring_close(p);
	return 0;
}

TEST_F_TIMEOUT(bulk, spsc_stream_between_processes, 120)
{
	struct baton_ring_params prm = bt_params(16, 64);
	uint64_t out[11 * 8], got = 0, idx;
	struct baton_ring *c;
	uint32_t round = 0, i, w;
	pid_t pid;

	prm.backend = BATON_BACKEND_KMOD;
	ASSERT_EQ(0, baton_ring_create(self->name, &prm, BATON_ROLE_CONSUMER,
				       &c));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(spsc_producer(self->name));
	while (got < SPSC_MSGS) {
		/* Not the producer's cycle: batches straddle the end. */
		uint32_t n = 1 + (round++ * 5) % 11;
		int k = baton_spsc_try_pop_bulk64(c, out, n);

		ASSERT_LE(0, k);
		if (!k) {
			ASSERT_LT(0, baton_spsc_cons_peek_wait(c, 1, &idx,
							       WAIT_NS));
			continue;
		}
		for (i = 0; i < (uint32_t)k; i++)
			for (w = 0; w < 8; w++)
				ASSERT_EQ(word(got + i, w), out[i * 8 + w])
					TH_LOG("message %llu word %u",
					       (unsigned long long)(got + i), w);
		got += (uint64_t)k;
	}
	EXPECT_EQ(0, bt_wait_timeout(pid, 20000));
	baton_ring_close(c);
}

#define MPSC_MSGS	20000

/* Child: producer @id pushes MPSC_MSGS messages in batches of 1..7. */
static int mpsc_producer(const char *name, uint32_t id)
{
	uint64_t in[7 * 2], j = 0;
	struct baton_ring *p;
	uint32_t round = id, i, pub;

	if (baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_KMOD, &p))
		return 3;
	while (j < MPSC_MSGS) {
		uint32_t n = 1 + round++ % 7;

		if (n > MPSC_MSGS - j)
			n = (uint32_t)(MPSC_MSGS - j);
		for (i = 0; i < n; i++)
			mp_msg(&in[i * 2], id, j + i);
		if (baton_mpsc_push_bulk16(p, in, n, &pub) != (int)n || pub != n)
			return 4;
		j += n;
	}
	baton_ring_close(p);
	return 0;
}

TEST_F_TIMEOUT(bulk, mpsc_two_producers, 120)
{
	struct baton_ring_params prm = mp_params(8, 2);
	uint64_t out[5 * 2], next[2] = { 0, 0 };
	struct baton_mpsc_stats st;
	struct baton_ring *c;
	uint32_t round = 0, i;
	pid_t pid[2];
	int k, n;

	ASSERT_EQ(0, baton_ring_create(self->name, &prm, BATON_ROLE_CONSUMER,
				       &c));
	for (n = 0; n < 2; n++) {
		pid[n] = fork();
		ASSERT_LE(0, pid[n]);
		if (!pid[n])
			_exit(mpsc_producer(self->name, (uint32_t)n));
	}
	/*
	 * A drained ring with no producer attached is at end of stream: a
	 * pop that parks before the children have opened the ring (fork
	 * and open are slow under TCG) would rightly say EPIPE. Neither can
	 * finish before both are in: the ring holds 8 of their 40000.
	 */
	for (n = 0; n < 20000; n++) {
		ASSERT_EQ(0, baton_mpsc_stats(c, &st));
		if (st.producers == 2)
			break;
		usleep(1000);
	}
	ASSERT_EQ(2, st.producers);
	while (next[0] + next[1] < 2 * MPSC_MSGS) {
		k = baton_mpsc_try_pop_bulk16(c, out, 1 + round++ % 5, NULL);
		if (k == 0) {
			/* Park through the kernel: the single pop's wait. */
			ASSERT_EQ(0, baton_mpsc_pop(c, out, MP_MSG, WAIT_NS,
						    NULL));
			k = 1;
		}
		ASSERT_LT(0, k);
		for (i = 0; i < (uint32_t)k; i++) {
			uint64_t *m = &out[i * 2];

			ASSERT_TRUE(mp_ok(m));
			ASSERT_GT(2, mp_prod(m));
			ASSERT_EQ(next[mp_prod(m)], mp_seq(m));
			next[mp_prod(m)]++;
		}
	}
	for (n = 0; n < 2; n++)
		EXPECT_EQ(0, bt_wait_timeout(pid[n], 20000));
	ASSERT_EQ(0, baton_mpsc_stats(c, &st));
	TH_LOG("producer parks %llu, wakes of producers %llu",
	       (unsigned long long)st.parks_full,
	       (unsigned long long)st.wakes_of_producer);
	EXPECT_EQ(0, st.tombstones_skipped);
	baton_ring_close(c);
}

/* A producer that takes one ticket, says so, and waits to be killed. */
static pid_t dying_producer(const char *name, struct bt_sync *s)
{
	pid_t pid = fork();
	struct baton_ring *pr;

	if (pid)
		return pid;
	if (baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_KMOD, &pr))
		_exit(3);
	baton_mpsc_prod_reserve(pr, 1);
	bt_sync_post(s);
	pause();
	_exit(4);
}

TEST_F_TIMEOUT(bulk, mpsc_tombstone_ends_a_batch, 60)
{
	struct baton_ring_params prm = mp_params(16, 2);
	struct baton_mpsc_loss loss = { 0, 0 };
	struct baton_mpsc_stats st;
	uint64_t in[3 * 2], out[16 * 2];
	struct baton_ring *c, *pr;
	int64_t end;
	struct bt_sync s;
	uint32_t i;
	pid_t pid;
	int k;

	ASSERT_EQ(0, bt_sync_init(&s));
	ASSERT_EQ(0, baton_ring_create(self->name, &prm, BATON_ROLE_CONSUMER,
				       &c));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_KMOD, &pr));
	for (i = 0; i < 3; i++)
		mp_msg(&in[i * 2], 1, i);
	ASSERT_EQ(3, baton_mpsc_push_bulk16(pr, in, 3, NULL));	/* 0..2 */
	pid = dying_producer(self->name, &s);
	ASSERT_LE(0, pid);
	ASSERT_EQ(0, bt_sync_wait(&s, 20000));			/* ticket 3 */
	for (i = 0; i < 3; i++)
		mp_msg(&in[i * 2], 1, 3 + i);
	ASSERT_EQ(3, baton_mpsc_push_bulk16(pr, in, 3, NULL));	/* 4..6 */
	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, bt_wait_timeout(pid, 20000));

	ASSERT_EQ(3, baton_mpsc_try_pop_bulk16(c, out, 16, &loss));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(((uint64_t)1 << 48) | i, out[i * 2]);
	/*
	 * The kernel writes the tombstone when the consumer parks on the
	 * dead producer's ticket (kmod/ring.c): park, then look again.
	 */
	end = bt_now_ns() + WAIT_NS;
	while ((k = baton_mpsc_try_pop_bulk16(c, out, 16, &loss)) == 0 &&
	       bt_now_ns() < end)
		baton_ring_park(c, 100 * BT_MSEC);
	ASSERT_EQ(BATON_MPSC_LOST, k);
	EXPECT_EQ(3, loss.ticket);
	EXPECT_EQ((uint64_t)pid, loss.pid);
	ASSERT_EQ(3, baton_mpsc_try_pop_bulk16(c, out, 16, &loss));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(((uint64_t)1 << 48) | (3 + i), out[i * 2]);
	EXPECT_EQ(0, baton_mpsc_try_pop_bulk16(c, out, 16, NULL));
	ASSERT_EQ(0, baton_mpsc_stats(c, &st));
	EXPECT_EQ(1, st.tombstones_written);
	EXPECT_EQ(1, st.tombstones_skipped);
	baton_ring_close(pr);
	baton_ring_close(c);
	bt_sync_close(&s);
}

TEST_HARNESS_MAIN
