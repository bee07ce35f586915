/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note OR MIT */
/*
 * baton: shared-memory rings between processes, behind /dev/baton.
 *
 * This is the one ABI header. The module (kmod/) and the library (lib/)
 * both include it; nothing else describes the ABI. Documentation/abi.rst
 * explains it in prose; the kernel-doc comments here are the reference.
 *
 * Conventions (Documentation/process/botching-up-ioctls.rst):
 *  - every ioctl takes a pointer to a struct whose first field is @size
 *    (the caller's sizeof) and whose second is @flags;
 *  - structs are read with copy_struct_from_user(): a @size below the
 *    first published version is EINVAL, a larger @size whose unknown tail
 *    is not all zero is E2BIG, a larger @size with a zero tail is accepted;
 *  - a @size above the page size (4096) is E2BIG whatever the tail holds,
 *    as for clone3();
 *  - fields named reserved must be 0 (EINVAL otherwise), unknown flag bits
 *    are EINVAL, fields named out_* are written by the kernel;
 *  - outputs are copied back for min(@size, kernel's sizeof) bytes.
 */
#ifndef _UAPI_LINUX_BATON_H
#define _UAPI_LINUX_BATON_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define BATON_DEVICE		"/dev/baton"
#define BATON_ABI_VERSION	1

/* Names: 1..63 bytes of [A-Za-z0-9._-], NUL-terminated within the array. */
#define BATON_NAME_MAX		64

/* Feature bits reported by BATON_IOC_VERSION in out_features. */
#define BATON_FEAT_RING_SPSC	(1ULL << 0)	/* BATON_RING_SPSC rings */
#define BATON_FEAT_PARK		(1ULL << 1)	/* BATON_RING_IOC_PARK/WAKE */
#define BATON_FEAT_POLL		(1ULL << 2)	/* poll/epoll on ring fds */
#define BATON_FEAT_PEER_DEATH	(1ULL << 3)	/* EPIPE / end-of-stream */
#define BATON_FEAT_ROLE_MMAP	(1ULL << 4)	/* role-scoped mappings */

/* Ring kinds (struct baton_ring_create.kind). */
#define BATON_RING_SPSC		1

/* Roles carried by a ring fd. */
#define BATON_ROLE_PRODUCER	1
#define BATON_ROLE_CONSUMER	2

/* Geometry limits (EINVAL outside them). */
#define BATON_SLOTS_MIN		2		/* power of two */
#define BATON_SLOTS_MAX		(1U << 20)	/* power of two */
#define BATON_SLOT_SIZE_MIN	8		/* multiple of 8 */
#define BATON_SLOT_SIZE_MAX	65536		/* multiple of 8 */
#define BATON_RING_BYTES_MAX	(256U << 20)	/* slot_count * slot_size */

/**
 * struct baton_version - BATON_IOC_VERSION
 * @size: sizeof(struct baton_version)
 * @flags: must be 0
 * @out_abi_version: BATON_ABI_VERSION of the running module
 * @out_reserved: written as 0
 * @out_features: BATON_FEAT_* bits
 */
struct baton_version {
	__u32 size;
	__u32 flags;
	__u32 out_abi_version;
	__u32 out_reserved;
	__aligned_u64 out_features;
};
#define BATON_VERSION_SIZE_VER0	24

/**
 * struct baton_ring_offsets - where each part of a ring lives in the mmap
 *
 * A ring fd is mapped one region per mmap() call: pass a region's
 * *_mmap value as the mmap offset and at most its *_size as the length.
 * Word offsets (prod_tail ...) are byte offsets inside their region.
 * Nothing about the layout is fixed by the ABI except struct
 * baton_ring_hdr at offset 0 of the header region.
 *
 *  region   producer fd   consumer fd   written by
 *  hdr      read          read          the kernel only
 *  prod     read/write    read          producer (tail, prod waiting flag)
 *  cons     read          read/write    consumer (head, cons waiting flag)
 *  slots    read/write    read          producer
 *
 * @hdr_mmap: mmap offset of the header region
 * @prod_mmap: mmap offset of the producer control page
 * @cons_mmap: mmap offset of the consumer control page
 * @slots_mmap: mmap offset of the slot array
 * @hdr_size: length of the header region in bytes (page multiple)
 * @prod_size: length of the producer region in bytes (page multiple)
 * @cons_size: length of the consumer region in bytes (page multiple)
 * @reserved0: 0
 * @slots_size: length of the slot region in bytes (page multiple)
 * @prod_tail: u64 producer index, free running, in the prod region
 * @prod_waiting: u32 waiting word of the producer (BATON_WAIT_* below)
 * @cons_head: u64 consumer index, free running, in the cons region
 * @cons_waiting: u32 waiting word of the consumer (BATON_WAIT_* below)
 * @seq_mmap: MPSC only (0 otherwise): mmap offset of the u64 sequence array
 * @claim_mmap: MPSC only: mmap offset of the claim region; a producer fd
 *              maps its own claim page there (struct baton_mpsc_claim)
 * @seq_size: MPSC only: length of the sequence region (page multiple)
 * @claim_size: MPSC only: length of one claim mapping (one page)
 * @mpsc_hdr: MPSC only: byte offset of struct baton_mpsc_hdr in the
 *            header region
 * @reserved1: 0
 */
struct baton_ring_offsets {
	__aligned_u64 hdr_mmap;
	__aligned_u64 prod_mmap;
	__aligned_u64 cons_mmap;
	__aligned_u64 slots_mmap;
	__u32 hdr_size;
	__u32 prod_size;
	__u32 cons_size;
	__u32 reserved0;
	__aligned_u64 slots_size;
	__u32 prod_tail;
	__u32 prod_waiting;
	__u32 cons_head;
	__u32 cons_waiting;
	__aligned_u64 seq_mmap;
	__aligned_u64 claim_mmap;
	__u32 seq_size;
	__u32 claim_size;
	__u32 mpsc_hdr;
	__u32 reserved1;
};

/**
 * struct baton_ring_create - BATON_IOC_RING_CREATE on /dev/baton
 * @size: sizeof(struct baton_ring_create)
 * @flags: must be 0
 * @kind: BATON_RING_SPSC or BATON_RING_MPSC
 * @role: BATON_ROLE_PRODUCER or BATON_ROLE_CONSUMER, the role of the
 *        returned fd
 * @slot_count: power of two in [BATON_SLOTS_MIN, BATON_SLOTS_MAX]
 * @slot_size: multiple of 8 in [BATON_SLOT_SIZE_MIN, BATON_SLOT_SIZE_MAX];
 *             slot_count * slot_size at most BATON_RING_BYTES_MAX
 * @mode: permission bits; bits outside 0777 are EINVAL; owner and group
 *        are the caller's fsuid and fsgid
 * @max_producers: 0 or 1 for SPSC; 1..BATON_MPSC_PRODUCERS_MAX for MPSC
 * @name: the ring's name, see BATON_NAME_MAX
 * @reserved: 0
 * @out_fd: the new ring fd (O_CLOEXEC)
 * @out_reserved: written as 0
 * @out_off: the mmap layout
 *
 * Errors besides EINVAL (Documentation/limits.rst):
 *  - EEXIST: the name is taken in the caller's IPC namespace (the same
 *    name in another namespace is another ring);
 *  - EDQUOT: the caller's fsuid, the ring's owner, already owns the
 *    module parameter max_objects_per_user rings, domains and pools, or the
 *    ring's pages would take it past max_bytes_per_user; CAP_SYS_RESOURCE
 *    in the initial user namespace bypasses both caps. Nothing the caller
 *    owns already is affected;
 *  - ENOMEM: out of memory, including the memory.max of the caller's
 *    memory cgroup, which is charged for the ring (never an OOM kill).
 */
struct baton_ring_create {
	__u32 size;
	__u32 flags;
	__u32 kind;
	__u32 role;
	__u32 slot_count;
	__u32 slot_size;
	__u32 mode;
	__u32 max_producers;
	char name[BATON_NAME_MAX];
	__aligned_u64 reserved[2];
	__s32 out_fd;
	__u32 out_reserved;
	struct baton_ring_offsets out_off;
};
#define BATON_RING_CREATE_SIZE_VER0	224

