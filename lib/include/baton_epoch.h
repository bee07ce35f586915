/* SPDX-License-Identifier: MIT */
/*
 * libbaton: epoch domains, a quiescence service shared by processes
 * (Documentation/epoch.rst). Included from <baton.h>; do not include it
 * alone.
 *
 * Readers bracket a snapshot with baton_epoch_enter() / _exit(): one
 * announcement for the whole snapshot, whatever it protects, with no
 * locked instruction, no fence and no syscall (unless a destroyer is
 * parked, see _exit). Writers unlink an object, then either
 * baton_epoch_destroy_sync() (retire and park until no participant can
 * hold it; then tear it down on their own thread) or baton_epoch_retire()
 * plus baton_epoch_poll() / _synchronize() later.
 *
 * One handle is one domain fd. After baton_epoch_register() it is also a
 * participant with its own announcement and retirement queue; a
 * participant handle is single-threaded (one thread enters, exits and
 * retires at a time). Barrier letters are those of <linux/baton.h>.
 */
#ifndef BATON_EPOCH_H
#define BATON_EPOCH_H

#ifndef BATON_H
#error "include <baton.h>, which includes this file"
#endif

#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * struct baton_epoch - one process's handle on one epoch domain
 *
 * Public only so enter and exit can be inline; treat it as private.
 */
struct baton_epoch {
	/* private: */
	/* fast path */
	const uint64_t *global;		/* hdr->global, shared */
	const uint64_t *sync_epoch;	/* hdr->sync_epoch, shared */
	uint64_t *ann;			/* own announcement, shared */

	/* retirement queue (participant only) */
	uint64_t *q_tail;		/* we write */
	const uint64_t *q_head;		/* the collector writes */
	struct baton_epoch_entry *q_entries;
	uint64_t q_local;		/* our tail */
	uint64_t q_cached_head;
	uint32_t queue_len;
	int32_t index;			/* participant index, -1 if none */

	/* slow path */
	const struct baton_epoch_hdr *hdr;
	int fd;
	int backend;
	uint32_t max_participants;
	uint32_t magic;			/* live, or the poison (lib/epoch.c) */
	uint64_t kick_calls;		/* kick syscalls this handle made */
	struct baton_epoch_offsets off;
	struct {
		void *addr;
		size_t len;
	} map[2];			/* kmod: hdr, self; memfd: the file */
	char name[BATON_NAME_MAX];
	/*
	 * Since 2.10.3 (the library allocates handles, so the struct may
	 * grow at its end): kmod, the index REGISTER gave a handle whose
	 * region could not be mapped then (the module has no unregister:
	 * the next register maps it); -1 if none.
	 */
	int32_t unmapped_index;
};

/**
 * struct baton_epoch_params - a new domain
 * @max_participants: 1..BATON_EPOCH_PARTICIPANTS_MAX
 * @queue_len: retirement queue entries per participant, power of two
 * @mode: permission bits, e.g. 0600
 * @backend: enum baton_backend
 */
struct baton_epoch_params {
	uint32_t max_participants;
	uint32_t queue_len;
	uint32_t mode;
	int backend;
};

/**
 * struct baton_epoch_stats - the header's counters, sampled
 * @global: the global epoch; starts at 1
 * @frontier: everything retired at an epoch <= @frontier is unreachable
 * @collections: collection cycles run
 * @sync_waits: synchronize calls that one cycle did not satisfy
 * @sync_timeouts: synchronize calls that returned -ETIMEDOUT
 * @kicks: kick calls (a reader's exit waking parked synchronizers)
 * @participants: participants registered now
 * @participant_releases: participant handles released (closed or died)
 * @completed: retirement entries proven and consumed
 * @orphaned: pending entries of released participants, taken over
 * @orphans_completed: of those, proven and consumed
 * @bad_words: corrupt announcement or queue words seen (each treated
 *             conservatively: it never lets anything go early)
 * @kick_calls: kick syscalls made by this handle
 *
 * All but @kick_calls are the fields of struct baton_epoch_hdr of the same
 * names (Documentation/epoch.rst).
 */
