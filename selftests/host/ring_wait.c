// SPDX-License-Identifier: MIT
/*
 * Waiting on the memfd backend (issue 13): one wake per park episode,
 * per-producer parked state on MPSC rings, and death while waiting.
 *
 * - A burst of publications into a parked consumer makes one wake call,
 *   not one per message: across a stream, the producer's wake calls never
 *   exceed the consumer's parks.
 * - kill -9 of a peer ends the survivor's wait with -EPIPE (after it has
 *   drained what the dead producer published), for SPSC both ways and for
 *   MPSC (every producer dead; the consumer dead). The time from the kill
 *   to the EPIPE is logged, never asserted (the design target is 10 ms).
 * - A consumer whose producer has not attached yet is not told EPIPE.
 */
#include "kselftest_harness.h"
#include "common.h"

#define MS (1000LL * 1000)

static uint32_t parked(const uint32_t *word)
{
	return __atomic_load_n(word, __ATOMIC_ACQUIRE) & 1U;
}

static int wait_parked(const uint32_t *word)
{
	uint64_t end = now_ns() + 5000 * MS;

	while (!parked(word)) {
		if (now_ns() > end)
			return -ETIMEDOUT;
		usleep(50);
	}
	return 0;
}

static struct baton_ring_params spsc_params(uint32_t slots)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_SPSC, .slot_count = slots, .slot_size = 8,
		.mode = 0600, .backend = BATON_BACKEND_AUTO,
	};

	return p;
}

struct popper {
	struct baton_ring *r;
	uint64_t count, got;
	int err;
};

static void *pop_all(void *arg)
{
	struct popper *p = arg;
	uint64_t v;
	int ret;

	while (p->got < p->count) {
		ret = baton_spsc_pop(p->r, &v, sizeof(v), OP_TIMEOUT_NS);
		if (ret != 0 || v != p->got) {
			p->err = ret < 0 ? ret : -EBADMSG;
			return NULL;
		}
		p->got++;
	}
	return NULL;
}

#define BURSTS	20
#define BURST	16

/*
 * The consumer parks (no spinning); the producer waits until it is
 * parked, then publishes a burst. Before one wake per episode, every
 * message of the burst found the flag still up and made a FUTEX_WAKE
 * (wake_calls ~ BURST x parks).
 */
TEST(one_wake_per_park)
{
	struct baton_ring_params p = spsc_params(64);
	struct baton_ring *prod, *cons;
	struct popper pp = { .count = BURSTS * BURST };
	char name[BATON_NAME_MAX];
	pthread_t t;
	uint64_t v = 0;
	int b, i;

	force_memfd();
	ring_name(name, sizeof(name), "storm");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &prod));
	ASSERT_EQ(0, baton_ring_open(name, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_AUTO, &cons));
	cons->spin_limit = 0;
	pp.r = cons;
	ASSERT_EQ(0, pthread_create(&t, NULL, pop_all, &pp));
	for (b = 0; b < BURSTS; b++) {
		ASSERT_EQ(0, wait_parked(cons->cons_waiting));
		usleep(2000);	/* asleep in the futex by now, most likely */
		for (i = 0; i < BURST; i++, v++)
			ASSERT_EQ(0, baton_spsc_try_push(prod, &v, sizeof(v)));
		while (__atomic_load_n(cons->head, __ATOMIC_ACQUIRE) != v)
			usleep(50);
	}
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(0, pp.err);
	EXPECT_EQ((uint64_t)BURSTS * BURST, pp.got);
	TH_LOG("wakes %llu, parks %llu",
	       (unsigned long long)prod->wake_calls,
	       (unsigned long long)cons->park_calls);
	EXPECT_LE(BURSTS, (int)cons->park_calls);
	EXPECT_LE(prod->wake_calls, cons->park_calls);
	baton_ring_close(prod);
	baton_ring_close(cons);
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
}

