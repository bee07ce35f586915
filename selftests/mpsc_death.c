// SPDX-License-Identifier: GPL-2.0
/*
 * mpsc_death: producers that die holding tickets, and scribbled words.
 *
 * Owns the tombstone contract: a producer killed after its fetch_add (with
 * or without its claim written) leaves tickets the kernel turns into
 * tombstones once no live claim can cover them; the loss (ticket, pid)
 * reaches the consumer through the library and the counters; a live
 * producer's ticket is never tombstoned, not even while it is between
 * its fetch_add and its claim; kill -9 of a random producer at a random
 * time, 200 times: the consumer never hangs (every wait is bounded), sees
 * no duplicate, gets everything published before the kill, and the
 * losses are reported. Scribbled sequence, tail and claim words give
 * EPROTO or a timeout, never an oops (the runner checks the kernel log).
 * And a consumer killed inside a batch release, between its sequence
 * stores and its head store (mpsc_cases.h, run on memfd by the host
 * tests too): the next consumer resumes behind every slot it freed.
 */
#include "mpsc_common.h"
#include "mpsc_cases.h"

#include <sys/epoll.h>

#include "uring.h"

FIXTURE(mpsc_death) {
	int dev;
	char name[BATON_NAME_MAX];
};

FIXTURE_SETUP(mpsc_death)
{
	BT_REQUIRE_DEV();
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	bt_make_name(self->name, sizeof(self->name), "md");
}

FIXTURE_TEARDOWN(mpsc_death)
{
	if (self->dev > 0) {
		_test_unlink(self->dev, self->name);
		close(self->dev);
	}
}

/*
 * A child that opens a producer, does what @how says, tells the parent
 * and waits to be killed. 0: reserve one ticket; 1: the floor and the
 * fetch_add, but no first/count (killed between I and J).
 */
static pid_t dying_producer(const char *name, int how, struct bt_sync *s)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	{
		struct baton_ring *pr;

		if (baton_ring_open(name, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_KMOD, &pr))
			_exit(3);
		if (how == 0) {
			baton_mpsc_prod_reserve(pr, 1);
		} else {
			pr->claim->floor = __atomic_load_n(pr->tail,
							   __ATOMIC_RELAXED);
			__atomic_fetch_add(pr->tail, 1, __ATOMIC_ACQ_REL);
		}
		bt_sync_post(s);
		pause();
		_exit(4);
	}
}

static void kill_and_reap(struct __test_metadata *_metadata, pid_t pid)
{
	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, bt_wait_timeout(pid, 20000));
}

TEST_F_TIMEOUT(mpsc_death, dead_after_reserve_is_tombstoned, 60)
{
	struct baton_ring_params p = mp_params(4, 2);
	struct baton_mpsc_loss loss = { 0, 0 };
	struct baton_mpsc_stats st;
	struct baton_ring *c, *pr;
	uint64_t m[2];
	struct bt_sync s;
	pid_t pid;

	ASSERT_EQ(0, bt_sync_init(&s));
	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	pid = dying_producer(self->name, 0, &s);
	ASSERT_LE(0, pid);
	ASSERT_EQ(0, bt_sync_wait(&s, 20000));
	/* a live producer after it: its message must still come through */
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_KMOD, &pr));
	mp_msg(m, 1, 0);
	ASSERT_EQ(0, baton_mpsc_push(pr, m, MP_MSG));
	/* alive: ticket 0 is its claim's, nothing is decided */
	EXPECT_EQ(-ETIMEDOUT, baton_mpsc_pop(c, m, sizeof(m), 200 * BT_MSEC,
					     &loss));
	kill_and_reap(_metadata, pid);
	EXPECT_EQ(BATON_MPSC_LOST, baton_mpsc_pop(c, m, sizeof(m),
						  10 * BT_NSEC, &loss));
	EXPECT_EQ(0, loss.ticket);
	EXPECT_EQ((uint64_t)pid, loss.pid);
	ASSERT_EQ(0, baton_mpsc_pop(c, m, sizeof(m), 10 * BT_NSEC, &loss));
	EXPECT_EQ((uint64_t)1 << 48, m[0]);
	ASSERT_EQ(0, baton_mpsc_stats(c, &st));
	EXPECT_EQ(1, st.tombstones_written);
	EXPECT_EQ(0, st.tombstones_unattributed);
	EXPECT_EQ(1, st.tombstones_skipped);
	EXPECT_EQ(1, st.producer_deaths);
	baton_ring_close(pr);
	/* everyone gone, drained: end of stream */
	EXPECT_EQ(-EPIPE, baton_mpsc_pop(c, m, sizeof(m), 10 * BT_NSEC,
					 &loss));
	baton_ring_close(c);
	bt_sync_close(&s);
}

