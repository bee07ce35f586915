/* SPDX-License-Identifier: MIT */
/*
 * libbaton: the public API.
 *
 * Setup, parking and everything else that makes a syscall is out of line in
 * the lib/ sources. The SPSC fast path is inline here and makes no syscall and uses
 * no locked instruction and no fence: plain loads and stores, with acquire
 * and release ordering, which x86 gives for free. Every ordering below is
 * tagged with its letter in the barrier-pair table of <linux/baton.h>
 * (Documentation/memory-ordering.rst).
 *
 * Names go object, role, step: baton_spsc_prod_reserve/submit for the
 * producer, baton_spsc_cons_peek/release for the consumer. A __ prefix
 * marks a symbol exported only because an inline function calls it.
 *
 * The return convention, for every function here and in <baton_epoch.h>:
 *   - a single operation returns 0 on success or a negative errno
 *     (push, pop, create, open, close, register, retire, poll, ...);
 *   - a batch returns the non-negative count it moved or a negative errno
 *     (the _bulk and _batch forms, the _wait forms of reserve and peek,
 *     baton_waitset_wait());
 *   - the few that answer a question return the answer and cannot fail
 *     on a live handle: a descriptor (baton_ring_fd(), baton_epoch_fd(),
 *     -EBADF on a bad handle), a name, a boolean (baton_ring_peer_gone()),
 *     a count of free or filled slots (the reserve/peek steps), a ticket
 *     or an epoch (baton_epoch_enter()); each says so in its comment.
 * A test for failure is therefore always `ret < 0`, never `ret != 1`.
 *
 * Misuse returns an error, not a crash. Every out-of-line function checks
 * the handle it is given: -EBADF when it is not a live handle of the kind
 * the call takes (closed, or an SPSC ring passed to an MPSC call, or the
 * reverse), -EINVAL when it is the wrong role (a pop on a producer handle)
 * or NULL. Close poisons the handle and keeps its memory in a small
 * quarantine (the last BATON_CLOSED_KEPT closed handles), so a call on a
 * handle closed since, or a second close, reads the poison and returns
 * -EBADF; that is best effort, as cheap as it can be: a handle closed
 * longer ago than that has been freed, and using it is undefined. The
 * __ helpers that the inline paths call do not check: their caller has
 * already used the handle. Their wake and kick calls return nothing: a
 * failed wake has no useful reaction, and a parked peer re-checks on its
 * own deadline. The inline fast paths check only when built
 * with -DBATON_DEBUG (then each int-returning inline call, and
 * baton_epoch_enter()/_exit(), makes one out-of-line check first);
 * without it they are unchanged, and the perf gate holds them to that.
 */
#ifndef BATON_H
#define BATON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Quoted, so that installed as <prefix>/include/baton/baton.h it finds
 * <prefix>/include/baton/linux/baton.h beside it, never a <linux/baton.h>
 * of the system's; in the source tree, -I uapi finds it.
 */
#include "linux/baton.h"
#include "baton_version.h"	/* BATON_VERSION_MAJOR, _MINOR, _PATCH */

