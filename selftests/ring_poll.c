// SPDX-License-Identifier: GPL-2.0
/*
 * ring_poll: poll/epoll on ring fds, and signals during a park.
 *
 * Owns readiness as the brief defines it: consumer EPOLLIN|EPOLLRDNORM
 * when tail != head, EPOLLHUP once the producer is gone and the ring is
 * drained; producer EPOLLOUT|EPOLLWRNORM when not full, EPOLLERR once the
 * consumer is gone. A poll raises the poller's BATON_WAIT_POLL when it is
 * down (so a peer's push wakes an epoll_wait in another process) and the
 * peer's wake takes it down: one wake per arm. The ordinary epoll loop
 * (wait, drain with the fast path until EAGAIN, wait again) must get an
 * event for the next message, level- and edge-triggered alike, also after
 * a blocking call parked and timed out (a park never takes an epoll arm
 * down), and a consumer that keeps up costs a wake per arm, not per
 * message. Indices that are wrong say EPOLLERR; indices that only moved
 * while poll read them (another thread of the same side) do not. A
 * signal ends a park without deadline with EINTR
 * (no SA_RESTART) or restarts it (SA_RESTART), the handler running either
 * way.
 */
#include "common.h"

#include <pthread.h>
#include <sys/epoll.h>

/* BT_OLD_COUNTERS: built against a header without the arm counters */
#ifdef BT_OLD_COUNTERS
#define BT_POLL_ARMS_CONS(st)	0ULL
#else
#define BT_POLL_ARMS_CONS(st)	((st).poll_arms_of_consumer)
#endif

FIXTURE(ring_poll) {
	int dev;
	char name[BATON_NAME_MAX];
	struct baton_ring *prod;
	struct baton_ring *cons;
	struct baton_ring_offsets off;
	volatile uint8_t *conspg;	/* read-only view of the cons page */
};

FIXTURE_SETUP(ring_poll)
{
	struct baton_ring_params p = bt_params(4, 8);

	BT_REQUIRE_DEV();
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	bt_make_name(self->name, sizeof(self->name), "poll");
	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &self->cons));
	self->conspg = bt_map_ro_by_fd(baton_ring_fd(self->cons), BT_CONS,
				       &self->off);
	ASSERT_NE(NULL, self->conspg);
}

FIXTURE_TEARDOWN(ring_poll)
{
	if (self->conspg)
		munmap((void *)self->conspg, self->off.cons_size);
	if (self->prod)
		baton_ring_close(self->prod);
	if (self->cons)
		baton_ring_close(self->cons);
	if (self->dev > 0) {
		_test_unlink(self->dev, self->name);
		close(self->dev);
	}
}

#define CWAIT(s)	BT_WORD((s)->conspg, (s)->off.cons_waiting, uint32_t)

static void attach_producer(struct __test_metadata *_metadata,
			    FIXTURE_DATA(ring_poll) *self)
{
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_KMOD, &self->prod));
}

/* revents of one fd for the given events, timeout in ms */
static int revents(int fd, short events, int timeout)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int n = poll(&pfd, 1, timeout);

	if (n < 0)
		return -errno;
	return n ? pfd.revents : 0;
}

TEST_F(ring_poll, consumer_readable_only_with_data)
{
	int cfd = baton_ring_fd(self->cons);
	uint64_t v = 7;

	attach_producer(_metadata, self);
	EXPECT_EQ(0, revents(cfd, POLLIN | POLLRDNORM, 0));
	ASSERT_EQ(0, baton_spsc_try_push(self->prod, &v, sizeof(v)));
	EXPECT_EQ(POLLIN | POLLRDNORM, revents(cfd, POLLIN | POLLRDNORM, 0));
	ASSERT_EQ(0, baton_spsc_try_push(self->prod, &v, sizeof(v)));
	ASSERT_EQ(0, baton_spsc_try_pop(self->cons, &v, sizeof(v)));
	EXPECT_EQ(POLLIN | POLLRDNORM, revents(cfd, POLLIN | POLLRDNORM, 0));
	ASSERT_EQ(0, baton_spsc_try_pop(self->cons, &v, sizeof(v)));
	EXPECT_EQ(0, revents(cfd, POLLIN | POLLRDNORM, 0));
	/* a consumer is never writable */
	EXPECT_EQ(0, revents(cfd, POLLOUT, 0));
}

