/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * baton_nl.h: the generic netlink family "baton": live statistics of rings,
 * epoch domains and buffer pools, and their events. The spec is
 * Documentation/netlink/specs/baton.yaml; the semantics of each attribute
 * are in Documentation/netlink.rst.
 *
 * Rules, as for every generic netlink family:
 *  - attributes are numbered from 1 and each set is closed by __MAX;
 *  - a u64 attribute is sent with nla_put_u64_64bit() and the set's PAD
 *    attribute, so userspace must skip attribute types it does not know
 *    (new attributes are only ever appended);
 *  - requests are validated against a strict policy: an unknown, missing
 *    or oversized attribute fails with -EINVAL and an extack message.
 *
 * Counters count what the kernel sees on the slow path (parks, wakes,
 * deaths, tombstones); messages moved are read from the free-running
 * indices the ring already keeps, so statistics add nothing to the fast
 * path.
 *
 * Visibility: without CAP_SYS_ADMIN in the initial user namespace a
 * caller sees only objects it could open (read or write permission); any
 * other name is ENOENT, and dumps skip it. Pids are numbers of the
 * caller's pid namespace. Events are unicast to each socket that sent
 * BATON_CMD_WATCH, under the same rule with the credentials it had then;
 * the "events" group is fed only where the kernel can make it admin-only
 * (GENL_MCAST_CAP_SYS_ADMIN), in the initial network namespace.
 */
#ifndef _UAPI_LINUX_BATON_NL_H
#define _UAPI_LINUX_BATON_NL_H

#define BATON_FAMILY_NAME	"baton"
#define BATON_FAMILY_VERSION	1

/* The multicast group of events (see Documentation/netlink.rst). */
#define BATON_MCGRP_EVENTS	"events"

enum baton_cmd {
	BATON_CMD_UNSPEC,
	BATON_CMD_RING_GET,	/* doit: BATON_A_RING_NAME; dumpit: all */
	BATON_CMD_EPOCH_GET,	/* doit: BATON_A_EPOCH_NAME; dumpit: all */
	BATON_CMD_EVENT,	/* notification: BATON_A_EVENT_* */
	BATON_CMD_WATCH,	/* subscribe the sending socket to events;
				 * no attributes; idempotent; ENOSPC past
				 * the max_watchers module parameter,
				 * counted per user */
	BATON_CMD_UNWATCH,	/* undo BATON_CMD_WATCH (ENOENT if not) */
	BATON_CMD_POOL_GET,	/* doit: BATON_A_POOL_NAME; dumpit: all */

	__BATON_CMD_MAX,
	BATON_CMD_MAX = __BATON_CMD_MAX - 1
};

/* BATON_A_RING_KIND: the same values as struct baton_ring_create.kind. */

/* BATON_A_PEER_ROLE: the same values as BATON_ROLE_* in baton.h. */

enum baton_a_ring {
	BATON_A_RING_UNSPEC,
	BATON_A_RING_PAD,
	BATON_A_RING_NAME,		/* string, NUL-terminated */
	BATON_A_RING_KIND,		/* u32 */
	BATON_A_RING_SLOT_COUNT,	/* u32 */
	BATON_A_RING_SLOT_SIZE,		/* u32 */
	BATON_A_RING_MAX_PRODUCERS,	/* u32, 1 for SPSC */
	BATON_A_RING_UID,		/* u32, owner in the caller's userns */
	BATON_A_RING_GID,		/* u32 */
	BATON_A_RING_MODE,		/* u32, permission bits */
	BATON_A_RING_STATE,		/* u32, BATON_STATE_* */
	BATON_A_RING_UNLINKED,		/* flag: no longer reachable by name,
					 * still in use (dumps only) */
	BATON_A_RING_HEAD,		/* u64, consumer index, sampled */
	BATON_A_RING_TAIL,		/* u64, producer index, sampled */
	BATON_A_RING_OCCUPANCY,		/* u64, tail - head, clamped */
	BATON_A_RING_PRODUCERS,		/* u32, attached producer files */
	BATON_A_RING_CONSUMERS,		/* u32, attached consumer files */
	BATON_A_RING_PARKED_PRODUCERS,	/* u32, inside RING_IOC_PARK now */
	BATON_A_RING_PARKED_CONSUMERS,	/* u32, inside RING_IOC_PARK now */
	BATON_A_RING_PARKS_FULL,	/* u64, producer parks: ring full */
	BATON_A_RING_PARKS_EMPTY,	/* u64, consumer parks: ring empty */
	BATON_A_RING_WAKES_OF_PRODUCER,	/* u64 */
	BATON_A_RING_WAKES_OF_CONSUMER,	/* u64 */
	BATON_A_RING_PRODUCER_DEATHS,	/* u64, producer files released */
	BATON_A_RING_CONSUMER_DEATHS,	/* u64, consumer files released */
	BATON_A_RING_TOMBSTONES,	/* u64, MPSC slots tombstoned */
	BATON_A_RING_MSGS_CONSUMED,	/* u64, = head */
	BATON_A_RING_MSGS_RESERVED,	/* u64, = tail (MPSC: tickets) */
	BATON_A_RING_PEERS,		/* nest of BATON_A_RING_PEER */
	BATON_A_RING_PEER,		/* nest of baton_a_peer, repeated */
	BATON_A_RING_SCRIBBLES,		/* u64, invalid shared words seen */
	BATON_A_RING_PEERS_PARTIAL,	/* flag: PEERS was cut to fit a dump */
	BATON_A_RING_ALL_NS,		/* flag, in a dump request: every IPC
					 * namespace (CAP_SYS_ADMIN in the
					 * initial user namespace, else EPERM) */
	BATON_A_RING_IPC_NS,		/* u32, in ALL_NS dumps: the inode
					 * number of the ring's IPC namespace */