/* A stream with a tiny ring, both sides parking: wakes <= parks. */
TEST(stream_wakes_le_parks)
{
	struct baton_ring_params p = spsc_params(2);
	struct baton_ring *prod, *cons;
	struct popper pp = { .count = SCALE(20000ULL) };
	char name[BATON_NAME_MAX];
	pthread_t t;
	uint64_t v;

	force_memfd();
	ring_name(name, sizeof(name), "stream");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &prod));
	ASSERT_EQ(0, baton_ring_open(name, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_AUTO, &cons));
	cons->spin_limit = 0;
	prod->spin_limit = 0;
	pp.r = cons;
	ASSERT_EQ(0, pthread_create(&t, NULL, pop_all, &pp));
	for (v = 0; v < pp.count; v++)
		ASSERT_EQ(0, baton_spsc_push(prod, &v, sizeof(v),
					     OP_TIMEOUT_NS));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(0, pp.err);
	TH_LOG("consumer: %llu wakes of it, %llu parks; producer: %llu, %llu",
	       (unsigned long long)prod->wake_calls,
	       (unsigned long long)cons->park_calls,
	       (unsigned long long)cons->wake_calls,
	       (unsigned long long)prod->park_calls);
	EXPECT_LE(prod->wake_calls, cons->park_calls);
	EXPECT_LE(cons->wake_calls, prod->park_calls);
	baton_ring_close(prod);
	baton_ring_close(cons);
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
}

/* ---- adaptive spinning ---- */

struct pacer {
	struct baton_ring *r;
	uint64_t count;
	int64_t gap_ns;
};

/* Publish count messages, one per gap (short gaps busy-waited). */
static void *paced_push(void *arg)
{
	struct pacer *p = arg;
	uint64_t v, next = now_ns();

	for (v = 0; v < p->count; v++) {
		next += (uint64_t)p->gap_ns;
		if (p->gap_ns >= MS)
			usleep((useconds_t)(p->gap_ns / 1000));
		while (now_ns() < next)
			;
		if (baton_spsc_push(p->r, &v, sizeof(v), OP_TIMEOUT_NS) != 0)
			break;
	}
	return NULL;
}

static void run_paced(struct __test_metadata *_metadata, uint32_t spin_limit,
		       uint32_t start_budget, int64_t gap_ns, uint64_t count,
		       uint32_t *budget, uint64_t *parks)
{
	struct baton_ring_params p = spsc_params(64);
	struct baton_ring *prod, *cons;
	struct pacer pc = { .count = count, .gap_ns = gap_ns };
	char name[BATON_NAME_MAX];
	pthread_t t;
	uint64_t v, i;

	force_memfd();
	ring_name(name, sizeof(name), "spin");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &prod));
	ASSERT_EQ(0, baton_ring_open(name, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_AUTO, &cons));
	cons->spin_limit = spin_limit;
	cons->spin_budget = start_budget;
	pc.r = prod;
	ASSERT_EQ(0, pthread_create(&t, NULL, paced_push, &pc));
	for (i = 0; i < count; i++) {
		ASSERT_EQ(0, baton_spsc_pop(cons, &v, sizeof(v), OP_TIMEOUT_NS));
		ASSERT_EQ(i, v);
	}
	ASSERT_EQ(0, pthread_join(t, NULL));
	*budget = cons->spin_budget;
	*parks = cons->park_calls;
	baton_ring_close(prod);
	baton_ring_close(cons);
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
}

/*
 * An idle peer (3 ms between messages, far beyond what spin_limit polls
 * cover) brings the budget down to the floor: no long spin per wait.
 */
TEST(spin_budget_decays_for_idle_peer)
{
	uint64_t parks;
	uint32_t budget;

	/*
	 * Only a wait that parks teaches the budget; a pop that finds a
	 * message already there (the consumer was descheduled for a gap)
	 * teaches nothing. 3/4 per park takes 2000 to the floor in 17
	 * parks, so send enough for that on a loaded machine too.
	 */
	run_paced(_metadata, 2000, 0, 3 * MS, 100, &budget, &parks);
	TH_LOG("budget %u after 100 idle gaps, %llu parks", budget,
	       (unsigned long long)parks);
	/* None at all is not a busy machine: the consumer never parks. */
	ASSERT_LT(0U, parks);
	if (parks < 20)
		SKIP(return, "only %llu of 100 waits parked: machine too busy",
		     (unsigned long long)parks);
	/*
	 * Not the floor exactly: a consumer descheduled through most of a
	 * gap parks just before the message comes, and that short wait
	 * rightly moves the budget a quarter of the way up (138 after 100
	 * gaps was seen under TSan on a loaded host). Under half the limit
	 * needs at least three such waits in a row at the very end; a
	 * budget that never decayed stays at 2000.
	 */
	EXPECT_GT(2000U / 2, budget);
}

