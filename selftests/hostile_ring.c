// SPDX-License-Identifier: GPL-2.0
/*
 * hostile_ring: one process holds a legitimate role on a ring and writes
 * garbage into every word that role's mappings let it write, while other
 * processes use the ring honestly.
 *
 * Owns the ring half of the threat model (Documentation/threat-model.rst):
 *  - SPSC producer: tail, prod_waiting, the slots;
 *  - SPSC consumer: head, cons_waiting;
 *  - MPSC producer: the shared tail, prod_waiting (a kernel-kept count),
 *    every sequence word, every slot, its own claim page;
 *  - MPSC consumer: head, cons_waiting, every sequence word.
 * Values: random, 0, ~0, just past slot_count, huge jumps, and moving
 * targets (helpers/hostile.h), over the named words and any word of the
 * writable regions. While it scribbles, the attacker also calls the ring
 * fd's kernel side (park with a deadline, wake, info, poll) and must get
 * a documented errno each time.
 *
 * The victims (separate processes, the library, the kmod backend) make
 * only bounded calls: pops and pushes with a timeout, poll with a
 * timeout, raw parks with a deadline, info. Each must return within its
 * timeout (plus HX_HANG_NS of slack for a loaded VM) with a result the
 * ABI documents; garbage slot contents are the attacker's right and are
 * not checked. The kernel must not fault (the VM runner fails the run on
 * any BUG/WARNING/Oops; every access the kernel makes is into pages it
 * owns, so a KASAN kernel checks the same bounds). Once everyone is gone
 * no role is left attached. Each test prints its seed;
 * BATON_HOSTILE_SEED=<seed> replays it.
 */
#include "common.h"
#include "helpers/hostile.h"

#define ATTACK_MS	2500
#define AFTER_MS	300
#define VICTIM_TO_NS	(20 * BT_MSEC)
#define SLOTS		8
#define SLOT_SIZE	64
#define MAX_PROCS	4

struct hr_shared {
	uint32_t stop;		/* the attacker stops */
	uint32_t done;		/* the victims stop */
	uint32_t ready;		/* processes set up */
	uint32_t victims;	/* the attacker starts once they are set up */
	uint64_t writes;	/* the attacker's scribbles */
	struct hx_counts c[MAX_PROCS];	/* [0] the attacker */
};

enum { EX_OK = 0, EX_SETUP = 1, EX_BAD = 2, EX_HUNG = 3 };

/* Which call a count came from, for the log. */
enum { C_PARK = 1, C_WAKE, C_INFO, C_POLL, C_POP, C_PUSH, C_MMAP };

static const char *const call_names[] = {
	"?", "park", "wake", "info", "poll", "pop", "push", "mmap",
};

static int hr_exit(const struct hx_counts *c)
{
	if (c->bad)
		return EX_BAD;
	return c->hung ? EX_HUNG : EX_OK;
}

static void hr_ready(struct hr_shared *sh)
{
	__atomic_add_fetch(&sh->ready, 1, __ATOMIC_ACQ_REL);
}

static bool hr_flag(const uint32_t *f)
{
	return __atomic_load_n(f, __ATOMIC_ACQUIRE);
}

/* ---- the kernel side, called by anyone, while the words are garbage ---- */

static void hr_park(struct hx_counts *c, int fd, uint64_t expected,
		    int64_t timeout_ns)
{
	int64_t t0 = bt_now_ns();
	int e = _test_park(fd, BATON_PARK_DEADLINE, expected, t0 + timeout_ns);

	HX_COUNT(c, C_PARK, e, ETIMEDOUT, EPROTO, EPIPE, EINTR);
	hx_timed(c, t0, timeout_ns);
}

static void hr_poll(struct hx_counts *c, int fd, short events, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int64_t t0 = bt_now_ns();
	int n = poll(&pfd, 1, ms);

	HX_COUNT(c, C_POLL, n < 0 ? errno : 0, EINTR);
	hx_timed(c, t0, (int64_t)ms * BT_MSEC);
}

static void hr_info(struct hx_counts *c, int fd)
{
	struct baton_ring_info info;

	HX_COUNT(c, C_INFO, _test_info(fd, &info), 0);
}

/* ---- the attacker ---- */

struct hr_maps {
	void *p[4];
	size_t len[4];
	int n;
};

static void *hr_map_rw(struct hr_maps *m, int fd, uint64_t off, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       (off_t)off);

	if (p == MAP_FAILED)
		return NULL;
	m->p[m->n] = p;
	m->len[m->n++] = len;
	return p;
}