/**
 * struct baton_ring_open - BATON_IOC_RING_OPEN on /dev/baton
 * @size: sizeof(struct baton_ring_open)
 * @flags: must be 0
 * @role: BATON_ROLE_PRODUCER or BATON_ROLE_CONSUMER; the producer role
 *        needs write permission on the ring, the consumer role read
 *        permission (EACCES)
 * @reserved0: 0
 * @name: the ring's name; ENOENT unless a ring of that name was created
 *        in the caller's IPC namespace
 * @reserved: 0
 * @out_fd: the new ring fd (O_CLOEXEC)
 * @out_kind: the ring's kind
 * @out_slot_count: the ring's slot count
 * @out_slot_size: the ring's slot size
 * @out_off: the mmap layout
 */
struct baton_ring_open {
	__u32 size;
	__u32 flags;
	__u32 role;
	__u32 reserved0;
	char name[BATON_NAME_MAX];
	__aligned_u64 reserved[2];
	__s32 out_fd;
	__u32 out_kind;
	__u32 out_slot_count;
	__u32 out_slot_size;
	struct baton_ring_offsets out_off;
};
#define BATON_RING_OPEN_SIZE_VER0	216

/**
 * struct baton_unlink - BATON_IOC_UNLINK on /dev/baton
 * @size: sizeof(struct baton_unlink)
 * @flags: 0 or BATON_UNLINK_IPC_NS
 * @name: the name to remove; open fds and mappings keep the ring alive
 * @ipc_ns: with BATON_UNLINK_IPC_NS, the inode number of the IPC namespace
 *	to look @name up in (as /proc/PID/ns/ipc and the netlink ALL_NS
 *	dumps show it); otherwise 0
 * @reserved: 0
 *
 * Only the ring's owner (fsuid) or a caller with CAP_SYS_ADMIN in the
 * user namespace may unlink (EACCES). Names are looked up in the caller's
 * IPC namespace only: a ring of another namespace is ENOENT.
 * BATON_UNLINK_IPC_NS is for an administrator cleaning up objects left in
 * a namespace whose processes are gone: it needs CAP_SYS_ADMIN in the
 * initial user namespace (EPERM), a non-zero @ipc_ns (EINVAL), and is
 * ENOENT when no namespace of that number holds @name. The ring's
 * memory stays charged to its owner (EDQUOT caps, memory cgroup) until
 * it is freed, after its last fd and mapping are gone, not at unlink.
 */
/* struct baton_unlink.flags */
#define BATON_UNLINK_IPC_NS	(1U << 0)	/* @ipc_ns names the namespace */

struct baton_unlink {
	__u32 size;
	__u32 flags;
	char name[BATON_NAME_MAX];
	__aligned_u64 ipc_ns;
	__aligned_u64 reserved;
};
#define BATON_UNLINK_SIZE_VER0	88

/*
 * The waiting words (@prod_waiting and @cons_waiting above; for the
 * producers of an MPSC ring on kmod, struct baton_mpsc_hdr.prod_waiting).
 * The peer's fast path loads the word after its index store (E) and makes
 * the wake call iff (word & BATON_WAIT_MASK) != 0.
 *  - BATON_WAIT_PARKED: a park of that side is armed. kmod: the kernel
 *    sets it in PARK (then F, G) and takes it down in the first WAKE that
 *    finds it, under the wait-queue lock; a parker that must sleep on
 *    re-arms (store, F, G) before it does. One WAKE per arm.
 *  - BATON_WAIT_POLL: a poll or epoll of that side is armed. kmod: the
 *    kernel sets it in ->poll (then F, G) whenever it is down, whatever
 *    the readiness, and takes it down in the WAKE that wakes the pollers;
 *    epoll's re-poll after that wake arms it again. A park never touches
 *    it, so a blocking call cannot take an epoll arm down.
 *  - bits 2..31: a generation the memfd backend keeps (its futex word);
 *    0 on kmod. Never a reason to wake.
 */
#define BATON_WAIT_PARKED	(1U << 0)
#define BATON_WAIT_POLL		(1U << 1)
#define BATON_WAIT_MASK		(BATON_WAIT_PARKED | BATON_WAIT_POLL)

/* struct baton_park.flags */
#define BATON_PARK_DEADLINE	(1U << 0)	/* deadline_ns is valid */

/**
 * struct baton_park - BATON_RING_IOC_PARK on a ring fd
 * @size: sizeof(struct baton_park)
 * @flags: BATON_PARK_DEADLINE or 0
 * @expected: the caller's own index: the consumer's head, or the
 *            producer's tail. The consumer sleeps while the published
 *            tail equals @expected; the producer sleeps while
 *            @expected - head equals the slot count (the ring is full).
 *            Like FUTEX_WAIT, the comparison and the sleep are atomic
 *            with respect to BATON_RING_IOC_WAKE, so no wakeup is lost.
 * @deadline_ns: absolute CLOCK_MONOTONIC time; with BATON_PARK_DEADLINE
 *               the call fails with ETIMEDOUT once it passes; ignored
 *               without the flag
 * @reserved: 0
 *
 * Returns 0 when the condition no longer holds (or a spurious wake
 * happened: callers re-check), EPIPE when the peer role has gone (for
 * the consumer only once the ring is drained: end of stream), ETIMEDOUT,
 * EPROTO when the shared indices are inconsistent (a scribbled page),
 * and EINTR, or a restart, on a signal.
 *
 * The kernel sets BATON_WAIT_PARKED in the caller's waiting word itself,
 * makes it visible to the peer's CPUs (barrier F/G below), and takes it
 * down before returning (or in the peer's WAKE, which then wakes it).
 */
struct baton_park {
	__u32 size;
	__u32 flags;
	__aligned_u64 expected;
	__aligned_u64 deadline_ns;
	__aligned_u64 reserved[2];
};
#define BATON_PARK_SIZE_VER0	40

/**
 * struct baton_ring_info - BATON_RING_IOC_INFO on a ring fd
 * @size: sizeof(struct baton_ring_info)
 * @flags: must be 0
 * @out_kind: the ring's kind
 * @out_role: this fd's role
 * @out_slot_count: slot count
 * @out_slot_size: slot size
 * @out_producers: producer fds attached now
 * @out_consumers: consumer fds attached now
 * @out_head: consumer index, sampled
 * @out_tail: producer index, sampled
 * @out_off: the mmap layout
 */
struct baton_ring_info {
	__u32 size;
	__u32 flags;
	__u32 out_kind;
	__u32 out_role;
	__u32 out_slot_count;
	__u32 out_slot_size;
	__u32 out_producers;
	__u32 out_consumers;
	__aligned_u64 out_head;
	__aligned_u64 out_tail;
	struct baton_ring_offsets out_off;
};
#define BATON_RING_INFO_SIZE_VER0	152

/* struct baton_ring_hdr.state bits, set by the kernel */
#define BATON_STATE_PRODUCER_GONE	(1U << 0)	/* last producer released */
#define BATON_STATE_CONSUMER_GONE	(1U << 1)	/* last consumer released */

#define BATON_RING_MAGIC	0x4e4f544142ULL		/* "BATON" */

/**
 * struct baton_ring_hdr - offset 0 of the header region, read-only to users
 *
 * Written only by the kernel (or, on the memfd backend, by the library at
 * create time). Counters count events the kernel sees on the slow path;
 * messages moved are the free-running indices themselves, so the fast
 * path writes nothing extra.
 *
 * @magic: BATON_RING_MAGIC
 * @abi_version: BATON_ABI_VERSION
 * @kind: ring kind
 * @slot_count: slot count
 * @slot_size: slot size
 * @state: BATON_STATE_* bits
 * @parks_full: producer park calls that found the ring full
 * @parks_empty: consumer park calls that found the ring empty
 * @wakes_of_producer: wake calls that targeted the producer side
 * @wakes_of_consumer: wake calls that targeted the consumer side
 * @producer_deaths: producer files released (closed or died)
 * @consumer_deaths: consumer files released (closed or died)
 * @off: the layout, for backends where no ioctl returns it
 * @poll_arms_of_producer: times a producer's poll raised BATON_WAIT_POLL
 * @poll_arms_of_consumer: times the consumer's poll raised BATON_WAIT_POLL
 * @rearms_of_producer: producer parks re-armed after a WAKE that took
 *                      their flag down without satisfying them
 * @rearms_of_consumer: the same for consumer parks
 *
 * Every WAKE call the fast path makes follows an arm: with one waking
 * thread, wakes_of_consumer <= parks_empty + rearms_of_consumer +
 * poll_arms_of_consumer, and the same for the producer side (kmod; an
 * MPSC producer whose slot is still taken stays armed across WAKEs).
 */
