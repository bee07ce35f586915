/* SPDX-License-Identifier: GPL-2.0 */
/*
 * selftests/mpsc_common.h: what the MPSC selftests share on top of
 * common.h: raw MPSC ring creation, library parameters, the two-word
 * self-checking message (producer << 48 | seq, then a hash), and a raw
 * MPSC client written only from uapi/ and Documentation/ (struct mp_raw):
 * the protocol's steps one at a time, so a test can stop, or be killed,
 * between any two of them.
 */
#ifndef BATON_SELFTEST_MPSC_COMMON_H
#define BATON_SELFTEST_MPSC_COMMON_H

#include "common.h"

#include <sched.h>

#define MP_MSG		16	/* slot size of the tests' rings */

static inline int _mp_create(int dev, const char *name, uint32_t role,
			     uint32_t slots, uint32_t maxp,
			     struct baton_ring_create *out)
{
	struct baton_ring_create c;
	int rc;

	bt_create_init(&c, name, role, slots, MP_MSG, 0600);
	c.kind = BATON_RING_MPSC;
	c.max_producers = maxp;
	rc = bt_ioctl(dev, BATON_IOC_RING_CREATE, &c);
	if (out)
		*out = c;
	else if (!rc)
		close(c.out_fd);
	return rc;
}

static inline struct baton_ring_params mp_params(uint32_t slots,
						 uint32_t maxp)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_MPSC,
		.slot_count = slots,
		.slot_size = MP_MSG,
		.mode = 0600,
		.backend = BATON_BACKEND_KMOD,
		.max_producers = maxp,
	};
	return p;
}

static inline void mp_msg(uint64_t m[2], uint32_t prod, uint64_t seq)
{
	m[0] = (uint64_t)prod << 48 | seq;
	m[1] = bt_mix(m[0]);
}

static inline uint32_t mp_prod(const uint64_t m[2])
{
	return (uint32_t)(m[0] >> 48);
}

static inline uint64_t mp_seq(const uint64_t m[2])
{
	return m[0] & ((1ULL << 48) - 1);
}

static inline bool mp_ok(const uint64_t m[2])
{
	return m[1] == bt_mix(m[0]);
}

static inline const struct baton_mpsc_hdr *
mp_hdr(const struct baton_ring *r)
{
	return (const struct baton_mpsc_hdr *)((const uint8_t *)r->hdr +
					       r->mpsc_hdr);
}

/* ---- the raw client: uapi/linux/baton.h and mpsc.rst, no library ---- */

struct mp_raw {
	int fd;
	uint32_t role;
	uint32_t slots;
	uint32_t slot_size;
	uint64_t pos;			/* consumer: the next ticket */
	struct baton_ring_offsets off;
	void *map[6];			/* hdr, prod, cons, slots, seq, claim */
	size_t len[6];
	volatile uint64_t *tail;	/* prod region + off.prod_tail */
	volatile uint64_t *head;	/* cons region + off.cons_head */
	volatile uint32_t *prod_waiting;	/* prod + off.prod_waiting */
	volatile uint32_t *cons_waiting;	/* cons + off.cons_waiting */
	volatile uint64_t *seq;		/* seq region: slot j's word at 8 * j */
	uint8_t *slot;			/* slot region */
	struct baton_mpsc_claim *claim;	/* producer: its own claim page */
	const struct baton_mpsc_hdr *mh;	/* hdr region + off.mpsc_hdr */
};

static inline void *mp_raw_map1(struct mp_raw *r, int i, uint64_t off,
				size_t len, bool rw)
{
	void *p = mmap(NULL, len, rw ? PROT_READ | PROT_WRITE : PROT_READ,
		       MAP_SHARED, r->fd, (off_t)off);

	if (p == MAP_FAILED)
		return NULL;
	r->map[i] = p;
	r->len[i] = len;
	return p;
}

