// SPDX-License-Identifier: GPL-2.0
/*
 * waitset: baton_waitset on the kmod backend (poll(2) on the ring fds).
 *
 * Owns the waitset contract with the module loaded: with 1, 8 and 64
 * consumer rings in one set, a producer in another process publishes on
 * chosen subsets and the set reports exactly those rings, whether they
 * were ready before the wait or became ready during it; producer handles
 * on full rings become ready when a consumer process drains them; SIGKILL
 * of the process holding the producers of a subset makes those rings
 * report BATON_WS_GONE once drained, and no others; an epoch domain is
 * ready when its last reader leaves. Every wait has a timeout, so a lost
 * wakeup fails instead of hanging. On both backends, a stream in bursts
 * into a set of 8 rings costs the producer at most one wake call per arm
 * of each ring (counters), and nothing is lost or reordered.
 */
#include "common.h"

#define NMAX 64
#define WAIT_NS (5LL * 1000 * 1000 * 1000)

FIXTURE(waitset) {
	char name[NMAX][BATON_NAME_MAX];
	struct baton_ring *r[NMAX];
	struct baton_waitset *ws;
	struct baton_waitset_event ev[NMAX + 1];
	uint32_t n;
};

FIXTURE_VARIANT(waitset) {
	uint32_t n;
	int role;	/* the role this process holds and waits with */
};

FIXTURE_VARIANT_ADD(waitset, cons_1) { .n = 1, .role = BATON_ROLE_CONSUMER };
FIXTURE_VARIANT_ADD(waitset, cons_8) { .n = 8, .role = BATON_ROLE_CONSUMER };
FIXTURE_VARIANT_ADD(waitset, cons_64) { .n = 64, .role = BATON_ROLE_CONSUMER };
FIXTURE_VARIANT_ADD(waitset, prod_8) { .n = 8, .role = BATON_ROLE_PRODUCER };
FIXTURE_VARIANT_ADD(waitset, prod_64) { .n = 64, .role = BATON_ROLE_PRODUCER };

FIXTURE_SETUP(waitset)
{
	struct baton_ring_params p = bt_params(4, 8);
	uint32_t i;

	BT_REQUIRE_DEV();
	self->n = variant->n;
	ASSERT_EQ(0, baton_waitset_create(&self->ws));
	for (i = 0; i < self->n; i++) {
		bt_make_name(self->name[i], sizeof(self->name[i]), "ws");
		ASSERT_EQ(0, baton_ring_create(self->name[i], &p,
					       variant->role, &self->r[i]));
		ASSERT_EQ(0, baton_waitset_add_ring(self->ws, self->r[i],
						    1000 + i));
	}
}

FIXTURE_TEARDOWN(waitset)
{
	uint32_t i;

	baton_waitset_destroy(self->ws);
	for (i = 0; i < self->n; i++) {
		baton_ring_close(self->r[i]);
		bt_unlink_quiet(self->name[i]);
	}
}

static uint64_t all_of(uint32_t n)
{
	return n == 64 ? ~0ULL : (1ULL << n) - 1;
}

/* Subsets: every third, all, and single rings. */
static uint64_t subset(uint32_t n, int which)
{
	if (which == 0)
		return all_of(n) & 0x9249249249249249ULL;
	if (which == 1)
		return all_of(n);
	return 1ULL << ((uint32_t)which * 7 % n);
}

static uint64_t reported(const struct baton_waitset_event *ev, int n,
			 uint32_t events)
{
	uint64_t m = 0;
	int i;

	for (i = 0; i < n; i++)
		if (ev[i].events == events)
			m |= 1ULL << (ev[i].cookie - 1000);
	return m;
}

/*
 * The peer process: holds the other role of every ring; for each subset
 * in turn, waits @delay_ms, then makes those rings ready (publishes one
 * message, or takes one) and waits for the parent's go for the next.
 * After the last subset it waits for one more go; then, with @die, it
 * makes the rings in @die ready and SIGKILLs itself, else it exits.
 */
static int peer(FIXTURE_DATA(waitset) *self, int my_role, struct bt_sync *go,
		struct bt_sync *done, int subsets, int delay_ms, uint64_t die)
{
	struct baton_ring *r[NMAX];
	uint64_t v = 42;
	uint32_t i;
	int s;