/* Killed between its fetch_add and its claim: the floor names it. */
TEST_F_TIMEOUT(mpsc_death, dead_between_fetch_add_and_claim, 60)
{
	struct baton_ring_params p = mp_params(4, 2);
	struct baton_mpsc_loss loss = { 7, 7 };
	struct baton_ring *c;
	uint64_t m[2];
	struct bt_sync s;
	pid_t pid;

	ASSERT_EQ(0, bt_sync_init(&s));
	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	pid = dying_producer(self->name, 1, &s);
	ASSERT_LE(0, pid);
	ASSERT_EQ(0, bt_sync_wait(&s, 20000));
	/* alive and mid-reserve: undecidable, so the consumer waits */
	EXPECT_EQ(-ETIMEDOUT, baton_mpsc_pop(c, m, sizeof(m), 100 * BT_MSEC,
					     &loss));
	kill_and_reap(_metadata, pid);
	EXPECT_EQ(BATON_MPSC_LOST, baton_mpsc_pop(c, m, sizeof(m),
						  10 * BT_NSEC, &loss));
	EXPECT_EQ(0, loss.ticket);
	EXPECT_EQ((uint64_t)pid, loss.pid);
	EXPECT_EQ(-EPIPE, baton_mpsc_pop(c, m, sizeof(m), 10 * BT_NSEC,
					 &loss));
	baton_ring_close(c);
	bt_sync_close(&s);
}

/*
 * A dead producer's ticket beside a live producer mid-reserve, on ring
 * @name (its consumer already made): *@live stores its floor (0), a child
 * takes ticket 0 and is killed, *@live takes ticket 1 (in *@t) and writes
 * no claim. The dead child's pid, or -1.
 */
static pid_t dead_beside_live_floor(struct __test_metadata *_metadata,
				    const char *name, struct baton_ring **live,
				    uint64_t *t)
{
	struct bt_sync s;
	pid_t pid = -1;

	if (bt_sync_init(&s))
		return -1;
	if (baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_KMOD,
			    live))
		goto out;
	(*live)->claim->floor = 0;	/* step 1 of the live one */
	pid = dying_producer(name, 0, &s);	/* takes ticket 0 */
	if (pid < 0 || bt_sync_wait(&s, 20000)) {
		pid = -1;
		goto out;
	}
	/* step 2 of the live one: ticket 1 */
	*t = __atomic_fetch_add((*live)->tail, 1, __ATOMIC_ACQ_REL);
	kill_and_reap(_metadata, pid);
out:
	bt_sync_close(&s);
	return *t == 1 ? pid : -1;
}

/*
 * A live producer between its fetch_add and its claim, next to a dead
 * one: the dead one's ticket waits while the live floor could cover it,
 * and the live ticket is never tombstoned.
 */