struct baton_ring_hdr {
	__aligned_u64 magic;
	__u32 abi_version;
	__u32 kind;
	__u32 slot_count;
	__u32 slot_size;
	__u32 state;
	__u32 reserved0;
	__aligned_u64 parks_full;
	__aligned_u64 parks_empty;
	__aligned_u64 wakes_of_producer;
	__aligned_u64 wakes_of_consumer;
	__aligned_u64 producer_deaths;
	__aligned_u64 consumer_deaths;
	struct baton_ring_offsets off;
	__aligned_u64 poll_arms_of_producer;
	__aligned_u64 poll_arms_of_consumer;
	__aligned_u64 rearms_of_producer;
	__aligned_u64 rearms_of_consumer;
};

#define BATON_IOC_MAGIC		0xBA

/* on /dev/baton */
#define BATON_IOC_VERSION	_IO(BATON_IOC_MAGIC, 0x00)
#define BATON_IOC_RING_CREATE	_IO(BATON_IOC_MAGIC, 0x01)
#define BATON_IOC_RING_OPEN	_IO(BATON_IOC_MAGIC, 0x02)
#define BATON_IOC_UNLINK	_IO(BATON_IOC_MAGIC, 0x03)

/* on a ring fd */
#define BATON_RING_IOC_PARK	_IO(BATON_IOC_MAGIC, 0x40)
#define BATON_RING_IOC_WAKE	_IO(BATON_IOC_MAGIC, 0x41) /* arg must be 0 */
#define BATON_RING_IOC_INFO	_IO(BATON_IOC_MAGIC, 0x42)

/*
 * The memory-ordering contract (Documentation/memory-ordering.rst).
 * Every barrier in kmod/ and lib/ is tagged with its letter.
 *
 *  producer (lib)                       consumer (lib)
 *  --------------                       --------------
 *  load head (acquire)        (D)  <->  (C) store head (release)
 *  write slots                          load tail (acquire)          (B)
 *  store tail (release)       (A)  <->  (B) read slots
 *  load cons_waiting (plain)  (E)       store head (release)         (C)
 *                                       load prod_waiting (plain)    (E)
 *
 *  parker (kernel, BATON_RING_IOC_PARK)     waker (kernel, _WAKE)
 *  set own BATON_WAIT_PARKED (wq lock)      smp_mb()                    (H)
 *  smp_mb()                           (F)   wq lock: PARKED, POLL down;
 *  IPI: smp_mb() on peers' CPUs       (G)   wake parkers and pollers
 *  re-check index vs @expected under the wait-queue lock; re-arm (store,
 *  F, G) if a WAKE took PARKED down, else sleep. ->poll raises
 *  BATON_WAIT_POLL the same way whenever it is down.
 *
 * (A)/(B): slot contents are visible before the tail that covers them.
 * (C)/(D): the consumer is done reading a slot before the producer may
 *          overwrite it.
 * (E): store index, then load the peer's waiting flag. This is a
 *      StoreLoad pattern and the fast path has no fence (a signal fence
 *      keeps the compiler's order, no instruction): the parker pays
 *      with (F) and (G), which order the peer's earlier index store
 *      before the parker's re-check, and (H) orders a waker that did see
 *      the flag. Without (F) or (G) a wakeup is lost even on x86
 *      (models/park_tso.pml, variants 1 and 2).
 */

/* ---- MPSC rings (Documentation/mpsc.rst) ---- */

/*
 * A BATON_RING_MPSC ring takes any number of producer fds, up to the
 * max_producers given at create, and one consumer. Reservation is one
 * unconditional fetch_add on the tail; each slot has its own u64
 * sequence word, which says whose turn the slot is:
 *
 *   seq[i & mask] == i                   free for ticket i (this lap)
 *   seq[i & mask] == i + 1               message i published
 *   seq[i & mask] == (i + 1) | TOMB      ticket i lost: its producer died
 *                                        first; the kernel wrote the dead
 *                                        producer's pid (or 0) in the
 *                                        slot's first 8 bytes
 *
 * The consumer frees slot i for the next lap with seq = i + slot_count.
 * Regions and who may write them (a producer fd maps only its own claim
 * page; the consumer does not map claims at all):
 *
 *  region   producer fd   consumer fd   written by
 *  hdr      read          read          the kernel only
 *  prod     read/write    read          producers (tail fetch_add);
 *                                       prod_waiting: unused (kept
 *                                       equal to the header's word)
 *  cons     read          read/write    consumer (head, cons waiting)
 *  seq      read/write    read/write    producers publish, the consumer
 *                                       frees, the kernel tombstones
 *  slots    read/write    read          producers (kernel: tombstone pid)
 *  claim    own page rw   -             that producer
 *
 * The producers' waiting word is struct baton_mpsc_hdr.prod_waiting, in
 * the header, which only the kernel writes: no producer can take down
 * another's BATON_WAIT_PARKED. PARKED is up while any producer's park is
 * armed; a WAKE wakes the producers whose slot is free and leaves the
 * others parked and armed. POLL is one arm for every polling producer.
 * Opening a producer beyond max_producers is EBUSY, as a second SPSC
 * producer is. Park (struct baton_park) on an MPSC ring:
 *  - producer, @expected = its ticket i: sleeps while seq[i & mask] != i;
 *    EPIPE when the consumer has gone;
 *  - consumer, @expected = its position c: sleeps while seq[c & mask] == c,
 *    unless ticket c can only belong to a producer that has died: then
 *    the kernel tombstones it and returns 0. EPIPE when every producer
 *    has gone and no ticket at or after c was taken (end of stream).
 * A sequence word that fits none of the states above is EPROTO.
 */
#define BATON_RING_MPSC			2
#define BATON_FEAT_RING_MPSC		(1ULL << 5)	/* BATON_RING_MPSC rings */

#define BATON_MPSC_PRODUCERS_MAX	64
#define BATON_MPSC_TOMB			(1ULL << 63)	/* seq: ticket lost */
#define BATON_MPSC_NONE			(~0ULL)		/* claim floor: idle */

/**
 * struct baton_mpsc_claim - offset 0 of a producer's claim page
 * @floor: a tail value read before the reservation's fetch_add, so at
 *         most the ticket it returns; BATON_MPSC_NONE when no push is in
 *         progress
 * @first: first ticket of the push in progress
 * @count: tickets in the push in progress ([first, first + count)); 0
 *         outside a push
 * @reserved: 0
 *
 * The producer keeps it current around every push (lib/include/baton.h,
 * barriers I..K below); the kernel reads it to decide whether an
 * unpublished ticket can still belong to a live producer. It resets the
 * page at attach: floor NONE, count 0.
 */
struct baton_mpsc_claim {
	__aligned_u64 floor;
	__aligned_u64 first;
	__aligned_u64 count;
	__aligned_u64 reserved[5];
};

/**
 * struct baton_mpsc_hdr - at offset @mpsc_hdr of the header region
 * @max_producers: producer fds the ring admits
 * @producers: producer fds attached now
 * @tombstones_written: tickets the kernel (memfd: the consumer) turned
 *                      into tombstones
 * @tombstones_unattributed: of those, tombstones whose dead producer the
 *                           kernel could not name (pid 0 in the slot)
 * @prod_waiting: the producers' waiting word (BATON_WAIT_*), kernel-written;
 *                the consumer's release loads it (E). kmod only: 0 on memfd
 * @reserved0: 0
 * @reserved: 0
 *
 * The struct baton_ring_hdr counters keep their meaning, made precise:
 * parks_full counts producer parks on a slot still occupied (or not yet
 * published) by the previous lap, parks_empty consumer parks on a slot
 * not yet published, wakes_of_* the WAKE calls, producer_deaths the
 * producer files released.
 */
struct baton_mpsc_hdr {
	__u32 max_producers;
	__u32 producers;
	__aligned_u64 tombstones_written;
	__aligned_u64 tombstones_unattributed;
	__u32 prod_waiting;
	__u32 reserved0;
	__aligned_u64 reserved[4];
};