	__BATON_A_RING_MAX,
	BATON_A_RING_MAX = __BATON_A_RING_MAX - 1
};

/*
 * One attached file of a ring, one participant of an epoch domain, or one
 * holder (pool fd) of a pool.
 */
enum baton_a_peer {
	BATON_A_PEER_UNSPEC,
	BATON_A_PEER_PAD,
	BATON_A_PEER_PID,		/* u32, in the caller's pid namespace */
	BATON_A_PEER_ROLE,		/* u32, BATON_ROLE_* (rings) */
	BATON_A_PEER_INDEX,		/* u32, MPSC producer, participant or
					 * pool holder index */
	BATON_A_PEER_PARKED,		/* flag */
	BATON_A_PEER_ANNOUNCED,		/* u64, participant in a read section:
					 * the epoch it announced */
	BATON_A_PEER_PENDING,		/* u64, participant: queued, clamped */

	__BATON_A_PEER_MAX,
	BATON_A_PEER_MAX = __BATON_A_PEER_MAX - 1
};

enum baton_a_epoch {
	BATON_A_EPOCH_UNSPEC,
	BATON_A_EPOCH_PAD,
	BATON_A_EPOCH_NAME,		/* string */
	BATON_A_EPOCH_UID,		/* u32 */
	BATON_A_EPOCH_GID,		/* u32 */
	BATON_A_EPOCH_MODE,		/* u32 */
	BATON_A_EPOCH_UNLINKED,		/* flag */
	BATON_A_EPOCH_MAX_PARTICIPANTS,	/* u32 */
	BATON_A_EPOCH_QUEUE_LEN,	/* u32 */
	BATON_A_EPOCH_GLOBAL,		/* u64, the global epoch */
	BATON_A_EPOCH_FRONTIER,		/* u64 */
	BATON_A_EPOCH_PARTICIPANTS,	/* u32, registered */
	BATON_A_EPOCH_ACTIVE_READERS,	/* u32, inside a read section now */
	BATON_A_EPOCH_OLDEST,		/* u64, oldest announced epoch; absent
					 * when no reader is active */
	BATON_A_EPOCH_OLDEST_PID,	/* u32, whose announcement it is */
	BATON_A_EPOCH_PENDING,		/* u64, retirements not yet freed */
	BATON_A_EPOCH_SYNC_WAITERS,	/* u32, synchronizers waiting now */
	BATON_A_EPOCH_SYNC_WAITS,	/* u64, synchronize calls that slept */
	BATON_A_EPOCH_SYNC_TIMEOUTS,	/* u64, synchronize calls timed out */
	BATON_A_EPOCH_ORPHANS,		/* u32, dead participants draining */
	BATON_A_EPOCH_PEERS,		/* nest of BATON_A_EPOCH_PEER */
	BATON_A_EPOCH_PEER,		/* nest of baton_a_peer, repeated */
	BATON_A_EPOCH_PEERS_PARTIAL,	/* flag: PEERS was cut to fit a dump */
	BATON_A_EPOCH_ALL_NS,		/* flag, dump request: as RING_ALL_NS */
	BATON_A_EPOCH_IPC_NS,		/* u32, as BATON_A_RING_IPC_NS */

	__BATON_A_EPOCH_MAX,
	BATON_A_EPOCH_MAX = __BATON_A_EPOCH_MAX - 1
};