TEST_F_TIMEOUT(mpsc_death, live_mid_reserve_never_tombstoned, 60)
{
	struct baton_ring_params p = mp_params(4, 3);
	struct baton_mpsc_loss loss = { 0, 0 };
	struct baton_mpsc_stats st;
	struct baton_ring *c, *live;
	uint64_t m[2], t = 0;
	pid_t pid;

	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	pid = dead_beside_live_floor(_metadata, self->name, &live, &t);
	ASSERT_LT(0, pid);

	/* ticket 0: the live floor (0) might be its owner: wait */
	EXPECT_EQ(-ETIMEDOUT, baton_mpsc_pop(c, m, sizeof(m), 150 * BT_MSEC,
					     &loss));
	/* step 3: the live claim says [1, 2); ticket 0 is decided */
	__atomic_store_n(&live->claim->first, t, __ATOMIC_RELEASE);
	__atomic_store_n(&live->claim->count, 1, __ATOMIC_RELEASE);
	EXPECT_EQ(BATON_MPSC_LOST, baton_mpsc_pop(c, m, sizeof(m),
						  10 * BT_NSEC, &loss));
	EXPECT_EQ(0, loss.ticket);
	EXPECT_EQ((uint64_t)pid, loss.pid);
	/* ticket 1 is live: never a tombstone, however long we wait */
	EXPECT_EQ(-ETIMEDOUT, baton_mpsc_pop(c, m, sizeof(m), 150 * BT_MSEC,
					     &loss));
	mp_msg(m, 2, 1);
	memcpy(baton_ring_slot(live, t), m, sizeof(m));
	baton_mpsc_prod_publish(live, t);
	baton_mpsc_prod_done(live);
	memset(m, 0, sizeof(m));
	ASSERT_EQ(0, baton_mpsc_pop(c, m, sizeof(m), 10 * BT_NSEC, &loss));
	EXPECT_EQ((uint64_t)2 << 48 | 1, m[0]);
	ASSERT_EQ(0, baton_mpsc_stats(c, &st));
	EXPECT_EQ(1, st.tombstones_written);
	baton_ring_close(live);
	baton_ring_close(c);
}

/* ---- kill -9 at random ---- */

#define KILL_ITERS	200
#define KILL_MSGS	24	/* per producer */
#define KILL_PRODS	2

struct kill_shared {
	uint64_t published[KILL_PRODS];	/* written after each publication */
};

static int kill_producer(const char *name, uint32_t id,
			 struct kill_shared *sh, struct bt_sync *up)
{
	struct baton_ring *pr;
	uint64_t m[2], seq;

	if (baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_KMOD,
			    &pr))
		return 3;
	/* attached: the consumer's end of stream now waits for us */
	bt_sync_post(up);
	for (seq = 0; seq < KILL_MSGS; seq++) {
		mp_msg(m, id, seq);
		if (baton_mpsc_push(pr, m, MP_MSG))
			return 4;
		__atomic_store_n(&sh->published[id], seq + 1,
				 __ATOMIC_RELEASE);
	}
	baton_ring_close(pr);
	return 0;
}