/*
 * MPSC ordering (lib/include/baton.h, kmod/mpsc.c), added to the table:
 *
 *  producer push of n                  consumer at c
 *  -------------                       -------------
 *  load tail; store claim.floor        load_acquire seq[c]            (L)
 *  fetch_add(tail, n) acq_rel   (I)    read slot
 *  store_release claim.first,   (J)    store_release seq[c] = c + N   (M)
 *        claim.count                   store_release head = c + 1     (C)
 *                                      (a batch of k: M for each slot,
 *                                      then one C, head = c + k)
 *  load_acquire seq[i] == i     (N)    load prod_waiting (plain)      (E)
 *  write slot
 *  store_release seq[i] = i+1   (K)
 *  load cons_waiting (plain)    (E)
 *  store_release claim.count=0, (J)
 *        claim.floor = NONE
 *
 * (I): the floor store is visible before the ticket is, so a kernel that
 *      sees the tail past c (acquire) sees the floor of whoever took c.
 * (J): claim stores are releases: a kernel that reads a claim word
 *      (acquire) sees every publication made before it.
 * (K)/(L): slot contents before the sequence that publishes them.
 * (M)/(N): the consumer is done with a slot before a producer of the
 *      next lap may write it.
 * (E), (F), (G), (H) as for SPSC: a parked producer or consumer pays for
 * the StoreLoad with the kernel's barriers; neither fast path has a fence.
 */

/* ---- epoch domains (Documentation/epoch.rst) ---- */

/*
 * An epoch domain is a quiescence service shared by processes: readers
 * announce the epoch they read in, writers retire objects tagged with the
 * epoch they retired them in, and the kernel proves a frontier F: no
 * participant can still hold anything retired at an epoch <= F. Domains
 * have their own name registry: a ring and a domain may share a name.
 * Create, open and unlink follow the ring rules (size-versioned structs,
 * names, EEXIST/ENOENT/EACCES); open needs both read and write
 * permission, since any opener may become a participant.
 */
#define BATON_FEAT_EPOCH	(1ULL << 8)	/* epoch domains */

#define BATON_EPOCH_PARTICIPANTS_MAX	256	/* 1..this, any value */
#define BATON_EPOCH_QUEUE_MIN		2	/* power of two */
#define BATON_EPOCH_QUEUE_MAX		4096	/* power of two */

#define BATON_EPOCH_MAGIC	0x48434f504542ULL	/* "BEPOCH" */

/*
 * The announcement word (u64, in the participant's own region): 0 when
 * outside a read section, (epoch << 1) | 1 inside one. One word, so enter
 * is one store and exit is one store.
 */
#define BATON_EPOCH_ANN_ACTIVE	1ULL
#define BATON_EPOCH_ANN(e)	(((__u64)(e) << 1) | BATON_EPOCH_ANN_ACTIVE)

/**
 * struct baton_epoch_offsets - where each part of a domain lives in the mmap
 *
 * One region per mmap() call, at its *_mmap offset, MAP_SHARED:
 *
 *  region   who may map it            written by
 *  hdr      any domain fd, read-only  the kernel
 *  self     the registered fd, rw     participant (announcement, queue
 *                                     tail, entries); kernel (queue head)
 *  table    any domain fd, read-only  every participant region, in index
 *                                     order, @part_stride apart (for tools)
 *
 * The self region of an fd is the region of the participant index its
 * REGISTER returned; mapping it before REGISTER is EINVAL.
 *
 * @hdr_mmap: mmap offset of the header region
 * @self_mmap: mmap offset of the caller's own participant region
 * @table_mmap: mmap offset of the read-only table of all participants
 * @hdr_size: length of the header region
 * @self_size: length of one participant region
 * @table_size: length of the table region
 * @part_stride: bytes between two participants in the table
 * @ann: byte offset of the u64 announcement in a participant region
 * @q_tail: u64 queue tail (participant writes), same region
 * @q_head: u64 queue head (kernel writes), same region
 * @q_entries: first struct baton_epoch_entry, same region
 * @queue_len: entries in the queue (power of two)
 * @reserved: 0
 */
struct baton_epoch_offsets {
	__aligned_u64 hdr_mmap;
	__aligned_u64 self_mmap;
	__aligned_u64 table_mmap;
	__u32 hdr_size;
	__u32 self_size;
	__aligned_u64 table_size;
	__u32 part_stride;
	__u32 ann;
	__u32 q_tail;
	__u32 q_head;
	__u32 q_entries;
	__u32 queue_len;
	__aligned_u64 reserved[4];
};

/**
 * struct baton_epoch_entry - one retirement in a participant's queue
 * @handle: the caller's name for the object; the kernel never uses it
 * @epoch: the global epoch read when the object was retired
 * @tag: free for the caller
 *
 * Entries between head and tail (free running, masked by queue_len - 1)
 * are pending. The kernel reads each once and moves head past those
 * whose epoch the previous collection cycle proved.
 */
struct baton_epoch_entry {
	__aligned_u64 handle;
	__aligned_u64 epoch;
	__aligned_u64 tag;
};

/**
 * struct baton_epoch_hdr - offset 0 of the header region, read-only to users
 * @magic: BATON_EPOCH_MAGIC
 * @abi_version: BATON_ABI_VERSION
 * @max_participants: participant table size
 * @queue_len: entries per participant queue
 * @sync_waiters: callers parked in SYNCHRONIZE now
 * @global: the global epoch; starts at 1
 * @frontier: everything retired at an epoch <= @frontier is unreachable
 * @wake_seq: bumped by every KICK (the memfd backend's futex word)
 * @reserved0: 0
 * @sync_epoch: the newest epoch any SYNCHRONIZE has parked on (0: none
 *              yet); never decreases. A reader's exit calls
 *              BATON_EPOCH_IOC_KICK only when the epoch it announced is
 *              <= @sync_epoch: only then can its exit help a synchronizer
 * @reserved1: 0
 * @collections: collection cycles run
 * @sync_waits: SYNCHRONIZE calls that one cycle did not satisfy (they
 *              raised @sync_waiters and waited)
 * @sync_timeouts: SYNCHRONIZE calls that returned ETIMEDOUT
 * @kicks: KICK calls
 * @participants: participants registered now
 * @participant_releases: participant files released (closed or died)
 * @completed: queue entries proven and consumed
 * @orphaned: pending entries of released participants, taken over
 * @orphans_completed: of those, proven and consumed
 * @bad_words: corrupt announcements (epoch 0 or above the global) or
 *             queue words seen (each one is treated conservatively: it
 *             never lets anything go early)
 * @off: the layout, for backends where no ioctl returns it
 */
struct baton_epoch_hdr {
	__aligned_u64 magic;
	__u32 abi_version;
	__u32 max_participants;
	__u32 queue_len;
	__u32 sync_waiters;
	__aligned_u64 global;
	__aligned_u64 frontier;
	__u32 wake_seq;
	__u32 reserved0;
	__aligned_u64 sync_epoch;
	__aligned_u64 reserved1;
	/* 64: counters, on their own cache line away from the fast-path words */
	__aligned_u64 collections;
	__aligned_u64 sync_waits;
	__aligned_u64 sync_timeouts;
	__aligned_u64 kicks;
	__aligned_u64 participants;
	__aligned_u64 participant_releases;
	__aligned_u64 completed;
	__aligned_u64 orphaned;
	__aligned_u64 orphans_completed;
	__aligned_u64 bad_words;
	struct baton_epoch_offsets off;
};

/**
 * struct baton_epoch_create - BATON_IOC_EPOCH_CREATE on /dev/baton
 * @size: sizeof(struct baton_epoch_create)
 * @flags: must be 0
 * @max_participants: 1..BATON_EPOCH_PARTICIPANTS_MAX
 * @queue_len: power of two in [BATON_EPOCH_QUEUE_MIN, BATON_EPOCH_QUEUE_MAX]
 * @mode: permission bits (0777 at most), as for rings
 * @reserved0: 0
 * @name: the domain's name, see BATON_NAME_MAX
 * @reserved: 0
 * @out_fd: the new domain fd (O_CLOEXEC), not yet a participant
 * @out_reserved: written as 0
 * @out_off: the mmap layout
 *
 * EEXIST, EDQUOT and ENOMEM as for struct baton_ring_create: a domain
 * counts as one object against max_objects_per_user and its pages (the
 * header and every participant region) against max_bytes_per_user.
 */
struct baton_epoch_create {
	__u32 size;
	__u32 flags;
	__u32 max_participants;
	__u32 queue_len;
	__u32 mode;
	__u32 reserved0;
	char name[BATON_NAME_MAX];
	__aligned_u64 reserved[2];
	__s32 out_fd;
	__u32 out_reserved;
	struct baton_epoch_offsets out_off;
};
#define BATON_EPOCH_CREATE_SIZE_VER0	208

