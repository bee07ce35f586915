// SPDX-License-Identifier: GPL-2.0
/*
 * hostile_pool: one holder of a pool writes garbage into every word its
 * mappings let it write (the whole control region: every class's head,
 * tail, queue entries and descriptors, every holder's claim page; and the
 * data region), while the module's own paths run over that memory: other
 * holders allocate and free with the library and are killed (release:
 * finish the claim, the reclaim walk, the pending pushes), the decay
 * timer takes and gives back buffers every few milliseconds, and the
 * attacker and the victims ask BATON_POOL_IOC_UNSTICK about random
 * tickets.
 *
 * Owns the pool half of the threat model (Documentation/threat-model.rst,
 * Documentation/pool.rst): a hostile holder may wedge or cheat the other
 * holders of its pool (they share its free queues), but the kernel must
 * neither fault nor hang on what it reads there, and every ioctl must
 * answer with a documented errno. The victims therefore run under
 * alarm(): a library call that spins on a scribbled queue ends in SIGALRM,
 * which is one more release for the kernel to survive. The VM runner
 * fails the run on any BUG, WARNING or Oops (a KASAN kernel checks every
 * access the module makes into pages it owns). After the attack the pool
 * is closed by everyone and freed over its garbage, and a fresh pool must
 * still work, every buffer once. Each test prints its seed;
 * BATON_HOSTILE_SEED=<seed> replays it.
 */
#include "common.h"
#include "helpers/hostile.h"

#include <sys/mman.h>

#define ATTACK_MS	2000
#define VICTIMS		3
#define VICTIM_ALARM_S	1
#define COUNT0		32
#define COUNT1		8

struct hp_shared {
	uint32_t stop;
	uint32_t holding;	/* first victim runs that hold buffers */
	uint32_t attacking;
	uint64_t writes;
	uint64_t unsticks;
	uint64_t victim_runs;
	uint64_t victim_alarms;
};

static struct baton_pool_params hp_params(void)
{
	struct baton_pool_params p;

	memset(&p, 0, sizeof(p));
	p.nr_classes = 2;
	p.decay_ms = 10;
	p.max_holders = 8;
	p.classes[0].buf_shift = 12;
	p.classes[0].count = COUNT0;
	p.classes[1].buf_shift = 16;
	p.classes[1].count = COUNT1;
	return p;
}

/* UNSTICK with random fields: 0, EAGAIN or EINVAL, nothing else. */
static int hp_unstick(int fd, struct hx_rng *r)
{
	struct baton_pool_unstick u;
	int rc;

	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	u.cls = hx_below(r, 4);
	u.ticket = hx_garbage(r, hx_below(r, 256), 64);
	if (!hx_below(r, 8))
		u.flags = 1;
	rc = ioctl(fd, BATON_POOL_IOC_UNSTICK, &u) ? errno : 0;
	if (rc && rc != EAGAIN && rc != EINVAL)
		return rc;
	if (u.flags && rc != EINVAL)
		return -1;
	return 0;
}

/* The attacker's own mappings of the pool it holds. */
struct hp_maps {
	int fd;
	struct baton_pool_hdr geo;
	uint64_t *ctl;
	uint8_t *data;
};

static int hp_map(const char *name, struct hp_maps *m)
{
	struct baton_pool_open op;
	int dev = bt_dev_open();
	void *h;

	if (dev < 0)
		return 1;
	memset(&op, 0, sizeof(op));
	op.size = sizeof(op);
	snprintf(op.name, sizeof(op.name), "%s", name);
	if (bt_ioctl(dev, BATON_IOC_POOL_OPEN, &op))
		return 2;
	close(dev);
	m->fd = op.out_fd;
	h = mmap(NULL, BT_PAGE, PROT_READ, MAP_SHARED, m->fd,
		 BATON_POOL_HDR_MMAP);
	if (h == MAP_FAILED)
		return 3;
	memcpy(&m->geo, h, sizeof(m->geo));
	munmap(h, BT_PAGE);
	m->ctl = mmap(NULL, m->geo.ctl_size, PROT_READ | PROT_WRITE,
		      MAP_SHARED, m->fd, (off_t)m->geo.ctl_mmap);
	m->data = mmap(NULL, m->geo.data_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, m->fd, (off_t)m->geo.data_mmap);
	return m->ctl == MAP_FAILED || m->data == MAP_FAILED ? 4 : 0;
}

