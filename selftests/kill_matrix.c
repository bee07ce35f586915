// SPDX-License-Identifier: GPL-2.0
/*
 * kill_matrix: kill -9 at each point of the protocols, many times each.
 *
 * Owns the death matrix of issue 7, item 4. Each point is its own test;
 * the survivor is the test process, holding one role of one ring (or one
 * domain) for all iterations, and every iteration forks a fresh victim
 * that attaches by name, gets to the point and is killed there:
 *
 *   producer_mid_reserve  MPSC: after the fetch_add, before publishing
 *                         (with and without its claim written); SPSC:
 *                         the slot written, before the tail store
 *   producer_mid_batch    slots reserved, some written (MPSC: published),
 *                         the batch not finished
 *   producer_parked       parked on a full ring (killed by the survivor)
 *   consumer_mid_batch    slots read, not released (MPSC: also the slot
 *                         freed but the head not yet advanced)
 *   consumer_parked       parked on an empty ring (killed by the survivor)
 *   reader_in_section     epoch reader announced, destroyer parked on it
 *   destroyer_parked      epoch destroyer parked in SYNCHRONIZE
 *   mapping_only          a producer whose fds are closed, holding only
 *                         its mappings, publishing through them (MPSC:
 *                         and on odd iterations dying with a ticket)
 *
 * Victims that die at a point of their own choosing first wait until the
 * survivor is really asleep in the kernel (its waiting flag up and its
 * state 'S'), then record the time and SIGKILL themselves: the kernel
 * sees exactly what a kill -9 from outside does. The others are killed by
 * the survivor once they are asleep.
 *
 * After each kill:
 *  - exactly once: producers number their messages; the consumer checks
 *    each victim's sequence is gapless, in order and ends exactly at what
 *    the victim recorded as published; the dead one's reserved tickets
 *    come back as tombstones blamed on its pid, as many as it reserved.
 *    Consumers log every position they read in shared memory before
 *    releasing it; the commit point is the ring's head (MPSC: the slot
 *    freed), so every committed position must have been read exactly
 *    once with the right message, and positions the dead one read but did
 *    not commit go to the next consumer;
 *  - liveness: the survivor's next progress after the death (the
 *    tombstone, end of stream, EPIPE, the synchronize returning) must come
 *    within 5 s; the time from the kill to it is recorded and printed as
 *    max, median and mean per point, never asserted;
 *  - at the end of each test every handle is closed, the name unlinks once
 *    (then ENOENT), a new object of the same name can be made, and the
 *    live kmalloc objects baton allocated are back to the count before
 *    the test (helpers/death.h says how they are counted); the last test
 *    checks every cache, files and dentries included, against the count
 *    before the program started.
 *
 * Iterations per point: the first argument, else $BATON_KILL_ITERS, else
 * 200.
 */
#include "mpsc_common.h"
#include "helpers/death.h"

#define KM_ITERS	200
#define KM_SLOTS	4
#define KM_LOG		4096		/* positions remembered; power of 2 */
#define KM_TIMEOUT	(5 * BT_NSEC)	/* the liveness bound of every wait */
#define KM_CUE_MS	20000		/* how long a victim waits for its cue */
#define KM_TOMB		(~0ULL)		/* logged for a tombstone */
#define KM_TEST_SECS	3600		/* for make soak KILL_ITERS=...; waits are bounded */

struct km_shared {
	int64_t kill_ns;	/* just before the SIGKILL */
	uint64_t published;	/* producer victim: messages published */
	uint64_t read_end;	/* consumer victims: one past the last read */
	uint32_t dying;		/* reader victim: leaving by death only */
	uint32_t pad;
	uint64_t log[KM_LOG];	/* consumers: word 0 read at a position */
	uint32_t reads[KM_LOG];	/* consumers: reads of a position */
};

static long km_baseline = -1;

/* Before the harness forks anything: this program's starting count. */
static void __attribute__((constructor)) km_take_baseline(void)
{
	if (!access(BATON_DEVICE, F_OK))
		km_baseline = dt_baton_objects();
}

static struct baton_ring_params km_params(uint32_t kind)
{
	struct baton_ring_params p = mp_params(KM_SLOTS, 2);

	p.kind = kind;
	if (kind == BATON_RING_SPSC)
		p.max_producers = 0;
	return p;
}

/* ---- the survivor's figures ---- */

struct km_tally {
	uint64_t msgs;		/* messages checked */
	uint64_t losses;	/* published (committed) but never delivered */
	uint64_t dups;		/* delivered twice, or from a past victim */
	uint64_t bad;		/* corrupt contents, blame on the wrong pid */
	uint64_t tombs;		/* tombstones seen */
	unsigned int iters;
	int64_t start_ns;
	struct dt_stalls st;
};

static void km_report(const char *point, const char *kind,
		      struct km_tally *t)
{
	double max_us, med_us;

	dt_stalls_figures(&t->st, &max_us, &med_us);
	printf("# kill-matrix %s/%s: %u kills, %llu messages, %llu losses, %llu duplicates, %llu bad, %llu tombstones; stall after death: max %.0f us, median %.0f us, mean %.0f us; %lld ms\n",
	       point, kind, t->iters, (unsigned long long)t->msgs,
	       (unsigned long long)t->losses, (unsigned long long)t->dups,
	       (unsigned long long)t->bad, (unsigned long long)t->tombs,
	       max_us, med_us, dt_stalls_mean_us(&t->st),
	       (long long)((bt_now_ns() - t->start_ns) / BT_MSEC));
	fflush(stdout);
}

static const char *km_kind(uint32_t kind)
{
	return kind == BATON_RING_MPSC ? "mpsc" : "spsc";
}

/* ---- fixture: one ring, one survivor ---- */

FIXTURE(kill_ring) {
	char name[BATON_NAME_MAX];
	struct km_shared *sh;
	struct bt_sync attached;
	struct km_tally t;
	long objects;
};

FIXTURE_VARIANT(kill_ring) {
	uint32_t kind;
};

FIXTURE_VARIANT_ADD(kill_ring, spsc) {
	.kind = BATON_RING_SPSC,
};

FIXTURE_VARIANT_ADD(kill_ring, mpsc) {
	.kind = BATON_RING_MPSC,
};

