// SPDX-License-Identifier: MIT
/*
 * Names over time on the memfd backend: open-or-create from two
 * processes at once (exactly one creates, both end up on the same ring,
 * many rounds), and open with a timeout that waits for the name, for
 * both orders of start (consumer before producer and after), for rings
 * and epoch domains; the timeout itself, and failures other than a
 * missing name returned at once, and -EMFILE, at once, when the wait can
 * have no inotify instance. Processes, not threads: ASan only.
 */
#include "kselftest_harness.h"
#include "common.h"
#include "baton_epoch.h"

#include <sys/resource.h>

#define RACE_ROUNDS	200
#define WAIT_NS		(10LL * 1000 * 1000 * 1000)

static const struct baton_ring_params spsc = {
	.kind = BATON_RING_SPSC,
	.slot_count = 8,
	.slot_size = 64,
	.mode = 0600,
	.backend = BATON_BACKEND_AUTO,
};

static const struct baton_epoch_params dom = {
	.max_participants = 4,
	.queue_len = 8,
	.mode = 0600,
	.backend = BATON_BACKEND_AUTO,
};

/* Child exit codes: 0 opened, 1 created, anything else a failure. */
static int race_ring_child(int go, const char *name, int role)
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
	/* Both sides on one ring: a message crosses it. */
	if (role == BATON_ROLE_PRODUCER) {
		msg[0] = 0xfeed;
		ret = baton_spsc_push(r, msg, sizeof(msg), WAIT_NS);
	} else {
		ret = baton_spsc_pop(r, msg, sizeof(msg), WAIT_NS);
		if (ret >= 0 && msg[0] != 0xfeed)
			ret = -EPROTO;
	}
	baton_ring_close(r);
	if (ret < 0)
		return 90;
	return created;
}

/* Two children released at once; their exit codes in @codes. */
static void race_two(int (*fn)(int, const char *, int), const char *name,
		     const int roles[2], int codes[2])
{
	int go[2], i, status;
	pid_t pid[2];

	if (pipe(go))
		return;
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		if (pid[i] == 0) {
			close(go[1]);
			_exit(fn(go[0], name, roles[i]));
		}
	}
	close(go[0]);
	(void)!write(go[1], "gg", 2);
	close(go[1]);
	for (i = 0; i < 2; i++) {
		codes[i] = -1;
		if (waitpid(pid[i], &status, 0) == pid[i] && WIFEXITED(status))
			codes[i] = WEXITSTATUS(status);
	}
}

TEST(ring_open_or_create_race_one_creates)
{
	const int roles[2] = { BATON_ROLE_PRODUCER, BATON_ROLE_CONSUMER };
	char name[BATON_NAME_MAX];
	int round, codes[2], creators = 0;

	force_memfd();
	for (round = 0; round < RACE_ROUNDS; round++) {
		ring_name(name, sizeof(name), "ooc");
		race_two(race_ring_child, name, roles, codes);
		ASSERT_TRUE(codes[0] == 0 || codes[0] == 1)
			TH_LOG("round %d producer: exit %d", round, codes[0]);
		ASSERT_TRUE(codes[1] == 0 || codes[1] == 1)
			TH_LOG("round %d consumer: exit %d", round, codes[1]);
		ASSERT_EQ(1, codes[0] + codes[1])
			TH_LOG("round %d: %d creators", round,
			       codes[0] + codes[1]);
		creators += codes[0];
		ASSERT_EQ(0, baton_ring_unlink(name, BATON_BACKEND_AUTO));
	}
	/* Which side won is up to the scheduler; report it, assert nothing. */
	TH_LOG("%d rounds: the producer created %d times", RACE_ROUNDS,
	       creators);
}

static int race_epoch_child(int go, const char *name, int unused)
{
	struct baton_epoch *d;
	int created = -1, ret;
	char c;

	(void)unused;
	if (read(go, &c, 1) != 1)
		return 10;
	ret = baton_epoch_open_or_create(name, &dom, &d, &created);
	if (ret < 0)
		return 20 + (-ret & 63);
	ret = baton_epoch_register(d);
	baton_epoch_close(d);
	return ret < 0 ? 90 : created;
}

TEST(epoch_open_or_create_race_one_creates)
{
	const int roles[2] = { 0, 0 };
	char name[BATON_NAME_MAX];
	int round, codes[2];

	force_memfd();
	for (round = 0; round < RACE_ROUNDS / 2; round++) {
		ring_name(name, sizeof(name), "eoc");
		race_two(race_epoch_child, name, roles, codes);
		ASSERT_TRUE(codes[0] == 0 || codes[0] == 1)
			TH_LOG("round %d: exit %d", round, codes[0]);
		ASSERT_TRUE(codes[1] == 0 || codes[1] == 1)
			TH_LOG("round %d: exit %d", round, codes[1]);
		ASSERT_EQ(1, codes[0] + codes[1]);
		ASSERT_EQ(0, baton_epoch_unlink(name, BATON_BACKEND_AUTO));
	}
}

