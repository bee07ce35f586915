// SPDX-License-Identifier: GPL-2.0
/*
 * baton: the generic netlink family "baton" (uapi/linux/baton_nl.h).
 *
 * Owns the family, its policies and handlers (RING_GET, EPOCH_GET and
 * POOL_GET as doit by name and dumpit of every visible object, WATCH and
 * UNWATCH), the watchers, and the event queue that ring.c, mpsc.c,
 * epoch.c and pool.c feed through baton_event(). Documentation/netlink.rst is the prose; the
 * spec is Documentation/netlink/specs/baton.yaml.
 *
 * What a caller sees: only objects baton_named_visible() (owner.c) lets
 * both the sender and the socket's opener see (struct baton_nl_reader):
 * the sender's credentials of the moment for a doit, those of the dump's
 * start for a dump (a dump continues in recvmsg(), possibly of another
 * task), and those a watcher had at WATCH time for events. An invisible
 * object is ENOENT, as one that does not exist. An ALL_NS dump
 * (CAP_SYS_ADMIN in the initial user namespace, socket opener and caller)
 * lists every object of every IPC namespace, with its namespace. Pids are
 * numbers of the caller's pid namespace; a peer without one is omitted.
 *
 * Budgets are per user (baton_nl_charged_uid()): max_watchers sockets
 * each, charged to the opener, and BATON_NL_PENDING_MAX queued events
 * each, charged to the task that caused them (the object's owner for a
 * kernel thread's events and for DESTROYED: baton_nl_payer()). A watcher is its socket
 * (a held struct sock), never a port id, which another socket may bind
 * before this one's release is over.
 *
 * Events. On 6.1 a multicast group cannot be restricted (unless the
 * kernel carries the GENL_MCAST_CAP_SYS_ADMIN backport) and
 * netlink_broadcast_filtered() is not exported, so every event is
 * unicast to each watching socket for which the visibility rule, run
 * under the watcher's saved credentials, passes. The "events" group is
 * declared; only with GENL_MCAST_CAP_SYS_ADMIN is it admin-only and fed,
 * in the initial network namespace, with pids of the initial pid
 * namespace. Emitters only queue a copy (baton_event(), any context
 * that may allocate with the gfp it passes); a work item delivers.
 *
 * Locking:
 *  - baton_nl_watch_lock (mutex): the watcher list and each watcher's
 *    drop count. Held while an event is delivered: the unicasts never
 *    block (MSG_DONTWAIT); a full socket costs the watcher a drop.
 *  - baton_nl_queue_lock (spinlock): the pending events, the per-user
 *    pending counts and the stopping flag. Innermost: emitters may hold
 *    mpsc.c's spinlock or an epoch domain's mutex.
 *  - registry mutexes and object locks are taken through owner.c and the
 *    stats functions, never with either lock above held.
 */
#include <linux/atomic.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/netlink.h>
#include <linux/net.h>
#include <linux/notifier.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/netlink.h>
#include <net/sock.h>

#include <linux/baton.h>
#include <linux/baton_nl.h>

#include "baton_kmod.h"
#include "compat.h"

static unsigned int max_watchers = 64;
module_param(max_watchers, uint, 0644);
MODULE_PARM_DESC(max_watchers,
		 "netlink sockets one user may subscribe with BATON_CMD_WATCH at once (64)");

static unsigned int straggler_ms = 1000;
module_param(straggler_ms, uint, 0644);
MODULE_PARM_DESC(straggler_ms,
		 "a synchronize held up this long by one reader emits BATON_EVENT_STRAGGLER (1000)");

/* Events one user caused, queued and not yet delivered; beyond: lost. */
#define BATON_NL_PENDING_MAX	1024

/* Room for one peer nest in a reply (see baton_nl_put_peer()). */
#define BATON_NL_PEER_SIZE	64
/* Everything of a ring or domain but its peers. */
#define BATON_NL_BASE_SIZE	1024
/* A dump that must cut a peer list leaves this much for the rest. */
#define BATON_NL_PARTIAL_ROOM	64

unsigned int baton_straggler_ms(void)
{
	return READ_ONCE(straggler_ms);
}

/*
 * A released ring file or participant counts as a peer death when the
 * releasing task is exiting (the file went with its process: kill -9,
 * exit without close) or when the process that attached it has no task
 * left (it died and the file outlived it in a child).
 */
bool baton_peer_died(struct pid *opener)
{
	if (current->flags & PF_EXITING)
		return true;
	return opener && !pid_has_task(opener, PIDTYPE_TGID);
}

/* ---- who is asking ---- */

/*
 * The credentials the socket that carried @skb was opened with, or NULL
 * (a kernel socket has no file). The sender's sendmsg() holds the file.
 */
static const struct cred *baton_nl_opener_cred(const struct sk_buff *skb)
{
	const struct sock *sk = NETLINK_CB(skb).sk;

	if (!sk || !sk->sk_socket || !sk->sk_socket->file)
		return NULL;
	return sk->sk_socket->file->f_cred;
}

/*
 * Who a request, a dump or a watcher answers to: the task that sent the
 * request and the one that opened the socket (the CVE-2014-0181 class: a
 * setuid program handed an unprivileged socket as its stdout must not
 * write root's questions into it), both checked, as netlink_ns_capable()
 * does; names are seen from the sender's IPC namespace.
 */
struct baton_nl_reader {
	const struct cred *sender;
	const struct cred *opener;	/* NULL: a kernel socket */
	struct ipc_namespace *ipc_ns;
};

static bool baton_nl_visible_as(const struct baton_named *n,
				struct ipc_namespace *ipc_ns,
				const struct cred *cred)
{
	const struct cred *old = override_creds(cred);
	bool visible = baton_named_visible(n, ipc_ns);

	revert_creds(old);
	return visible;
}

static bool baton_nl_visible(const struct baton_named *n,
			     const struct baton_nl_reader *r)
{
	return baton_nl_visible_as(n, r->ipc_ns, r->sender) &&
	       (!r->opener || baton_nl_visible_as(n, r->ipc_ns, r->opener));
}

/* The reader of a request, with references (undone by _put()). */
static void baton_nl_reader_get(struct baton_nl_reader *r,
				const struct sk_buff *skb)
{
	const struct cred *opener = baton_nl_opener_cred(skb);

	r->sender = get_current_cred();
	r->opener = opener ? get_cred(opener) : NULL;
	r->ipc_ns = baton_get_ipc_ns(baton_current_ipc_ns());
}

static void baton_nl_reader_put(struct baton_nl_reader *r)
{
	put_cred(r->sender);
	if (r->opener)
		put_cred(r->opener);
	baton_put_ipc_ns(r->ipc_ns);
}

/*
 * The user whom a watcher slot or a queued event is charged to: the
 * effective uid; for a credential of a user namespace that a user other
 * than root made (or of one nested in it), the outermost such owner, so
 * that the uids a user maps into its namespaces (subordinate ids) share
 * its budget. A namespace root made (a system container) folds into
 * nobody: its uids are root's to hand out, as host users are, and folding
 * them into root would let any user of any such container spend root's
 * budget (selftests/netlink_watchers.c, a_root_made_user_namespace_...).
 */
static kuid_t baton_nl_charged_uid(const struct cred *cred)
{
	const struct user_namespace *ns;
	kuid_t uid = cred->euid;

	for (ns = cred->user_ns; ns != &init_user_ns; ns = ns->parent)
		if (!uid_eq(ns->owner, GLOBAL_ROOT_UID))
			uid = ns->owner;
	return uid;
}