struct baton_epoch_stats {
	uint64_t global;
	uint64_t frontier;
	uint64_t collections;
	uint64_t sync_waits;
	uint64_t sync_timeouts;
	uint64_t kicks;
	uint64_t participants;
	uint64_t participant_releases;
	uint64_t completed;
	uint64_t orphaned;
	uint64_t orphans_completed;
	uint64_t bad_words;
	uint64_t kick_calls;		/* this handle's */
};

/* Setup and teardown (lib/epoch.c). */

/**
 * baton_epoch_create() - create a named epoch domain
 * @name: as for a ring; domains have their own names, so a ring and a
 *        domain may share one
 * @p: participants, queue length, mode, backend (struct
 *     baton_epoch_params)
 * @out: the new handle, not yet a participant (baton_epoch_register())
 *
 * Return: 0, or -EINVAL, -EEXIST, -EDQUOT (kmod), -ENOSPC (memfd),
 * -ENODEV, -ENOMEM.
 */
int baton_epoch_create(const char *name, const struct baton_epoch_params *p,
		       struct baton_epoch **out);

/**
 * baton_epoch_open() - open an existing domain by name
 * @name: the domain
 * @backend: enum baton_backend
 * @out: the new handle, not yet a participant
 *
 * Needs both read and write permission: any opener may register, and an
 * announcement holds back everyone's reclamation.
 *
 * Return: 0, or -ENOENT, -EACCES, -EINVAL, -ENODEV, -EPROTO, -ENOMEM.
 */
int baton_epoch_open(const char *name, int backend, struct baton_epoch **out);

/**
 * baton_epoch_open_or_create() - open @name, or create it from @p if absent
 * @name: the domain
 * @p: the parameters to create with, and to expect of an existing domain
 * @out: the new handle, not yet a participant
 * @created: if not NULL, set to 1 when this call created the domain, else 0
 *
 * Safe when several processes call it at once: exactly one creates, the
 * others open what it created. The backend is @p->backend.
 *
 * Return: 0, or a negative errno as baton_epoch_create() and
 * baton_epoch_open(); -EEXIST when a domain of that name exists with
 * another max_participants or queue_len (the log says which).
 */
int baton_epoch_open_or_create(const char *name,
			       const struct baton_epoch_params *p,
			       struct baton_epoch **out, int *created);

/**
 * baton_epoch_open_timeout() - open @name, waiting for it to be created
 * @name: the domain
 * @backend: enum baton_backend
 * @timeout_ns: how long to wait for the name; 0: do not wait;
 *              negative: no limit
 * @out: the new handle, not yet a participant
 *
 * As baton_ring_open_timeout(): kmod sleeps in BATON_IOC_NAME_WAIT,
 * memfd watches /dev/shm with inotify; only a missing name is waited for.
 *
 * Return: 0, -ETIMEDOUT, -EINTR, or a negative errno as baton_epoch_open().
 */
int baton_epoch_open_timeout(const char *name, int backend,
			     int64_t timeout_ns, struct baton_epoch **out);

/**
 * baton_epoch_close() - unmap and close a handle
 * @d: the handle; poisoned, then freed (see BATON_CLOSED_KEPT); NULL does
 *     nothing and returns -EINVAL
 *
 * A participant's registration ends with it (process death does the
 * same); what it retired and was not yet proven is taken over by the
 * collector.
 *
 * Return: 0, -EINVAL for NULL, or -EBADF for a handle already closed (best
 * effort, as for baton_ring_close()).
 */
int baton_epoch_close(struct baton_epoch *d);

/**
 * baton_epoch_unlink() - remove a domain's name
 * @name: the domain
 * @backend: enum baton_backend
 *
 * Open handles keep the domain until they close.
 *
 * Return: 0, or -ENOENT, -EACCES (only the owner may), -EINVAL, -ENODEV.
 */
int baton_epoch_unlink(const char *name, int backend);

/**
 * baton_epoch_fd() - the handle's file descriptor
 * @d: the handle
 *
 * Return: the fd, or -EINVAL (NULL), -EBADF (not a live epoch handle).
 */
int baton_epoch_fd(const struct baton_epoch *d);

