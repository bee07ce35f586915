// SPDX-License-Identifier: GPL-2.0
/*
 * soak: a mixed pipeline under random kill -9 and restart, for a while.
 *
 * Owns issue 7, item 7. For BATON_SOAK_SECONDS (or the first argument;
 * default 30) these run at once, each role a process of its own:
 *
 *   SPSC ring   one producer, one consumer
 *   MPSC ring   two producers (batches of 1..3 tickets), one consumer
 *   epoch       two readers, one destroyer, over a table of pointers
 *               into a pool of objects in shared memory
 *
 * and the supervisor (this process) kills a random role with SIGKILL
 * every 20..200 ms, reaps it, starts a replacement at once, and measures
 * the stall: the time from the kill until that pipeline next moved (a
 * position consumed, an object freed), the replacement's start included.
 * No pipeline may stand still for 5 s after a death.
 *
 * Exactly once, throughout. A producer process is one generation of its
 * role; its messages carry (role, generation, sequence) and it records in
 * shared memory how many it published. The consumer accounts every ring
 * position in a ledger in shared memory before it releases the slot,
 * and flips the ledger (two copies, one index store) so a kill never
 * leaves it half written: a replacement consumer must resume at the
 * ledger's position, or one before it if its predecessor died between
 * accounting and releasing (that message then comes again and must be
 * the same). Per role the generations' sequences must be gapless and in
 * order, and each ends at what that generation recorded as published,
 * plus at most its batch in flight. Tombstones (MPSC tickets of killed
 * producers) are counted, not errors.
 *
 * The epoch check is the one that matters to users: the destroyer swaps
 * a table pointer to a fresh object, retires the old one, synchronizes,
 * then poisons it; readers dereference table pointers inside their read
 * sections and count any poisoned object they see (a free before every
 * reader that could hold it had left). At the end every retirement the
 * kernel took over from a dead destroyer must have completed, once.
 *
 * At the end: every process is killed, the supervisor drains both rings
 * itself, checks the last generations, and prints the figures. The
 * result is one TAP line; the details are "#" lines.
 */
#define BT_NO_HARNESS
#include "mpsc_common.h"
#include "helpers/death.h"

#define SK_SECONDS	30
#define SK_SLOTS	8
#define SK_MPSC_PRODS	2
#define SK_BATCH	3		/* largest batch a producer pushes */
#define SK_GENS		4096		/* generations remembered per role */
#define SK_PTRS		8		/* epoch: table entries */
#define SK_POOL		2048		/* epoch: objects */
#define SK_STALL_NS	(5 * BT_NSEC)	/* liveness bound after a death */
#define SK_TOMB		(~0ULL)
#define SK_POISON	0xdeaddeaddeaddeadULL

/* Roles, one process each. */
enum sk_role {
	SK_SPSC_PROD,
	SK_SPSC_CONS,
	SK_MPSC_PROD0,
	SK_MPSC_PROD1,
	SK_MPSC_CONS,
	SK_READER0,
	SK_READER1,
	SK_DESTROYER,
	SK_NR_ROLES,
};

static const char *const sk_role_name[SK_NR_ROLES] = {
	"spsc-producer", "spsc-consumer", "mpsc-producer", "mpsc-producer",
	"mpsc-consumer", "epoch-reader", "epoch-reader", "epoch-destroyer",
};

enum sk_pipe { SK_SPSC, SK_MPSC, SK_EPOCH, SK_NR_PIPES };

static enum sk_pipe sk_pipe_of(enum sk_role r)
{
	if (r <= SK_SPSC_CONS)
		return SK_SPSC;
	if (r <= SK_MPSC_CONS)
		return SK_MPSC;
	return SK_EPOCH;
}

/* Producer index inside its ring's ledger (message producer field). */
static uint32_t sk_prod_index(enum sk_role r)
{
	return r == SK_MPSC_PROD1 ? 1 : 0;
}