/* ---- the family ---- */

enum { BATON_NL_MCGRP_EVENTS_ID };

static const struct genl_multicast_group baton_nl_mcgrps[] = {
	[BATON_NL_MCGRP_EVENTS_ID] = {
		.name = BATON_MCGRP_EVENTS,
#ifdef GENL_MCAST_CAP_SYS_ADMIN
		/* Joining needs CAP_SYS_ADMIN over the socket's netns. */
		.flags = GENL_MCAST_CAP_SYS_ADMIN,
#endif
	},
};

static struct genl_family baton_nl_family;

/* ---- replies: one ring or domain ---- */

/* Where a message goes and what the reader's pid namespace is. */
struct baton_nl_msg {
	u32 portid;
	u32 seq;
	int flags;
	struct pid_namespace *ns;
	bool partial_ok;		/* a dump's first object: cut peers */
	bool ipc_ns;			/* an ALL_NS dump: say whose it is */
};

/* What one GET reports; taken before the message is built. */
struct baton_nl_snap {
	bool unlinked;
	union {
		struct baton_ring_stats ring;
		struct baton_epoch_stats epoch;
		struct baton_pool_stats pool;
	};
};

void baton_stats_peers_free(struct baton_peer_stat *peers, u32 nr)
{
	u32 i;

	for (i = 0; i < nr; i++)
		put_pid(peers[i].pid);
	kvfree(peers);
}

static int baton_nl_put_peer(struct sk_buff *skb,
			     const struct baton_peer_stat *p, pid_t pid)
{
	if (nla_put_u32(skb, BATON_A_PEER_PID, pid))
		return -EMSGSIZE;
	if (p->role && nla_put_u32(skb, BATON_A_PEER_ROLE, p->role))
		return -EMSGSIZE;
	if (p->index >= 0 && nla_put_u32(skb, BATON_A_PEER_INDEX, p->index))
		return -EMSGSIZE;
	if (p->parked && nla_put_flag(skb, BATON_A_PEER_PARKED))
		return -EMSGSIZE;
	if (p->active && nla_put_u64_64bit(skb, BATON_A_PEER_ANNOUNCED,
					   p->announced, BATON_A_PEER_PAD))
		return -EMSGSIZE;
	/* Participants have no role; their queue is what they hold. */
	if (!p->role && !p->holder &&
	    nla_put_u64_64bit(skb, BATON_A_PEER_PENDING, p->pending,
			      BATON_A_PEER_PAD))
		return -EMSGSIZE;
	return 0;
}

/*
 * The peers nest. A peer whose pid has no number in the reader's pid
 * namespace is left out. Only a dump's first object may be cut short (it
 * cannot move to a later message): then the nest ends early and
 * @partial_attr says so.
 */
static int baton_nl_put_peers(struct sk_buff *skb,
			      const struct baton_peer_stat *peers, u32 nr,
			      int nest_attr, int peer_attr, int partial_attr,
			      const struct baton_nl_msg *m)
{
	struct nlattr *nest, *one;
	u32 i;

	nest = nla_nest_start(skb, nest_attr);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < nr; i++) {
		pid_t pid = pid_nr_ns(peers[i].pid, m->ns);

		if (!pid)
			continue;
		if (m->partial_ok && skb_tailroom(skb) <
		    BATON_NL_PEER_SIZE + BATON_NL_PARTIAL_ROOM) {
			nla_nest_end(skb, nest);
			return nla_put_flag(skb, partial_attr);
		}
		one = nla_nest_start(skb, peer_attr);
		if (!one || baton_nl_put_peer(skb, &peers[i], pid)) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
		nla_nest_end(skb, one);
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* Owner and group as the reader's user namespace maps them. */
static int baton_nl_put_owner(struct sk_buff *skb, const struct baton_owner *o,
			      int uid_attr, int gid_attr, int mode_attr)
{
	struct user_namespace *ns = current_user_ns();

	if (nla_put_u32(skb, uid_attr, from_kuid_munged(ns, o->uid)) ||
	    nla_put_u32(skb, gid_attr, from_kgid_munged(ns, o->gid)) ||
	    nla_put_u32(skb, mode_attr, o->mode))
		return -EMSGSIZE;
	return 0;
}

/* A u64 counter attribute and where its value lies in a stats snapshot. */
struct baton_nl_ctr {
	int attr;
	size_t off;
};

/* Every counter of @ctrs, read from the snapshot @st. */
static int baton_nl_put_ctrs(struct sk_buff *skb, const void *st,
			     const struct baton_nl_ctr *ctrs, size_t nr,
			     int pad)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		u64 v = *(const u64 *)((const u8 *)st + ctrs[i].off);

		if (nla_put_u64_64bit(skb, ctrs[i].attr, v, pad))
			return -EMSGSIZE;
	}
	return 0;
}

static int baton_nl_put_ring_counters(struct sk_buff *skb,
				      const struct baton_ring_stats *st)
{
	static const struct baton_nl_ctr ctrs[] = {
		{ BATON_A_RING_HEAD, offsetof(struct baton_ring_stats, head) },
		{ BATON_A_RING_TAIL, offsetof(struct baton_ring_stats, tail) },
		{ BATON_A_RING_OCCUPANCY,
		  offsetof(struct baton_ring_stats, occupancy) },
		{ BATON_A_RING_PARKS_FULL,
		  offsetof(struct baton_ring_stats, parks_full) },
		{ BATON_A_RING_PARKS_EMPTY,
		  offsetof(struct baton_ring_stats, parks_empty) },
		{ BATON_A_RING_WAKES_OF_PRODUCER,
		  offsetof(struct baton_ring_stats, wakes_of_producer) },
		{ BATON_A_RING_WAKES_OF_CONSUMER,
		  offsetof(struct baton_ring_stats, wakes_of_consumer) },
		{ BATON_A_RING_PRODUCER_DEATHS,
		  offsetof(struct baton_ring_stats, producer_deaths) },
		{ BATON_A_RING_CONSUMER_DEATHS,
		  offsetof(struct baton_ring_stats, consumer_deaths) },
		{ BATON_A_RING_TOMBSTONES,
		  offsetof(struct baton_ring_stats, tombstones) },
		/* Messages moved are the free-running indices themselves. */
		{ BATON_A_RING_MSGS_CONSUMED,
		  offsetof(struct baton_ring_stats, head) },
		{ BATON_A_RING_MSGS_RESERVED,
		  offsetof(struct baton_ring_stats, tail) },
		{ BATON_A_RING_SCRIBBLES,
		  offsetof(struct baton_ring_stats, scribbles) },
	};

	return baton_nl_put_ctrs(skb, st, ctrs, ARRAY_SIZE(ctrs),
				 BATON_A_RING_PAD);
}

