// SPDX-License-Identifier: MIT
/*
 * Misuse returns an errno, not a crash (issue 12, item 3), on the memfd
 * backend. Built with -DBATON_DEBUG, so the inline fast paths check their
 * handle too (selftests/host/Makefile). Each misuse runs in a child
 * process, so a SIGSEGV or an abort in free() (what these did before) is
 * a failed test with the signal named, not a dead test program.
 *
 * The choice of errno: -EBADF for a handle that is not a live handle of
 * the kind the call takes (closed, or SPSC passed to MPSC), -EINVAL for
 * the wrong role (a pop on a producer, enter before register).
 */
#include <limits.h>

#include "kselftest_harness.h"
#include "common.h"

#ifndef BATON_DEBUG
#error "misuse.c tests the BATON_DEBUG checks: build it with -DBATON_DEBUG"
#endif

FIXTURE(misuse) {
	char name[BATON_NAME_MAX];
	struct baton_ring *sp, *sc;	/* SPSC producer, consumer */
	struct baton_ring *mp, *mc;	/* MPSC producer, consumer */
	struct baton_epoch *d;		/* an epoch handle, not registered */
	struct baton_waitset *ws;
	struct baton_pool *pool;	/* one class of 4 KiB buffers */
	uint64_t buf;			/* a buffer the pool handle owns */
};

static void open_pair(struct __test_metadata *_metadata, const char *name,
		      uint32_t kind, struct baton_ring **p,
		      struct baton_ring **c)
{
	struct baton_ring_params prm = {
		.kind = kind, .slot_count = 4, .slot_size = 64, .mode = 0600,
		.backend = BATON_BACKEND_AUTO,
		.max_producers = kind == BATON_RING_MPSC ? 2 : 0,
	};

	ASSERT_EQ(0, baton_ring_create(name, &prm, BATON_ROLE_CONSUMER, c));
	ASSERT_EQ(0, baton_ring_open(name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_AUTO, p));
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
}

FIXTURE_SETUP(misuse)
{
	struct baton_epoch_params ep = {
		.max_participants = 2, .queue_len = 8, .mode = 0600,
		.backend = BATON_BACKEND_AUTO,
	};
	struct baton_pool_params pp = {
		.nr_classes = 1, .mode = 0600,
		.classes = { { .buf_shift = 12, .count = 8 } },
	};
	char n[BATON_NAME_MAX];

	force_memfd();
	ring_name(n, sizeof(n), "mis.s");
	open_pair(_metadata, n, BATON_RING_SPSC, &self->sp, &self->sc);
	ring_name(n, sizeof(n), "mis.m");
	open_pair(_metadata, n, BATON_RING_MPSC, &self->mp, &self->mc);
	ring_name(self->name, sizeof(self->name), "mis.e");
	ASSERT_EQ(0, baton_epoch_create(self->name, &ep, &self->d));
	baton_epoch_unlink(self->name, BATON_BACKEND_AUTO);
	ASSERT_EQ(0, baton_waitset_create(&self->ws));
	ring_name(n, sizeof(n), "mis.p");
	ASSERT_EQ(0, baton_pool_create(n, &pp, &self->pool));
	baton_pool_unlink(n);
	ASSERT_EQ(0, baton_pool_alloc(self->pool, 4096, &self->buf));
}

FIXTURE_TEARDOWN(misuse)
{
	baton_ring_close(self->sp);
	baton_ring_close(self->sc);
	baton_ring_close(self->mp);
	baton_ring_close(self->mc);
	baton_epoch_close(self->d);
	baton_waitset_destroy(self->ws);
	baton_pool_close(self->pool);
}

typedef long (*misuse_fn)(FIXTURE_DATA(misuse) *self);

/* Run @fn in a child: its return value, or LONG_MIN if it did not return. */
static long in_child(struct __test_metadata *_metadata, misuse_fn fn,
		     FIXTURE_DATA(misuse) *self)
{
	long v = LONG_MIN;
	int pfd[2], st;
	pid_t pid;

	if (pipe(pfd))
		return LONG_MIN;
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		v = fn(self);
		if (write(pfd[1], &v, sizeof(v)) != sizeof(v))
			_exit(3);
		_exit(0);
	}
	close(pfd[1]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		st = -1;
	else if (WIFSIGNALED(st))
		TH_LOG("the misuse died with %s", strsignal(WTERMSIG(st)));
	else if (WEXITSTATUS(st))
		TH_LOG("the misuse exited with %d", WEXITSTATUS(st));
	if (read(pfd[0], &v, sizeof(v)) != sizeof(v))
		v = LONG_MIN;
	close(pfd[0]);
	return v;
}