FIXTURE_SETUP(kill_ring)
{
	BT_REQUIRE_DEV();
	bt_make_name(self->name, sizeof(self->name), "km");
	self->sh = dt_shared(sizeof(*self->sh));
	ASSERT_NE(NULL, self->sh);
	ASSERT_EQ(0, bt_sync_init(&self->attached));
	memset(&self->t, 0, sizeof(self->t));
	self->t.iters = dt_iters(KM_ITERS);
	ASSERT_EQ(0, dt_stalls_init(&self->t.st, self->t.iters));
	self->objects = dt_baton_kmalloc_objects();
	self->t.start_ns = bt_now_ns();
}

FIXTURE_TEARDOWN(kill_ring)
{
	baton_ring_unlink(self->name, BATON_BACKEND_KMOD);
	bt_sync_close(&self->attached);
	munmap(self->sh, sizeof(*self->sh));
	dt_stalls_free(&self->t.st);
}

/*
 * Everything closed: the name unlinks once, then ENOENT; the same name
 * makes a new ring; baton's objects are back to where the test started.
 *
 * km_not_above: "back" means at most the baseline, not equal to it. On the
 * debug kernel KASAN keeps freed objects in its quarantine, where
 * alloc_traces still counts them; the count flushes each cache's share
 * first (dt_flush_quarantine()), but a baseline taken while other objects
 * waited there can still be above the later count (521 -> 412 was seen).
 * A leak shows as a count above the baseline, and on that kernel
 * kmemleak checks every object besides.
 */
static int km_objects_gone(const char *name, uint32_t kind, long before)
{
	struct baton_ring_params p = km_params(kind);
	struct baton_ring *r;
	long now;

	if (baton_ring_unlink(name, BATON_BACKEND_KMOD))
		return 1;
	if (baton_ring_unlink(name, BATON_BACKEND_KMOD) != -ENOENT)
		return 2;
	if (baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &r))
		return 3;
	baton_ring_close(r);
	if (baton_ring_unlink(name, BATON_BACKEND_KMOD))
		return 4;
	if (before < 0)
		return 0;
	now = dt_objects_settle(DT_KMALLOC, before, 5000);
	/* At most: see km_not_above() */
	if (now > before) {
		printf("# baton objects: %ld before the test, %ld after\n",
		       before, now);
		fflush(stdout);
		return 5;
	}
	return 0;
}

/* ---- the survivor consumer ---- */

static int km_pop(struct baton_ring *c, uint64_t m[2],
		  struct baton_mpsc_loss *loss)
{
	if (c->kind == BATON_RING_MPSC)
		return baton_mpsc_pop(c, m, MP_MSG, KM_TIMEOUT, loss);
	return baton_spsc_pop(c, m, MP_MSG, KM_TIMEOUT);
}

/* What the consumer got from one victim. */
struct km_round {
	uint32_t id;		/* the victim's producer id */
	pid_t victim;
	uint64_t next;		/* next sequence number expected */
	uint64_t lost;		/* tombstones */
	int64_t progress_ns;	/* first tombstone or end of stream */
};

/*
 * Drain until end of stream (-EPIPE, returned), or another error, e.g.
 * -ETIMEDOUT when nothing happened for 5 s.
 */
static int km_drain(struct baton_ring *c, struct km_round *rd,
		    struct km_tally *t)
{
	struct baton_mpsc_loss loss;
	uint64_t m[2];
	int rc;

	for (;;) {
		rc = km_pop(c, m, &loss);
		if (rc == BATON_MPSC_LOST) {
			if (!rd->progress_ns)
				rd->progress_ns = bt_now_ns();
			rd->lost++;
			t->tombs++;
			if (loss.pid != (uint64_t)rd->victim)
				t->bad++;
			continue;
		}
		if (rc != 0) {
			if (rc == -EPIPE && !rd->progress_ns)
				rd->progress_ns = bt_now_ns();
			return rc;
		}
		t->msgs++;
		if (!mp_ok(m)) {
			t->bad++;
			continue;
		}
		if (mp_prod(m) != rd->id || mp_seq(m) < rd->next) {
			t->dups++;
			continue;
		}
		t->losses += mp_seq(m) - rd->next;
		rd->next = mp_seq(m) + 1;
	}
}

/*
 * The round's verdict: the victim was killed, the stream ended, all it
 * recorded as published arrived and nothing more, @tombs tickets lost.
 */
static void km_settle_round(struct __test_metadata *_metadata,
			    struct km_tally *t, struct km_round *rd,
			    volatile struct km_shared *sh, int drain_rc,
			    uint64_t tombs, unsigned int it)
{
	uint64_t pub = __atomic_load_n(&sh->published, __ATOMIC_ACQUIRE);
	int64_t killed = __atomic_load_n(&sh->kill_ns, __ATOMIC_ACQUIRE);
	int st = dt_reap(rd->victim, 20000);

	ASSERT_EQ(128 + SIGKILL, st) TH_LOG("iteration %u: victim status %d",
					    it, st);
	ASSERT_EQ(-EPIPE, drain_rc)
		TH_LOG("iteration %u: the survivor got %d (-ETIMEDOUT: stalled over 5 s)",
		       it, drain_rc);
	if (rd->next < pub)
		t->losses += pub - rd->next;
	if (rd->next > pub)
		t->dups += rd->next - pub;
	EXPECT_EQ(pub, rd->next) TH_LOG("iteration %u", it);
	EXPECT_EQ(tombs, rd->lost) TH_LOG("iteration %u", it);
	ASSERT_NE(0, killed);
	ASSERT_NE(0, rd->progress_ns);
	dt_stalls_add(&t->st, rd->progress_ns - killed);
	sh->kill_ns = 0;
	sh->published = 0;
}

/* ---- producer victims: each returns only on failure ---- */

static struct baton_ring *km_victim_open(const char *name, int role,
					 struct bt_sync *attached)
{
	struct baton_ring *r;

	if (baton_ring_open(name, role, BATON_BACKEND_KMOD, &r))
		_exit(3);
	bt_sync_post(attached);
	return r;
}