static int baton_nl_fill_ring(struct sk_buff *skb, const struct baton_named *n,
			      const struct baton_nl_snap *snap,
			      const struct baton_nl_msg *m)
{
	const struct baton_ring_stats *st = &snap->ring;
	void *hdr;

	hdr = genlmsg_put(skb, m->portid, m->seq, &baton_nl_family, m->flags,
			  BATON_CMD_RING_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_string(skb, BATON_A_RING_NAME, n->name) ||
	    (m->ipc_ns && nla_put_u32(skb, BATON_A_RING_IPC_NS,
				      baton_named_ns_id(n))) ||
	    nla_put_u32(skb, BATON_A_RING_KIND, st->kind) ||
	    nla_put_u32(skb, BATON_A_RING_SLOT_COUNT, st->slot_count) ||
	    nla_put_u32(skb, BATON_A_RING_SLOT_SIZE, st->slot_size) ||
	    nla_put_u32(skb, BATON_A_RING_MAX_PRODUCERS, st->max_producers) ||
	    baton_nl_put_owner(skb, &n->owner, BATON_A_RING_UID,
			       BATON_A_RING_GID, BATON_A_RING_MODE) ||
	    nla_put_u32(skb, BATON_A_RING_STATE, st->state) ||
	    (snap->unlinked && nla_put_flag(skb, BATON_A_RING_UNLINKED)) ||
	    nla_put_u32(skb, BATON_A_RING_PRODUCERS, st->producers) ||
	    nla_put_u32(skb, BATON_A_RING_CONSUMERS, st->consumers) ||
	    nla_put_u32(skb, BATON_A_RING_PARKED_PRODUCERS,
			st->parked_producers) ||
	    nla_put_u32(skb, BATON_A_RING_PARKED_CONSUMERS,
			st->parked_consumers) ||
	    baton_nl_put_ring_counters(skb, st) ||
	    baton_nl_put_peers(skb, st->peers, st->nr_peers,
			       BATON_A_RING_PEERS, BATON_A_RING_PEER,
			       BATON_A_RING_PEERS_PARTIAL, m))
		goto cancel;
	genlmsg_end(skb, hdr);
	return 0;
cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static int baton_nl_put_epoch_oldest(struct sk_buff *skb,
				     const struct baton_epoch_stats *st,
				     struct pid_namespace *ns)
{
	pid_t pid;

	if (!st->oldest_pid)
		return 0;
	if (nla_put_u64_64bit(skb, BATON_A_EPOCH_OLDEST, st->oldest,
			      BATON_A_EPOCH_PAD))
		return -EMSGSIZE;
	pid = pid_nr_ns(st->oldest_pid, ns);
	if (pid && nla_put_u32(skb, BATON_A_EPOCH_OLDEST_PID, pid))
		return -EMSGSIZE;
	return 0;
}

static int baton_nl_fill_epoch(struct sk_buff *skb,
			       const struct baton_named *n,
			       const struct baton_nl_snap *snap,
			       const struct baton_nl_msg *m)
{
	const struct baton_epoch_stats *st = &snap->epoch;
	void *hdr;

	hdr = genlmsg_put(skb, m->portid, m->seq, &baton_nl_family, m->flags,
			  BATON_CMD_EPOCH_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_string(skb, BATON_A_EPOCH_NAME, n->name) ||
	    (m->ipc_ns && nla_put_u32(skb, BATON_A_EPOCH_IPC_NS,
				      baton_named_ns_id(n))) ||
	    baton_nl_put_owner(skb, &n->owner, BATON_A_EPOCH_UID,
			       BATON_A_EPOCH_GID, BATON_A_EPOCH_MODE) ||
	    (snap->unlinked && nla_put_flag(skb, BATON_A_EPOCH_UNLINKED)) ||
	    nla_put_u32(skb, BATON_A_EPOCH_MAX_PARTICIPANTS,
			st->max_participants) ||
	    nla_put_u32(skb, BATON_A_EPOCH_QUEUE_LEN, st->queue_len) ||
	    nla_put_u64_64bit(skb, BATON_A_EPOCH_GLOBAL, st->global,
			      BATON_A_EPOCH_PAD) ||
	    nla_put_u64_64bit(skb, BATON_A_EPOCH_FRONTIER, st->frontier,
			      BATON_A_EPOCH_PAD) ||
	    nla_put_u32(skb, BATON_A_EPOCH_PARTICIPANTS, st->participants) ||
	    nla_put_u32(skb, BATON_A_EPOCH_ACTIVE_READERS,
			st->active_readers) ||
	    baton_nl_put_epoch_oldest(skb, st, m->ns) ||
	    nla_put_u64_64bit(skb, BATON_A_EPOCH_PENDING, st->pending,
			      BATON_A_EPOCH_PAD) ||
	    nla_put_u32(skb, BATON_A_EPOCH_SYNC_WAITERS, st->sync_waiters) ||
	    nla_put_u64_64bit(skb, BATON_A_EPOCH_SYNC_WAITS, st->sync_waits,
			      BATON_A_EPOCH_PAD) ||
	    nla_put_u64_64bit(skb, BATON_A_EPOCH_SYNC_TIMEOUTS,
			      st->sync_timeouts, BATON_A_EPOCH_PAD) ||
	    nla_put_u32(skb, BATON_A_EPOCH_ORPHANS, st->orphans) ||
	    baton_nl_put_peers(skb, st->peers, st->nr_peers,
			       BATON_A_EPOCH_PEERS, BATON_A_EPOCH_PEER,
			       BATON_A_EPOCH_PEERS_PARTIAL, m))
		goto cancel;
	genlmsg_end(skb, hdr);
	return 0;
cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* One nest per class: geometry (trusted) and its free buffers (sampled). */
static int baton_nl_put_classes(struct sk_buff *skb,
				const struct baton_pool_stats *st)
{
	struct nlattr *nest, *one;
	u32 i;

	nest = nla_nest_start(skb, BATON_A_POOL_CLASSES);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < st->nr_classes; i++) {
		const struct baton_pool_class_stat *c = &st->cls[i];

		one = nla_nest_start(skb, BATON_A_POOL_CLASS);
		if (!one ||
		    nla_put_u32(skb, BATON_A_CLASS_INDEX, i) ||
		    nla_put_u32(skb, BATON_A_CLASS_BUF_SIZE,
				1U << c->buf_shift) ||
		    nla_put_u32(skb, BATON_A_CLASS_COUNT, c->count) ||
		    nla_put_u32(skb, BATON_A_CLASS_FREE, c->free) ||
		    nla_put_u32(skb, BATON_A_CLASS_COLD, c->cold)) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
		nla_nest_end(skb, one);
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int baton_nl_put_pool_counters(struct sk_buff *skb,
				      const struct baton_pool_stats *st)
{
	static const struct baton_nl_ctr ctrs[] = {
		{ BATON_A_POOL_DATA_SIZE,
		  offsetof(struct baton_pool_stats, data_size) },
		{ BATON_A_POOL_HOLDER_RELEASES,
		  offsetof(struct baton_pool_stats, holder_releases) },
		{ BATON_A_POOL_RECLAIMED,
		  offsetof(struct baton_pool_stats, reclaimed) },
		{ BATON_A_POOL_REPAIRED,
		  offsetof(struct baton_pool_stats, repaired) },
		{ BATON_A_POOL_DECAYED,
		  offsetof(struct baton_pool_stats, decayed) },
		{ BATON_A_POOL_DECAYED_BYTES,
		  offsetof(struct baton_pool_stats, decayed_bytes) },
		{ BATON_A_POOL_DECAY_TICKS,
		  offsetof(struct baton_pool_stats, decay_ticks) },
		{ BATON_A_POOL_BAD_WORDS,
		  offsetof(struct baton_pool_stats, bad_words) },
	};

	return baton_nl_put_ctrs(skb, st, ctrs, ARRAY_SIZE(ctrs),
				 BATON_A_POOL_PAD);
}

static int baton_nl_fill_pool(struct sk_buff *skb, const struct baton_named *n,
			      const struct baton_nl_snap *snap,
			      const struct baton_nl_msg *m)
{
	const struct baton_pool_stats *st = &snap->pool;
	void *hdr;

	hdr = genlmsg_put(skb, m->portid, m->seq, &baton_nl_family, m->flags,
			  BATON_CMD_POOL_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_string(skb, BATON_A_POOL_NAME, n->name) ||
	    (m->ipc_ns && nla_put_u32(skb, BATON_A_POOL_IPC_NS,
				      baton_named_ns_id(n))) ||
	    baton_nl_put_owner(skb, &n->owner, BATON_A_POOL_UID,
			       BATON_A_POOL_GID, BATON_A_POOL_MODE) ||
	    (snap->unlinked && nla_put_flag(skb, BATON_A_POOL_UNLINKED)) ||
	    nla_put_u32(skb, BATON_A_POOL_NR_CLASSES, st->nr_classes) ||
	    nla_put_u32(skb, BATON_A_POOL_DECAY_MS, st->decay_ms) ||
	    nla_put_u32(skb, BATON_A_POOL_KEEP, st->keep) ||
	    nla_put_u32(skb, BATON_A_POOL_MAX_HOLDERS, st->max_holders) ||
	    nla_put_u32(skb, BATON_A_POOL_HOLDERS, st->holders) ||
	    baton_nl_put_pool_counters(skb, st) ||
	    baton_nl_put_classes(skb, st) ||
	    baton_nl_put_peers(skb, st->peers, st->nr_peers,
			       BATON_A_POOL_PEERS, BATON_A_POOL_PEER,
			       BATON_A_POOL_PEERS_PARTIAL, m))
		goto cancel;
	genlmsg_end(skb, hdr);
	return 0;
cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* ---- the three kinds of object, one set of handlers ---- */

struct baton_nl_kind {
	struct baton_names *names;
	int name_attr;
	int (*snap)(const struct baton_named *n, struct baton_nl_snap *s);
	int (*fill)(struct sk_buff *skb, const struct baton_named *n,
		    const struct baton_nl_snap *s, const struct baton_nl_msg *m);
	void (*release)(struct baton_nl_snap *s);
	u32 (*nr_peers)(const struct baton_nl_snap *s);
};

static int baton_nl_ring_snap(const struct baton_named *n,
			      struct baton_nl_snap *s)
{
	return baton_ring_stats(n, &s->ring);
}

static void baton_nl_ring_release(struct baton_nl_snap *s)
{
	baton_stats_peers_free(s->ring.peers, s->ring.nr_peers);
}

static u32 baton_nl_ring_nr_peers(const struct baton_nl_snap *s)
{
	return s->ring.nr_peers;
}

static int baton_nl_epoch_snap(const struct baton_named *n,
			       struct baton_nl_snap *s)
{
	return baton_epoch_stats(n, &s->epoch);
}

static void baton_nl_epoch_release(struct baton_nl_snap *s)
{
	put_pid(s->epoch.oldest_pid);
	baton_stats_peers_free(s->epoch.peers, s->epoch.nr_peers);
}

static u32 baton_nl_epoch_nr_peers(const struct baton_nl_snap *s)
{
	return s->epoch.nr_peers;
}

static int baton_nl_pool_snap(const struct baton_named *n,
			      struct baton_nl_snap *s)
{
	return baton_pool_stats(n, &s->pool);
}

static void baton_nl_pool_release(struct baton_nl_snap *s)
{
	baton_stats_peers_free(s->pool.peers, s->pool.nr_peers);
}

static u32 baton_nl_pool_nr_peers(const struct baton_nl_snap *s)
{
	return s->pool.nr_peers;
}

static const struct baton_nl_kind baton_nl_rings = {
	.names = &baton_rings,
	.name_attr = BATON_A_RING_NAME,
	.snap = baton_nl_ring_snap,
	.fill = baton_nl_fill_ring,
	.release = baton_nl_ring_release,
	.nr_peers = baton_nl_ring_nr_peers,
};

static const struct baton_nl_kind baton_nl_domains = {
	.names = &baton_domains,
	.name_attr = BATON_A_EPOCH_NAME,
	.snap = baton_nl_epoch_snap,
	.fill = baton_nl_fill_epoch,
	.release = baton_nl_epoch_release,
	.nr_peers = baton_nl_epoch_nr_peers,
};

static const struct baton_nl_kind baton_nl_pools = {
	.names = &baton_pools,
	.name_attr = BATON_A_POOL_NAME,
	.snap = baton_nl_pool_snap,
	.fill = baton_nl_fill_pool,
	.release = baton_nl_pool_release,
	.nr_peers = baton_nl_pool_nr_peers,
};

static int baton_nl_take_snap(const struct baton_nl_kind *kind,
			      struct baton_named *n, struct baton_nl_snap *s)
{
	s->unlinked = baton_named_unlinked(kind->names, n);
	return kind->snap(n, s);
}

/* The object named by the request, if the caller may see it, with a ref. */
static struct baton_named *baton_nl_lookup(const struct baton_nl_kind *kind,
					   const struct sk_buff *skb,
					   struct genl_info *info)
{
	struct nlattr *attr = info->attrs[kind->name_attr];
	/* No references: the request holds both for the doit's length. */
	struct baton_nl_reader r = {
		.sender = current_cred(),
		.opener = baton_nl_opener_cred(skb),
		.ipc_ns = baton_current_ipc_ns(),
	};
	struct baton_named *n;

	if (baton_check_name(nla_data(attr))) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "invalid name: 1..63 bytes of [A-Za-z0-9._-]");
		return ERR_PTR(-EINVAL);
	}

	n = baton_names_get(kind->names, nla_data(attr));
	if (n && !baton_nl_visible(n, &r)) {
		/* ENOENT, as for a missing one: names must not leak. */
		baton_named_put(kind->names, n);
		n = NULL;
	}
	if (!n) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "no such object");
		return ERR_PTR(-ENOENT);
	}
	return n;
}