/* One scribble: a named word of a class block, a claim word, or any. */
static void hp_scribble(struct hp_maps *m, struct hx_rng *r)
{
	uint64_t words = m->geo.ctl_size / 8, i;
	const struct baton_pool_class_layout *l;

	switch (hx_below(r, 4)) {
	case 0:		/* head or tail of a class */
		l = &m->geo.classes[hx_below(r, m->geo.nr_classes)];
		i = (l->ctl_off + (hx_below(r, 2) ? BATON_POOL_Q_TAIL :
						    BATON_POOL_Q_HEAD)) / 8;
		m->ctl[i] = hx_garbage(r, m->ctl[i], l->qcap);
		break;
	case 1:		/* a queue entry or descriptor word */
		l = &m->geo.classes[hx_below(r, m->geo.nr_classes)];
		i = (l->ctl_off + BATON_POOL_Q_ENTRIES) / 8 +
		    hx_below(r, 2 * (l->qcap + l->count));
		m->ctl[i] = hx_garbage(r, m->ctl[i], l->count);
		break;
	case 2:		/* a word of some holder's claim page */
		i = m->geo.claim_off / 8 +
		    hx_below(r, m->geo.max_holders) * (BT_PAGE / 8) +
		    hx_below(r, sizeof(struct baton_pool_claim) / 8);
		m->ctl[i] = hx_garbage(r, m->ctl[i], BATON_POOL_CLAIM_MAX);
		break;
	default:	/* anywhere in the control region, or the data */
		if (hx_below(r, 4)) {
			i = hx_below(r, (uint32_t)words);
			m->ctl[i] = hx_next(r);
		} else {
			m->data[hx_below(r, (uint32_t)m->geo.data_size)] =
				(uint8_t)hx_next(r);
		}
	}
}

static int hp_attacker(const char *name, struct hp_shared *sh, uint64_t seed)
{
	struct hp_maps m;
	struct hx_rng r;
	int ret = hp_map(name, &m);

	if (ret)
		return 10 + ret;
	hx_seed(&r, seed);
	__atomic_store_n(&sh->attacking, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		uint32_t burst = 1 + hx_below(&r, 64);

		while (burst--) {
			hp_scribble(&m, &r);
			__atomic_fetch_add(&sh->writes, 1, __ATOMIC_RELAXED);
		}
		if (hp_unstick(m.fd, &r))
			return 20;
		__atomic_fetch_add(&sh->unsticks, 1, __ATOMIC_RELAXED);
		/* Calm spells: the victims get buffers to die holding. */
		if (hx_below(&r, 2))
			usleep(200 + hx_below(&r, 3000));
	}
	return 0;
}

/*
 * One victim run: open, allocate, write, free at random, under an alarm;
 * the process ends by exit, SIGALRM or the parent's SIGKILL, and the
 * kernel releases its holder each time. A first run (@sh set) takes its
 * buffers before the attack starts, so that at least those deaths have
 * buffers for the release to walk over the garbage.
 */
static void hp_victim_run(const char *name, uint64_t seed,
			  struct hp_shared *sh)
{
	struct baton_pool *pool;
	uint64_t held[16];
	struct hx_rng r;
	int n = 0, i;

	hx_seed(&r, seed);
	if (baton_pool_open(name, &pool))
		_exit(0);	/* EMFILE, EPROTO: the attacker's right */
	if (sh) {
		while (n < 8 && !baton_pool_alloc(pool, 4096, &held[n]))
			n++;
		__atomic_fetch_add(&sh->holding, 1, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&sh->attacking, __ATOMIC_ACQUIRE))
			usleep(1000);
		usleep(hx_below(&r, 500) * 1000);
	}
	alarm(VICTIM_ALARM_S);
	for (i = 0; i < 2000; i++) {
		if (n < 16 && hx_below(&r, 3)) {
			size_t size = hx_below(&r, 2) ? 4096 : 65536;

			if (!baton_pool_alloc(pool, size, &held[n])) {
				uint8_t *b = baton_pool_ptr(pool, held[n]);

				if (b)
					b[hx_below(&r, 4096)] = 1;
				n++;
			}
		} else if (n) {
			baton_pool_free(pool, held[--n]);
		}
	}
	_exit(0);	/* no close: the release is the kernel's */
}

static void hp_victims(const char *name, struct hp_shared *sh, uint64_t seed)
{
	uint64_t k = 0;

	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		pid_t pid = fork();
		int st;

		if (pid < 0)
			_exit(30);
		if (!pid)
			hp_victim_run(name, seed + k, k ? NULL : sh);
		/* Sometimes killed mid-run: the release sees a live claim. */
		if (k && k % 3 == 0) {
			usleep((useconds_t)(k * 97 % 3000));
			kill(pid, SIGKILL);
		}
		if (waitpid(pid, &st, 0) != pid)
			_exit(31);
		__atomic_fetch_add(&sh->victim_runs, 1, __ATOMIC_RELAXED);
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
			__atomic_fetch_add(&sh->victim_alarms, 1,
					   __ATOMIC_RELAXED);
		k++;
	}
	_exit(0);
}