	for (i = 0; i < self->n; i++)
		if (baton_ring_open(self->name[i], my_role, BATON_BACKEND_KMOD,
				    &r[i]))
			return 2;
	if (bt_sync_post(done))
		return 3;
	for (s = 0; s < subsets; s++) {
		uint64_t m = subset(self->n, s);

		if (bt_sync_wait(go, 10000))
			return 4;
		bt_sleep_ms(delay_ms);
		for (i = 0; i < self->n; i++) {
			if (!(m & (1ULL << i)))
				continue;
			if (my_role == BATON_ROLE_PRODUCER ?
			    baton_spsc_try_push(r[i], &v, sizeof(v)) :
			    baton_spsc_try_pop(r[i], &v, sizeof(v)))
				return 5;
		}
	}
	/* Leave only when told: our exit is a death the set reports. */
	if (bt_sync_wait(go, 10000))
		return 6;
	if (!die)
		return 0;
	for (i = 0; i < self->n; i++)
		if ((die & (1ULL << i)) && my_role == BATON_ROLE_PRODUCER)
			baton_spsc_try_push(r[i], &v, sizeof(v));
	bt_sleep_ms(delay_ms);
	raise(SIGKILL);
	return 7;
}

/* Undo what the peer did to a subset, so the rings are not ready again. */
static void settle(struct __test_metadata *_metadata, FIXTURE_DATA(waitset) *self,
		   int role, uint64_t m)
{
	uint64_t v = 0;
	uint32_t i;

	for (i = 0; i < self->n; i++) {
		if (!(m & (1ULL << i)))
			continue;
		if (role == BATON_ROLE_CONSUMER) {
			ASSERT_EQ(0, baton_spsc_try_pop(self->r[i], &v,
							sizeof(v)));
		} else {
			ASSERT_EQ(0, baton_spsc_try_push(self->r[i], &v,
							 sizeof(v)));
		}
	}
}

/* Collect events until exactly @m was reported; any other is a failure. */
static void expect_exactly(struct __test_metadata *_metadata,
			   FIXTURE_DATA(waitset) *self, uint64_t m, uint32_t events)
{
	uint64_t got = 0;
	int n;

	while (got != m) {
		n = baton_waitset_wait(self->ws, self->ev, NMAX + 1, WAIT_NS);
		ASSERT_LT(0, n);
		got |= reported(self->ev, n, events);
		ASSERT_EQ(0U, got & ~m);
	}
}

static void fill_all(FIXTURE_DATA(waitset) *self)
{
	uint64_t v = 1;
	uint32_t i;

	for (i = 0; i < self->n; i++)
		while (!baton_spsc_try_push(self->r[i], &v, sizeof(v)))
			;
}

#define SUBSETS 6

/*
 * Subsets made ready by another process, first while we sleep in the
 * wait (the peer waits 20 ms), then with the events already there.
 */