static int baton_nl_get_doit(const struct baton_nl_kind *kind,
			     const struct sk_buff *skb, struct genl_info *info)
{
	struct baton_nl_msg m = {
		.portid = info->snd_portid,
		.seq = info->snd_seq,
		.ns = task_active_pid_ns(current),
	};
	struct baton_nl_snap snap;
	struct baton_named *n;
	struct sk_buff *msg;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, kind->name_attr)) {
		GENL_SET_ERR_MSG(info, "the name attribute is required");
		return -EINVAL;
	}
	n = baton_nl_lookup(kind, skb, info);
	if (IS_ERR(n))
		return PTR_ERR(n);
	ret = baton_nl_take_snap(kind, n, &snap);
	if (ret)
		goto put;
	/* Sized for every peer: a doit reply is never cut short. */
	msg = genlmsg_new(BATON_NL_BASE_SIZE +
			  kind->nr_peers(&snap) * BATON_NL_PEER_SIZE,
			  GFP_KERNEL);
	if (!msg) {
		ret = -ENOMEM;
		goto release;
	}
	ret = kind->fill(msg, n, &snap, &m);
	if (ret)
		nlmsg_free(msg);
	else
		ret = genlmsg_reply(msg, info);
release:
	kind->release(&snap);
put:
	baton_named_put(kind->names, n);
	return ret;
}

/*
 * A dump's state between calls (cb->ctx): the id of the last object
 * sent (owner.c keeps ids in registry order, so an object removed
 * meanwhile is simply not found again), who it answers to (the task that
 * started it and the socket's opener) and that task's pid namespace.
 */
struct baton_nl_dump {
	u64 cursor;
	struct baton_nl_reader reader;
	struct pid_namespace *ns;
	bool all_ns;			/* names from every IPC namespace */
};

