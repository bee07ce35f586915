/* SPDX-License-Identifier: MIT */
/*
 * libbaton internals of buffer pools: the handle (struct baton_pool) that
 * pool.c (the free queues, allocation, handles: both backends) and
 * pool_memfd.c (the memfd backend's file, holder locks, repair of dead
 * holders and decay) share. Nothing here is exported.
 */
#ifndef BATON_POOL_INTERNAL_H
#define BATON_POOL_INTERNAL_H

#include <stdint.h>

#include "internal.h"

#define BATON_POOL_MAG_BYTES	(1u << 20)	/* a magazine's most bytes */

/* A flush moves at most mag_cap + 1 - mag_cap / 2 buffers. */
_Static_assert(BATON_POOL_MAG + 1 <= BATON_POOL_CLAIM_MAX, "claim size");

/* Rings a memfd pool handle watches at once (pool_memfd.c). */
#define BATON__POOL_WATCH_MAX	8

struct baton_pool {
	struct baton_pool_fast f;	/* first: the inline paths' (baton.h) */
	int fd;
	int backend;			/* BATON_BACKEND_KMOD or _MEMFD */
	struct baton_pool_hdr geo;	/* checked copy of the header */
	const struct baton_pool_hdr *hdr;
	uint8_t *ctl;
	uint8_t *data;
	struct baton_pool_claim *claim;
	uint64_t repaired_ms;		/* memfd: last repair, rate limit */
	/*
	 * memfd: buffers a repair made ours (cls << 32 | index), to be
	 * freed by baton__pool_drain() where no claim is under way.
	 */
	uint64_t *adopt;
	uint32_t adopt_n;
	uint32_t adopt_cap;
	/*
	 * memfd: the reap word's value while a reap that stopped holds our
	 * magazines aside on the adopt list (pool.c, set_aside()): they may
	 * be the reaper's to punch, so they wait for the word to change.
	 */
	uint64_t aside_word;
	/*
	 * memfd: the rings this handle sent through, watched so that a
	 * ring nobody can read again gives its SENT buffers back
	 * (pool_memfd.c): a file description of the ring's own (none of
	 * the ring handle's locks) and its id. Under the open lock.
	 */
	struct baton__pool_watch {
		int fd;
		uint64_t id;
	} watch[BATON__POOL_WATCH_MAX];
	uint32_t nr_watch;
	int watch_broken;		/* a watch could not be opened */
	uint64_t watch_next_ms;		/* when to look at them again */
	/*
	 * kmod: the module's decay ends in COLD (BATON_FEAT_POOL_COLD), so
	 * a KERNEL entry is stale and a taker's wait on it may end
	 * (take_entry()); an older module's ends FREE in place.
	 */
	int decay_ends_cold;
	int idle_mags;			/* frees leave IDLE (pool.rst) */
	/*
	 * memfd: what this process's decays saw of each class's IDLE
	 * buffers (pool_memfd.c, idle_reap()): the word, and on how many
	 * ticks in a row. Allocated by the first decay that needs them.
	 */
	uint64_t *idle_seen[BATON_POOL_CLASSES_MAX];
	uint8_t *idle_ticks[BATON_POOL_CLASSES_MAX];
	/* Inherited across fork(): usable for nothing but close (pool.c). */
	int forked;
	/*
	 * Closed: forked too, so every call says EBADF, and kept in the
	 * quarantine of closed handles (ring.c), so a second close is seen.
	 */
	int closed;
	/*
	 * Unique in this process (never 0): a ring handle that has bound
	 * itself to this serial sends without binding again. A new one
	 * (baton__pool_rebind()) makes every ring bind again.
	 */
	uint64_t serial;
	struct baton_pool *next_open;	/* the open handles, for fork() */
	struct baton_pool *prev_open;
};

/* The memfd backend's words in the header page, after the header. */
#define BATON__POOL_MEMFD_WORDS	2048

/* A class's decay hints, after its waiting words (uapi: baton_pool_cold). */
static inline struct baton_pool_cold *
baton__pool_cold_of(const struct baton_pool_cls *c)
{
	return (struct baton_pool_cold *)((uint8_t *)c->head +
					  BATON_POOL_Q_COLD);
}

/* pool.c, for pool_memfd.c */
BATON_HIDDEN uint64_t baton__pool_now_ms(void);
BATON_HIDDEN uint64_t baton__pool_coarse_ms(void);
BATON_HIDDEN void baton__pool_relax(unsigned int *spins);
/*
 * The magic of a memfd pool file of this library's layout ("BPOOL3"; the
 * module's pools say BATON_POOL_MAGIC). The backend keeps no file format
 * across library versions: holders of one file are of one layout, and a
 * file of another is EPROTO both ways, instead of a pool whose holders
 * disagree. "BPOOL2" (2.4 to 2.8) had no reap word, and its repairs left
 * a dead holder's IDLE buffers where they were; before it, the attached
 * word shared the life word's bytes and holders did not take COLD.
 */
#define BATON__POOL_MEMFD_MAGIC	0x334c4f4f5042ULL

BATON_HIDDEN int baton__pool_geometry_valid(const struct baton_pool_hdr *g,
					    uint64_t magic, uint32_t holder);
BATON_HIDDEN int baton__pool_adopt_later(struct baton_pool *p, uint32_t cls,
					  uint32_t index);
BATON_HIDDEN void baton__pool_flush_all(struct baton_pool *p);
BATON_HIDDEN void baton__pool_drain(struct baton_pool *p);
BATON_HIDDEN void baton__pool_wake_parked(struct baton_pool *p, uint32_t cls);

/* pool_memfd.c */
BATON_HIDDEN int baton__pool_memfd_create(struct baton_pool_create *k);
BATON_HIDDEN int baton__pool_memfd_open(const char *name, int *fd,
					uint32_t *holder);
BATON_HIDDEN int baton__pool_memfd_unlink(const char *name);
BATON_HIDDEN int baton__pool_memfd_geometry_ok(int fd,
					       const struct baton_pool_hdr *g);
BATON_HIDDEN int baton__pool_memfd_attach(struct baton_pool *p);
BATON_HIDDEN void baton__pool_memfd_detach(struct baton_pool *p);
BATON_HIDDEN int baton__pool_memfd_unstick(struct baton_pool *p, uint32_t cls,
					   uint64_t t);
BATON_HIDDEN int baton__pool_memfd_repair(struct baton_pool *p);
BATON_HIDDEN void baton__pool_memfd_maintain(struct baton_pool *p, uint64_t now);
BATON_HIDDEN const uint64_t *baton__pool_memfd_reap_word(const struct baton_pool *p);
BATON_HIDDEN void baton__pool_memfd_reap_check(const struct baton_pool *p,
					       uint64_t seen);
BATON_HIDDEN void baton__pool_memfd_forget(struct baton_pool *p);
BATON_HIDDEN uint64_t baton__pool_memfd_watch(struct baton_pool *p,
					      const struct baton_ring *r);
BATON_HIDDEN void baton__pool_rebind(struct baton_pool *p);
BATON_HIDDEN int baton__pool_open_lock(void);
BATON_HIDDEN void baton__pool_open_unlock(int cancel_state);
BATON_HIDDEN void baton__pool_memfd_unwatch_all(struct baton_pool *p);
BATON_HIDDEN void baton__pool_memfd_wake(uint32_t *wakes);
BATON_HIDDEN int baton__pool_memfd_sleep(uint32_t *wakes, uint32_t seen,
					 uint64_t until);

#endif /* BATON_POOL_INTERNAL_H */