/*
 * A streaming peer (20 us gaps) with a budget starting at the floor: the
 * waits it sees are short enough for a spin within the limit to cover,
 * so the budget grows.
 */
TEST(spin_budget_grows_for_streaming_peer)
{
	uint64_t parks;
	uint32_t budget;

	/* Slower than the stream under TSan: it never waits, learns nothing. */
	if (UNDER_TSAN)
		SKIP(return, "the consumer cannot keep up with 20 us under TSan");
	run_paced(_metadata, 1U << 20, 16, 20 * 1000, SCALE(400ULL), &budget,
		  &parks);
	TH_LOG("budget %u after a 20 us stream, %llu parks of %llu", budget,
	       (unsigned long long)parks, (unsigned long long)SCALE(400ULL));
	EXPECT_LT(16U, budget);
}

/*
 * The policy itself, fed synthetic waits (lib/park.c factors it out so
 * that no timing enters these): 2000-poll limit, 40 ns a poll (the limit
 * covers 80 us), a park that wakes 20 us late.
 */
uint64_t baton__spin_need(uint64_t wait_ns, uint32_t wake, uint32_t poll);
uint32_t baton__spin_policy(uint32_t budget, uint32_t limit, uint64_t need);

#define P_LIMIT	2000U
#define P_POLL	40U
#define P_WAKE	(20U * 1000)

/* Budget after @waits parked waits of @wait_ns each, from @budget. */
static uint32_t feed_parked(uint32_t budget, uint64_t wait_ns, int waits)
{
	while (waits--)
		budget = baton__spin_policy(budget, P_LIMIT,
					    baton__spin_need(wait_ns, P_WAKE,
							     P_POLL));
	return budget;
}

TEST(spin_need_leaves_out_the_wake_up)
{
	/* 100 us, 20 of them the wake-up: 80 us of spinning = 2000 polls. */
	EXPECT_EQ(2000U, baton__spin_need(100 * 1000, P_WAKE, P_POLL));
	EXPECT_EQ(0U, baton__spin_need(15 * 1000, P_WAKE, P_POLL));
	EXPECT_EQ(100U, baton__spin_need(100, 0, 0));	/* poll 0 reads 1 */
}

/*
 * 10 k msg/s: 100 us gaps, a parked wait of 100 us plus the wake-up.
 * Spinning the whole limit (80 us) would not have spared the park, so
 * the budget decays to the floor (in under 30 waits). The policy before this test moved it
 * towards the limit (any wait up to 8 times the limit's cover), so a
 * blocking pop spun its whole limit before every park.
 */
TEST(spin_policy_decays_when_the_limit_would_not_cover)
{
	uint32_t b = feed_parked(0, 100 * 1000 + P_WAKE, 30);

	EXPECT_EQ(16U, b);
	/* Just past the cover: decays too. */
	EXPECT_EQ(16U, feed_parked(P_LIMIT, 81 * 1000 + P_WAKE, 30));
	/* An idle peer: the same. */
	EXPECT_EQ(16U, feed_parked(P_LIMIT, 3 * MS, 30));
}

/*
 * Streaming: 10 us gaps that parked (budget at the floor, the wake-up
 * included) need 250 polls; the budget climbs to 2 * 250 + 16 and stays.
 * A spin that found work after 300 polls is learnt the same way.
 */
