/* SPDX-License-Identifier: GPL-2.0 */
/*
 * selftests/helpers/hostile.h: what the hostile-memory selftests
 * (selftests/hostile_*.c) share: a seeded PRNG, the garbage values an
 * attacker writes into a shared word, the list of words a role can write,
 * and the bounds every call of a victim must meet.
 *
 * Include after common.h. Nothing here knows a protocol: the tests name
 * the words (tail, sequence, announcement ...) and the bound that makes a
 * value "just past" the valid range (slot_count, queue_len), and this
 * file turns them into hostile values: random, 0, ~0, just past the
 * bound, huge jumps, and a moving target (one word rewritten in a burst).
 */
#ifndef BATON_SELFTEST_HOSTILE_H
#define BATON_SELFTEST_HOSTILE_H

#include <stdint.h>
#include <stdlib.h>

/* xorshift64*: small, seedable, good enough to pick garbage. */
struct hx_rng {
	uint64_t s;
};

static inline void hx_seed(struct hx_rng *r, uint64_t seed)
{
	r->s = seed * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
	if (!r->s)
		r->s = 1;
}

static inline uint64_t hx_next(struct hx_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

static inline uint32_t hx_below(struct hx_rng *r, uint32_t n)
{
	return n ? (uint32_t)(hx_next(r) % n) : 0;
}

/*
 * A run's random seed: $BATON_HOSTILE_SEED if set, else from the clock.
 * The tests print it so a failure can be replayed.
 */
static inline uint64_t hx_run_seed(void)
{
	const char *s = getenv("BATON_HOSTILE_SEED");

	if (s && *s)
		return strtoull(s, NULL, 0);
	return (uint64_t)bt_now_ns() ^ ((uint64_t)getpid() << 32);
}

/*
 * A hostile value for a word whose honest value is near @cur and whose
 * valid window is @bound wide (slot_count, queue_len; 0 if none).
 */
static inline uint64_t hx_garbage(struct hx_rng *r, uint64_t cur,
				  uint64_t bound)
{
	switch (hx_below(r, 16)) {
	case 0:		return 0;
	case 1:		return ~0ULL;
	case 2:		return cur + bound + 1;		/* just past */
	case 3:		return cur + bound;		/* at the edge */
	case 4:		return cur - bound - 1;		/* just before */
	case 5:		return cur - 1;
	case 6:		return cur + 1;
	case 7:		return cur + (1ULL << 62);	/* huge jumps */
	case 8:		return cur ^ (1ULL << 63);
	case 9:		return 1ULL << 63;
	case 10:	return bound + 1;
	case 11:	return 1;
	case 12:	return cur + hx_below(r, 4 * (uint32_t)(bound + 1));
	case 13:	return cur - hx_below(r, 4 * (uint32_t)(bound + 1));
	default:	return hx_next(r);		/* random */
	}
}

/* A shared word the attacker's role may write: where, how wide, bound. */
struct hx_word {
	const char *what;
	void *addr;
	unsigned int width;	/* 4 or 8 */
	uint64_t bound;
};

/* A whole writable region: any aligned word in it is fair game too. */
struct hx_region {
	const char *what;
	uint8_t *base;
	size_t len;
};

#define HX_MAX_WORDS	16
#define HX_MAX_REGIONS	4

struct hx_target {
	struct hx_word words[HX_MAX_WORDS];
	unsigned int nwords;
	struct hx_region regions[HX_MAX_REGIONS];
	unsigned int nregions;
	uint64_t writes;
};

static inline void hx_add_word(struct hx_target *t, const char *what,
			       void *addr, unsigned int width, uint64_t bound)
{
	if (t->nwords < HX_MAX_WORDS)
		t->words[t->nwords++] = (struct hx_word){ what, addr, width,
							  bound };
}

static inline void hx_add_region(struct hx_target *t, const char *what,
				 void *base, size_t len)
{
	if (t->nregions < HX_MAX_REGIONS)
		t->regions[t->nregions++] = (struct hx_region){ what, base,
								len };
}

static inline uint64_t hx_load(const struct hx_word *w)
{
	if (w->width == 4)
		return __atomic_load_n((uint32_t *)w->addr, __ATOMIC_RELAXED);
	return __atomic_load_n((uint64_t *)w->addr, __ATOMIC_RELAXED);
}

static inline void hx_store(struct hx_target *t, const struct hx_word *w,
			    uint64_t v)
{
	if (w->width == 4)
		__atomic_store_n((uint32_t *)w->addr, (uint32_t)v,
				 __ATOMIC_RELAXED);
	else
		__atomic_store_n((uint64_t *)w->addr, v, __ATOMIC_RELEASE);
	t->writes++;
}

/*
 * One round of scribbling: mostly a protocol word, sometimes any word of
 * a writable region, sometimes a moving target (one word rewritten many
 * times with a value that keeps changing, as a racing writer would).
 */
static inline void hx_scribble(struct hx_target *t, struct hx_rng *r)
{
	uint32_t mode = hx_below(r, 10);
	const struct hx_word *w;
	unsigned int i;

	if (mode < 6 && t->nwords) {
		w = &t->words[hx_below(r, t->nwords)];
		hx_store(t, w, hx_garbage(r, hx_load(w), w->bound));
	} else if (mode < 8 && t->nregions) {
		const struct hx_region *reg = &t->regions[hx_below(r,
							t->nregions)];
		struct hx_word any = { reg->what, NULL, 8, 0 };

		any.addr = reg->base + 8 * hx_below(r, (uint32_t)(reg->len / 8));
		hx_store(t, &any, hx_garbage(r, hx_load(&any), 0));
	} else if (t->nwords) {
		uint64_t v;

		w = &t->words[hx_below(r, t->nwords)];
		v = hx_garbage(r, hx_load(w), w->bound);
		for (i = 0; i < 1000; i++)
			hx_store(t, w, v + i);
	}
}

/*
 * Victim calls: each is timed; one that takes longer than its own
 * timeout plus this much has hung (a bound for a hang on a loaded
 * two-CPU TCG VM, not a performance figure).
 */
#define HX_HANG_NS	(10 * BT_NSEC)

/* Outcome counters of one process, shared with the test for its log. */
struct hx_counts {
	uint64_t calls;
	uint64_t ok;
	uint64_t again;		/* EAGAIN / ETIMEDOUT / nothing to do */
	uint64_t eproto;
	uint64_t epipe;
	uint64_t other_ok;	/* other documented errnos (EINTR, ENOSPC ..) */
	uint64_t bad;		/* undocumented results: the test fails */
	uint64_t hung;		/* calls beyond their timeout + HX_HANG_NS */
	int bad_errno;		/* the first undocumented one */
	int bad_call;		/* and which call saw it */
};

/* Count errno @e (positive, 0 for success) of call @call, allowed or not. */
static inline void hx_count(struct hx_counts *c, int call, int e,
			    const int *allowed, unsigned int nallowed)
{
	unsigned int i;

	c->calls++;
	if (!e) {
		c->ok++;
		return;
	}
	for (i = 0; i < nallowed; i++)
		if (allowed[i] == e)
			break;
	if (i == nallowed) {
		c->bad++;
		if (!c->bad_errno) {
			c->bad_errno = e;
			c->bad_call = call;
		}
		return;
	}
	if (e == EAGAIN || e == ETIMEDOUT)
		c->again++;
	else if (e == EPROTO)
		c->eproto++;
	else if (e == EPIPE)
		c->epipe++;
	else
		c->other_ok++;
}

#define HX_COUNT(c, call, e, ...) do {					\
	static const int __allowed[] = { __VA_ARGS__ };			\
	hx_count(c, call, e, __allowed,					\
		 sizeof(__allowed) / sizeof(__allowed[0]));		\
} while (0)

/* A blocking call that must come back within its own timeout + slack. */
static inline void hx_timed(struct hx_counts *c, int64_t t0,
			    int64_t timeout_ns)
{
	if (bt_now_ns() - t0 > timeout_ns + HX_HANG_NS)
		c->hung++;
}

#endif /* BATON_SELFTEST_HOSTILE_H */