TEST_F(ring_poll, producer_writable_until_full)
{
	int pfd, i;
	uint64_t v = 1;

	attach_producer(_metadata, self);
	pfd = baton_ring_fd(self->prod);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(POLLOUT | POLLWRNORM,
			  revents(pfd, POLLOUT | POLLWRNORM, 0))
			TH_LOG("with %d of 4 slots used", i);
		ASSERT_EQ(0, baton_spsc_try_push(self->prod, &v, sizeof(v)));
	}
	EXPECT_EQ(0, revents(pfd, POLLOUT | POLLWRNORM, 0));
	EXPECT_EQ(0, revents(pfd, POLLIN, 0));
	ASSERT_EQ(0, baton_spsc_try_pop(self->cons, &v, sizeof(v)));
	EXPECT_EQ(POLLOUT | POLLWRNORM, revents(pfd, POLLOUT | POLLWRNORM, 0));
}

TEST_F(ring_poll, poll_times_out)
{
	int64_t t0;

	attach_producer(_metadata, self);
	t0 = bt_now_ns();
	EXPECT_EQ(0, revents(baton_ring_fd(self->cons), POLLIN, 200));
	EXPECT_LE(t0 + 190 * BT_MSEC, bt_now_ns());
	EXPECT_GT(t0 + 5 * BT_NSEC, bt_now_ns());
}

/*
 * A poll raises the flag; the push's wake takes it down, and the next poll,
 * ready or not, raises it again (edge-triggered epoll polls for the last
 * time while the fd is ready, so an arm made only when not ready would
 * lose the next wakeup); disarming drops it and stops the wakes.
 */
TEST_F(ring_poll, poll_sets_flag_and_disarm_clears_it)
{
	int cfd = baton_ring_fd(self->cons);
	struct baton_ring_stats st;
	uint64_t v = 3;

	attach_producer(_metadata, self);
	EXPECT_EQ(0, *CWAIT(self));
	/* a real wait (timeout > 0), so the poll table is armed */
	EXPECT_EQ(0, revents(cfd, POLLIN, 20));
	EXPECT_NE(0, *CWAIT(self)) TH_LOG("not-ready poll left no flag");
	ASSERT_EQ(0, baton_spsc_try_push(self->prod, &v, sizeof(v)));
	ASSERT_EQ(0, baton_ring_stats(self->prod, &st));
	EXPECT_EQ(1, st.wake_calls) TH_LOG("push did not see the flag");
	EXPECT_EQ(POLLIN, revents(cfd, POLLIN, 0));
	EXPECT_NE(0, *CWAIT(self)) TH_LOG("ready poll dropped the flag");
	baton_ring_poll_disarm(self->cons);
	EXPECT_EQ(0, *CWAIT(self)) TH_LOG("disarm left the flag set");
	ASSERT_EQ(0, baton_spsc_try_push(self->prod, &v, sizeof(v)));
	ASSERT_EQ(0, baton_ring_stats(self->prod, &st));
	EXPECT_EQ(1, st.wake_calls) TH_LOG("push woke a disarmed consumer");
}

TEST_F(ring_poll, epoll_woken_by_push_in_other_process)
{
	struct epoll_event ev = { .events = EPOLLIN }, out[2];
	struct baton_ring_stats st;
	int ep, n;
	int64_t t0;
	pid_t pid;

	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, baton_ring_fd(self->cons),
			       &ev));
	EXPECT_EQ(0, epoll_wait(ep, out, 2, 0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct baton_ring *pr;
		uint64_t v = 99;

		if (baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_KMOD, &pr))
			_exit(3);
		/* the parent's epoll is armed: its flag is up */
		if (bt_wait_flag(CWAIT(self), 20000))
			_exit(4);
		if (bt_wait_sleeping(getppid(), 20000))
			_exit(24);
		bt_sleep_ms(200);
		if (baton_spsc_try_push(pr, &v, sizeof(v)))
			_exit(5);
		if (pr->wake_calls != 1)
			_exit(6);
		bt_sleep_ms(500);
		_exit(0);
	}
	t0 = bt_now_ns();
	n = epoll_wait(ep, out, 2, 20000);
	EXPECT_EQ(1, n);
	if (n == 1) {
		EXPECT_TRUE(out[0].events & EPOLLIN);
		EXPECT_FALSE(out[0].events & (EPOLLHUP | EPOLLERR));
	}
	EXPECT_GT(t0 + 15 * BT_NSEC, bt_now_ns()) TH_LOG("woken by timeout");
	EXPECT_EQ(0, bt_wait_timeout(pid, 20000));
	ASSERT_EQ(0, baton_ring_stats(self->cons, &st));
	EXPECT_LE(1, st.wakes_of_consumer);
	close(ep);
}