TEST(spin_policy_grows_when_the_limit_covers)
{
	uint32_t b = feed_parked(16, 10 * 1000 + P_WAKE, 40);
	int i;

	EXPECT_EQ(516U, b);
	for (i = 0; i < 40; i++)
		b = baton__spin_policy(b, P_LIMIT, 300);
	EXPECT_EQ(616U, b);
	/* Never past the limit, never below the floor. */
	EXPECT_EQ(P_LIMIT, feed_parked(P_LIMIT, 79 * 1000 + P_WAKE, 40));
	EXPECT_EQ(16U, baton__spin_policy(16, P_LIMIT, 1U << 30));
	/* A limit under the floor is its own floor; 0 turns spinning off. */
	EXPECT_EQ(4U, baton__spin_policy(0, 4, 1U << 30));
	EXPECT_EQ(0U, baton__spin_policy(0, 0, 1));
}

/* ---- death while waiting ---- */

/*
 * A child that opens @role of ring @name, runs @body, reports its clock
 * reading through @fd just before it kills itself with SIGKILL (so the
 * parent can time the EPIPE from the death), and never returns.
 */
static void die_after(int fd, int64_t delay_ns)
{
	uint64_t t;

	if (delay_ns)
		usleep((useconds_t)(delay_ns / 1000));
	t = now_ns();
	if (write(fd, &t, sizeof(t)) != sizeof(t))
		_exit(3);
	raise(SIGKILL);
	_exit(4);
}

/*
 * As die_after(), once the peer's waiting word @w shows it parked (10 s
 * at most), so that the death comes while it is parked however slow the
 * machine: the tests' names say "parked".
 */
static void die_once_parked(int fd, const volatile uint32_t *w)
{
	uint64_t end = now_ns() + 10000 * MS, t;

	while (!(*w & BATON_WAIT_PARKED) && now_ns() < end)
		usleep(1000);
	usleep(10000);	/* well inside its sleep, not at its arm */
	t = now_ns();
	if (write(fd, &t, sizeof(t)) != sizeof(t))
		_exit(3);
	raise(SIGKILL);
	_exit(4);
}

/*
 * The kill the child reported through @fd came before the survivor's
 * EPIPE at @t_epipe (an EPIPE before it would be a false end of stream);
 * the time between them is logged, never asserted.
 */
static void check_kill_to_epipe(struct __test_metadata *_metadata, int fd,
				uint64_t t_epipe, const char *what)
{
	uint64_t t_kill = 0;

	ASSERT_EQ((ssize_t)sizeof(t_kill), read(fd, &t_kill, sizeof(t_kill)))
		TH_LOG("%s: the child never reported its kill", what);
	EXPECT_LE(t_kill, t_epipe) TH_LOG("%s: EPIPE %.3f ms before the kill",
					  what, (double)(t_kill - t_epipe) / 1e6);
	TH_LOG("%s: kill -9 to EPIPE %.3f ms", what,
	       (double)(t_epipe - t_kill) / 1e6);
}

/* The child's end: 128 + its signal, or its exit status; -1 if unknown. */
static int reap(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

/* The producer publishes 3 and dies while the consumer is parked. */
TEST(spsc_producer_dies_consumer_parked)
{
	struct baton_ring_params p = spsc_params(8);
	struct baton_ring *cons;
	char name[BATON_NAME_MAX];
	uint64_t v, i, t;
	int fds[2];
	pid_t pid;

	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow memory across processes");

	force_memfd();
	ring_name(name, sizeof(name), "pdie");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &cons));
	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct baton_ring *prod;

		if (baton_ring_open(name, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_AUTO, &prod))
			_exit(2);
		for (v = 0; v < 3; v++)
			baton_spsc_try_push(prod, &v, sizeof(v));
		die_once_parked(fds[1], prod->cons_waiting);
	}
	cons->spin_limit = 0;
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, baton_spsc_pop(cons, &v, sizeof(v), OP_TIMEOUT_NS));
		EXPECT_EQ(i, v);
	}
	/* Parked when the producer dies: EPIPE, not the 5 s timeout. */
	EXPECT_EQ(-EPIPE, baton_spsc_pop(cons, &v, sizeof(v), OP_TIMEOUT_NS));
	t = now_ns();
	EXPECT_LT(0U, cons->park_calls);
	EXPECT_EQ(1, baton_ring_peer_gone(cons));
	check_kill_to_epipe(_metadata, fds[0], t, "spsc consumer");
	EXPECT_EQ(128 + SIGKILL, reap(pid));
	baton_ring_close(cons);
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
}

