// SPDX-License-Identifier: MIT
/*
 * Waitsets on the memfd backend: 1, 8 and 64 rings, consumers and
 * producers, with events on chosen subsets, found at once or after a
 * sleep (futex_waitv), peers killed with SIGKILL, epoch domains, and
 * timeouts. Every wait has a timeout, so a lost wakeup is a failure.
 */
#include "kselftest_harness.h"
#include "common.h"

#define MS (1000LL * 1000)
#define MAXN 64

FIXTURE(ws) {
	char name[MAXN][BATON_NAME_MAX];
	struct baton_ring *prod[MAXN], *cons[MAXN];
	struct baton_waitset *ws;
	struct baton_waitset_event ev[MAXN];
	uint32_t n;
};

FIXTURE_VARIANT(ws) {
	uint32_t n;
};

FIXTURE_VARIANT_ADD(ws, one) { .n = 1 };
FIXTURE_VARIANT_ADD(ws, eight) { .n = 8 };
FIXTURE_VARIANT_ADD(ws, sixty_four) { .n = 64 };

FIXTURE_SETUP(ws)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_SPSC, .slot_count = 4, .slot_size = 8,
		.mode = 0600, .backend = BATON_BACKEND_AUTO,
	};
	uint32_t i;

	force_memfd();
	self->n = variant->n;
	ASSERT_EQ(0, baton_waitset_create(&self->ws));
	for (i = 0; i < self->n; i++) {
		ring_name(self->name[i], sizeof(self->name[i]), "ws");
		ASSERT_EQ(0, baton_ring_create(self->name[i], &p,
					       BATON_ROLE_CONSUMER,
					       &self->cons[i]));
		ASSERT_EQ(0, baton_ring_open(self->name[i], BATON_ROLE_PRODUCER,
					     BATON_BACKEND_AUTO,
					     &self->prod[i]));
	}
}

FIXTURE_TEARDOWN(ws)
{
	uint32_t i;

	baton_waitset_destroy(self->ws);
	for (i = 0; i < self->n; i++) {
		baton_ring_close(self->prod[i]);
		baton_ring_close(self->cons[i]);
		baton_ring_unlink(self->name[i], BATON_BACKEND_AUTO);
	}
}

static void add_consumers(struct __test_metadata *_metadata,
			  FIXTURE_DATA(ws) *self)
{
	uint32_t i;

	for (i = 0; i < self->n; i++)
		ASSERT_EQ(0, baton_waitset_add_ring(self->ws, self->cons[i],
						    1000 + i));
}

/* The cookies reported, as a bitmap of ring indices. */
static uint64_t reported(const struct baton_waitset_event *ev, int n,
			 uint32_t want_events)
{
	uint64_t m = 0;
	int i;

	for (i = 0; i < n; i++)
		if (ev[i].events == want_events)
			m |= 1ULL << (ev[i].cookie - 1000);
	return m;
}

/* Subsets: none, each single one, every third, all. */
static uint64_t subset(uint32_t n, int which)
{
	uint64_t all = n == 64 ? ~0ULL : (1ULL << n) - 1;

	switch (which) {
	case 0:
		return all & 0x9249249249249249ULL;
	case 1:
		return all;
	default:
		return 1ULL << ((uint32_t)which % n);
	}
}

static void push_subset(struct __test_metadata *_metadata,
			FIXTURE_DATA(ws) *self, uint64_t m)
{
	uint64_t v = 7;
	uint32_t i;

	for (i = 0; i < self->n; i++)
		if (m & (1ULL << i))
			ASSERT_EQ(0, baton_spsc_try_push(self->prod[i], &v,
							 sizeof(v)));
}

static void drain_subset(struct __test_metadata *_metadata,
			 FIXTURE_DATA(ws) *self, uint64_t m)
{
	uint64_t v;
	uint32_t i;

	for (i = 0; i < self->n; i++)
		if (m & (1ULL << i))
			ASSERT_EQ(0, baton_spsc_try_pop(self->cons[i], &v,
							sizeof(v)));
}

/* baton.h: "NULL is a no-op", returning 0 (it used to say -EINVAL). */
TEST(destroy_of_null_is_a_no_op)
{
	EXPECT_EQ(0, baton_waitset_destroy(NULL));
}

TEST_F(ws, empty_times_out)
{
	uint64_t t0 = now_ns();

	EXPECT_EQ(-EINVAL, baton_waitset_wait(self->ws, self->ev, MAXN, 0));
	add_consumers(_metadata, self);
	EXPECT_EQ(-ETIMEDOUT, baton_waitset_wait(self->ws, self->ev, MAXN, 0));
	EXPECT_EQ(-ETIMEDOUT, baton_waitset_wait(self->ws, self->ev, MAXN,
						 20 * MS));
	EXPECT_LE(20 * MS, (int64_t)(now_ns() - t0));
	EXPECT_EQ(-EEXIST, baton_waitset_add_ring(self->ws, self->cons[0], 1));
	EXPECT_EQ(-ENOENT, baton_waitset_remove(self->ws, 1));
}

