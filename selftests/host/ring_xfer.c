// SPDX-License-Identifier: MIT
/*
 * Bulk transfer on the memfd backend: millions of self-checking messages
 * between a producer and a consumer, as two threads of one process and
 * as fork()ed processes that each map the ring themselves (or inherit the
 * mapping), over geometries from the smallest ring to 4 KiB slots, with
 * single-message and batch forms. Every run checks order (sequence
 * numbers), content (per-word hashes) and a checksum on both sides, and
 * wraps the ring many times.
 */
#include "kselftest_harness.h"
#include "common.h"

#define BYTES_MAX	SCALE(128ULL << 20)	/* cap per run for big slots */

FIXTURE(xfer) {
	char name[BATON_NAME_MAX];
	struct baton_ring_params p;
	uint64_t count;
};

/*
 * msgs is for the threaded run; the forked runs move half. Tiny rings
 * park and wake on nearly every message, which on a loaded 2-CPU host
 * costs a context switch each, so they move fewer.
 */
FIXTURE_VARIANT(xfer) {
	uint32_t slot_count;
	uint32_t slot_size;
	uint32_t batch;		/* 0: baton_spsc_push/pop */
	uint64_t msgs;
};

/* The smallest ring there is: every other message wraps it. */
FIXTURE_VARIANT_ADD(xfer, tiny_single) {
	.slot_count = 2, .slot_size = 8, .batch = 0, .msgs = 200000,
};

FIXTURE_VARIANT_ADD(xfer, small_batch) {
	.slot_count = 64, .slot_size = 64, .batch = 16, .msgs = 1000000,
};

/* Batches larger than the ring: reserve/peek hand out what there is. */
FIXTURE_VARIANT_ADD(xfer, batch_over_ring) {
	.slot_count = 8, .slot_size = 24, .batch = 13, .msgs = 500000,
};

FIXTURE_VARIANT_ADD(xfer, wide_batch) {
	.slot_count = 1024, .slot_size = 256, .batch = 64, .msgs = 1000000,
};

FIXTURE_VARIANT_ADD(xfer, page_slots) {
	.slot_count = 16, .slot_size = 4096, .batch = 0, .msgs = 2000000,
};

FIXTURE_SETUP(xfer)
{
	force_memfd();
	ring_name(self->name, sizeof(self->name), "xfer");
	self->p.kind = BATON_RING_SPSC;
	self->p.slot_count = variant->slot_count;
	self->p.slot_size = variant->slot_size;
	self->p.mode = 0600;
	self->p.backend = BATON_BACKEND_AUTO;
	self->count = SCALE(variant->msgs);
	if (self->count * variant->slot_size > BYTES_MAX)
		self->count = BYTES_MAX / variant->slot_size;
}

FIXTURE_TEARDOWN(xfer)
{
	baton_ring_unlink(self->name, BATON_BACKEND_AUTO);
}

static void xfer_init(struct xfer *x, struct baton_ring *r, uint64_t count,
		      uint32_t batch)
{
	memset(x, 0, sizeof(*x));
	x->r = r;
	x->count = count;
	x->batch = batch;
	x->timeout_ns = OP_TIMEOUT_NS;
}

TEST_F(xfer, threads)
{
	struct baton_ring *prod, *cons;
	struct baton_ring_stats st;
	struct xfer px, cx;
	pthread_t pt, ct;

	ASSERT_EQ(0, baton_ring_create(self->name, &self->p,
				       BATON_ROLE_PRODUCER, &prod));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_AUTO, &cons));
	xfer_init(&px, prod, self->count, variant->batch);
	xfer_init(&cx, cons, self->count, variant->batch);
	ASSERT_EQ(0, pthread_create(&ct, NULL, consume_thread, &cx));
	ASSERT_EQ(0, pthread_create(&pt, NULL, produce_thread, &px));
	ASSERT_EQ(0, pthread_join(pt, NULL));
	ASSERT_EQ(0, pthread_join(ct, NULL));

	EXPECT_EQ(0, px.err) TH_LOG("producer stopped at %llu",
				    (unsigned long long)px.bad_seq);
	EXPECT_EQ(0, cx.err) TH_LOG("consumer stopped at %llu",
				    (unsigned long long)cx.bad_seq);
	EXPECT_EQ(px.sum, cx.sum);
	ASSERT_EQ(0, baton_ring_stats(cons, &st));
	EXPECT_EQ(self->count, st.head);
	EXPECT_EQ(self->count, st.tail);
	TH_LOG("%llu msgs; producer parks %llu wakes %llu, consumer parks %llu wakes %llu",
	       (unsigned long long)self->count,
	       (unsigned long long)prod->park_calls,
	       (unsigned long long)prod->wake_calls,
	       (unsigned long long)cons->park_calls,
	       (unsigned long long)cons->wake_calls);
	baton_ring_close(prod);
	baton_ring_close(cons);
}