/* Push message (id, seq) and record it; 0 or a negative errno. */
static int km_victim_push(struct baton_ring *pr, uint32_t id, uint64_t seq,
			  volatile struct km_shared *sh)
{
	uint64_t m[2];
	int rc;

	mp_msg(m, id, seq);
	if (pr->kind == BATON_RING_MPSC)
		rc = baton_mpsc_push(pr, m, MP_MSG);
	else
		rc = baton_spsc_push(pr, m, MP_MSG, 60 * BT_NSEC) == 0 ? 0 : -1;
	if (!rc)
		__atomic_store_n(&sh->published, seq + 1, __ATOMIC_RELEASE);
	return rc;
}

/* Wait until the consumer (our parent) sleeps in its park, then die. */
static void __attribute__((noreturn))
km_die_when_consumer_parked(struct baton_ring *pr,
			    volatile struct km_shared *sh)
{
	if (dt_wait_parked(pr->cons_waiting, getppid(), KM_CUE_MS))
		_exit(9);
	dt_die(&sh->kill_ns);
}

/*
 * k messages, then a reservation never published. MPSC: a ticket taken.
 * SPSC, whose reserve writes nothing shared: the slot reserved and
 * written, killed before the tail store that would publish it.
 */
static void km_victim_mid_reserve(const char *name, struct bt_sync *att,
				  volatile struct km_shared *sh, uint32_t id,
				  unsigned int it)
{
	struct baton_ring *pr = km_victim_open(name, BATON_ROLE_PRODUCER, att);
	uint64_t seq, m[2], idx;

	for (seq = 0; seq < it % 3; seq++)
		if (km_victim_push(pr, id, seq, sh))
			_exit(4);
	if (pr->kind == BATON_RING_SPSC) {
		if (baton_spsc_prod_reserve_wait(pr, 1, &idx, 20 * BT_NSEC) < 1)
			_exit(5);
		mp_msg(m, id, seq);
		memcpy(baton_ring_slot(pr, idx), m, MP_MSG);
	} else if (it & 1) {
		baton_mpsc_prod_reserve(pr, 1);	/* I and J: claim written */
	} else {
		/* I only: the floor and the fetch_add, no claim yet */
		__atomic_store_n(&pr->claim->floor,
				 __atomic_load_n(pr->tail, __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
		__atomic_fetch_add(pr->tail, 1, __ATOMIC_ACQ_REL);
	}
	km_die_when_consumer_parked(pr, sh);
}

/*
 * k messages, then a batch of b slots reserved of which j are written
 * (SPSC: never submitted; MPSC: published one by one, as
 * baton_mpsc_push_batch() does).
 */
static void km_victim_mid_batch(const char *name, struct bt_sync *att,
				volatile struct km_shared *sh, uint32_t id,
				unsigned int it, uint32_t b, uint32_t j)
{
	struct baton_ring *pr = km_victim_open(name, BATON_ROLE_PRODUCER, att);
	uint64_t seq, k = it % 3, t, m[2];
	int64_t end = bt_now_ns() + 20 * BT_NSEC;
	uint32_t i;

	for (seq = 0; seq < k; seq++)
		if (km_victim_push(pr, id, seq, sh))
			_exit(4);
	if (pr->kind == BATON_RING_SPSC) {
		while (baton_spsc_prod_reserve(pr, b, &t) < b) {
			if (bt_now_ns() > end)
				_exit(5);
			dt_nap();
		}
		for (i = 0; i < j; i++) {
			mp_msg(m, id, k + i);
			memcpy(baton_ring_slot(pr, t + i), m, MP_MSG);
		}
	} else {
		t = baton_mpsc_prod_reserve(pr, b);
		for (i = 0; i < j; i++) {
			if (!baton_mpsc_prod_slot_free(pr, t + i) &&
			    baton_mpsc_prod_wait(pr, t + i))
				_exit(6);
			mp_msg(m, id, k + i);
			memcpy(baton_ring_slot(pr, t + i), m, MP_MSG);
			baton_mpsc_prod_publish(pr, t + i);
			__atomic_store_n(&sh->published, k + i + 1,
					 __ATOMIC_RELEASE);
		}
	}
	km_die_when_consumer_parked(pr, sh);
}

/* Push until parked on the full ring; the survivor kills us there. */
static void km_victim_fill(const char *name, struct bt_sync *att,
			   volatile struct km_shared *sh, uint32_t id)
{
	struct baton_ring *pr = km_victim_open(name, BATON_ROLE_PRODUCER, att);
	uint64_t seq;

	for (seq = 0;; seq++)
		if (km_victim_push(pr, id, seq, sh))
			_exit(4);
}

/*
 * Open the producer role raw, map what a producer needs, close both fds:
 * from here only the mappings hold the role. Then publish k messages by
 * hand (slot, then the tail: A) and die once the consumer sleeps.
 */
static void km_victim_mapping_only(const char *name, struct bt_sync *att,
				   volatile struct km_shared *sh, uint32_t id,
				   unsigned int it)
{
	struct baton_ring_open o;
	uint8_t *prod, *slots, *cons;
	uint64_t tail, seq, m[2], k = 1 + it % KM_SLOTS;
	int dev = bt_dev_open();

	if (dev < 0 || _test_ring_open(dev, name, BATON_ROLE_PRODUCER, &o))
		_exit(3);
	prod = bt_map(o.out_fd, &o.out_off, BT_PROD, PROT_READ | PROT_WRITE);
	slots = bt_map(o.out_fd, &o.out_off, BT_SLOTS, PROT_READ | PROT_WRITE);
	cons = bt_map(o.out_fd, &o.out_off, BT_CONS, PROT_READ);
	if (prod == MAP_FAILED || slots == MAP_FAILED || cons == MAP_FAILED)
		_exit(4);
	close(o.out_fd);
	close(dev);
	bt_sync_post(att);
	/* The ring was drained and has KM_SLOTS free slots. */
	tail = __atomic_load_n(BT_WORD(prod, o.out_off.prod_tail, uint64_t),
			       __ATOMIC_RELAXED);
	for (seq = 0; seq < k; seq++) {
		mp_msg(m, id, seq);
		memcpy(slots + ((tail + seq) & (KM_SLOTS - 1)) * MP_MSG, m,
		       MP_MSG);
		/* A, matches B: the slot before the tail that covers it. */
		__atomic_store_n(BT_WORD(prod, o.out_off.prod_tail, uint64_t),
				 tail + seq + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&sh->published, seq + 1, __ATOMIC_RELEASE);
	}
	/* No fd, so no wake: the parked consumer sleeps until we die. */
	if (dt_wait_parked(BT_WORD(cons, o.out_off.cons_waiting, uint32_t),
			   getppid(), KM_CUE_MS))
		_exit(9);
	dt_die(&sh->kill_ns);
}

/*
 * The same with an MPSC producer: claim page, sequence words, slots and
 * tail, all through mappings of a closed fd. On odd iterations it also
 * takes a last ticket it never publishes (a tombstone once it is dead).
 */
static void km_victim_mpsc_mapping_only(const char *name, struct bt_sync *att,
					volatile struct km_shared *sh,
					uint32_t id, unsigned int it)
{
	struct baton_ring_open o;
	struct baton_mpsc_claim *cl;
	uint8_t *prod, *slots, *cons;
	uint64_t *tail, *seqw, s, t, m[2], k = 1 + it % KM_SLOTS;
	int64_t end = bt_now_ns() + 20 * BT_NSEC;
	int dev = bt_dev_open();

	if (dev < 0 || _test_ring_open(dev, name, BATON_ROLE_PRODUCER, &o))
		_exit(3);
	prod = bt_map(o.out_fd, &o.out_off, BT_PROD, PROT_READ | PROT_WRITE);
	slots = bt_map(o.out_fd, &o.out_off, BT_SLOTS, PROT_READ | PROT_WRITE);
	cons = bt_map(o.out_fd, &o.out_off, BT_CONS, PROT_READ);
	seqw = mmap(NULL, o.out_off.seq_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, o.out_fd, (off_t)o.out_off.seq_mmap);
	cl = mmap(NULL, o.out_off.claim_size, PROT_READ | PROT_WRITE,
		  MAP_SHARED, o.out_fd, (off_t)o.out_off.claim_mmap);
	if (prod == MAP_FAILED || slots == MAP_FAILED || cons == MAP_FAILED ||
	    seqw == MAP_FAILED || cl == MAP_FAILED)
		_exit(4);
	close(o.out_fd);
	close(dev);
	bt_sync_post(att);
	tail = (uint64_t *)(prod + o.out_off.prod_tail);
	/* baton_mpsc_prod_reserve(), _publish() and _done() by hand */
	for (s = 0; s < k + (it & 1); s++) {
		__atomic_store_n(&cl->floor,
				 __atomic_load_n(tail, __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
		t = __atomic_fetch_add(tail, 1, __ATOMIC_ACQ_REL);	/* I */
		__atomic_store_n(&cl->first, t, __ATOMIC_RELEASE);	/* J */
		__atomic_store_n(&cl->count, 1, __ATOMIC_RELEASE);	/* J */
		if (s == k)
			break;	/* the ticket it dies holding */
		/* N: the consumer drained the ring, so this is quick. */
		while (__atomic_load_n(&seqw[t & (KM_SLOTS - 1)],
				       __ATOMIC_ACQUIRE) != t) {
			if (bt_now_ns() > end)
				_exit(5);
			dt_nap();
		}
		mp_msg(m, id, s);
		memcpy(slots + (t & (KM_SLOTS - 1)) * MP_MSG, m, MP_MSG);
		/* K, matches L */
		__atomic_store_n(&seqw[t & (KM_SLOTS - 1)], t + 1,
				 __ATOMIC_RELEASE);
		__atomic_store_n(&sh->published, s + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&cl->count, 0, __ATOMIC_RELEASE);	/* J */
		__atomic_store_n(&cl->floor, BATON_MPSC_NONE,
				 __ATOMIC_RELEASE);
	}
	if (dt_wait_parked(BT_WORD(cons, o.out_off.cons_waiting, uint32_t),
			   getppid(), KM_CUE_MS))
		_exit(9);
	dt_die(&sh->kill_ns);
}

enum km_producer_point {
	KM_MID_RESERVE,
	KM_MID_BATCH,
	KM_PARKED,
	KM_MAPPING_ONLY,
};

/*
 * The producer points: the test process consumes, a victim per
 * iteration produces and is killed at @point.
 */
static void km_run_producer_point(struct __test_metadata *_metadata,
				  FIXTURE_DATA(kill_ring) *self, uint32_t kind,
				  enum km_producer_point point,
				  const char *pname)
{
	struct baton_ring_params p = km_params(kind);
	volatile struct km_shared *sh = self->sh;
	struct km_tally *t = &self->t;
	struct baton_ring *c;
	unsigned int it;

	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	for (it = 0; it < t->iters; it++) {
		struct km_round rd = { .id = it & 0xffff };
		uint32_t b = 2 + it % 3, j = (it / 3) % b;
		uint64_t tombs = 0;
		int rc;

		rd.victim = fork();
		ASSERT_LE(0, rd.victim);
		if (!rd.victim) {
			switch (point) {
			case KM_MID_RESERVE:
				km_victim_mid_reserve(self->name,
						      &self->attached, sh,
						      rd.id, it);
				break;
			case KM_MID_BATCH:
				km_victim_mid_batch(self->name,
						    &self->attached, sh,
						    rd.id, it, b, j);
				break;
			case KM_PARKED:
				km_victim_fill(self->name, &self->attached,
					       sh, rd.id);
				break;
			case KM_MAPPING_ONLY:
				if (kind == BATON_RING_MPSC)
					km_victim_mpsc_mapping_only(self->name,
								    &self->attached,
								    sh, rd.id,
								    it);
				else
					km_victim_mapping_only(self->name,
							       &self->attached,
							       sh, rd.id, it);
				break;
			}
			_exit(10);
		}
		ASSERT_EQ(0, bt_sync_wait(&self->attached, KM_CUE_MS))
			TH_LOG("iteration %u: the victim did not attach", it);
		if (point == KM_MAPPING_ONLY) {
			struct baton_ring_info info;

			/* Its fds are closed: the mapping holds the role. */
			ASSERT_EQ(0, _test_info(baton_ring_fd(c), &info));
			ASSERT_EQ(1, info.out_producers);
		}
		if (point == KM_PARKED) {
			/* Parked on the full ring, asleep: kill it there. */
			ASSERT_EQ(0, dt_wait_parked(c->prod_waiting, rd.victim,
						    KM_CUE_MS));
			dt_kill(rd.victim, &sh->kill_ns);
			tombs = kind == BATON_RING_MPSC;
		} else if (point == KM_MID_RESERVE) {
			tombs = kind == BATON_RING_MPSC;
		} else if (point == KM_MAPPING_ONLY) {
			tombs = kind == BATON_RING_MPSC && (it & 1);
		} else if (point == KM_MID_BATCH && kind == BATON_RING_MPSC) {
			tombs = b - j;
		}
		rc = km_drain(c, &rd, t);
		km_settle_round(_metadata, t, &rd, sh, rc, tombs, it);
	}
	baton_ring_close(c);
	km_report(pname, km_kind(kind), t);
	EXPECT_EQ(0, t->losses);
	EXPECT_EQ(0, t->dups);
	EXPECT_EQ(0, t->bad);
	EXPECT_EQ(0, km_objects_gone(self->name, kind, self->objects));
}

TEST_F_TIMEOUT(kill_ring, producer_mid_reserve, KM_TEST_SECS)
{
	km_run_producer_point(_metadata, self, variant->kind, KM_MID_RESERVE,
			      "producer_mid_reserve");
}

TEST_F_TIMEOUT(kill_ring, producer_mid_batch, KM_TEST_SECS)
{
	km_run_producer_point(_metadata, self, variant->kind, KM_MID_BATCH,
			      "producer_mid_batch");
}

TEST_F_TIMEOUT(kill_ring, producer_parked, KM_TEST_SECS)
{
	km_run_producer_point(_metadata, self, variant->kind, KM_PARKED,
			      "producer_parked");
}

TEST_F_TIMEOUT(kill_ring, mapping_only, KM_TEST_SECS)
{
	km_run_producer_point(_metadata, self, variant->kind, KM_MAPPING_ONLY,
			      "mapping_only");
}

/* ---- the survivor producer ---- */

/*
 * Push message seq, with every wait bounded: 0, -EPIPE (the consumer has
 * gone; an MPSC handle is then spent, so it is replaced), -ETIMEDOUT,
 * -EPROTO.
 */
static int km_push_bounded(const char *name, struct baton_ring **pp,
			   uint64_t seq)
{
	struct baton_ring *pr = *pp;
	int64_t deadline = bt_now_ns() + KM_TIMEOUT;
	uint64_t m[2], t;
	int rc;

	mp_msg(m, 0, seq);
	if (pr->kind == BATON_RING_SPSC) {
		rc = baton_spsc_push(pr, m, MP_MSG, KM_TIMEOUT);
		return rc;
	}
	t = baton_mpsc_prod_reserve(pr, 1);
	while (!baton_mpsc_prod_slot_free(pr, t)) {
		rc = _test_park(baton_ring_fd(pr), BATON_PARK_DEADLINE, t,
				deadline);
		if (!rc || rc == EINTR)
			continue;
		/* Work that raced with EPIPE still counts. */
		if (rc == EPIPE && baton_mpsc_prod_slot_free(pr, t))
			break;
		if (rc == EPIPE) {
			/* Ticket t is abandoned: the kernel tombstones it. */
			baton_ring_close(pr);
			*pp = NULL;
			if (baton_ring_open(name, BATON_ROLE_PRODUCER,
					    BATON_BACKEND_KMOD, pp))
				return -ENOENT;
		}
		return -rc;
	}
	memcpy(baton_ring_slot(pr, t), m, MP_MSG);
	baton_mpsc_prod_publish(pr, t);
	baton_mpsc_prod_done(pr);
	return 0;
}

/* ---- consumer victims ---- */

static void km_log(volatile struct km_shared *sh, uint64_t pos, uint64_t w)
{
	uint32_t i = pos & (KM_LOG - 1);

	sh->log[i] = w;
	sh->reads[i]++;
	if (pos + 1 > sh->read_end)
		sh->read_end = pos + 1;
}

/* MPSC: wait until the slot at our position is decided; 1, LOST or < 0. */
static int km_mpsc_peek_wait(struct baton_ring *c, uint64_t *idx)
{
	int64_t deadline = bt_now_ns() + 60 * BT_NSEC;
	int rc;

	for (;;) {
		rc = baton_mpsc_cons_peek(c, idx);
		if (rc != -EAGAIN)
			return rc;
		rc = _test_park(baton_ring_fd(c), BATON_PARK_DEADLINE, c->local,
				deadline);
		if (rc && rc != EINTR)
			return -rc;
	}
}

/* Read the next position and log it; release it only if @release. */
static int km_victim_read(struct baton_ring *c, volatile struct km_shared *sh,
			  bool release)
{
	uint64_t idx, w;
	int rc;

	if (c->kind == BATON_RING_SPSC) {
		rc = baton_spsc_cons_peek_wait(c, 1, &idx, 60 * BT_NSEC);
		if (rc < 1)
			return -1;
		memcpy(&w, baton_ring_slot(c, idx), sizeof(w));
		km_log(sh, idx, w);
		if (release)
			baton_spsc_cons_release(c, 1);
		return 0;
	}
	rc = km_mpsc_peek_wait(c, &idx);
	if (rc < 0 && rc != BATON_MPSC_LOST) {
		printf("# consumer at %llu: %s\n", (unsigned long long)c->local,
		       strerror(-rc));
		fflush(stdout);
		return -1;
	}
	if (rc == BATON_MPSC_LOST)
		w = KM_TOMB;
	else
		memcpy(&w, baton_ring_slot(c, idx), sizeof(w));
	km_log(sh, idx, w);
	if (release)
		baton_mpsc_cons_release(c);
	return 0;
}

static void __attribute__((noreturn))
km_die_when_producer_parked(struct baton_ring *c,
			    volatile struct km_shared *sh)
{
	if (dt_wait_parked(c->prod_waiting, getppid(), KM_CUE_MS))
		_exit(9);
	dt_die(&sh->kill_ns);
}

/*
 * r messages consumed whole, then a batch read without its release.
 * SPSC: j of the b slots peeked at once are read. MPSC (one slot at a
 * time): the slot is read, and on odd iterations also freed for the next
 * lap (M) but the head not advanced (C): killed between the two stores.
 */
static void km_victim_consumer_mid_batch(const char *name,
					 struct bt_sync *att,
					 volatile struct km_shared *sh,
					 unsigned int it, uint32_t b,
					 uint32_t j)
{
	struct baton_ring *c = km_victim_open(name, BATON_ROLE_CONSUMER, att);
	uint64_t idx, w;
	uint32_t i, n;
	int rc;

	for (i = 0; i < it % 3; i++)
		if (km_victim_read(c, sh, true))
			_exit(4);
	if (c->kind == BATON_RING_SPSC) {
		rc = baton_spsc_cons_peek_wait(c, b, &idx, 60 * BT_NSEC);
		if (rc < 1)
			_exit(5);
		n = (uint32_t)rc < j ? (uint32_t)rc : j;
		for (i = 0; i < n; i++) {
			memcpy(&w, baton_ring_slot(c, idx + i), sizeof(w));
			km_log(sh, idx + i, w);
		}
	} else {
		if (km_victim_read(c, sh, false))
			_exit(5);
		if (it & 1)
			/* M without C: the slot is the next lap's now. */
			__atomic_store_n(&c->seq[c->local & c->mask],
					 c->local + c->slot_count,
					 __ATOMIC_RELEASE);
	}
	km_die_when_producer_parked(c, sh);
}

/* Consume until killed (the survivor kills us once we park). */
static void km_victim_consume(const char *name, struct bt_sync *att,
			      volatile struct km_shared *sh)
{
	struct baton_ring *c = km_victim_open(name, BATON_ROLE_CONSUMER, att);

	for (;;)
		if (km_victim_read(c, sh, true))
			_exit(4);
}

/*
 * The commit point after a consumer died: its head, plus the slots from
 * the head it had already freed (MPSC, killed between its M stores and
 * its C store; a batch release leaves a prefix of its batch so).
 */
static uint64_t km_commit_point(struct baton_ring *pr)
{
	uint64_t h = __atomic_load_n(pr->head, __ATOMIC_ACQUIRE), s, n, end;

	if (pr->kind != BATON_RING_MPSC)
		return h;
	n = pr->slot_count;
	for (end = h + n; h != end; h++) {
		s = __atomic_load_n(&pr->seq[h & pr->mask], __ATOMIC_ACQUIRE);
		if (s != h + n && s != h + n + 1 &&
		    s != ((h + n + 1) | BATON_MPSC_TOMB))
			break;
	}
	return h;
}

/*
 * Check the positions [*done, commit): each read exactly once, messages
 * in push order (0, 1, ... skipping tombstones); forget what the dead
 * consumer read past the commit point: the next consumer reads it again.
 */
static void km_check_log(struct km_tally *t, volatile struct km_shared *sh,
			 uint64_t commit, uint64_t *done, uint64_t *expect)
{
	uint64_t pos;

	for (pos = *done; pos < commit; pos++) {
		uint32_t i = pos & (KM_LOG - 1);
		uint64_t w = sh->log[i];

		if (!sh->reads[i])
			t->losses++;
		else if (sh->reads[i] > 1)
			t->dups += sh->reads[i] - 1;
		if (sh->reads[i] && w == KM_TOMB) {
			t->tombs++;
		} else if (sh->reads[i]) {
			t->msgs++;
			if (w < *expect)
				t->dups++;
			else
				t->losses += w - *expect;
			if (w >= *expect)
				*expect = w + 1;
		}
		sh->reads[i] = 0;
		sh->log[i] = 0;
	}
	for (pos = commit; pos < sh->read_end; pos++) {
		sh->reads[pos & (KM_LOG - 1)] = 0;
		sh->log[pos & (KM_LOG - 1)] = 0;
	}
	*done = commit;
	sh->read_end = commit;
}

/* Push until the consumer's death shows: -EPIPE, or a failure. */
static int km_push_until_epipe(const char *name, struct baton_ring **pp,
			       uint64_t *seq)
{
	int rc;

	for (;;) {
		rc = km_push_bounded(name, pp, *seq);
		if (rc)
			return rc;
		(*seq)++;
	}
}

enum km_consumer_point {
	KM_CONS_MID_BATCH,
	KM_CONS_PARKED,
};

static void km_run_consumer_point(struct __test_metadata *_metadata,
				  FIXTURE_DATA(kill_ring) *self, uint32_t kind,
				  enum km_consumer_point point,
				  const char *pname)
{
	struct baton_ring_params p = km_params(kind);
	volatile struct km_shared *sh = self->sh;
	struct km_tally *t = &self->t;
	uint64_t seq = 0, done = 0, expect = 0;
	struct baton_ring *pr, *c;
	unsigned int it;
	int rc;

	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_PRODUCER,
				       &pr));
	for (it = 0; it < t->iters; it++) {
		uint32_t b = 2 + it % 3, j = (it / 3) % (b + 1);
		int64_t progress;
		pid_t victim;
		int st;

		victim = fork();
		ASSERT_LE(0, victim);
		if (!victim) {
			if (point == KM_CONS_MID_BATCH)
				km_victim_consumer_mid_batch(self->name,
							     &self->attached,
							     sh, it, b, j);
			else
				km_victim_consume(self->name, &self->attached,
						  sh);
			_exit(10);
		}
		ASSERT_EQ(0, bt_sync_wait(&self->attached, KM_CUE_MS))
			TH_LOG("iteration %u: the victim did not attach", it);
		if (point == KM_CONS_PARKED) {
			uint64_t k = 1 + it % KM_SLOTS, tail;
			int64_t end = bt_now_ns() + KM_CUE_MS * BT_MSEC;

			for (; k; k--, seq++)
				ASSERT_EQ(0, km_push_bounded(self->name, &pr,
							     seq));
			/* It consumed everything and sleeps: kill it. */
			tail = __atomic_load_n(pr->tail, __ATOMIC_ACQUIRE);
			while (__atomic_load_n(pr->head, __ATOMIC_ACQUIRE) !=
			       tail) {
				ASSERT_GT(end, bt_now_ns());
				dt_nap();
			}
			ASSERT_EQ(0, dt_wait_parked(pr->cons_waiting, victim,
						    KM_CUE_MS));
			dt_kill(victim, &sh->kill_ns);
		}
		rc = km_push_until_epipe(self->name, &pr, &seq);
		progress = bt_now_ns();
		ASSERT_NE(NULL, pr);
		st = dt_reap(victim, 20000);
		ASSERT_EQ(128 + SIGKILL, st)
			TH_LOG("iteration %u: victim status %d", it, st);
		ASSERT_EQ(-EPIPE, rc)
			TH_LOG("iteration %u: the survivor got %d (-ETIMEDOUT: stalled over 5 s)",
			       it, rc);
		ASSERT_NE(0, sh->kill_ns);
		dt_stalls_add(&t->st, progress - sh->kill_ns);
		sh->kill_ns = 0;
		km_check_log(t, sh, km_commit_point(pr), &done, &expect);
	}
	/* A last consumer takes what is left: nothing committed is lost. */
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_KMOD, &c));
	while (c->local != __atomic_load_n(pr->tail, __ATOMIC_ACQUIRE))
		ASSERT_EQ(0, km_victim_read(c, sh, true));
	km_check_log(t, sh, c->local, &done, &expect);
	EXPECT_EQ(seq, expect) TH_LOG("pushed %llu, delivered up to %llu",
				      (unsigned long long)seq,
				      (unsigned long long)expect);
	baton_ring_close(c);
	baton_ring_close(pr);
	km_report(pname, km_kind(kind), t);
	EXPECT_EQ(0, t->losses);
	EXPECT_EQ(0, t->dups);
	EXPECT_EQ(0, t->bad);
	EXPECT_EQ(0, km_objects_gone(self->name, kind, self->objects));
}

