/* SPDX-License-Identifier: MIT */
/*
 * libbaton internals: the backend operations table and the helpers that
 * ring.c shares with the backends and park.c. Nothing here is exported:
 * every symbol is hidden, and libbaton.map keeps the shared object's
 * export list to the public API.
 *
 * A backend knows how to name, create, open and remove a ring and how to
 * park and wake; it hands ring.c a validated layout (struct
 * baton_ring_offsets) and an fd, and ring.c does the mapping, the
 * handle's fast-path state and the teardown, the same way for all.
 */
#ifndef BATON_INTERNAL_H
#define BATON_INTERNAL_H

#include <stdint.h>

#include "baton.h"

#define BATON_HIDDEN __attribute__((visibility("hidden")))

/*
 * The waiting word (prod_waiting, cons_waiting, and on memfd each MPSC
 * producer's own word): BATON_WAIT_PARKED and BATON_WAIT_POLL from
 * <linux/baton.h> in bits 0 and 1, the memfd parker's generation in
 * bits 2..31.
 */
#define BATON__WAIT_GEN_SHIFT	2

/*
 * Handle magics (struct baton_ring.magic, baton_epoch.magic, the
 * waitset's): a live ring's names its kind and role, so the check of
 * kind and role on the out-of-line paths is one compare; close stores
 * BATON__MAGIC_DEAD and hands the memory to baton__quarantine() (ring.c)
 * instead of freeing it, so a later call reads the poison, not freed
 * memory (best effort: BATON_CLOSED_KEPT handles deep).
 */
/* BATON__MAGIC_RING(kind, role): <baton.h>, the inline forms check it. */
#define BATON__MAGIC_EPOCH	0xba7e0c01u
#define BATON__MAGIC_WAITSET	0xba7a5e75u
#define BATON__MAGIC_DEAD	0xdeadba70u

/*
 * The handle check of the out-of-line ring calls that take one kind and
 * role: one compare when all is well, __baton_ring_check() to say which
 * errno otherwise.
 */
static inline int baton__ring_ok(const struct baton_ring *r, uint32_t kind,
				 int role)
{
	if (baton__ring_is(r, kind, role))
		return 0;
	return __baton_ring_check(r, kind, role);
}

/* Poison is stored by the caller; keeps @h unfreed for a while (ring.c). */
BATON_HIDDEN void baton__quarantine(void *h);
/* A name into a struct's name field: EINVAL if empty or too long. */
BATON_HIDDEN int baton__copy_name(char dst[BATON_NAME_MAX], const char *name);

/* Region indices into struct baton_ring.map[]. */
enum {
	BATON_MAP_HDR = 0,
	BATON_MAP_PROD = 1,
	BATON_MAP_CONS = 2,
	BATON_MAP_SLOTS = 3,
};

/* What a backend's create/open learned about a ring. */
struct baton_ring_desc {
	int fd;				/* the ring fd, O_CLOEXEC */
	uint32_t kind;
	uint32_t slot_count;
	uint32_t slot_size;
	uint64_t file_size;		/* memfd: bytes backing the file; kmod: 0 */
	struct baton_ring_offsets off;
	/* MPSC */
	uint32_t max_producers;
	uint64_t claim_off;		/* mmap offset of this producer's claim */
};

struct baton_backend_ops {
	const char *name;
	/* Create the ring and attach with role; fill *d. Negative errno. */
	int (*create)(const char *name, const struct baton_ring_params *p,
		      int role, struct baton_ring_desc *d);
	/* Attach to an existing ring with role; fill *d. Negative errno. */
	int (*open)(const char *name, int role, struct baton_ring_desc *d);
	int (*unlink)(const char *name);
	/*
	 * Sleep while the ring is full (producer) or empty (consumer) as seen
	 * from the caller's own index @expected. @deadline_ns is absolute
	 * CLOCK_MONOTONIC, valid only when @has_deadline.
	 */
	int (*park)(struct baton_ring *r, uint64_t expected, int has_deadline,
		    uint64_t deadline_ns);
	/*
	 * Wake the other role after this side moved its index: 0 when a
	 * wake call was made, 1 when there was nobody left to wake (memfd:
	 * the episode was already taken), or a negative errno.
	 */
	int (*wake)(struct baton_ring *r);
	/*
	 * MPSC (lib/mpsc.c): a producer sleeps while the slot of ticket
	 *  is not free for it, the consumer while ticket 
	 * is unpublished. Wake after publishing (producer) or freeing
	 * (consumer) the slot of ticket .
	 */
	int (*mpsc_park)(struct baton_ring *r, uint64_t expected,
			 int has_deadline, uint64_t deadline_ns);
	int (*mpsc_wake)(struct baton_ring *r, uint64_t idx);	/* as wake */
	int (*version)(uint32_t *abi_version, uint64_t *features);
};

