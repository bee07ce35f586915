// SPDX-License-Identifier: MIT
/*
 * The bulk copy forms (baton_spsc_try_push_bulk/pop_bulk,
 * baton_mpsc_push_bulk/try_pop_bulk, the sized forms 8..64, and the MPSC
 * consumer's peek_n/release_n) on the memfd backend, under ASan/UBSan and
 * TSan: batches that wrap the ring's end (two copies), partial batches
 * against a full or empty ring, the slot-by-slot copy of messages smaller
 * than their slots, argument checks, a producer whose batch finds only
 * its first slot free (the out-of-line wait), an MPSC consumer batch with
 * a tombstone in the middle (it ends the batch; the next call reports it),
 * and streams between threads with every batch size 1..13.
 *
 * Every message word is a hash of (message number, word), so a wrong,
 * torn, lost, repeated or reordered message fails the check.
 */
#include "kselftest_harness.h"
#include "common.h"

/* Word w of message j. */
static uint64_t word(uint64_t j, uint32_t w)
{
	return mix64(j * 64 + w);
}

static void fill(void *msgs, size_t size, uint64_t first, uint32_t n)
{
	uint64_t *m = msgs;
	uint32_t i, w, words = (uint32_t)(size / 8);

	for (i = 0; i < n; i++)
		for (w = 0; w < words; w++)
			m[(size_t)i * words + w] = word(first + i, w);
}

/* The first message that is wrong, or -1. */
static int64_t bad(const void *msgs, size_t size, uint64_t first, uint32_t n)
{
	const uint64_t *m = msgs;
	uint32_t i, w, words = (uint32_t)(size / 8);

	for (i = 0; i < n; i++)
		for (w = 0; w < words; w++)
			if (m[(size_t)i * words + w] != word(first + i, w))
				return (int64_t)(first + i);
	return -1;
}

static int make_pair(const char *name, uint32_t kind, uint32_t slots,
		     uint32_t slot_size, uint32_t maxp, struct baton_ring **p,
		     struct baton_ring **c)
{
	struct baton_ring_params prm = {
		.kind = kind,
		.slot_count = slots,
		.slot_size = slot_size,
		.mode = 0600,
		.backend = BATON_BACKEND_AUTO,
		.max_producers = maxp,
	};
	int ret = baton_ring_create(name, &prm, BATON_ROLE_CONSUMER, c);

	if (ret)
		return ret;
	return baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_AUTO, p);
}

FIXTURE(bulk) {
	char name[BATON_NAME_MAX];
	struct baton_ring *p, *c;
};

FIXTURE_SETUP(bulk)
{
	force_memfd();
	ring_name(self->name, sizeof(self->name), "bulk");
	self->p = self->c = NULL;
}

FIXTURE_TEARDOWN(bulk)
{
	if (self->p)
		baton_ring_close(self->p);
	if (self->c)
		baton_ring_close(self->c);
	baton_ring_unlink(self->name, BATON_BACKEND_AUTO);
}

/* SPSC, 8 slots of 64 bytes: partial, wrapping, full, empty. */
TEST_F(bulk, spsc_wrap_full_empty)
{
	uint64_t in[16 * 8], out[16 * 8];

	ASSERT_EQ(0, make_pair(self->name, BATON_RING_SPSC, 8, 64, 1,
			       &self->p, &self->c));
	ASSERT_EQ(0, baton_spsc_try_pop_bulk64(self->c, out, 8)); /* empty */
	fill(in, 64, 0, 5);
	ASSERT_EQ(5, baton_spsc_try_push_bulk64(self->p, in, 5));
	ASSERT_EQ(5, baton_spsc_try_pop_bulk64(self->c, out, 8)); /* partial */
	EXPECT_EQ(-1, bad(out, 64, 0, 5));
	/* From slot 5: 3 before the end, 5 after it; 8 asked, 8 fit. */
	fill(in, 64, 5, 10);
	ASSERT_EQ(8, baton_spsc_try_push_bulk64(self->p, in, 10));
	ASSERT_EQ(0, baton_spsc_try_push_bulk64(self->p, in + 64, 2)); /* full */
	ASSERT_EQ(2, baton_spsc_try_pop_bulk64(self->c, out, 2));
	EXPECT_EQ(-1, bad(out, 64, 5, 2));
	/* Room for 2 now (slots 5, 6), and 3 asked: a partial batch. */
	fill(in, 64, 13, 3);
	ASSERT_EQ(2, baton_spsc_try_push_bulk64(self->p, in, 3));
	/* Messages 7..14 sit in slots 7, 0..6: a pop that wraps. */
	ASSERT_EQ(8, baton_spsc_try_pop_bulk64(self->c, out, 16));
	EXPECT_EQ(-1, bad(out, 64, 7, 8));
	ASSERT_EQ(0, baton_spsc_try_pop_bulk64(self->c, out, 16));
}