TEST_F_TIMEOUT(waitset, subsets, 120)
{
	int peer_role = variant->role == BATON_ROLE_CONSUMER ?
			BATON_ROLE_PRODUCER : BATON_ROLE_CONSUMER;
	struct bt_sync go, done;
	pid_t pid;
	int s;

	ASSERT_EQ(0, bt_sync_init(&go));
	ASSERT_EQ(0, bt_sync_init(&done));
	if (variant->role == BATON_ROLE_PRODUCER)
		fill_all(self);
	EXPECT_EQ(-ETIMEDOUT, baton_waitset_wait(self->ws, self->ev, NMAX + 1,
						 10 * BT_MSEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(peer(self, peer_role, &go, &done, 2 * SUBSETS, 20, 0));
	ASSERT_EQ(0, bt_sync_wait(&done, 10000));
	for (s = 0; s < 2 * SUBSETS; s++) {
		uint64_t m = subset(self->n, s);

		ASSERT_EQ(0, bt_sync_post(&go));
		if (s >= SUBSETS)	/* already there when we wait */
			bt_sleep_ms(60);
		expect_exactly(_metadata, self, m, BATON_WS_READY);
		settle(_metadata, self, variant->role, m);
		EXPECT_EQ(-ETIMEDOUT,
			  baton_waitset_wait(self->ws, self->ev, NMAX + 1, 0));
	}
	ASSERT_EQ(0, bt_sync_post(&go));
	EXPECT_EQ(0, bt_wait_timeout(pid, 10000));
	bt_sync_close(&go);
	bt_sync_close(&done);
}

/*
 * The peer process dies (SIGKILL) holding the other role of every ring;
 * for a consumer set it has just published on a subset: those are read
 * first, then every ring reports GONE. A producer set reports GONE for
 * all (every consumer went).
 */
TEST_F_TIMEOUT(waitset, deaths, 60)
{
	int peer_role = variant->role == BATON_ROLE_CONSUMER ?
			BATON_ROLE_PRODUCER : BATON_ROLE_CONSUMER;
	uint64_t m = subset(self->n, 0), all = all_of(self->n);
	struct bt_sync go, done;
	int64_t t0;
	pid_t pid;

	ASSERT_EQ(0, bt_sync_init(&go));
	ASSERT_EQ(0, bt_sync_init(&done));
	if (variant->role == BATON_ROLE_PRODUCER)
		fill_all(self);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(peer(self, peer_role, &go, &done, 0, 20, m));
	ASSERT_EQ(0, bt_sync_wait(&done, 10000));
	ASSERT_EQ(0, bt_sync_post(&go));
	if (variant->role == BATON_ROLE_CONSUMER) {
		expect_exactly(_metadata, self, m, BATON_WS_READY);
		settle(_metadata, self, variant->role, m);
	}
	t0 = bt_now_ns();
	expect_exactly(_metadata, self, all, BATON_WS_GONE);
	TH_LOG("%u rings gone, seen within %.3f ms of the last read",
	       self->n, (double)(bt_now_ns() - t0) / 1e6);
	EXPECT_EQ(128 + SIGKILL, bt_wait_timeout(pid, 10000));
	bt_sync_close(&go);
	bt_sync_close(&done);
}

/*
 * The peer process dies (SIGKILL) while every ring is empty, so a
 * producer set has room in all of them: every ring reports GONE, and a
 * producer is no longer READY (nothing it pushes would be read). Before,
 * a producer with room was never asked about its peer: READY on every
 * wait, GONE only once it had filled the ring (the test timed out).
 */
TEST_F_TIMEOUT(waitset, deaths_with_room, 60)
{
	int peer_role = variant->role == BATON_ROLE_CONSUMER ?
			BATON_ROLE_PRODUCER : BATON_ROLE_CONSUMER;
	uint64_t all = all_of(self->n);
	struct bt_sync go, done;
	pid_t pid;
	int n;

	ASSERT_EQ(0, bt_sync_init(&go));
	ASSERT_EQ(0, bt_sync_init(&done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)	/* @die non-zero: it dies; a consumer pushes nothing */
		_exit(peer(self, peer_role, &go, &done, 0, 0,
			   peer_role == BATON_ROLE_CONSUMER ? all : 0));
	ASSERT_EQ(0, bt_sync_wait(&done, 10000));
	ASSERT_EQ(0, bt_sync_post(&go));
	if (peer_role == BATON_ROLE_PRODUCER) {
		/* It pushes nothing and exits: a death all the same. */
		EXPECT_EQ(0, bt_wait_timeout(pid, 10000));
	} else {
		EXPECT_EQ(128 + SIGKILL, bt_wait_timeout(pid, 10000));
	}
	expect_exactly(_metadata, self, all, BATON_WS_GONE);
	/* And it stays so: a level, with no READY beside it. */
	n = baton_waitset_wait(self->ws, self->ev, NMAX + 1, 0);
	EXPECT_EQ((int)self->n, n);
	EXPECT_EQ(all, reported(self->ev, n, BATON_WS_GONE));
	bt_sync_close(&go);
	bt_sync_close(&done);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/*
 * A wait that a signal ends (no SA_RESTART: -EINTR) leaves no poll arm
 * up: a publication after it costs the producer no wake call, as after
 * any other wait. Before, the arms stayed raised on that path, so every
 * publication on every ring of an idle set cost its producer a WAKE.
 */
TEST(interrupted_wait_leaves_no_arm)
{
	struct baton_ring_params p = bt_params(4, 8);
	struct sigaction sa = { .sa_handler = on_alarm };
	struct baton_ring_stats before, after;
	struct baton_waitset_event ev[1];
	struct baton_ring *cons, *prod;
	char name[BATON_NAME_MAX];
	struct baton_waitset *ws;
	uint64_t v = 7;

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "wsi");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &cons));
	ASSERT_EQ(0, baton_ring_open(name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_KMOD, &prod));
	ASSERT_EQ(0, baton_waitset_create(&ws));
	ASSERT_EQ(0, baton_waitset_add_ring(ws, cons, 1));
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	alarm(1);
	EXPECT_EQ(-EINTR, baton_waitset_wait(ws, ev, 1, 10 * WAIT_NS));
	ASSERT_EQ(0, baton_ring_stats(prod, &before));
	ASSERT_EQ(0, baton_spsc_try_push(prod, &v, sizeof(v)));
	ASSERT_EQ(0, baton_ring_stats(prod, &after));
	EXPECT_EQ(before.wake_calls, after.wake_calls);
	/* The message is there for the next wait all the same. */
	EXPECT_EQ(1, baton_waitset_wait(ws, ev, 1, WAIT_NS));
	baton_waitset_destroy(ws);
	baton_ring_close(prod);
	baton_ring_close(cons);
	bt_unlink_quiet(name);
}

/* An epoch domain in the set beside the rings. */
TEST_F_TIMEOUT(waitset, epoch_entry, 60)
{
	char name[BATON_NAME_MAX];
	struct baton_epoch_params p = {
		.max_participants = 4, .queue_len = 4, .mode = 0600,
		.backend = BATON_BACKEND_KMOD,
	};
	struct bt_sync in, out;
	struct baton_epoch *d;
	uint64_t e;
	pid_t pid;
	int n;

	if (variant->role == BATON_ROLE_PRODUCER)
		fill_all(self);
	bt_make_name(name, sizeof(name), "wse");
	ASSERT_EQ(0, baton_epoch_create(name, &p, &d));
	ASSERT_LE(0, baton_epoch_register(d));
	ASSERT_EQ(0, bt_sync_init(&in));
	ASSERT_EQ(0, bt_sync_init(&out));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct baton_epoch *r;

		if (baton_epoch_open(name, BATON_BACKEND_KMOD, &r) ||
		    baton_epoch_register(r) < 0)
			_exit(2);
		baton_epoch_enter(r);
		bt_sync_post(&in);
		if (bt_sync_wait(&out, 10000))
			_exit(3);
		baton_epoch_exit(r);
		_exit(0);
	}
	ASSERT_EQ(0, bt_sync_wait(&in, 10000));
	ASSERT_EQ(0, baton_epoch_retire(d, 1, 0, &e));
	ASSERT_EQ(0, baton_waitset_add_epoch(self->ws, d, e, 7));
	EXPECT_EQ(-ETIMEDOUT, baton_waitset_wait(self->ws, self->ev, NMAX + 1,
						 20 * BT_MSEC));
	ASSERT_EQ(0, bt_sync_post(&out));
	n = baton_waitset_wait(self->ws, self->ev, NMAX + 1, WAIT_NS);
	ASSERT_EQ(1, n);
	EXPECT_EQ(7U, self->ev[0].cookie);
	EXPECT_EQ(BATON_WS_READY, self->ev[0].events);
	EXPECT_EQ(0, baton_waitset_remove(self->ws, 7));
	EXPECT_EQ(0, bt_wait_timeout(pid, 10000));
	bt_sync_close(&in);
	bt_sync_close(&out);
	baton_epoch_close(d);
	baton_epoch_unlink(name, BATON_BACKEND_KMOD);
}