/* A consumer's account of its ring, flipped whole (see the top). */
struct sk_ledger {
	uint64_t pos;			/* next position to account */
	uint64_t last;			/* word 0 accounted at pos - 1 */
	uint32_t gen[SK_MPSC_PRODS];	/* generation seen per producer */
	uint64_t next[SK_MPSC_PRODS];	/* next sequence of that generation */
	uint64_t delivered;
	uint64_t tombs;
};

struct sk_ring_state {
	struct sk_ledger ledger[2];
	uint32_t cur;			/* which ledger is current */
	uint32_t pad;
	/* per producer index: what each generation recorded as published */
	uint64_t gen_pub[SK_MPSC_PRODS][SK_GENS];
	int64_t progress_ns;		/* last position consumed */
	uint64_t losses, dups, bad, resumes;
};

struct sk_epoch_state {
	uint32_t ptr[SK_PTRS];		/* the table readers follow */
	uint8_t owned[SK_POOL];		/* destroyer: 1 while allocated */
	uint64_t word[SK_POOL];		/* live: sk_live(j); freed: POISON */
	uint64_t retired, freed, early, sections, exhausted;
	int64_t progress_ns;		/* last object freed */
};

struct sk_shared {
	struct sk_ring_state ring[2];	/* SK_SPSC, SK_MPSC */
	struct sk_epoch_state ep;
	uint32_t gen[SK_NR_ROLES];	/* generation of the live process */
	uint32_t fatal[SK_NR_ROLES];	/* a role's own failure, by code */
};

static struct sk_shared *sk;
static char sk_name[SK_NR_PIPES][BATON_NAME_MAX];

static uint64_t sk_live(uint32_t j)
{
	return bt_mix(j) | 1;	/* never 0 (free) nor POISON (even) */
}

/* id: producer index in the top 4 bits, generation in 12. */
static uint32_t sk_id(uint32_t prod, uint32_t gen)
{
	return prod << 12 | (gen & (SK_GENS - 1));
}

static void __attribute__((noreturn)) sk_fail(enum sk_role r, uint32_t code)
{
	__atomic_store_n(&sk->fatal[r], code, __ATOMIC_RELEASE);
	_exit((int)code);
}

/* ---- producers ---- */

static void sk_record(enum sk_role r, uint64_t published)
{
	struct sk_ring_state *rs = &sk->ring[sk_pipe_of(r)];
	uint32_t gen = sk->gen[r];

	__atomic_store_n(&rs->gen_pub[sk_prod_index(r)][gen & (SK_GENS - 1)],
			 published, __ATOMIC_RELEASE);
}

static void __attribute__((noreturn)) sk_spsc_producer(void)
{
	uint32_t id = sk_id(0, sk->gen[SK_SPSC_PROD]);
	unsigned int seed = (unsigned int)getpid();
	struct baton_ring *pr;
	uint64_t seq = 0, idx, m[2];
	uint32_t n, i;
	int rc;

	if (baton_ring_open(sk_name[SK_SPSC], BATON_ROLE_PRODUCER,
			    BATON_BACKEND_KMOD, &pr))
		sk_fail(SK_SPSC_PROD, 3);
	for (;;) {
		n = 1 + rand_r(&seed) % SK_BATCH;
		rc = baton_spsc_prod_reserve_wait(pr, n, &idx, SK_STALL_NS);
		if (rc == -EPIPE || rc == -ETIMEDOUT) {
			/* No consumer (yet): the supervisor starts one. */
			bt_sleep_ms(1);
			continue;
		}
		if (rc < 1)
			sk_fail(SK_SPSC_PROD, 4);
		n = (uint32_t)rc;
		for (i = 0; i < n; i++) {
			mp_msg(m, id, seq + i);
			memcpy(baton_ring_slot(pr, idx + i), m, MP_MSG);
		}
		baton_spsc_prod_submit(pr, n);
		seq += n;
		sk_record(SK_SPSC_PROD, seq);
		if (!(rand_r(&seed) % 64))
			bt_sleep_ms(1);
	}
}

