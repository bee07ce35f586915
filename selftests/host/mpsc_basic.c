// SPDX-License-Identifier: MIT
/*
 * The MPSC ticket ring on the memfd backend, under ASan/UBSan and TSan:
 * the API contract (geometry and max_producers checks, the producer
 * limit, try-push's -EAGAIN on a full ring without taking a ticket, batch
 * reservation, a corrupt sequence word as -EPROTO), and exactly-once,
 * in-order delivery per producer with 1..8 producers as threads (TSan sees
 * every access) and as processes, on rings small enough that producers
 * park on their slots all the time (no lost wakeup, or the test hangs
 * into its timeout); a consumer killed inside a batch release resumes
 * behind every slot it freed (../mpsc_cases.h, also run on kmod).
 *
 * Every message is two words: (producer << 48 | seq) and a hash of it, so
 * the consumer detects loss, duplication, reordering and torn slots.
 */
#include "kselftest_harness.h"
#include "common.h"
#include "../mpsc_cases.h"

#define MSG_SIZE	16

static void mk_params(struct baton_ring_params *p, uint32_t slots,
		      uint32_t maxp)
{
	memset(p, 0, sizeof(*p));
	p->kind = BATON_RING_MPSC;
	p->slot_count = slots;
	p->slot_size = MSG_SIZE;
	p->mode = 0600;
	p->backend = BATON_BACKEND_AUTO;
	p->max_producers = maxp;
}

static void mk_msg(uint64_t m[2], uint32_t prod, uint64_t seq)
{
	m[0] = (uint64_t)prod << 48 | seq;
	m[1] = mix64(m[0]);
}

/*
 * A producer process that takes @n tickets, publishes none and exits: its
 * role lock goes with it. Returns fork()'s result; reap it with
 * wait_child().
 */
static pid_t die_holding_tickets(const char *name, uint32_t n)
{
	struct baton_ring *p;
	pid_t pid = fork();

	if (pid)
		return pid;
	if (baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_AUTO, &p))
		_exit(1);
	baton_mpsc_prod_reserve(p, n);
	_exit(0);
}

FIXTURE(mpsc) {
	char name[BATON_NAME_MAX];
	struct baton_ring_params p;
};

FIXTURE_SETUP(mpsc)
{
	force_memfd();
	ring_name(self->name, sizeof(self->name), "mpsc");
	mk_params(&self->p, 8, 4);
}

FIXTURE_TEARDOWN(mpsc)
{
	baton_ring_unlink(self->name, BATON_BACKEND_AUTO);
}

TEST_F(mpsc, bad_params)
{
	struct baton_ring *r;

	self->p.max_producers = 0;
	EXPECT_EQ(-EINVAL, baton_ring_create(self->name, &self->p,
					     BATON_ROLE_CONSUMER, &r));
	self->p.max_producers = BATON_MPSC_PRODUCERS_MAX + 1;
	EXPECT_EQ(-EINVAL, baton_ring_create(self->name, &self->p,
					     BATON_ROLE_CONSUMER, &r));
	self->p.kind = BATON_RING_SPSC;
	self->p.max_producers = 2;
	EXPECT_EQ(-EINVAL, baton_ring_create(self->name, &self->p,
					     BATON_ROLE_CONSUMER, &r));
	self->p.kind = BATON_RING_MPSC;
	self->p.max_producers = 1;
	self->p.slot_count = 12;
	EXPECT_EQ(-EINVAL, baton_ring_create(self->name, &self->p,
					     BATON_ROLE_CONSUMER, &r));
}

/* max_producers handles, then EBUSY; a closed handle frees its index. */
TEST_F(mpsc, producer_limit)
{
	struct baton_ring *c, *pr[5];
	struct baton_mpsc_stats st;
	int i;

	ASSERT_EQ(0, baton_ring_create(self->name, &self->p,
				       BATON_ROLE_CONSUMER, &c));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
					     BATON_BACKEND_AUTO, &pr[i]));
	EXPECT_EQ(-EBUSY, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
					  BATON_BACKEND_AUTO, &pr[4]));
	EXPECT_EQ(-EBUSY, baton_ring_open(self->name, BATON_ROLE_CONSUMER,
					  BATON_BACKEND_AUTO, &pr[4]));
	baton_ring_close(pr[2]);
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_AUTO, &pr[2]));
	ASSERT_EQ(0, baton_mpsc_stats(c, &st));
	EXPECT_EQ(4U, st.max_producers);
	EXPECT_EQ(-EINVAL, baton_ring_stats(NULL, NULL));
	for (i = 0; i < 4; i++)
		baton_ring_close(pr[i]);
	baton_ring_close(c);
}

