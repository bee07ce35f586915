// SPDX-License-Identifier: MIT
/*
 * The return convention of <baton.h>, function family by function family
 * (memfd backend): a single operation returns exactly 0 on success and a
 * negative errno on failure; a batch returns the count it moved, or a
 * negative errno. Each test makes one call of every exported function of
 * its family succeed and one fail, and asserts the exact value, so a
 * function that drifts back to "1 on success" fails here.
 */
#include "kselftest_harness.h"
#include "common.h"

#define MSG 8

static struct baton_ring_params params(uint32_t kind, uint32_t slots)
{
	struct baton_ring_params p = {
		.kind = kind, .slot_count = slots, .slot_size = 64,
		.mode = 0600, .backend = BATON_BACKEND_AUTO,
		.max_producers = kind == BATON_RING_MPSC ? 2 : 0,
	};

	return p;
}

FIXTURE(conv) {
	char name[BATON_NAME_MAX];
	struct baton_ring *p, *c;
};

FIXTURE_SETUP(conv)
{
	force_memfd();
	ring_name(self->name, sizeof(self->name), "conv");
	self->p = self->c = NULL;
}

FIXTURE_TEARDOWN(conv)
{
	if (self->p)
		baton_ring_close(self->p);
	if (self->c)
		baton_ring_close(self->c);
	baton_ring_unlink(self->name, BATON_BACKEND_AUTO);
	baton_epoch_unlink(self->name, BATON_BACKEND_AUTO);
}

static int pair(const char *name, uint32_t kind, uint32_t slots,
		struct baton_ring **p, struct baton_ring **c)
{
	struct baton_ring_params prm = params(kind, slots);
	int ret = baton_ring_create(name, &prm, BATON_ROLE_CONSUMER, c);

	if (ret)
		return ret;
	return baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_AUTO,
			       p);
}

/* create, open, unlink, fd, stats, park, backend, version */
TEST_F(conv, ring_setup)
{
	struct baton_ring_params bad = params(BATON_RING_SPSC, 12);
	struct baton_ring_stats st;
	struct baton_ring *x;

	EXPECT_EQ(-EINVAL, baton_ring_create(self->name, &bad,
					     BATON_ROLE_PRODUCER, &x));
	EXPECT_EQ(-ENOENT, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
					   BATON_BACKEND_AUTO, &x));
	ASSERT_EQ(0, pair(self->name, BATON_RING_SPSC, 8, &self->p,
			  &self->c));
	EXPECT_EQ(-EBUSY, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
					  BATON_BACKEND_AUTO, &x));
	EXPECT_LE(0, baton_ring_fd(self->p));
	EXPECT_EQ(0, baton_ring_stats(self->p, &st));
	EXPECT_EQ(-EINVAL, baton_ring_stats(self->p, NULL));
	EXPECT_EQ(-ETIMEDOUT, baton_ring_park(self->c, 0));
	ASSERT_EQ(0, baton_spsc_try_push(self->p, "m", 1));
	EXPECT_EQ(0, baton_ring_park(self->c, 0));
	EXPECT_EQ(BATON_BACKEND_MEMFD, baton_backend_resolve(BATON_BACKEND_AUTO));
	EXPECT_EQ(-EINVAL, baton_backend_resolve(77));
	/* Queries, exempt from the convention: baton_version() is a number. */
	EXPECT_EQ((uint32_t)BATON_VERSION_NUMBER, baton_version());
	EXPECT_EQ(0, baton_abi_version(NULL, NULL));
	EXPECT_EQ(0, baton_ring_unlink(self->name, BATON_BACKEND_AUTO));
	EXPECT_EQ(-ENOENT, baton_ring_unlink(self->name, BATON_BACKEND_AUTO));
}

/* The SPSC single-message forms, blocking and not: 0, never 1. */
TEST_F(conv, spsc_single)
{
	uint64_t v = 7;
	char big[65] = { 0 };	/* one byte more than a slot */

	ASSERT_EQ(0, pair(self->name, BATON_RING_SPSC, 2, &self->p,
			  &self->c));
	EXPECT_EQ(-EAGAIN, baton_spsc_try_pop(self->c, &v, MSG));
	EXPECT_EQ(-ETIMEDOUT, baton_spsc_pop(self->c, &v, MSG, 0));
	EXPECT_EQ(0, baton_spsc_try_push(self->p, &v, MSG));
	EXPECT_EQ(0, baton_spsc_push(self->p, &v, MSG, -1));
	EXPECT_EQ(-EAGAIN, baton_spsc_try_push(self->p, &v, MSG));
	EXPECT_EQ(-ETIMEDOUT, baton_spsc_push(self->p, &v, MSG, 0));
	EXPECT_EQ(-EINVAL, baton_spsc_push(self->p, big, sizeof(big), 0));
	EXPECT_EQ(0, baton_spsc_try_pop(self->c, &v, MSG));
	EXPECT_EQ(0, baton_spsc_pop(self->c, &v, MSG, -1));
}