TEST_F_TIMEOUT(mpsc_death, kill9_random_producer_200_times, 300)
{
	struct kill_shared *sh;
	struct bt_sync up;
	uint64_t losses = 0, killed_mid = 0;
	int64_t t0 = bt_now_ns();
	unsigned int seed = (unsigned int)getpid();
	int it;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	ASSERT_EQ(0, bt_sync_init(&up));
	for (it = 0; it < KILL_ITERS; it++) {
		struct baton_ring_params p = mp_params(4, KILL_PRODS);
		uint64_t next[KILL_PRODS] = { 0 }, m[2], got = 0, pub;
		struct baton_mpsc_loss loss;
		struct baton_mpsc_stats st;
		pid_t pid[KILL_PRODS];
		uint32_t victim = rand_r(&seed) % KILL_PRODS;
		uint64_t kill_at = rand_r(&seed) % (KILL_MSGS + 20);
		bool killed = false;
		struct baton_ring *c;
		char name[BATON_NAME_MAX];
		uint32_t i;
		int rc;

		bt_make_name(name, sizeof(name), "k9");
		memset(sh, 0, sizeof(*sh));
		ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_CONSUMER,
					       &c));
		for (i = 0; i < KILL_PRODS; i++) {
			pid[i] = fork();
			ASSERT_LE(0, pid[i]);
			if (!pid[i])
				_exit(kill_producer(name, i, sh, &up));
		}
		for (i = 0; i < KILL_PRODS; i++)
			ASSERT_EQ(0, bt_sync_wait(&up, 20000));
		for (;;) {
			if (!killed && got >= kill_at) {
				if (rand_r(&seed) & 1)
					bt_sleep_ms(rand_r(&seed) % 3);
				kill(pid[victim], SIGKILL);
				killed = true;
			}
			/* bounded: a hang is a failure, not a stuck test */
			rc = baton_mpsc_pop(c, m, sizeof(m), 10 * BT_NSEC,
					    &loss);
			if (rc == BATON_MPSC_LOST) {
				losses++;
				ASSERT_TRUE(killed);
				ASSERT_EQ((uint64_t)pid[victim], loss.pid)
					TH_LOG("iteration %d: loss of ticket %llu blamed on %llu",
					       it,
					       (unsigned long long)loss.ticket,
					       (unsigned long long)loss.pid);
				continue;
			}
			if (rc != 0)
				break;
			ASSERT_TRUE(mp_ok(m));
			ASSERT_GT(KILL_PRODS, mp_prod(m));
			ASSERT_EQ(next[mp_prod(m)], mp_seq(m))
				TH_LOG("iteration %d: duplicate or gap", it);
			next[mp_prod(m)]++;
			got++;
		}
		ASSERT_EQ(-EPIPE, rc) TH_LOG("iteration %d", it);
		if (!killed)
			kill(pid[victim], SIGKILL);	/* already exited */
		for (i = 0; i < KILL_PRODS; i++) {
			rc = bt_wait_timeout(pid[i], 20000);
			if (i == victim) {
				ASSERT_TRUE(rc == 0 || rc == 128 + SIGKILL);
			} else {
				ASSERT_EQ(0, rc);
			}
		}
		/* the survivor's all, the victim's published ones at least */
		for (i = 0; i < KILL_PRODS; i++) {
			pub = __atomic_load_n(&sh->published[i],
					      __ATOMIC_ACQUIRE);
			if (i != victim) {
				ASSERT_EQ(KILL_MSGS, next[i]);
				continue;
			}
			ASSERT_LE(pub, next[i]) TH_LOG("iteration %d: published %llu, got %llu",
						      it,
						      (unsigned long long)pub,
						      (unsigned long long)next[i]);
			ASSERT_GE(pub + 1, next[i]);
			if (pub < KILL_MSGS)
				killed_mid++;
		}
		ASSERT_EQ(0, baton_mpsc_stats(c, &st));
		ASSERT_EQ(st.tombstones_written, st.tombstones_skipped);
		baton_ring_close(c);
		baton_ring_unlink(name, BATON_BACKEND_KMOD);
	}
	TH_LOG("%d iterations in %lld ms: %llu killed mid-stream, %llu tickets tombstoned",
	       KILL_ITERS, (long long)((bt_now_ns() - t0) / BT_MSEC),
	       (unsigned long long)killed_mid, (unsigned long long)losses);
	EXPECT_LT(0, losses) TH_LOG("no kill ever left a ticket behind");
	munmap(sh, sizeof(*sh));
	bt_sync_close(&up);
}

/* ---- scribbles ---- */