/* Messages smaller than their slots (slot by slot), and bad arguments. */
TEST_F(bulk, spsc_small_messages_and_args)
{
	uint64_t in[64], out[64], j = 0, got = 0;
	uint32_t round;

	ASSERT_EQ(0, make_pair(self->name, BATON_RING_SPSC, 16, 32, 1,
			       &self->p, &self->c));
	EXPECT_EQ(-EINVAL, baton_spsc_try_push_bulk64(self->p, in, 1));
	EXPECT_EQ(-EINVAL, baton_spsc_try_pop_bulk64(self->c, out, 1));
	EXPECT_EQ(-EINVAL, baton_spsc_try_push_bulk(self->p, in, 40, 1));
	EXPECT_EQ(0, baton_spsc_try_push_bulk16(self->p, in, 0));
	for (round = 0; round < 200; round++) {
		uint32_t n = 1 + round % 13, k;
		size_t size = (round & 1) ? 8 : 24;	/* sized and runtime */
		int pushed = size == 8 ?
			baton_spsc_try_push_bulk8(self->p, in, 0) : 0;

		ASSERT_EQ(0, pushed);
		fill(in, size, j, n);
		pushed = size == 8 ? baton_spsc_try_push_bulk8(self->p, in, n) :
				     baton_spsc_try_push_bulk(self->p, in, size, n);
		ASSERT_LE(0, pushed);
		j += (uint64_t)pushed;
		/* Take them back in the same size, so each check knows it. */
		for (k = 0; k < (uint32_t)pushed;) {
			int popped = size == 8 ?
				baton_spsc_try_pop_bulk8(self->c, out, 64) :
				baton_spsc_try_pop_bulk(self->c, out, size, 64);

			ASSERT_LT(0, popped);
			ASSERT_EQ(-1, bad(out, size, got, (uint32_t)popped));
			got += (uint64_t)popped;
			k += (uint32_t)popped;
		}
	}
	EXPECT_EQ(j, got);
}

/* Bulk and single-message forms interleave on one stream. */
TEST_F(bulk, spsc_mixed_with_single)
{
	uint64_t in[16 * 4], out[16 * 4], v;
	uint64_t j;

	ASSERT_EQ(0, make_pair(self->name, BATON_RING_SPSC, 4, 32, 1,
			       &self->p, &self->c));
	for (j = 0; j < 300; j += 3) {
		fill(in, 32, j, 2);
		ASSERT_EQ(2, baton_spsc_try_push_bulk32(self->p, in, 2));
		fill(in, 32, j + 2, 1);
		ASSERT_EQ(0, baton_spsc_try_push(self->p, in, 32));
		ASSERT_EQ(0, baton_spsc_try_pop(self->c, out, 32));
		ASSERT_EQ(-1, bad(out, 32, j, 1));
		ASSERT_EQ(2, baton_spsc_try_pop_bulk32(self->c, out, 4));
		ASSERT_EQ(-1, bad(out, 32, j + 1, 2));
	}
	ASSERT_EQ(-EAGAIN, baton_spsc_try_pop(self->c, &v, sizeof(v)));
}

struct stream {
	struct baton_ring *r;
	size_t size;
	uint64_t total;
	int mpsc;
	uint64_t errors;
};

static void *stream_producer(void *arg)
{
	struct stream *s = arg;
	uint64_t in[13 * 8], j = 0;
	uint32_t round = 0;

	while (j < s->total) {
		uint32_t n = 1 + round++ % 13;
		int k;

		if (n > s->total - j)
			n = (uint32_t)(s->total - j);
		fill(in, s->size, j, n);
		if (s->mpsc) {
			uint32_t pub;

			if (baton_mpsc_push_bulk(s->r, in, s->size, n, &pub) !=
			    (int)n || pub != n)
				s->errors++;
			j += pub;
			continue;
		}
		k = baton_spsc_try_push_bulk(s->r, in, s->size, n);
		if (k < 0) {
			s->errors++;
			return NULL;
		}
		j += (uint64_t)k;
		if (!k)
			sched_yield();
	}
	return NULL;
}

static void stream(struct __test_metadata *_metadata, struct baton_ring *p,
		   struct baton_ring *c, size_t size, int mpsc)
{
	struct stream s = { .r = p, .size = size, .total = SCALE(200000),
			    .mpsc = mpsc };
	uint64_t out[13 * 8], got = 0;
	uint32_t round = 0;
	pthread_t th;