TEST_F_TIMEOUT(kill_ring, consumer_mid_batch, KM_TEST_SECS)
{
	km_run_consumer_point(_metadata, self, variant->kind,
			      KM_CONS_MID_BATCH, "consumer_mid_batch");
}

TEST_F_TIMEOUT(kill_ring, consumer_parked, KM_TEST_SECS)
{
	km_run_consumer_point(_metadata, self, variant->kind, KM_CONS_PARKED,
			      "consumer_parked");
}

/* ---- epoch domains ---- */

FIXTURE(kill_epoch) {
	char name[BATON_NAME_MAX];
	struct km_shared *sh;
	struct bt_sync ready;
	struct baton_epoch *d;
	struct km_tally t;
	long objects;
};

FIXTURE_SETUP(kill_epoch)
{
	struct baton_epoch_params p = {
		.max_participants = 4,
		.queue_len = 8,
		.mode = 0600,
		.backend = BATON_BACKEND_KMOD,
	};

	BT_REQUIRE_DEV();
	bt_make_name(self->name, sizeof(self->name), "ke");
	self->sh = dt_shared(sizeof(*self->sh));
	ASSERT_NE(NULL, self->sh);
	ASSERT_EQ(0, bt_sync_init(&self->ready));
	memset(&self->t, 0, sizeof(self->t));
	self->t.iters = dt_iters(KM_ITERS);
	ASSERT_EQ(0, dt_stalls_init(&self->t.st, self->t.iters));
	self->objects = dt_baton_kmalloc_objects();
	self->t.start_ns = bt_now_ns();
	ASSERT_EQ(0, baton_epoch_create(self->name, &p, &self->d));
	ASSERT_LE(0, baton_epoch_register(self->d));
}