TEST(open_or_create_opens_what_exists)
{
	struct baton_ring *p, *c;
	char name[BATON_NAME_MAX];
	int created = -1;

	force_memfd();
	ring_name(name, sizeof(name), "ooe");
	ASSERT_EQ(0, baton_ring_open_or_create(name, &spsc,
					       BATON_ROLE_PRODUCER, &p,
					       &created));
	EXPECT_EQ(1, created);
	ASSERT_EQ(0, baton_ring_open_or_create(name, &spsc,
					       BATON_ROLE_CONSUMER, &c,
					       &created));
	EXPECT_EQ(0, created);
	/* The role is taken: EBUSY, not a second ring. */
	EXPECT_EQ(-EBUSY, baton_ring_open_or_create(name, &spsc,
						    BATON_ROLE_CONSUMER, &c,
						    NULL));
	baton_ring_close(c);
	baton_ring_close(p);
	EXPECT_EQ(0, baton_ring_unlink(name, BATON_BACKEND_AUTO));
}

/* The side that starts second (or first): opens with a timeout, pops. */
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
				      BATON_BACKEND_AUTO, WAIT_NS, &r);
	if (ret < 0)
		return 20 + (-ret & 63);
	ret = baton_spsc_pop(r, msg, sizeof(msg), WAIT_NS);
	baton_ring_close(r);
	return ret < 0 ? 90 : msg[0] == 0xbeef ? 0 : 91;
}

static void produce_one(struct __test_metadata *_metadata, const char *name)
{
	struct baton_ring *r;
	uint64_t msg[8] = { 0xbeef };

	ASSERT_EQ(0, baton_ring_create(name, &spsc, BATON_ROLE_PRODUCER, &r));
	ASSERT_LE(0, baton_spsc_push(r, msg, sizeof(msg), WAIT_NS));
	/* The consumer drains what was pushed before it sees EPIPE. */
	baton_ring_close(r);
}