/*
 * Full ring: try-push says -EAGAIN and takes no ticket; the consumer
 * drains exactly what went in, in order, interleaved from two handles.
 */
TEST_F(mpsc, try_push_full)
{
	struct baton_ring *c, *a, *b;
	struct baton_mpsc_stats st;
	uint64_t m[2], got[2];
	int i;

	ASSERT_EQ(0, baton_ring_create(self->name, &self->p,
				       BATON_ROLE_CONSUMER, &c));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_AUTO, &a));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_AUTO, &b));
	EXPECT_EQ(-EAGAIN, baton_mpsc_try_pop(c, got, sizeof(got), NULL));
	for (i = 0; i < 8; i++) {
		mk_msg(m, i & 1, (uint64_t)i);
		ASSERT_EQ(0, baton_mpsc_try_push(i & 1 ? b : a, m, sizeof(m)));
	}
	EXPECT_EQ(-EAGAIN, baton_mpsc_try_push(a, m, sizeof(m)));
	EXPECT_EQ(-EAGAIN, baton_mpsc_try_push(b, m, sizeof(m)));
	EXPECT_EQ(-EINVAL, baton_mpsc_try_push(b, m, MSG_SIZE + 8));
	ASSERT_EQ(0, baton_mpsc_stats(c, &st));
	EXPECT_EQ(8ULL, st.tail) TH_LOG("a full try-push took a ticket");
	/* the claims are idle again */
	EXPECT_EQ(0ULL, a->claim->count);
	EXPECT_EQ(BATON_MPSC_NONE, a->claim->floor);
	for (i = 0; i < 8; i++) {
		mk_msg(m, i & 1, (uint64_t)i);
		ASSERT_EQ(0, baton_mpsc_try_pop(c, got, sizeof(got), NULL));
		EXPECT_EQ(m[0], got[0]);
		EXPECT_EQ(m[1], got[1]);
	}
	EXPECT_EQ(-EAGAIN, baton_mpsc_try_pop(c, got, sizeof(got), NULL));
	/* room again, and the ring wraps */
	for (i = 0; i < 20; i++) {
		mk_msg(m, 0, (uint64_t)i);
		ASSERT_EQ(0, baton_mpsc_try_push(a, m, sizeof(m)));
		ASSERT_EQ(0, baton_mpsc_pop(c, got, sizeof(got), 0, NULL));
		EXPECT_EQ(m[0], got[0]);
	}
	ASSERT_EQ(0, baton_mpsc_stats(c, &st));
	EXPECT_EQ(28ULL, st.head);
	EXPECT_EQ(28ULL, st.tail);
	EXPECT_EQ(0ULL, st.tombstones_skipped);
	baton_ring_close(a);
	baton_ring_close(b);
	baton_ring_close(c);
}

/* One fetch_add for n slots; they come out in order. */
TEST_F(mpsc, batch_reserve)
{
	struct baton_ring *c, *a;
	uint64_t msgs[5][2], got[2];
	int i;

	ASSERT_EQ(0, baton_ring_create(self->name, &self->p,
				       BATON_ROLE_PRODUCER, &a));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_AUTO, &c));
	for (i = 0; i < 5; i++)
		mk_msg(msgs[i], 3, (uint64_t)i);
	ASSERT_EQ(5, baton_mpsc_push_batch(a, msgs, MSG_SIZE, 5));
	EXPECT_EQ(5ULL, *a->tail);
	EXPECT_EQ(-EINVAL, baton_mpsc_push_batch(a, msgs, MSG_SIZE, 9));
	EXPECT_EQ(-EINVAL, baton_mpsc_push_batch(a, msgs, MSG_SIZE, 0));
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(0, baton_mpsc_pop(c, got, sizeof(got), 0, NULL));
		EXPECT_EQ(msgs[i][0], got[0]);
	}
	/* a batch bigger than the free space waits for it, slot by slot */
	ASSERT_EQ(5, baton_mpsc_push_batch(a, msgs, MSG_SIZE, 5));
	ASSERT_EQ(3, baton_mpsc_push_batch(a, msgs, MSG_SIZE, 3));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, baton_mpsc_pop(c, got, sizeof(got), 0, NULL));
	baton_ring_close(a);
	baton_ring_close(c);
}