static struct baton_nl_dump *baton_nl_dump_ctx(struct netlink_callback *cb)
{
	BUILD_BUG_ON(sizeof(struct baton_nl_dump) > sizeof(cb->ctx));
	return (struct baton_nl_dump *)cb->ctx;
}

/* The flag attribute of a dump of @cmd that asks for every namespace. */
static int baton_nl_all_ns_attr(u8 cmd)
{
	switch (cmd) {
	case BATON_CMD_RING_GET:
		return BATON_A_RING_ALL_NS;
	case BATON_CMD_EPOCH_GET:
		return BATON_A_EPOCH_ALL_NS;
	default:
		return BATON_A_POOL_ALL_NS;
	}
}

/*
 * ALL_NS: objects of every IPC namespace, those left behind in one whose
 * processes are gone included, for an administrator of the initial user
 * namespace: the socket's opener and the caller both, so a setuid program
 * writing to a socket it was handed proves nothing. netlink_ns_capable()
 * alone asks the opener only when the request came without a destination
 * address (NETLINK_SKB_DST unset): sent with sendto(), as libnl sends, a
 * root sender on nobody's socket passed. So the opener is asked here
 * itself, from the socket's file.
 */
static bool baton_nl_all_ns_allowed(const struct sk_buff *skb)
{
	const struct sock *sk = NETLINK_CB(skb).sk;
	const struct file *file = sk && sk->sk_socket ? sk->sk_socket->file :
				  NULL;

	return file && file_ns_capable(file, &init_user_ns, CAP_SYS_ADMIN) &&
	       netlink_ns_capable(skb, &init_user_ns, CAP_SYS_ADMIN);
}

static int baton_nl_dump_start(struct netlink_callback *cb)
{
	const struct genl_dumpit_info *info = genl_dumpit_info(cb);
	struct nlattr **attrs = baton_genl_dump_attrs(info);
	struct baton_nl_dump *ctx = baton_nl_dump_ctx(cb);
	int all_ns_attr = baton_nl_all_ns_attr(info->op.cmd);

	/* First: a failed start is not followed by ->done. */
	ctx->all_ns = attrs && attrs[all_ns_attr];
	if (ctx->all_ns && !baton_nl_all_ns_allowed(cb->skb)) {
		NL_SET_ERR_MSG_ATTR(cb->extack, attrs[all_ns_attr],
				    "ALL_NS needs CAP_SYS_ADMIN in the initial user namespace");
		return -EPERM;
	}
	ctx->cursor = 0;
	baton_nl_reader_get(&ctx->reader, cb->skb);
	ctx->ns = get_pid_ns(task_active_pid_ns(current));
	return 0;
}

static int baton_nl_dump_done(struct netlink_callback *cb)
{
	struct baton_nl_dump *ctx = baton_nl_dump_ctx(cb);

	baton_nl_reader_put(&ctx->reader);
	put_pid_ns(ctx->ns);
	return 0;
}

/* One object into the dump: 0, or -EMSGSIZE when it must wait. */
static int baton_nl_dump_one(const struct baton_nl_kind *kind,
			     struct sk_buff *skb, struct netlink_callback *cb,
			     struct baton_named *n)
{
	struct baton_nl_msg m = {
		.portid = NETLINK_CB(cb->skb).portid,
		.seq = cb->nlh->nlmsg_seq,
		.flags = NLM_F_MULTI,
		.ns = baton_nl_dump_ctx(cb)->ns,
		.partial_ok = !skb->len,
		.ipc_ns = baton_nl_dump_ctx(cb)->all_ns,
	};
	struct baton_nl_snap snap;
	int ret;

	if (!m.ipc_ns && !baton_nl_visible(n, &baton_nl_dump_ctx(cb)->reader))
		return 0;
	ret = baton_nl_take_snap(kind, n, &snap);
	if (ret)
		return ret;
	ret = kind->fill(skb, n, &snap, &m);
	kind->release(&snap);
	return ret;
}

static int baton_nl_get_dumpit(const struct baton_nl_kind *kind,
			       struct sk_buff *skb,
			       struct netlink_callback *cb)
{
	struct baton_nl_dump *ctx = baton_nl_dump_ctx(cb);
	/* The owner is mapped in the user namespace of the dump's starter. */
	const struct cred *old = override_creds(ctx->reader.sender);
	struct baton_named *n;
	int ret = 0;

	while ((n = baton_names_next(kind->names, ctx->cursor))) {
		u64 id = n->id;

		ret = baton_nl_dump_one(kind, skb, cb, n);
		baton_named_put(kind->names, n);
		if (ret)
			break;
		ctx->cursor = id;
	}
	revert_creds(old);
	/* Full: this object opens the next message. */
	if (ret == -EMSGSIZE && skb->len)
		ret = 0;
	return ret ? ret : skb->len;
}

static int baton_nl_ring_doit(struct sk_buff *skb, struct genl_info *info)
{
	return baton_nl_get_doit(&baton_nl_rings, skb, info);
}

static int baton_nl_ring_dumpit(struct sk_buff *skb,
				struct netlink_callback *cb)
{
	return baton_nl_get_dumpit(&baton_nl_rings, skb, cb);
}

static int baton_nl_epoch_doit(struct sk_buff *skb, struct genl_info *info)
{
	return baton_nl_get_doit(&baton_nl_domains, skb, info);
}

static int baton_nl_epoch_dumpit(struct sk_buff *skb,
				 struct netlink_callback *cb)
{
	return baton_nl_get_dumpit(&baton_nl_domains, skb, cb);
}

static int baton_nl_pool_doit(struct sk_buff *skb, struct genl_info *info)
{
	return baton_nl_get_doit(&baton_nl_pools, skb, info);
}

static int baton_nl_pool_dumpit(struct sk_buff *skb,
				struct netlink_callback *cb)
{
	return baton_nl_get_dumpit(&baton_nl_pools, skb, cb);
}

/* ---- watchers ---- */

/*
 * One subscribed socket: the socket itself (a reference on its struct
 * sock, not only its port id: a port id is free again from the socket's
 * netlink_remove() on, before the URELEASE notifier tells us, and a new
 * socket bound to it must not inherit this subscription), who it answers
 * to, the user it is charged to, and the pid namespace for pid numbers.
 */
struct baton_watcher {
	struct list_head node;		/* baton_nl_watchers */
	struct sock *sk;
	u32 portid;
	struct baton_nl_reader reader;
	kuid_t uid;			/* charged: max_watchers each */
	struct pid_namespace *ns;
	u64 drops;			/* its socket was full (or no memory) */
	u64 lost_base;			/* baton_nl_lost at WATCH time */
};

static DEFINE_MUTEX(baton_nl_watch_lock);
static LIST_HEAD(baton_nl_watchers);
/* Events lost before delivery (queue full, no memory): every watcher's. */
static atomic64_t baton_nl_lost = ATOMIC64_INIT(0);

/* The socket that sent a request (@skb): the watcher is that socket's. */
static struct sock *baton_nl_sender_sk(const struct sk_buff *skb)
{
	return NETLINK_CB(skb).sk;
}

static struct baton_watcher *baton_watcher_find(const struct sock *sk)
{
	struct baton_watcher *w;

	lockdep_assert_held(&baton_nl_watch_lock);
	list_for_each_entry(w, &baton_nl_watchers, node)
		if (w->sk == sk)
			return w;
	return NULL;
}

/* Watchers charged to @uid: one user's cannot crowd out another's. */
static unsigned int baton_watchers_of(kuid_t uid)
{
	struct baton_watcher *w;
	unsigned int nr = 0;

	lockdep_assert_held(&baton_nl_watch_lock);
	list_for_each_entry(w, &baton_nl_watchers, node)
		nr += uid_eq(w->uid, uid);
	return nr;
}