/* One buffer pool (Documentation/pool.rst). */
enum baton_a_pool {
	BATON_A_POOL_UNSPEC,
	BATON_A_POOL_PAD,
	BATON_A_POOL_NAME,		/* string */
	BATON_A_POOL_UID,		/* u32 */
	BATON_A_POOL_GID,		/* u32 */
	BATON_A_POOL_MODE,		/* u32 */
	BATON_A_POOL_UNLINKED,		/* flag */
	BATON_A_POOL_NR_CLASSES,	/* u32 */
	BATON_A_POOL_DECAY_MS,		/* u32, 0: never decays */
	BATON_A_POOL_KEEP,		/* u32, buffers a class always keeps */
	BATON_A_POOL_MAX_HOLDERS,	/* u32 */
	BATON_A_POOL_DATA_SIZE,		/* u64, bytes of all buffers */
	BATON_A_POOL_HOLDERS,		/* u32, pool fds open now */
	BATON_A_POOL_HOLDER_RELEASES,	/* u64, pool fds released */
	BATON_A_POOL_RECLAIMED,		/* u64, buffers returned for released
					 * holders */
	BATON_A_POOL_REPAIRED,		/* u64, queue entries settled for dead
					 * holders */
	BATON_A_POOL_DECAYED,		/* u64, buffers whose pages went back */
	BATON_A_POOL_DECAYED_BYTES,	/* u64, their bytes */
	BATON_A_POOL_DECAY_TICKS,	/* u64, decay timer runs */
	BATON_A_POOL_BAD_WORDS,		/* u64, corrupt shared words seen */
	BATON_A_POOL_CLASSES,		/* nest of BATON_A_POOL_CLASS */
	BATON_A_POOL_CLASS,		/* nest of baton_a_class, repeated */
	BATON_A_POOL_PEERS,		/* nest of BATON_A_POOL_PEER */
	BATON_A_POOL_PEER,		/* nest of baton_a_peer: a holder */
	BATON_A_POOL_PEERS_PARTIAL,	/* flag: PEERS was cut to fit a dump */
	BATON_A_POOL_ALL_NS,		/* flag, dump request: as RING_ALL_NS */
	BATON_A_POOL_IPC_NS,		/* u32, as BATON_A_RING_IPC_NS */

	__BATON_A_POOL_MAX,
	BATON_A_POOL_MAX = __BATON_A_POOL_MAX - 1
};

/* One size class of a pool. */
enum baton_a_class {
	BATON_A_CLASS_UNSPEC,
	BATON_A_CLASS_INDEX,		/* u32, 0..NR_CLASSES - 1 */
	BATON_A_CLASS_BUF_SIZE,		/* u32, bytes per buffer */
	BATON_A_CLASS_COUNT,		/* u32, buffers */
	BATON_A_CLASS_FREE,		/* u32, on the free queue: tail - head
					 * sampled, clamped to COUNT */
	BATON_A_CLASS_COLD,		/* u32, COLD buffers: free, off the
					 * queue, pages given back (the
					 * descriptors counted) */

	__BATON_A_CLASS_MAX,
	BATON_A_CLASS_MAX = __BATON_A_CLASS_MAX - 1
};

enum baton_event_type {
	BATON_EVENT_UNSPEC,
	BATON_EVENT_RING_CREATED,
	BATON_EVENT_RING_UNLINKED,
	BATON_EVENT_RING_DESTROYED,	/* last reference gone, memory freed */
	BATON_EVENT_EPOCH_CREATED,
	BATON_EVENT_EPOCH_UNLINKED,
	BATON_EVENT_EPOCH_DESTROYED,
	BATON_EVENT_PEER_DIED,		/* a ring file or participant released
					 * by an exiting process */
	BATON_EVENT_TOMBSTONES,		/* MPSC: slots of a dead producer */
	BATON_EVENT_STRAGGLER,		/* a synchronizer waited past the
					 * threshold for one reader */
	BATON_EVENT_POOL_CREATED,
	BATON_EVENT_POOL_UNLINKED,
	BATON_EVENT_POOL_DESTROYED,
	BATON_EVENT_POOL_RECLAIMED,	/* buffers of a released holder freed:
					 * count, pid and holder index */
	BATON_EVENT_POOL_DECAYED,	/* count: bytes the decay gave back */

	__BATON_EVENT_MAX,
	BATON_EVENT_MAX = __BATON_EVENT_MAX - 1
};

enum baton_a_event {
	BATON_A_EVENT_UNSPEC,
	BATON_A_EVENT_PAD,
	BATON_A_EVENT_TYPE,		/* u32, enum baton_event_type */
	BATON_A_EVENT_NAME,		/* string, the ring, domain or pool */
	BATON_A_EVENT_PID,		/* u32, who died / the straggler /
					 * the released pool holder */
	BATON_A_EVENT_ROLE,		/* u32, PEER_DIED on a ring */
	BATON_A_EVENT_INDEX,		/* u32, MPSC producer / participant /
					 * pool holder index */
	BATON_A_EVENT_COUNT,		/* u64, TOMBSTONES: consecutive tickets
					 * (several events may follow: add);
					 * POOL_RECLAIMED: buffers;
					 * POOL_DECAYED: bytes */
	BATON_A_EVENT_TICKET,		/* u64, TOMBSTONES: first ticket */
	BATON_A_EVENT_EPOCH,		/* u64, STRAGGLER: its announcement */
	BATON_A_EVENT_WAITED_MS,	/* u64, STRAGGLER: waited so far */
	BATON_A_EVENT_DROPS,		/* u64, events this watcher lost so
					 * far (absent while none) */

	__BATON_A_EVENT_MAX,
	BATON_A_EVENT_MAX = __BATON_A_EVENT_MAX - 1
};

#endif /* _UAPI_LINUX_BATON_NL_H */