/* A holder killed holding 4 buffers, before any scribble: 0 or a step. */
static int hp_killed_holder(const char *name)
{
	volatile uint32_t *held = mmap(NULL, BT_PAGE, PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct baton_pool *pool;
	uint64_t h;
	pid_t pid;
	int i;

	if (held == MAP_FAILED)
		return 1;
	pid = fork();
	if (pid < 0)
		return 2;
	if (!pid) {
		if (baton_pool_open(name, &pool))
			_exit(1);
		for (i = 0; i < 4; i++)
			if (baton_pool_alloc(pool, 4096, &h))
				_exit(2);
		__atomic_store_n(held, 1, __ATOMIC_RELEASE);
		pause();
		_exit(3);
	}
	for (i = 0; i < 10000 && !__atomic_load_n(held, __ATOMIC_ACQUIRE); i++)
		bt_sleep_ms(1);
	kill(pid, SIGKILL);
	i = bt_wait_timeout(pid, 10000);
	munmap((void *)held, BT_PAGE);
	return i == 128 + SIGKILL ? 0 : 3;
}

/* After the attack: a fresh pool gives every buffer once. */
static int hp_fresh_pool_works(void)
{
	struct baton_pool_params p = hp_params();
	struct baton_pool *pool;
	uint8_t seen[COUNT0] = { 0 };
	uint64_t h[COUNT0 + 1];
	char name[64];
	int n = 0, ret = 0;

	bt_make_name(name, sizeof(name), "hpok");
	if (baton_pool_create(name, &p, &pool))
		return 1;
	while (n <= COUNT0 && !baton_pool_alloc(pool, 4096, &h[n])) {
		if (seen[BATON_POOL_H_INDEX(h[n]) % COUNT0]++)
			ret = 2;
		n++;
	}
	if (n != COUNT0)
		ret = 3;
	while (n--)
		baton_pool_free(pool, h[n]);
	baton_pool_close(pool);
	baton_pool_unlink(name);
	return ret;
}

FIXTURE(hostile_pool) {
	struct hp_shared *sh;
	char name[64];
};

FIXTURE_SETUP(hostile_pool)
{
	self->sh = mmap(NULL, BT_PAGE, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	bt_make_name(self->name, sizeof(self->name), "hp");
}

FIXTURE_TEARDOWN(hostile_pool)
{
	baton_pool_unlink(self->name);
	munmap(self->sh, BT_PAGE);
}

TEST_F_TIMEOUT(hostile_pool, holder_scribbles_every_writable_word, 120)
{
	struct baton_pool_params p = hp_params();
	uint64_t seed = hx_run_seed();
	struct baton_pool_info info;
	struct baton_pool *owner;
	pid_t attacker, victims[VICTIMS];
	int i;

	BT_REQUIRE_DEV();
	ksft_print_msg("seed %llu\n", (unsigned long long)seed);
	ASSERT_EQ(0, baton_pool_create(self->name, &p, &owner));
	/*
	 * The reclaim counted before the attack: how much the releases find
	 * during it depends on what the attacker has scribbled by then (a
	 * descriptor it rewrote names nobody), so that is reported, not
	 * asserted.
	 */
	ASSERT_EQ(0, hp_killed_holder(self->name));
	ASSERT_EQ(0, baton_pool_info(owner, &info));
	ASSERT_LE(4U, info.reclaimed);
	for (i = 0; i < VICTIMS; i++) {
		victims[i] = fork();
		ASSERT_GE(victims[i], 0);
		if (!victims[i])
			hp_victims(self->name, self->sh, seed * 31 + i * 1000003);
	}
	for (i = 0; i < 10000 && __atomic_load_n(&self->sh->holding,
						 __ATOMIC_ACQUIRE) < VICTIMS; i++)
		bt_sleep_ms(1);
	ASSERT_EQ(VICTIMS, self->sh->holding);
	attacker = fork();
	ASSERT_GE(attacker, 0);
	if (!attacker)
		_exit(hp_attacker(self->name, self->sh, seed));
	bt_sleep_ms(ATTACK_MS);
	__atomic_store_n(&self->sh->stop, 1, __ATOMIC_RELEASE);
	EXPECT_EQ(0, bt_wait_timeout(attacker, 10000));
	for (i = 0; i < VICTIMS; i++)
		EXPECT_EQ(0, bt_wait_timeout(victims[i], 10000));
	/* The owner's view: the header is the kernel's, still readable. */
	ASSERT_EQ(0, baton_pool_info(owner, &info));
	ksft_print_msg("%llu scribbles, %llu unsticks, %llu victim runs (%llu ended by the alarm); kernel: %llu reclaimed, %llu repaired, %llu decayed, %llu bad words\n",
		       (unsigned long long)self->sh->writes,
		       (unsigned long long)self->sh->unsticks,
		       (unsigned long long)self->sh->victim_runs,
		       (unsigned long long)self->sh->victim_alarms,
		       (unsigned long long)info.reclaimed,
		       (unsigned long long)info.repaired,
		       (unsigned long long)info.decayed,
		       (unsigned long long)info.bad_words);
	EXPECT_LT(0U, self->sh->writes);
	EXPECT_LT(0U, self->sh->victim_runs);
	/* Freed over its garbage once the owner goes, then a fresh pool. */
	baton_pool_close(owner);
	ASSERT_EQ(0, baton_pool_unlink(self->name));
	bt_sleep_ms(50);
	EXPECT_EQ(0, hp_fresh_pool_works());
}

TEST_HARNESS_MAIN