/* Released (sock_orphan() runs right after netlink_remove()): forget it. */
static bool baton_watcher_dead(const struct baton_watcher *w)
{
	return sock_flag(w->sk, SOCK_DEAD);
}

/*
 * Hold the watcher's file open while we send to its port id, or NULL if
 * its release has begun. The port id is free again from netlink_remove()
 * on, which __fput() reaches only once the file's count is 0: with our
 * reference taken first, the port id is still this socket's while we
 * send, and a new socket cannot have bound it. Checking a flag instead
 * would leave a window between the check and the send.
 *
 * RCU: a struct socket (its inode) and a struct file are freed after a
 * grace period, and sock_orphan() clears sk_socket before either, so what
 * we read non-NULL here is still memory of that socket and that file.
 */
static struct file *baton_watcher_pin(const struct baton_watcher *w)
{
	struct socket *sock;
	struct file *file = NULL;

	rcu_read_lock();
	sock = READ_ONCE(w->sk->sk_socket);
	if (sock)
		file = baton_get_file_rcu(&sock->file);	/* NULL: released */
	rcu_read_unlock();
	return file;
}

static void baton_watcher_remove(struct baton_watcher *w)
{
	lockdep_assert_held(&baton_nl_watch_lock);
	list_del(&w->node);
	baton_nl_reader_put(&w->reader);
	put_pid_ns(w->ns);
	sock_put(w->sk);
	kfree(w);
}

static int baton_nl_watch_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sock *sk = baton_nl_sender_sk(skb);
	struct baton_watcher *w;
	int ret = 0;

	w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!w)
		return -ENOMEM;
	baton_nl_reader_get(&w->reader, skb);
	/* The opener pays: a setuid sender must not spend root's slots. */
	w->uid = baton_nl_charged_uid(w->reader.opener ?: w->reader.sender);
	mutex_lock(&baton_nl_watch_lock);
	if (baton_watcher_find(sk))
		goto unlock;		/* already watching: nothing to do */
	if (baton_watchers_of(w->uid) >= READ_ONCE(max_watchers)) {
		GENL_SET_ERR_MSG(info, "too many watchers of this user (max_watchers)");
		ret = -ENOSPC;
		goto unlock;
	}
	sock_hold(sk);
	w->sk = sk;
	w->portid = info->snd_portid;
	w->ns = get_pid_ns(task_active_pid_ns(current));
	w->lost_base = atomic64_read(&baton_nl_lost);
	list_add_tail(&w->node, &baton_nl_watchers);
	w = NULL;
unlock:
	mutex_unlock(&baton_nl_watch_lock);
	if (w) {
		baton_nl_reader_put(&w->reader);
		kfree(w);
	}
	return ret;
}

static int baton_nl_unwatch_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct baton_watcher *w;
	int ret = 0;

	mutex_lock(&baton_nl_watch_lock);
	w = baton_watcher_find(baton_nl_sender_sk(skb));
	if (w) {
		baton_watcher_remove(w);
	} else {
		GENL_SET_ERR_MSG(info, "this socket is not watching");
		ret = -ENOENT;
	}
	mutex_unlock(&baton_nl_watch_lock);
	return ret;
}

/* A genetlink socket was released: forget it if it was watching. */
static int baton_nl_notify(struct notifier_block *nb, unsigned long state,
			   void *data)
{
	struct netlink_notify *n = data;
	struct baton_watcher *w, *tmp;

	if (state != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC)
		return NOTIFY_DONE;
	/*
	 * Every genetlink socket ends here: spare them the mutex. A watcher
	 * cannot be missed: its WATCH ran inside a sendmsg() on this very
	 * socket, which holds the file, so it returned (and unlocked the
	 * list after adding to it) before the release that calls us began.
	 */
	if (list_empty(&baton_nl_watchers))
		return NOTIFY_DONE;
	/*
	 * Not by port id: a new socket may hold it already, and watch. The
	 * released socket is orphaned (SOCK_DEAD) before this runs.
	 */
	mutex_lock(&baton_nl_watch_lock);
	list_for_each_entry_safe(w, tmp, &baton_nl_watchers, node)
		if (baton_watcher_dead(w))
			baton_watcher_remove(w);
	mutex_unlock(&baton_nl_watch_lock);
	return NOTIFY_DONE;
}

static struct notifier_block baton_nl_notifier = {
	.notifier_call = baton_nl_notify,
};

/* ---- events ---- */

/*
 * A queued event: a copy of the emitter's struct baton_event whose @obj
 * points at @snap, a copy of the object's name and owner (the object may
 * be freed before delivery; DESTROYED is sent from its free), and whose
 * @pid holds its own reference.
 */
struct baton_nl_event {
	struct list_head node;
	struct baton_event ev;
	struct baton_named snap;
	const void *obj;		/* identity only: never dereferenced */
};

/*
 * Events one user caused (charged by baton_nl_charged_uid() of the
 * emitting task) that wait in baton_nl_pending; present only while it has
 * some. The work item takes the whole queue at once, and with it every
 * entry: a user's budget is what waits for the next delivery round.
 */
struct baton_nl_user {
	struct list_head node;		/* baton_nl_users */
	kuid_t uid;
	unsigned int pending;
};

static DEFINE_SPINLOCK(baton_nl_queue_lock);
static LIST_HEAD(baton_nl_pending);
static LIST_HEAD(baton_nl_users);
static bool baton_nl_stopping;

static void baton_nl_event_work(struct work_struct *work);
static DECLARE_WORK(baton_nl_work, baton_nl_event_work);

/*
 * Anyone to tell? Read without locks: emitters run on hot-ish paths.
 * The list is added to under baton_nl_watch_lock before WATCH returns,
 * so an action ordered after that return (same task, or told through
 * any synchronising channel) sees it non-empty; an event racing with a
 * WATCH may miss that watcher, which is the subscription's start.
 */
static bool baton_nl_listening(void)
{
	if (READ_ONCE(baton_nl_stopping))
		return false;
	if (!list_empty(&baton_nl_watchers))
		return true;
#ifdef GENL_MCAST_CAP_SYS_ADMIN
	return netlink_has_listeners(init_net.genl_sock,
				     baton_nl_family.mcgrp_offset +
				     BATON_NL_MCGRP_EVENTS_ID);
#else
	return false;
#endif
}

static void baton_nl_event_free(struct baton_nl_event *e)
{
	put_pid(e->ev.pid);
	if (e->snap.ipc_ns)
		baton_put_ipc_ns(e->snap.ipc_ns);
	kfree(e);
}

/*
 * Tombstones come one per ticket: fold one that continues the last
 * queued event (same ring, same dead producer, next ticket) into it.
 */
static bool baton_nl_coalesce(const struct baton_event *ev)
{
	struct baton_nl_event *last;

	lockdep_assert_held(&baton_nl_queue_lock);
	if (ev->type != BATON_EVENT_TOMBSTONES || list_empty(&baton_nl_pending))
		return false;
	last = list_last_entry(&baton_nl_pending, struct baton_nl_event, node);
	/*
	 * The same object, not only the same name: two rings "q" of two
	 * IPC namespaces share a name. The pointer cannot be another
	 * object's of the same namespace: the queued event holds a reference
	 * on that namespace, and the name must match as well.
	 */
	if (last->ev.type != ev->type || last->ev.pid != ev->pid ||
	    last->ev.ticket + last->ev.count != ev->ticket ||
	    last->obj != ev->obj || last->snap.ipc_ns != ev->obj->ipc_ns ||
	    strcmp(last->snap.name, ev->obj->name))
		return false;
	last->ev.count += ev->count;
	return true;
}