/* A sequence word in no valid state is -EPROTO, never a hang. */
/*
 * A producer that dies holding a ticket it never published: on memfd the
 * consumer used to stop at that ticket for as long as another producer
 * lived (-ETIMEDOUT, the messages after the hole never delivered). Now the
 * parked consumer tombstones it (pid 0: memfd cannot name the dead one)
 * and goes on to the live producer's message.
 */
TEST_F(mpsc, dead_holder_tombstoned_while_others_live)
{
	struct baton_ring *c, *p;
	struct baton_mpsc_loss loss;
	struct baton_mpsc_stats st;
	uint64_t m[2], got[2];
	int go[2], ready[2], ret;
	char x;
	pid_t dead, live;

	ASSERT_EQ(0, baton_ring_create(self->name, &self->p,
				       BATON_ROLE_CONSUMER, &c));
	dead = die_holding_tickets(self->name, 1);	/* ticket 0 */
	ASSERT_LE(0, dead);
	ASSERT_EQ(0, wait_child(dead));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(ready));
	live = fork();
	ASSERT_LE(0, live);
	if (!live) {
		close(go[1]);
		close(ready[0]);
		if (baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_AUTO, &p))
			_exit(1);
		mk_msg(m, 1, 0);
		if (baton_mpsc_push(p, m, sizeof(m)))
			_exit(2);
		(void)!write(ready[1], "p", 1);	/* attached and published */
		(void)!read(go[0], &x, 1);	/* alive until the parent is done */
		_exit(0);
	}
	close(go[0]);
	close(ready[1]);
	/*
	 * Pop only once the live producer holds its role: before that the
	 * ring has no live producer at all, and the second pop's -EPIPE is
	 * the right answer (seen under TSan in a loaded host-check).
	 */
	ASSERT_EQ(1, read(ready[0], &x, 1));
	close(ready[0]);

	ret = baton_mpsc_pop(c, got, sizeof(got), 5000000000LL, &loss);
	EXPECT_EQ(BATON_MPSC_LOST, ret);
	EXPECT_EQ(0U, loss.ticket);
	EXPECT_EQ(0U, loss.pid);
	ret = baton_mpsc_pop(c, got, sizeof(got), 5000000000LL, &loss);
	EXPECT_EQ(0, ret);
	mk_msg(m, 1, 0);
	EXPECT_EQ(0, memcmp(m, got, sizeof(m)));
	ASSERT_EQ(0, baton_mpsc_stats(c, &st));
	EXPECT_EQ(1U, st.tombstones_written);
	EXPECT_EQ(1U, st.tombstones_unattributed);
	close(go[1]);
	EXPECT_EQ(0, wait_child(live));
	baton_ring_close(c);
}

/*
 * The tombstone's pid word is written through the fd at the slot's file
 * offset: the one this handle checked and mapped at open, not the one
 * the shared header says now. A producer scribbles the header's slot
 * offset to 0 and dies holding ticket 0: the tombstone must leave the
 * header's magic (file offset 0) alone. It read the header each time,
 * and zeroed the magic.
 */