/* Ready before the wait: reported at once, exactly the subset. */
TEST_F(ws, subsets_at_once)
{
	int which, n;

	add_consumers(_metadata, self);
	for (which = 0; which < 6; which++) {
		uint64_t m = subset(self->n, which);

		push_subset(_metadata, self, m);
		n = baton_waitset_wait(self->ws, self->ev, MAXN, OP_TIMEOUT_NS);
		ASSERT_EQ(__builtin_popcountll(m), n);
		EXPECT_EQ(m, reported(self->ev, n, BATON_WS_READY));
		drain_subset(_metadata, self, m);
	}
}

struct later {
	FIXTURE_DATA(ws) *self;
	uint64_t mask;
	int64_t delay_ns;
};

static void *push_later(void *arg)
{
	struct later *l = arg;
	uint64_t v = 9;
	uint32_t i;

	usleep((useconds_t)(l->delay_ns / 1000));
	for (i = 0; i < l->self->n; i++)
		if (l->mask & (1ULL << i))
			baton_spsc_try_push(l->self->prod[i], &v, sizeof(v));
	return NULL;
}

/* Asleep when the events come: woken, and only ready objects reported. */
TEST_F(ws, subsets_after_sleep)
{
	int which, n;

	add_consumers(_metadata, self);
	for (which = 0; which < 6; which++) {
		struct later l = { self, subset(self->n, which), 20 * MS };
		uint64_t got = 0;
		pthread_t t;

		ASSERT_EQ(0, pthread_create(&t, NULL, push_later, &l));
		while (got != l.mask) {
			n = baton_waitset_wait(self->ws, self->ev, MAXN,
					       OP_TIMEOUT_NS);
			ASSERT_LT(0, n);
			got |= reported(self->ev, n, BATON_WS_READY);
			EXPECT_EQ(0U, got & ~l.mask);
			if (got != l.mask)
				usleep(100);	/* the rest of the burst */
		}
		ASSERT_EQ(0, pthread_join(t, NULL));
		drain_subset(_metadata, self, l.mask);
	}
	/* One wake per arm: no producer woke more than its ring parked. */
	for (n = 0; n < (int)self->n; n++)
		EXPECT_LE(self->prod[n]->wake_calls,
			  self->cons[n]->park_calls);
}

/* Producers in the set: a full ring becomes ready when drained. */
TEST_F(ws, producers)
{
	uint64_t v = 1, m;
	uint32_t i;
	int n;

	for (i = 0; i < self->n; i++) {
		while (!baton_spsc_try_push(self->prod[i], &v, sizeof(v)))
			;
		ASSERT_EQ(0, baton_waitset_add_ring(self->ws, self->prod[i],
						    1000 + i));
	}
	EXPECT_EQ(-ETIMEDOUT, baton_waitset_wait(self->ws, self->ev, MAXN,
						 10 * MS));
	m = subset(self->n, 0);
	drain_subset(_metadata, self, m);
	n = baton_waitset_wait(self->ws, self->ev, MAXN, OP_TIMEOUT_NS);
	ASSERT_EQ(__builtin_popcountll(m), n);
	EXPECT_EQ(m, reported(self->ev, n, BATON_WS_READY));
}

/*
 * Producers of a subset die (SIGKILL) with one message each unread: the
 * set reports those rings ready (drain first), then gone, and no other.
 */
TEST_F(ws, deaths)
{
	uint64_t m = subset(self->n, 0) | 1, v = 3, gone = 0, t0;
	pid_t pid;
	uint32_t i;
	int n, st;

	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow memory across processes");

	add_consumers(_metadata, self);
	/* The children hold the producer roles of the dying rings. */
	for (i = 0; i < self->n; i++) {
		if (!(m & (1ULL << i)))
			continue;
		baton_ring_close(self->prod[i]);
		self->prod[i] = NULL;
	}
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct baton_ring *p;

		for (i = 0; i < self->n; i++) {
			if (!(m & (1ULL << i)))
				continue;
			if (baton_ring_open(self->name[i], BATON_ROLE_PRODUCER,
					    BATON_BACKEND_AUTO, &p) ||
			    baton_spsc_try_push(p, &v, sizeof(v)))
				_exit(2);
		}
		usleep(50000);
		raise(SIGKILL);
	}
	n = baton_waitset_wait(self->ws, self->ev, MAXN, OP_TIMEOUT_NS);
	ASSERT_LT(0, n);
	waitpid(pid, &st, 0);
	ASSERT_TRUE(WIFSIGNALED(st));
	t0 = now_ns();
	/* Everything published is read before GONE shows. */
	for (;;) {
		n = baton_waitset_wait(self->ws, self->ev, MAXN, OP_TIMEOUT_NS);
		ASSERT_LT(0, n);
		EXPECT_EQ(0U, reported(self->ev, n, BATON_WS_READY) & ~m);
		drain_subset(_metadata, self,
			     reported(self->ev, n, BATON_WS_READY));
		gone |= reported(self->ev, n, BATON_WS_GONE);
		EXPECT_EQ(0U, gone & ~m);
		if (gone == m)
			break;
	}
	TH_LOG("%d deaths seen %.3f ms after the reap",
	       __builtin_popcountll(m), (double)(now_ns() - t0) / 1e6);
	for (i = 0; i < self->n; i++)
		if (m & (1ULL << i))
			EXPECT_EQ(1, baton_ring_peer_gone(self->cons[i]));
}