/*
 * Batches of 1..SK_BATCH tickets from one fetch_add, each message
 * recorded as it is published. Not baton_mpsc_push_batch(): when the
 * consumer dies mid-batch it returns -EPIPE without saying how many of
 * the batch it had published, so a caller cannot resume without a gap or
 * a duplicate. On -EPIPE this handle is spent; a new one continues with
 * the first message not published.
 */
static void __attribute__((noreturn)) sk_mpsc_producer(enum sk_role r)
{
	uint32_t id = sk_id(sk_prod_index(r), sk->gen[r]);
	unsigned int seed = (unsigned int)getpid();
	struct baton_ring *pr;
	uint64_t m[2], seq = 0, t;
	uint32_t n, i;
	int rc;

	if (baton_ring_open(sk_name[SK_MPSC], BATON_ROLE_PRODUCER,
			    BATON_BACKEND_KMOD, &pr))
		sk_fail(r, 3);
	for (;;) {
		n = 1 + rand_r(&seed) % SK_BATCH;
		t = baton_mpsc_prod_reserve(pr, n);
		for (rc = 0, i = 0; i < n; i++) {
			if (!baton_mpsc_prod_slot_free(pr, t + i)) {
				rc = baton_mpsc_prod_wait(pr, t + i);
				if (rc)
					break;
			}
			mp_msg(m, id, seq);
			memcpy(baton_ring_slot(pr, t + i), m, MP_MSG);
			baton_mpsc_prod_publish(pr, t + i);
			sk_record(r, ++seq);
		}
		if (rc == -EPIPE) {
			/* The consumer died: the rest of the batch is lost. */
			baton_ring_close(pr);
			bt_sleep_ms(1);
			if (baton_ring_open(sk_name[SK_MPSC],
					    BATON_ROLE_PRODUCER,
					    BATON_BACKEND_KMOD, &pr))
				sk_fail(r, 5);
			continue;
		}
		if (rc)
			sk_fail(r, 4);
		baton_mpsc_prod_done(pr);
		if (!(rand_r(&seed) % 64))
			bt_sleep_ms(1);
	}
}

/* ---- consumers and the ledger ---- */

static struct sk_ledger *sk_ledger(struct sk_ring_state *rs)
{
	return &rs->ledger[__atomic_load_n(&rs->cur, __ATOMIC_ACQUIRE) & 1];
}

/* Account message word 0 @w for generation @gen's producer @p. */
static void sk_account_msg(struct sk_ring_state *rs, struct sk_ledger *l,
			   uint64_t w)
{
	uint32_t id = (uint32_t)(w >> 48), p = id >> 12, gen = id & 0xfff;
	uint64_t seq = w & ((1ULL << 48) - 1), pub;

	if (p >= SK_MPSC_PRODS) {
		rs->bad++;
		return;
	}
	if (gen != (l->gen[p] & 0xfff)) {
		/*
		 * A new generation: the ones before it are over. Each must
		 * have delivered what it recorded, plus at most a batch.
		 */
		while ((l->gen[p] & 0xfff) != gen) {
			pub = __atomic_load_n(&rs->gen_pub[p][l->gen[p] &
							      (SK_GENS - 1)],
					      __ATOMIC_ACQUIRE);
			if (l->next[p] < pub)
				rs->losses += pub - l->next[p];
			else if (l->next[p] > pub + SK_BATCH)
				rs->dups += l->next[p] - pub - SK_BATCH;
			l->gen[p]++;
			l->next[p] = 0;
		}
	}
	if (seq < l->next[p])
		rs->dups++;
	else
		rs->losses += seq - l->next[p];
	if (seq >= l->next[p])
		l->next[p] = seq + 1;
	l->delivered++;
}

/*
 * Account position @pos holding @w (SK_TOMB: a tombstone): copy, update,
 * flip. A redelivery of the position accounted last (the previous
 * consumer died before its release) must be the same and is not counted.
 */
