// SPDX-License-Identifier: GPL-2.0
/*
 * timens: the clocks of a caller in a time namespace.
 *
 * A time namespace shifts what its tasks read from CLOCK_MONOTONIC (a
 * container restored by CRIU on a host up for less time runs days
 * ahead). Every absolute deadline a baton ioctl takes is the caller's
 * CLOCK_MONOTONIC, and so is the free time the library stamps on a pool
 * buffer for the decay's ordering. Each test runs its calls in a child
 * of a new time namespace whose monotonic clock is TN_OFFSET_S ahead of
 * the kernel's, under an alarm: a deadline taken on the kernel's clock
 * sleeps for the whole offset (the alarm ends the child, the test fails
 * with 128 + SIGALRM).
 *
 * Checked: a park (BATON_IOC_PARK), an epoch synchronize, a name wait and
 * a pool wait, each with a 50 ms timeout, return ETIMEDOUT; a pool's
 * decay gives back buffers freed from inside the namespace.
 */
#include "common.h"
#include "baton_epoch.h"

#include <fcntl.h>
#include <sched.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080
#endif

#define TN_OFFSET_S	100000		/* a restored container: a day ahead */
#define TN_TIMEOUT_NS	(50 * BT_MSEC)
#define TN_ALARM_S	10
#define TN_WAIT_MS	30000

/* Child exit codes. */
enum {
	TN_OK = 0,
	TN_SETUP = 10,
	TN_WRONG,		/* the call returned something else */
	TN_NOT_DECAYED,
};

/*
 * Enter a new time namespace TN_OFFSET_S ahead and fork into it (the
 * caller itself stays in its own). 1: no time namespaces here; 0 with
 * *@pid set: the parent; -1 after the fork: the child.
 */
static int tn_fork_ahead(pid_t *pid)
{
	char offs[64];
	int fd, len;

	if (unshare(CLONE_NEWTIME))
		return 1;
	fd = open("/proc/self/timens_offsets", O_WRONLY);
	len = snprintf(offs, sizeof(offs), "monotonic %d 0\n", TN_OFFSET_S);
	if (fd < 0 || write(fd, offs, (size_t)len) != len)
		return 1;
	close(fd);
	*pid = fork();
	if (*pid < 0)
		return 1;
	return *pid ? 0 : -1;
}

/* Run @fn in a child ahead by TN_OFFSET_S; its exit code, or skip. */
#define TN_RUN(fn, arg) ({						\
	pid_t _pid;							\
	int _r = tn_fork_ahead(&_pid);					\
	if (_r > 0)							\
		SKIP(return, "no time namespaces (CONFIG_TIME_NS)");	\
	if (_r < 0) {							\
		alarm(TN_ALARM_S);					\
		_exit(fn(arg));						\
	}								\
	bt_wait_timeout(_pid, TN_WAIT_MS);				\
})

/* The child's clock is ahead of its parent's by the offset. */
static int tn_clock_is_ahead(const void *unused)
{
	(void)unused;
	return bt_now_ns() > (int64_t)TN_OFFSET_S * BT_NSEC ? TN_OK :
							       TN_SETUP;
}

static int tn_park(const void *name)
{
	struct baton_ring *r;
	int rc;

	if (baton_ring_open(name, BATON_ROLE_CONSUMER, BATON_BACKEND_KMOD, &r))
		return TN_SETUP;
	rc = baton_ring_park(r, TN_TIMEOUT_NS);
	baton_ring_close(r);
	return rc == -ETIMEDOUT ? TN_OK : TN_WRONG;
}

static int tn_name_wait(const void *name)
{
	struct baton_ring *r;
	int rc = baton_ring_open_timeout(name, BATON_ROLE_CONSUMER,
					 BATON_BACKEND_KMOD, TN_TIMEOUT_NS,
					 &r);

	return rc == -ETIMEDOUT ? TN_OK : TN_WRONG;
}

/* A reader of our own in its section: the synchronize cannot succeed. */
static int tn_synchronize(const void *name)
{
	struct baton_epoch *d;
	uint64_t e;
	int rc;

	if (baton_epoch_open(name, BATON_BACKEND_KMOD, &d) ||
	    baton_epoch_register(d))
		return TN_SETUP;
	baton_epoch_enter(d);
	if (baton_epoch_retire(d, 1, 0, &e))
		return TN_SETUP;
	rc = baton_epoch_synchronize(d, e, TN_TIMEOUT_NS, NULL);
	baton_epoch_exit(d);
	baton_epoch_close(d);
	return rc == -ETIMEDOUT ? TN_OK : TN_WRONG;
}

/* Every buffer taken by the parent: the wait has nothing to get. */
static int tn_pool_wait(const void *name)
{
	struct baton_pool *pool;
	uint64_t h;
	int rc;

	if (baton_pool_open(name, &pool))
		return TN_SETUP;
	rc = baton_pool_alloc_wait(pool, 4096, &h, TN_TIMEOUT_NS);
	baton_pool_close(pool);
	return rc == -ETIMEDOUT ? TN_OK : TN_WRONG;
}