FIXTURE_TEARDOWN(kill_epoch)
{
	if (self->d)
		baton_epoch_close(self->d);
	baton_epoch_unlink(self->name, BATON_BACKEND_KMOD);
	bt_sync_close(&self->ready);
	munmap(self->sh, sizeof(*self->sh));
	dt_stalls_free(&self->t.st);
}

static int km_epoch_gone(const char *name, long before)
{
	struct baton_epoch_params p = {
		.max_participants = 4,
		.queue_len = 8,
		.mode = 0600,
		.backend = BATON_BACKEND_KMOD,
	};
	struct baton_epoch *d;
	long now;

	if (baton_epoch_unlink(name, BATON_BACKEND_KMOD))
		return 1;
	if (baton_epoch_unlink(name, BATON_BACKEND_KMOD) != -ENOENT)
		return 2;
	if (baton_epoch_create(name, &p, &d))
		return 3;
	baton_epoch_close(d);
	if (baton_epoch_unlink(name, BATON_BACKEND_KMOD))
		return 4;
	if (before < 0)
		return 0;
	now = dt_objects_settle(DT_KMALLOC, before, 5000);
	/* At most: see km_not_above() */
	if (now > before) {
		printf("# baton objects: %ld before the test, %ld after\n",
		       before, now);
		fflush(stdout);
		return 5;
	}
	return 0;
}