TEST_F(mpsc, tombstone_writes_where_the_handle_mapped)
{
	const off_t at = offsetof(struct baton_ring_hdr, off.slots_mmap);
	char path[sizeof("/dev/shm/baton.") + BATON_NAME_MAX];
	struct baton_ring *c, *p;
	struct baton_mpsc_loss loss;
	uint64_t got[2], magic = 0, zero = 0;
	pid_t dead;
	int fd;

	snprintf(path, sizeof(path), "/dev/shm/baton.%s", self->name);
	ASSERT_EQ(0, baton_ring_create(self->name, &self->p,
				       BATON_ROLE_CONSUMER, &c));
	dead = fork();
	ASSERT_LE(0, dead);
	if (!dead) {
		if (baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_AUTO, &p))
			_exit(1);
		fd = open(path, O_RDWR);
		if (fd < 0 || pwrite(fd, &zero, sizeof(zero), at) != 8)
			_exit(2);
		baton_mpsc_prod_reserve(p, 1);	/* ticket 0, never published */
		_exit(0);
	}
	ASSERT_EQ(0, wait_child(dead));
	EXPECT_EQ(BATON_MPSC_LOST,
		  baton_mpsc_pop(c, got, sizeof(got), 5000000000LL, &loss));
	EXPECT_EQ(0U, loss.ticket);
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(8, pread(fd, &magic, sizeof(magic), 0));
	close(fd);
	EXPECT_EQ((uint64_t)BATON_RING_MAGIC, magic);
	baton_ring_close(c);
}

/* A consumer killed inside baton_mpsc_cons_release_n() (../mpsc_cases.h). */
/*
 * A producer that dies holding a batch of tickets leaves a run of dead
 * tickets: one look tombstones them all (each on its own evidence). It
 * used to take one per 5 ms slice: 32 tickets, 160 ms, and a ring-full of
 * them many seconds. Counted, not timed: after the first LOST every one
 * of the 32 is already written.
 */
TEST_F(mpsc, dead_batch_tombstoned_in_one_look)
{
	struct baton_ring *c, *live;
	struct baton_mpsc_loss loss;
	struct baton_mpsc_stats st;
	uint64_t m[2], got[2];
	pid_t dead;
	int i;

	mk_params(&self->p, 64, 4);
	ASSERT_EQ(0, baton_ring_create(self->name, &self->p,
				       BATON_ROLE_CONSUMER, &c));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_AUTO, &live));
	dead = die_holding_tickets(self->name, 32);	/* tickets 0..31 */
	ASSERT_LE(0, dead);
	ASSERT_EQ(0, wait_child(dead));
	mk_msg(m, 1, 0);
	ASSERT_EQ(0, baton_mpsc_push(live, m, sizeof(m)));	/* ticket 32 */
	EXPECT_EQ(BATON_MPSC_LOST, baton_mpsc_pop(c, got, sizeof(got),
						  5000000000LL, &loss));
	EXPECT_EQ(0U, loss.ticket);
	ASSERT_EQ(0, baton_mpsc_stats(c, &st));
	EXPECT_EQ(32U, st.tombstones_written);
	for (i = 1; i < 32; i++) {
		EXPECT_EQ(BATON_MPSC_LOST, baton_mpsc_pop(c, got, sizeof(got),
							  0, &loss));
		EXPECT_EQ((uint64_t)i, loss.ticket);
	}
	EXPECT_EQ(0, baton_mpsc_pop(c, got, sizeof(got), 0, NULL));
	EXPECT_EQ(0, memcmp(m, got, sizeof(m)));
	baton_ring_close(live);
	baton_ring_close(c);
}

/*
 * A consumer parked at a dead producer's ticket while another producer
 * keeps publishing: each publication wakes it, and the look for a dead
 * holder ran only when a 5 ms slice ended without a wake, so it came only
 * once the live producer stopped (here after its 60 messages, 2 ms
 * apart; on a busy ring, when it filled). Now a wake at a ticket waited
 * on for a slice looks too: the LOST comes while the live producer still
 * publishes. It stops once told the LOST came, so that was before its
 * 60th (a bound of publications, not of time: the consumer may be
 * descheduled for a while on a loaded host).
 */
