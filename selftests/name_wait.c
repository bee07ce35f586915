// SPDX-License-Identifier: GPL-2.0
/*
 * name_wait: BATON_IOC_NAME_WAIT and the library calls built on it.
 *
 * The ioctl: bad kind, name, flags, a deadline without its flag (EINVAL;
 * the size, reserved and flag rules shared by every struct are in
 * ioctl_abi); an existing name returns at once; a missing one sleeps
 * until its create (ring or domain: the two registries are separate, so
 * a ring of the name does not end a wait for a domain), until the
 * deadline (ETIMEDOUT), or until a signal (EINTR); a name created in
 * another IPC namespace is not the caller's.
 * The library on kmod: a consumer that starts before its producer and
 * one that starts after, both with baton_ring_open_timeout(); the same
 * for a domain; open-or-create raced by two processes, many rounds,
 * exactly one creating each time.
 */
#include "common.h"
#include "baton_epoch.h"

#include <sched.h>

#define WAIT_NS		(10LL * BT_NSEC)
#define RACE_ROUNDS	200
#define RACE_BUDGET_NS	(120 * BT_NSEC)

static int name_wait(const char *name, uint32_t kind, uint32_t flags,
		     uint64_t deadline)
{
	struct baton_name_wait w;
	int dev = bt_dev_open(), rc;

	if (dev < 0)
		return errno;
	memset(&w, 0, sizeof(w));
	w.size = sizeof(w);
	w.flags = flags;
	w.kind = kind;
	w.deadline_ns = deadline;
	snprintf(w.name, sizeof(w.name), "%s", name);
	rc = bt_ioctl(dev, BATON_IOC_NAME_WAIT, &w);
	close(dev);
	return rc;
}

static uint64_t in_ms(long ms)
{
	return (uint64_t)(bt_now_ns() + ms * BT_MSEC);
}

static const struct baton_ring_params spsc = {
	.kind = BATON_RING_SPSC,
	.slot_count = 8,
	.slot_size = 64,
	.mode = 0600,
	.backend = BATON_BACKEND_KMOD,
};

static const struct baton_epoch_params dom = {
	.max_participants = 4,
	.queue_len = 8,
	.mode = 0600,
	.backend = BATON_BACKEND_KMOD,
};

TEST(bad_input_einval)
{
	char name[BATON_NAME_MAX];

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "nwbad");
	EXPECT_EQ(EINVAL, name_wait(name, 0, BATON_NAME_WAIT_DEADLINE,
				    in_ms(1)));
	EXPECT_EQ(EINVAL, name_wait(name, 3, BATON_NAME_WAIT_DEADLINE,
				    in_ms(1)));
	EXPECT_EQ(EINVAL, name_wait("a/b", BATON_NAME_RING,
				    BATON_NAME_WAIT_DEADLINE, in_ms(1)));
	EXPECT_EQ(EINVAL, name_wait("", BATON_NAME_RING,
				    BATON_NAME_WAIT_DEADLINE, in_ms(1)));
	/* A deadline the flag does not validate is a mistake, not ignored. */
	EXPECT_EQ(EINVAL, name_wait(name, BATON_NAME_RING, 0, in_ms(1)));
	EXPECT_EQ(EINVAL, name_wait(name, BATON_NAME_RING, 2, 0));
}

TEST(feature_bit)
{
	struct baton_version v = { .size = sizeof(v) };
	int dev;

	BT_REQUIRE_DEV();
	dev = bt_dev_open();
	ASSERT_LE(0, dev);
	ASSERT_EQ(0, bt_ioctl(dev, BATON_IOC_VERSION, &v));
	EXPECT_TRUE(v.out_features & BATON_FEAT_NAME_WAIT);
	close(dev);
}