static struct baton_epoch *km_epoch_join(const char *name)
{
	struct baton_epoch *d;

	if (baton_epoch_open(name, BATON_BACKEND_KMOD, &d))
		_exit(3);
	if (baton_epoch_register(d) < 0)
		_exit(4);
	return d;
}

/*
 * A reader dies inside its read section while the test, a destroyer, is
 * parked in synchronize on an epoch the reader holds. The synchronize
 * must return 0 once the reader is dead, and never before it was dying;
 * every retirement completes exactly once.
 */
TEST_F_TIMEOUT(kill_epoch, reader_in_section, KM_TEST_SECS)
{
	volatile struct km_shared *sh = self->sh;
	const volatile struct baton_epoch_hdr *h = self->d->hdr;
	struct km_tally *t = &self->t;
	struct baton_epoch_stats st;
	unsigned int it, i;
	uint64_t e;

	for (it = 0; it < t->iters; it++) {
		int64_t progress;
		pid_t victim;
		int rc;

		victim = fork();
		ASSERT_LE(0, victim);
		if (!victim) {
			struct baton_epoch *r = km_epoch_join(self->name);

			baton_epoch_enter(r);
			bt_sync_post(&self->ready);
			if (dt_wait_parked((volatile uint32_t *)&r->hdr->sync_waiters,
					   getppid(), KM_CUE_MS))
				_exit(9);
			__atomic_store_n(&sh->dying, 1, __ATOMIC_RELEASE);
			dt_die(&sh->kill_ns);
		}
		ASSERT_EQ(0, bt_sync_wait(&self->ready, KM_CUE_MS));
		ASSERT_EQ(0, baton_epoch_retire(self->d, it, 0, &e));
		rc = baton_epoch_synchronize(self->d, e, KM_TIMEOUT, NULL);
		progress = bt_now_ns();
		ASSERT_EQ(0, rc) TH_LOG("iteration %u: synchronize %d", it, rc);
		/* Returned while the reader could still be inside: early. */
		if (!__atomic_load_n(&sh->dying, __ATOMIC_ACQUIRE))
			t->losses++;
		ASSERT_EQ(128 + SIGKILL, dt_reap(victim, 20000));
		dt_stalls_add(&t->st, progress - sh->kill_ns);
		sh->kill_ns = 0;
		sh->dying = 0;
	}
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, baton_epoch_collect(self->d, NULL, NULL));
	ASSERT_EQ(0, baton_epoch_stats(self->d, &st));
	t->msgs = st.completed;
	/* Each retirement completed once: no more, no fewer. */
	if (st.completed < t->iters)
		t->losses += t->iters - st.completed;
	else
		t->dups += st.completed - t->iters;
	EXPECT_EQ(1U, st.participants);
	EXPECT_EQ(t->iters, st.participant_releases);
	EXPECT_EQ(0U, st.orphaned);
	EXPECT_EQ(0U, st.bad_words);
	EXPECT_EQ(0U, h->sync_waiters);
	km_report("reader_in_section", "epoch", t);
	EXPECT_EQ(0, t->losses);
	EXPECT_EQ(0, t->dups);
	baton_epoch_close(self->d);
	self->d = NULL;
	EXPECT_EQ(0, km_epoch_gone(self->name, self->objects));
}