#ifdef __cplusplus
extern "C" {
#endif

/* Which implementation stands behind a ring. */
enum baton_backend {
	BATON_BACKEND_AUTO = 0,	/* $BATON_BACKEND, else kmod if /dev/baton exists */
	BATON_BACKEND_KMOD = 1,	/* /dev/baton */
	BATON_BACKEND_MEMFD = 2,	/* shared memory file + futex + membarrier */
};

/**
 * struct baton_ring - one process's handle on one role of a ring
 *
 * The fields are public only so the fast path can be inline; treat them as
 * private. @local is this side's own index and @cached this side's copy of
 * the other side's index (for the producer: the head plus the slot count,
 * i.e. the first index it may not fill), so the shared lines are touched
 * once per batch, not once per slot.
 */
struct baton_ring {
	/* private: */
	/* fast-path state, touched on every call */
	uint64_t local;
	uint64_t cached;
	uint64_t mask;
	uint8_t *slots;
	uint32_t slot_size;
	uint32_t slot_count;
	uint64_t *tail;			/* producer index, shared */
	uint64_t *head;			/* consumer index, shared */
	uint32_t *prod_waiting;		/* producer parked, shared */
	uint32_t *cons_waiting;		/* consumer parked, shared */

	/* slow-path state */
	const struct baton_ring_hdr *hdr;
	int fd;
	int role;
	int backend;
	uint32_t kind;
	uint32_t magic;			/* live kind and role, or the poison */
	uint64_t wake_calls;		/* wake syscalls this handle made */
	uint64_t park_calls;		/* park syscalls this handle made */
	uint32_t spin_limit;		/* most polls before a blocking call parks */
	uint32_t spin_budget;		/* polls now, adapted (lib/park.c); 0: spin_limit */
	struct {
		void *addr;
		size_t len;
	} map[4];
	char name[BATON_NAME_MAX];

	/* MPSC rings only (the MPSC section below); zero for SPSC */
	uint64_t *seq;			/* per-slot sequence words, shared */
	struct baton_mpsc_claim *claim;	/* producer: its own claim page */
	uint64_t tombstones_skipped;	/* consumer: lost tickets skipped */
	uint32_t max_producers;
	uint32_t mpsc_hdr;		/* offset of struct baton_mpsc_hdr */
	int mpsc_error;			/* producer: a ticket was abandoned */
	struct {
		void *addr;
		size_t len;
	} mpsc_map[2];			/* seq, claim */

	/* baton_pool_send(): the pool this handle bound the ring to */
	uint64_t pool_bound;		/* its serial (lib/pool.c); 0: none */
	uint64_t pool_ring_id;		/* the ring's id for SENT aux; 0: none */

	/* the slots' file offset, as checked at attach (memfd tombstones) */
	uint64_t slots_off;
};

/**
 * struct baton_ring_params - geometry and permission of a new ring
 * @kind: BATON_RING_SPSC or BATON_RING_MPSC
 * @slot_count: power of two
 * @slot_size: multiple of 8
 * @mode: permission bits, e.g. 0600
 * @backend: enum baton_backend
 * @max_producers: BATON_RING_MPSC: producer handles the ring admits
 *                 (1..BATON_MPSC_PRODUCERS_MAX); SPSC: 0 or 1
 */
struct baton_ring_params {
	uint32_t kind;
	uint32_t slot_count;
	uint32_t slot_size;
	uint32_t mode;
	int backend;
	uint32_t max_producers;
};

/**
 * struct baton_ring_stats - what the slow path and the indices tell
 * @head: consumer index (messages consumed so far)
 * @tail: producer index (messages published so far)
 * @parks_full: producer parks on a full ring (kernel-counted; memfd: 0)
 * @parks_empty: consumer parks on an empty ring (kernel-counted; memfd: 0)
 * @wakes_of_producer: wake calls aimed at the producer side
 * @wakes_of_consumer: wake calls aimed at the consumer side
 * @producer_deaths: producer files released
 * @consumer_deaths: consumer files released
 * @wake_calls: wake syscalls made by this handle
 * @park_calls: park syscalls made by this handle
 * @poll_arms_of_producer: producer poll arms (kernel-counted; memfd: 0)
 * @poll_arms_of_consumer: consumer poll arms (kernel-counted; memfd: 0)
 * @rearms_of_producer: producer parks re-armed after a wake that did not
 *                      satisfy them (kernel-counted; memfd: 0)
 * @rearms_of_consumer: the same for the consumer
 *
 * With one thread waking a side: wakes_of_X <= parks + rearms_of_X +
 * poll_arms_of_X (kmod), one wake call per arm.
 */
struct baton_ring_stats {
	uint64_t head;
	uint64_t tail;
	uint64_t parks_full;
	uint64_t parks_empty;
	uint64_t wakes_of_producer;
	uint64_t wakes_of_consumer;
	uint64_t producer_deaths;
	uint64_t consumer_deaths;
	uint64_t wake_calls;
	uint64_t park_calls;
	uint64_t poll_arms_of_producer;
	uint64_t poll_arms_of_consumer;
	uint64_t rearms_of_producer;
	uint64_t rearms_of_consumer;
};

/* Setup and teardown (lib/ring.c and the backends). */

/**
 * baton_ring_create() - create a named ring and take one role of it
 * @name: 1..BATON_NAME_MAX - 1 bytes of [A-Za-z0-9._-]; unique per backend
 *        (and, on kmod, per IPC namespace)
 * @p: kind, geometry, mode and backend (struct baton_ring_params)
 * @role: BATON_ROLE_PRODUCER or BATON_ROLE_CONSUMER, held by the new handle
 * @out: the new handle, for baton_ring_close()
 *
 * The name stays until baton_ring_unlink(), like a file's; the ring goes
 * once its name and every handle have. A create that fails leaves no
 * name, also when the ring was made and only mapping it failed (unless
 * another process unlinked the name and made its own under it in that
 * window: that one goes instead).
 *
 * Return: 0, or -EINVAL (a bad name, geometry, kind, role or mode), -EEXIST
 * (the name is taken), -EDQUOT (a per-user cap, kmod), -ENOSPC (no room in
 * /dev/shm, memfd), -ENODEV (the backend asked for is missing; memfd: also
 * without membarrier(2), Documentation/memfd-backend.rst), -EACCES (kmod:
 * no access to /dev/baton, mode 0660 group baton once installed; the
 * library does not fall back to memfd then), -EPROTONOSUPPORT (kmod: the
 * module speaks another ABI), -ENOMEM.
 */
int baton_ring_create(const char *name, const struct baton_ring_params *p,
		      int role, struct baton_ring **out);

/**
 * baton_ring_open() - open an existing ring by name in one role
 * @name: as given to baton_ring_create()
 * @role: BATON_ROLE_PRODUCER or BATON_ROLE_CONSUMER
 * @backend: enum baton_backend (BATON_BACKEND_AUTO: see
 *           baton_backend_resolve())
 * @out: the new handle
 *
 * Return: 0, or -ENOENT (no such ring), -EACCES (the mode forbids it; kmod:
 * or /dev/baton does), -EBUSY (the role is taken: SPSC, or max_producers
 * reached), -EINVAL, -ENODEV, -EPROTONOSUPPORT (kmod: the module speaks
 * another ABI), -EPROTO (the shared header is inconsistent), -ENOMEM.
 */
int baton_ring_open(const char *name, int role, int backend,
		    struct baton_ring **out);

/**
 * baton_ring_close() - unmap and close a handle
 * @r: the handle; poisoned, then freed (see BATON_CLOSED_KEPT); NULL does
 *     nothing and returns -EINVAL
 *
 * The role is released (and the peer told, on kmod) once the fd and every
 * mapping are gone; a process that dies closes its handles the same way.
 *
 * Return: 0, -EINVAL for NULL, or -EBADF for a handle already closed (best
 * effort: the last BATON_CLOSED_KEPT closed handles stay poisoned, older
 * ones are freed).
 */
int baton_ring_close(struct baton_ring *r);

/**
 * baton_ring_unlink() - remove a ring's name
 * @name: the ring
 * @backend: enum baton_backend
 *
 * Open handles keep the ring until they close.
 *
 * Return: 0, or -ENOENT, -EACCES (only the owner may), -EINVAL, -ENODEV.
 */
int baton_ring_unlink(const char *name, int backend);

/**
 * baton_ring_fd() - the handle's file descriptor, for poll(2) and epoll
 * @r: the handle
 *
 * Readable (consumer) or writable (producer) when the ring has a message
 * or room; see baton_ring_poll_disarm().
 *
 * Return: the fd, or -EINVAL for a NULL handle, -EBADF for a closed one.
 */
int baton_ring_fd(const struct baton_ring *r);

/**
 * baton_ring_stats() - sample a ring's counters
 * @r: the handle
 * @st: filled in (struct baton_ring_stats)
 *
 * Return: 0, or -EINVAL (NULL), -EBADF (not a live ring handle).
 */
int baton_ring_stats(const struct baton_ring *r, struct baton_ring_stats *st);

/**
 * baton_backend_name() - a backend's name, for messages
 * @backend: enum baton_backend
 *
 * Return: "auto", "kmod", "memfd", or "unknown"; never NULL.
 */
const char *baton_backend_name(int backend);

/**
 * baton_backend_resolve() - the backend BATON_BACKEND_AUTO stands for
 * @backend: enum baton_backend
 *
 * AUTO is the environment variable BATON_BACKEND when set ("kmod" or
 * "memfd"; anything else is an error, not a silent fallback), else kmod
 * when /dev/baton exists, else memfd. KMOD and MEMFD stand for themselves.
 *
 * Return: BATON_BACKEND_KMOD or BATON_BACKEND_MEMFD, or -EINVAL.
 */
int baton_backend_resolve(int backend);

/**
 * baton_version() - the version of the library running this call
 * Return: BATON_MAKE_VERSION(major, minor, patch) of the libbaton that was
 * linked, to compare with BATON_VERSION_NUMBER, the headers' version.
 */
uint32_t baton_version(void);

/**
 * baton_abi_version() - the ABI of the backend that AUTO resolves to
 * @abi_version: if not NULL, gets BATON_ABI_VERSION of the module (kmod)
 *               or of this library (memfd)
 * @features: if not NULL, gets the BATON_FEAT_* bits the backend offers
 *
 * Return: 0, or -ENODEV (BATON_BACKEND names a backend that is missing),
 * -EINVAL (BATON_BACKEND names no backend).
 */
int baton_abi_version(uint32_t *abi_version, uint64_t *features);

/* How many closed handles stay poisoned, unfreed, for misuse checks. */
#define BATON_CLOSED_KEPT	64

/*
 * The handle check every out-of-line call makes (@kind 0: any kind, @role
 * 0: any role): 0, -EBADF (not a live ring handle, or not of @kind),
 * -EINVAL (NULL, or not of @role). Exported for the BATON_DEBUG checks of
 * the inline paths.
 */
int __baton_ring_check(const struct baton_ring *r, uint32_t kind, int role);

/*
 * A live ring handle's magic names its kind and role (struct
 * baton_ring.magic; lib/internal.h has the others and the poison a closed
 * handle gets), so the inline blocking forms check the handle with one
 * compare and leave everything else to the library.
 */
#define BATON__MAGIC_RING_BASE	0xba700000u
#define BATON__MAGIC_RING(kind, role) \
	(BATON__MAGIC_RING_BASE | ((uint32_t)(kind) << 4) | (uint32_t)(role))

static inline int baton__ring_is(const struct baton_ring *r, uint32_t kind,
				 int role)
{
	return __builtin_expect(r && r->magic == BATON__MAGIC_RING(kind, role),
				1);
}

#ifdef BATON_DEBUG
#define BATON__DEBUG_RING(r, kind, role)				\
	do {								\
		int err_ = __baton_ring_check((r), (kind), (role));	\
		if (err_)						\
			return err_;					\
	} while (0)
#else
#define BATON__DEBUG_RING(r, kind, role)	do { } while (0)
#endif

/**
 * baton_ring_open_or_create() - open @name, or create it from @p if absent
 * @name: the ring's name
 * @p: the geometry to create with, and to expect of an existing ring
 * @role: BATON_ROLE_PRODUCER or BATON_ROLE_CONSUMER
 * @out: the new handle
 * @created: if not NULL, set to 1 when this call created the ring, else 0
 *
 * Safe when several processes call it at once: exactly one creates, the
 * others open what it created (a create that loses the race to another
 * opens instead). The backend is @p->backend.
 *
 * Return: 0, or a negative errno as baton_ring_create() and
 * baton_ring_open(); -EEXIST when a ring of that name exists with another
 * kind, slot_count, slot_size or max_producers (the log names the field).
 */
int baton_ring_open_or_create(const char *name,
			      const struct baton_ring_params *p, int role,
			      struct baton_ring **out, int *created);

/**
 * baton_ring_open_timeout() - open @name, waiting for it to be created
 * @name: the ring's name
 * @role: BATON_ROLE_PRODUCER or BATON_ROLE_CONSUMER
 * @backend: enum baton_backend
 * @timeout_ns: how long to wait for the name; 0: do not wait (a missing
 *              name is then -ETIMEDOUT, not -ENOENT); negative: no limit
 * @out: the new handle
 *
 * For a consumer that may start before its producer. kmod: the module
 * sleeps until a ring of that name is created in the caller's IPC
 * namespace (BATON_IOC_NAME_WAIT); memfd: inotify on /dev/shm. Only a
 * missing name is waited for: any other failure returns at once.
 *
 * Return: 0, -ETIMEDOUT when no ring of that name appeared in time,
 * -EINTR on a signal, or a negative errno as baton_ring_open(). memfd
 * only, when it must wait: -EMFILE when the user has no inotify instance
 * left (fs.inotify.max_user_instances, 128 by default) or the process no
 * descriptor, -ENOSPC when the user has no inotify watch left
 * (fs.inotify.max_user_watches), -ENODEV without /dev/shm.
 */
int baton_ring_open_timeout(const char *name, int role, int backend,
			    int64_t timeout_ns, struct baton_ring **out);

/*
 * Messages. Every create, open and register that is refused says why
 * through the print callback: for -EINVAL the field, its value and the
 * rule ("libbaton: baton_ring_create("x"): slot_size 12: must be a
 * multiple of 8 from 8 to 65536"). Each message is one line, starting
 * with "libbaton: " and ending with a newline.
 *
 * Levels: BATON_LOG_WARN a rule broken by the arguments (EINVAL) or
 * corrupt shared pages (EPROTO); BATON_LOG_INFO a refusal by the system
 * (EACCES, EDQUOT, ENODEV, ENOSPC, ...); BATON_LOG_DEBUG answers a caller
 * often expects (ENOENT, EEXIST, EBUSY) and what open-or-create did.
 *
 * The default printer writes BATON_LOG_WARN messages to stderr; the
 * environment variable BATON_LOG ("none", "warn", "info", "debug")
 * changes which levels it prints. baton_set_print() replaces it (NULL:
 * print nothing) and returns the previous one. The callback may be
 * called from any thread that calls into the library; it is never
 * called from an inline fast-path function.
 */
enum baton_log_level {
	BATON_LOG_WARN = 0,
	BATON_LOG_INFO = 1,
	BATON_LOG_DEBUG = 2,
};

typedef int (*baton_print_fn)(enum baton_log_level level, const char *fmt,
			      va_list args);

/**
 * baton_set_print() - replace the library's message printer
 * @fn: called with a level (enum baton_log_level), a printf format and
 *      its arguments, once per message; NULL prints nothing
 *
 * In the style of libbpf_set_print(). Each message is one line that starts
 * with "libbaton: " and ends with a newline; for a refused create, open or
 * register it names the call, the object, the field, its value and the
 * rule. The default printer writes BATON_LOG_WARN messages to stderr, or
 * the levels the environment variable BATON_LOG names ("none", "warn",
 * "info", "debug"). @fn may be called from any thread that calls into the
 * library, never from an inline fast-path function.
 *
 * Return: the printer in place before the call (the default one at first).
 */
baton_print_fn baton_set_print(baton_print_fn fn);

/**
 * baton_strerror() - what an errno means when a baton call returns it
 * @err: a negative (or positive) errno
 *
 * Return: a static string: the baton meaning (EPIPE: the peer has gone,
 * EPROTO: the shared pages are inconsistent, ...), else strerror()'s.
 */
const char *baton_strerror(int err);

/**
 * baton_ring_peer_gone() - whether the other role has gone
 * @r: the handle
 *
 * On memfd a death is seen once a waiter found it.
 *
 * Return: nonzero once the peer role has gone, else 0.
 */
static inline int baton_ring_peer_gone(const struct baton_ring *r)
{
	uint32_t st = __atomic_load_n(&r->hdr->state, __ATOMIC_ACQUIRE);

	return r->role == BATON_ROLE_PRODUCER ?
	       !!(st & BATON_STATE_CONSUMER_GONE) :
	       !!(st & BATON_STATE_PRODUCER_GONE);
}

/*
 * Whether a loaded waiting word asks for the wake call: a park or a poll
 * of the peer is armed (BATON_WAIT_PARKED, BATON_WAIT_POLL). The other
 * bits are the memfd backend's generation, never a reason to wake.
 */
static inline int baton__wait_armed(uint32_t word)
{
	return (word & BATON_WAIT_MASK) != 0;
}

/*
 * E, the compiler's half: the index store must be emitted before the load
 * of the peer's waiting word, and C11 lets a compiler hoist a relaxed load
 * above a release store. A seq_cst signal fence forbids that and emits no
 * instruction; the CPU's half is paid by the parker (F, G).
 */
#define baton__store_then_load()	__atomic_signal_fence(__ATOMIC_SEQ_CST)

/**
 * baton_ring_poll_disarm() - stop asking the peer for poll wake-ups
 * @r: the handle
 *
 * poll()/epoll on baton_ring_fd(): the kernel raises this handle's
 * BATON_WAIT_POLL (with its barriers) on every poll that finds it down,
 * and takes it down in the peer's next wake call: one wake call per arm.
 * Calling this is optional: it drops an arm early, when the handle stops
 * waiting through poll, saving the peer that one wake call. Do not call
 * it while a poll or epoll_wait on the fd may still sleep.
 */
static inline void baton_ring_poll_disarm(struct baton_ring *r)
{
	uint32_t *own = r->role == BATON_ROLE_PRODUCER ? r->prod_waiting :
							 r->cons_waiting;

	/* MPSC producers: the word is the kernel's (kmod) or a count (memfd). */
	if (r->kind == BATON_RING_MPSC && r->role == BATON_ROLE_PRODUCER)
		return;

	/* No barrier: nobody of ours waits through poll any more. */
	__atomic_fetch_and(own, ~BATON_WAIT_POLL, __ATOMIC_RELAXED);
}

/**
 * baton_ring_park() - sleep until the ring is not full (producer) or not
 * empty (consumer)
 * @r: the handle
 * @timeout_ns: how long at most; < 0 waits forever
 *
 * lib/park.c. The blocking calls use it after spinning; call it directly
 * around the reserve/peek steps. On an MPSC ring the consumer sleeps
 * until the ticket at its head is published (or tombstoned), a producer
 * until the slot of the next ticket is free (baton_mpsc_prod_room()),
 * holding no ticket; a producer holding one waits with
 * baton_mpsc_prod_wait().
 *
 * Return: 0 (re-check the ring), -ETIMEDOUT, -EPIPE (peer gone; for the
 * consumer: drained and the producer gone, i.e. end of stream), -EINTR,
 * -EPROTO (corrupt indices).
 */
int baton_ring_park(struct baton_ring *r, int64_t timeout_ns);
/*
 * Out of line so the fast path stays small: the wake syscall. Reports
 * nothing: a parked peer re-checks on its own deadline anyway.
 */
void __baton_ring_wake_peer(struct baton_ring *r);

/**
 * baton_ring_slot() - the address of a slot
 * @r: the handle
 * @idx: a free-running index, as the reserve and peek steps return
 *
 * Return: the slot's address in the mapping (slot_size bytes).
 */
static inline void *baton_ring_slot(const struct baton_ring *r, uint64_t idx)
{
	return r->slots + (size_t)(idx & r->mask) * r->slot_size;
}

/**
 * baton_spsc_prod_reserve() - how many slots are free to write, zero-copy
 * @r: a producer handle of an SPSC ring
 * @n: how many slots are wanted
 * @idx: set to the index of the first free slot
 *
 * SPSC producer: exactly one thread of one process calls these. It does
 * not advance anything: calling it again before baton_spsc_prod_submit()
 * returns the same *idx. Write the slots with baton_ring_slot().
 *
 * Return: the number of free slots from *idx, at most @n (0: full).
 */
static inline uint32_t baton_spsc_prod_reserve(struct baton_ring *r,
					       uint32_t n, uint64_t *idx)
{
	uint64_t free_slots = r->cached - r->local;

	if (free_slots < n) {
		/* D, matches C: the consumer finished reading these slots. */
		r->cached = __atomic_load_n(r->head, __ATOMIC_ACQUIRE) +
			    r->slot_count;
		free_slots = r->cached - r->local;
		/*
		 * A scribbled head can claim more than the ring holds:
		 * believe none of it, and reload on the next call.
		 */
		if (free_slots > r->slot_count) {
			r->cached = r->local;
			free_slots = 0;
		}
		if (free_slots < n)
			n = (uint32_t)free_slots;
	}
	*idx = r->local;
	return n;
}

/**
 * baton_spsc_prod_submit() - publish written slots
 * @r: a producer handle of an SPSC ring
 * @n: how many of the reserved slots, from the reserved *idx
 *
 * Wakes the consumer (a syscall) only if it parked.
 */
static inline void baton_spsc_prod_submit(struct baton_ring *r, uint32_t n)
{
	r->local += n;
	/* A, matches B: slot writes before the tail that covers them. */
	__atomic_store_n(r->tail, r->local, __ATOMIC_RELEASE);
	/*
	 * E: store tail, then load the flag. StoreLoad without a fence here:
	 * the parking consumer pays for it with F and G in the kernel (or
	 * membarrier on the memfd backend), so this load cannot miss a
	 * consumer that then sleeps. The compiler keeps the order.
	 */
	baton__store_then_load();
	if (baton__wait_armed(__atomic_load_n(r->cons_waiting,
					      __ATOMIC_RELAXED)))
		__baton_ring_wake_peer(r);
}

/**
 * baton_spsc_cons_peek() - how many messages are there to read, zero-copy
 * @r: a consumer handle of an SPSC ring
 * @n: how many messages are wanted
 * @idx: set to the index of the first
 *
 * SPSC consumer: exactly one thread of one process calls these. It does
 * not consume them: baton_spsc_cons_release() does.
 *
 * Return: the number of published messages from *idx, at most @n (0:
 * empty).
 */
static inline uint32_t baton_spsc_cons_peek(struct baton_ring *r, uint32_t n,
					    uint64_t *idx)
{
	uint64_t avail = r->cached - r->local;

	if (avail < n) {
		/* B, matches A: the slots are written before we read them. */
		r->cached = __atomic_load_n(r->tail, __ATOMIC_ACQUIRE);
		avail = r->cached - r->local;
		/* As in baton_spsc_prod_reserve(): a scribbled tail. */
		if (avail > r->slot_count) {
			r->cached = r->local;
			avail = 0;
		}
		if (avail < n)
			n = (uint32_t)avail;
	}
	*idx = r->local;
	return n;
}

/**
 * baton_spsc_cons_release() - give read slots back to the producer
 * @r: a consumer handle of an SPSC ring
 * @n: how many of the peeked slots
 *
 * Wakes the producer (a syscall) only if it parked.
 */
static inline void baton_spsc_cons_release(struct baton_ring *r, uint32_t n)
{
	r->local += n;
	/* C, matches D: slot reads done before the producer may reuse them. */
	__atomic_store_n(r->head, r->local, __ATOMIC_RELEASE);
	/* E: as in baton_spsc_prod_submit(); the parked producer paid. */
	baton__store_then_load();
	if (baton__wait_armed(__atomic_load_n(r->prod_waiting,
					      __ATOMIC_RELAXED)))
		__baton_ring_wake_peer(r);
}

/**
 * baton_spsc_try_push() - copy one message in, if there is room
 * @r: a producer handle of an SPSC ring
 * @msg: the message
 * @len: its length, at most the slot size
 *
 * Return: 0, or -EAGAIN (full), -EINVAL (@len too long).
 */
static inline int baton_spsc_try_push(struct baton_ring *r, const void *msg,
				      size_t len)
{
	uint64_t idx;

	BATON__DEBUG_RING(r, BATON_RING_SPSC, BATON_ROLE_PRODUCER);
	if (len > r->slot_size)
		return -22; /* -EINVAL, without pulling in <errno.h> */
	if (!baton_spsc_prod_reserve(r, 1, &idx))
		return -11; /* -EAGAIN */
	memcpy(baton_ring_slot(r, idx), msg, len);
	baton_spsc_prod_submit(r, 1);
	return 0;
}

/**
 * baton_spsc_try_pop() - copy one message out, if there is one
 * @r: a consumer handle of an SPSC ring
 * @msg: where to copy it
 * @len: bytes to copy (at most the slot size is copied)
 *
 * Return: 0, or -EAGAIN (empty).
 */
static inline int baton_spsc_try_pop(struct baton_ring *r, void *msg,
				     size_t len)
{
	uint64_t idx;

	BATON__DEBUG_RING(r, BATON_RING_SPSC, BATON_ROLE_CONSUMER);
	if (len > r->slot_size)
		len = r->slot_size;
	if (!baton_spsc_cons_peek(r, 1, &idx))
		return -11; /* -EAGAIN */
	memcpy(msg, baton_ring_slot(r, idx), len);
	baton_spsc_cons_release(r, 1);
	return 0;
}

/*
 * Blocking forms (lib/park.c): spin r->spin_limit polls, then park.
 */

/**
 * baton_spsc_prod_reserve_wait() - baton_spsc_prod_reserve(), waiting for
 * room
 * @r: a producer handle of an SPSC ring
 * @n: how many slots are wanted
 * @idx: set to the index of the first free slot
 * @timeout_ns: how long at most; < 0 waits forever
 *
 * Return: the number of free slots (>= 1, at most @n), or a negative
 * errno as for baton_ring_park().
 */
int baton_spsc_prod_reserve_wait(struct baton_ring *r, uint32_t n,
				 uint64_t *idx, int64_t timeout_ns);

/**
 * baton_spsc_cons_peek_wait() - baton_spsc_cons_peek(), waiting for a
 * message
 * @r: a consumer handle of an SPSC ring
 * @n: how many messages are wanted
 * @idx: set to the index of the first
 * @timeout_ns: how long at most; < 0 waits forever
 *
 * Return: the number of messages (>= 1, at most @n), or a negative errno
 * as for baton_ring_park() (-EPIPE: end of stream).
 */
int baton_spsc_cons_peek_wait(struct baton_ring *r, uint32_t n, uint64_t *idx,
			      int64_t timeout_ns);

/*
 * The library's side of baton_spsc_push()/pop() below (not for direct
 * use): every check again, the spin, the park, and the copy.
 */
int __baton_spsc_push_slow(struct baton_ring *r, const void *msg, size_t len,
			   int64_t timeout_ns);
int __baton_spsc_pop_slow(struct baton_ring *r, void *msg, size_t len,
			  int64_t timeout_ns);

/*
 * The blocking forms' fast exit, inline: a live handle of the right kind
 * and role, a length the slot holds (so a constant @len stays a constant
 * copy), and room or a message at the first look. Anything else, the
 * wait included, is the library's; it learns nothing from a wait that
 * did not happen (the adaptive spin, lib/park.c), so the two are one
 * call as far as it can tell.
 */
static inline __attribute__((always_inline)) int
baton__spsc_push_inline(struct baton_ring *r, const void *msg, size_t len,
			int64_t timeout_ns)
{
	uint64_t idx;

	if (baton__ring_is(r, BATON_RING_SPSC, BATON_ROLE_PRODUCER) &&
	    len <= r->slot_size && baton_spsc_prod_reserve(r, 1, &idx)) {
		memcpy(baton_ring_slot(r, idx), msg, len);
		baton_spsc_prod_submit(r, 1);
		return 0;
	}
	return __baton_spsc_push_slow(r, msg, len, timeout_ns);
}

static inline __attribute__((always_inline)) int
baton__spsc_pop_inline(struct baton_ring *r, void *msg, size_t len,
		       int64_t timeout_ns)
{
	uint64_t idx;

	if (baton__ring_is(r, BATON_RING_SPSC, BATON_ROLE_CONSUMER) &&
	    len <= r->slot_size && baton_spsc_cons_peek(r, 1, &idx)) {
		memcpy(msg, baton_ring_slot(r, idx), len);
		baton_spsc_cons_release(r, 1);
		return 0;
	}
	return __baton_spsc_pop_slow(r, msg, len, timeout_ns);
}

#ifdef BATON__RING_OUTLINE
/* lib/park.c: the exported forms, for binaries built against 2.3. */
int baton_spsc_push(struct baton_ring *r, const void *msg, size_t len,
		    int64_t timeout_ns);
int baton_spsc_pop(struct baton_ring *r, void *msg, size_t len,
		   int64_t timeout_ns);
#else
/**
 * baton_spsc_push() - copy one message in, waiting for room
 * @r: a producer handle of an SPSC ring
 * @msg: the message
 * @len: its length, at most the slot size
 * @timeout_ns: how long at most; < 0 waits forever
 *
 * Inline when there is room at the first look; the wait is the library's.
 *
 * Return: 0, or -EINVAL, or a negative errno as for baton_ring_park().
 */
static inline int baton_spsc_push(struct baton_ring *r, const void *msg,
				  size_t len, int64_t timeout_ns)
{
	return baton__spsc_push_inline(r, msg, len, timeout_ns);
}

/**
 * baton_spsc_pop() - copy one message out, waiting for one
 * @r: a consumer handle of an SPSC ring
 * @msg: where to copy it
 * @len: bytes to copy (at most the slot size is copied)
 * @timeout_ns: how long at most; < 0 waits forever
 *
 * Inline when a message is there at the first look; the wait is the
 * library's.
 *
 * Return: 0, or a negative errno as for baton_ring_park() (-EPIPE:
 * drained and the producer gone, the end of the stream).
 */
static inline int baton_spsc_pop(struct baton_ring *r, void *msg, size_t len,
				 int64_t timeout_ns)
{
	return baton__spsc_pop_inline(r, msg, len, timeout_ns);
}
#endif

/* ---- MPSC rings (Documentation/mpsc.rst) ---- */

/*
 * A BATON_RING_MPSC ring: any number of producer handles, up to the
 * ring's max_producers, and one consumer. Create or open it with
 * baton_ring_create()/baton_ring_open() (p->kind = BATON_RING_MPSC).
 * Each producer handle is used by one thread at a time; threads that
 * push concurrently open a handle each (a handle owns one claim page).
 *
 * The producer's path holds exactly one locked instruction, the
 * fetch_add that hands out tickets, and no compare-and-swap: no branch
 * on it depends on winning a race between cores. The consumer's path
 * has no locked instruction and no fence. Barrier letters I..N are in
 * the MPSC table of <linux/baton.h>.
 */

/*
 * baton_mpsc_cons_peek()/pop(): the ticket was lost (its producer died
 * before publishing it), see struct baton_mpsc_loss. A negative errno
 * like the others: -EOWNERDEAD (lib/mpsc.c asserts the value).
 */
#define BATON_MPSC_LOST		(-130)

/**
 * struct baton_mpsc_loss - a ticket the consumer skipped as a tombstone
 * @ticket: the lost ticket (its producer died before publishing it)
 * @pid: the dead producer's pid in the consumer's pid namespace, as the
 *       kernel attributed it; 0 when it could not tell
 */
struct baton_mpsc_loss {
	uint64_t ticket;
	uint64_t pid;
};

/**
 * struct baton_mpsc_stats - what an MPSC ring's counters say
 * @head: consumer position (messages and tombstones consumed)
 * @tail: tickets handed out
 * @parks_full: producer parks on a slot still held by the previous lap
 * @parks_empty: consumer parks on a slot not yet published
 * @wakes_of_producer: wake calls aimed at parked producers
 * @wakes_of_consumer: wake calls aimed at the parked consumer
 * @producer_deaths: producer handles released (closed or died)
 * @tombstones_written: tickets the kernel turned into tombstones
 * @tombstones_unattributed: of those, the ones without a pid
 * @tombstones_skipped: tombstones this consumer handle skipped
 * @producers: producer handles attached now (kmod)
 * @max_producers: producer handles the ring admits
 * @wake_calls: wake syscalls made by this handle
 * @park_calls: park syscalls made by this handle
 *
 * The kernel counts (memfd: 0) except the last three and @head/@tail.
 */
struct baton_mpsc_stats {
	uint64_t head;
	uint64_t tail;
	uint64_t parks_full;
	uint64_t parks_empty;
	uint64_t wakes_of_producer;
	uint64_t wakes_of_consumer;
	uint64_t producer_deaths;
	uint64_t tombstones_written;
	uint64_t tombstones_unattributed;
	uint64_t tombstones_skipped;
	uint32_t producers;
	uint32_t max_producers;
	uint64_t wake_calls;
	uint64_t park_calls;
};

/**
 * baton_mpsc_stats() - sample an MPSC ring's counters
 * @r: a handle of an MPSC ring, either role
 * @st: filled in (struct baton_mpsc_stats)
 *
 * Return: 0, or -EBADF (not an MPSC ring handle), -EINVAL.
 */
int baton_mpsc_stats(const struct baton_ring *r, struct baton_mpsc_stats *st);

/*
 * Out of line (lib/mpsc.c): the syscalls and the waiting loops. The wake
 * reports nothing, as __baton_ring_wake_peer(); the others return 0 or a
 * negative errno.
 */
void __baton_mpsc_wake(struct baton_ring *r, uint64_t idx);

/**
 * baton_mpsc_prod_wait() - wait until a held ticket's slot is free
 * @r: a producer handle of an MPSC ring
 * @ticket: a ticket this handle reserved
 *
 * Spins, then parks on the slot until the consumer frees it. No timeout:
 * the ticket cannot be handed back (see baton_mpsc_prod_reserve()). On an
 * error the ticket is abandoned and the handle refuses further pushes;
 * closing it lets the kernel tombstone the ticket.
 *
 * A signal does not end the wait (the ticket must be published): the
 * handler runs, and the wait goes on.
 *
 * Return: 0, or -EPIPE (the consumer has gone), -EPROTO (corrupt ring).
 */
int baton_mpsc_prod_wait(struct baton_ring *r, uint64_t ticket);

/**
 * baton_mpsc_push_full() - baton_mpsc_push() when the ring looks full
 * @r: a producer handle of an MPSC ring
 * @msg: the message
 * @len: its length, at most the slot size
 *
 * Waits for room (bounded) holding no ticket, then pushes as
 * baton_mpsc_push() does. baton_mpsc_push() calls it; out of line so the
 * inline push keeps a single fetch_add and no waiting loop.
 *
 * Return: as baton_mpsc_push().
 */
int baton_mpsc_push_full(struct baton_ring *r, const void *msg, size_t len);

/**
 * baton_mpsc_prod_reserve_from() - take tickets, zero-copy
 * @r: a producer handle of an MPSC ring
 * @n: how many tickets
 * @floor: a tail value this producer read (baton_mpsc_prod_room())
 *
 * MPSC producer, step 1: take n tickets [t, t + n) with one fetch_add.
 *
 * The trade-off, on purpose: this cannot fail and cannot be undone. A
 * producer whose reserved slot is still occupied blocks on that slot
 * (baton_mpsc_prod_wait()) instead of getting "busy" back the way a
 * compare-and-swap reservation could return it. Callers at a public API
 * boundary that need the busy answer use baton_mpsc_try_push().
 *
 * The claim page says which tickets this handle holds, so the kernel can
 * tell a live producer's unpublished ticket from a dead one's.
 *
 * Return: t, the first ticket taken.
 */
static inline uint64_t baton_mpsc_prod_reserve_from(struct baton_ring *r,
						    uint32_t n, uint64_t floor)
{
	struct baton_mpsc_claim *cl = r->claim;
	uint64_t t;

	/*
	 * @floor: a tail value this producer read, so at most the ticket
	 * (the tail only grows); ordered before the ticket by I. A release
	 * (I): a kernel that reads this floor sees every publication of
	 * the pushes before it (x86: the same plain store).
	 */
	__atomic_store_n(&cl->floor, floor, __ATOMIC_RELEASE);
	/* I: the one locked instruction; the release covers the floor. */
	t = __atomic_fetch_add(r->tail, n, __ATOMIC_ACQ_REL);
	/* J: first, then count, each a release (the kernel acquires). */
	__atomic_store_n(&cl->first, t, __ATOMIC_RELEASE);
	__atomic_store_n(&cl->count, n, __ATOMIC_RELEASE);
	return t;
}

/**
 * baton_mpsc_prod_reserve() - baton_mpsc_prod_reserve_from() with a fresh
 * tail
 * @r: a producer handle of an MPSC ring
 * @n: how many tickets
 *
 * Return: t, the first ticket taken.
 */
static inline uint64_t baton_mpsc_prod_reserve(struct baton_ring *r,
					       uint32_t n)
{
	return baton_mpsc_prod_reserve_from(r, n, __atomic_load_n(r->tail,
							       __ATOMIC_RELAXED));
}

/**
 * baton_mpsc_prod_slot_free() - whether a ticket's slot is free
 * @r: a producer handle of an MPSC ring
 * @t: the ticket
 *
 * Return: nonzero when the slot of ticket @t is free for it (this lap);
 * else wait with baton_mpsc_prod_wait().
 */
static inline int baton_mpsc_prod_slot_free(const struct baton_ring *r,
					    uint64_t t)
{
	/* N, matches M: the consumer is done with the previous lap. */
	return __atomic_load_n(&r->seq[t & r->mask], __ATOMIC_ACQUIRE) == t;
}

/**
 * baton_mpsc_prod_room() - whether the next ticket's slot is free now
 * @r: a producer handle of an MPSC ring
 * @tail: set to the tail read, the floor for
 *        baton_mpsc_prod_reserve_from()
 *
 * A hint, read before taking a ticket so that a producer does
 * not take one while the ring is full.
 *
 * Why: a ticket cannot be handed back, so a producer that takes one on a
 * full ring holds it until the consumer frees that slot, and the consumer
 * then needs that producer to run before it can go past the ticket. With
 * more processes than CPUs the holder is often not running (a convoy:
 * bench/mpsc_sweep's oversubscribed points). Checking first keeps tickets
 * out of the hands of producers that would only wait.
 *
 * It is a plain load and compare, not a reservation: the branch is decided
 * by the consumer's progress, and losing the race for the last free slot
 * to another producer is harmless, because the fetch_add still hands out
 * a ticket and baton_mpsc_prod_wait() waits on its slot as before. So the
 * reservation stays one unconditional fetch_add with no retry. A scribbled
 * tail or sequence makes the hint wrong, never the protocol: the wait for
 * room is bounded (baton_mpsc_push_full(), out of line).
 *
 * Return: nonzero when the slot of ticket *@tail is free.
 */
static inline int baton_mpsc_prod_room(const struct baton_ring *r,
					uint64_t *tail)
{
	*tail = __atomic_load_n(r->tail, __ATOMIC_RELAXED);
	return baton_mpsc_prod_slot_free(r, *tail);
}

/**
 * baton_mpsc_prod_publish() - publish one written ticket
 * @r: a producer handle of an MPSC ring
 * @t: the ticket, its slot written
 *
 * Wakes the consumer (a syscall) only if it parked. After the last
 * ticket of a reservation, call baton_mpsc_prod_done().
 */
static inline void baton_mpsc_prod_publish(struct baton_ring *r, uint64_t t)
{
	/* K, matches L: the slot contents before the sequence. */
	__atomic_store_n(&r->seq[t & r->mask], t + 1, __ATOMIC_RELEASE);
	/* E: no fence; a parking consumer pays with F and G. */
	baton__store_then_load();
	if (baton__wait_armed(__atomic_load_n(r->cons_waiting,
					      __ATOMIC_RELAXED)))
		__baton_mpsc_wake(r, t);
}

/**
 * baton_mpsc_prod_done() - every reserved ticket is published
 * @r: a producer handle of an MPSC ring
 *
 * The claim page is empty again: a death from here on loses nothing.
 */
static inline void baton_mpsc_prod_done(struct baton_ring *r)
{
	/* J: after the publications, so a kernel that sees these sees them. */
	__atomic_store_n(&r->claim->count, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&r->claim->floor, BATON_MPSC_NONE, __ATOMIC_RELEASE);
}

/**
 * baton_mpsc_push() - copy one message in, waiting for its slot
 * @r: a producer handle of an MPSC ring
 * @msg: the message
 * @len: its length, at most the slot size
 *
 * Blocks while its slot is occupied. After an error the ticket is
 * abandoned and the handle refuses further pushes: close it, and the
 * kernel turns the abandoned ticket into a tombstone for any later
 * consumer.
 *
 * Return: 0, or -EPIPE (the consumer has gone), -EPROTO (the ring is
 * corrupt), -EINVAL.
 */
static inline int baton_mpsc_push(struct baton_ring *r, const void *msg,
				  size_t len)
{
	uint64_t t, tail;
	int ret;

	BATON__DEBUG_RING(r, BATON_RING_MPSC, BATON_ROLE_PRODUCER);
	if (len > r->slot_size)
		return -22; /* -EINVAL, without pulling in <errno.h> */
	if (r->mpsc_error)
		return r->mpsc_error;
	if (!baton_mpsc_prod_room(r, &tail))
		return baton_mpsc_push_full(r, msg, len);
	t = baton_mpsc_prod_reserve_from(r, 1, tail);
	/*
	 * Got the very ticket whose slot was seen free (N done, before the
	 * fetch_add): nothing left to wait for. Else wait on its own slot.
	 */
	if (t != tail && !baton_mpsc_prod_slot_free(r, t)) {
		ret = baton_mpsc_prod_wait(r, t);
		if (ret)
			return ret;
	}
	memcpy(baton_ring_slot(r, t), msg, len);
	baton_mpsc_prod_publish(r, t);
	baton_mpsc_prod_done(r);
	return 0;
}

/**
 * baton_mpsc_try_push() - copy one message in, if there is room
 * @r: a producer handle of an MPSC ring
 * @msg: the message
 * @len: its length, at most the slot size
 *
 * Non-blocking push, for callers that need "busy" back: -EAGAIN when the
 * next ticket's slot is occupied, and then no ticket was taken. This is
 * the only compare-and-swap in the MPSC library, and it stays here: the
 * ticket is taken only if the tail still equals the free slot's ticket,
 * so a full ring never leaves a ticket behind. The blocking path above
 * never runs it, so its race-decided branch is not on that path. It keeps
 * the claim exactly as baton_mpsc_prod_reserve() does.
 *
 * Return: 0, or -EAGAIN, -EINVAL, or the handle's earlier error.
 */
static inline int baton_mpsc_try_push(struct baton_ring *r, const void *msg,
				      size_t len)
{
	struct baton_mpsc_claim *cl;
	uint64_t t;

	BATON__DEBUG_RING(r, BATON_RING_MPSC, BATON_ROLE_PRODUCER);
	cl = r->claim;
	t = __atomic_load_n(r->tail, __ATOMIC_RELAXED);
	if (len > r->slot_size)
		return -22; /* -EINVAL */
	if (r->mpsc_error)
		return r->mpsc_error;
	for (;;) {
		/* N, matches M */
		if (__atomic_load_n(&r->seq[t & r->mask], __ATOMIC_ACQUIRE) != t) {
			uint64_t now = __atomic_load_n(r->tail, __ATOMIC_RELAXED);

			if (now == t)
				break;	/* full: the slot still holds lap t - N */
			t = now;	/* someone took t meanwhile */
			continue;
		}
		__atomic_store_n(&cl->floor, t, __ATOMIC_RELEASE);
		/* I: as the fetch_add; on failure t is the current tail. */
		if (__atomic_compare_exchange_n(r->tail, &t, t + 1, 0,
						__ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			/* J */
			__atomic_store_n(&cl->first, t, __ATOMIC_RELEASE);
			__atomic_store_n(&cl->count, 1, __ATOMIC_RELEASE);
			memcpy(baton_ring_slot(r, t), msg, len);
			baton_mpsc_prod_publish(r, t);
			baton_mpsc_prod_done(r);
			return 0;
		}
	}
	__atomic_store_n(&cl->floor, BATON_MPSC_NONE, __ATOMIC_RELEASE);
	return -11; /* -EAGAIN */
}

/**
 * baton_mpsc_push_timeout() - copy one message in, waiting for room until
 * a deadline
 * @r: a producer handle of an MPSC ring
 * @msg: the message
 * @len: its length, at most the slot size
 * @timeout_ns: < 0 waits for ever, 0 only tries
 *
 * Spins, then parks holding no ticket. baton_mpsc_push() has no
 * deadline: once it holds a ticket it must publish it.
 *
 * Return: 0, -ETIMEDOUT (the ring stayed full; nothing was published and
 * no ticket taken), -EPIPE (the consumer has gone), -EPROTO, -EINTR,
 * -EINVAL.
 */
int baton_mpsc_push_timeout(struct baton_ring *r, const void *msg, size_t len,
			    int64_t timeout_ns);

/**
 * baton_mpsc_push_batch() - copy n messages in with one fetch_add
 * @r: a producer handle of an MPSC ring
 * @msgs: n messages of @len bytes each, back to back
 * @len: the length of each, at most the slot size
 * @n: how many, 1..slot_count
 *
 * Waits slot by slot as baton_mpsc_push(). On an error part of the batch
 * may already be out; baton_mpsc_push_batch_n() says how much in
 * *published (also on success: n), so a caller can resume after it
 * instead of duplicating or dropping messages.
 *
 * Return: n (a batch: all of them published), or an error as
 * baton_mpsc_push().
 */
int baton_mpsc_push_batch(struct baton_ring *r, const void *msgs, size_t len,
			  uint32_t n);

/**
 * baton_mpsc_push_batch_n() - baton_mpsc_push_batch(), saying how much
 * went out
 * @r: a producer handle of an MPSC ring
 * @msgs: n messages of @len bytes each, back to back
 * @len: the length of each, at most the slot size
 * @n: how many, 1..slot_count
 * @published: set to how many of the n are out (also on success: n), so
 *             a caller can resume after them instead of duplicating or
 *             dropping messages
 *
 * Return: n (a batch: all of them published), or an error as
 * baton_mpsc_push().
 */
int baton_mpsc_push_batch_n(struct baton_ring *r, const void *msgs,
			    size_t len, uint32_t n, uint32_t *published);

/**
 * baton_mpsc_cons_peek() - look at the next ticket, zero-copy
 * @r: the consumer handle of an MPSC ring
 * @idx: set to the ticket (its slot: baton_ring_slot())
 *
 * MPSC consumer: one thread of one process. Release a message or a
 * tombstone with baton_mpsc_cons_release().
 *
 * Return: 0 when it holds a message, BATON_MPSC_LOST when it is a
 * tombstone (read the loss with baton_mpsc_cons_loss()), -EAGAIN (-11)
 * when it is not published yet, -EPROTO (-71) when its sequence word is
 * corrupt.
 */
static inline int baton_mpsc_cons_peek(struct baton_ring *r, uint64_t *idx)
{
	uint64_t c = r->local;
	/* L, matches K: the slot is written before we read it. */
	uint64_t s = __atomic_load_n(&r->seq[c & r->mask], __ATOMIC_ACQUIRE);

	*idx = c;
	if (s == c + 1)
		return 0;
	if (s == ((c + 1) | BATON_MPSC_TOMB))
		return BATON_MPSC_LOST;
	return s == c ? -11 : -71;
}

/**
 * baton_mpsc_cons_loss() - what the kernel wrote into a tombstoned slot
 * @r: the consumer handle of an MPSC ring
 * @idx: the ticket a peek said BATON_MPSC_LOST of
 * @loss: filled in: the ticket and the dead producer's pid
 */
static inline void baton_mpsc_cons_loss(const struct baton_ring *r,
					uint64_t idx,
					struct baton_mpsc_loss *loss)
{
	uint64_t pid;

	memcpy(&pid, baton_ring_slot(r, idx), sizeof(pid));
	loss->ticket = idx;
	loss->pid = pid;
}

/**
 * baton_mpsc_cons_release() - free the peeked slot for the next lap
 * @r: the consumer handle of an MPSC ring
 *
 * Wakes producers (a syscall) only if one parked.
 */
static inline void baton_mpsc_cons_release(struct baton_ring *r)
{
	uint64_t c = r->local;

	/* M, matches N: done with the slot before lap c + N may write it. */
	__atomic_store_n(&r->seq[c & r->mask], c + r->slot_count,
			 __ATOMIC_RELEASE);
	r->local = c + 1;
	/* C: the position, for stats, poll and the kernel. */
	__atomic_store_n(r->head, c + 1, __ATOMIC_RELEASE);
	/*
	 * E: no fence; a parking producer pays with F and G. On kmod the word
	 * is the kernel's, in the header (no producer can clear it).
	 */
	baton__store_then_load();
	if (baton__wait_armed(__atomic_load_n(r->prod_waiting,
					      __ATOMIC_RELAXED)))
		__baton_mpsc_wake(r, c);
}

/**
 * baton_mpsc_try_pop() - copy one message out, if there is one
 * @r: the consumer handle of an MPSC ring
 * @msg: where to copy it; min(len, slot_size) bytes are copied
 * @len: its size
 * @loss: filled when the next ticket was lost (may be NULL: the tombstone
 *        is still skipped and reported)
 *
 * Return: 0 (a message), BATON_MPSC_LOST (a tombstone, skipped; the next
 * call goes on behind it), or -EAGAIN, -EPROTO.
 */
static inline __attribute__((always_inline)) int
baton_mpsc_try_pop(struct baton_ring *r, void *msg, size_t len,
		   struct baton_mpsc_loss *loss)
{
	uint64_t idx;
	int ret;

	BATON__DEBUG_RING(r, BATON_RING_MPSC, BATON_ROLE_CONSUMER);
	ret = baton_mpsc_cons_peek(r, &idx);
	if (ret == BATON_MPSC_LOST) {
		if (loss)
			baton_mpsc_cons_loss(r, idx, loss);
		r->tombstones_skipped++;
	} else if (ret < 0) {
		return ret;
	} else {
		if (len > r->slot_size)
			len = r->slot_size;
		memcpy(msg, baton_ring_slot(r, idx), len);
	}
	baton_mpsc_cons_release(r);
	return ret;
}

/* The library's side of baton_mpsc_pop() below (not for direct use). */
int __baton_mpsc_pop_slow(struct baton_ring *r, void *msg, size_t len,
			  int64_t timeout_ns, struct baton_mpsc_loss *loss);

/* As baton__spsc_pop_inline(): a message or a tombstone at the first look. */
static inline __attribute__((always_inline)) int
baton__mpsc_pop_inline(struct baton_ring *r, void *msg, size_t len,
		       int64_t timeout_ns, struct baton_mpsc_loss *loss)
{
	int ret;

	if (baton__ring_is(r, BATON_RING_MPSC, BATON_ROLE_CONSUMER) &&
	    len <= r->slot_size) {
		ret = baton_mpsc_try_pop(r, msg, len, loss);
		if (ret != -11) /* -EAGAIN: nothing published yet */
			return ret;
	}
	return __baton_mpsc_pop_slow(r, msg, len, timeout_ns, loss);
}

#ifdef BATON__RING_OUTLINE
/* lib/mpsc.c: the exported form, for binaries built against 2.3. */
int baton_mpsc_pop(struct baton_ring *r, void *msg, size_t len,
		   int64_t timeout_ns, struct baton_mpsc_loss *loss);
#else
/**
 * baton_mpsc_pop() - copy one message out, waiting for one
 * @r: the consumer handle of an MPSC ring
 * @msg: where to copy it; min(len, slot_size) bytes are copied
 * @len: its size
 * @timeout_ns: how long at most; < 0 waits forever
 * @loss: as for baton_mpsc_try_pop()
 *
 * Inline when a message (or a tombstone) is there at the first look;
 * the library spins, then parks.
 *
 * Return: 0 (a message), BATON_MPSC_LOST, -EPROTO as baton_mpsc_try_pop(),
 * or -ETIMEDOUT, -EPIPE (every producer
 * has gone and nothing is left: end of stream), -EINTR.
 */
static inline int baton_mpsc_pop(struct baton_ring *r, void *msg, size_t len,
				 int64_t timeout_ns,
				 struct baton_mpsc_loss *loss)
{
	return baton__mpsc_pop_inline(r, msg, len, timeout_ns, loss);
}
#endif

/* ---- bulk copies (Documentation/bulk.rst) ---- */

/*
 * n messages of @size bytes each between a contiguous user array and n
 * slots, in as few copies as the layout allows: when the messages fill
 * their slots (size == slot_size) the slots of a batch are contiguous up to
 * the end of the ring, so a batch is one memcpy, two when it wraps; smaller
 * messages are copied slot by slot. The sized forms further down (8, 16,
 * 32, 64 bytes) give the compiler @size as a constant, so the slot
 * addressing is a shift and a per-slot copy is a few fixed-size moves.
 *
 * These add no ordering of their own: the copies sit between the same
 * reserve/submit, peek/release (A..D) or ticket (I..N) steps as the
 * single-message forms, so the memory-ordering argument is theirs.
 */

/* Copy k messages from @msgs into the k slots from index @idx. */
static inline __attribute__((always_inline)) void
baton__copy_in(const struct baton_ring *r, uint64_t idx, const void *msgs,
	       size_t size, uint32_t k)
{
	const uint8_t *src = (const uint8_t *)msgs;
	uint32_t i;

	if (size == r->slot_size) {
		uint64_t at = idx & r->mask;
		uint32_t first = r->slot_count - (uint32_t)at;

		if (first > k)
			first = k;
		memcpy(r->slots + at * size, src, (size_t)first * size);
		if (k > first)
			memcpy(r->slots, src + (size_t)first * size,
			       (size_t)(k - first) * size);
		return;
	}
	for (i = 0; i < k; i++)
		memcpy(baton_ring_slot(r, idx + i), src + (size_t)i * size,
		       size);
}

/* Copy the k slots from index @idx out to @msgs. */
static inline __attribute__((always_inline)) void
baton__copy_out(const struct baton_ring *r, uint64_t idx, void *msgs,
		size_t size, uint32_t k)
{
	uint8_t *dst = (uint8_t *)msgs;
	uint32_t i;

	if (size == r->slot_size) {
		uint64_t at = idx & r->mask;
		uint32_t first = r->slot_count - (uint32_t)at;

		if (first > k)
			first = k;
		memcpy(dst, r->slots + at * size, (size_t)first * size);
		if (k > first)
			memcpy(dst + (size_t)first * size, r->slots,
			       (size_t)(k - first) * size);
		return;
	}
	for (i = 0; i < k; i++)
		memcpy(dst + (size_t)i * size, baton_ring_slot(r, idx + i),
		       size);
}

/**
 * baton_spsc_try_push_bulk() - copy up to n messages in, as many as fit
 * @r: a producer handle of an SPSC ring
 * @msgs: n messages of @size bytes each, back to back
 * @size: the size of each, at most the slot size
 * @n: how many are offered
 *
 * One reservation and one publication for the batch. The sized forms
 * baton_spsc_try_push_bulk8, 16, 32 and 64 take @size as a constant.
 *
 * Return: how many went (0 when the ring is full), or -EINVAL when
 * size > slot_size.
 */
static inline __attribute__((always_inline)) int
baton_spsc_try_push_bulk(struct baton_ring *r, const void *msgs, size_t size,
			 uint32_t n)
{
	uint64_t idx;
	uint32_t k;

	BATON__DEBUG_RING(r, BATON_RING_SPSC, BATON_ROLE_PRODUCER);
	if (size > r->slot_size)
		return -22; /* -EINVAL */
	k = baton_spsc_prod_reserve(r, n, &idx);
	if (!k)
		return 0;
	baton__copy_in(r, idx, msgs, size, k);
	baton_spsc_prod_submit(r, k);
	return (int)k;
}

/**
 * baton_spsc_try_pop_bulk() - copy up to n messages out, as many as there
 * are
 * @r: a consumer handle of an SPSC ring
 * @msgs: room for n messages, @size bytes apart; each gets the first
 *        @size bytes of its slot
 * @size: the size of each, at most the slot size
 * @n: how many are wanted
 *
 * The sized forms baton_spsc_try_pop_bulk8, 16, 32 and 64 take @size as a
 * constant.
 *
 * Return: how many (0 when the ring is empty), or -EINVAL when
 * size > slot_size.
 */
static inline __attribute__((always_inline)) int
baton_spsc_try_pop_bulk(struct baton_ring *r, void *msgs, size_t size,
			uint32_t n)
{
	uint64_t idx;
	uint32_t k;

	BATON__DEBUG_RING(r, BATON_RING_SPSC, BATON_ROLE_CONSUMER);
	if (size > r->slot_size)
		return -22; /* -EINVAL */
	k = baton_spsc_cons_peek(r, n, &idx);
	if (!k)
		return 0;
	baton__copy_out(r, idx, msgs, size, k);
	baton_spsc_cons_release(r, k);
	return (int)k;
}

/*
 * Out of line (lib/mpsc.c): the bulk forms' waits and wakes. fill: n or a
 * negative errno, as baton_mpsc_push_bulk(); the wakes report nothing.
 * release_wake is the one baton_mpsc_cons_release_n() calls since 2.6
 * (one head store per batch), so that binaries built with it need a
 * library whose consumer restart walks the whole batch; wake_n stays for
 * binaries built before.
 */
int __baton_mpsc_fill(struct baton_ring *r, uint64_t t, const void *msgs,
		      size_t size, uint32_t n, uint32_t *published);
void __baton_mpsc_wake_n(struct baton_ring *r, uint64_t idx, uint32_t n);
void __baton_mpsc_release_wake(struct baton_ring *r, uint64_t idx,
			       uint32_t n);

/*
 * MPSC producer: tickets [t, t + n) written; publish them in order (K, as
 * baton_mpsc_prod_publish()), then decide on the wake once (E: the last
 * sequence store before the load; a consumer parked on any of them, or on
 * an earlier ticket, is covered by that one load).
 */
static inline void baton__mpsc_publish_n(struct baton_ring *r, uint64_t t,
					 uint32_t n)
{
	/* Locals: each release store would make the compiler reload r's. */
	uint64_t *seq = r->seq, mask = r->mask;
	uint32_t i;

	for (i = 0; i < n; i++)
		__atomic_store_n(&seq[(t + i) & mask], t + i + 1,
				 __ATOMIC_RELEASE);
	baton__store_then_load();
	if (baton__wait_armed(__atomic_load_n(r->cons_waiting,
					      __ATOMIC_RELAXED)))
		__baton_mpsc_wake(r, t + n - 1);
}

/**
 * baton_mpsc_push_bulk() - copy n messages in with one fetch_add
 * @r: a producer handle of an MPSC ring
 * @msgs: n messages of @size bytes each, back to back
 * @size: the size of each, at most the slot size
 * @n: how many, 1..slot_count
 * @published: may be NULL; set to how many of the n are out either way
 *
 * When their slots are free, one or two copies. Blocks like
 * baton_mpsc_push() while a slot is occupied. The sized forms
 * baton_mpsc_push_bulk8, 16, 32 and 64 take @size as a constant.
 *
 * Why one check covers the batch: the consumer frees slots in ticket
 * order, each with a release store of the next lap's ticket (M), after
 * reading it. Seeing the last ticket's slot free (N, acquire) therefore
 * means every earlier release is visible too, and so every slot of the
 * batch is free. If it is not, the out-of-line path waits slot by slot.
 *
 * Return: n (a batch), or an error as baton_mpsc_push_batch_n().
 */
static inline __attribute__((always_inline)) int
baton_mpsc_push_bulk(struct baton_ring *r, const void *msgs, size_t size,
		     uint32_t n, uint32_t *published)
{
	uint32_t dummy;
	uint64_t t, tail;

	BATON__DEBUG_RING(r, BATON_RING_MPSC, BATON_ROLE_PRODUCER);
	if (!published)
		published = &dummy;
	*published = 0;
	if (size > r->slot_size || !n || n > r->slot_count)
		return -22; /* -EINVAL */
	if (r->mpsc_error)
		return r->mpsc_error;
	if (!baton_mpsc_prod_room(r, &tail))
		return baton_mpsc_push_batch_n(r, msgs, size, n, published);
	t = baton_mpsc_prod_reserve_from(r, n, tail);
	if (!baton_mpsc_prod_slot_free(r, t + n - 1))
		return __baton_mpsc_fill(r, t, msgs, size, n, published);
	baton__copy_in(r, t, msgs, size, n);
	baton__mpsc_publish_n(r, t, n);
	baton_mpsc_prod_done(r);
	*published = n;
	return (int)n;
}

/**
 * baton_mpsc_cons_peek_n() - how many of the next tickets hold messages,
 * zero-copy
 * @r: the consumer handle of an MPSC ring
 * @n: how many are wanted
 * @idx: set to the first ticket
 *
 * Stops before the first that does not: not published yet, a tombstone,
 * or corrupt. 0 says the first is one of those; baton_mpsc_cons_peek()
 * tells which. So a tombstone always ends a batch, and is taken on its
 * own.
 *
 * Return: the number of published messages from *idx, at most @n.
 */
static inline uint32_t baton_mpsc_cons_peek_n(struct baton_ring *r,
					      uint32_t n, uint64_t *idx)
{
	/* Locals: each acquire would make the compiler reload r's fields. */
	const uint64_t *seq = r->seq;
	uint64_t c = r->local, mask = r->mask;
	uint32_t k;

	/* A batch never laps the ring, whatever the words say. */
	if (n > r->slot_count)
		n = r->slot_count;
	*idx = c;
	for (k = 0; k < n; k++)
		/* L, matches K: each slot written before we read it. */
		if (__atomic_load_n(&seq[(c + k) & mask], __ATOMIC_ACQUIRE) !=
		    c + k + 1)
			break;
	return k;
}

/**
 * baton_mpsc_cons_release_n() - free k peeked slots
 * @r: the consumer handle of an MPSC ring
 * @k: how many, from baton_mpsc_cons_peek_n()
 *
 * The sequence store of each slot (M, in ticket order), then one head
 * store (C) for them all, then one wake decision. A consumer that dies
 * between M and C leaves the slots it freed past the head, a prefix of
 * the batch; the next consumer resumes behind them (Documentation/
 * mpsc.rst, "Consumer restart"). One head store, not one per slot: half
 * the stores, and 1.8x the 8-byte stream with the CPUs near
 * (Documentation/bulk.rst).
 */
static inline void baton_mpsc_cons_release_n(struct baton_ring *r,
					     uint32_t k)
{
	/* Locals: each release store would make the compiler reload r's. */
	uint64_t *seq = r->seq;
	uint64_t c = r->local, mask = r->mask, lap = r->slot_count;
	uint32_t i;

	if (!k)
		return;
	for (i = 0; i < k; i++)
		/* M, matches N */
		__atomic_store_n(&seq[(c + i) & mask], c + i + lap,
				 __ATOMIC_RELEASE);
	/* C */
	__atomic_store_n(r->head, c + k, __ATOMIC_RELEASE);
	r->local = c + k;
	/* E: as in baton_mpsc_cons_release(). */
	baton__store_then_load();
	if (baton__wait_armed(__atomic_load_n(r->prod_waiting,
					      __ATOMIC_RELAXED)))
		__baton_mpsc_release_wake(r, c, k);
}

/**
 * baton_mpsc_try_pop_bulk() - copy up to n messages out
 * @r: the consumer handle of an MPSC ring
 * @msgs: room for n messages, @size bytes apart
 * @size: the size of each, at most the slot size
 * @n: how many are wanted, >= 1
 * @loss: filled when the next ticket was lost (may be NULL)
 *
 * A batch stops before a tombstone: the call after it returns
 * BATON_MPSC_LOST for the tombstone, and the one after that goes on with
 * the messages behind it.
 * The sized forms baton_mpsc_try_pop_bulk8, 16, 32 and 64 take @size as a
 * constant.
 *
 * Return: how many (0 when the next ticket is not published yet), -EPROTO,
 * -EINVAL (size > slot_size, n == 0), or BATON_MPSC_LOST when the next
 * ticket was a tombstone: it is skipped and, if @loss is not NULL,
 * described there.
 */
static inline __attribute__((always_inline)) int
baton_mpsc_try_pop_bulk(struct baton_ring *r, void *msgs, size_t size,
			uint32_t n, struct baton_mpsc_loss *loss)
{
	uint64_t idx;
	uint32_t k;
	int ret;

	BATON__DEBUG_RING(r, BATON_RING_MPSC, BATON_ROLE_CONSUMER);
	if (size > r->slot_size || !n)
		return -22; /* -EINVAL */
	k = baton_mpsc_cons_peek_n(r, n, &idx);
	if (!k) {
		ret = baton_mpsc_cons_peek(r, &idx);
		if (ret == -11)	/* -EAGAIN: nothing published yet */
			return 0;
		if (ret == BATON_MPSC_LOST) {
			if (loss)
				baton_mpsc_cons_loss(r, idx, loss);
			r->tombstones_skipped++;
			baton_mpsc_cons_release(r);
			return ret;
		}
		if (ret < 0)
			return ret;
		k = 1;	/* published since the first look */
	}
	baton__copy_out(r, idx, msgs, size, k);
	baton_mpsc_cons_release_n(r, k);
	return (int)k;
}

/*
 * The sized forms: @size a constant of 8, 16, 32 or 64 bytes (the slot
 * size may be larger; equal is the one- or two-copy case):
 * baton_spsc_try_push_bulk8 .. 64, baton_spsc_try_pop_bulk8 .. 64,
 * baton_mpsc_push_bulk8 .. 64, baton_mpsc_try_pop_bulk8 .. 64.
 */
#define BATON__BULK_SIZED(sz)						\
static inline int baton_spsc_try_push_bulk##sz(struct baton_ring *r,	\
					       const void *msgs, uint32_t n) \
{									\
	return baton_spsc_try_push_bulk(r, msgs, sz, n);		\
}									\
static inline int baton_spsc_try_pop_bulk##sz(struct baton_ring *r,	\
					      void *msgs, uint32_t n)	\
{									\
	return baton_spsc_try_pop_bulk(r, msgs, sz, n);			\
}									\
static inline int baton_mpsc_push_bulk##sz(struct baton_ring *r,	\
					   const void *msgs, uint32_t n, \
					   uint32_t *published)		\
{									\
	return baton_mpsc_push_bulk(r, msgs, sz, n, published);		\
}									\
static inline int baton_mpsc_try_pop_bulk##sz(struct baton_ring *r,	\
					      void *msgs, uint32_t n,	\
					      struct baton_mpsc_loss *loss) \
{									\
	return baton_mpsc_try_pop_bulk(r, msgs, sz, n, loss);		\
}
BATON__BULK_SIZED(8)
BATON__BULK_SIZED(16)
BATON__BULK_SIZED(32)
BATON__BULK_SIZED(64)
#undef BATON__BULK_SIZED