/**
 * struct baton_epoch_open - BATON_IOC_EPOCH_OPEN on /dev/baton
 * @size: sizeof(struct baton_epoch_open)
 * @flags: must be 0
 * @name: the domain's name; read and write permission needed (EACCES);
 *        ENOENT unless created in the caller's IPC namespace
 * @reserved: 0
 * @out_fd: the new domain fd (O_CLOEXEC)
 * @out_max_participants: the domain's table size
 * @out_queue_len: the domain's queue length
 * @out_reserved: written as 0
 * @out_off: the mmap layout
 */
struct baton_epoch_open {
	__u32 size;
	__u32 flags;
	char name[BATON_NAME_MAX];
	__aligned_u64 reserved[2];
	__s32 out_fd;
	__u32 out_max_participants;
	__u32 out_queue_len;
	__u32 out_reserved;
	struct baton_epoch_offsets out_off;
};
#define BATON_EPOCH_OPEN_SIZE_VER0	200

/**
 * struct baton_epoch_register - BATON_EPOCH_IOC_REGISTER on a domain fd
 * @size: sizeof(struct baton_epoch_register)
 * @flags: must be 0
 * @out_index: the participant index; its region is this fd's self region
 * @out_reserved: written as 0
 * @reserved: 0
 *
 * EBUSY if this fd is already a participant (or its REGISTER is under
 * way), ENOSPC if the table is full, EFAULT if @out_index cannot be
 * written back: the fd is then not a participant and the index is free.
 * The registration lasts until the file is released (every fd
 * closed and every mapping of it gone, which process death does); then
 * the announcement stops counting and the pending retirements pass to the
 * kernel, which still honours them (in place: the index is reused once
 * they are consumed).
 */
struct baton_epoch_register {
	__u32 size;
	__u32 flags;
	__u32 out_index;
	__u32 out_reserved;
	__aligned_u64 reserved[2];
};
#define BATON_EPOCH_REGISTER_SIZE_VER0	32

/**
 * struct baton_epoch_collect - BATON_EPOCH_IOC_COLLECT on a domain fd
 * @size: sizeof(struct baton_epoch_collect)
 * @flags: must be 0
 * @out_global: the global epoch this cycle published
 * @out_frontier: the frontier this cycle proved
 * @out_completed: entries this cycle consumed (those the previous cycle
 *                 proved)
 * @out_active: participants found inside a read section
 * @out_reserved: written as 0
 * @reserved: 0
 */
struct baton_epoch_collect {
	__u32 size;
	__u32 flags;
	__aligned_u64 out_global;
	__aligned_u64 out_frontier;
	__aligned_u64 out_completed;
	__u32 out_active;
	__u32 out_reserved;
	__aligned_u64 reserved[2];
};
#define BATON_EPOCH_COLLECT_SIZE_VER0	56

/* struct baton_epoch_sync.flags */
#define BATON_EPOCH_SYNC_DEADLINE	(1U << 0)	/* deadline_ns is valid */

/**
 * struct baton_epoch_sync - BATON_EPOCH_IOC_SYNCHRONIZE on a domain fd
 * @size: sizeof(struct baton_epoch_sync)
 * @flags: BATON_EPOCH_SYNC_DEADLINE or 0
 * @epoch: wait until the frontier is >= @epoch, i.e. until nothing
 *         retired at @epoch or earlier can still be held; @epoch above
 *         the global epoch is EINVAL
 * @deadline_ns: absolute CLOCK_MONOTONIC; with BATON_EPOCH_SYNC_DEADLINE
 *               ETIMEDOUT once it passes; ignored without the flag (as
 *               struct baton_park's)
 * @out_frontier: the frontier when the call returned
 * @out_holder_pid: with ETIMEDOUT, the pid (in the caller's namespace) of
 *                  the participant holding the oldest announced epoch;
 *                  0 if none or not visible
 * @out_holder_index: its participant index (U32_MAX if none)
 * @reserved: 0
 *
 * The kernel runs collection cycles for the caller while it waits. The
 * outputs are copied back on success and on ETIMEDOUT. EINTR, or a
 * restart, on a signal.
 */
struct baton_epoch_sync {
	__u32 size;
	__u32 flags;
	__aligned_u64 epoch;
	__aligned_u64 deadline_ns;
	__aligned_u64 out_frontier;
	__s32 out_holder_pid;
	__u32 out_holder_index;
	__aligned_u64 reserved[2];
};
#define BATON_EPOCH_SYNC_SIZE_VER0	56

/**
 * struct baton_epoch_poll - BATON_EPOCH_IOC_POLL on a domain fd
 * @size: sizeof(struct baton_epoch_poll)
 * @flags: must be 0
 * @epoch: the epoch asked about; above the global epoch is EINVAL, as
 *         for struct baton_epoch_sync
 * @out_frontier: the frontier after the call
 * @out_quiescent: 1 if everything retired at @epoch or earlier is proven
 *                 unreachable, else 0
 * @out_reserved: written as 0
 * @reserved: 0
 *
 * Never sleeps. If the stored frontier does not answer yes it runs one
 * collection cycle (an IPI round) and answers from that.
 */
struct baton_epoch_poll {
	__u32 size;
	__u32 flags;
	__aligned_u64 epoch;
	__aligned_u64 out_frontier;
	__u32 out_quiescent;
	__u32 out_reserved;
	__aligned_u64 reserved[2];
};
#define BATON_EPOCH_POLL_SIZE_VER0	48

/* on /dev/baton; BATON_IOC_EPOCH_UNLINK takes struct baton_unlink */
#define BATON_IOC_EPOCH_CREATE	_IO(BATON_IOC_MAGIC, 0x20)
#define BATON_IOC_EPOCH_OPEN	_IO(BATON_IOC_MAGIC, 0x21)
#define BATON_IOC_EPOCH_UNLINK	_IO(BATON_IOC_MAGIC, 0x22)

/* on a domain fd */
#define BATON_EPOCH_IOC_REGISTER	_IO(BATON_IOC_MAGIC, 0x80)
#define BATON_EPOCH_IOC_COLLECT		_IO(BATON_IOC_MAGIC, 0x81)
#define BATON_EPOCH_IOC_SYNCHRONIZE	_IO(BATON_IOC_MAGIC, 0x82)
#define BATON_EPOCH_IOC_POLL		_IO(BATON_IOC_MAGIC, 0x83)
#define BATON_EPOCH_IOC_KICK		_IO(BATON_IOC_MAGIC, 0x84) /* arg 0 */

/*
 * The epoch memory-ordering contract (Documentation/memory-ordering.rst,
 * "Epoch domains"); letters continue the ring table.
 *
 *  reader (lib, inline)                  collector (kernel, one cycle)
 *  --------------------                  -----------------------------
 *  e = load global (relaxed)             drain entries <= previous frontier
 *  store ann = e<<1|1 (relaxed)   (O)    store global = G + 1
 *  compiler barrier only                 smp_mb()                      (P)
 *  load global (acquire) != e: retry     IPI: smp_mb() on readers' CPUs (Q)
 *  ... read protected objects ...        load every ann once           (R)
 *  store ann = 0 (release)        (S)    frontier = min(active e, G+1) - 1
 *  compiler barrier only
 *  load sync_epoch (plain)        (T)
 *  kick if own e <= sync_epoch
 *
 *  retirer (lib)                         synchronizer (kernel)
 *  unlink the object from the table      one cycle; if not proven:
 *  full fence                     (U)    sync_epoch = max(it, epoch),
 *                                        smp_mb()                      (V)
 *  e = load global; entry {handle, e}    then cycles (P, Q, R) as above
 *  store q_tail (release)         (W)    drain: load q_tail (acquire)  (W)
 *  load q_head (acquire)          (X)    store q_head (release)        (X)
 *
 * (O)/(Q): StoreLoad between the announcement and the re-check, paid by
 *     the collector: a reader whose store precedes the IPI is seen by (R);
 *     one whose store follows it re-checks after the IPI's barrier, which
 *     follows (P), so it sees G + 1 and re-announces.
 * (S): the protected reads are done before the announcement drops.
 * (T)/(V): exit stores ann = 0, then loads sync_epoch, with no fence:
 *     a reader whose load missed the waiter's raise made that load
 *     before the next cycle's IPI (Q), which drained its ann store. A
 *     reader that announced above the epoch waited on holds nothing the
 *     waiter needs, so it need not kick.
 * (U): the unlink is visible before the retire epoch is read, so a reader
 *     that can still reach the object announced an epoch <= that one.
 * (W)/(X): entry words before the tail that publishes them; the
 *     collector's entry reads before the head that frees their slots.
 */