#define EXPECT_ERRNO(err, fn)						\
	do {								\
		long got_ = in_child(_metadata, fn, self);		\
		EXPECT_EQ((long)(err), got_)				\
			TH_LOG("%s: %ld (%s)", #fn, got_,		\
			       got_ < 0 && got_ > -4096 ?		\
			       strerror((int)-got_) : "no errno");	\
	} while (0)

/* ---- the five of issue 12's Why ---- */

static long spsc_try_pop_on_producer(FIXTURE_DATA(misuse) *self)
{
	uint64_t v;

	return baton_spsc_try_pop(self->sp, &v, sizeof(v));
}

static long mpsc_try_pop_on_producer(FIXTURE_DATA(misuse) *self)
{
	uint64_t v;

	return baton_mpsc_try_pop(self->mp, &v, sizeof(v), NULL);
}

static long mpsc_push_on_spsc(FIXTURE_DATA(misuse) *self)
{
	uint64_t v = 1;

	return baton_mpsc_push(self->sp, &v, sizeof(v));
}

static long epoch_enter_before_register(FIXTURE_DATA(misuse) *self)
{
	return (long)(int64_t)baton_epoch_enter(self->d);
}

static long spsc_try_push_after_close(FIXTURE_DATA(misuse) *self)
{
	uint64_t v = 1;

	baton_ring_close(self->sp);
	return baton_spsc_try_push(self->sp, &v, sizeof(v));
}

static long ring_double_close(FIXTURE_DATA(misuse) *self)
{
	baton_ring_close(self->sc);
	return baton_ring_close(self->sc);
}

TEST_F(misuse, why_try_pop_on_producer)
{
	EXPECT_ERRNO(-EINVAL, spsc_try_pop_on_producer);
	EXPECT_ERRNO(-EINVAL, mpsc_try_pop_on_producer);
}

TEST_F(misuse, why_mpsc_push_on_spsc)
{
	EXPECT_ERRNO(-EBADF, mpsc_push_on_spsc);
}

TEST_F(misuse, why_epoch_enter_before_register)
{
	EXPECT_ERRNO(-EINVAL, epoch_enter_before_register);
}

TEST_F(misuse, why_try_push_after_close)
{
	EXPECT_ERRNO(-EBADF, spsc_try_push_after_close);
}

TEST_F(misuse, why_double_close)
{
	EXPECT_ERRNO(-EBADF, ring_double_close);
}

/* ---- the out-of-line calls: checked in every build ---- */

static long spsc_pop_on_producer(FIXTURE_DATA(misuse) *self)
{
	uint64_t v;

	return baton_spsc_pop(self->sp, &v, sizeof(v), 0);
}

static long spsc_push_on_mpsc(FIXTURE_DATA(misuse) *self)
{
	uint64_t v = 1;

	return baton_spsc_push(self->mp, &v, sizeof(v), 0);
}

static long mpsc_pop_on_spsc(FIXTURE_DATA(misuse) *self)
{
	uint64_t v;

	return baton_mpsc_pop(self->sc, &v, sizeof(v), 0, NULL);
}

static long mpsc_batch_on_consumer(FIXTURE_DATA(misuse) *self)
{
	uint64_t v = 1;

	return baton_mpsc_push_batch(self->mc, &v, sizeof(v), 1);
}

static long mpsc_stats_on_spsc(FIXTURE_DATA(misuse) *self)
{
	struct baton_mpsc_stats st;

	return baton_mpsc_stats(self->sc, &st);
}

static long stats_after_close(FIXTURE_DATA(misuse) *self)
{
	struct baton_ring_stats st;

	baton_ring_close(self->mc);
	return baton_ring_stats(self->mc, &st);
}

static long pop_after_close(FIXTURE_DATA(misuse) *self)
{
	uint64_t v;

	baton_ring_close(self->sc);
	return baton_spsc_pop(self->sc, &v, sizeof(v), 0);
}

static long retire_unregistered(FIXTURE_DATA(misuse) *self)
{
	return baton_epoch_retire(self->d, 1, 0, NULL);
}

static long epoch_double_close(FIXTURE_DATA(misuse) *self)
{
	baton_epoch_close(self->d);
	return baton_epoch_close(self->d);
}

static long register_after_close(FIXTURE_DATA(misuse) *self)
{
	baton_epoch_close(self->d);
	return baton_epoch_register(self->d);
}

static long waitset_double_destroy(FIXTURE_DATA(misuse) *self)
{
	baton_waitset_destroy(self->ws);
	return baton_waitset_destroy(self->ws);
}

static long waitset_add_closed_ring(FIXTURE_DATA(misuse) *self)
{
	baton_ring_close(self->sc);
	return baton_waitset_add_ring(self->ws, self->sc, 1);
}