TEST_F(mpsc, dead_ticket_seen_while_others_publish)
{
	struct baton_ring *c, *p;
	struct baton_mpsc_loss loss;
	volatile uint32_t *published;
	uint64_t m[2], got[2];
	uint32_t seen;
	pid_t dead, live;
	int i;

	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow memory across processes");
	published = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, published);
	mk_params(&self->p, 64, 4);
	ASSERT_EQ(0, baton_ring_create(self->name, &self->p,
				       BATON_ROLE_CONSUMER, &c));
	dead = die_holding_tickets(self->name, 1);	/* ticket 0 */
	ASSERT_LE(0, dead);
	ASSERT_EQ(0, wait_child(dead));
	live = fork();
	ASSERT_LE(0, live);
	if (!live) {
		if (baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_AUTO, &p))
			_exit(1);
		for (i = 0; i < 60 && !published[1]; i++) {
			mk_msg(m, 1, (uint64_t)i);
			if (baton_mpsc_push(p, m, sizeof(m)))
				_exit(2);
			*published = (uint32_t)i + 1;
			usleep(2000);
		}
		usleep(200 * 1000);	/* alive while the consumer drains */
		_exit(0);
	}
	while (!*published)
		usleep(100);
	c->spin_limit = 0;
	EXPECT_EQ(BATON_MPSC_LOST, baton_mpsc_pop(c, got, sizeof(got),
						  5000000000LL, &loss));
	published[1] = 1;
	seen = *published;
	EXPECT_GT(60U, seen) TH_LOG("LOST after %u publications", seen);
	EXPECT_EQ(0, wait_child(live));
	for (i = 0; i < (int)*published; i++) {
		ASSERT_EQ(0, baton_mpsc_pop(c, got, sizeof(got),
					    5000000000LL, NULL));
		mk_msg(m, 1, (uint64_t)i);
		EXPECT_EQ(0, memcmp(m, got, sizeof(m)));
	}
	baton_ring_close(c);
	munmap((void *)published, 4096);
}

TEST_F(mpsc, consumer_dead_mid_release_n_resumes)
{
	/* 0, or 10 * (geometry + 1) + the failed step: mpsc_cases.h */
	EXPECT_EQ(0, mc_resume_cases(self->name, BATON_BACKEND_MEMFD));
}

/*
 * A producer killed between counting itself in the producers' summary
 * (prod_waiting, as a park does first) and arming its own word leaves
 * its count behind, and every consumer release then scans all the
 * producers' words. The next producer to attach while no other producer
 * is attached takes the count back (none can be parked then); while
 * another is attached, it is left alone (that one may be counting
 * itself).
 */
TEST_F(mpsc, summary_a_dead_parker_left_goes_at_the_next_lone_attach)
{
	const uint32_t one = 1U << 2 | BATON_WAIT_PARKED;
	struct baton_ring *c, *p1, *p2;
	pid_t pid;

	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow memory across processes");
	ASSERT_EQ(0, baton_ring_create(self->name, &self->p,
				       BATON_ROLE_CONSUMER, &c));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_AUTO, &p1));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct baton_ring *p;

		if (baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_AUTO, &p))
			_exit(1);
		__atomic_store_n(p->prod_waiting, one, __ATOMIC_RELEASE);
		raise(SIGKILL);
	}
	ASSERT_EQ(128 + SIGKILL, wait_child(pid));
	ASSERT_EQ(one, *c->prod_waiting);
	/* p1 is attached: the count may be its own, so it stays */
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_AUTO, &p2));
	EXPECT_EQ(one, *c->prod_waiting);
	baton_ring_close(p2);
	baton_ring_close(p1);
	/* alone: it goes */
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_AUTO, &p1));
	EXPECT_EQ(0U, *c->prod_waiting);
	baton_ring_close(p1);
	baton_ring_close(c);
}

TEST_F(mpsc, corrupt_seq)
{
	struct baton_ring *c, *a;
	uint64_t m[2] = { 1, 2 };
	int64_t t0;

	ASSERT_EQ(0, baton_ring_create(self->name, &self->p,
				       BATON_ROLE_CONSUMER, &c));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				     BATON_BACKEND_AUTO, &a));
	c->seq[0] = 12345;
	EXPECT_EQ(-EPROTO, baton_mpsc_try_pop(c, m, sizeof(m), NULL));
	t0 = (int64_t)now_ns();
	EXPECT_EQ(-EPROTO, baton_mpsc_pop(c, m, sizeof(m), OP_TIMEOUT_NS,
					  NULL));
	EXPECT_GT(t0 + OP_TIMEOUT_NS, (int64_t)now_ns());
	/* the producer's wait on the same slot says so too */
	c->seq[0] = 12345;
	EXPECT_EQ(-EPROTO, baton_mpsc_push(a, m, sizeof(m)));
	EXPECT_EQ(-EPROTO, baton_mpsc_push(a, m, sizeof(m)))
		TH_LOG("a handle that abandoned a ticket must refuse");
	baton_ring_close(a);
	baton_ring_close(c);
}