/* A sequence word in no valid state: EPROTO from both roles' parks. */
TEST_F(mpsc_death, scribbled_seq_eproto)
{
	struct baton_ring_params p = mp_params(8, 2);
	struct baton_ring *c, *pr;
	uint64_t m[2] = { 0, 0 };
	int64_t t0;

	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_KMOD, &pr));
	c->seq[0] = 0xdead;
	EXPECT_EQ(EPROTO, _test_park(baton_ring_fd(c), BATON_PARK_DEADLINE, 0,
				     bt_now_ns() + 5 * BT_NSEC));
	EXPECT_EQ(EPROTO, _test_park(baton_ring_fd(pr), BATON_PARK_DEADLINE,
				     0, bt_now_ns() + 5 * BT_NSEC));
	c->seq[0] = 5 | BATON_MPSC_TOMB;	/* a tombstone from nowhere */
	EXPECT_EQ(EPROTO, _test_park(baton_ring_fd(c), 0, 0, 0));
	EXPECT_EQ(EPROTO, _test_park(baton_ring_fd(pr), 0, 0, 0));
	t0 = bt_now_ns();
	EXPECT_EQ(-EPROTO, baton_mpsc_pop(c, m, sizeof(m), 5 * BT_NSEC, NULL));
	EXPECT_EQ(-EPROTO, baton_mpsc_push(pr, m, MP_MSG));
	EXPECT_GT(t0 + 4 * BT_NSEC, bt_now_ns());
	/* a valid earlier lap is not an error: the producer sleeps */
	c->seq[1] = 2;	/* ticket 1 published, ticket 9 waits for it */
	EXPECT_EQ(ETIMEDOUT, _test_park(baton_ring_fd(pr), BATON_PARK_DEADLINE,
					9, bt_now_ns() + 50 * BT_MSEC));
	baton_ring_close(pr);
	baton_ring_close(c);
}

/*
 * After a death, scribbled tail and claim words: the kernel reads them
 * once, validates, and either decides or times out; no oops, no hang.
 */
TEST_F_TIMEOUT(mpsc_death, scribbled_tail_and_claims_after_death, 60)
{
	struct baton_ring_params p = mp_params(8, 3);
	static const uint64_t tails[] = {
		0, 1, 7, 8, 9, 1ULL << 62, ~0ULL, ~0ULL - 3, 1ULL << 63,
	};
	struct baton_ring *c, *live;
	struct bt_sync s;
	uint64_t m[2];
	unsigned int i;
	pid_t pid;
	int rc;

	ASSERT_EQ(0, bt_sync_init(&s));
	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_KMOD, &live));
	pid = dying_producer(self->name, 0, &s);
	ASSERT_LE(0, pid);
	ASSERT_EQ(0, bt_sync_wait(&s, 20000));
	kill_and_reap(_metadata, pid);

	/* a live claim covering everything: nothing may be tombstoned */
	live->claim->first = 0;
	live->claim->count = ~0ULL;
	for (i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		*live->tail = tails[i];
		rc = _test_park(baton_ring_fd(c), BATON_PARK_DEADLINE, 0,
				bt_now_ns() + 20 * BT_MSEC);
		EXPECT_TRUE(rc == ETIMEDOUT || rc == EPROTO || rc == 0)
			TH_LOG("tail %llx: %d", (unsigned long long)tails[i],
			       rc);
	}
	EXPECT_EQ(0, c->seq[0] & BATON_MPSC_TOMB);
	/* a live floor at 0: undecidable, the consumer keeps re-checking */
	live->claim->count = 0;
	live->claim->floor = 0;
	*live->tail = 1;
	EXPECT_EQ(ETIMEDOUT, _test_park(baton_ring_fd(c), BATON_PARK_DEADLINE,
					0, bt_now_ns() + 30 * BT_MSEC));
	/* idle claim: ticket 0 was the dead one's, tombstoned */
	live->claim->floor = BATON_MPSC_NONE;
	EXPECT_EQ(0, _test_park(baton_ring_fd(c), BATON_PARK_DEADLINE, 0,
				bt_now_ns() + 5 * BT_NSEC));
	EXPECT_EQ(BATON_MPSC_LOST, baton_mpsc_try_pop(c, m, sizeof(m), NULL));
	/* a garbage position from the consumer itself */
	rc = _test_park(baton_ring_fd(c), BATON_PARK_DEADLINE, 1ULL << 62,
			bt_now_ns() + 20 * BT_MSEC);
	EXPECT_TRUE(rc == EPROTO || rc == ETIMEDOUT) TH_LOG("rc %d", rc);
	baton_ring_close(live);
	baton_ring_close(c);
	bt_sync_close(&s);
}