/*
 * Waiting for a name: a consumer that starts before its producer sleeps
 * in the module until the ring (or domain) is created, instead of polling
 * for it.
 */
#define BATON_FEAT_NAME_WAIT	(1ULL << 9)	/* BATON_IOC_NAME_WAIT */

/* struct baton_name_wait.kind: which registry to wait on */
#define BATON_NAME_RING		1
#define BATON_NAME_EPOCH	2

/* struct baton_name_wait.flags */
#define BATON_NAME_WAIT_DEADLINE	(1U << 0)	/* deadline_ns is valid */

/**
 * struct baton_name_wait - BATON_IOC_NAME_WAIT on /dev/baton
 * @size: sizeof(struct baton_name_wait)
 * @flags: BATON_NAME_WAIT_DEADLINE or 0
 * @kind: BATON_NAME_RING or BATON_NAME_EPOCH
 * @reserved0: 0
 * @name: the name to wait for (BATON_NAME_MAX rules)
 * @deadline_ns: absolute CLOCK_MONOTONIC time; with
 *               BATON_NAME_WAIT_DEADLINE the call fails with ETIMEDOUT
 *               once it passes; must be 0 without the flag
 * @reserved: 0
 *
 * Returns 0 as soon as an object of @kind named @name exists in the
 * caller's IPC namespace: at once if it does already, else when one is
 * created. Nothing is opened and no permission is checked: the caller
 * then opens it (BATON_IOC_RING_OPEN), and goes back to waiting if the
 * open says ENOENT (the name was unlinked in between). Errors: EINVAL
 * (flags, reserved, kind, name, a deadline without the flag), ETIMEDOUT,
 * EINTR or a restart on a signal (the deadline is absolute). Sleeps
 * interruptibly; holds no lock while asleep.
 */
struct baton_name_wait {
	__u32 size;
	__u32 flags;
	__u32 kind;
	__u32 reserved0;
	char name[BATON_NAME_MAX];
	__aligned_u64 deadline_ns;
	__aligned_u64 reserved[2];
};
#define BATON_NAME_WAIT_SIZE_VER0	104

/* on /dev/baton */
#define BATON_IOC_NAME_WAIT	_IO(BATON_IOC_MAGIC, 0x04)

/* ---- buffer pools (Documentation/pool.rst) ---- */

/*
 * A pool is a named object beside rings and epoch domains (its own
 * registry: a pool, a ring and a domain may share a name), with the same
 * create, open and unlink rules (size-versioned structs, names, owner,
 * group and mode, EEXIST/ENOENT/EACCES, per-user byte caps). It holds up
 * to BATON_POOL_CLASSES_MAX classes of buffers, each a power of two from
 * 4 KiB to 4 MiB; processes allocate and free buffers in user space and
 * pass 64-bit handles. Every pool fd is one holder: the kernel returns
 * the buffers a holder owned when its file is released, and gives the
 * pages of buffers free longer than decay_ms back on a timer.
 */
#define BATON_FEAT_POOL		(1ULL << 10)	/* buffer pools */
#define BATON_FEAT_POOL_WAIT	(1ULL << 11)	/* BATON_POOL_IOC_WAIT, _WAKE */
/* SHARED buffers: the release of a reader gives up its part */
#define BATON_FEAT_POOL_SHARE	(1ULL << 12)

#define BATON_POOL_MAGIC	0x4c4f4f5042ULL		/* "BPOOL" */
#define BATON_POOL_CLASSES_MAX	8
#define BATON_POOL_SHIFT_MIN	12		/* 4 KiB */
#define BATON_POOL_SHIFT_MAX	22		/* 4 MiB */
#define BATON_POOL_COUNT_MAX	65536		/* buffers per class */
#define BATON_POOL_HOLDERS_MAX	1024		/* pool fds at once */
#define BATON_POOL_DECAY_MIN_MS	10		/* or 0: never decay */
#define BATON_POOL_DECAY_MAX_MS	600000

/*
 * A handle: bits 0-23 the buffer's index in its class, 24-26 the class,
 * 27-31 zero, 32-63 the buffer's generation when it was allocated (never
 * 0). A handle with bits 27-31 set, a class or index past the geometry or
 * generation 0 is forged.
 */
#define BATON_POOL_HANDLE(cls, idx, gen)				\
	(((__u64)(gen) << 32) | ((__u64)(cls) << 24) | (__u64)(idx))
#define BATON_POOL_H_INDEX(h)	((__u32)(h) & 0xffffffU)
#define BATON_POOL_H_CLASS(h)	(((__u32)(h) >> 24) & 7U)
#define BATON_POOL_H_GEN(h)	((__u32)((h) >> 32))
#define BATON_POOL_H_RESERVED	0xf8000000ULL

/*
 * A buffer descriptor's state word: generation (bits 32-63), kind (28-31),
 * holder (16-27: the owning holder index + 1; 0 for none), 0-15 zero.
 * aux: for FREE, the CLOCK_MONOTONIC millisecond it was freed (0: it
 * was never used); for COLD, the free queue's tail when it went COLD; for
 * SENT, the id of the
 * ring it was sent through (struct baton_ring_bind; 0: none known); for
 * SHARED, the generation (bits 32-63) and the mask of the holder indices still
 * reading it (bit k: holder k, k < BATON_POOL_SHARE_MAX); the buffer goes
 * back when the mask is empty (Documentation/pool.rst, "Fan-out").
 */
#define BATON_POOL_FREE		1U	/* in the free queue, or about to be */
#define BATON_POOL_OWNED	2U	/* one holder's */
#define BATON_POOL_KERNEL	3U	/* the kernel's, for a moment */
#define BATON_POOL_SENT		4U	/* given away by holder, not yet taken:
					 * in flight; a holder's death leaves
					 * it for its receiver */
#define BATON_POOL_SHARED	5U	/* read by the holders in aux's mask;
					 * holder 0; a reader's death clears
					 * its bit */
#define BATON_POOL_COLD		6U	/* free, off the queue, its pages given
					 * back by the decay: a taker that finds
					 * the queue empty takes it
					 * (BATON_FEAT_POOL_COLD) */
#define BATON_POOL_IDLE		7U	/* one holder's, idle in its magazine:
					 * what a free leaves; the decay may
					 * give its pages back
					 * (BATON_FEAT_POOL_IDLE) */
#define BATON_POOL_SHARE_MAX	32	/* holder indices a share can name */
#define BATON_POOL_SHARE_AUX(gen, mask)					\
	(((__u64)(gen) << 32) | (__u32)(mask))
#define BATON_POOL_STATE(gen, kind, holder)				\
	(((__u64)(gen) << 32) | ((__u64)(kind) << 28) |		\
	 ((__u64)(holder) << 16))
#define BATON_POOL_S_GEN(s)	((__u32)((s) >> 32))
#define BATON_POOL_S_KIND(s)	((__u32)((s) >> 28) & 0xfU)
#define BATON_POOL_S_HOLDER(s)	((__u32)((s) >> 16) & 0xfffU)

/* A buffer's descriptor, in the control region. */
struct baton_pool_desc {
	__aligned_u64 state;
	__aligned_u64 aux;
};

/* One free-queue entry: the ticket sequence word, then its value. */
struct baton_pool_qent {
	__aligned_u64 seq;
	__aligned_u64 value;
};