TEST(existing_name_returns_at_once)
{
	char name[BATON_NAME_MAX];
	int dev, fd;

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "nwex");
	dev = bt_dev_open();
	ASSERT_LE(0, dev);
	fd = test_ring_create(dev, name, BATON_ROLE_PRODUCER, 4, 64, 0600,
			      NULL);
	close(dev);
	/* Deadline already past: still 0, the name is there. */
	EXPECT_EQ(0, name_wait(name, BATON_NAME_RING,
			       BATON_NAME_WAIT_DEADLINE, 1));
	EXPECT_EQ(0, name_wait(name, BATON_NAME_RING, 0, 0));
	/* Separate registries: no domain of that name. */
	EXPECT_EQ(ETIMEDOUT, name_wait(name, BATON_NAME_EPOCH,
				       BATON_NAME_WAIT_DEADLINE, in_ms(20)));
	close(fd);
	bt_unlink_quiet(name);
}

TEST(missing_name_times_out)
{
	char name[BATON_NAME_MAX];
	int64_t t0;

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "nwto");
	EXPECT_EQ(ETIMEDOUT, name_wait(name, BATON_NAME_RING,
				       BATON_NAME_WAIT_DEADLINE, 0));
	t0 = bt_now_ns();
	EXPECT_EQ(ETIMEDOUT, name_wait(name, BATON_NAME_RING,
				       BATON_NAME_WAIT_DEADLINE, in_ms(50)));
	TH_LOG("50 ms deadline: returned after %lld us",
	       (long long)(bt_now_ns() - t0) / 1000);
	/* Not before it (45: the deadline was taken just before t0). */
	EXPECT_LE(t0 + 45 * BT_MSEC, bt_now_ns());
}

static void on_alarm(int sig)
{
	(void)sig;
}

TEST(signal_interrupts)
{
	struct sigaction sa;
	char name[BATON_NAME_MAX];

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "nwsig");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART */
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	alarm(1);
	EXPECT_EQ(EINTR, name_wait(name, BATON_NAME_RING, 0, 0));
	alarm(0);
}

/*
 * A child that creates @name (ring or domain) once the parent said it
 * waits, and keeps it until the parent's wait returned (an object
 * unlinked before the woken waiter looks again is, rightly, not found);
 * the parent's wait must end with 0.
 */
static int create_later(int go, const char *name, uint32_t kind,
			bool other_ns)
{
	struct baton_epoch *d;
	struct baton_ring *r;
	char c;
	int ret;

	if (read(go, &c, 1) != 1)
		return 10;
	if (other_ns && unshare(CLONE_NEWIPC))
		return 11;
	bt_sleep_ms(50);	/* likely (not surely) after the parent sleeps */
	if (kind == BATON_NAME_RING)
		ret = baton_ring_create(name, &spsc, BATON_ROLE_PRODUCER, &r);
	else
		ret = baton_epoch_create(name, &dom, &d);
	if (ret < 0)
		return 20;
	/* Keep it until the parent's wait is over (it closes the pipe). */
	while (read(go, &c, 1) > 0)
		;
	if (kind == BATON_NAME_RING) {
		baton_ring_close(r);
		baton_ring_unlink(name, BATON_BACKEND_KMOD);
	} else {
		baton_epoch_close(d);
		baton_epoch_unlink(name, BATON_BACKEND_KMOD);
	}
	return 0;
}

static int wait_while_child_creates(const char *name, uint32_t kind,
				    bool other_ns, long ms, int *child)
{
	int go[2], status, rc;
	pid_t pid;

	if (pipe(go))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		_exit(create_later(go[0], name, kind, other_ns));
	}
	close(go[0]);
	(void)!write(go[1], "g", 1);
	rc = name_wait(name, kind, BATON_NAME_WAIT_DEADLINE, in_ms(ms));
	close(go[1]);
	*child = -1;
	if (waitpid(pid, &status, 0) == pid && WIFEXITED(status))
		*child = WEXITSTATUS(status);
	return rc;
}