	ASSERT_EQ(0, pthread_create(&th, NULL, stream_producer, &s));
	while (got < s.total) {
		/* Not the producer's cycle, so batches straddle the end. */
		uint32_t n = 1 + (round++ * 5) % 11;
		int k = mpsc ? baton_mpsc_try_pop_bulk(c, out, size, n, NULL) :
			       baton_spsc_try_pop_bulk(c, out, size, n);

		ASSERT_LE(0, k);
		if (!k) {
			sched_yield();
			continue;
		}
		ASSERT_EQ(-1, bad(out, size, got, (uint32_t)k));
		got += (uint64_t)k;
	}
	pthread_join(th, NULL);
	EXPECT_EQ(0U, s.errors);
}

TEST_F(bulk, spsc_stream_threads)
{
	ASSERT_EQ(0, make_pair(self->name, BATON_RING_SPSC, 16, 64, 1,
			       &self->p, &self->c));
	stream(_metadata, self->p, self->c, 64, 0);
}

TEST_F(bulk, mpsc_stream_threads)
{
	ASSERT_EQ(0, make_pair(self->name, BATON_RING_MPSC, 16, 16, 1,
			       &self->p, &self->c));
	stream(_metadata, self->p, self->c, 16, 1);
}

/* MPSC, 8 slots of 64 bytes: partial, wrapping, argument checks. */
TEST_F(bulk, mpsc_wrap_partial_args)
{
	uint64_t in[16 * 8], out[16 * 8];
	uint32_t pub = 99;

	ASSERT_EQ(0, make_pair(self->name, BATON_RING_MPSC, 8, 64, 1,
			       &self->p, &self->c));
	EXPECT_EQ(-EINVAL, baton_mpsc_push_bulk64(self->p, in, 0, &pub));
	EXPECT_EQ(0U, pub);
	EXPECT_EQ(-EINVAL, baton_mpsc_push_bulk64(self->p, in, 9, NULL));
	EXPECT_EQ(-EINVAL, baton_mpsc_push_bulk(self->p, in, 72, 1, NULL));
	EXPECT_EQ(-EINVAL, baton_mpsc_try_pop_bulk64(self->c, out, 0, NULL));
	EXPECT_EQ(0, baton_mpsc_try_pop_bulk64(self->c, out, 8, NULL));
	fill(in, 64, 0, 5);
	ASSERT_EQ(5, baton_mpsc_push_bulk64(self->p, in, 5, &pub));
	EXPECT_EQ(5U, pub);
	ASSERT_EQ(5, baton_mpsc_try_pop_bulk64(self->c, out, 8, NULL));
	EXPECT_EQ(-1, bad(out, 64, 0, 5));
	/* Tickets 5..12: slots 5, 6, 7, then 0..4: two copies. */
	fill(in, 64, 5, 8);
	ASSERT_EQ(8, baton_mpsc_push_bulk64(self->p, in, 8, &pub));
	EXPECT_EQ(8U, pub);
	EXPECT_EQ(-EAGAIN, baton_mpsc_try_push(self->p, in, 8)); /* full */
	ASSERT_EQ(2, baton_mpsc_try_pop_bulk64(self->c, out, 2, NULL));
	EXPECT_EQ(-1, bad(out, 64, 5, 2));
	ASSERT_EQ(6, baton_mpsc_try_pop_bulk64(self->c, out, 16, NULL));
	EXPECT_EQ(-1, bad(out, 64, 7, 6));
	EXPECT_EQ(0, baton_mpsc_try_pop_bulk64(self->c, out, 8, NULL));
}

/*
 * Write a tombstone for ticket t the way the kernel does for a dead
 * producer (kmod/mpsc.c): the pid into the slot, then the sequence word
 * with BATON_MPSC_TOMB. The test writes it itself so that the tombstone
 * sits exactly where the batch needs it; the VM test
 * (selftests/ring_bulk.c) kills a producer and lets the kernel write it.
 */
static void tombstone(struct baton_ring *pr, uint64_t t, uint64_t pid)
{
	memcpy(baton_ring_slot(pr, t), &pid, sizeof(pid));
	__atomic_store_n(&pr->seq[t & pr->mask], (t + 1) | BATON_MPSC_TOMB,
			 __ATOMIC_RELEASE);
}