/*
 * A class's block in the control region, at its ctl_off: head and tail
 * (free running u64 tickets) on their own cache lines, then qcap queue
 * entries, then count descriptors right after them (at
 * BATON_POOL_Q_ENTRIES + qcap * 16, a multiple of 64 since qcap >= 4).
 *
 * The free queue is a bounded ticket queue (Documentation/pool.rst gives
 * the argument). Entry t & (qcap - 1) holds ticket t once its seq is
 * t + 1, and is free for ticket t once its seq is t; its value is
 * BATON_POOL_ENTRY(gen, index) of the buffer queued, or
 * BATON_POOL_NO_INDEX (a hole the kernel filled: it carries no buffer).
 *  - free n buffers (one holder): t = fetch_add(tail, n); for each,
 *    the descriptor FREE, then the value, then seq = t + i + 1 (release);
 *  - take up to n (any holder): h = head; count k entries published
 *    from h (acquire); compare-and-swap head from h to h + k (a failed
 *    one starts again); read each value, then seq = h + i + qcap
 *    (release: the entry is the next lap's).
 * qcap >= 2 * count, so a freer finds its entry free at once unless the
 * taker of the previous lap is between its compare-and-swap and its
 * release; a freer that waits long, or a taker that finds an entry below
 * the tail unpublished for long, asks the kernel (BATON_POOL_IOC_UNSTICK).
 */
#define BATON_POOL_Q_HEAD	0
#define BATON_POOL_Q_TAIL	64
#define BATON_POOL_Q_WAIT	128	/* struct baton_pool_waiting */
#define BATON_POOL_Q_ENTRIES	192

/*
 * At BATON_POOL_Q_WAIT of a class block: allocators parked on the empty
 * class (BATON_POOL_IOC_WAIT; on memfd a futex on @wakes). A parker adds
 * itself to @waiters (an atomic add: a full barrier) before it looks at
 * the queue a last time; a freer that published entries and then (after
 * a full barrier) finds @waiters non-zero adds 1 to @wakes and wakes the
 * parkers (BATON_POOL_IOC_WAKE). The kernel does the same after it
 * queues a dead holder's buffers.
 */
struct baton_pool_waiting {
	__u32 waiters;
	__u32 wakes;
};

/*
 * At BATON_POOL_Q_COLD of a class block, after struct baton_pool_waiting:
 * hints for the decay and for takers (Documentation/pool.rst, "Decay").
 * @low_water: the fewest entries a taker left on the queue since the
 * last decay tick (a taker that leaves fewer stores it; the decay reads
 * it and sets it to the class's count), so a burst between two ticks
 * counts; @cold:
 * about how many buffers are COLD (the decay adds what it made COLD and
 * stores the count it finds each tick; a taker subtracts what it takes);
 * @cursor: where a taker's next search for COLD buffers starts. Any
 * holder may write them: a wrong value costs a decay or a search, never
 * a buffer.
 */
struct baton_pool_cold {
	__u32 low_water;
	__u32 cold;
	__u32 cursor;
	__u32 reserved;
};
#define BATON_POOL_Q_COLD	136
#define BATON_FEAT_POOL_COLD	(1ULL << 14)	/* the decay makes buffers
						 * COLD (pool.rst, "Decay") */

/*
 * A library that takes COLD buffers says so at create and open with
 * BATON_POOL_F_TAKES_COLD in the flags (BATON_FEAT_POOL_COLD_OPTIN). While
 * any holder of a pool opened without it (a library from before COLD,
 * which would never take one and see its class shrink), the decay makes
 * no buffer COLD: it puts those there are back on the free queue under a
 * new generation and gives pages back leaving the buffers FREE and queued
 * (Documentation/pool.rst, "Decay", "Libraries without COLD").
 */
#define BATON_POOL_F_TAKES_COLD		(1U << 0)
#define BATON_FEAT_POOL_COLD_OPTIN	(1ULL << 15)

#define BATON_POOL_ENTRY(gen, index)	(((__u64)(gen) << 32) | (index))
#define BATON_POOL_NO_INDEX	(~0ULL)

/*
 * A holder's claim page (one per holder index, at claim_off + index *
 * 4096 in the control region): which tickets it is moving, so that the
 * kernel can tell a dead holder's tickets from a live one's (the rule of
 * mpsc.rst's claims: a floor stored before the ticket is taken, the ticket
 * stored after). op is BATON_POOL_CLAIM_PUSH or _POP while one is under
 * way, 0 otherwise; cls and n say which class and how many; floor is the
 * tail (push) or head (pop) the holder read before its fetch_add or
 * compare-and-swap, ticket the first ticket once known
 * (BATON_POOL_NO_TICKET before); entry[] the values pushed, or for a pop
 * the values read so far (BATON_POOL_NO_INDEX before). parked is the
 * class + 1 whose waiters count includes this holder (stored after its
 * increment, cleared before its decrement), or 0: the kernel takes a dead
 * holder's count back.
 */
#define BATON_POOL_CLAIM_PUSH	1U
#define BATON_POOL_CLAIM_POP	2U
#define BATON_POOL_CLAIM_MAX	64	/* buffers per push or pop */
#define BATON_POOL_NO_TICKET	(~0ULL)
struct baton_pool_claim {
	__u32 op;
	__u32 cls;
	__u32 n;
	__u32 parked;
	__aligned_u64 floor;
	__aligned_u64 ticket;
	__aligned_u64 entry[BATON_POOL_CLAIM_MAX];
};

/*
 * At byte BATON_POOL_CLAIM_LIFE of a holder's claim page, a __u64: the
 * index's life word. Odd while a holder has the index; made even when its
 * release (memfd: the repair of a dead holder, or a close) begins, then a
 * full barrier, then the walk of the descriptors; each new holder of the
 * index takes the next odd value. A sharer reads it before it hands a
 * buffer to that index and again after its share (a full barrier
 * between), and gives up the reader's part itself if it moved or is even:
 * a release whose walk ran before the share cannot have seen it
 * (Documentation/pool.rst, "Fan-out").
 */
#define BATON_POOL_CLAIM_LIFE	2048

/**
 * struct baton_pool_unstick - BATON_POOL_IOC_UNSTICK on a pool fd
 * @size: sizeof(struct baton_pool_unstick)
 * @flags: must be 0
 * @cls: the class
 * @reserved: 0
 * @ticket: the ticket whose entry the caller has waited on
 *
 * Returns 0 when the entry moved (now, or because the kernel repaired it:
 * a dead freer's hole filled with BATON_POOL_NO_INDEX, a dead taker's
 * entry released and its buffer queued again), EAGAIN while a live holder
 * may hold the ticket (wait and ask again), EINVAL for bad fields.
 */
struct baton_pool_unstick {
	__u32 size;
	__u32 flags;
	__u32 cls;
	__u32 reserved;
	__aligned_u64 ticket;
};
#define BATON_POOL_UNSTICK_SIZE_VER0	24

/**
 * struct baton_pool_wait - BATON_POOL_IOC_WAIT and _WAKE on a pool fd
 * @size: sizeof(struct baton_pool_wait)
 * @flags: WAIT: BATON_POOL_WAIT_DEADLINE or 0; WAKE: 0
 * @cls: the class
 * @wakes: WAIT: the class's wakes word as the caller read it before its
 *         last look at the queue; WAKE: 0
 * @deadline_ns: WAIT: absolute CLOCK_MONOTONIC time, with
 *               BATON_POOL_WAIT_DEADLINE; else 0
 * @reserved: 0
 *
 * WAIT sleeps until the class's wakes word differs from @wakes, the
 * deadline passes (ETIMEDOUT) or a signal comes (the call restarts: the
 * deadline is absolute). WAKE wakes every waiter of the pool, to look at
 * its wakes word. Both: EINVAL for bad fields.
 */
struct baton_pool_wait {
	__u32 size;
	__u32 flags;
	__u32 cls;
	__u32 wakes;
	__aligned_u64 deadline_ns;
	__aligned_u64 reserved;
};
#define BATON_POOL_WAIT_SIZE_VER0	32
#define BATON_POOL_WAIT_DEADLINE	(1U << 0)

/* on a pool fd */
#define BATON_POOL_IOC_UNSTICK	_IO(BATON_IOC_MAGIC, 0xa0)
#define BATON_POOL_IOC_WAIT	_IO(BATON_IOC_MAGIC, 0xa1)
#define BATON_POOL_IOC_WAKE	_IO(BATON_IOC_MAGIC, 0xa2)

/**
 * struct baton_pool_class - one class, as asked at create
 * @buf_shift: log2 of the buffer size, BATON_POOL_SHIFT_MIN..MAX
 * @count: buffers, 1..BATON_POOL_COUNT_MAX
 */
struct baton_pool_class {
	__u32 buf_shift;
	__u32 count;
};

/**
 * struct baton_pool_class_layout - one class, as the header gives it
 * @buf_shift: log2 of the buffer size
 * @count: buffers
 * @qcap: free-queue entries (a power of two, at least twice @count)
 * @reserved: 0
 * @ctl_off: byte offset of the class block in the control region
 * @data_off: byte offset of buffer 0 in the data region
 */