/*
 * A destroyer dies parked in synchronize, with 1..3 retirements queued,
 * while the test is inside a read section that holds them. Its waiter
 * count goes, its retirements become the kernel's (orphaned), none
 * completes while the test is still inside, and all of them complete
 * once it leaves: the figure is the time from leaving to that.
 */
TEST_F_TIMEOUT(kill_epoch, destroyer_parked, KM_TEST_SECS)
{
	volatile struct km_shared *sh = self->sh;
	const volatile struct baton_epoch_hdr *h = self->d->hdr;
	struct km_tally *t = &self->t;
	struct baton_epoch_stats st0, st;
	uint64_t total = 0;
	unsigned int it;

	for (it = 0; it < t->iters; it++) {
		uint64_t r = 1 + it % 3;
		int64_t left, end;
		pid_t victim;

		baton_epoch_enter(self->d);
		victim = fork();
		ASSERT_LE(0, victim);
		if (!victim) {
			struct baton_epoch *w = km_epoch_join(self->name);
			uint64_t e = 0, i;

			for (i = 0; i < r; i++)
				if (baton_epoch_retire(w, i, it, &e))
					_exit(5);
			bt_sync_post(&self->ready);
			baton_epoch_synchronize(w, e, -1, NULL);
			_exit(6);	/* the test's section holds e */
		}
		ASSERT_EQ(0, bt_sync_wait(&self->ready, KM_CUE_MS));
		ASSERT_EQ(0, dt_wait_parked((volatile uint32_t *)&h->sync_waiters,
					    victim, KM_CUE_MS));
		ASSERT_EQ(0, baton_epoch_stats(self->d, &st0));
		dt_kill(victim, &sh->kill_ns);
		ASSERT_EQ(128 + SIGKILL, dt_reap(victim, 20000));
		EXPECT_EQ(0U, h->sync_waiters);
		ASSERT_EQ(0, baton_epoch_stats(self->d, &st));
		EXPECT_EQ(st0.orphaned + r, st.orphaned);
		/* Still inside: nothing of it may complete. */
		ASSERT_EQ(0, baton_epoch_collect(self->d, NULL, NULL));
		ASSERT_EQ(0, baton_epoch_stats(self->d, &st));
		if (st.orphans_completed != st0.orphans_completed)
			t->losses++;	/* completed early */
		baton_epoch_exit(self->d);
		left = bt_now_ns();
		end = left + KM_TIMEOUT;
		while (st.orphans_completed < st0.orphans_completed + r) {
			ASSERT_GT(end, bt_now_ns())
				TH_LOG("iteration %u: orphans not completed", it);
			ASSERT_EQ(0, baton_epoch_collect(self->d, NULL, NULL));
			ASSERT_EQ(0, baton_epoch_stats(self->d, &st));
		}
		dt_stalls_add(&t->st, bt_now_ns() - left);
		if (st.orphans_completed > st0.orphans_completed + r)
			t->dups += st.orphans_completed -
				   (st0.orphans_completed + r);
		total += r;
		sh->kill_ns = 0;
	}
	ASSERT_EQ(0, baton_epoch_stats(self->d, &st));
	t->msgs = st.orphans_completed;
	EXPECT_EQ(total, st.orphaned);
	EXPECT_EQ(total, st.orphans_completed);
	EXPECT_EQ(1U, st.participants);
	EXPECT_EQ(t->iters, st.participant_releases);
	EXPECT_EQ(0U, st.bad_words);
	km_report("destroyer_parked", "epoch", t);
	EXPECT_EQ(0, t->losses);
	EXPECT_EQ(0, t->dups);
	baton_epoch_close(self->d);
	self->d = NULL;
	EXPECT_EQ(0, km_epoch_gone(self->name, self->objects));
}