/*
 * Consumers of a subset die (SIGKILL) with their rings empty, so their
 * producers always have room: the set reports those producers gone, and
 * not ready (nobody will read what they push), while the others stay
 * ready. Before, a producer with room was never asked about its peer:
 * READY on every wait, GONE only once it had filled the ring.
 */
TEST_F(ws, consumers_die_while_their_producers_have_room)
{
	uint64_t m = subset(self->n, 0) | 1, gone = 0, t0;
	pid_t pid;
	uint32_t i;
	int n, st;

	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow memory across processes");

	for (i = 0; i < self->n; i++) {
		ASSERT_EQ(0, baton_waitset_add_ring(self->ws, self->prod[i],
						    1000 + i));
		if (!(m & (1ULL << i)))
			continue;
		baton_ring_close(self->cons[i]);
		self->cons[i] = NULL;
	}
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct baton_ring *c;

		for (i = 0; i < self->n; i++)
			if ((m & (1ULL << i)) &&
			    baton_ring_open(self->name[i], BATON_ROLE_CONSUMER,
					    BATON_BACKEND_AUTO, &c))
				_exit(2);
		raise(SIGKILL);
	}
	waitpid(pid, &st, 0);
	ASSERT_TRUE(WIFSIGNALED(st));
	t0 = now_ns();
	while (gone != m && now_ns() - t0 < (uint64_t)OP_TIMEOUT_NS) {
		n = baton_waitset_wait(self->ws, self->ev, MAXN, OP_TIMEOUT_NS);
		ASSERT_LT(0, n);
		gone |= reported(self->ev, n, BATON_WS_GONE);
		EXPECT_EQ(0U, gone & ~m);
		/* The living consumers' producers: ready, as before. */
		EXPECT_EQ(0U, reported(self->ev, n, BATON_WS_READY) & gone);
		usleep(1000);
	}
	EXPECT_EQ(m, gone);
	TH_LOG("%d deaths seen %.3f ms after the reap",
	       __builtin_popcountll(m), (double)(now_ns() - t0) / 1e6);
	for (i = 0; i < self->n; i++)
		if (m & (1ULL << i))
			EXPECT_EQ(1, baton_ring_peer_gone(self->prod[i]));
}

/*
 * The other side of the test above: a producer whose consumer has not
 * attached yet, or is alive, is READY, never GONE, however many death
 * looks the waits make (a look every 5 ms here: 20 ms sleeps between).
 */
TEST(producer_before_its_consumer_attaches_is_ready_not_gone)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_SPSC, .slot_count = 4, .slot_size = 8,
		.mode = 0600, .backend = BATON_BACKEND_AUTO,
	};
	struct baton_waitset_event ev[1];
	struct baton_waitset *ws;
	struct baton_ring *prod, *cons;
	char name[BATON_NAME_MAX];
	int i;

	force_memfd();
	ring_name(name, sizeof(name), "pre");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &prod));
	ASSERT_EQ(0, baton_waitset_create(&ws));
	ASSERT_EQ(0, baton_waitset_add_ring(ws, prod, 1000));
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(1, baton_waitset_wait(ws, ev, 1, 0));
		EXPECT_EQ(BATON_WS_READY, ev[0].events);
		usleep(20000);
	}
	ASSERT_EQ(0, baton_ring_open(name, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_AUTO, &cons));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(1, baton_waitset_wait(ws, ev, 1, 0));
		EXPECT_EQ(BATON_WS_READY, ev[0].events);
		usleep(20000);
	}
	baton_waitset_destroy(ws);
	baton_ring_close(cons);
	baton_ring_close(prod);
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
}

/* An epoch domain beside the rings: ready when the reader leaves. */
TEST_F(ws, epoch_entry)
{
	char name[BATON_NAME_MAX];
	struct baton_epoch_params p = {
		.max_participants = 4, .queue_len = 4, .mode = 0600,
		.backend = BATON_BACKEND_AUTO,
	};
	struct baton_epoch *d, *r;
	uint64_t e;
	int n;

	ring_name(name, sizeof(name), "wse");
	ASSERT_EQ(0, baton_epoch_create(name, &p, &d));
	ASSERT_LE(0, baton_epoch_register(d));
	ASSERT_EQ(0, baton_epoch_open(name, BATON_BACKEND_AUTO, &r));
	ASSERT_LE(0, baton_epoch_register(r));
	add_consumers(_metadata, self);
	baton_epoch_enter(r);
	ASSERT_EQ(0, baton_epoch_retire(d, 1, 0, &e));
	ASSERT_EQ(0, baton_waitset_add_epoch(self->ws, d, e, 7));
	EXPECT_EQ(-ETIMEDOUT, baton_waitset_wait(self->ws, self->ev, MAXN,
						 20 * MS));
	baton_epoch_exit(r);
	n = baton_waitset_wait(self->ws, self->ev, MAXN, OP_TIMEOUT_NS);
	ASSERT_EQ(1, n);
	EXPECT_EQ(7U, self->ev[0].cookie);
	EXPECT_EQ(BATON_WS_READY, self->ev[0].events);
	EXPECT_EQ(0, baton_waitset_remove(self->ws, 7));
	baton_epoch_close(r);
	baton_epoch_close(d);
	baton_epoch_unlink(name, BATON_BACKEND_AUTO);
}