/* The consumer dies while the producer is parked on a full ring. */
TEST(spsc_consumer_dies_producer_parked)
{
	struct baton_ring_params p = spsc_params(4);
	struct baton_ring *prod;
	char name[BATON_NAME_MAX];
	uint64_t v, t;
	int fds[2];
	pid_t pid;

	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow memory across processes");

	force_memfd();
	ring_name(name, sizeof(name), "cdie");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &prod));
	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct baton_ring *cons;

		if (baton_ring_open(name, BATON_ROLE_CONSUMER,
				    BATON_BACKEND_AUTO, &cons))
			_exit(2);
		die_once_parked(fds[1], cons->prod_waiting);
	}
	for (v = 0; v < 4; v++)
		ASSERT_EQ(0, baton_spsc_push(prod, &v, sizeof(v), OP_TIMEOUT_NS));
	prod->spin_limit = 0;
	EXPECT_EQ(-EPIPE, baton_spsc_push(prod, &v, sizeof(v), OP_TIMEOUT_NS));
	t = now_ns();
	EXPECT_LT(0U, prod->park_calls);
	EXPECT_EQ(1, baton_ring_peer_gone(prod));
	check_kill_to_epipe(_metadata, fds[0], t, "spsc producer");
	EXPECT_EQ(128 + SIGKILL, reap(pid));
	baton_ring_close(prod);
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
}

/*
 * The consumer scribbles its head and dies: the producer's park says the
 * consumer has gone (EPIPE), as on kmod, not that the indices disagree.
 */
TEST(spsc_scribbled_head_then_consumer_dead_gives_epipe)
{
	struct baton_ring_params p = spsc_params(4);
	struct baton_ring *prod;
	char name[BATON_NAME_MAX];
	uint64_t v = 0;
	int fds[2];
	pid_t pid;

	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow memory across processes");

	force_memfd();
	ring_name(name, sizeof(name), "hdie");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &prod));
	ASSERT_EQ(0, baton_spsc_try_push(prod, &v, sizeof(v)));
	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct baton_ring *cons;

		if (baton_ring_open(name, BATON_ROLE_CONSUMER,
				    BATON_BACKEND_AUTO, &cons))
			_exit(2);
		__atomic_store_n(cons->head, 1000003, __ATOMIC_RELEASE);
		die_after(fds[1], 0);
	}
	EXPECT_EQ(128 + SIGKILL, reap(pid));
	EXPECT_EQ(-EPIPE, baton_ring_park(prod, OP_TIMEOUT_NS));
	EXPECT_EQ(1, baton_ring_peer_gone(prod));
	baton_ring_close(prod);
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
}

/* Not parked at the time: the first pop after the death drains, then EPIPE. */
TEST(spsc_producer_closed_then_drain)
{
	struct baton_ring_params p = spsc_params(8);
	struct baton_ring *prod, *cons;
	char name[BATON_NAME_MAX];
	uint64_t v = 5;

	force_memfd();
	ring_name(name, sizeof(name), "close");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &prod));
	ASSERT_EQ(0, baton_ring_open(name, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_AUTO, &cons));
	ASSERT_EQ(0, baton_spsc_try_push(prod, &v, sizeof(v)));
	baton_ring_close(prod);
	EXPECT_EQ(0, baton_spsc_pop(cons, &v, sizeof(v), -1));
	EXPECT_EQ(5U, v);
	/* No deadline: before, this waited for ever. */
	EXPECT_EQ(-EPIPE, baton_spsc_pop(cons, &v, sizeof(v), -1));
	EXPECT_EQ(1, baton_ring_peer_gone(cons));
	/* A new producer is a live peer again. */
	ASSERT_EQ(0, baton_ring_open(name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_AUTO, &prod));
	EXPECT_EQ(0, baton_ring_peer_gone(cons));
	EXPECT_EQ(-ETIMEDOUT, baton_spsc_pop(cons, &v, sizeof(v), 20 * MS));
	baton_ring_close(prod);
	baton_ring_close(cons);
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
}