/*
 * The read-only header stays read-only for a hostile role too: no
 * PROT_WRITE mapping (EACCES), no mprotect() upgrade (EACCES).
 */
static bool hr_header_stays_ro(int fd, const struct baton_ring_offsets *o)
{
	void *p = mmap(NULL, o->hdr_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, (off_t)o->hdr_mmap);
	bool ok;

	if (p != MAP_FAILED || errno != EACCES)
		return false;
	p = mmap(NULL, o->hdr_size, PROT_READ, MAP_SHARED, fd,
		 (off_t)o->hdr_mmap);
	if (p == MAP_FAILED)
		return false;
	ok = mprotect(p, o->hdr_size, PROT_READ | PROT_WRITE) && errno == EACCES;
	munmap(p, o->hdr_size);
	return ok;
}

/* Every word of @role's writable mappings, named where the ABI names it. */
static int hr_attacker_target(struct hx_target *t, struct hr_maps *m, int fd,
			      uint32_t role, const struct baton_ring_open *o)
{
	const struct baton_ring_offsets *off = &o->out_off;
	uint64_t n = o->out_slot_count;
	bool mpsc = o->out_kind == BATON_RING_MPSC;
	uint8_t *own, *slots = NULL, *seq = NULL, *claim = NULL;

	if (role == BATON_ROLE_PRODUCER) {
		own = hr_map_rw(m, fd, off->prod_mmap, off->prod_size);
		slots = hr_map_rw(m, fd, off->slots_mmap, off->slots_size);
		if (!own || !slots)
			return -1;
		hx_add_word(t, "tail", own + off->prod_tail, 8, n);
		hx_add_word(t, "prod_waiting", own + off->prod_waiting, 4, 1);
		hx_add_region(t, "prod", own, off->prod_size);
		hx_add_region(t, "slots", slots, off->slots_size);
	} else {
		own = hr_map_rw(m, fd, off->cons_mmap, off->cons_size);
		if (!own)
			return -1;
		hx_add_word(t, "head", own + off->cons_head, 8, n);
		hx_add_word(t, "cons_waiting", own + off->cons_waiting, 4, 1);
		hx_add_region(t, "cons", own, off->cons_size);
	}
	if (!mpsc)
		return 0;
	seq = hr_map_rw(m, fd, off->seq_mmap, off->seq_size);
	if (!seq)
		return -1;
	hx_add_word(t, "seq[0]", seq, 8, n);
	hx_add_word(t, "seq[1]", seq + 8, 8, n);
	hx_add_word(t, "seq[n-1]", seq + 8 * (n - 1), 8, n);
	hx_add_region(t, "seq", seq, off->seq_size);
	if (role != BATON_ROLE_PRODUCER)
		return 0;
	claim = hr_map_rw(m, fd, off->claim_mmap, off->claim_size);
	if (!claim)
		return -1;
	hx_add_word(t, "claim.floor", claim, 8, n);
	hx_add_word(t, "claim.first", claim + 8, 8, n);
	hx_add_word(t, "claim.count", claim + 16, 8, n);
	hx_add_region(t, "claim", claim, off->claim_size);
	return 0;
}

static int hr_attacker(const char *name, uint32_t role, struct hr_shared *sh,
		       uint64_t seed)
{
	struct hx_counts *c = &sh->c[0];
	struct hx_target t = { 0 };
	struct hr_maps m = { 0 };
	struct baton_ring_open o;
	struct hx_rng rng;
	int dev, fd, i;

	hx_seed(&rng, seed);
	/*
	 * After the victims attached: the library refuses to attach to a
	 * ring whose indices are already inconsistent (EPROTO, checked at
	 * the end of hr_run()), which would end the test before it began.
	 */
	for (i = 0; i < 4000 && __atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) <
			       __atomic_load_n(&sh->victims, __ATOMIC_ACQUIRE);
	     i++)
		bt_sleep_ms(5);
	dev = bt_dev_open();
	if (dev < 0 || _test_ring_open(dev, name, role, &o))
		return EX_SETUP;
	fd = o.out_fd;
	if (hr_attacker_target(&t, &m, fd, role, &o))
		return EX_SETUP;
	if (!hr_header_stays_ro(fd, &o.out_off)) {
		HX_COUNT(c, C_MMAP, EPERM, 0);
		return EX_BAD;
	}
	hr_ready(sh);

	while (!hr_flag(&sh->stop)) {
		uint64_t own = hx_load(&t.words[0]);

		for (i = 0; i < 16; i++)
			hx_scribble(&t, &rng);
		switch (hx_below(&rng, 5)) {
		case 0:	/* our own park, at a garbage index */
			hr_park(c, fd, hx_garbage(&rng, own, o.out_slot_count),
				(1 + hx_below(&rng, 3)) * BT_MSEC);
			break;
		case 1:
			HX_COUNT(c, C_WAKE, _test_wake(fd), 0);
			break;
		case 2:
			hr_info(c, fd);
			break;
		case 3:
			hr_poll(c, fd, POLLIN | POLLOUT, hx_below(&rng, 2));
			break;
		default:
			break;
		}
	}
	__atomic_store_n(&sh->writes, t.writes, __ATOMIC_RELEASE);
	/* Exit with the garbage in place: the release reads it too. */
	return hr_exit(c);
}