/*
 * A sequence region larger than the slots need, in a file grown (sparse)
 * to hold it, the claim pages moved past it: refused, and not populated
 * by the opener's MAP_POPULATE (ring_corrupt.c has the SPSC regions).
 */
TEST_F(mpsc, oversized_seq_region_is_refused_unpopulated)
{
	char path[128];
	struct baton_ring_hdr h;
	struct baton_ring *c;
	uint64_t big = 64ULL << 20, end;
	struct stat st;
	int fd, i;

	ASSERT_EQ(0, baton_ring_create(self->name, &self->p,
				       BATON_ROLE_CONSUMER, &c));
	baton_ring_close(c);
	shm_path_of(path, sizeof(path), self->name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)sizeof(h), pread(fd, &h, sizeof(h), 0));
	end = h.off.claim_mmap + 4 * h.off.claim_size;
	h.off.seq_size = big;
	h.off.claim_mmap = h.off.seq_mmap + big;
	ASSERT_EQ((ssize_t)sizeof(h), pwrite(fd, &h, sizeof(h), 0));
	ASSERT_EQ(0, ftruncate(fd, (off_t)(h.off.claim_mmap +
					   4 * h.off.claim_size)));
	for (i = 0; i < 2; i++) {
		int role = i ? BATON_ROLE_PRODUCER : BATON_ROLE_CONSUMER;
		int ret = baton_ring_open(self->name, role,
					  BATON_BACKEND_AUTO, &c);

		if (!ret)
			baton_ring_close(c);
		EXPECT_EQ(-EPROTO, ret);
	}
	ASSERT_EQ(0, fstat(fd, &st));
	EXPECT_GT(1LL << 20, (long long)st.st_blocks * 512);
	EXPECT_LT(0ULL, end);
	close(fd);
}

/* ---- exactly once, in order, P producers ---- */

struct prod_arg {
	struct baton_ring *r;
	uint32_t id;
	uint64_t count;
	int mode;		/* 0 push, 1 try-push, 2 batches of 3 */
	int err;
};

static void *producer(void *arg)
{
	struct prod_arg *a = arg;
	uint64_t seq = 0, m[3][2];
	int ret = 0;

	while (seq < a->count) {
		if (a->mode == 2 && a->count - seq >= 3) {
			mk_msg(m[0], a->id, seq);
			mk_msg(m[1], a->id, seq + 1);
			mk_msg(m[2], a->id, seq + 2);
			ret = baton_mpsc_push_batch(a->r, m, MSG_SIZE, 3);
			if (ret == 3)	/* a batch returns its count */
				ret = 0;
			seq += 3;
		} else if (a->mode == 1) {
			mk_msg(m[0], a->id, seq);
			ret = baton_mpsc_try_push(a->r, m[0], MSG_SIZE);
			if (ret == -EAGAIN) {
				sched_yield();
				continue;
			}
			seq++;
		} else {
			mk_msg(m[0], a->id, seq);
			ret = baton_mpsc_push(a->r, m[0], MSG_SIZE);
			seq++;
		}
		if (ret) {
			a->err = ret;
			break;
		}
	}
	return NULL;
}

/* Consume P * count messages; 0 or why not. */
static int consume_all(struct baton_ring *c, uint32_t nprod, uint64_t count)
{
	uint64_t next[8] = { 0 }, m[2], total = 0;
	uint32_t p;
	int ret;

	while (total < nprod * count) {
		ret = baton_mpsc_pop(c, m, sizeof(m), OP_TIMEOUT_NS, NULL);
		if (ret != 0)
			return ret < 0 ? ret : -ENODATA;
		p = (uint32_t)(m[0] >> 48);
		if (p >= nprod || m[1] != mix64(m[0]))
			return -EBADMSG;
		if ((m[0] & ((1ULL << 48) - 1)) != next[p])
			return -EILSEQ;	/* lost, doubled or reordered */
		next[p]++;
		total++;
	}
	/* nothing beyond */
	return baton_mpsc_try_pop(c, m, sizeof(m), NULL) == -EAGAIN ? 0 :
								      -E2BIG;
}