/* ---- waitsets (lib/waitset.c, Documentation/waitset.rst) ---- */

struct baton_epoch;
struct baton_waitset;

/* Objects one waitset holds at most: futex_waitv(2)'s limit. */
#define BATON_WAITSET_MAX	128

/* struct baton_waitset_event.events */
#define BATON_WS_READY	(1U << 0)	/* ring: message/room; epoch: quiescent */
#define BATON_WS_GONE	(1U << 1)	/* ring: peer gone (consumer: drained) */
#define BATON_WS_ERROR	(1U << 2)	/* corrupt ring, or the domain's errno */

/**
 * struct baton_waitset_event - one object a wait found ready
 * @cookie: what the object was added with
 * @events: BATON_WS_* bits
 * @index: its position in the set (order of adding, after removals)
 */
struct baton_waitset_event {
	uint64_t cookie;
	uint32_t events;
	int32_t index;
};

/**
 * baton_waitset_create() - an empty waitset
 * @out: the new set
 *
 * A waitset waits on up to BATON_WAITSET_MAX rings (either role, SPSC or
 * MPSC) and epoch domains of one backend at once. One thread uses it at a
 * time; an object in a set must not be parked on elsewhere meanwhile.
 *
 * Return: 0, -EINVAL, -ENOMEM.
 */