static long null_handle(FIXTURE_DATA(misuse) *self)
{
	(void)self;
	return baton_ring_close(NULL);
}

/*
 * A pool handle after its close: every call says -EBADF (the inline ones
 * through the library's), a second close does nothing. Before, the close
 * freed the handle: a second one aborted in free(), a wait segfaulted.
 */
static long pool_double_close(FIXTURE_DATA(misuse) *self)
{
	baton_pool_close(self->pool);
	baton_pool_close(self->pool);
	return 0;
}

static long pool_alloc_after_close(FIXTURE_DATA(misuse) *self)
{
	uint64_t h;

	baton_pool_close(self->pool);
	return baton_pool_alloc(self->pool, 4096, &h);
}

static long pool_alloc_wait_after_close(FIXTURE_DATA(misuse) *self)
{
	uint64_t h;

	baton_pool_close(self->pool);
	return baton_pool_alloc_wait(self->pool, 4096, &h, 0);
}

static long pool_free_after_close(FIXTURE_DATA(misuse) *self)
{
	baton_pool_close(self->pool);
	return baton_pool_free(self->pool, self->buf);
}

static long pool_ptr_after_close(FIXTURE_DATA(misuse) *self)
{
	baton_pool_close(self->pool);
	return baton_pool_ptr(self->pool, self->buf) ? 1 : 0;
}

static long pool_send_after_close(FIXTURE_DATA(misuse) *self)
{
	baton_pool_close(self->pool);
	return baton_pool_send(self->sp, self->pool, self->buf, 8, 0);
}

static long pool_recv_after_close(FIXTURE_DATA(misuse) *self)
{
	uint64_t h, len;

	baton_pool_close(self->pool);
	return baton_pool_recv(self->sc, self->pool, &h, &len, 0);
}

/* The library's side of the inline allocation, called as it would be. */
static long pool_reap_paths_after_close(FIXTURE_DATA(misuse) *self)
{
	uint64_t h = self->buf;

	baton_pool_close(self->pool);
	if (__baton_pool_alloc_reaped(self->pool))
		return 1;
	return __baton_pool_alloc_during_reap(self->pool, &h);
}

TEST_F(misuse, pool_handle_after_close)
{
	EXPECT_ERRNO(0, pool_double_close);
	EXPECT_ERRNO(-EBADF, pool_alloc_after_close);
	EXPECT_ERRNO(-EBADF, pool_alloc_wait_after_close);
	EXPECT_ERRNO(-EBADF, pool_free_after_close);
	EXPECT_ERRNO(0, pool_ptr_after_close);
	EXPECT_ERRNO(-EBADF, pool_send_after_close);
	EXPECT_ERRNO(-EBADF, pool_recv_after_close);
	EXPECT_ERRNO(-EBADF, pool_reap_paths_after_close);
}

TEST_F(misuse, out_of_line)
{
	EXPECT_ERRNO(-EINVAL, spsc_pop_on_producer);
	EXPECT_ERRNO(-EBADF, spsc_push_on_mpsc);
	EXPECT_ERRNO(-EBADF, mpsc_pop_on_spsc);
	EXPECT_ERRNO(-EINVAL, mpsc_batch_on_consumer);
	EXPECT_ERRNO(-EBADF, mpsc_stats_on_spsc);
	EXPECT_ERRNO(-EBADF, stats_after_close);
	EXPECT_ERRNO(-EBADF, pop_after_close);
	EXPECT_ERRNO(-EINVAL, retire_unregistered);
	EXPECT_ERRNO(-EBADF, epoch_double_close);
	EXPECT_ERRNO(-EBADF, register_after_close);
	EXPECT_ERRNO(-EBADF, waitset_double_destroy);
	EXPECT_ERRNO(-EBADF, waitset_add_closed_ring);
	EXPECT_ERRNO(-EINVAL, null_handle);
}

/*
 * The quarantine: BATON_CLOSED_KEPT closes later, the first handle is
 * still poisoned memory, not freed memory (ASan would say so).
 */
TEST_F(misuse, close_keeps_poison)
{
	struct baton_waitset *first, *ws;
	int i;

	ASSERT_EQ(0, baton_waitset_create(&first));
	EXPECT_EQ(0, baton_waitset_destroy(first));
	for (i = 0; i < BATON_CLOSED_KEPT - 1; i++) {
		ASSERT_EQ(0, baton_waitset_create(&ws));
		EXPECT_EQ(0, baton_waitset_destroy(ws));
	}
	EXPECT_EQ(-EBADF, baton_waitset_destroy(first));
}

TEST_HARNESS_MAIN