/* A producer that never attached is not a dead one. */
TEST(spsc_no_producer_yet_times_out)
{
	struct baton_ring_params p = spsc_params(8);
	struct baton_ring *cons;
	char name[BATON_NAME_MAX];
	uint64_t v;

	force_memfd();
	ring_name(name, sizeof(name), "early");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &cons));
	EXPECT_EQ(-ETIMEDOUT, baton_spsc_pop(cons, &v, sizeof(v), 30 * MS));
	EXPECT_EQ(0, baton_ring_peer_gone(cons));
	baton_ring_close(cons);
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
}

/* ---- MPSC ---- */

static struct baton_ring_params mpsc_params(uint32_t slots, uint32_t maxp)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_MPSC, .slot_count = slots, .slot_size = 8,
		.mode = 0600, .backend = BATON_BACKEND_AUTO,
		.max_producers = maxp,
	};

	return p;
}

/* Two producers publish and die; the consumer drains both, then EPIPE. */
TEST(mpsc_all_producers_die)
{
	struct baton_ring_params p = mpsc_params(16, 4);
	struct baton_ring *cons;
	char name[BATON_NAME_MAX];
	uint64_t v, t, n = 0;
	pid_t pid[2];
	int fds[2], k, ret;

	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow memory across processes");

	force_memfd();
	ring_name(name, sizeof(name), "mdie");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &cons));
	ASSERT_EQ(0, pipe(fds));
	for (k = 0; k < 2; k++) {
		pid[k] = fork();
		ASSERT_LE(0, pid[k]);
		if (pid[k] == 0) {
			struct baton_ring *prod;

			if (baton_ring_open(name, BATON_ROLE_PRODUCER,
					    BATON_BACKEND_AUTO, &prod))
				_exit(2);
			for (v = 0; v < 3; v++)
				baton_mpsc_push(prod, &v, sizeof(v));
			die_after(fds[1], (100 + 50 * k) * MS);
		}
	}
	cons->spin_limit = 0;
	while ((ret = baton_mpsc_pop(cons, &v, sizeof(v), OP_TIMEOUT_NS,
				     NULL)) == 0)
		n++;
	t = now_ns();
	EXPECT_EQ(-EPIPE, ret);
	EXPECT_EQ(6U, n);
	/* The later of the two deaths ends the stream: after both kills. */
	check_kill_to_epipe(_metadata, fds[0], t, "mpsc consumer (1st death)");
	check_kill_to_epipe(_metadata, fds[0], t, "mpsc consumer (2nd death)");
	EXPECT_EQ(128 + SIGKILL, reap(pid[0]));
	EXPECT_EQ(128 + SIGKILL, reap(pid[1]));
	baton_ring_close(cons);
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
}

/* One producer left alive: no EPIPE. */
TEST(mpsc_one_producer_left)
{
	struct baton_ring_params p = mpsc_params(16, 4);
	struct baton_ring *cons, *live, *gone;
	char name[BATON_NAME_MAX];
	uint64_t v = 1;

	force_memfd();
	ring_name(name, sizeof(name), "mleft");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &cons));
	ASSERT_EQ(0, baton_ring_open(name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_AUTO, &live));
	ASSERT_EQ(0, baton_ring_open(name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_AUTO, &gone));
	ASSERT_EQ(0, baton_mpsc_push(gone, &v, sizeof(v)));
	baton_ring_close(gone);
	EXPECT_EQ(0, baton_mpsc_pop(cons, &v, sizeof(v), 20 * MS, NULL));
	EXPECT_EQ(-ETIMEDOUT, baton_mpsc_pop(cons, &v, sizeof(v), 30 * MS,
					     NULL));
	baton_ring_close(live);
	EXPECT_EQ(-EPIPE, baton_mpsc_pop(cons, &v, sizeof(v), -1, NULL));
	baton_ring_close(cons);
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
}

