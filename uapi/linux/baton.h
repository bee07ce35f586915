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
 * @prod_waiting: u32 flag, non-zero while the producer is parked
 * @cons_head: u64 consumer index, free running, in the cons region
 * @cons_waiting: u32 flag, non-zero while the consumer is parked
 * @reserved: 0
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
	__aligned_u64 reserved[4];
};

/**
 * struct baton_ring_create - BATON_IOC_RING_CREATE on /dev/baton
 * @size: sizeof(struct baton_ring_create)
 * @flags: must be 0
 * @kind: BATON_RING_SPSC
 * @role: BATON_ROLE_PRODUCER or BATON_ROLE_CONSUMER, the role of the
 *        returned fd
 * @slot_count: power of two in [BATON_SLOTS_MIN, BATON_SLOTS_MAX]
 * @slot_size: multiple of 8 in [BATON_SLOT_SIZE_MIN, BATON_SLOT_SIZE_MAX];
 *             slot_count * slot_size at most BATON_RING_BYTES_MAX
 * @mode: permission bits; bits outside 0777 are EINVAL; owner and group
 *        are the caller's fsuid and fsgid
 * @max_producers: 0 or 1 for SPSC
 * @name: the ring's name, see BATON_NAME_MAX
 * @reserved: 0
 * @out_fd: the new ring fd (O_CLOEXEC)
 * @out_reserved: written as 0
 * @out_off: the mmap layout
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
 * @name: the ring's name
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
 * @flags: must be 0
 * @name: the name to remove; open fds and mappings keep the ring alive
 * @reserved: 0
 *
 * Only the ring's owner (fsuid) or a caller with CAP_SYS_ADMIN in the
 * user namespace may unlink (EACCES).
 */
struct baton_unlink {
	__u32 size;
	__u32 flags;
	char name[BATON_NAME_MAX];
	__aligned_u64 reserved[2];
};
#define BATON_UNLINK_SIZE_VER0	88

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
 * The kernel sets the caller's waiting flag itself, makes it visible to
 * the peer's CPUs (barrier F/G below), and clears it before returning.
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
 *  set own waiting flag                     smp_mb()                    (H)
 *  smp_mb()                           (F)   wake_up() under wq lock
 *  IPI: smp_mb() on peers' CPUs       (G)
 *  re-check index vs @expected, sleep under the wait-queue lock
 *
 * (A)/(B): slot contents are visible before the tail that covers them.
 * (C)/(D): the consumer is done reading a slot before the producer may
 *          overwrite it.
 * (E): store index, then load the peer's waiting flag. This is a
 *      StoreLoad pattern and the fast path has no fence: the parker pays
 *      with (F) and (G), which order the peer's earlier index store
 *      before the parker's re-check, and (H) orders a waker that did see
 *      the flag. Without (F) or (G) a wakeup is lost even on x86
 *      (models/park_tso.pml, variants 1 and 2).
 */

/* ---- MPSC rings (Documentation/mpsc.rst) ---- */

/* ---- epoch domains (Documentation/epoch.rst) ---- */

#endif /* _UAPI_LINUX_BATON_H */