/* poll: the consumer sees a tombstone as readable; producers see room. */
TEST_F_TIMEOUT(mpsc_death, poll_reports_tombstone, 60)
{
	struct baton_ring_params p = mp_params(2, 2);
	struct baton_ring *c, *pr;
	struct pollfd pfd;
	uint64_t m[2] = { 0, 0 };
	struct bt_sync s;
	pid_t pid;

	ASSERT_EQ(0, bt_sync_init(&s));
	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_KMOD, &pr));
	pfd.fd = baton_ring_fd(pr);
	pfd.events = POLLOUT;
	EXPECT_EQ(1, poll(&pfd, 1, 1000));
	EXPECT_TRUE(pfd.revents & POLLOUT);
	pfd.fd = baton_ring_fd(c);
	pfd.events = POLLIN;
	EXPECT_EQ(0, poll(&pfd, 1, 10));
	pid = dying_producer(self->name, 0, &s);
	ASSERT_LE(0, pid);
	ASSERT_EQ(0, bt_sync_wait(&s, 20000));
	kill_and_reap(_metadata, pid);
	EXPECT_EQ(1, poll(&pfd, 1, 5000));
	EXPECT_TRUE(pfd.revents & POLLIN);
	EXPECT_EQ(BATON_MPSC_LOST, baton_mpsc_try_pop(c, m, sizeof(m), NULL));
	/* a producer's poll arms BATON_WAIT_POLL until a wake or its close */
	pfd.fd = baton_ring_fd(pr);
	pfd.events = POLLOUT;
	EXPECT_EQ(1, poll(&pfd, 1, 1000));
	EXPECT_EQ(BATON_WAIT_POLL, *pr->prod_waiting & BATON_WAIT_MASK);
	baton_ring_close(pr);
	EXPECT_EQ(0, *c->prod_waiting);
	baton_ring_close(c);
	bt_sync_close(&s);
}

/*
 * A new consumer *@c at a dead producer's ticket (*@pid) while the live
 * producer *@live's floor might still cover it (dead_beside_live_floor()),
 * its fd in a new edge-triggered epoll set: that set's fd, or -1.
 */
static int epoll_at_undecided_ticket(struct __test_metadata *_metadata,
				     const char *name,
				     const struct baton_ring_params *p,
				     struct baton_ring **c,
				     struct baton_ring **live, uint64_t *t,
				     pid_t *pid)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	int ep;

	if (baton_ring_create(name, p, BATON_ROLE_CONSUMER, c))
		return -1;
	*pid = dead_beside_live_floor(_metadata, name, live, t);
	ep = *pid > 0 ? epoll_create1(0) : -1;
	if (ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, baton_ring_fd(*c), &ev)) {
		close(ep);
		ep = -1;
	}
	return ep;
}

/*
 * The end of a test at an undecided ticket 0 (epoll_at_undecided_ticket(),
 * dead_beside_live_floor()): the consumer's next pop is the tombstone of
 * ticket 0 naming the dead producer @pid; then both handles close.
 */
static void pop_tombstone_and_close(struct __test_metadata *_metadata,
				    struct baton_ring *c,
				    struct baton_ring *live, pid_t pid)
{
	struct baton_mpsc_loss loss = { 7, 7 };
	uint64_t m[2];

	EXPECT_EQ(BATON_MPSC_LOST, baton_mpsc_try_pop(c, m, sizeof(m), &loss));
	EXPECT_EQ(0, loss.ticket);
	EXPECT_EQ((uint64_t)pid, loss.pid);
	baton_ring_close(live);
	baton_ring_close(c);
}

/*
 * A consumer in epoll (edge-triggered) at a dead producer's ticket, while a
 * live producer's floor might still cover it: not readable yet. The live
 * one then writes its claim and stops there (as one whose slot is taken
 * would, parked for room): no publication, no WAKE. The kernel must look
 * again by itself, or the consumer sleeps for ever.
 */