static struct baton_nl_user *baton_nl_user_find(kuid_t uid)
{
	struct baton_nl_user *u;

	lockdep_assert_held(&baton_nl_queue_lock);
	list_for_each_entry(u, &baton_nl_users, node)
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/*
 * The entry that counts @uid's queued events, listing @spare if none.
 * Never once stopping: baton_nl_exit() frees the list after setting it.
 */
static struct baton_nl_user *baton_nl_user_get(kuid_t uid,
					       struct baton_nl_user **spare)
{
	struct baton_nl_user *u;

	lockdep_assert_held(&baton_nl_queue_lock);
	u = baton_nl_user_find(uid);
	if (!u && *spare && !baton_nl_stopping) {
		u = *spare;
		*spare = NULL;
		u->uid = uid;
		list_add(&u->node, &baton_nl_users);
	}
	return u;
}

/*
 * Queue @e, charged to @uid, unless that user has BATON_NL_PENDING_MAX
 * waiting already. The user's entry is found (or listed) and the event
 * queued in one hold of the lock: the work item frees every entry when it
 * takes a batch, so an entry seen in an earlier hold may be gone, and an
 * event that trusted it was dropped as if the queue were full. A user
 * without an entry gets one allocated outside the lock, then the lookup
 * is made again. The work is scheduled under the lock, so once
 * baton_nl_exit() has set the stopping flag under it, no schedule can
 * follow its cancel.
 */
static bool baton_nl_enqueue(struct baton_nl_event *e, kuid_t uid, gfp_t gfp)
{
	struct baton_nl_user *u, *spare = NULL;
	bool queued = false;

	spin_lock(&baton_nl_queue_lock);
	u = baton_nl_user_find(uid);
	if (!u) {
		spin_unlock(&baton_nl_queue_lock);
		spare = kzalloc(sizeof(*spare), gfp | __GFP_NOWARN);
		spin_lock(&baton_nl_queue_lock);
		u = baton_nl_user_get(uid, &spare);
	}
	if (!baton_nl_stopping && u && u->pending < BATON_NL_PENDING_MAX) {
		list_add_tail(&e->node, &baton_nl_pending);
		u->pending++;
		queue_work(baton_wq, &baton_nl_work);
		queued = true;
	}
	spin_unlock(&baton_nl_queue_lock);
	kfree(spare);
	return queued;
}

/*
 * Who pays for @ev in the pending queue: the user whose task caused it,
 * except where the emitting task is not the cause. A kernel thread's
 * events (a pool's decay or repair, an aio poll's tombstones, a peer's
 * death handled by the work item) and an object's DESTROYED (sent from
 * whichever task dropped the last reference: a dump's or lookup's
 * transient one, too) are charged to the object's owner, who created it;
 * so no user's flood, and no kernel worker's credentials, can take them
 * from the owner's share.
 */
static kuid_t baton_nl_payer(const struct baton_event *ev)
{
	switch (ev->type) {
	case BATON_EVENT_RING_DESTROYED:
	case BATON_EVENT_EPOCH_DESTROYED:
	case BATON_EVENT_POOL_DESTROYED:
		return ev->obj->owner.uid;
	}
	if (current->flags & PF_KTHREAD)
		return ev->obj->owner.uid;
	return baton_nl_charged_uid(current_cred());
}

void baton_event(const struct baton_event *ev, gfp_t gfp)
{
	kuid_t uid = baton_nl_payer(ev);
	struct baton_nl_event *e;
	bool merged;

	if (!baton_nl_listening())
		return;
	spin_lock(&baton_nl_queue_lock);
	merged = baton_nl_coalesce(ev);
	spin_unlock(&baton_nl_queue_lock);
	if (merged)
		return;

	e = kzalloc(sizeof(*e), gfp | __GFP_NOWARN);
	if (!e) {
		atomic64_inc(&baton_nl_lost);
		return;
	}
	e->ev = *ev;
	e->ev.obj = &e->snap;
	e->obj = ev->obj;
	e->ev.pid = get_pid(ev->pid);
	/*
	 * What baton_named_visible() reads, and the name. The namespace
	 * with a reference: the object may be freed before delivery, and a
	 * new namespace could then reuse the address.
	 */
	strscpy(e->snap.name, ev->obj->name, sizeof(e->snap.name));
	e->snap.owner = ev->obj->owner;
	e->snap.ipc_ns = baton_get_ipc_ns(ev->obj->ipc_ns);
	if (!baton_nl_enqueue(e, uid, gfp)) {
		if (!READ_ONCE(baton_nl_stopping))
			atomic64_inc(&baton_nl_lost);
		baton_nl_event_free(e);
	}
}

static int baton_nl_put_event(struct sk_buff *skb, const struct baton_event *ev,
			      struct pid_namespace *ns, u64 drops)
{
	pid_t pid = ev->pid ? pid_nr_ns(ev->pid, ns) : 0;

	if (nla_put_u32(skb, BATON_A_EVENT_TYPE, ev->type) ||
	    nla_put_string(skb, BATON_A_EVENT_NAME, ev->obj->name) ||
	    (pid && nla_put_u32(skb, BATON_A_EVENT_PID, pid)) ||
	    (ev->role && nla_put_u32(skb, BATON_A_EVENT_ROLE, ev->role)) ||
	    (ev->index >= 0 &&
	     nla_put_u32(skb, BATON_A_EVENT_INDEX, ev->index)) ||
	    (drops && nla_put_u64_64bit(skb, BATON_A_EVENT_DROPS, drops,
					BATON_A_EVENT_PAD)))
		return -EMSGSIZE;
	if ((ev->type == BATON_EVENT_POOL_RECLAIMED ||
	     ev->type == BATON_EVENT_POOL_DECAYED) &&
	    nla_put_u64_64bit(skb, BATON_A_EVENT_COUNT, ev->count,
			      BATON_A_EVENT_PAD))
		return -EMSGSIZE;
	if (ev->type == BATON_EVENT_TOMBSTONES &&
	    (nla_put_u64_64bit(skb, BATON_A_EVENT_COUNT, ev->count,
			       BATON_A_EVENT_PAD) ||
	     nla_put_u64_64bit(skb, BATON_A_EVENT_TICKET, ev->ticket,
			       BATON_A_EVENT_PAD)))
		return -EMSGSIZE;
	if (ev->type == BATON_EVENT_STRAGGLER &&
	    (nla_put_u64_64bit(skb, BATON_A_EVENT_EPOCH, ev->epoch,
			       BATON_A_EVENT_PAD) ||
	     nla_put_u64_64bit(skb, BATON_A_EVENT_WAITED_MS, ev->waited_ms,
			       BATON_A_EVENT_PAD)))
		return -EMSGSIZE;
	return 0;
}

static struct sk_buff *baton_nl_event_msg(const struct baton_event *ev,
					  struct pid_namespace *ns, u64 drops)
{
	struct sk_buff *skb;
	void *hdr;

	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb)
		return NULL;
	hdr = genlmsg_put(skb, 0, 0, &baton_nl_family, 0, BATON_CMD_EVENT);
	if (!hdr || baton_nl_put_event(skb, ev, ns, drops)) {
		nlmsg_free(skb);
		return NULL;
	}
	genlmsg_end(skb, hdr);
	return skb;
}