/* The SPSC batches: the count. */
TEST_F(conv, spsc_batch)
{
	uint64_t m[4 * 8] = { 1, 2, 3, 4 }, idx;

	ASSERT_EQ(0, pair(self->name, BATON_RING_SPSC, 4, &self->p,
			  &self->c));
	EXPECT_EQ(-ETIMEDOUT, baton_spsc_cons_peek_wait(self->c, 2, &idx, 0));
	EXPECT_EQ(4, baton_spsc_prod_reserve_wait(self->p, 4, &idx, 0));
	EXPECT_EQ(3, baton_spsc_try_push_bulk(self->p, m, MSG, 3));
	EXPECT_EQ(1, baton_spsc_try_push_bulk8(self->p, m, 3));
	EXPECT_EQ(0, baton_spsc_try_push_bulk8(self->p, m, 3));
	EXPECT_EQ(-ETIMEDOUT, baton_spsc_prod_reserve_wait(self->p, 1, &idx,
							   0));
	EXPECT_EQ(-EINVAL, baton_spsc_try_push_bulk(self->p, m, 65, 1));
	EXPECT_EQ(4, baton_spsc_cons_peek_wait(self->c, 8, &idx, -1));
	EXPECT_EQ(2, baton_spsc_try_pop_bulk(self->c, m, MSG, 2));
	EXPECT_EQ(2, baton_spsc_try_pop_bulk8(self->c, m, 4));
	EXPECT_EQ(0, baton_spsc_try_pop_bulk8(self->c, m, 4));
}

/* The MPSC single-message forms. */
TEST_F(conv, mpsc_single)
{
	struct baton_mpsc_stats st;
	uint64_t v = 7, idx;

	ASSERT_EQ(0, pair(self->name, BATON_RING_MPSC, 2, &self->p,
			  &self->c));
	EXPECT_EQ(-EAGAIN, baton_mpsc_try_pop(self->c, &v, MSG, NULL));
	EXPECT_EQ(-EAGAIN, baton_mpsc_cons_peek(self->c, &idx));
	EXPECT_EQ(-ETIMEDOUT, baton_mpsc_pop(self->c, &v, MSG, 0, NULL));
	EXPECT_EQ(0, baton_mpsc_try_push(self->p, &v, MSG));
	EXPECT_EQ(0, baton_mpsc_push(self->p, &v, MSG));
	EXPECT_EQ(-EAGAIN, baton_mpsc_try_push(self->p, &v, MSG));
	EXPECT_EQ(-ETIMEDOUT, baton_mpsc_push_timeout(self->p, &v, MSG, 0));
	EXPECT_EQ(-EINVAL, baton_mpsc_push(self->p, &v, 65));
	EXPECT_EQ(0, baton_mpsc_cons_peek(self->c, &idx));
	EXPECT_EQ(0, baton_mpsc_try_pop(self->c, &v, MSG, NULL));
	EXPECT_EQ(0, baton_mpsc_pop(self->c, &v, MSG, -1, NULL));
	EXPECT_EQ(0, baton_mpsc_push_timeout(self->p, &v, MSG, -1));
	EXPECT_EQ(0, baton_mpsc_push_full(self->p, &v, MSG));
	EXPECT_EQ(0, baton_mpsc_pop(self->c, &v, MSG, -1, NULL));
	/* tickets 0..3 taken, 0..2 popped: the slot of ticket 4 is free */
	EXPECT_EQ(0, baton_mpsc_prod_wait(self->p, 4));
	EXPECT_EQ(0, baton_mpsc_stats(self->c, &st));
	EXPECT_EQ(-EINVAL, baton_mpsc_stats(self->c, NULL));
}

/* The MPSC batches: the count, 0 when nothing is there to pop. */
TEST_F(conv, mpsc_batch)
{
	uint64_t m[4 * 8] = { 1, 2, 3, 4 };
	uint32_t published = 99;

	ASSERT_EQ(0, pair(self->name, BATON_RING_MPSC, 8, &self->p,
			  &self->c));
	EXPECT_EQ(0, baton_mpsc_try_pop_bulk(self->c, m, MSG, 4, NULL));
	EXPECT_EQ(2, baton_mpsc_push_batch(self->p, m, MSG, 2));
	EXPECT_EQ(2, baton_mpsc_push_batch_n(self->p, m, MSG, 2, &published));
	EXPECT_EQ(2U, published);
	EXPECT_EQ(3, baton_mpsc_push_bulk(self->p, m, MSG, 3, &published));
	EXPECT_EQ(3U, published);
	EXPECT_EQ(1, baton_mpsc_push_bulk8(self->p, m, 1, NULL));
	EXPECT_EQ(-EINVAL, baton_mpsc_push_batch(self->p, m, MSG, 0));
	EXPECT_EQ(-EINVAL, baton_mpsc_push_bulk(self->p, m, MSG, 9, NULL));
	EXPECT_EQ(4, baton_mpsc_try_pop_bulk(self->c, m, MSG, 4, NULL));
	EXPECT_EQ(4, baton_mpsc_try_pop_bulk8(self->c, m, 4, NULL));
	EXPECT_EQ(0, baton_mpsc_try_pop_bulk8(self->c, m, 4, NULL));
	EXPECT_EQ(-EINVAL, baton_mpsc_try_pop_bulk(self->c, m, MSG, 0, NULL));
}