/*
 * Enough frees to overflow the magazine (BATON_POOL_MAG) many times over:
 * the library flushes the overflow to the shared queue, stamping each
 * buffer with its free time, which the decay orders by. At most one
 * magazine's worth stays with the holder.
 */
#define TN_DECAY_BUFS	300
#define TN_DECAY_COUNT	512

/* Free buffers from inside the namespace; the decay must take them. */
static int tn_pool_decay(const void *name)
{
	static uint64_t h[TN_DECAY_BUFS];
	struct baton_pool_info info = { 0 };
	struct baton_pool *pool;
	int i, rounds;

	if (baton_pool_open(name, &pool))
		return TN_SETUP;
	for (i = 0; i < TN_DECAY_BUFS; i++) {
		if (baton_pool_alloc(pool, 4096, &h[i]))
			return TN_SETUP;
		memset(baton_pool_ptr(pool, h[i]), 0x5a, 4096);
	}
	for (i = 0; i < TN_DECAY_BUFS; i++)
		if (baton_pool_free(pool, h[i]))
			return TN_SETUP;
	for (rounds = 0; rounds < 100; rounds++) {
		bt_sleep_ms(50);
		if (baton_pool_info(pool, &info))
			return TN_SETUP;
		if (info.decayed >= TN_DECAY_BUFS - BATON_POOL_MAG)
			break;
	}
	baton_pool_close(pool);
	if (info.decayed >= TN_DECAY_BUFS - BATON_POOL_MAG)
		return TN_OK;
	fprintf(stderr, "# decayed %llu of %d freed after %d rounds\n",
		(unsigned long long)info.decayed, TN_DECAY_BUFS, rounds);
	return TN_NOT_DECAYED;
}

FIXTURE(timens) {
	char name[BATON_NAME_MAX];
};

FIXTURE_SETUP(timens)
{
	BT_REQUIRE_DEV();
	bt_make_name(self->name, sizeof(self->name), "tn");
}

FIXTURE_TEARDOWN(timens)
{
	baton_ring_unlink(self->name, BATON_BACKEND_KMOD);
	baton_epoch_unlink(self->name, BATON_BACKEND_KMOD);
	baton_pool_unlink(self->name);
}

TEST_F_TIMEOUT(timens, the_child_clock_runs_ahead, 60)
{
	EXPECT_EQ(TN_OK, TN_RUN(tn_clock_is_ahead, NULL));
}

TEST_F_TIMEOUT(timens, a_park_keeps_its_timeout, 60)
{
	struct baton_ring_params p = bt_params(8, 64);
	struct baton_ring *prod;

	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_PRODUCER,
				       &prod));
	EXPECT_EQ(TN_OK, TN_RUN(tn_park, self->name));
	baton_ring_close(prod);
}

TEST_F_TIMEOUT(timens, a_name_wait_keeps_its_timeout, 60)
{
	EXPECT_EQ(TN_OK, TN_RUN(tn_name_wait, self->name));
}

TEST_F_TIMEOUT(timens, an_epoch_synchronize_keeps_its_timeout, 60)
{
	struct baton_epoch_params p = { .max_participants = 4,
					.queue_len = 16, .mode = 0600,
					.backend = BATON_BACKEND_KMOD };
	struct baton_epoch *d;

	ASSERT_EQ(0, baton_epoch_create(self->name, &p, &d));
	EXPECT_EQ(TN_OK, TN_RUN(tn_synchronize, self->name));
	baton_epoch_close(d);
}

static struct baton_pool_params tn_pool_params(uint32_t decay_ms,
					      uint32_t count)
{
	struct baton_pool_params p;

	memset(&p, 0, sizeof(p));
	p.nr_classes = 1;
	p.decay_ms = decay_ms;
	p.max_holders = 4;
	p.mode = 0600;
	p.classes[0].buf_shift = 12;
	p.classes[0].count = count;
	return p;
}

TEST_F_TIMEOUT(timens, a_pool_wait_keeps_its_timeout, 60)
{
	struct baton_pool_params p = tn_pool_params(0, 16);
	struct baton_pool *pool;
	uint64_t h[16];
	int i;

	ASSERT_EQ(0, baton_pool_create(self->name, &p, &pool));
	for (i = 0; i < 16; i++)
		ASSERT_EQ(0, baton_pool_alloc(pool, 4096, &h[i]));
	EXPECT_EQ(TN_OK, TN_RUN(tn_pool_wait, self->name));
	baton_pool_close(pool);
}

TEST_F_TIMEOUT(timens, a_pool_decays_what_was_freed_from_inside, 60)
{
	struct baton_pool_params p = tn_pool_params(100, TN_DECAY_COUNT);
	struct baton_pool *pool;

	ASSERT_EQ(0, baton_pool_create(self->name, &p, &pool));
	EXPECT_EQ(TN_OK, TN_RUN(tn_pool_decay, self->name));
	baton_pool_close(pool);
}

TEST_HARNESS_MAIN