int baton_waitset_create(struct baton_waitset **out);

/**
 * baton_waitset_destroy() - free a set; its objects stay open
 * @ws: the set; NULL is a no-op
 *
 * Return: 0, or -EBADF (already destroyed: best effort, as for a ring
 * close).
 */
int baton_waitset_destroy(struct baton_waitset *ws);

/**
 * baton_waitset_add_ring() - wait for a ring to be ready
 * @ws: the set
 * @r: a consumer (ready: a message or a tombstone to take) or a producer
 *     (ready: room for one message) handle
 * @cookie: reported in events; unique in the set
 *
 * Return: 0, -EEXIST (cookie or ring already in), -ENOSPC (full),
 * -EXDEV (another backend than the set's), -EINVAL.
 */
int baton_waitset_add_ring(struct baton_waitset *ws, struct baton_ring *r,
			   uint64_t cookie);

/**
 * baton_waitset_add_epoch() - wait for an epoch to become quiescent
 * @ws: the set
 * @d: the domain
 * @epoch: ready once nothing retired at @epoch or before can be held
 *         (baton_epoch_poll() returns 0)
 * @cookie: as for baton_waitset_add_ring()
 *
 * Return: as baton_waitset_add_ring(); -EINVAL for a future @epoch.
 */
int baton_waitset_add_epoch(struct baton_waitset *ws, struct baton_epoch *d,
			    uint64_t epoch, uint64_t cookie);