TEST(woken_by_create)
{
	char name[BATON_NAME_MAX];
	int child;

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "nwring");
	EXPECT_EQ(0, wait_while_child_creates(name,
					      BATON_NAME_RING, false,
					      10000, &child));
	EXPECT_EQ(0, child);
	bt_make_name(name, sizeof(name), "nwdom");
	EXPECT_EQ(0, wait_while_child_creates(name,
					      BATON_NAME_EPOCH, false,
					      10000, &child));
	EXPECT_EQ(0, child);
}

TEST(other_ipc_namespace_not_seen)
{
	char name[BATON_NAME_MAX];
	int child;

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "nwns");
	EXPECT_EQ(ETIMEDOUT, wait_while_child_creates(name,
						      BATON_NAME_RING, true,
						      500, &child));
	EXPECT_EQ(0, child);
}

/* ---- the library on kmod ---- */

static int timed_consumer(const char *name, int ready)
{
	struct baton_ring *r;
	uint64_t msg[8] = { 0 };
	int ret;

	if (ready >= 0) {
		(void)!write(ready, "r", 1);
		close(ready);
	}
	ret = baton_ring_open_timeout(name, BATON_ROLE_CONSUMER,
				      BATON_BACKEND_KMOD, WAIT_NS, &r);
	if (ret < 0)
		return 20 + (-ret & 63);
	ret = baton_spsc_pop(r, msg, sizeof(msg), WAIT_NS);
	baton_ring_close(r);
	return ret < 0 ? 90 : msg[0] == 0xbeef ? 0 : 91;
}

static int produce_one(const char *name)
{
	struct baton_ring *r;
	uint64_t msg[8] = { 0xbeef };
	int ret = baton_ring_create(name, &spsc, BATON_ROLE_PRODUCER, &r);

	if (ret < 0)
		return ret;
	ret = baton_spsc_push(r, msg, sizeof(msg), WAIT_NS);
	/* The consumer drains what was pushed before it sees EPIPE. */
	baton_ring_close(r);
	return ret < 0 ? ret : 0;
}

static int child_exit(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST(consumer_before_and_after_producer)
{
	char name[BATON_NAME_MAX], c;
	int ready[2], order;
	pid_t pid;

	BT_REQUIRE_DEV();
	for (order = 0; order < 2; order++) {
		bt_make_name(name, sizeof(name), "nwcons");
		if (order == 1)
			ASSERT_EQ(0, produce_one(name));
		ASSERT_EQ(0, pipe(ready));
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			close(ready[0]);
			_exit(timed_consumer(name, ready[1]));
		}
		close(ready[1]);
		ASSERT_EQ(1, read(ready[0], &c, 1));
		close(ready[0]);
		if (order == 0) {
			bt_sleep_ms(100);	/* consumer first, likely */
			ASSERT_EQ(0, produce_one(name));
		}
		EXPECT_EQ(0, child_exit(pid)) TH_LOG("order %d", order);
		EXPECT_EQ(0, baton_ring_unlink(name, BATON_BACKEND_KMOD));
	}
}

TEST(plain_open_of_missing_name_enoent)
{
	struct baton_ring *r;
	char name[BATON_NAME_MAX];

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "nwno");
	EXPECT_EQ(-ENOENT, baton_ring_open(name, BATON_ROLE_CONSUMER,
					   BATON_BACKEND_KMOD, &r));
	EXPECT_EQ(-ETIMEDOUT, baton_ring_open_timeout(name,
						      BATON_ROLE_CONSUMER,
						      BATON_BACKEND_KMOD,
						      20 * BT_MSEC, &r));
}

static int timed_participant(const char *name, int ready)
{
	struct baton_epoch *d;
	int ret;

	(void)!write(ready, "r", 1);
	close(ready);
	ret = baton_epoch_open_timeout(name, BATON_BACKEND_KMOD, WAIT_NS, &d);
	if (ret < 0)
		return 20 + (-ret & 63);
	ret = baton_epoch_register(d);
	baton_epoch_close(d);
	return ret < 0 ? 90 : 0;
}