/* The consumer dies while a producer is parked on a full MPSC ring. */
TEST(mpsc_consumer_dies_producer_parked)
{
	struct baton_ring_params p = mpsc_params(4, 2);
	struct baton_ring *prod;
	char name[BATON_NAME_MAX];
	uint64_t v, t;
	int fds[2];
	pid_t pid;

	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow memory across processes");

	force_memfd();
	ring_name(name, sizeof(name), "mcdie");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &prod));
	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct baton_ring *cons;

		if (baton_ring_open(name, BATON_ROLE_CONSUMER,
				    BATON_BACKEND_AUTO, &cons))
			_exit(2);
		/* the producers' summary word: PARKED while any is */
		die_once_parked(fds[1], cons->prod_waiting);
	}
	for (v = 0; v < 4; v++)
		ASSERT_EQ(0, baton_mpsc_push(prod, &v, sizeof(v)));
	prod->spin_limit = 0;
	EXPECT_EQ(-EPIPE, baton_mpsc_push(prod, &v, sizeof(v)));
	t = now_ns();
	EXPECT_LT(0U, prod->park_calls);
	check_kill_to_epipe(_metadata, fds[0], t, "mpsc producer");
	EXPECT_EQ(128 + SIGKILL, reap(pid));
	baton_ring_close(prod);
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
}

/*
 * Per-producer parked state: two producers parked on a full ring, each
 * on its own ticket; the consumer's releases wake each (and only the one
 * whose slot it freed), and no producer's exit from a park silences the
 * other: both pushes complete.
 */
struct pusher {
	struct baton_ring *r;
	uint64_t val;
	int ret;
};

static void *push_one(void *arg)
{
	struct pusher *p = arg;

	p->ret = baton_mpsc_push(p->r, &p->val, sizeof(p->val));
	return NULL;
}

TEST(mpsc_producers_park_apart)
{
	struct baton_ring_params p = mpsc_params(4, 4);
	struct baton_ring *cons, *prod[2];
	struct pusher pu[2];
	char name[BATON_NAME_MAX];
	pthread_t t[2];
	uint64_t v, seen = 0, wakes = 0, parks = 0;
	int k;

	force_memfd();
	ring_name(name, sizeof(name), "mpark");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &cons));
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, baton_ring_open(name, BATON_ROLE_PRODUCER,
					     BATON_BACKEND_AUTO, &prod[k]));
		prod[k]->spin_limit = 0;
	}
	for (v = 0; v < 4; v++)
		ASSERT_EQ(0, baton_mpsc_push(prod[0], &v, sizeof(v)));
	for (k = 0; k < 2; k++) {
		pu[k].r = prod[k];
		pu[k].val = 100 + (uint64_t)k;
		ASSERT_EQ(0, pthread_create(&t[k], NULL, push_one, &pu[k]));
	}
	/* Both parked: two in the summary. */
	for (k = 0; k < 5000 &&
	     __atomic_load_n(cons->prod_waiting, __ATOMIC_ACQUIRE) >> 2 < 2;
	     k++)
		usleep(1000);
	EXPECT_EQ(2U, __atomic_load_n(cons->prod_waiting,
				      __ATOMIC_ACQUIRE) >> 2);
	usleep(5000);
	for (k = 0; k < 6; k++) {
		ASSERT_EQ(0, baton_mpsc_pop(cons, &v, sizeof(v), OP_TIMEOUT_NS,
					    NULL));
		if (v >= 100)
			seen |= 1ULL << (v - 100);
	}
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, pthread_join(t[k], NULL));
		EXPECT_EQ(0, pu[k].ret);
		parks += prod[k]->park_calls;
	}
	wakes = cons->wake_calls;
	EXPECT_EQ(3U, seen);
	EXPECT_EQ(0U, __atomic_load_n(cons->prod_waiting, __ATOMIC_ACQUIRE));
	TH_LOG("wakes of producers %llu, producer parks %llu",
	       (unsigned long long)wakes, (unsigned long long)parks);
	EXPECT_LE(wakes, parks);
	for (k = 0; k < 2; k++)
		baton_ring_close(prod[k]);
	baton_ring_close(cons);
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
}