/* MPSC rings in a set: the consumer, and a producer on a full ring. */
TEST(mpsc_in_set)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_MPSC, .slot_count = 2, .slot_size = 8,
		.mode = 0600, .backend = BATON_BACKEND_AUTO, .max_producers = 2,
	};
	struct baton_waitset_event ev[2];
	struct baton_waitset *ws;
	struct baton_ring *cons, *prod;
	char name[BATON_NAME_MAX];
	uint64_t v = 5;

	force_memfd();
	ring_name(name, sizeof(name), "wsm");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &cons));
	ASSERT_EQ(0, baton_ring_open(name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_AUTO, &prod));
	ASSERT_EQ(0, baton_waitset_create(&ws));
	ASSERT_EQ(0, baton_waitset_add_ring(ws, cons, 1));
	EXPECT_EQ(-ETIMEDOUT, baton_waitset_wait(ws, ev, 2, 10 * MS));
	ASSERT_EQ(0, baton_mpsc_push(prod, &v, sizeof(v)));
	ASSERT_EQ(1, baton_waitset_wait(ws, ev, 2, OP_TIMEOUT_NS));
	EXPECT_EQ(1U, ev[0].cookie);
	ASSERT_EQ(0, baton_mpsc_push(prod, &v, sizeof(v)));
	ASSERT_EQ(0, baton_waitset_remove(ws, 1));
	ASSERT_EQ(0, baton_waitset_add_ring(ws, prod, 2));
	EXPECT_EQ(-ETIMEDOUT, baton_waitset_wait(ws, ev, 2, 10 * MS));
	ASSERT_EQ(0, baton_mpsc_pop(cons, &v, sizeof(v), 0, NULL));
	ASSERT_EQ(1, baton_waitset_wait(ws, ev, 2, OP_TIMEOUT_NS));
	EXPECT_EQ(2U, ev[0].cookie);
	baton_waitset_destroy(ws);
	baton_ring_close(prod);
	baton_ring_close(cons);
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
}

/*
 * A death is seen beside a ring that stays ready: ring 0 keeps a message
 * nobody reads, ring 1's producer is killed. memfd asks the role locks
 * when they are due, whatever the sleeps do; before that, only a sleep
 * slice that ran out asked them, and a wait that found ring 0 ready at
 * its first look never slept, so ring 1's death was never reported.
 * Both the blocking form and polls (timeout 0) must see it.
 */
TEST_F(ws, death_seen_beside_a_ready_ring)
{
	uint64_t v = 1, t0;
	int n, k, poll, st;
	pid_t pid;

	if (self->n < 2)
		SKIP(return, "needs two rings");
	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow memory across processes");
	add_consumers(_metadata, self);
	for (poll = 0; poll < 2; poll++) {
		uint32_t dead = 1 + (uint32_t)poll;
		int seen = 0;

		ASSERT_EQ(0, baton_spsc_try_push(self->prod[0], &v, sizeof(v)));
		baton_ring_close(self->prod[dead]);
		self->prod[dead] = NULL;
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			struct baton_ring *p;

			if (baton_ring_open(self->name[dead],
					    BATON_ROLE_PRODUCER,
					    BATON_BACKEND_AUTO, &p))
				_exit(2);
			raise(SIGKILL);
		}
		waitpid(pid, &st, 0);
		ASSERT_TRUE(WIFSIGNALED(st));
		t0 = now_ns();
		while (!seen && now_ns() - t0 < 1000 * MS) {
			n = baton_waitset_wait(self->ws, self->ev, MAXN,
					       poll ? 0 : OP_TIMEOUT_NS);
			ASSERT_LT(0, n);
			for (k = 0; k < n; k++)
				seen |= self->ev[k].cookie == 1000 + dead &&
					self->ev[k].events == BATON_WS_GONE;
			usleep(100);
		}
		EXPECT_TRUE(seen)
			TH_LOG("%s: ring %u's death never reported beside ring 0",
			       poll ? "polls" : "waits", dead);
		ASSERT_EQ(0, baton_spsc_try_pop(self->cons[0], &v, sizeof(v)));
		ASSERT_EQ(0, baton_waitset_remove(self->ws, 1000 + dead));
		if (self->n < 3)
			break;
	}
}