TEST_F_TIMEOUT(mpsc_death, epoll_sees_tombstone_once_live_floor_resolves, 60)
{
	struct baton_ring_params p = mp_params(4, 3);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	struct baton_ring *c, *live;
	uint64_t t = 0;
	pid_t pid, writer;
	int ep;

	ep = epoll_at_undecided_ticket(_metadata, self->name, &p, &c, &live,
				       &t, &pid);
	ASSERT_LE(0, ep);
	/* undecidable: the live floor (0) may be ticket 0's owner */
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 100));
	writer = fork();
	ASSERT_LE(0, writer);
	if (!writer) {
		bt_sleep_ms(100);
		__atomic_store_n(&live->claim->first, t, __ATOMIC_RELEASE);
		__atomic_store_n(&live->claim->count, 1, __ATOMIC_RELEASE);
		_exit(0);
	}
	/* Long: fork and its 100 ms are slow on a debug VM. */
	EXPECT_EQ(1, epoll_wait(ep, &ev, 1, 20000));
	EXPECT_TRUE(ev.events & EPOLLIN);
	EXPECT_EQ(0, bt_wait_timeout(writer, 20000));
	close(ep);
	pop_tombstone_and_close(_metadata, c, live, pid);
}

/* What poll(2) says of @fd now: its revents. */
static short revents_now(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 ? pfd.revents : 0;
}

/*
 * The kernel's recheck of an undecidable head says only "look again": it
 * must not tell a poller the ring is readable. io_uring's poll (as aio's)
 * takes a keyed wake's mask as its result without calling ->poll again,
 * so a recheck that woke with EPOLLIN completed a POLL_ADD about 1 ms in,
 * with POLLIN, while ->poll said not ready (a multishot poll: every 1 ms).
 * The completion must come only once the live claim decides the ticket.
 */
TEST_F_TIMEOUT(mpsc_death, uring_poll_not_told_readable_by_the_recheck, 60)
{
	struct baton_ring_params p = mp_params(4, 3);
	struct io_uring_sqe *sqe;
	struct baton_ring *c, *live;
	struct pollfd done;
	struct bt_uring u;
	uint64_t t = 0;
	int32_t res = 0;
	pid_t pid;

	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	pid = dead_beside_live_floor(_metadata, self->name, &live, &t);
	ASSERT_LT(0, pid);
	/* A SKIP after a failed EXPECT would report the test as skipped. */
	if (!_metadata->passed)
		return;
	if (bt_uring_init(&u, 0))
		SKIP(return, "no io_uring: %s", strerror(errno));
	sqe = bt_uring_sqe(&u);
	sqe->opcode = IORING_OP_POLL_ADD;
	sqe->fd = baton_ring_fd(c);
	sqe->poll32_events = POLLIN;
	ASSERT_EQ(0, bt_uring_submit(&u));
	/* Undecidable for 100 recheck periods: no completion. */
	done = (struct pollfd){ .fd = u.fd, .events = POLLIN };
	EXPECT_EQ(0, poll(&done, 1, 100));
	EXPECT_EQ(-1, bt_uring_reap(&u, 0, &res))
		TH_LOG("completed with %#x; the ring says %#x", res,
		       (unsigned int)revents_now(baton_ring_fd(c)));
	__atomic_store_n(&live->claim->first, t, __ATOMIC_RELEASE);
	__atomic_store_n(&live->claim->count, 1, __ATOMIC_RELEASE);
	/* Decided: the next recheck's look sees the tombstone. */
	EXPECT_EQ(1, poll(&done, 1, 20000));
	ASSERT_EQ(0, bt_uring_reap(&u, 0, &res));
	EXPECT_TRUE(res & POLLIN);
	bt_uring_close(&u);
	pop_tombstone_and_close(_metadata, c, live, pid);
}