static void sk_account(struct sk_ring_state *rs, uint64_t pos, uint64_t w)
{
	struct sk_ledger *cur = sk_ledger(rs);
	struct sk_ledger *nl = &rs->ledger[(rs->cur & 1) ^ 1];

	if (pos + 1 == cur->pos) {
		if (w != cur->last)
			rs->bad++;
		return;
	}
	if (pos != cur->pos) {
		if (pos > cur->pos)
			rs->losses += pos - cur->pos;
		else
			rs->dups++;
	}
	*nl = *cur;
	if (w == SK_TOMB)
		nl->tombs++;
	else
		sk_account_msg(rs, nl, w);
	nl->pos = pos + 1;
	nl->last = w;
	/* The flip: one store makes the new account current. */
	__atomic_store_n(&rs->cur, rs->cur ^ 1, __ATOMIC_RELEASE);
	__atomic_store_n(&rs->progress_ns, bt_now_ns(), __ATOMIC_RELEASE);
}

/* Where a new consumer starts, checked against the ledger. */
static void sk_resume_check(struct sk_ring_state *rs, uint64_t local)
{
	uint64_t pos = sk_ledger(rs)->pos;

	rs->resumes++;
	if (local == pos || local + 1 == pos)
		return;
	if (local > pos)
		rs->losses += local - pos;
	else
		rs->dups += pos - local - 1;
}

/*
 * One position: 1 accounted, 0 nothing yet (-EAGAIN), -EPIPE end of
 * stream, other negative errno on failure. Waits up to @timeout_ns.
 */
static int sk_consume_one(struct baton_ring *c, struct sk_ring_state *rs,
			  int64_t timeout_ns)
{
	uint64_t m[2], idx;
	int rc;

	if (c->kind == BATON_RING_SPSC) {
		rc = baton_spsc_cons_peek_wait(c, 1, &idx, timeout_ns);
		if (rc == -ETIMEDOUT)
			return 0;
		if (rc < 1)
			return rc;
		memcpy(m, baton_ring_slot(c, idx), sizeof(m));
		if (!mp_ok(m))
			rs->bad++;
		sk_account(rs, idx, m[0]);
		baton_spsc_cons_release(c, 1);
		return 1;
	}
	for (;;) {
		rc = baton_mpsc_cons_peek(c, &idx);
		if (rc != -EAGAIN)
			break;
		rc = baton_ring_park(c, timeout_ns);
		if (rc == -ETIMEDOUT)
			return 0;
		if (rc && rc != -EINTR)
			return rc;
	}
	if (rc < 0 && rc != BATON_MPSC_LOST)
		return rc;
	if (rc == BATON_MPSC_LOST) {
		sk_account(rs, idx, SK_TOMB);
	} else {
		memcpy(m, baton_ring_slot(c, idx), sizeof(m));
		if (!mp_ok(m))
			rs->bad++;
		sk_account(rs, idx, m[0]);
	}
	baton_mpsc_cons_release(c);
	return 1;
}

static void __attribute__((noreturn)) sk_consumer(enum sk_role r)
{
	struct sk_ring_state *rs = &sk->ring[sk_pipe_of(r)];
	struct baton_ring *c;
	int rc, tries;

	/* The dead predecessor's file may take a moment to be released. */
	for (tries = 0;; tries++) {
		rc = baton_ring_open(sk_name[sk_pipe_of(r)],
				     BATON_ROLE_CONSUMER, BATON_BACKEND_KMOD,
				     &c);
		if (!rc)
			break;
		if (rc != -EBUSY || tries > 5000)
			sk_fail(r, 3);
		bt_sleep_ms(1);
	}
	sk_resume_check(rs, c->local);
	for (;;) {
		rc = sk_consume_one(c, rs, SK_STALL_NS);
		if (rc == -EPIPE) {
			/* No producer (yet): the supervisor starts one. */
			bt_sleep_ms(1);
			continue;
		}
		if (rc < 0)
			sk_fail(r, 4);
	}
}