/*
 * Objects that stay ready take turns: with room for one event per wait,
 * two rings that both keep a message are reported in turn, not the
 * first for ever.
 */
TEST_F(ws, ready_rings_take_turns)
{
	struct baton_waitset_event one;
	uint64_t v = 2, seen = 0;
	int i;

	if (self->n < 2)
		SKIP(return, "needs two rings");
	add_consumers(_metadata, self);
	ASSERT_EQ(0, baton_spsc_try_push(self->prod[0], &v, sizeof(v)));
	ASSERT_EQ(0, baton_spsc_try_push(self->prod[1], &v, sizeof(v)));
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(1, baton_waitset_wait(self->ws, &one, 1, 0));
		seen |= 1ULL << (one.cookie - 1000);
	}
	EXPECT_EQ(3U, seen);
}

/*
 * Corrupt indices are an error event, on either role (waitset.rst): a
 * tail scribbled past the slot count leaves the consumer nothing to
 * read, and the set used to wait its whole timeout, every time.
 */
TEST_F(ws, corrupt_indices_are_an_error)
{
	uint64_t saved;
	int n;

	ASSERT_EQ(0, baton_waitset_add_ring(self->ws, self->cons[0], 5));
	saved = *self->prod[0]->tail;
	__atomic_store_n(self->prod[0]->tail, saved + 1000, __ATOMIC_RELAXED);
	n = baton_waitset_wait(self->ws, self->ev, MAXN, 200 * MS);
	ASSERT_EQ(1, n);
	EXPECT_EQ(5U, self->ev[0].cookie);
	EXPECT_EQ(BATON_WS_ERROR, self->ev[0].events);
	__atomic_store_n(self->prod[0]->tail, saved, __ATOMIC_RELAXED);
	ASSERT_EQ(0, baton_waitset_remove(self->ws, 5));
	/* The producer's side, full (no room cached): a head past its tail. */
	ASSERT_EQ(0, baton_waitset_add_ring(self->ws, self->prod[0], 6));
	for (n = 0; n < 4; n++)
		ASSERT_EQ(0, baton_spsc_try_push(self->prod[0], &saved,
						 sizeof(saved)));
	saved = *self->cons[0]->head;
	__atomic_store_n(self->cons[0]->head, saved + 1000, __ATOMIC_RELAXED);
	n = baton_waitset_wait(self->ws, self->ev, MAXN, 200 * MS);
	ASSERT_EQ(1, n);
	EXPECT_EQ(6U, self->ev[0].cookie);
	EXPECT_EQ(BATON_WS_ERROR, self->ev[0].events);
	__atomic_store_n(self->cons[0]->head, saved, __ATOMIC_RELAXED);
}

/* A ring closed while in a set is an error event, not a crash. */
TEST_F(ws, ring_closed_in_a_set_is_an_error)
{
	int n;

	ASSERT_EQ(0, baton_waitset_add_ring(self->ws, self->cons[0], 9));
	ASSERT_EQ(0, baton_ring_close(self->cons[0]));
	self->cons[0] = NULL;
	n = baton_waitset_wait(self->ws, self->ev, MAXN, 50 * MS);
	ASSERT_EQ(1, n);
	EXPECT_EQ(9U, self->ev[0].cookie);
	EXPECT_EQ(BATON_WS_ERROR, self->ev[0].events);
	EXPECT_EQ(0, baton_waitset_remove(self->ws, 9));
}

/*
 * MPSC on memfd: producer A holds ticket 0 and is killed, producer B
 * publishes tickets 1..3. The set tombstones A's ticket as the module's
 * poll does: READY, and the pops give LOST, then 1, 2, 3. Before, the set
 * stayed not ready while B lived (every wait timed out), and once B had
 * closed it said GONE, "drained", with the three messages unread. Run
 * with B open through the wait, and with B closed before it.
 */