/* ---- wakes per arm, both backends ---- */

#define STREAM_RINGS	8
#define STREAM_MSGS	4000
#define STREAM_BURST	5

/* What the producer process reports: its wake calls per ring. */
struct stream_report {
	uint64_t wake_calls[STREAM_RINGS];
	int status;
};

/*
 * The producer: message i into ring i % 8, in bursts of STREAM_BURST with
 * a pause between bursts of 0..300 us (a stream that is sometimes ahead
 * of the set, sometimes behind), so the set both finds work at once and
 * sleeps; each burst lands on rings the set may have armed.
 */
static int stream_producer(char (*name)[BATON_NAME_MAX], int backend,
			   struct stream_report *rep)
{
	struct baton_ring *r[STREAM_RINGS];
	struct baton_ring_stats st;
	uint64_t i;
	uint32_t k;

	for (k = 0; k < STREAM_RINGS; k++)
		if (baton_ring_open(name[k], BATON_ROLE_PRODUCER, backend, &r[k]))
			return 2;
	for (i = 0; i < STREAM_MSGS; i++) {
		if (baton_spsc_push(r[i % STREAM_RINGS], &i, sizeof(i),
				    WAIT_NS) != 0)
			return 3;
		if (i % STREAM_BURST == STREAM_BURST - 1)
			usleep((useconds_t)(bt_mix(i) % 300));
	}
	for (k = 0; k < STREAM_RINGS; k++) {
		baton_ring_stats(r[k], &st);
		rep->wake_calls[k] = st.wake_calls;
		baton_ring_close(r[k]);
	}
	return 0;
}