/* ---- epoch readers and the destroyer ---- */

static struct baton_epoch *sk_epoch_join(enum sk_role r)
{
	struct baton_epoch *d;

	if (baton_epoch_open(sk_name[SK_EPOCH], BATON_BACKEND_KMOD, &d))
		sk_fail(r, 3);
	if (baton_epoch_register(d) < 0)
		sk_fail(r, 4);
	return d;
}

static void __attribute__((noreturn)) sk_reader(enum sk_role r)
{
	struct sk_epoch_state *es = &sk->ep;
	struct baton_epoch *d = sk_epoch_join(r);
	unsigned int seed = (unsigned int)getpid();
	uint32_t i, j, k, spin;

	for (;;) {
		baton_epoch_enter(d);
		for (k = 0; k < 4; k++) {
			i = rand_r(&seed) % SK_PTRS;
			j = __atomic_load_n(&es->ptr[i], __ATOMIC_ACQUIRE);
			if (j >= SK_POOL ||
			    __atomic_load_n(&es->word[j], __ATOMIC_RELAXED) !=
			    sk_live(j))
				__atomic_fetch_add(&es->early, 1,
						   __ATOMIC_RELAXED);
		}
		/* Hold the section a while: kills land inside it too. */
		for (spin = rand_r(&seed) % 2000; spin; spin--)
			__asm__ __volatile__("" ::: "memory");
		baton_epoch_exit(d);
		__atomic_fetch_add(&es->sections, 1, __ATOMIC_RELAXED);
		if (!(rand_r(&seed) % 16))
			bt_sleep_ms(1);
	}
}

/* A free object of the pool, or SK_POOL when a dead destroyer's leaks
 * and the live table have taken them all.
 */
static uint32_t sk_alloc(struct sk_epoch_state *es, uint32_t *cursor)
{
	uint32_t n;

	for (n = 0; n < SK_POOL; n++) {
		uint32_t j = (*cursor + n) % SK_POOL;

		if (!es->owned[j]) {
			*cursor = j + 1;
			es->owned[j] = 1;
			return j;
		}
	}
	return SK_POOL;
}

/*
 * Swap a table entry to a fresh object, retire the old one, wait until
 * no reader can hold it, poison it. Killed anywhere in between, the old
 * object is simply never freed (owned stays 1): a leak, never an early
 * free. What it retired the kernel completes.
 */
static void __attribute__((noreturn)) sk_destroyer(void)
{
	struct sk_epoch_state *es = &sk->ep;
	struct baton_epoch *d = sk_epoch_join(SK_DESTROYER);
	unsigned int seed = (unsigned int)getpid();
	uint32_t cursor = seed % SK_POOL, i, j, old;
	uint64_t e;
	int rc;

	for (;;) {
		j = sk_alloc(es, &cursor);
		if (j == SK_POOL) {
			es->exhausted++;
			bt_sleep_ms(10);
			continue;
		}
		__atomic_store_n(&es->word[j], sk_live(j), __ATOMIC_RELAXED);
		i = rand_r(&seed) % SK_PTRS;
		/* Release: the object's word before the pointer to it. */
		old = __atomic_exchange_n(&es->ptr[i], j, __ATOMIC_ACQ_REL);
		/* retire() has the full fence (U) after this unlink. */
		rc = baton_epoch_retire(d, old, 0, &e);
		if (rc == -ENOSPC) {
			baton_epoch_collect(d, NULL, NULL);
			rc = baton_epoch_retire(d, old, 0, &e);
		}
		if (rc)
			sk_fail(SK_DESTROYER, 5);
		__atomic_fetch_add(&es->retired, 1, __ATOMIC_RELAXED);
		rc = baton_epoch_synchronize(d, e, SK_STALL_NS, NULL);
		if (rc)
			sk_fail(SK_DESTROYER, 6);
		__atomic_store_n(&es->word[old], SK_POISON, __ATOMIC_RELAXED);
		__atomic_store_n(&es->owned[old], 0, __ATOMIC_RELEASE);
		__atomic_fetch_add(&es->freed, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&es->progress_ns, bt_now_ns(),
				 __ATOMIC_RELEASE);
	}
}