/* ---- the victims ---- */

static int hr_victim_spsc(const char *name, uint32_t role,
			  struct hr_shared *sh, struct hx_counts *c,
			  uint64_t seed)
{
	uint8_t msg[SLOT_SIZE] = { 0 };
	struct baton_ring *r;
	struct hx_rng rng;
	int fd, ret;

	hx_seed(&rng, seed);
	if (baton_ring_open(name, (int)role, BATON_BACKEND_KMOD, &r))
		return EX_SETUP;
	fd = baton_ring_fd(r);
	hr_ready(sh);
	while (!hr_flag(&sh->done)) {
		int64_t t0 = bt_now_ns();

		switch (hx_below(&rng, 4)) {
		case 0:
			if (role == BATON_ROLE_CONSUMER) {
				ret = baton_spsc_pop(r, msg, sizeof(msg),
						     VICTIM_TO_NS);
				HX_COUNT(c, C_POP, ret >= 0 ? 0 : -ret,
					 ETIMEDOUT, EPROTO, EPIPE, EINTR);
			} else {
				ret = baton_spsc_push(r, msg, sizeof(msg),
						      VICTIM_TO_NS);
				HX_COUNT(c, C_PUSH, ret >= 0 ? 0 : -ret,
					 ETIMEDOUT, EPROTO, EPIPE, EINTR);
			}
			hx_timed(c, t0, VICTIM_TO_NS);
			break;
		case 1:
			hr_poll(c, fd, role == BATON_ROLE_CONSUMER ? POLLIN :
				POLLOUT, 20);
			break;
		case 2:
			hr_park(c, fd, r->local, VICTIM_TO_NS);
			break;
		default:
			hr_info(c, fd);
			break;
		}
	}
	baton_ring_close(r);
	return hr_exit(c);
}

/* The MPSC consumer: blocking pops with a timeout, poll, park, info. */
static int hr_victim_mpsc_cons(const char *name, struct hr_shared *sh,
			       struct hx_counts *c, uint64_t seed)
{
	uint8_t msg[SLOT_SIZE];
	struct baton_ring *r;
	struct hx_rng rng;
	int fd, ret;

	hx_seed(&rng, seed);
	if (baton_ring_open(name, BATON_ROLE_CONSUMER, BATON_BACKEND_KMOD, &r))
		return EX_SETUP;
	fd = baton_ring_fd(r);
	hr_ready(sh);
	while (!hr_flag(&sh->done)) {
		int64_t t0 = bt_now_ns();

		switch (hx_below(&rng, 4)) {
		case 0:
			ret = baton_mpsc_pop(r, msg, sizeof(msg), VICTIM_TO_NS,
					     NULL);
			/* 0: a message, BATON_MPSC_LOST: a tombstone */
			HX_COUNT(c, C_POP, ret == 0 || ret == BATON_MPSC_LOST ? 0 : -ret,
				 ETIMEDOUT, EPROTO, EPIPE, EINTR);
			hx_timed(c, t0, VICTIM_TO_NS);
			break;
		case 1:
			hr_poll(c, fd, POLLIN, 20);
			break;
		case 2:
			hr_park(c, fd, r->local, VICTIM_TO_NS);
			break;
		default:
			hr_info(c, fd);
			break;
		}
	}
	baton_ring_close(r);
	return hr_exit(c);
}

/*
 * An honest MPSC producer that must not block unboundedly: try_push
 * (never takes a ticket it cannot use), poll for room with a timeout, a
 * raw park on the current tail with a deadline. baton_mpsc_push() has no
 * timeout by design (Documentation/mpsc.rst), so it is not used here.
 */
static int hr_victim_mpsc_prod(const char *name, struct hr_shared *sh,
			       struct hx_counts *c, uint64_t seed)
{
	uint8_t msg[SLOT_SIZE] = { 0 };
	struct baton_ring *r;
	struct hx_rng rng;
	int fd, ret;