static void baton_nl_deliver_one(struct baton_watcher *w,
				 const struct baton_event *ev)
{
	struct sk_buff *skb;
	struct file *file;
	u64 lost;
	int ret;

	if (!baton_nl_visible(ev->obj, &w->reader))
		return;
	lost = atomic64_read(&baton_nl_lost) - w->lost_base;
	skb = baton_nl_event_msg(ev, w->ns, w->drops + lost);
	if (!skb) {
		w->drops++;
		return;
	}
	/* Its port id may be another socket's by now: never send there. */
	file = baton_watcher_pin(w);
	if (!file) {
		nlmsg_free(skb);
		baton_watcher_remove(w);
		return;
	}
	/* MSG_DONTWAIT inside: a full socket is -EAGAIN, never a sleep. */
	ret = genlmsg_unicast(sock_net(w->sk), skb, w->portid);
	/* A kworker's last fput() defers the release: no lock taken here. */
	fput(file);
	if (ret)
		w->drops++;
}

/* The admin-only group, where the kernel can enforce admin-only. */
static void baton_nl_multicast(const struct baton_event *ev)
{
#ifdef GENL_MCAST_CAP_SYS_ADMIN
	struct sk_buff *skb;

	if (!netlink_has_listeners(init_net.genl_sock,
				   baton_nl_family.mcgrp_offset +
				   BATON_NL_MCGRP_EVENTS_ID))
		return;
	skb = baton_nl_event_msg(ev, &init_pid_ns, 0);
	if (skb)
		genlmsg_multicast(&baton_nl_family, skb, 0,
				  BATON_NL_MCGRP_EVENTS_ID, GFP_KERNEL);
#endif
}

static void baton_nl_deliver(const struct baton_event *ev)
{
	struct baton_watcher *w, *tmp;

	mutex_lock(&baton_nl_watch_lock);
	list_for_each_entry_safe(w, tmp, &baton_nl_watchers, node)
		baton_nl_deliver_one(w, ev);
	mutex_unlock(&baton_nl_watch_lock);
	baton_nl_multicast(ev);
}

static void baton_nl_event_work(struct work_struct *work)
{
	struct baton_nl_event *e, *tmp;
	struct baton_nl_user *u, *utmp;
	LIST_HEAD(batch);
	LIST_HEAD(users);

	spin_lock(&baton_nl_queue_lock);
	list_splice_init(&baton_nl_pending, &batch);
	list_splice_init(&baton_nl_users, &users);
	spin_unlock(&baton_nl_queue_lock);
	list_for_each_entry_safe(u, utmp, &users, node)
		kfree(u);

	list_for_each_entry_safe(e, tmp, &batch, node) {
		list_del(&e->node);
		baton_nl_deliver(&e->ev);
		baton_nl_event_free(e);
	}
}

/* ---- policies, operations, registration ---- */

/* Names are NUL-terminated, at most BATON_NAME_MAX - 1 bytes before it. */
static const struct nla_policy baton_nl_ring_policy[BATON_A_RING_ALL_NS + 1] = {
	[BATON_A_RING_NAME] = { .type = NLA_NUL_STRING,
				.len = BATON_NAME_MAX - 1 },
	[BATON_A_RING_ALL_NS] = { .type = NLA_FLAG },
};

static const struct nla_policy baton_nl_epoch_policy[BATON_A_EPOCH_ALL_NS + 1] = {
	[BATON_A_EPOCH_NAME] = { .type = NLA_NUL_STRING,
				 .len = BATON_NAME_MAX - 1 },
	[BATON_A_EPOCH_ALL_NS] = { .type = NLA_FLAG },
};

static const struct nla_policy baton_nl_pool_policy[BATON_A_POOL_ALL_NS + 1] = {
	[BATON_A_POOL_NAME] = { .type = NLA_NUL_STRING,
				.len = BATON_NAME_MAX - 1 },
	[BATON_A_POOL_ALL_NS] = { .type = NLA_FLAG },
};

/*
 * WATCH and UNWATCH have no policy: with resv_start_op at or below them
 * the core rejects any attribute they are sent. A dump accepts the name
 * attribute (the policy is shared) and ignores it; a doit ignores ALL_NS.
 */
static const struct genl_ops baton_nl_ops[] = {
	{
		.cmd = BATON_CMD_RING_GET,
		.doit = baton_nl_ring_doit,
		.start = baton_nl_dump_start,
		.dumpit = baton_nl_ring_dumpit,
		.done = baton_nl_dump_done,
		.policy = baton_nl_ring_policy,
		.maxattr = BATON_A_RING_ALL_NS,
	},
	{
		.cmd = BATON_CMD_EPOCH_GET,
		.doit = baton_nl_epoch_doit,
		.start = baton_nl_dump_start,
		.dumpit = baton_nl_epoch_dumpit,
		.done = baton_nl_dump_done,
		.policy = baton_nl_epoch_policy,
		.maxattr = BATON_A_EPOCH_ALL_NS,
	},
	{
		.cmd = BATON_CMD_WATCH,
		.doit = baton_nl_watch_doit,
	},
	{
		.cmd = BATON_CMD_UNWATCH,
		.doit = baton_nl_unwatch_doit,
	},
	{
		.cmd = BATON_CMD_POOL_GET,
		.doit = baton_nl_pool_doit,
		.start = baton_nl_dump_start,
		.dumpit = baton_nl_pool_dumpit,
		.done = baton_nl_dump_done,
		.policy = baton_nl_pool_policy,
		.maxattr = BATON_A_POOL_ALL_NS,
	},
};

static struct genl_family baton_nl_family = {
	.name = BATON_FAMILY_NAME,
	.version = BATON_FAMILY_VERSION,
	.module = THIS_MODULE,
	/* Objects are global; visibility, not the netns, decides. */
	.netnsok = true,
	/* The registries' and objects' own locks suffice. */
	.parallel_ops = true,
	/* Every command: strict header, strict attributes, policy required. */
	.resv_start_op = BATON_CMD_RING_GET,
	.ops = baton_nl_ops,
	.n_ops = ARRAY_SIZE(baton_nl_ops),
	.mcgrps = baton_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(baton_nl_mcgrps),
};

int baton_nl_init(void)
{
	int ret;

	ret = netlink_register_notifier(&baton_nl_notifier);
	if (ret)
		return ret;
	ret = genl_register_family(&baton_nl_family);
	if (ret)
		netlink_unregister_notifier(&baton_nl_notifier);
	return ret;
}

void baton_nl_exit(void)
{
	struct baton_watcher *w, *wtmp;
	struct baton_nl_event *e, *etmp;
	struct baton_nl_user *u, *utmp;

	/* No event is queued from here on; the work may still run once. */
	spin_lock(&baton_nl_queue_lock);
	WRITE_ONCE(baton_nl_stopping, true);
	spin_unlock(&baton_nl_queue_lock);
	cancel_work_sync(&baton_nl_work);

	/* Waits for running doit and dump calls. */
	genl_unregister_family(&baton_nl_family);
	netlink_unregister_notifier(&baton_nl_notifier);

	mutex_lock(&baton_nl_watch_lock);
	list_for_each_entry_safe(w, wtmp, &baton_nl_watchers, node)
		baton_watcher_remove(w);
	mutex_unlock(&baton_nl_watch_lock);
	list_for_each_entry_safe(e, etmp, &baton_nl_pending, node) {
		list_del(&e->node);
		baton_nl_event_free(e);
	}
	list_for_each_entry_safe(u, utmp, &baton_nl_users, node)
		kfree(u);
}