TEST(participant_before_and_after_creator)
{
	struct baton_epoch *d;
	char name[BATON_NAME_MAX], c;
	int ready[2], order;
	pid_t pid;

	BT_REQUIRE_DEV();
	for (order = 0; order < 2; order++) {
		bt_make_name(name, sizeof(name), "nwpart");
		if (order == 1)
			ASSERT_EQ(0, baton_epoch_create(name, &dom, &d));
		ASSERT_EQ(0, pipe(ready));
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			close(ready[0]);
			_exit(timed_participant(name, ready[1]));
		}
		close(ready[1]);
		ASSERT_EQ(1, read(ready[0], &c, 1));
		close(ready[0]);
		if (order == 0) {
			bt_sleep_ms(100);
			ASSERT_EQ(0, baton_epoch_create(name, &dom, &d));
		}
		EXPECT_EQ(0, child_exit(pid)) TH_LOG("order %d", order);
		baton_epoch_close(d);
		EXPECT_EQ(0, baton_epoch_unlink(name, BATON_BACKEND_KMOD));
	}
}

/* Exit 0 opened, 1 created; a message crosses the ring either way. */
static int race_child(int go, const char *name, int role)
{
	struct baton_ring *r;
	uint64_t msg[8] = { 0 };
	int created = -1, ret;
	char c;

	if (read(go, &c, 1) != 1)
		return 10;
	ret = baton_ring_open_or_create(name, &spsc, role, &r, &created);
	if (ret < 0)
		return 20 + (-ret & 63);
	if (role == BATON_ROLE_PRODUCER) {
		msg[0] = 0xfeed;
		ret = baton_spsc_push(r, msg, sizeof(msg), WAIT_NS);
	} else {
		ret = baton_spsc_pop(r, msg, sizeof(msg), WAIT_NS);
		if (ret >= 0 && msg[0] != 0xfeed)
			ret = -EPROTO;
	}
	baton_ring_close(r);
	return ret < 0 ? 90 : created;
}

FIXTURE(race) {
	int unused;
};

FIXTURE_SETUP(race)
{
	BT_REQUIRE_DEV();
}

FIXTURE_TEARDOWN(race)
{
}

/*
 * RACE_ROUNDS rounds, or as many as RACE_BUDGET_NS allows on a slow
 * kernel (the debug kernel under TCG forks slowly); the count is reported.
 */
TEST_F_TIMEOUT(race, open_or_create_one_creates, 300)
{
	const int roles[2] = { BATON_ROLE_PRODUCER, BATON_ROLE_CONSUMER };
	char name[BATON_NAME_MAX];
	int round, i, go[2], codes[2], producer_created = 0;
	int64_t t0 = bt_now_ns();
	pid_t pid[2];

	for (round = 0; round < RACE_ROUNDS &&
	     bt_now_ns() - t0 < RACE_BUDGET_NS; round++) {
		bt_make_name(name, sizeof(name), "nwooc");
		ASSERT_EQ(0, pipe(go));
		for (i = 0; i < 2; i++) {
			pid[i] = fork();
			ASSERT_LE(0, pid[i]);
			if (pid[i] == 0) {
				close(go[1]);
				_exit(race_child(go[0], name, roles[i]));
			}
		}
		close(go[0]);
		ASSERT_EQ(2, write(go[1], "gg", 2));
		close(go[1]);
		for (i = 0; i < 2; i++)
			codes[i] = child_exit(pid[i]);
		ASSERT_TRUE(codes[0] == 0 || codes[0] == 1)
			TH_LOG("round %d producer: exit %d", round, codes[0]);
		ASSERT_TRUE(codes[1] == 0 || codes[1] == 1)
			TH_LOG("round %d consumer: exit %d", round, codes[1]);
		ASSERT_EQ(1, codes[0] + codes[1]) TH_LOG("round %d", round);
		producer_created += codes[0];
		ASSERT_EQ(0, baton_ring_unlink(name, BATON_BACKEND_KMOD));
	}
	TH_LOG("%d rounds: the producer created %d times", round,
	       producer_created);
}

TEST_HARNESS_MAIN