/* A tombstone ends a batch: 3 messages, the loss, then the rest. */
TEST_F(bulk, mpsc_batch_stops_at_tombstone)
{
	uint64_t in[8 * 2], out[8 * 2], t;
	struct baton_mpsc_loss loss = { 0, 0 };
	struct baton_mpsc_stats st;

	ASSERT_EQ(0, make_pair(self->name, BATON_RING_MPSC, 8, 16, 1,
			       &self->p, &self->c));
	fill(in, 16, 0, 3);
	ASSERT_EQ(3, baton_mpsc_push_bulk16(self->p, in, 3, NULL));
	t = baton_mpsc_prod_reserve(self->p, 1);
	ASSERT_EQ(3U, t);
	tombstone(self->p, t, 4242);
	baton_mpsc_prod_done(self->p);
	fill(in, 16, 3, 3);
	ASSERT_EQ(3, baton_mpsc_push_bulk16(self->p, in, 3, NULL));

	ASSERT_EQ(3, baton_mpsc_try_pop_bulk16(self->c, out, 8, &loss));
	EXPECT_EQ(-1, bad(out, 16, 0, 3));
	EXPECT_EQ(0U, loss.ticket);	/* untouched: no loss in this batch */
	ASSERT_EQ(BATON_MPSC_LOST, baton_mpsc_try_pop_bulk16(self->c, out, 8, &loss));
	EXPECT_EQ(3U, loss.ticket);
	EXPECT_EQ(4242U, loss.pid);
	ASSERT_EQ(3, baton_mpsc_try_pop_bulk16(self->c, out, 8, &loss));
	EXPECT_EQ(-1, bad(out, 16, 3, 3));
	EXPECT_EQ(0, baton_mpsc_try_pop_bulk16(self->c, out, 8, NULL));
	ASSERT_EQ(0, baton_mpsc_stats(self->c, &st));
	EXPECT_EQ(1U, st.tombstones_skipped);
	EXPECT_EQ(7U, st.head);
}

/* peek_n/release_n by hand: a batch never reaches past a tombstone. */
TEST_F(bulk, mpsc_peek_n_release_n)
{
	uint64_t in[8 * 2], idx = 0;
	int k;

	ASSERT_EQ(0, make_pair(self->name, BATON_RING_MPSC, 8, 16, 1,
			       &self->p, &self->c));
	EXPECT_EQ(0U, baton_mpsc_cons_peek_n(self->c, 8, &idx));
	fill(in, 16, 0, 2);
	ASSERT_EQ(2, baton_mpsc_push_bulk16(self->p, in, 2, NULL));
	tombstone(self->p, baton_mpsc_prod_reserve(self->p, 1), 1);
	baton_mpsc_prod_done(self->p);
	fill(in, 16, 2, 4);
	ASSERT_EQ(4, baton_mpsc_push_bulk16(self->p, in, 4, NULL));
	ASSERT_EQ(2U, baton_mpsc_cons_peek_n(self->c, 8, &idx));
	EXPECT_EQ(0U, idx);
	EXPECT_EQ(-1, bad(baton_ring_slot(self->c, 0), 16, 0, 2));
	baton_mpsc_cons_release_n(self->c, 2);
	EXPECT_EQ(0U, baton_mpsc_cons_peek_n(self->c, 8, &idx));
	k = baton_mpsc_cons_peek(self->c, &idx);
	EXPECT_EQ(BATON_MPSC_LOST, k);
	EXPECT_EQ(2U, idx);
	baton_mpsc_cons_release(self->c);
	/* A peek of more than the ring holds is cut to what is there. */
	ASSERT_EQ(4U, baton_mpsc_cons_peek_n(self->c, 1000, &idx));
	EXPECT_EQ(3U, idx);
	baton_mpsc_cons_release_n(self->c, 4);
	EXPECT_EQ(7U, __atomic_load_n(self->c->head, __ATOMIC_RELAXED));
}

struct late {
	struct baton_ring *p;
	uint64_t first;
	uint32_t n;
	uint32_t published;
	int ret;
};

static void *late_push(void *arg)
{
	struct late *l = arg;
	uint64_t in[8 * 2];

	fill(in, 16, l->first, l->n);
	l->ret = baton_mpsc_push_bulk16(l->p, in, l->n, &l->published);
	return NULL;
}

/*
 * Room for the first ticket of a batch but not its last: the producer
 * takes the tickets and waits slot by slot (out of line) while the
 * consumer frees them; everything arrives once, in order.
 */
TEST_F(bulk, mpsc_batch_waits_for_its_last_slot)
{
	uint64_t in[8 * 2], out[8 * 2], got = 0;
	struct late l = { .first = 6, .n = 8 };
	pthread_t th;

	ASSERT_EQ(0, make_pair(self->name, BATON_RING_MPSC, 8, 16, 1,
			       &self->p, &self->c));
	fill(in, 16, 0, 6);
	ASSERT_EQ(6, baton_mpsc_push_bulk16(self->p, in, 6, NULL));
	l.p = self->p;
	ASSERT_EQ(0, pthread_create(&th, NULL, late_push, &l));
	while (got < 14) {
		int k = baton_mpsc_try_pop_bulk16(self->c, out, 3, NULL);

		if (k == 0) {
			sched_yield();
			continue;
		}
		ASSERT_LT(0, k);
		ASSERT_EQ(-1, bad(out, 16, got, (uint32_t)k));
		got += (uint64_t)k;
	}
	pthread_join(th, NULL);
	EXPECT_EQ(8, l.ret);
	EXPECT_EQ(8U, l.published);
}

TEST_HARNESS_MAIN