static void dead_ticket_in_a_set(struct __test_metadata *_metadata,
				 int b_closes)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_MPSC, .slot_count = 8, .slot_size = 8,
		.mode = 0600, .backend = BATON_BACKEND_AUTO, .max_producers = 4,
	};
	struct baton_waitset_event ev[2];
	struct baton_ring *cons, *b;
	struct baton_waitset *ws;
	char name[BATON_NAME_MAX];
	uint64_t v, idx;
	int n, st;
	pid_t a;

	force_memfd();
	ring_name(name, sizeof(name), "wsd");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &cons));
	/* Ticket 0, taken and never published. */
	a = fork_ticket0_holder(name);
	ASSERT_LT(0, a);
	ASSERT_EQ(0, baton_ring_open(name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_AUTO, &b));
	for (v = 1; v <= 3; v++)
		ASSERT_EQ(0, baton_mpsc_push(b, &v, sizeof(v)));
	kill(a, SIGKILL);
	waitpid(a, &st, 0);
	if (b_closes)
		baton_ring_close(b);
	ASSERT_EQ(0, baton_waitset_create(&ws));
	ASSERT_EQ(0, baton_waitset_add_ring(ws, cons, 1));
	n = baton_waitset_wait(ws, ev, 2, 1000 * MS);
	ASSERT_EQ(1, n);
	EXPECT_EQ(BATON_WS_READY, ev[0].events);
	EXPECT_EQ(BATON_MPSC_LOST, baton_mpsc_pop(cons, &v, sizeof(v), 0, NULL));
	for (idx = 1; idx <= 3; idx++) {
		ASSERT_EQ(1, baton_waitset_wait(ws, ev, 2, 1000 * MS));
		EXPECT_EQ(BATON_WS_READY, ev[0].events);
		ASSERT_EQ(0, baton_mpsc_pop(cons, &v, sizeof(v), 0, NULL));
		EXPECT_EQ(idx, v);
	}
	if (b_closes) {
		ASSERT_EQ(1, baton_waitset_wait(ws, ev, 2, 1000 * MS));
		EXPECT_EQ(BATON_WS_GONE, ev[0].events);
	} else {
		EXPECT_EQ(-ETIMEDOUT, baton_waitset_wait(ws, ev, 2, 20 * MS));
		baton_ring_close(b);
	}
	baton_waitset_destroy(ws);
	baton_ring_close(cons);
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
}

/*
 * An MPSC consumer whose every producer has gone, its tail left behind
 * the consumer's head (a producer's scribble before it died): the blocking
 * pop says -EPIPE, as the module does (a signed distance), so the set
 * says GONE. Before, the set took any tail other than its head for a
 * ticket still out, and timed out on every wait.
 */
TEST(mpsc_tail_behind_the_head_with_every_producer_gone_is_gone)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_MPSC, .slot_count = 4, .slot_size = 8,
		.mode = 0600, .backend = BATON_BACKEND_AUTO,
		.max_producers = 2,
	};
	struct baton_waitset_event ev[2];
	struct baton_waitset *ws;
	struct baton_ring *cons;
	char name[BATON_NAME_MAX];
	uint64_t v = 1;
	int n, st;
	pid_t pid;

	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow memory across processes");
	force_memfd();
	ring_name(name, sizeof(name), "tb");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &cons));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct baton_ring *pr;

		if (baton_ring_open(name, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_AUTO, &pr) ||
		    baton_mpsc_push(pr, &v, sizeof(v)) ||
		    baton_mpsc_push(pr, &v, sizeof(v)))
			_exit(2);
		/* Both taken (head 2), then the tail set back to 1. */
		while (__atomic_load_n(pr->head, __ATOMIC_ACQUIRE) != 2)
			usleep(1000);
		__atomic_store_n(pr->tail, 1, __ATOMIC_RELAXED);
		raise(SIGKILL);
	}
	ASSERT_EQ(0, baton_mpsc_pop(cons, &v, sizeof(v), OP_TIMEOUT_NS, NULL));
	ASSERT_EQ(0, baton_mpsc_pop(cons, &v, sizeof(v), OP_TIMEOUT_NS, NULL));
	waitpid(pid, &st, 0);
	ASSERT_TRUE(WIFSIGNALED(st));

	ASSERT_EQ(0, baton_waitset_create(&ws));
	ASSERT_EQ(0, baton_waitset_add_ring(ws, cons, 1));
	n = baton_waitset_wait(ws, ev, 2, 200 * MS);
	ASSERT_EQ(1, n);
	EXPECT_EQ(BATON_WS_GONE, ev[0].events);
	EXPECT_EQ(-EPIPE, baton_mpsc_pop(cons, &v, sizeof(v), 200 * MS, NULL));
	baton_waitset_destroy(ws);
	baton_ring_close(cons);
	baton_ring_unlink(name, BATON_BACKEND_AUTO);
}

TEST(mpsc_dead_ticket_with_a_live_producer_is_ready)
{
	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow memory across processes");
	dead_ticket_in_a_set(_metadata, 0);
}

TEST(mpsc_dead_ticket_then_every_producer_gone_drains_before_gone)
{
	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow memory across processes");
	dead_ticket_in_a_set(_metadata, 1);
}

/* An epoch domain of its own, a registered reader holding epoch @e. */
struct ws_domain {
	char name[BATON_NAME_MAX];
	struct baton_epoch *d, *r;
	uint64_t e;
};

static void domain_with_reader(struct __test_metadata *_metadata,
			       struct ws_domain *w)
{
	struct baton_epoch_params p = {
		.max_participants = 4, .queue_len = 4, .mode = 0600,
		.backend = BATON_BACKEND_AUTO,
	};

	force_memfd();
	ring_name(w->name, sizeof(w->name), "wsx");
	ASSERT_EQ(0, baton_epoch_create(w->name, &p, &w->d));
	ASSERT_LE(0, baton_epoch_register(w->d));
	ASSERT_EQ(0, baton_epoch_open(w->name, BATON_BACKEND_AUTO, &w->r));
	ASSERT_LE(0, baton_epoch_register(w->r));
	baton_epoch_enter(w->r);
	ASSERT_EQ(0, baton_epoch_retire(w->d, 1, 0, &w->e));
}