/* ---- the supervisor ---- */

static pid_t sk_start(enum sk_role r)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	switch (r) {
	case SK_SPSC_PROD:
		sk_spsc_producer();
	case SK_MPSC_PROD0:
	case SK_MPSC_PROD1:
		sk_mpsc_producer(r);
	case SK_SPSC_CONS:
	case SK_MPSC_CONS:
		sk_consumer(r);
	case SK_READER0:
	case SK_READER1:
		sk_reader(r);
	case SK_DESTROYER:
		sk_destroyer();
	default:
		_exit(2);
	}
}

static int64_t sk_progress(enum sk_pipe p)
{
	if (p == SK_EPOCH)
		return __atomic_load_n(&sk->ep.progress_ns, __ATOMIC_ACQUIRE);
	return __atomic_load_n(&sk->ring[p].progress_ns, __ATOMIC_ACQUIRE);
}

static int sk_setup(void)
{
	struct baton_ring_params sp = bt_params(SK_SLOTS, MP_MSG);
	struct baton_ring_params mp = mp_params(SK_SLOTS, 4);
	struct baton_epoch_params ep = {
		.max_participants = 8,
		.queue_len = 64,
		.mode = 0600,
		.backend = BATON_BACKEND_KMOD,
	};
	struct baton_epoch *d;
	struct baton_ring *r;
	uint32_t i;

	bt_make_name(sk_name[SK_SPSC], BATON_NAME_MAX, "soak-spsc");
	bt_make_name(sk_name[SK_MPSC], BATON_NAME_MAX, "soak-mpsc");
	bt_make_name(sk_name[SK_EPOCH], BATON_NAME_MAX, "soak-epoch");
	/* Made and closed: the names keep them until the end. */
	if (baton_ring_create(sk_name[SK_SPSC], &sp, BATON_ROLE_CONSUMER, &r))
		return -1;
	baton_ring_close(r);
	if (baton_ring_create(sk_name[SK_MPSC], &mp, BATON_ROLE_CONSUMER, &r))
		return -1;
	baton_ring_close(r);
	if (baton_epoch_create(sk_name[SK_EPOCH], &ep, &d))
		return -1;
	baton_epoch_close(d);
	for (i = 0; i < SK_PTRS; i++) {
		sk->ep.ptr[i] = i;
		sk->ep.owned[i] = 1;
		sk->ep.word[i] = sk_live(i);
	}
	return 0;
}

/* Drain a ring after every process is gone: the supervisor consumes. */
static int sk_final_drain(enum sk_pipe p)
{
	struct sk_ring_state *rs = &sk->ring[p];
	struct baton_ring *c;
	struct sk_ledger *l;
	uint32_t k, nprods = p == SK_MPSC ? SK_MPSC_PRODS : 1;
	enum sk_role role;
	uint64_t pub;
	int rc;

	if (baton_ring_open(sk_name[p], BATON_ROLE_CONSUMER,
			    BATON_BACKEND_KMOD, &c))
		return -1;
	sk_resume_check(rs, c->local);
	do
		rc = sk_consume_one(c, rs, SK_STALL_NS);
	while (rc == 1);
	baton_ring_close(c);
	if (rc != -EPIPE)
		return -2;
	/* The last generation of each producer ends at what it recorded. */
	l = sk_ledger(rs);
	for (k = 0; k < nprods; k++) {
		role = p == SK_SPSC ? SK_SPSC_PROD :
		       k ? SK_MPSC_PROD1 : SK_MPSC_PROD0;
		/* generations after the last one seen published nothing */
		while (l->gen[k] != sk->gen[role]) {
			pub = rs->gen_pub[k][l->gen[k] & (SK_GENS - 1)];
			if (l->next[k] < pub)
				rs->losses += pub - l->next[k];
			else if (l->next[k] > pub + SK_BATCH)
				rs->dups += l->next[k] - pub - SK_BATCH;
			l->gen[k]++;
			l->next[k] = 0;
		}
		pub = rs->gen_pub[k][l->gen[k] & (SK_GENS - 1)];
		if (l->next[k] < pub)
			rs->losses += pub - l->next[k];
		else if (l->next[k] > pub + SK_BATCH)
			rs->dups += l->next[k] - pub - SK_BATCH;
	}
	return 0;
}