TEST_F(ring_poll, consumer_hup_only_when_drained)
{
	int cfd = baton_ring_fd(self->cons);
	uint64_t v = 5;
	int re;

	attach_producer(_metadata, self);
	ASSERT_EQ(0, baton_spsc_try_push(self->prod, &v, sizeof(v)));
	baton_ring_close(self->prod);
	self->prod = NULL;
	re = revents(cfd, POLLIN, 0);
	EXPECT_TRUE(re & POLLIN);
	EXPECT_FALSE(re & POLLHUP) TH_LOG("HUP with a message left");
	ASSERT_EQ(0, baton_spsc_try_pop(self->cons, &v, sizeof(v)));
	re = revents(cfd, POLLIN, 0);
	EXPECT_TRUE(re & POLLHUP) TH_LOG("revents 0x%x", re);
	EXPECT_FALSE(re & POLLIN);
	/* and a new producer makes the ring live again */
	attach_producer(_metadata, self);
	EXPECT_EQ(0, revents(cfd, POLLIN, 0));
}

TEST_F(ring_poll, producer_err_when_consumer_gone)
{
	int pfd, re;

	attach_producer(_metadata, self);
	pfd = baton_ring_fd(self->prod);
	EXPECT_EQ(POLLOUT, revents(pfd, POLLOUT, 0));
	munmap((void *)self->conspg, self->off.cons_size);
	self->conspg = NULL;
	baton_ring_close(self->cons);
	self->cons = NULL;
	re = revents(pfd, POLLOUT, 0);
	EXPECT_TRUE(re & POLLERR) TH_LOG("revents 0x%x", re);
}

/*
 * Scribbled indices still say EPOLLERR, both ways, however often poll
 * reads them again: a tail behind the head, a tail more than a ring
 * ahead of it. Put back, the ring reads as before.
 */
TEST_F(ring_poll, scribbled_indices_are_an_error)
{
	int cfd = baton_ring_fd(self->cons);
	uint64_t v = 7, tail;

	attach_producer(_metadata, self);
	ASSERT_EQ(0, baton_spsc_try_push(self->prod, &v, sizeof(v)));
	ASSERT_EQ(0, baton_spsc_try_push(self->prod, &v, sizeof(v)));
	ASSERT_EQ(0, baton_spsc_try_pop(self->cons, &v, sizeof(v)));
	tail = __atomic_load_n(self->prod->tail, __ATOMIC_RELAXED);
	__atomic_store_n(self->prod->tail, tail - 2, __ATOMIC_RELEASE);
	EXPECT_EQ(POLLERR, revents(cfd, POLLIN | POLLRDNORM, 0));
	__atomic_store_n(self->prod->tail, tail + 4, __ATOMIC_RELEASE);
	EXPECT_EQ(POLLERR, revents(cfd, POLLIN | POLLRDNORM, 0));
	__atomic_store_n(self->prod->tail, tail, __ATOMIC_RELEASE);
	EXPECT_EQ(POLLIN | POLLRDNORM, revents(cfd, POLLIN | POLLRDNORM, 0));
}

/* The other thread of the consumer: pops whatever comes until told. */
struct popper {
	struct baton_ring *cons;
	volatile int stop;
	uint64_t popped;
};

static void *pop_all(void *arg)
{
	struct popper *pp = arg;
	uint64_t v;

	while (!pp->stop)
		if (!baton_spsc_try_pop(pp->cons, &v, sizeof(v)))
			pp->popped++;
	return NULL;
}

/*
 * A poll from one thread of the consumer while another pops and the
 * producer streams: poll samples the tail, then the head, and the head
 * may pass the tail it read in between. That is a moving ring, not a
 * scribbled one: never EPOLLERR. A race, so the test can only make it
 * likely (a 4-slot ring, 3 s of polls); it never asserts a timing.
 */