/*
 * The arms of the consumer's waiting word of a ring, as its counters tell:
 * kmod counts them in the kernel (parks, re-arms, poll arms); on memfd the
 * set arms every ring's word once per sleep and counts that in the handle's
 * park_calls.
 */
static uint64_t consumer_arms(struct baton_ring *r)
{
	struct baton_ring_stats st;

	baton_ring_stats(r, &st);
	if (r->backend == BATON_BACKEND_MEMFD)
		return st.park_calls;
	return st.parks_empty + st.rearms_of_consumer +
	       st.poll_arms_of_consumer;
}

static void stream_into_set(struct __test_metadata *_metadata, int backend)
{
	struct baton_ring_params p = bt_params(64, 8);
	char name[STREAM_RINGS][BATON_NAME_MAX];
	struct baton_ring *r[STREAM_RINGS];
	struct baton_waitset_event ev[STREAM_RINGS];
	uint64_t next[STREAM_RINGS], got = 0, wakes = 0, arms = 0, v;
	struct stream_report *rep;
	struct baton_waitset *ws;
	int n, i;
	uint32_t k;
	pid_t pid;

	p.backend = backend;
	rep = mmap(NULL, sizeof(*rep), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, rep);
	ASSERT_EQ(0, baton_waitset_create(&ws));
	for (k = 0; k < STREAM_RINGS; k++) {
		bt_make_name(name[k], sizeof(name[k]), "wsw");
		ASSERT_EQ(0, baton_ring_create(name[k], &p, BATON_ROLE_CONSUMER,
					       &r[k]));
		ASSERT_EQ(0, baton_waitset_add_ring(ws, r[k], k));
		next[k] = k;
	}
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(stream_producer(name, backend, rep));
	while (got < STREAM_MSGS) {
		n = baton_waitset_wait(ws, ev, STREAM_RINGS, WAIT_NS);
		ASSERT_LT(0, n);
		for (i = 0; i < n; i++) {
			k = (uint32_t)ev[i].cookie;
			while (!baton_spsc_try_pop(r[k], &v, sizeof(v))) {
				ASSERT_EQ(next[k], v);
				next[k] += STREAM_RINGS;
				got++;
			}
			if (ev[i].events == BATON_WS_READY)
				continue;
			/*
			 * GONE is right once the producer has sent this ring
			 * all it had and left while we drained the others (a
			 * drained ring whose peer went); the ring leaves the
			 * set. Before that: the producer left early, and its
			 * exit says why.
			 */
			ASSERT_EQ(BATON_WS_GONE, ev[i].events);
			ASSERT_LE((uint64_t)STREAM_MSGS, next[k])
				TH_LOG("ring %u, %llu of %d received, producer exit %d",
				       k, (unsigned long long)got, STREAM_MSGS,
				       bt_wait_timeout(pid, 10000));
			ASSERT_EQ(0, baton_waitset_remove(ws, k));
		}
	}
	ASSERT_EQ(0, bt_wait_timeout(pid, 10000));
	for (k = 0; k < STREAM_RINGS; k++) {
		uint64_t a = consumer_arms(r[k]);

		/* One wake call per arm of that ring's word, never more. */
		EXPECT_LE(rep->wake_calls[k], a);
		wakes += rep->wake_calls[k];
		arms += a;
	}
	TH_LOG("%s: %d msgs, %llu wake calls, %llu arms (all rings)",
	       backend == BATON_BACKEND_KMOD ? "kmod" : "memfd", STREAM_MSGS,
	       (unsigned long long)wakes, (unsigned long long)arms);
	baton_waitset_destroy(ws);
	for (k = 0; k < STREAM_RINGS; k++) {
		baton_ring_close(r[k]);
		baton_ring_unlink(name[k], backend);
	}
	munmap(rep, sizeof(*rep));
}