/*
 * A short timeout is not spun past: with a spin limit of 2^28 polls
 * (about 7 s of pauses here, and still 0.7 s where a pause is ten times
 * cheaper) a 10 us pop used to spin the whole budget before its first
 * look at the clock. The spins now look every 64 polls. The bound is
 * loose (250 ms, 25,000 times the timeout): it tells a spin that looks
 * at the clock from one that does not, not how fast a park returns.
 */
TEST(short_timeouts_are_not_spun_past)
{
	struct baton_ring_params sp = spsc_params(8), mp = mpsc_params(8, 2);
	struct baton_ring *sc, *mc;
	char sname[BATON_NAME_MAX], mname[BATON_NAME_MAX];
	uint64_t v, t;

	force_memfd();
	ring_name(sname, sizeof(sname), "short");
	ring_name(mname, sizeof(mname), "shortm");
	ASSERT_EQ(0, baton_ring_create(sname, &sp, BATON_ROLE_CONSUMER, &sc));
	ASSERT_EQ(0, baton_ring_create(mname, &mp, BATON_ROLE_CONSUMER, &mc));
	sc->spin_limit = 1U << 28;
	sc->spin_budget = 0;	/* starts at the limit */
	mc->spin_limit = 1U << 28;
	mc->spin_budget = 0;
	t = now_ns();
	EXPECT_EQ(-ETIMEDOUT, baton_spsc_pop(sc, &v, sizeof(v), 10 * 1000));
	t = now_ns() - t;
	EXPECT_GT((uint64_t)(250 * MS), t) TH_LOG("SPSC pop of 10 us took %.1f ms", t / 1e6);
	t = now_ns();
	EXPECT_EQ(-ETIMEDOUT, baton_mpsc_pop(mc, &v, sizeof(v), 10 * 1000,
					     NULL));
	t = now_ns() - t;
	EXPECT_GT((uint64_t)(250 * MS), t) TH_LOG("MPSC pop of 10 us took %.1f ms", t / 1e6);
	baton_ring_close(sc);
	baton_ring_close(mc);
	baton_ring_unlink(sname, BATON_BACKEND_AUTO);
	baton_ring_unlink(mname, BATON_BACKEND_AUTO);
}

/*
 * A dead peer is seen past any spin limit: with the limit at its largest
 * (2^32 - 1 polls, minutes of pauses) and no deadline, a pop whose
 * producer dies used to spin out the whole budget before its first look
 * at the producer's role lock. A spin now ends after 10 ms whatever the
 * budget (lib/internal.h baton__spin_until()), so the pop parks and sees
 * the death. SIGALRM after 3 s fails a spin that does not.
 */
static void pop_after_death(struct __test_metadata *_metadata, int mpsc)
{
	struct baton_ring_params p = mpsc ? mpsc_params(8, 2) : spsc_params(8);
	struct baton_ring *cons;
	char name[BATON_NAME_MAX];
	uint64_t v, t;
	int fds[2], ret;
	pid_t pid;

	force_memfd();
	ring_name(name, sizeof(name), mpsc ? "hugem" : "huges");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &cons));
	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct baton_ring *prod;

		if (baton_ring_open(name, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_AUTO, &prod))
			_exit(2);
		die_after(fds[1], 50 * MS);
	}
	cons->spin_limit = UINT32_MAX;
	cons->spin_budget = 0;	/* starts at the limit */
	alarm(3);
	ret = mpsc ? baton_mpsc_pop(cons, &v, sizeof(v), -1, NULL) :
		     baton_spsc_pop(cons, &v, sizeof(v), -1);
	t = now_ns();
	alarm(0);
	EXPECT_EQ(-EPIPE, ret);
	check_kill_to_epipe(_metadata, fds[0], t, mpsc ? "mpsc" : "spsc");
	EXPECT_EQ(128 + SIGKILL, reap(pid));
	baton_ring_close(cons);
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
}

TEST(spsc_death_seen_past_a_huge_spin_limit)
{
	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow memory across processes");
	pop_after_death(_metadata, 0);
}

TEST(mpsc_death_seen_past_a_huge_spin_limit)
{
	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow memory across processes");
	pop_after_death(_metadata, 1);
}

TEST_HARNESS_MAIN