static void domain_done(struct ws_domain *w)
{
	baton_epoch_close(w->r);
	baton_epoch_close(w->d);
	baton_epoch_unlink(w->name, BATON_BACKEND_AUTO);
}

/*
 * Lock the collector's byte of @w's domain file from a second open file
 * description, as another opener stopped mid-cycle (or a hostile one)
 * would hold it: the fd, whose close lets it go, or -1.
 */
static int hold_collector_lock(const struct ws_domain *w)
{
	struct flock fl = {
		.l_type = F_WRLCK, .l_whence = SEEK_SET,
		.l_start = (1LL << 40) - 1, .l_len = 1,	/* the collector's */
	};
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/dev/shm/baton-epoch.%s", w->name);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return -1;
	if (fcntl(fd, F_OFD_SETLK, &fl)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * baton_epoch_poll() never blocks (baton_epoch.h), so neither does a set
 * with an epoch entry: another opener holding the collector's lock (one
 * stopped mid-cycle, or a hostile one) used to keep a 10 ms wait asleep
 * in fcntl(F_OFD_SETLKW) for as long as it held the lock.
 */
TEST(epoch_poll_never_blocks_on_a_held_collector_lock)
{
	struct baton_waitset_event ev[2];
	struct baton_waitset *ws;
	struct ws_domain w;
	int fd;

	domain_with_reader(_metadata, &w);
	fd = hold_collector_lock(&w);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EAGAIN, baton_epoch_poll(w.d, w.e));
	ASSERT_EQ(0, baton_waitset_create(&ws));
	ASSERT_EQ(0, baton_waitset_add_epoch(ws, w.d, w.e, 3));
	EXPECT_EQ(-ETIMEDOUT, baton_waitset_wait(ws, ev, 2, 10 * MS));
	/* The lock goes; the reader leaves: ready. */
	close(fd);
	baton_epoch_exit(w.r);
	ASSERT_EQ(1, baton_waitset_wait(ws, ev, 2, OP_TIMEOUT_NS));
	EXPECT_EQ(BATON_WS_READY, ev[0].events);
	baton_waitset_destroy(ws);
	domain_done(&w);
}

/*
 * The same held lock and baton_epoch_synchronize(): it waited for the
 * lock in fcntl(F_OFD_SETLKW), retried on EINTR, and so kept neither its
 * deadline nor the EINTR it documents. Now it tries the lock, and a
 * cycle under way elsewhere leaves it to wait on the frontier.
 */
TEST(epoch_synchronize_keeps_its_deadline_with_a_held_collector_lock)
{
	struct ws_domain w;
	pid_t holder;
	int fd;

	domain_with_reader(_metadata, &w);
	fd = hold_collector_lock(&w);
	ASSERT_LE(0, fd);
	alarm(5);
	EXPECT_EQ(-ETIMEDOUT, baton_epoch_synchronize(w.d, w.e, 10 * MS,
						      &holder));
	EXPECT_EQ(-ETIMEDOUT, baton_epoch_destroy_sync(w.d, 2, 0, 10 * MS,
						       &holder));
	alarm(0);
	/* The lock goes; the reader leaves: done. */
	close(fd);
	baton_epoch_exit(w.r);
	EXPECT_EQ(0, baton_epoch_synchronize(w.d, w.e, OP_TIMEOUT_NS, NULL));
	domain_done(&w);
}

static void *exit_later(void *arg)
{
	struct ws_domain *w = arg;

	usleep(20 * 1000);
	baton_epoch_exit(w->r);
	return NULL;
}

/*
 * A set waiting on an epoch is woken by the reader that leaves it, as a
 * synchronizer is (waitset.rst): the reader's exit kicks wake_seq only
 * if its epoch is at or below sync_epoch, which the set did not raise,
 * so readiness came only when a 5 ms slice ran out.
 */
TEST(an_epoch_entry_is_woken_by_its_readers_exit)
{
	struct baton_waitset_event ev[2];
	struct baton_epoch_stats st;
	struct baton_waitset *ws;
	struct ws_domain w;
	pthread_t th;

	domain_with_reader(_metadata, &w);
	ASSERT_EQ(0, baton_waitset_create(&ws));
	ASSERT_EQ(0, baton_waitset_add_epoch(ws, w.d, w.e, 4));
	ASSERT_EQ(0, pthread_create(&th, NULL, exit_later, &w));
	ASSERT_EQ(1, baton_waitset_wait(ws, ev, 2, OP_TIMEOUT_NS));
	EXPECT_EQ(BATON_WS_READY, ev[0].events);
	pthread_join(th, NULL);
	ASSERT_EQ(0, baton_epoch_stats(w.d, &st));
	EXPECT_LE(1U, st.kicks);
	baton_waitset_destroy(ws);
	domain_done(&w);
}