static inline void mp_raw_unmap(struct mp_raw *r)
{
	int i;

	for (i = 0; i < 6; i++)
		if (r->map[i])
			munmap(r->map[i], r->len[i]);
	if (r->fd >= 0)
		close(r->fd);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

/* Map what @role may map, with the protections the uapi table gives it. */
static inline int mp_raw_map(struct mp_raw *r, int fd, uint32_t role,
			     uint32_t slots, uint32_t slot_size,
			     const struct baton_ring_offsets *off)
{
	bool prod = role == BATON_ROLE_PRODUCER;
	uint8_t *hdr, *pr, *cons;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->role = role;
	r->slots = slots;
	r->slot_size = slot_size;
	r->off = *off;
	hdr = mp_raw_map1(r, 0, off->hdr_mmap, off->hdr_size, false);
	pr = mp_raw_map1(r, 1, off->prod_mmap, off->prod_size, prod);
	cons = mp_raw_map1(r, 2, off->cons_mmap, off->cons_size, !prod);
	r->slot = mp_raw_map1(r, 3, off->slots_mmap, off->slots_size, prod);
	r->seq = mp_raw_map1(r, 4, off->seq_mmap, off->seq_size, true);
	if (prod)
		r->claim = mp_raw_map1(r, 5, off->claim_mmap,
				       off->claim_size, true);
	if (!hdr || !pr || !cons || !r->slot || !r->seq ||
	    (prod && !r->claim)) {
		mp_raw_unmap(r);
		return -1;
	}
	r->tail = (volatile uint64_t *)(pr + off->prod_tail);
	r->head = (volatile uint64_t *)(cons + off->cons_head);
	r->prod_waiting = (volatile uint32_t *)(pr + off->prod_waiting);
	r->cons_waiting = (volatile uint32_t *)(cons + off->cons_waiting);
	r->mh = (const struct baton_mpsc_hdr *)(hdr + off->mpsc_hdr);
	return 0;
}

/* BATON_IOC_RING_OPEN and the maps: 0, or the errno. */
static inline int mp_raw_open(const char *name, uint32_t role,
			      struct mp_raw *r)
{
	struct baton_ring_open o;
	int dev = bt_dev_open(), rc;

	if (dev < 0)
		return errno;
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.role = role;
	snprintf(o.name, sizeof(o.name), "%s", name);
	rc = bt_ioctl(dev, BATON_IOC_RING_OPEN, &o);
	close(dev);
	if (rc)
		return rc;
	if (mp_raw_map(r, o.out_fd, role, o.out_slot_count, o.out_slot_size,
		       &o.out_off))
		return EFAULT;
	return 0;
}

static inline volatile uint64_t *mp_raw_seq(struct mp_raw *r, uint64_t t)
{
	return &r->seq[t & (r->slots - 1)];
}

static inline uint64_t *mp_raw_slot(struct mp_raw *r, uint64_t t)
{
	return (uint64_t *)(r->slot + (t & (r->slots - 1)) * r->slot_size);
}

/* Producer step 1: a tail value read before the fetch_add is the floor. */
static inline uint64_t mp_raw_floor(struct mp_raw *r)
{
	uint64_t f = __atomic_load_n(r->tail, __ATOMIC_RELAXED);

	__atomic_store_n(&r->claim->floor, f, __ATOMIC_RELAXED);
	return f;
}

/* Step 2 (I): the one locked instruction. */
static inline uint64_t mp_raw_take(struct mp_raw *r, uint64_t n)
{
	return __atomic_fetch_add(r->tail, n, __ATOMIC_ACQ_REL);
}

/* Step 3 (J): first, then count. */
static inline void mp_raw_claim(struct mp_raw *r, uint64_t t, uint64_t n)
{
	__atomic_store_n(&r->claim->first, t, __ATOMIC_RELEASE);
	__atomic_store_n(&r->claim->count, n, __ATOMIC_RELEASE);
}

/* Step 4 once the slot is free (N): the message, then seq = t + 1 (K). */
static inline void mp_raw_fill(struct mp_raw *r, uint64_t t,
			       const uint64_t m[2])
{
	memcpy(mp_raw_slot(r, t), m, 2 * sizeof(uint64_t));
	__atomic_store_n(mp_raw_seq(r, t), t + 1, __ATOMIC_RELEASE);
	if (*r->cons_waiting)	/* E */
		_test_wake(r->fd);
}

/* Polls before a raw wait parks, yielding the CPU between them. */
#define MP_RAW_SPINS	32

/* Step 4's wait (N): 0 once seq[t] == t, else the park's errno. */
static inline int mp_raw_wait_free(struct mp_raw *r, uint64_t t,
				   int64_t deadline_ns)
{
	int rc, spins = 0;

	while (__atomic_load_n(mp_raw_seq(r, t), __ATOMIC_ACQUIRE) != t) {
		if (spins++ < MP_RAW_SPINS) {
			sched_yield();
			continue;
		}
		rc = _test_park(r->fd, BATON_PARK_DEADLINE, t, deadline_ns);
		if (rc)
			return rc;
	}
	return 0;
}

/* Step 5 (J): count, then floor. */
static inline void mp_raw_done(struct mp_raw *r)
{
	__atomic_store_n(&r->claim->count, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&r->claim->floor, BATON_MPSC_NONE, __ATOMIC_RELEASE);
}

#define MP_RAW_MSG	1	/* mp_raw_pop(): a message */
#define MP_RAW_TOMB	2	/* mp_raw_pop(): a tombstone */

/*
 * The consumer at r->pos: MP_RAW_MSG with the message's two words in @w,
 * MP_RAW_TOMB with w[0] the pid the kernel wrote, or the park's errno
 * (negated). The slot is freed (M) and the head stored (C) either way.
 */
static inline int mp_raw_pop(struct mp_raw *r, int64_t deadline_ns,
			     uint64_t w[2])
{
	uint64_t c = r->pos, s;
	int rc, kind, spins = 0;

	for (;;) {
		s = __atomic_load_n(mp_raw_seq(r, c), __ATOMIC_ACQUIRE); /* L */
		if (s == c + 1) {
			kind = MP_RAW_MSG;
			break;
		}
		if (s == ((c + 1) | BATON_MPSC_TOMB)) {
			kind = MP_RAW_TOMB;
			break;
		}
		if (s != c)
			return -EPROTO;
		if (spins++ < MP_RAW_SPINS) {
			sched_yield();
			continue;
		}
		rc = _test_park(r->fd, BATON_PARK_DEADLINE, c, deadline_ns);
		if (rc)
			return -rc;
	}
	memcpy(w, mp_raw_slot(r, c), 2 * sizeof(uint64_t));
	/* M, then C */
	__atomic_store_n(mp_raw_seq(r, c), c + r->slots, __ATOMIC_RELEASE);
	r->pos = c + 1;
	__atomic_store_n(r->head, c + 1, __ATOMIC_RELEASE);
	if (*r->prod_waiting)	/* E */
		_test_wake(r->fd);
	return kind;
}

#endif /* BATON_SELFTEST_MPSC_COMMON_H */