/*
 * One side in a child process. With inherit, the child uses the handle
 * (and mapping) it inherited; otherwise it opens the ring by name and
 * maps the shm file itself.
 */
static int run_forked(struct __test_metadata *_metadata, const char *name,
		      const struct baton_ring_params *p, uint64_t count,
		      uint32_t batch, int child_role, int inherit)
{
	int parent_role = child_role == BATON_ROLE_PRODUCER ?
			  BATON_ROLE_CONSUMER : BATON_ROLE_PRODUCER;
	struct baton_ring *mine, *theirs = NULL;
	struct child_report *rep = report_page();
	struct xfer x;
	pid_t pid;
	int code;

	if (!rep)
		return -ENOMEM;
	if (baton_ring_create(name, p, parent_role, &mine))
		return -EIO;
	if (inherit && baton_ring_open(name, child_role, BATON_BACKEND_AUTO,
				       &theirs))
		return -EIO;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct baton_ring *r = theirs;

		if (!inherit && baton_ring_open(name, child_role,
						BATON_BACKEND_AUTO, &r))
			_exit(2);
		/* Not the same mapping the parent uses. */
		xfer_init(&x, r, count, batch);
		if (child_role == BATON_ROLE_PRODUCER)
			produce(&x);
		else
			consume(&x);
		rep->sum = x.sum;
		rep->err = x.err;
		rep->bad_seq = x.bad_seq;
		rep->park_calls = r->park_calls;
		rep->done = 1;
		baton_ring_close(r);
		_exit(x.err ? 1 : 0);
	}
	/* Our copy of the child's handle is of no use to us. */
	baton_ring_close(theirs);
	xfer_init(&x, mine, count, batch);
	if (parent_role == BATON_ROLE_PRODUCER)
		produce(&x);
	else
		consume(&x);
	code = wait_child(pid);

	EXPECT_EQ(0, x.err) TH_LOG("parent stopped at %llu",
				   (unsigned long long)x.bad_seq);
	EXPECT_EQ(0, code);
	EXPECT_EQ(1, rep->done);
	EXPECT_EQ(0, rep->err) TH_LOG("child stopped at %llu",
				      (unsigned long long)rep->bad_seq);
	EXPECT_EQ(x.sum, rep->sum);
	EXPECT_EQ(count, __atomic_load_n(mine->head, __ATOMIC_ACQUIRE));
	EXPECT_EQ(count, __atomic_load_n(mine->tail, __ATOMIC_ACQUIRE));
	baton_ring_close(mine);
	munmap(rep, 4096);
	return 0;
}

TEST_F(xfer, fork_child_consumer)
{
	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow memory across processes");
	ASSERT_EQ(0, run_forked(_metadata, self->name, &self->p,
				self->count / 2, variant->batch,
				BATON_ROLE_CONSUMER, 0));
}

TEST_F(xfer, fork_child_producer)
{
	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow memory across processes");
	ASSERT_EQ(0, run_forked(_metadata, self->name, &self->p,
				self->count / 2, variant->batch,
				BATON_ROLE_PRODUCER, 0));
}

TEST_F(xfer, fork_inherited_handle)
{
	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow memory across processes");
	ASSERT_EQ(0, run_forked(_metadata, self->name, &self->p,
				self->count / 4, variant->batch,
				BATON_ROLE_CONSUMER, 1));
}

TEST_HARNESS_MAIN