/*
 * Last: the harness runs fixtures in the order they are defined, and
 * global TEST()s first, so this needs a fixture of its own.
 */
FIXTURE(leftovers) {
	int unused;
};

FIXTURE_SETUP(leftovers)
{
}

FIXTURE_TEARDOWN(leftovers)
{
}

/* The whole program left nothing behind. */
TEST_F(leftovers, objects_back_to_baseline)
{
	int64_t t0;
	long now;

	BT_REQUIRE_DEV();
	if (km_baseline < 0)
		SKIP(return, "no %s alloc_traces (slub_debug=U and debugfs needed)",
		     DT_SLAB_DEBUGFS);
	t0 = bt_now_ns();
	now = dt_objects_settle(NULL, km_baseline, 5000);
	printf("# baton objects: %ld when the program started, %ld now (counted in %lld ms)\n",
	       km_baseline, now, (long long)((bt_now_ns() - t0) / BT_MSEC));
	fflush(stdout);	/* the harness ends this process with _exit() */
	EXPECT_GE(km_baseline, now);
}

/* kill_matrix [ITERS]: the argument, when given, overrides the environment. */
int main(int argc, char **argv)
{
	if (argc > 1 && setenv("BATON_KILL_ITERS", argv[1], 1))
		return 1;
	return test_harness_run(argc, argv);
}