TEST_F_TIMEOUT(ring_poll, no_error_while_the_own_side_moves, 60)
{
	struct popper pp = { .cons = self->cons };
	int cfd = baton_ring_fd(self->cons), ev;
	uint64_t polls = 0, errs = 0;
	int64_t deadline;
	pthread_t th;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct baton_ring *pr;
		uint64_t v = 0;

		if (baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_KMOD, &pr))
			_exit(1);
		deadline = bt_now_ns() + 4 * BT_NSEC;
		while (bt_now_ns() < deadline)
			if (!baton_spsc_try_push(pr, &v, sizeof(v)))
				v++;
		baton_ring_close(pr);
		_exit(0);
	}
	ASSERT_EQ(0, pthread_create(&th, NULL, pop_all, &pp));
	deadline = bt_now_ns() + 3 * BT_NSEC;
	while (bt_now_ns() < deadline) {
		ev = revents(cfd, POLLIN | POLLRDNORM, 0);
		ASSERT_LE(0, ev);
		polls++;
		if (ev & POLLERR)
			errs++;
	}
	pp.stop = 1;
	ASSERT_EQ(0, pthread_join(th, NULL));
	TH_LOG("%llu polls, %llu popped, %llu EPOLLERR",
	       (unsigned long long)polls, (unsigned long long)pp.popped,
	       (unsigned long long)errs);
	EXPECT_EQ(0U, errs);
	EXPECT_EQ(0, bt_wait_timeout(pid, 10000));
}

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

/* Child: wait until the parent is parked, signal it, optionally push. */
static void signal_parked_parent(FIXTURE_DATA(ring_poll) *self, bool push_later)
{
	struct baton_ring *pr = NULL;
	uint64_t v = 11;

	if (push_later &&
	    baton_ring_open(self->name, BATON_ROLE_PRODUCER,
			    BATON_BACKEND_KMOD, &pr))
		_exit(3);
	if (bt_wait_flag(CWAIT(self), 20000))
		_exit(4);
	if (bt_wait_sleeping(getppid(), 20000))
		_exit(24);
	bt_sleep_ms(50);
	kill(getppid(), SIGUSR1);
	if (push_later) {
		bt_sleep_ms(400);
		if (baton_spsc_try_push(pr, &v, sizeof(v)))
			_exit(5);
	}
	_exit(0);
}

TEST_F(ring_poll, signal_interrupts_park_eintr)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	pid_t pid;
	int rc;

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;	/* no SA_RESTART */
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	handled = 0;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		signal_parked_parent(self, false);
	/* no deadline: only the signal can end this */
	rc = _test_park(baton_ring_fd(self->cons), 0, 0, 0);
	EXPECT_EQ(EINTR, rc);
	EXPECT_EQ(1, handled);
	EXPECT_EQ(0, *CWAIT(self)) TH_LOG("flag left set after EINTR");
	EXPECT_EQ(0, bt_wait_timeout(pid, 20000));

	/* the library reports it as -EINTR */
	handled = 0;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		signal_parked_parent(self, false);
	EXPECT_EQ(-EINTR, baton_ring_park(self->cons, -1));
	EXPECT_EQ(1, handled);
	EXPECT_EQ(0, bt_wait_timeout(pid, 20000));
}

TEST_F(ring_poll, sa_restart_park_restarts)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct baton_ring_info info;
	int64_t t0;
	pid_t pid;
	int rc;

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	handled = 0;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		signal_parked_parent(self, true);
	t0 = bt_now_ns();
	rc = _test_park(baton_ring_fd(self->cons), 0, 0, 0);
	EXPECT_EQ(0, rc);
	EXPECT_EQ(1, handled);
	/* it returned because data arrived, not because of the signal */
	test_info(baton_ring_fd(self->cons), &info);
	EXPECT_EQ(1, info.out_tail) TH_LOG("park returned before the push");
	EXPECT_LE(t0 + 400 * BT_MSEC, bt_now_ns());
	EXPECT_EQ(0, bt_wait_timeout(pid, 20000));
}

FIXTURE_VARIANT(ring_epoll) {
	uint32_t trigger;	/* 0 (level) or EPOLLET */
};

FIXTURE(ring_epoll) {
	char name[BATON_NAME_MAX];
	struct baton_ring *prod;
	struct baton_ring *cons;
	int ep;
};

FIXTURE_VARIANT_ADD(ring_epoll, level) {
	.trigger = 0,
};