	hx_seed(&rng, seed);
	if (baton_ring_open(name, BATON_ROLE_PRODUCER, BATON_BACKEND_KMOD, &r))
		return EX_SETUP;
	fd = baton_ring_fd(r);
	hr_ready(sh);
	while (!hr_flag(&sh->done)) {
		switch (hx_below(&rng, 4)) {
		case 0:
			ret = baton_mpsc_try_push(r, msg, sizeof(msg));
			HX_COUNT(c, C_PUSH, -ret, EAGAIN, EPROTO, EPIPE);
			break;
		case 1:
			hr_poll(c, fd, POLLOUT, 20);
			break;
		case 2:
			hr_park(c, fd, __atomic_load_n(r->tail,
						       __ATOMIC_RELAXED),
				VICTIM_TO_NS);
			break;
		default:
			hr_info(c, fd);
			break;
		}
	}
	baton_ring_close(r);
	return hr_exit(c);
}

/* ---- the test driver ---- */

enum hr_victim { V_SPSC, V_MPSC_CONS, V_MPSC_PROD };

FIXTURE(hostile_ring) {
	char name[64];
	int dev;
	uint64_t seed;
	struct hr_shared *sh;
};

FIXTURE_SETUP(hostile_ring)
{
	BT_REQUIRE_DEV();
	bt_make_name(self->name, sizeof(self->name), "hr");
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	memset(self->sh, 0, sizeof(*self->sh));
	self->seed = hx_run_seed();
	TH_LOG("seed %llu (BATON_HOSTILE_SEED replays it)",
	       (unsigned long long)self->seed);
}

FIXTURE_TEARDOWN(hostile_ring)
{
	bt_unlink_quiet(self->name);
	if (self->dev >= 0)
		close(self->dev);
	munmap(self->sh, sizeof(*self->sh));
}

/* Create the ring and let go of the creator's role: names keep it alive. */
static int hr_create(int dev, const char *name, uint32_t kind,
		     uint32_t max_producers)
{
	struct baton_ring_create cr;
	int rc;

	bt_create_init(&cr, name, BATON_ROLE_CONSUMER, SLOTS, SLOT_SIZE, 0600);
	cr.kind = kind;
	cr.max_producers = max_producers;
	rc = bt_ioctl(dev, BATON_IOC_RING_CREATE, &cr);
	if (!rc)
		close(cr.out_fd);
	return rc;
}

static pid_t hr_spawn_attacker(const char *name, uint32_t role,
			       struct hr_shared *sh, uint64_t seed)
{
	pid_t pid = fork();

	if (!pid)
		_exit(hr_attacker(name, role, sh, seed));
	return pid;
}

static pid_t hr_spawn_victim(const char *name, enum hr_victim v,
			     uint32_t role, struct hr_shared *sh, int slot,
			     uint64_t seed)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	switch (v) {
	case V_SPSC:
		_exit(hr_victim_spsc(name, role, sh, &sh->c[slot], seed));
	case V_MPSC_CONS:
		_exit(hr_victim_mpsc_cons(name, sh, &sh->c[slot], seed));
	default:
		_exit(hr_victim_mpsc_prod(name, sh, &sh->c[slot], seed));
	}
}

static void hr_log_counts(struct __test_metadata *_metadata,
			  const char *who, const struct hx_counts *c)
{
	TH_LOG("%s: %llu calls: %llu ok, %llu timeout/again, %llu EPROTO, "
	       "%llu EPIPE, %llu other documented, %llu undocumented "
	       "(first: errno %d from %s), %llu hung",
	       who, (unsigned long long)c->calls, (unsigned long long)c->ok,
	       (unsigned long long)c->again, (unsigned long long)c->eproto,
	       (unsigned long long)c->epipe, (unsigned long long)c->other_ok,
	       (unsigned long long)c->bad, c->bad_errno,
	       call_names[c->bad_call], (unsigned long long)c->hung);
}

/*
 * One attack: the attacker in @role, victims as listed, ATTACK_MS of
 * garbage, then AFTER_MS with the garbage left behind by the attacker's
 * exit. Every process must report documented results only, none hung.
 */
