/* SPDX-License-Identifier: GPL-2.0 */
/*
 * selftests/mpsc_common.h: what the MPSC selftests share on top of
 * common.h: raw MPSC ring creation, library parameters, and the
 * two-word self-checking message (producer << 48 | seq, then a hash).
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

#endif /* BATON_SELFTEST_MPSC_COMMON_H */