FIXTURE_VARIANT_ADD(ring_epoll, edge) {
	.trigger = EPOLLET,
};

FIXTURE_SETUP(ring_epoll)
{
	struct baton_ring_params p = bt_params(4, 8);

	BT_REQUIRE_DEV();
	bt_make_name(self->name, sizeof(self->name), "et");
	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &self->cons));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_KMOD, &self->prod));
	self->ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, self->ep);
}

FIXTURE_TEARDOWN(ring_epoll)
{
	if (self->ep > 0)
		close(self->ep);
	if (self->prod)
		baton_ring_close(self->prod);
	if (self->cons)
		baton_ring_close(self->cons);
	baton_ring_unlink(self->name, BATON_BACKEND_KMOD);
}

/*
 * The usual epoll loop: wait, drain until EAGAIN, wait again. Draining is
 * the library's fast path and tells the kernel nothing, yet the next
 * message must still produce an event, edge-triggered as well as level.
 */
TEST_F(ring_epoll, consumer_event_after_drain)
{
	struct epoll_event ev = { .events = EPOLLIN | variant->trigger }, out;
	uint64_t v = 1;
	int round;

	ASSERT_EQ(0, epoll_ctl(self->ep, EPOLL_CTL_ADD,
			       baton_ring_fd(self->cons), &ev));
	EXPECT_EQ(0, epoll_wait(self->ep, &out, 1, 0));
	for (round = 0; round < 3; round++) {
		ASSERT_EQ(0, baton_spsc_try_push(self->prod, &v, sizeof(v)));
		EXPECT_EQ(1, epoll_wait(self->ep, &out, 1, 500))
			TH_LOG("round %d: no EPOLLIN for a new message", round);
		while (!baton_spsc_try_pop(self->cons, &v, sizeof(v)))
			;
	}
}

TEST_F(ring_epoll, producer_event_after_fill)
{
	struct epoll_event ev = { .events = EPOLLOUT | variant->trigger }, out;
	uint64_t v = 1;
	int round;

	ASSERT_EQ(0, epoll_ctl(self->ep, EPOLL_CTL_ADD,
			       baton_ring_fd(self->prod), &ev));
	for (round = 0; round < 3; round++) {
		EXPECT_EQ(1, epoll_wait(self->ep, &out, 1, 500))
			TH_LOG("round %d: no EPOLLOUT with free slots", round);
		while (!baton_spsc_try_push(self->prod, &v, sizeof(v)))
			;
		/* full now; the consumer frees a slot */
		ASSERT_EQ(0, baton_spsc_try_pop(self->cons, &v, sizeof(v)));
	}
}

/*
 * The lost epoll wakeup of issue 13: the consumer's fd is in an epoll set
 * (armed at registration), a blocking pop parks and times out, then the
 * consumer waits in epoll_wait while a producer in another process
 * publishes one message. The park must not take the epoll arm down with
 * it: epoll_wait returns the event. Before: the park's exit cleared the
 * one waiting flag, the push saw 0 and made no wake, and epoll_wait timed
 * out with the message in the ring.
 */