/**
 * baton_waitset_remove() - take an object out by cookie
 * @ws: the set
 * @cookie: what the object was added with
 *
 * Return: 0, or -ENOENT, -EBADF, -EINVAL.
 */
int baton_waitset_remove(struct baton_waitset *ws, uint64_t cookie);

/**
 * baton_waitset_wait() - wait until some objects are ready
 * @ws: the set
 * @ev: filled with up to @max_events ready objects
 * @max_events: size of @ev
 * @timeout_ns: < 0 waits for ever, 0 only looks
 *
 * Readiness is read from shared memory: an event says "look now", and the
 * object may be taken meanwhile only by its own handle's thread. A ring
 * whose peer has gone reports BATON_WS_GONE (a consumer once drained; a
 * producer in place of READY, room or not), on memfd within about 5 ms of
 * the death.
 *
 * Return: the number of events (>= 1), -ETIMEDOUT, -EINTR, -EINVAL
 * (empty set, no room for events).
 */
int baton_waitset_wait(struct baton_waitset *ws,
		       struct baton_waitset_event *ev, uint32_t max_events,
		       int64_t timeout_ns);

/* ---- buffer pools (Documentation/pool.rst; both backends) ---- */

struct baton_pool;

/*
 * Since 2.7 a handle's inline allocation stores OWNED and checks the
 * module's reap word (Documentation/pool.rst, "Idle magazines"), and its
 * frees may leave buffers IDLE: every piece of code that calls the
 * inline forms on one handle must be built against this baton.h or a
 * later one (the handle opened by baton_pool_create/_open as this header
 * names them: __baton_pool_create_idle/_open_idle, below).
 *
 * The part of a pool handle the inline fast paths use (ABI since 2.2; the
 * rest of struct baton_pool is the library's). A magazine keeps buffers
 * this holder owns but nobody uses: allocation pops one and free pushes
 * one, plain loads and stores of memory only this handle touches, plus
 * the buffer's own descriptor and the pool's reap word. An empty magazine
 * on allocation, or a free that would fill it past @mag_cap, calls into
 * the library, which moves half a magazine to or from the shared free
 * queue.
 */