/* Epoch domains: setup, register, retire, poll, synchronize, collect. */
TEST_F(conv, epoch)
{
	struct baton_epoch_params prm = {
		.max_participants = 2, .queue_len = 8, .mode = 0600,
		.backend = BATON_BACKEND_AUTO,
	};
	struct baton_epoch *d, *r, *x;
	struct baton_waitset_event ev;
	struct baton_waitset *ws;
	struct baton_epoch_stats st;
	uint64_t e, f, done;

	prm.queue_len = 12;
	EXPECT_EQ(-EINVAL, baton_epoch_create(self->name, &prm, &d));
	prm.queue_len = 8;
	EXPECT_EQ(-ENOENT, baton_epoch_open(self->name, BATON_BACKEND_AUTO,
					    &d));
	ASSERT_EQ(0, baton_epoch_create(self->name, &prm, &d));
	ASSERT_EQ(0, baton_epoch_open(self->name, BATON_BACKEND_AUTO, &r));
	EXPECT_EQ(-EINVAL, baton_epoch_retire(d, 1, 0, &e));
	EXPECT_EQ(0, baton_epoch_register(d));
	EXPECT_EQ(0, d->index);
	EXPECT_EQ(-EBUSY, baton_epoch_register(d));
	EXPECT_EQ(0, baton_epoch_register(r));
	EXPECT_EQ(1, r->index);
	ASSERT_EQ(0, baton_epoch_open(self->name, BATON_BACKEND_AUTO, &x));
	EXPECT_EQ(-ENOSPC, baton_epoch_register(x));
	baton_epoch_close(x);
	EXPECT_LE(0, baton_epoch_fd(d));
	EXPECT_EQ(0, baton_epoch_stats(d, &st));

	/* a reader inside: the epoch retired at is not quiescent yet */
	baton_epoch_enter(r);
	ASSERT_EQ(0, baton_epoch_retire(d, 1, 0, &e));
	EXPECT_EQ(-EAGAIN, baton_epoch_poll(d, e));
	EXPECT_EQ(-ETIMEDOUT, baton_epoch_synchronize(d, e, 0, NULL));
	EXPECT_EQ(-EINVAL, baton_epoch_poll(d, baton_epoch_global(d) + 5));
	baton_epoch_exit(r);
	EXPECT_EQ(0, baton_epoch_collect(d, &f, &done));
	EXPECT_EQ(0, baton_epoch_poll(d, e));
	ASSERT_EQ(0, baton_waitset_create(&ws));
	EXPECT_EQ(0, baton_waitset_add_epoch(ws, d, e, 9));
	EXPECT_EQ(-EINVAL, baton_waitset_add_epoch(ws, d,
						   baton_epoch_global(d) + 5,
						   10));
	EXPECT_EQ(1, baton_waitset_wait(ws, &ev, 1, 0));
	baton_waitset_destroy(ws);
	EXPECT_EQ(0, baton_epoch_synchronize(d, e, -1, NULL));
	EXPECT_EQ(0, baton_epoch_destroy_sync(d, 2, 0, -1, NULL));
	EXPECT_EQ(-EINVAL, baton_epoch_synchronize(d,
						   baton_epoch_global(d) + 5,
						   0, NULL));
	baton_epoch_close(r);
	baton_epoch_close(d);
	EXPECT_EQ(0, baton_epoch_unlink(self->name, BATON_BACKEND_AUTO));
	EXPECT_EQ(-ENOENT, baton_epoch_unlink(self->name, BATON_BACKEND_AUTO));
}

/* Waitsets: single operations, and wait, a batch of events. */
TEST_F(conv, waitset)
{
	struct baton_waitset_event ev[2];
	struct baton_waitset *ws;
	uint64_t v = 1;

	EXPECT_EQ(-EINVAL, baton_waitset_create(NULL));
	ASSERT_EQ(0, baton_waitset_create(&ws));
	EXPECT_EQ(-EINVAL, baton_waitset_wait(ws, ev, 2, 0));
	ASSERT_EQ(0, pair(self->name, BATON_RING_SPSC, 2, &self->p,
			  &self->c));
	EXPECT_EQ(0, baton_waitset_add_ring(ws, self->c, 5));
	EXPECT_EQ(-EEXIST, baton_waitset_add_ring(ws, self->c, 5));
	EXPECT_EQ(-ETIMEDOUT, baton_waitset_wait(ws, ev, 2, 0));
	ASSERT_EQ(0, baton_spsc_try_push(self->p, &v, MSG));
	EXPECT_EQ(1, baton_waitset_wait(ws, ev, 2, -1));
	EXPECT_EQ(0, baton_waitset_remove(ws, 5));
	EXPECT_EQ(-ENOENT, baton_waitset_remove(ws, 5));
	baton_waitset_destroy(ws);
}

TEST_HARNESS_MAIN