FIXTURE(mpsc_fan_in) {
	char name[BATON_NAME_MAX];
};

FIXTURE_VARIANT(mpsc_fan_in) {
	uint32_t producers;
	uint32_t slots;
	uint64_t msgs;	/* per producer */
	int mode;
};

FIXTURE_VARIANT_ADD(mpsc_fan_in, p1_push) {
	.producers = 1, .slots = 4, .msgs = 20000, .mode = 0,
};

FIXTURE_VARIANT_ADD(mpsc_fan_in, p2_push_tiny) {
	.producers = 2, .slots = 2, .msgs = 20000, .mode = 0,
};

FIXTURE_VARIANT_ADD(mpsc_fan_in, p4_push) {
	.producers = 4, .slots = 8, .msgs = 20000, .mode = 0,
};

FIXTURE_VARIANT_ADD(mpsc_fan_in, p8_push) {
	.producers = 8, .slots = 16, .msgs = 10000, .mode = 0,
};

FIXTURE_VARIANT_ADD(mpsc_fan_in, p4_try_push) {
	.producers = 4, .slots = 8, .msgs = 10000, .mode = 1,
};

FIXTURE_VARIANT_ADD(mpsc_fan_in, p4_batch) {
	.producers = 4, .slots = 8, .msgs = 9000, .mode = 2,
};

FIXTURE_SETUP(mpsc_fan_in)
{
	force_memfd();
	ring_name(self->name, sizeof(self->name), "fan");
}

FIXTURE_TEARDOWN(mpsc_fan_in)
{
	baton_ring_unlink(self->name, BATON_BACKEND_AUTO);
}

TEST_F_TIMEOUT(mpsc_fan_in, threads, 120)
{
	struct baton_ring_params p;
	struct prod_arg a[8];
	pthread_t th[8];
	struct baton_ring *c;
	uint32_t i, n = variant->producers;
	uint64_t count = SCALE(variant->msgs);

	mk_params(&p, variant->slots, n);
	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	for (i = 0; i < n; i++) {
		memset(&a[i], 0, sizeof(a[i]));
		a[i].id = i;
		a[i].count = count;
		a[i].mode = variant->mode;
		ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_PRODUCER,
					     BATON_BACKEND_AUTO, &a[i].r));
		ASSERT_EQ(0, pthread_create(&th[i], NULL, producer, &a[i]));
	}
	EXPECT_EQ(0, consume_all(c, n, count));
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		EXPECT_EQ(0, a[i].err);
		baton_ring_close(a[i].r);
	}
	baton_ring_close(c);
}

TEST_F_TIMEOUT(mpsc_fan_in, processes, 120)
{
	struct baton_ring_params p;
	struct baton_ring *c;
	uint32_t i, n = variant->producers;
	uint64_t count = variant->msgs / 2;
	pid_t pid[8];
	int st;

	if (UNDER_TSAN)
		SKIP(return, "TSan cannot follow fork()");
	mk_params(&p, variant->slots, n);
	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	for (i = 0; i < n; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			struct prod_arg a = {
				.id = i, .count = count, .mode = variant->mode,
			};

			if (baton_ring_open(self->name, BATON_ROLE_PRODUCER,
					    BATON_BACKEND_AUTO, &a.r))
				_exit(3);
			producer(&a);
			_exit(a.err ? 4 : 0);
		}
	}
	st = consume_all(c, n, count);
	EXPECT_EQ(0, st);
	for (i = 0; i < n && st; i++)
		kill(pid[i], SIGKILL);	/* blocked with nobody to drain */
	for (i = 0; i < n; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &st, 0));
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	baton_ring_close(c);
}

TEST_HARNESS_MAIN