TEST(stream_wakes_within_arms_kmod)
{
	BT_REQUIRE_DEV();
	stream_into_set(_metadata, BATON_BACKEND_KMOD);
}

TEST(stream_wakes_within_arms_memfd)
{
	stream_into_set(_metadata, BATON_BACKEND_MEMFD);
}

/*
 * kmod: every producer of an MPSC ring gone, one of them killed holding
 * a ticket it never published, messages published after it. A set that
 * only polls (timeout 0) must still report the ring ready (the module
 * tombstones the ticket in its poll; the pop says LOST, then the
 * messages), then GONE: before, such polls made no system call, so the
 * ticket was never tombstoned and every poll said -ETIMEDOUT.
 */
TEST(mpsc_dead_ticket_found_by_polls)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_MPSC, .slot_count = 8, .slot_size = 8,
		.mode = 0600, .backend = BATON_BACKEND_KMOD, .max_producers = 4,
	};
	struct baton_waitset_event ev[2];
	struct baton_ring *cons, *b;
	struct baton_waitset *ws;
	char name[BATON_NAME_MAX], c;
	uint64_t v, want;
	int fds[2], i, n = 0, st;
	pid_t a;

	BT_REQUIRE_DEV();
	bt_make_name(name, sizeof(name), "wsk");
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &cons));
	ASSERT_EQ(0, pipe(fds));
	a = fork();
	ASSERT_LE(0, a);
	if (a == 0) {
		struct baton_ring *pa;

		if (baton_ring_open(name, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_KMOD, &pa))
			_exit(2);
		if (baton_mpsc_prod_reserve(pa, 1) != 0)	/* ticket 0 */
			_exit(3);
		(void)!write(fds[1], "x", 1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(1, read(fds[0], &c, 1));
	ASSERT_EQ(0, baton_ring_open(name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_KMOD, &b));
	for (v = 1; v <= 3; v++)
		ASSERT_EQ(0, baton_mpsc_push(b, &v, sizeof(v)));
	baton_ring_close(b);
	kill(a, SIGKILL);
	ASSERT_EQ(a, waitpid(a, &st, 0));
	ASSERT_EQ(0, baton_waitset_create(&ws));
	ASSERT_EQ(0, baton_waitset_add_ring(ws, cons, 1));
	for (i = 0; i < 2000 && n <= 0; i++) {
		n = baton_waitset_wait(ws, ev, 2, 0);
		if (n <= 0)
			usleep(1000);
	}
	ASSERT_EQ(1, n) TH_LOG("no event in %d polls", i);
	EXPECT_EQ(BATON_WS_READY, ev[0].events);
	EXPECT_EQ(BATON_MPSC_LOST, baton_mpsc_pop(cons, &v, sizeof(v), 0,
						  NULL));
	for (want = 1; want <= 3; want++) {
		ASSERT_EQ(0, baton_mpsc_pop(cons, &v, sizeof(v), 0, NULL));
		EXPECT_EQ(want, v);
	}
	ASSERT_EQ(1, baton_waitset_wait(ws, ev, 2, 0));
	EXPECT_EQ(BATON_WS_GONE, ev[0].events);
	baton_waitset_destroy(ws);
	baton_ring_close(cons);
	baton_ring_unlink(name, BATON_BACKEND_KMOD);
	close(fds[0]);
	close(fds[1]);
}

TEST_HARNESS_MAIN