static long sk_seconds(int argc, char **argv)
{
	const char *s = argc > 1 ? argv[1] : getenv("BATON_SOAK_SECONDS");
	long v = s ? strtol(s, NULL, 10) : 0;

	return v > 0 ? v : SK_SECONDS;
}

int main(int argc, char **argv)
{
	long secs = sk_seconds(argc, argv);
	unsigned int seed = (unsigned int)getpid(), kills[SK_NR_ROLES] = { 0 };
	pid_t pid[SK_NR_ROLES];
	struct dt_stalls stalls;
	struct baton_epoch_stats est;
	struct baton_epoch *d;
	int64_t start, end;
	double max_us, med_us;
	unsigned int total_kills = 0, r;
	uint64_t losses, dups, bad;
	long objects0, objects1;
	int failed = 0, drained[2];
	const char *why = "";

	printf("TAP version 13\n1..1\n");
	if (access(BATON_DEVICE, F_OK)) {
		printf("ok 1 soak # SKIP %s absent\n", BATON_DEVICE);
		return 4;
	}
	objects0 = dt_baton_kmalloc_objects();
	sk = dt_shared(sizeof(*sk));
	if (!sk || dt_stalls_init(&stalls, 1 << 20) || sk_setup()) {
		printf("not ok 1 soak: setup failed\n");
		return 1;
	}
	printf("# soak: %ld s, %d processes, kill -9 every 20..200 ms\n", secs,
	       SK_NR_ROLES);
	fflush(stdout);
	for (r = 0; r < SK_NR_ROLES; r++)
		pid[r] = sk_start(r);

	start = bt_now_ns();
	end = start + secs * BT_NSEC;
	while (bt_now_ns() < end && !failed) {
		enum sk_pipe p;
		int64_t killed, deadline, prog;
		int st;

		bt_sleep_ms(20 + rand_r(&seed) % 180);
		/* A role that died by itself failed: stop and say which. */
		for (r = 0; r < SK_NR_ROLES; r++) {
			if (waitpid(pid[r], &st, WNOHANG) == pid[r]) {
				printf("# %s died by itself: status %d, code %u\n",
				       sk_role_name[r], st, sk->fatal[r]);
				failed = 1;
				why = "a role failed";
				pid[r] = sk_start(r);
			}
		}
		r = rand_r(&seed) % SK_NR_ROLES;
		p = sk_pipe_of(r);
		killed = bt_now_ns();
		kill(pid[r], SIGKILL);
		if (dt_reap(pid[r], 20000) != 128 + SIGKILL) {
			failed = 1;
			why = "a kill did not take";
		}
		kills[r]++;
		total_kills++;
		sk->gen[r]++;
		pid[r] = sk_start(r);
		/* The pipeline must move again: restart included. */
		deadline = killed + SK_STALL_NS;
		while ((prog = sk_progress(p)) <= killed) {
			if (bt_now_ns() > deadline)
				break;
			bt_sleep_ms(1);
		}
		if (prog <= killed) {
			printf("# %s pipeline stalled for 5 s after killing its %s\n",
			       p == SK_EPOCH ? "epoch" : p == SK_MPSC ? "mpsc" : "spsc",
			       sk_role_name[r]);
			failed = 1;
			why = "a pipeline stalled after a death";
			break;
		}
		dt_stalls_add(&stalls, prog - killed);
	}

	/* Stop everything, then account what is left in the rings. */
	for (r = 0; r < SK_NR_ROLES; r++) {
		kill(pid[r], SIGKILL);
		dt_reap(pid[r], 20000);
	}
	drained[0] = sk_final_drain(SK_SPSC);
	drained[1] = sk_final_drain(SK_MPSC);
	if (drained[0] || drained[1]) {
		failed = 1;
		why = "the final drain failed";
	}

	/* Epoch: every retirement the kernel took over completes, once. */
	if (baton_epoch_open(sk_name[SK_EPOCH], BATON_BACKEND_KMOD, &d) ||
	    baton_epoch_register(d) < 0) {
		failed = 1;
		why = "the domain is gone";
	} else {
		for (r = 0; r < 4; r++)
			baton_epoch_collect(d, NULL, NULL);
		baton_epoch_stats(d, &est);
		baton_epoch_close(d);
		if (est.orphans_completed != est.orphaned) {
			failed = 1;
			why = "orphaned retirements not completed";
		}
		if (est.completed + est.orphaned < sk->ep.retired ||
		    est.completed + est.orphaned >
		    sk->ep.retired + kills[SK_DESTROYER]) {
			failed = 1;
			why = "retirements lost or completed twice";
		}
	}

	losses = sk->ring[0].losses + sk->ring[1].losses;
	dups = sk->ring[0].dups + sk->ring[1].dups;
	bad = sk->ring[0].bad + sk->ring[1].bad;
	dt_stalls_figures(&stalls, &max_us, &med_us);
	printf("# soak: %.1f s, %u kills:", (bt_now_ns() - start) / 1e9,
	       total_kills);
	for (r = 0; r < SK_NR_ROLES; r++)
		printf("%s%s %u", r ? ", " : " ", sk_role_name[r], kills[r]);
	printf("\n# soak: messages delivered: spsc %llu, mpsc %llu; losses %llu, duplicates %llu, corrupt %llu; tombstones seen %llu; consumer resumes %llu\n",
	       (unsigned long long)sk_ledger(&sk->ring[0])->delivered,
	       (unsigned long long)sk_ledger(&sk->ring[1])->delivered,
	       (unsigned long long)losses, (unsigned long long)dups,
	       (unsigned long long)bad,
	       (unsigned long long)sk_ledger(&sk->ring[1])->tombs,
	       (unsigned long long)(sk->ring[0].resumes + sk->ring[1].resumes));
	printf("# soak: epoch: %llu read sections, %llu objects retired, %llu freed, %llu seen freed early, %llu retirements orphaned (%llu completed), pool exhausted %llu times\n",
	       (unsigned long long)sk->ep.sections,
	       (unsigned long long)sk->ep.retired,
	       (unsigned long long)sk->ep.freed,
	       (unsigned long long)sk->ep.early,
	       (unsigned long long)est.orphaned,
	       (unsigned long long)est.orphans_completed,
	       (unsigned long long)sk->ep.exhausted);
	printf("# soak: stall after a death (until its pipeline moved, restart included): longest %.0f us, median %.0f us over %u kills\n",
	       max_us, med_us, stalls.n);
	if (losses || dups || bad || sk->ep.early) {
		failed = 1;
		why = "exactly-once or early-free check failed";
	}

	baton_ring_unlink(sk_name[SK_SPSC], BATON_BACKEND_KMOD);
	baton_ring_unlink(sk_name[SK_MPSC], BATON_BACKEND_KMOD);
	baton_epoch_unlink(sk_name[SK_EPOCH], BATON_BACKEND_KMOD);
	objects1 = dt_objects_settle(DT_KMALLOC, objects0, 5000);
	printf("# soak: baton kmalloc objects: %ld before, %ld after\n",
	       objects0, objects1);
	if (objects0 >= 0 && objects1 > objects0) {
		failed = 1;
		why = "kernel objects left behind";
	}
	if (failed)
		printf("not ok 1 soak: %s\n", why);
	else
		printf("ok 1 soak\n");
	return failed;
}