static int child_exit(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST(consumer_before_producer)
{
	char name[BATON_NAME_MAX], c;
	int ready[2];
	pid_t pid;

	force_memfd();
	ring_name(name, sizeof(name), "cbp");
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
	/* Give the consumer time to reach its wait; either order is
	 * correct, this only makes "consumer first" the likely one.
	 */
	usleep(100 * 1000);
	produce_one(_metadata, name);
	EXPECT_EQ(0, child_exit(pid));
	EXPECT_EQ(0, baton_ring_unlink(name, BATON_BACKEND_AUTO));
}

TEST(consumer_after_producer)
{
	char name[BATON_NAME_MAX];
	pid_t pid;

	force_memfd();
	ring_name(name, sizeof(name), "cap");
	produce_one(_metadata, name);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(timed_consumer(name, -1));
	EXPECT_EQ(0, child_exit(pid));
	EXPECT_EQ(0, baton_ring_unlink(name, BATON_BACKEND_AUTO));
}

/* Before this API a consumer that came first had only this answer. */
TEST(plain_open_of_missing_name_enoent)
{
	struct baton_ring *r;

	force_memfd();
	EXPECT_EQ(-ENOENT, baton_ring_open("t.never.created",
					   BATON_ROLE_CONSUMER,
					   BATON_BACKEND_AUTO, &r));
}

TEST(timeout_passes)
{
	struct baton_ring *r;
	struct baton_epoch *d;
	char name[BATON_NAME_MAX], other[BATON_NAME_MAX];
	uint64_t t0;

	force_memfd();
	ring_name(name, sizeof(name), "tmo");
	ring_name(other, sizeof(other), "tmo");
	EXPECT_EQ(-ETIMEDOUT, baton_ring_open_timeout(name,
						      BATON_ROLE_CONSUMER,
						      BATON_BACKEND_AUTO, 0,
						      &r));
	/* Another name appearing meanwhile does not end the wait. */
	ASSERT_EQ(0, baton_ring_create(other, &spsc, BATON_ROLE_PRODUCER, &r));
	t0 = now_ns();
	EXPECT_EQ(-ETIMEDOUT, baton_ring_open_timeout(name,
						      BATON_ROLE_CONSUMER,
						      BATON_BACKEND_AUTO,
						      50 * 1000 * 1000, &r));
	TH_LOG("50 ms timeout returned after %llu us",
	       (unsigned long long)(now_ns() - t0) / 1000);
	EXPECT_LE(t0 + 50 * 1000 * 1000, now_ns());	/* not before it */
	EXPECT_EQ(-ETIMEDOUT, baton_epoch_open_timeout(name,
						       BATON_BACKEND_AUTO,
						       20 * 1000 * 1000, &d));
	baton_ring_close(r);
	EXPECT_EQ(0, baton_ring_unlink(other, BATON_BACKEND_AUTO));
}

/* Only a missing name is waited for: a taken role fails at once. */
TEST(other_errors_do_not_wait)
{
	struct baton_ring *p, *c1, *c2;
	char name[BATON_NAME_MAX];

	force_memfd();
	ring_name(name, sizeof(name), "oth");
	ASSERT_EQ(0, baton_ring_create(name, &spsc, BATON_ROLE_PRODUCER, &p));
	ASSERT_EQ(0, baton_ring_open(name, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_AUTO, &c1));
	EXPECT_EQ(-EBUSY, baton_ring_open_timeout(name, BATON_ROLE_CONSUMER,
						  BATON_BACKEND_AUTO, -1,
						  &c2));
	EXPECT_EQ(-EINVAL, baton_ring_open_timeout("a/b", BATON_ROLE_CONSUMER,
						   BATON_BACKEND_AUTO, -1,
						   &c2));
	baton_ring_close(c1);
	baton_ring_close(p);
	EXPECT_EQ(0, baton_ring_unlink(name, BATON_BACKEND_AUTO));
}

/*
 * Child: no descriptor left (RLIMIT_NOFILE at what is open now), so the
 * wait's inotify instance cannot be had: -EMFILE at once, not a hang and
 * not -ENOENT; a name that exists needs no instance, yet its open needs
 * a descriptor too, so that one is tried with one descriptor to spare.
 */
static int wait_without_descriptors(const char *missing, const char *there)
{
	struct rlimit rl;
	struct baton_ring *r;
	int probe = dup(0), ret;

	if (probe < 0)
		return 10;
	close(probe);		/* the lowest free number: all below are open */
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 11;
	rl.rlim_cur = (rlim_t)probe;	/* the hard limit stays: raised below */
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return 11;
	ret = baton_ring_open_timeout(missing, BATON_ROLE_CONSUMER,
				      BATON_BACKEND_AUTO, WAIT_NS, &r);
	if (ret != -EMFILE)
		return 20 + (-ret & 63);
	rl.rlim_cur = (rlim_t)probe + 1;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return 12;
	ret = baton_ring_open_timeout(there, BATON_ROLE_CONSUMER,
				      BATON_BACKEND_AUTO, WAIT_NS, &r);
	if (ret)
		return 30 + (-ret & 63);
	baton_ring_close(r);
	return 0;
}

TEST(no_inotify_instance_is_emfile_at_once)
{
	char missing[BATON_NAME_MAX], there[BATON_NAME_MAX];
	struct baton_ring *p;
	int status = -1;
	pid_t pid;

	force_memfd();
	ring_name(missing, sizeof(missing), "emf");
	ring_name(there, sizeof(there), "emf");
	ASSERT_EQ(0, baton_ring_create(there, &spsc, BATON_ROLE_PRODUCER, &p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(wait_without_descriptors(missing, there));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	baton_ring_close(p);
	EXPECT_EQ(0, baton_ring_unlink(there, BATON_BACKEND_AUTO));
}

static int timed_participant(const char *name, int ready)
{
	struct baton_epoch *d;
	int ret;

	if (ready >= 0) {
		(void)!write(ready, "r", 1);
		close(ready);
	}
	ret = baton_epoch_open_timeout(name, BATON_BACKEND_AUTO, WAIT_NS, &d);
	if (ret < 0)
		return 20 + (-ret & 63);
	ret = baton_epoch_register(d);
	baton_epoch_close(d);
	return ret < 0 ? 90 : 0;
}

TEST(epoch_participant_before_and_after_creator)
{
	struct baton_epoch *d;
	char name[BATON_NAME_MAX], c;
	int ready[2], order;
	pid_t pid;

	force_memfd();
	for (order = 0; order < 2; order++) {
		ring_name(name, sizeof(name), "ebp");
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
			usleep(100 * 1000);
			ASSERT_EQ(0, baton_epoch_create(name, &dom, &d));
		}
		EXPECT_EQ(0, child_exit(pid)) TH_LOG("order %d", order);
		baton_epoch_close(d);
		EXPECT_EQ(0, baton_epoch_unlink(name, BATON_BACKEND_AUTO));
	}
}

TEST_HARNESS_MAIN