static void hr_run(struct __test_metadata *_metadata,
		   FIXTURE_DATA(hostile_ring) *self, uint32_t role,
		   const enum hr_victim *v, const uint32_t *vrole, int nv)
{
	struct hr_shared *sh = self->sh;
	pid_t pids[MAX_PROCS];
	struct baton_ring_open o;
	struct baton_ring_info info;
	int i, rc;

	ASSERT_LT(nv, MAX_PROCS);
	sh->victims = (uint32_t)nv;
	for (i = 0; i < nv; i++) {
		pids[i + 1] = hr_spawn_victim(self->name, v[i], vrole[i], sh,
					      i + 1, self->seed + 1 + i);
		ASSERT_LE(0, pids[i + 1]);
	}
	pids[0] = hr_spawn_attacker(self->name, role, sh, self->seed);
	ASSERT_LE(0, pids[0]);
	for (i = 0; i < 2000 &&
		    __atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) < (uint32_t)nv + 1;
	     i++)
		bt_sleep_ms(5);

	bt_sleep_ms(ATTACK_MS);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	rc = bt_wait_timeout(pids[0], 30000);
	hr_log_counts(_metadata, "attacker", &sh->c[0]);
	TH_LOG("attacker wrote %llu hostile values",
	       (unsigned long long)sh->writes);
	EXPECT_EQ(EX_OK, rc);
	/* An attack that wrote nothing would prove nothing. */
	EXPECT_LT(0U, sh->writes);

	bt_sleep_ms(AFTER_MS);
	__atomic_store_n(&sh->done, 1, __ATOMIC_RELEASE);
	for (i = 1; i <= nv; i++) {
		char who[32];

		rc = bt_wait_timeout(pids[i], 30000);
		snprintf(who, sizeof(who), "victim %d", i);
		hr_log_counts(_metadata, who, &sh->c[i]);
		EXPECT_EQ(EX_OK, rc);
		EXPECT_LT(0U, sh->c[i].calls);
	}

	/*
	 * The garbage is still there: attaching through the library either
	 * works or refuses with EPROTO (indices inconsistent at attach).
	 */
	for (i = 0; i < nv; i++) {
		struct baton_ring *r;

		rc = baton_ring_open(self->name, (int)vrole[i],
				     BATON_BACKEND_KMOD, &r);
		EXPECT_TRUE(rc == 0 || rc == -EPROTO) TH_LOG("open: %d", rc);
		if (!rc)
			baton_ring_close(r);
	}

	/* Everyone is gone: no role may still count as attached. */
	ASSERT_EQ(0, _test_ring_open(self->dev, self->name,
				     BATON_ROLE_CONSUMER, &o));
	ASSERT_EQ(0, _test_info(o.out_fd, &info));
	EXPECT_EQ(0U, info.out_producers);
	EXPECT_EQ(1U, info.out_consumers);
	close(o.out_fd);
}

TEST_F_TIMEOUT(hostile_ring, spsc_producer_scribbles, 120)
{
	const enum hr_victim v[] = { V_SPSC };
	const uint32_t vr[] = { BATON_ROLE_CONSUMER };

	ASSERT_EQ(0, hr_create(self->dev, self->name, BATON_RING_SPSC, 0));
	hr_run(_metadata, self, BATON_ROLE_PRODUCER, v, vr, 1);
}

TEST_F_TIMEOUT(hostile_ring, spsc_consumer_scribbles, 120)
{
	const enum hr_victim v[] = { V_SPSC };
	const uint32_t vr[] = { BATON_ROLE_PRODUCER };

	ASSERT_EQ(0, hr_create(self->dev, self->name, BATON_RING_SPSC, 0));
	hr_run(_metadata, self, BATON_ROLE_CONSUMER, v, vr, 1);
}

TEST_F_TIMEOUT(hostile_ring, mpsc_producer_scribbles, 120)
{
	const enum hr_victim v[] = { V_MPSC_CONS, V_MPSC_PROD };
	const uint32_t vr[] = { BATON_ROLE_CONSUMER, BATON_ROLE_PRODUCER };

	ASSERT_EQ(0, hr_create(self->dev, self->name, BATON_RING_MPSC, 3));
	hr_run(_metadata, self, BATON_ROLE_PRODUCER, v, vr, 2);
}

TEST_F_TIMEOUT(hostile_ring, mpsc_consumer_scribbles, 120)
{
	const enum hr_victim v[] = { V_MPSC_PROD, V_MPSC_PROD };
	const uint32_t vr[] = { BATON_ROLE_PRODUCER, BATON_ROLE_PRODUCER };

	ASSERT_EQ(0, hr_create(self->dev, self->name, BATON_RING_MPSC, 3));
	hr_run(_metadata, self, BATON_ROLE_CONSUMER, v, vr, 2);
}

TEST_HARNESS_MAIN