BATON_HIDDEN extern const struct baton_backend_ops baton__kmod_ops;
BATON_HIDDEN extern const struct baton_backend_ops baton__memfd_ops;

/*
 * log.c: why a setup call was refused. A struct baton__what names the
 * call and the object ("baton_ring_create(\"t.x\")") once; a check given
 * a NULL what stays silent (the library's own re-checks of what a
 * backend returned).
 */
struct baton__what {
	const char *call;
	char buf[160];
};

BATON_HIDDEN void baton__log(enum baton_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
BATON_HIDDEN void baton__what(struct baton__what *w, const char *call,
			      const char *name);
/* Log "<what>: <fmt>" (WARN for EINVAL and EPROTO, else INFO); @err. */
BATON_HIDDEN int baton__reject(const struct baton__what *w, int err,
			       const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Log a backend's failure @err at its level (log.c); @err. */
BATON_HIDDEN int baton__fail(const struct baton__what *w, int err);

/* ring.c */
BATON_HIDDEN const struct baton_backend_ops *baton__ops(int backend);
BATON_HIDDEN int baton__name_valid(const char *name);
BATON_HIDDEN int baton__name_check(const struct baton__what *w,
				   const char *name);
BATON_HIDDEN int baton__backend_check(const struct baton__what *w,
				      int backend);
BATON_HIDDEN int baton__dev_ioctl(unsigned long cmd, void *arg);
BATON_HIDDEN int baton__geometry_valid(uint32_t kind, uint32_t slot_count,
				       uint32_t slot_size);
BATON_HIDDEN int baton__geometry_check(const struct baton__what *w,
				       uint32_t kind, uint32_t slot_count,
				       uint32_t slot_size);
BATON_HIDDEN int baton__ring_params_check(const struct baton__what *w,
					  const struct baton_ring_params *p);
BATON_HIDDEN int baton__offsets_valid(const struct baton_ring_offsets *off,
				      uint32_t slot_count, uint32_t slot_size,
				      uint64_t file_size);
/*
 * A full barrier. TSan rejects atomic_thread_fence(); there a seq_cst RMW
 * on a local stands in (a locked instruction, the same barrier on x86).
 */
static inline void baton__full_fence(void)
{
#if defined(__SANITIZE_THREAD__)
	int x = 0;

	__atomic_fetch_add(&x, 0, __ATOMIC_SEQ_CST);
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

BATON_HIDDEN uint64_t baton__now_ns(void);
BATON_HIDDEN int baton__deadline_from(int64_t timeout_ns, uint64_t *deadline);
BATON_HIDDEN int baton__deadline_at(uint64_t now, int64_t timeout_ns,
				    uint64_t *deadline);

/* mpsc.c */
BATON_HIDDEN int baton__mpsc_offsets_valid(const struct baton_ring_offsets *off,
					   uint32_t slot_count,
					   uint32_t max_producers,
					   uint64_t file_size);
BATON_HIDDEN int baton__mpsc_attach(struct baton_ring *r,
				    const struct baton_ring_desc *d, int role);
BATON_HIDDEN void baton__mpsc_unmap(struct baton_ring *r);
/* Where a ticket's slot stands for the producer holding it (EPROTO). */
BATON_HIDDEN int baton__mpsc_peek_wait(struct baton_ring *r, uint64_t *idx,
				      int64_t timeout_ns);
BATON_HIDDEN int baton__mpsc_slot_state(uint64_t seq, uint64_t ticket,
					uint64_t mask);

/* park.c: the adaptive spin budget (policy in its file comment) */
BATON_HIDDEN uint32_t baton__spin_budget(const struct baton_ring *r);
BATON_HIDDEN void baton__spin_learn(struct baton_ring *r, uint32_t polls,
				    uint64_t wait_ns);
BATON_HIDDEN uint32_t baton__spin_next(uint32_t budget, uint32_t limit,
				       uint32_t polls, uint64_t wait_ns);
BATON_HIDDEN uint64_t baton__spin_need(uint64_t wait_ns, uint32_t wake,
				       uint32_t poll);
BATON_HIDDEN uint32_t baton__spin_policy(uint32_t budget, uint32_t limit,
					 uint64_t need);

/* backend_memfd.c: waiting words and deaths, for park.c and waitset.c */
BATON_HIDDEN int baton__memfd_arm(uint32_t *word, uint32_t val);
BATON_HIDDEN void baton__memfd_disarm(uint32_t *word);
BATON_HIDDEN int baton__memfd_peer_gone(struct baton_ring *r);
BATON_HIDDEN int baton__memfd_mpsc_reap(struct baton_ring *r);
BATON_HIDDEN void baton__memfd_producer_attach(struct baton_ring *r);
BATON_HIDDEN int baton__memfd_barrier(void);
/* Before any memfd object is made or opened: -ENODEV without membarrier. */
BATON_HIDDEN int baton__memfd_membarrier_register(void);
BATON_HIDDEN int baton__memfd_membarrier_try(void);
BATON_HIDDEN int baton__shm_reserve(int fd, uint64_t size);
BATON_HIDDEN int baton__shm_link(int fd, const char *path);
BATON_HIDDEN uint32_t *baton__memfd_ws_arm(struct baton_ring *r,
					   uint32_t *val);
BATON_HIDDEN void baton__memfd_ws_disarm(struct baton_ring *r);
/* ... and a ring's file watched by a pool (pool_memfd.c) */
BATON_HIDDEN uint64_t baton__memfd_ring_id(const struct baton_ring *r);
BATON_HIDDEN int baton__memfd_watch_open(const struct baton_ring *r);
BATON_HIDDEN int baton__memfd_watch_readable(int fd);

/* Little-endian: the low half of a u64 sits at its address. */
/* One poll's pause in a spin (park.c, mpsc.c, waitset.c). */
static inline void baton__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/*
 * The longest one spin runs, whatever its budget: the limit is a handle
 * field the caller may set to anything, and only a park looks at the
 * peer's liveness (memfd: its role lock), so a spin of minutes would hide
 * a dead peer for minutes. 10 ms is the memfd backend's promise for
 * seeing a death (Documentation/memfd-backend.rst).
 */
#define BATON__SPIN_NS_MAX	(10ULL * 1000 * 1000)

/*
 * When a spin starting at @now stops at the latest: the call's deadline
 * (if @has) or BATON__SPIN_NS_MAX from @now, whichever is sooner.
 */
static inline uint64_t baton__spin_until_at(uint64_t now, int has,
					    uint64_t deadline)
{
	uint64_t end = now + BATON__SPIN_NS_MAX;

	return has && deadline < end ? deadline : end;
}

static inline uint64_t baton__spin_until(int has, uint64_t deadline)
{
	return baton__spin_until_at(baton__now_ns(), has, deadline);
}

/*
 * A spin's look at the clock, every 64 polls (park.c, mpsc.c,
 * waitset.c): 1 once @until (baton__spin_until()) has passed, so neither
 * a short timeout nor a peer's death is spun past by the whole budget
 * (which may be billions of polls).
 */
static inline int baton__spin_expired(uint32_t polls, uint64_t until)
{
	return !(polls % 64) && baton__now_ns() >= until;
}

/* After a park that found nothing: 1 once the deadline has passed. */
static inline int baton__past(int has, uint64_t deadline)
{
	return has && baton__now_ns() >= deadline;
}

static inline uint32_t *baton__lo32(uint64_t *p)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return (uint32_t *)p + 1;
#else
	return (uint32_t *)p;
#endif
}

/* The caller's own waiting flag and the index it waits on. */
static inline uint32_t *baton__own_waiting(struct baton_ring *r)
{
	return r->role == BATON_ROLE_PRODUCER ? r->prod_waiting :
						r->cons_waiting;
}

#endif /* BATON_INTERNAL_H */