/**
 * baton_epoch_stats() - sample a domain's counters
 * @d: the handle
 * @st: filled in (struct baton_epoch_stats)
 *
 * Return: 0, or -EINVAL (NULL), -EBADF (not a live epoch handle).
 */
int baton_epoch_stats(const struct baton_epoch *d,
		      struct baton_epoch_stats *st);

/**
 * baton_epoch_register() - become a participant
 * @d: the handle
 *
 * A participant has its own announcement (baton_epoch_enter()) and
 * retirement queue (baton_epoch_retire()), and is single-threaded.
 *
 * Return: 0 (the index is then baton_epoch_index()), or -EBUSY (already
 * registered), -ENOSPC (max_participants reached), -EBADF, -EINVAL.
 */
int baton_epoch_register(struct baton_epoch *d);

/**
 * baton_epoch_index() - a registered handle's participant index
 * @d: the handle
 *
 * A query, not a status: the slot baton_epoch_register() took, as
 * batonctl and the stats name it.
 *
 * Return: the participant index (>= 0), or -1 if not registered.
 */
static inline int baton_epoch_index(const struct baton_epoch *d)
{
	return d->index;
}

/*
 * The handle check every out-of-line epoch call makes: 0, -EBADF (not a
 * live epoch handle), -EINVAL (NULL; or @participant and the handle is
 * not registered). Exported for the BATON_DEBUG checks of enter and exit.
 */
int __baton_epoch_check(const struct baton_epoch *d, int participant);

/**
 * baton_epoch_retire() - queue an unlinked object for reclamation
 * @d: a participant handle
 * @handle: names the object, for the caller (an index, an offset)
 * @tag: anything the caller wants back with it
 * @epoch: may be NULL; set to the epoch it was retired at, for
 *         baton_epoch_poll() and baton_epoch_synchronize()
 *
 * Queue {handle, epoch, tag} after the caller has unlinked the object, so
 * that no new reader can reach it.
 *
 * Return: 0, or -ENOSPC when the queue is full: nothing is ever freed
 * early, ownership stays with the caller (collect or synchronize, then
 * retry); -EINVAL (not a participant), -EBADF, -EPROTO.
 */
int baton_epoch_retire(struct baton_epoch *d, uint64_t handle, uint64_t tag,
		       uint64_t *epoch);

/**
 * baton_epoch_synchronize() - wait until an epoch is quiescent
 * @d: the handle
 * @epoch: an epoch baton_epoch_retire() returned
 * @timeout_ns: how long at most; < 0 waits forever
 * @holder: may be NULL; on -ETIMEDOUT, the pid holding the oldest epoch
 *          (memfd: the pid it registered with)
 *
 * Parks until nothing retired at @epoch or earlier can be held by any
 * participant.
 *
 * Return: 0, or -ETIMEDOUT, -EINTR, -EINVAL (@epoch in the future).
 */
int baton_epoch_synchronize(struct baton_epoch *d, uint64_t epoch,
			    int64_t timeout_ns, pid_t *holder);

/**
 * baton_epoch_destroy_sync() - retire, then wait until no reader can hold
 * the object
 * @d: a participant handle
 * @handle: as for baton_epoch_retire()
 * @tag: as for baton_epoch_retire()
 * @timeout_ns: how long at most; < 0 waits forever
 * @holder: as for baton_epoch_synchronize()
 *
 * On 0 the object is the caller's again: free or reuse it.
 *
 * Return: 0, or an error of baton_epoch_retire() or
 * baton_epoch_synchronize().
 */
int baton_epoch_destroy_sync(struct baton_epoch *d, uint64_t handle,
			     uint64_t tag, int64_t timeout_ns, pid_t *holder);

/**
 * baton_epoch_poll() - whether an epoch is quiescent yet
 * @d: the handle
 * @epoch: an epoch baton_epoch_retire() returned
 *
 * Never blocks; may run a collection cycle.
 *
 * Return: 0 if @epoch is quiescent, -EAGAIN if not yet, -EINVAL (@epoch
 * in the future).
 */
int baton_epoch_poll(struct baton_epoch *d, uint64_t epoch);

/**
 * baton_epoch_collect() - run one collection cycle now
 * @d: the handle
 * @frontier: may be NULL; set to the frontier proved
 * @completed: may be NULL; set to the entries consumed
 *
 * Return: 0, or a negative errno.
 */