/*
 * A set that spins beside an epoch entry reads the published frontier;
 * it does not run a collection cycle per look (each a membarrier: an IPI
 * to every CPU running a baton process). Before, a 10 ms wait with an
 * idle ring ran about 2000 cycles; now one at the first look, and one
 * after each arm and each sleep (5 ms slices).
 */
TEST(spinning_beside_an_epoch_runs_no_cycles)
{
	struct baton_ring_params rp = {
		.kind = BATON_RING_SPSC, .slot_count = 4, .slot_size = 8,
		.mode = 0600, .backend = BATON_BACKEND_AUTO,
	};
	struct baton_waitset_event ev[2];
	struct baton_epoch_stats st0, st1;
	char rname[BATON_NAME_MAX];
	struct baton_waitset *ws;
	struct baton_ring *cons;
	struct ws_domain w;

	domain_with_reader(_metadata, &w);
	ring_name(rname, sizeof(rname), "wss");
	ASSERT_EQ(0, baton_ring_create(rname, &rp, BATON_ROLE_CONSUMER, &cons));
	ASSERT_EQ(0, baton_waitset_create(&ws));
	ASSERT_EQ(0, baton_waitset_add_ring(ws, cons, 1));
	ASSERT_EQ(0, baton_waitset_add_epoch(ws, w.d, w.e, 2));
	ASSERT_EQ(0, baton_epoch_stats(w.d, &st0));
	EXPECT_EQ(-ETIMEDOUT, baton_waitset_wait(ws, ev, 2, 10 * MS));
	ASSERT_EQ(0, baton_epoch_stats(w.d, &st1));
	EXPECT_GT(20U, st1.collections - st0.collections)
		TH_LOG("%llu collection cycles in one 10 ms wait",
		       (unsigned long long)(st1.collections - st0.collections));
	baton_waitset_destroy(ws);
	baton_ring_close(cons);
	baton_ring_unlink(rname, BATON_BACKEND_AUTO);
	baton_epoch_exit(w.r);
	domain_done(&w);
}

/*
 * Deaths are asked about everywhere, even when each wait has room for
 * one event and other rings stay ready: A and C (producers with room)
 * are always ready, B's producer attached and left. A death look that
 * stopped at max_events used to count as done, so the next due look fell
 * on a call starting at A or at B depending on the caller's interval:
 * B's GONE came after 4, 36, 200 and never (600) calls 2, 3, 3.5 and 4 ms
 * apart. A look now stays due until it has asked every ring, so a new
 * set reports B by its second call, at any interval.
 */
TEST(death_reported_when_each_wait_takes_one_event)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_SPSC, .slot_count = 4, .slot_size = 8,
		.mode = 0600, .backend = BATON_BACKEND_AUTO,
	};
	char na[BATON_NAME_MAX], nb[BATON_NAME_MAX], nc[BATON_NAME_MAX];
	static const int interval_us[] = { 2000, 3000, 3500, 4000, 4500 };
	struct baton_ring *a, *b, *c, *bp;
	struct baton_waitset_event ev;
	struct baton_waitset *ws;
	int i, k, gone;

	force_memfd();
	ring_name(na, sizeof(na), "wa");
	ring_name(nb, sizeof(nb), "wb");
	ring_name(nc, sizeof(nc), "wc");
	ASSERT_EQ(0, baton_ring_create(na, &p, BATON_ROLE_PRODUCER, &a));
	ASSERT_EQ(0, baton_ring_create(nb, &p, BATON_ROLE_CONSUMER, &b));
	ASSERT_EQ(0, baton_ring_create(nc, &p, BATON_ROLE_PRODUCER, &c));
	ASSERT_EQ(0, baton_ring_open(nb, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_AUTO, &bp));
	baton_ring_close(bp);	/* attached, then gone */
	for (k = 0; k < 5; k++) {
		ASSERT_EQ(0, baton_waitset_create(&ws));
		ASSERT_EQ(0, baton_waitset_add_ring(ws, a, 0));
		ASSERT_EQ(0, baton_waitset_add_ring(ws, b, 1));
		ASSERT_EQ(0, baton_waitset_add_ring(ws, c, 2));
		for (i = 1, gone = 0; i <= 40 && !gone; i++) {
			ASSERT_EQ(1, baton_waitset_wait(ws, &ev, 1, 0));
			gone = ev.cookie == 1 && ev.events == BATON_WS_GONE;
			if (!gone)
				usleep(interval_us[k]);
		}
		EXPECT_TRUE(gone && i - 1 <= 2)
			TH_LOG("calls %d us apart: B's death %s after %d calls",
			       interval_us[k], gone ? "reported" : "not reported",
			       i - 1);
		baton_waitset_destroy(ws);
	}
	baton_ring_close(a);
	baton_ring_close(b);
	baton_ring_close(c);
	baton_ring_unlink(na, BATON_BACKEND_AUTO);
	baton_ring_unlink(nb, BATON_BACKEND_AUTO);
	baton_ring_unlink(nc, BATON_BACKEND_AUTO);
}

TEST_HARNESS_MAIN