#define BATON_POOL_MAG		32	/* the most buffers a magazine keeps */

struct baton_pool_mag {
	uint32_t n;
	uint32_t reserved;
	uint64_t handle[BATON_POOL_MAG + 1];	/* each OWNED by us, as named */
};

struct baton_pool_cls {
	uint64_t *head;			/* the free queue (slow paths) */
	uint64_t *tail;
	struct baton_pool_qent *q;
	struct baton_pool_desc *desc;	/* one per buffer: owner, generation */
	uint8_t *base;			/* buffer 0 in this process */
	uint32_t shift;			/* log2 of the buffer size */
	uint32_t count;
	uint32_t qcap;
	uint32_t mag_cap;		/* a free past it flushes; 0: always */
	struct baton_pool_mag mag;
};

struct baton_pool_fast {
	uint32_t holder;		/* our index; descriptors say + 1 */
	uint32_t nr_classes;
	uint64_t owned;			/* BATON_POOL_STATE(0, OWNED, holder + 1) */
	struct baton_pool_cls cls[BATON_POOL_CLASSES_MAX];
	/* Since 2.7 (Documentation/pool.rst, "Idle magazines"): */
	uint64_t idle;			/* what a free leaves: IDLE, or @owned */
	const uint64_t *reap;		/* the module's reap word, or a 0 */
};