int baton_epoch_collect(struct baton_epoch *d, uint64_t *frontier,
			uint64_t *completed);

/* Out of line so exit stays small: wake parked destroyers (no report). */
void __baton_epoch_kick(struct baton_epoch *d);

/* Out of line, the rare retry of enter: see baton_epoch_enter(). */
uint64_t __baton_epoch_reenter(struct baton_epoch *d, uint64_t stale);

/**
 * baton_epoch_global() - the global epoch now
 * @d: the handle
 *
 * Return: a relaxed sample of the global epoch.
 */
static inline uint64_t baton_epoch_global(const struct baton_epoch *d)
{
	return __atomic_load_n(d->global, __ATOMIC_RELAXED);
}

/**
 * baton_epoch_enter() - enter a read section
 * @d: a participant handle
 *
 * Announce the epoch, then re-check it. No locked
 * instruction and no fence: the StoreLoad ordering between the
 * announcement and the re-check is supplied by the collector, which
 * forces a full barrier on every participant's CPU after publishing a new
 * epoch and before scanning (Q). Sections do not nest; the handle must be
 * registered. Built with -DBATON_DEBUG, a handle that is not a registered
 * participant returns a negative errno cast to uint64_t (test with
 * (int64_t)e < 0) and announces nothing.
 *
 * Return: the epoch announced (>= 1): a query's answer, not a status.
 */
static inline uint64_t baton_epoch_enter(struct baton_epoch *d)
{
	uint64_t e;

#ifdef BATON_DEBUG
	int err = __baton_epoch_check(d, 1);

	if (err)
		return (uint64_t)(int64_t)err;
#endif
	e = __atomic_load_n(d->global, __ATOMIC_RELAXED);

	/* O, matches Q: a plain store; the collector pays. */
	__atomic_store_n(d->ann, BATON_EPOCH_ANN(e), __ATOMIC_RELAXED);
	/* Compiler-only: the store stays before the re-check. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* Acquire: protected loads stay after the re-check. */
	if (__builtin_expect(__atomic_load_n(d->global, __ATOMIC_ACQUIRE) == e,
			     1))
		return e;
	/*
	 * A cycle published a new epoch meanwhile: announce again. The
	 * word held @e for a while, maybe seen by a scan that a parked
	 * synchronizer is now sleeping on, so overwriting it is an exit of
	 * @e and may owe that synchronizer a kick.
	 */
	return __baton_epoch_reenter(d, e);
}

/**
 * baton_epoch_exit() - leave the read section
 * @d: a participant handle
 *
 * One release store, a syscall only if it can help: when a parked
 * synchronizer waits on the epoch this section announced, or a later one.
 */
static inline void baton_epoch_exit(struct baton_epoch *d)
{
	uint64_t held;

#ifdef BATON_DEBUG
	/* Nothing to report through a void: a misused exit does nothing. */
	if (__baton_epoch_check(d, 1))
		return;
#endif
	/* Our own word (only we write it): the epoch we announced. */
	held = __atomic_load_n(d->ann, __ATOMIC_RELAXED) >> 1;

	/* S: the protected reads are done before the announcement drops. */
	__atomic_store_n(d->ann, 0, __ATOMIC_RELEASE);
	/*
	 * T, matches V: store then load without a fence. A synchronizer
	 * raised sync_epoch to its epoch before its cycles' IPIs (Q): if
	 * this load misses the raise, it ran before the next IPI, whose
	 * barrier then drained the store above, and that cycle's scan sees
	 * us gone. If it sees the raise and we announced above it, we hold
	 * nothing that synchronizer waits for: a busy reader that entered
	 * after it parked never kicks. C11 would let the compiler hoist
	 * this relaxed load above the store; the signal fence (no
	 * instruction) forbids that. The CPU may still satisfy the load
	 * while the store waits in its store buffer: the case Q drains.
	 */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (held <= __atomic_load_n(d->sync_epoch, __ATOMIC_RELAXED))
		__baton_epoch_kick(d);
}

#ifdef __cplusplus
}
#endif

#endif /* BATON_EPOCH_H */