/*
 * The FIFO loop of epoll_recheck_not_held_by_an_rt_task, on CPU 1: poll
 * the consumer's fd every 100 us while its head is undecidable (each
 * ->poll restarts the kernel's recheck on this CPU), then, once it is
 * readable, hold the CPU until told (go[1]) or for 15 s. go[0]: 1 once
 * polling, 2 once it saw the ring readable. Exit code: the failed step.
 */
static int rt_poller(int fd, volatile uint32_t *go)
{
	struct sched_param sp = { .sched_priority = 1 };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int64_t end = bt_now_ns() + 15 * BT_NSEC, next = 0;

	if (bt_pin_to(1) || sched_setscheduler(0, SCHED_FIFO, &sp))
		return 2;
	go[0] = 1;
	while (go[0] == 1 && bt_now_ns() < end) {
		if (bt_now_ns() < next)
			continue;
		if (poll(&pfd, 1, 0) < 0)
			return 3;
		if (pfd.revents & POLLIN)
			go[0] = 2;
		next = bt_now_ns() + 100 * 1000;
	}
	while (!go[1] && bt_now_ns() < end)
		;
	return go[0] == 2 ? 0 : 4;
}

/*
 * The kernel's recheck (above) must not wait on a real-time task: a
 * consumer in epoll on CPU 0 at the dead producer's ticket, while a
 * SCHED_FIFO task on CPU 1 polls the same fd, so the recheck was last
 * armed there, then holds CPU 1 once the live claim decides the ticket.
 * Only the recheck can wake the epoll waiter. As a soft hrtimer it
 * expired in CPU 1's softirq, which the FIFO task starves wherever
 * ksoftirqd or the ktimers thread runs it (6.1 with threadirqs,
 * PREEMPT_RT): the waiter slept until the task ended. The recheck is now
 * a hard-irq timer that queues a work item (kmod/later.c).
 */
TEST_F_TIMEOUT(mpsc_death, epoll_recheck_not_held_by_an_rt_task, 60)
{
	struct baton_ring_params p = mp_params(4, 3);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	struct baton_ring *c, *live;
	volatile uint32_t *go;
	uint64_t t = 0;
	pid_t pid, hog;
	int ep, st, got;
	const char *why;
	long saved;

	why = bt_rt_prepare(&saved);
	if (why)
		SKIP(return, "%s", why);
	go = bt_shared_words();
	ASSERT_NE(MAP_FAILED, go);
	ASSERT_EQ(0, bt_pin_to(0));
	ep = epoll_at_undecided_ticket(_metadata, self->name, &p, &c, &live,
				       &t, &pid);
	ASSERT_LE(0, ep);
	hog = fork();
	ASSERT_LE(0, hog);
	if (!hog)
		_exit(rt_poller(baton_ring_fd(c), go));
	while (!go[0] && waitpid(hog, &st, WNOHANG) == 0)
		bt_sleep_ms(1);
	/*
	 * The add's ->poll armed the recheck here, and its wake left the fd
	 * on the ready list: take it off (its ->poll arms here once more),
	 * then let the poller move the recheck to CPU 1 for good.
	 */
	bt_sleep_ms(20);
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	bt_sleep_ms(20);
	__atomic_store_n(&live->claim->first, t, __ATOMIC_RELEASE);
	__atomic_store_n(&live->claim->count, 1, __ATOMIC_RELEASE);
	got = epoll_wait(ep, &ev, 1, 5000);
	go[1] = 1;
	EXPECT_EQ(0, bt_wait_timeout(hog, 20000));
	bt_rt_runtime(NULL, saved);
	EXPECT_EQ(1, got);
	close(ep);
	pop_tombstone_and_close(_metadata, c, live, pid);
	munmap((void *)go, BT_PAGE);
}

TEST_F_TIMEOUT(mpsc_death, consumer_dead_mid_release_n_resumes, 60)
{
	/* 0, or 10 * (geometry + 1) + the failed step: mpsc_cases.h */
	EXPECT_EQ(0, mc_resume_cases(self->name, BATON_BACKEND_KMOD));
}

TEST_HARNESS_MAIN