/* The fast paths' view of a handle: struct baton_pool begins with it. */
static inline struct baton_pool_fast *baton__pool_fast(const struct baton_pool *p)
{
	return (struct baton_pool_fast *)(uintptr_t)(const void *)p;
}

/**
 * struct baton_pool_params - the geometry of a new pool
 * @nr_classes: 1..BATON_POOL_CLASSES_MAX
 * @decay_ms: pages of a buffer free this long go back (0: never);
 *            BATON_POOL_DECAY_MIN_MS..BATON_POOL_DECAY_MAX_MS
 * @keep: buffers of each class the decay never takes
 * @max_holders: pool handles open at once (0: 64)
 * @mode: permission bits (0: 0600)
 * @classes: buffer size (log2, 12..22) and count of each class, sizes
 *           strictly increasing
 */
struct baton_pool_params {
	uint32_t nr_classes;
	uint32_t decay_ms;
	uint32_t keep;
	uint32_t max_holders;
	uint32_t mode;
	struct {
		uint32_t buf_shift;
		uint32_t count;
	} classes[BATON_POOL_CLASSES_MAX];
};

/**
 * struct baton_pool_info - a snapshot of a pool, as this handle sees it
 * @holder: this handle's holder index
 * @nr_classes: classes
 * @decay_ms: the decay age (0: never)
 * @classes: per class: buffer size, count, entries on the shared free
 *           queue (as netlink's FREE), buffers in this handle's magazine
 * @reclaimed: buffers the kernel returned for released holders
 * @repaired: queue entries the kernel settled for dead holders
 * @decayed: buffers whose pages the decay gave back
 * @decayed_bytes: their bytes
 * @bad_words: corrupt shared words the kernel saw
 * @cold: per class, buffers the decay gave back and took off the free
 *        queue (COLD, Documentation/pool.rst "Decay"), as netlink's COLD.
 *        Their stale entries stay on the queue, counted in free, until
 *        takers pass them: right after a decay the two overlap. Since 2.5;
 *        a binary built against an older baton.h gets the struct without
 *        it (baton_pool_info@LIBBATON_2.1)
 */
struct baton_pool_info {
	uint32_t holder;
	uint32_t nr_classes;
	uint32_t decay_ms;
	struct {
		uint64_t buf_size;
		uint64_t count;
		uint64_t free;
		uint64_t cached;
	} classes[BATON_POOL_CLASSES_MAX];
	uint64_t reclaimed;
	uint64_t repaired;
	uint64_t decayed;
	uint64_t decayed_bytes;
	uint64_t bad_words;
	uint64_t cold[BATON_POOL_CLASSES_MAX];
};

/*
 * Since 2.8 the handles whose frees leave IDLE come from the symbols this
 * header names, __baton_pool_create_idle and __baton_pool_open_idle: an
 * object compiled against an older baton.h, whose inline allocation
 * stores nothing, calls baton_pool_create/_open and gets OWNED
 * magazines, whichever library it is linked with (2.7 decided by the
 * link, so such an object linked with 2.7 got IDLE handles).
 */
#ifdef BATON__POOL_OUTLINE
#define BATON__POOL_IDLE_SYM(sym)
#else
#define BATON__POOL_IDLE_SYM(sym)	__asm__(sym)
#endif

/**
 * baton_pool_create() - create a named pool and open it as a holder
 * @name: the pool's name (the ring rules: 1..63 bytes of [A-Za-z0-9._-])
 * @params: its geometry, decay and mode
 * @pool: where the new handle goes
 *
 * The backend is the one BATON_BACKEND_AUTO resolves to. Each handle is
 * one holder: when it is closed every buffer it still owned goes back;
 * when its process dies, the module returns them at once, or on the memfd
 * backend the next holder that looks does (Documentation/pool.rst). A
 * create that fails leaves no name, also when only the mapping failed
 * (unless another process unlinked the name and made its own under it
 * in that window: that one goes instead).
 *
 * Return: 0, or -EEXIST (the name is taken), -EINVAL (geometry, name, or
 * $BATON_BACKEND; each refusal is logged, naming the field and the rule,
 * as for rings), -E2BIG (more than 256 GiB of buffers), -EDQUOT (kmod),
 * -ENOSPC (memfd: no room in /dev/shm), -EOPNOTSUPP (kmod: no /dev/baton,
 * or a module without pools), -EACCES (kmod: no access to /dev/baton),
 * -ENOMEM.
 */
int baton_pool_create(const char *name, const struct baton_pool_params *params,
		      struct baton_pool **pool)
	BATON__POOL_IDLE_SYM("__baton_pool_create_idle");

/**
 * baton_pool_open() - open an existing pool as one more holder
 * @name: the pool's name
 * @pool: where the new handle goes
 *
 * Return: 0, or -ENOENT, -EACCES (read and write permission are both
 * needed), -EMFILE (every holder index taken; memfd: or left by a dead
 * holder that nobody could repair within 10 ms, the repair lock held by a
 * stopped or slow holder, or with a claim a repair cannot settle yet),
 * -EPROTO (memfd: the file is not a pool of this ABI), -EOPNOTSUPP (kmod:
 * no /dev/baton, or a module without pools), -EINVAL (the name);
 * memfd: an errno of fcntl(2) (ENOLCK).
 */
int baton_pool_open(const char *name, struct baton_pool **pool)
	BATON__POOL_IDLE_SYM("__baton_pool_open_idle");

/**
 * baton_pool_unlink() - remove a pool's name
 * @name: the pool's name
 *
 * Open handles keep the pool; it is freed with the last of them.
 *
 * Return: 0, or -ENOENT, -EACCES, -EINVAL.
 */
int baton_pool_unlink(const char *name);

/**
 * baton_pool_close() - close a pool handle
 * @pool: the handle, or NULL
 *
 * Every buffer this handle still owns (its magazines included) goes back
 * to the pool: the module returns them at the release of the handle's
 * file, as for a holder that died; on memfd the library does it here.
 */
void baton_pool_close(struct baton_pool *pool);

/* The library's side of the fast paths below (not for direct use). */
int __baton_pool_alloc_slow(struct baton_pool *pool, size_t size,
			    uint64_t *handle);
int __baton_pool_free_slow(struct baton_pool *pool, uint64_t handle);
int __baton_pool_alloc_reaped(const struct baton_pool *pool);
/*
 * Since 2.10 (the 2.7 form above only waits): may set *@handle's buffer
 * aside and answer another in its place, when a memfd reap it waits on
 * has stopped (Documentation/pool.rst, "Idle magazines").
 */
int __baton_pool_alloc_during_reap(struct baton_pool *pool, uint64_t *handle);

static inline uint32_t baton__pool_next_gen(uint32_t gen)
{
	return gen + 1 ? gen + 1 : 1;
}

static inline void *baton__pool_ptr_inline(const struct baton_pool *pool,
					   uint64_t handle);

/*
 * The allocation of baton_pool_alloc() and baton_pool_alloc_buf(): a pop
 * from the magazine of the smallest class that fits. @buf NULL: no
 * address wanted (the compiler drops its lines). A popped handle is ours
 * and well-formed (the library checked it when it came in), so its
 * address needs no check; a handle from a slow path gets the checked
 * baton_pool_ptr()'s.
 */
static inline __attribute__((always_inline)) int
baton__pool_alloc_at(struct baton_pool *pool, size_t size, uint64_t *handle,
		     void **buf)
{
	struct baton_pool_fast *f = baton__pool_fast(pool);
	struct baton_pool_cls *c;
	uint64_t h;
	uint32_t i;
	int rc;

	if (!pool || !handle) {
		if (buf)
			*buf = (void *)0;
		return -22; /* -EINVAL, without pulling in <errno.h> */
	}
	for (i = 0; i < f->nr_classes; i++) {
		c = &f->cls[i];
		if (size > (size_t)1 << c->shift)
			continue;
		if (!c->mag.n)
			break;
		/* Ours with this generation (IDLE, or OWNED) since it came in. */
		h = c->mag.handle[--c->mag.n];
		*handle = h;
		if (f->idle == f->owned)
			goto popped;	/* OWNED already: no decay reaps it */
		/*
		 * Y13, matches the decay's reap: OWNED, then the reap word. A
		 * store then a load with no fence: the module's barrier on
		 * our CPU orders them for it, and the compiler keeps them.
		 */
		__atomic_store_n(&c->desc[BATON_POOL_H_INDEX(h)].state,
				 (h & 0xffffffff00000000ULL) | f->owned,
				 __ATOMIC_RELAXED);
		baton__store_then_load();
		if (__atomic_load_n(f->reap, __ATOMIC_RELAXED)) {
			/* May answer another buffer: its address below. */
			rc = __baton_pool_alloc_during_reap(pool, handle);
			goto slow;
		}
popped:
		if (buf)
			*buf = c->base + ((size_t)BATON_POOL_H_INDEX(h) << c->shift);
		return 0;
	}
	rc = __baton_pool_alloc_slow(pool, size, handle);
slow:
	if (buf)
		*buf = rc ? (void *)0 : baton__pool_ptr_inline(pool, *handle);
	return rc;
}

static inline __attribute__((always_inline)) int
baton__pool_alloc_inline(struct baton_pool *pool, size_t size, uint64_t *handle)
{
	return baton__pool_alloc_at(pool, size, handle, (void **)0);
}

static inline __attribute__((always_inline)) int
baton__pool_free_inline(struct baton_pool *pool, uint64_t handle)
{
	struct baton_pool_fast *f = baton__pool_fast(pool);
	uint32_t cls = BATON_POOL_H_CLASS(handle), gen = BATON_POOL_H_GEN(handle);
	struct baton_pool_desc *d;
	struct baton_pool_cls *c;
	uint64_t owned;
	uint32_t n;

	/*
	 * Anything unusual (no room, a handle not plainly well-formed, the
	 * last generation before the wrap) takes the library's path, which
	 * checks everything again and says which errno.
	 */
	if (!pool || (handle & BATON_POOL_H_RESERVED) || !gen ||
	    gen == 0xffffffffU || cls >= f->nr_classes)
		return __baton_pool_free_slow(pool, handle);
	c = &f->cls[cls];
	n = c->mag.n;
	if (BATON_POOL_H_INDEX(handle) >= c->count || n >= c->mag_cap)
		return __baton_pool_free_slow(pool, handle);
	d = &c->desc[BATON_POOL_H_INDEX(handle)];
	owned = (handle & 0xffffffff00000000ULL) | f->owned;
	/* Acquire: whatever its sender or last owner wrote is done with. */
	if (__atomic_load_n(&d->state, __ATOMIC_ACQUIRE) != owned)
		return -116; /* -ESTALE */
	/*
	 * Still ours, IDLE in the magazine (or OWNED, when the module does
	 * not reap magazines); the old handle is stale from here.
	 */
	__atomic_store_n(&d->state,
			 ((handle & 0xffffffff00000000ULL) + (1ULL << 32)) |
				 f->idle,
			 __ATOMIC_RELEASE);
	c->mag.handle[n] = handle + (1ULL << 32);
	c->mag.n = n + 1;
	return 0;
}

static inline void *baton__pool_ptr_inline(const struct baton_pool *pool,
					   uint64_t handle)
{
	const struct baton_pool_fast *f = baton__pool_fast(pool);
	uint32_t cls = BATON_POOL_H_CLASS(handle);

	if (!pool || (handle & BATON_POOL_H_RESERVED) ||
	    !BATON_POOL_H_GEN(handle) || cls >= f->nr_classes ||
	    BATON_POOL_H_INDEX(handle) >= f->cls[cls].count)
		return NULL;
	return f->cls[cls].base +
	       ((size_t)BATON_POOL_H_INDEX(handle) << f->cls[cls].shift);
}

/**
 * baton_pool_alloc_buf() - a buffer and its address, no system call
 * @pool: a pool handle
 * @size: bytes needed
 * @handle: where the buffer's handle goes
 * @buf: where its address in this process goes
 *
 * baton_pool_alloc() and baton_pool_ptr() in one: the handle to send, the
 * address to write at. From the magazine, the address needs no check
 * (the handle is ours and was checked when it came in), so this costs
 * less than the two calls. Inline, since 2.10.2 (a header-only form:
 * libbaton exports no symbol for it).
 *
 * Return: 0, or baton_pool_alloc()'s errors (*@buf NULL then).
 */
static inline __attribute__((always_inline)) int
baton_pool_alloc_buf(struct baton_pool *pool, size_t size, uint64_t *handle,
		     void **buf)
{
	if (!buf)
		return -22; /* -EINVAL */
	return baton__pool_alloc_at(pool, size, handle, buf);
}