TEST_F(ring_epoll, consumer_epoll_after_timed_out_park)
{
	struct epoll_event ev = { .events = EPOLLIN | variant->trigger }, out;
	uint64_t v = 0;
	pid_t pid;
	int n;

	ASSERT_EQ(0, epoll_ctl(self->ep, EPOLL_CTL_ADD,
			       baton_ring_fd(self->cons), &ev));
	EXPECT_EQ(0, epoll_wait(self->ep, &out, 1, 0));
	self->cons->spin_limit = 0;
	EXPECT_EQ(-ETIMEDOUT, baton_spsc_pop(self->cons, &v, sizeof(v),
					     50 * BT_MSEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		v = 77;
		if (bt_wait_sleeping(getppid(), 20000))
			_exit(24);
		bt_sleep_ms(100);
		_exit(baton_spsc_try_push(self->prod, &v, sizeof(v)) ? 5 : 0);
	}
	/* Long: fork and the child's first run are slow on a debug VM. */
	n = epoll_wait(self->ep, &out, 1, 15000);
	EXPECT_EQ(1, n) TH_LOG("lost wakeup: a message, no EPOLLIN");
	EXPECT_EQ(0, bt_wait_timeout(pid, 20000));
	EXPECT_EQ(0, baton_spsc_try_pop(self->cons, &v, sizeof(v)));
	EXPECT_EQ(77, v);
}

/* The mirror image: a producer's timed-out park and its EPOLLOUT arm. */
TEST_F(ring_epoll, producer_epoll_after_timed_out_park)
{
	struct epoll_event ev = { .events = EPOLLOUT | variant->trigger }, out;
	uint64_t v = 1;
	pid_t pid;
	int n;

	while (!baton_spsc_try_push(self->prod, &v, sizeof(v)))
		;
	ASSERT_EQ(0, epoll_ctl(self->ep, EPOLL_CTL_ADD,
			       baton_ring_fd(self->prod), &ev));
	EXPECT_EQ(0, epoll_wait(self->ep, &out, 1, 0));
	self->prod->spin_limit = 0;
	EXPECT_EQ(-ETIMEDOUT, baton_spsc_push(self->prod, &v, sizeof(v),
					      50 * BT_MSEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (bt_wait_sleeping(getppid(), 20000))
			_exit(24);
		bt_sleep_ms(100);
		_exit(baton_spsc_try_pop(self->cons, &v, sizeof(v)) ? 5 : 0);
	}
	/* Long: fork and the child's first run are slow on a debug VM. */
	n = epoll_wait(self->ep, &out, 1, 15000);
	EXPECT_EQ(1, n) TH_LOG("lost wakeup: a free slot, no EPOLLOUT");
	EXPECT_EQ(0, bt_wait_timeout(pid, 20000));
}

/*
 * A poll-armed consumer that keeps up: a producer in another process
 * publishes bursts of 16, one message per submit, and waits for each
 * burst to be drained; the consumer waits in epoll_wait and drains until
 * EAGAIN. The kernel takes the poll arm down in the first WAKE and epoll's
 * own re-poll puts it back, so the WAKE calls track the arms, not the
 * messages. Before: the flag stayed up from registration on and every
 * publication made a WAKE.
 */
TEST_F_TIMEOUT(ring_epoll, keeping_up_wakes_per_arm, 240)
{
	struct epoll_event ev = { .events = EPOLLIN | variant->trigger }, out;
	struct baton_ring_params p = bt_params(64, 8);
	const uint64_t bursts = 100, per = 16, n = bursts * per;
	struct baton_ring_stats st;
	struct baton_ring *c;
	char name[BATON_NAME_MAX];
	uint64_t got = 0, v;
	pid_t pid;
	int rc;

	bt_make_name(name, sizeof(name), "keep");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &c));
	ASSERT_EQ(0, epoll_ctl(self->ep, EPOLL_CTL_ADD, baton_ring_fd(c),
			       &ev));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct baton_ring *pr;
		uint64_t b, i, idx;

		if (baton_ring_open(name, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_KMOD, &pr))
			_exit(3);
		for (b = 0; b < bursts; b++) {
			for (i = 0; i < per; i++) {
				v = b * per + i;
				if (baton_spsc_try_push(pr, &v, sizeof(v)))
					_exit(4);
			}
			/* drained: all 64 slots free again */
			while (baton_spsc_prod_reserve(pr, 64, &idx) < 64)
				bt_sleep_ms(1);
		}
		_exit(0);
	}
	while (got < n) {
		rc = epoll_wait(self->ep, &out, 1, 10000);
		ASSERT_EQ(1, rc) TH_LOG("after %llu messages",
					(unsigned long long)got);
		while (!baton_spsc_try_pop(c, &v, sizeof(v))) {
			ASSERT_EQ(got, v);
			got++;
		}
	}
	EXPECT_EQ(0, bt_wait_timeout(pid, 20000));
	ASSERT_EQ(0, baton_ring_stats(c, &st));
	TH_LOG("%llu messages in %llu bursts: wakes %llu, poll arms %llu",
	       (unsigned long long)n, (unsigned long long)bursts,
	       (unsigned long long)st.wakes_of_consumer,
	       (unsigned long long)BT_POLL_ARMS_CONS(st));
	EXPECT_GE(n / 4, st.wakes_of_consumer)
		TH_LOG("a wake per message, not per arm");
	EXPECT_LE(st.wakes_of_consumer, BT_POLL_ARMS_CONS(st) + st.parks_empty);
	baton_ring_close(c);
	baton_ring_unlink(name, BATON_BACKEND_KMOD);
}

TEST_HARNESS_MAIN