struct baton_pool_class_layout {
	__u32 buf_shift;
	__u32 count;
	__u32 qcap;
	__u32 reserved;
	__aligned_u64 ctl_off;
	__aligned_u64 data_off;
};

/**
 * struct baton_pool_hdr - offset 0 of the header region, read-only to users
 * @magic: BATON_POOL_MAGIC
 * @abi_version: BATON_ABI_VERSION
 * @nr_classes: classes in use, sorted by size
 * @decay_ms: the decay age (0: never)
 * @keep: buffers of each class never decayed
 * @max_holders: holder indices (pool fds at once)
 * @reserved0: 0
 * @ctl_mmap: mmap offset of the control region (read-write)
 * @ctl_size: its length
 * @data_mmap: mmap offset of the data region (read-write)
 * @data_size: its length
 * @claim_off: byte offset of holder 0's claim page in the control region
 * @reserved1: 0
 * @classes: the classes
 * @holders: pool fds open now
 * @holder_releases: pool fds released
 * @reclaimed: buffers the kernel freed for a released holder
 * @repaired: queue entries the kernel repaired for dead holders
 * @decayed: buffers whose pages the decay timer gave back
 * @decayed_bytes: their bytes
 * @decay_ticks: decay timer runs
 * @bad_words: corrupt shared words seen (each treated conservatively)
 */
struct baton_pool_hdr {
	__aligned_u64 magic;
	__u32 abi_version;
	__u32 nr_classes;
	__u32 decay_ms;
	__u32 keep;
	__u32 max_holders;
	__u32 reserved0;
	__aligned_u64 ctl_mmap;
	__aligned_u64 ctl_size;
	__aligned_u64 data_mmap;
	__aligned_u64 data_size;
	__aligned_u64 claim_off;
	__aligned_u64 reserved1;
	struct baton_pool_class_layout classes[BATON_POOL_CLASSES_MAX];
	__aligned_u64 holders;
	__aligned_u64 holder_releases;
	__aligned_u64 reclaimed;
	__aligned_u64 repaired;
	__aligned_u64 decayed;
	__aligned_u64 decayed_bytes;
	__aligned_u64 decay_ticks;
	__aligned_u64 bad_words;
};

/* mmap offsets: the header at 0; the header gives the other two. */
#define BATON_POOL_HDR_MMAP	0

/*
 * Magazines the decay reaches (Documentation/pool.rst, "Decay", "Idle
 * magazines"; the ordering is (Y13) of memory-ordering.rst). A holder's
 * free leaves the buffer IDLE (its own, in its magazine); its allocation
 * stores OWNED, then loads the u64 at BATON_POOL_HDR_REAP of the header
 * page, and while that is not 0 waits for it to be 0 before it touches
 * the buffer. The decay sets the word, runs a barrier on every CPU of the
 * pool's processes, gives back the pages of the buffers still IDLE under
 * the generation it saw on its last ticks, then clears the word. A flush
 * makes the same check between a buffer's FREE and its publication.
 */
#define BATON_POOL_HDR_REAP	2048
#define BATON_FEAT_POOL_IDLE	(1ULL << 16)

/**
 * struct baton_pool_create - BATON_IOC_POOL_CREATE on /dev/baton
 * @size: sizeof(struct baton_pool_create)
 * @flags: 0 or BATON_POOL_F_TAKES_COLD
 * @mode: permission bits (0777 at most), as a ring's
 * @nr_classes: 1..BATON_POOL_CLASSES_MAX
 * @decay_ms: 0, or BATON_POOL_DECAY_MIN_MS..BATON_POOL_DECAY_MAX_MS
 * @keep: buffers of each class the decay never takes (at most its count)
 * @max_holders: 1..BATON_POOL_HOLDERS_MAX
 * @reserved0: 0
 * @name: the pool's name (BATON_NAME_MAX rules)
 * @classes: @nr_classes classes, strictly increasing buf_shift; the rest 0
 * @reserved: 0
 * @out_fd: the new pool fd (O_CLOEXEC): a holder
 * @out_holder: its holder index
 *
 * EINVAL for any geometry, flag or reserved word out of bounds; E2BIG
 * when the buffers add up to more than 256 GiB; EDQUOT past the owner's
 * object or byte cap (as struct baton_ring_create);
 * EEXIST, ENOMEM; EMFILE when every holder index is taken (open).
 */
struct baton_pool_create {
	__u32 size;
	__u32 flags;
	__u32 mode;
	__u32 nr_classes;
	__u32 decay_ms;
	__u32 keep;
	__u32 max_holders;
	__u32 reserved0;
	char name[BATON_NAME_MAX];
	struct baton_pool_class classes[BATON_POOL_CLASSES_MAX];
	__aligned_u64 reserved[2];
	__s32 out_fd;
	__u32 out_holder;
};
#define BATON_POOL_CREATE_SIZE_VER0	184

/**
 * struct baton_pool_open - BATON_IOC_POOL_OPEN on /dev/baton
 * @size: sizeof(struct baton_pool_open)
 * @flags: 0 or BATON_POOL_F_TAKES_COLD
 * @name: the pool's name; read and write permission needed (EACCES)
 * @reserved: 0
 * @out_fd: the new pool fd (O_CLOEXEC): a holder
 * @out_holder: its holder index; EMFILE when none is free
 */
struct baton_pool_open {
	__u32 size;
	__u32 flags;
	char name[BATON_NAME_MAX];
	__aligned_u64 reserved[2];
	__s32 out_fd;
	__u32 out_holder;
};
#define BATON_POOL_OPEN_SIZE_VER0	96

/* on /dev/baton; BATON_IOC_POOL_UNLINK takes struct baton_unlink */
#define BATON_IOC_POOL_CREATE	_IO(BATON_IOC_MAGIC, 0x30)
#define BATON_IOC_POOL_OPEN	_IO(BATON_IOC_MAGIC, 0x31)
#define BATON_IOC_POOL_UNLINK	_IO(BATON_IOC_MAGIC, 0x32)

/*
 * A ring bound to a pool (BATON_FEAT_RING_BIND): the kernel gives back
 * the buffers in flight in a ring nobody can read any more
 * (Documentation/pool.rst, "A ring nobody reads again").
 */
#define BATON_FEAT_RING_BIND	(1ULL << 13)	/* BATON_RING_IOC_BIND_POOL */

/**
 * struct baton_ring_bind - BATON_RING_IOC_BIND_POOL on a producer ring fd
 * @size: sizeof(struct baton_ring_bind)
 * @flags: must be 0
 * @pool_fd: a pool fd whose buffers are sent through the ring
 * @reserved: 0
 * @out_ring_id: the ring's id, never 0, unique while the module is
 *               loaded. A sender stores it in the aux word of a buffer's
 *               descriptor before making it SENT (baton_pool_send()); a
 *               give stores 0 there.
 *
 * When the ring is destroyed (its last fd and mapping gone, its name
 * unlinked), every buffer of a bound pool that is SENT with aux equal to
 * the ring's id goes back to the pool's free queue under a new
 * generation, counted in the pool's reclaimed word and reported as
 * BATON_EVENT_POOL_RECLAIMED. The ring's slots and indices are not read:
 * a scribbled ring can neither hide its buffers nor name another's.
 * While a consumer may attach again (the ring has a name or an fd), the
 * ring lives and nothing is taken. A ring keeps up to
 * BATON_RING_POOLS_MAX pools for its life (and a reference on each);
 * binding one again does nothing.
 *
 * Returns 0, EINVAL (size, flags, reserved), E2BIG and EFAULT (as every
 * ioctl), EACCES (a consumer fd), EBADF (@pool_fd is not an open pool
 * fd), ENOSPC (BATON_RING_POOLS_MAX other pools are bound).
 */
struct baton_ring_bind {
	__u32 size;
	__u32 flags;
	__s32 pool_fd;
	__u32 reserved;
	__aligned_u64 out_ring_id;
};
#define BATON_RING_BIND_SIZE_VER0	24
#define BATON_RING_POOLS_MAX		4	/* pools one ring keeps */

/* on a ring fd */
#define BATON_RING_IOC_BIND_POOL	_IO(BATON_IOC_MAGIC, 0x43)

#endif /* _UAPI_LINUX_BATON_H */