/**
 * baton_pool_alloc_wait() - a buffer, waiting for one if the class is empty
 * @pool: a pool handle
 * @size: bytes needed
 * @handle: where the buffer's handle goes
 * @timeout_ns: < 0 waits for ever, 0 only looks
 *
 * As baton_pool_alloc(), but an empty class parks the caller until a
 * buffer reaches the class's free queue: another holder's flush or close,
 * or the return of a dead holder's buffers. Buffers that sit in other
 * holders' magazines are not seen. The wake costs the freer one system
 * call per flush while someone is parked; nothing otherwise. Not a thread
 * cancellation point: a timeout, or a signal (-EINTR), ends the wait
 * (Documentation/pool.rst).
 *
 * Return: 0, or -ETIMEDOUT, -EINTR, and baton_pool_alloc()'s other errors.
 */
int baton_pool_alloc_wait(struct baton_pool *pool, size_t size,
			  uint64_t *handle, int64_t timeout_ns);

#ifdef BATON__POOL_OUTLINE
/* lib/pool.c: the exported forms, for binaries built against 2.1. */
int baton_pool_alloc(struct baton_pool *pool, size_t size, uint64_t *handle);
int baton_pool_free(struct baton_pool *pool, uint64_t handle);
void *baton_pool_ptr(const struct baton_pool *pool, uint64_t handle);
#else
/**
 * baton_pool_alloc() - a buffer of at least @size bytes, no system call
 * @pool: a pool handle
 * @size: bytes needed
 * @handle: where the buffer's handle goes
 *
 * From the smallest class that fits. The buffer's contents are what its
 * last holder left, or zeros after the decay gave its pages back. Inline:
 * a pop from the handle's magazine; an empty one calls the library.
 *
 * Return: 0, or -E2BIG (no class is that large), -ENOMEM (that class has
 * no free buffer now), -EINVAL, -EBADF (a handle inherited across fork()).
 */
static inline __attribute__((always_inline)) int
baton_pool_alloc(struct baton_pool *pool, size_t size, uint64_t *handle)
{
	return baton__pool_alloc_inline(pool, size, handle);
}

/**
 * baton_pool_free() - give a buffer back, no system call
 * @pool: the handle that owns the buffer
 * @handle: the buffer's handle
 *
 * Inline: a push to the handle's magazine; a full one calls the library.
 *
 * Return: 0, or -EINVAL for a forged handle, -ESTALE for one this handle
 * does not own (freed already, sent, or another holder's); nothing is
 * touched then. -EBADF for a pool handle inherited across fork().
 */
static inline __attribute__((always_inline)) int
baton_pool_free(struct baton_pool *pool, uint64_t handle)
{
	return baton__pool_free_inline(pool, handle);
}

/**
 * baton_pool_ptr() - the buffer's address in this process
 * @pool: a pool handle
 * @handle: a buffer handle
 *
 * Checks the class and index against the pool's geometry, not the
 * generation: see baton_pool_check().
 *
 * Return: the address, or NULL for a forged handle (or a pool handle
 * inherited across fork()).
 */
static inline void *baton_pool_ptr(const struct baton_pool *pool,
				   uint64_t handle)
{
	return baton__pool_ptr_inline(pool, handle);
}
#endif

/**
 * baton_pool_buf_size() - the size of a buffer (its class's)
 * @pool: a pool handle
 * @handle: a buffer handle
 *
 * Return: the size in bytes, or 0 for a forged handle.
 */
size_t baton_pool_buf_size(const struct baton_pool *pool, uint64_t handle);

/**
 * baton_pool_check() - whether a handle's buffer is still allocated
 * @pool: a pool handle
 * @handle: a buffer handle
 *
 * Return: 0 while the buffer is allocated under this generation, -ESTALE
 * once it was freed, -EINVAL for a forged handle.
 */
int baton_pool_check(const struct baton_pool *pool, uint64_t handle);

/**
 * baton_pool_info() - a snapshot of the pool as this handle sees it
 * @pool: a pool handle
 * @info: filled in
 *
 * Return: 0, or -EINVAL.
 */
int baton_pool_info(const struct baton_pool *pool,
		    struct baton_pool_info *info);

/**
 * baton_pool_give() - hand an owned buffer over (SENT)
 * @pool: the handle that owns it
 * @handle: the buffer's handle
 *
 * The caller no longer owns the buffer, and its death does not take it
 * back: the buffer is in flight until baton_pool_take(). For a transport
 * of your own: give after the publication that carries the handle, so
 * that a death before it leaves the buffer to be taken back
 * (Documentation/pool.rst, "Handles through a ring").
 *
 * Return: 0, or -ESTALE (not owned by this handle), -EINVAL.
 */
int baton_pool_give(struct baton_pool *pool, uint64_t handle);

/**
 * baton_pool_take() - make a SENT buffer the caller's
 * @pool: the receiving handle
 * @handle: the buffer's handle
 *
 * Return: 0, or -ESTALE (not in flight under this generation), -EINVAL.
 */
int baton_pool_take(struct baton_pool *pool, uint64_t handle);

/**
 * baton_pool_send() - push (handle, len) through a ring and give the buffer
 * @ring: a producer handle of an SPSC or MPSC ring, slots >= 16 bytes
 * @pool: the handle that owns the buffer
 * @handle: the buffer's handle
 * @len: the bytes of it that matter, for the receiver
 * @timeout_ns: as for baton_spsc_push(); < 0 waits forever
 *
 * One message per buffer, so variable-size messages need no framing. The
 * give comes after the push: a sender killed in between leaves a buffer
 * that goes back to the pool, and its receiver gets -ESTALE. On the
 * kernel-module backend the first send of a pool's buffer through a ring
 * handle binds the ring to the pool (one system call), so that buffers
 * still in flight when the ring is destroyed go back to the pool; on
 * memfd the pool handle opens a watch on the ring's file instead (one
 * fd, until it finds the ring without name and consumer, or closes)
 * (Documentation/pool.rst, "A ring nobody reads again").
 *
 * Return: 0, or the ring's error with the buffer still the caller's,
 * or -ESTALE, -EINVAL, -ENOSPC (the ring keeps BATON_RING_POOLS_MAX other
 * pools; the buffer is still the caller's).
 */
int baton_pool_send(struct baton_ring *ring, struct baton_pool *pool,
		    uint64_t handle, uint64_t len, int64_t timeout_ns);

/**
 * baton_pool_recv() - take the buffer a ring's next message names
 * @ring: a consumer handle of an SPSC or MPSC ring, slots >= 16 bytes
 * @pool: the receiving handle
 * @handle: where the buffer's handle goes
 * @len: where its length goes
 * @timeout_ns: as for baton_spsc_pop(); < 0 waits forever
 *
 * Peeks the message, takes the buffer (waiting while its sender is between
 * its push and its give), then releases the slot: a receiver killed before
 * the take leaves message and buffer to the ring's next consumer. A
 * message that is there and given reads no clock: the timeout runs from
 * the first wait. On a memfd pool with decay_ms, a long wait comes out
 * once a decay period, ten times, for the pool's decay and repair, which
 * that backend runs only from its holders' calls (since 2.10.2).
 *
 * Return: 0, or the ring's error (-EPIPE: end of stream, -ETIMEDOUT:
 * nothing consumed), or -ESTALE when the message named a buffer that was
 * not in flight (the message is consumed).
 */
int baton_pool_recv(struct baton_ring *ring, struct baton_pool *pool,
		    uint64_t *handle, uint64_t *len, int64_t timeout_ns);

/*
 * Fan-out (Documentation/pool.rst, "Fan-out"): one buffer to several
 * readers, back to the pool when the last is done with it, a dead
 * reader counting as done. Readers are named by their pool handles'
 * holder indices (struct baton_pool_info's holder), which must be below
 * BATON_POOL_SHARE_MAX (32); one bit, so one message, per reader.
 */

/**
 * baton_pool_share() - give an owned buffer to the readers in a mask
 * @pool: the handle that owns it
 * @handle: the buffer's handle
 * @readers: bit k: the holder with index k reads it (k < 32 and below the
 *           pool's max_holders), non-zero
 *
 * The caller no longer owns the buffer; each reader gives its part back
 * with baton_pool_put(), and the module (memfd: the next repair) gives up
 * the part of a reader whose pool handle is closed or whose process dies.
 * For a transport of your own: share after every message that carries
 * the handle is published, so that a death before the share leaves the
 * buffer to be taken back. A bit naming an index nobody holds, or whose
 * holder never learns of the buffer, keeps it until that index's next
 * holder closes; baton_pool_send_shared() guards against readers that die
 * while it sends.
 *
 * Return: 0, or -ESTALE (not owned by this handle), -EINVAL (a bad
 * handle, an empty mask or a bit out of range), -EOPNOTSUPP (the module
 * lacks BATON_FEAT_POOL_SHARE), -EBADF (a handle inherited across fork()).
 */
int baton_pool_share(struct baton_pool *pool, uint64_t handle,
		     uint64_t readers);

/**
 * baton_pool_put() - a reader is done with a shared buffer
 * @pool: the reader's pool handle (its holder index is its bit)
 * @handle: the buffer's handle
 *
 * Clears the reader's bit: no system call, a compare-and-swap that
 * retries only when another reader's put landed first. The last reader's
 * put frees the buffer as baton_pool_free() does (its magazine; when that
 * is full, the library's slow path).
 *
 * Return: 0, or -ESTALE (not shared with this holder under this
 * generation: put already, or never a reader), -EINVAL, -EBADF, or an
 * error of the last put's free.
 */
int baton_pool_put(struct baton_pool *pool, uint64_t handle);

/**
 * struct baton_pool_reader - one reader of baton_pool_send_shared()
 * @ring: a producer handle of an SPSC or MPSC ring whose consumer reads
 *        with baton_pool_recv_shared(); slots >= 16 bytes
 * @holder: the reader's holder index in the pool (below 32)
 * @reserved: 0
 */
struct baton_pool_reader {
	struct baton_ring *ring;
	uint32_t holder;
	uint32_t reserved;
};

/**
 * baton_pool_send_shared() - push (handle, len) to every reader, then share
 * @pool: the handle that owns the buffer
 * @handle: the buffer's handle
 * @len: the bytes of it that matter, for the readers
 * @readers: @n readers, each with its own ring and a distinct holder
 * @n: 1..32
 * @timeout_ns: for each push, as for baton_spsc_push() (so the whole call
 *              may wait n times as long); < 0 waits forever
 * @got: may be NULL; bit i set when readers[i] got the message
 *
 * Pushes to every reader (a push that fails skips that reader, not the
 * rest), then shares the buffer with those that got it: a sender killed
 * before the share leaves a buffer that goes back to the pool, and its
 * readers get -ESTALE. A reader whose handle was released while the
 * pushes ran has its part given up here (Documentation/pool.rst,
 * "Fan-out").
 *
 * Return: 0, or the first push's error (the buffer is shared with the
 * readers in *@got; if none, it is still the caller's); -EINVAL (a NULL
 * ring, slots under 16 bytes, a holder out of range or named twice,
 * reserved not 0), -ESTALE, -EOPNOTSUPP, -EBADF as baton_pool_share().
 */
int baton_pool_send_shared(struct baton_pool *pool, uint64_t handle,
			   uint64_t len,
			   const struct baton_pool_reader *readers, uint32_t n,
			   int64_t timeout_ns, uint32_t *got);

/**
 * baton_pool_recv_shared() - the shared buffer a ring's next message names
 * @ring: a consumer handle of an SPSC or MPSC ring, slots >= 16 bytes
 * @pool: the reader's pool handle
 * @handle: where the buffer's handle goes
 * @len: where its length goes
 * @timeout_ns: as for baton_spsc_pop(); < 0 waits forever
 *
 * Waits (spinning, then yielding) while the sender is between its push
 * and its share, then releases the slot. On 0 the buffer is readable
 * (baton_pool_ptr()) until this reader's baton_pool_put(); the caller
 * must not write it. A ring carries messages of one kind: a message of
 * baton_pool_send() read here is consumed as -ESTALE and its buffer stays
 * in flight for good, as a shared one read by baton_pool_recv() keeps
 * this reader's part until its handle closes.
 *
 * Return: 0, or the ring's error, -ETIMEDOUT (nothing consumed: the
 * ring's wait or the wait for the share), or -ESTALE when the message
 * named a buffer not shared with this holder (the message is consumed).
 */
int baton_pool_recv_shared(struct baton_ring *ring, struct baton_pool *pool,
			   uint64_t *handle, uint64_t *len,
			   int64_t timeout_ns);

#ifdef __cplusplus
}
#endif

#include "baton_epoch.h"	/* epoch domains */

#endif /* BATON_H */
