// SPDX-License-Identifier: MIT
/*
 * lib/ctl/records.c: batonctl's records (one object, peer or event: the
 * values of its netlink attributes by number), the attribute tables that
 * say how each attribute parses and prints, and the names of uapi enums.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batonctl.h"

bool rec_has(const struct rec *r, int attr)
{
	return r->present & (1ULL << attr);
}

uint64_t rec_get(const struct rec *r, int attr)
{
	return rec_has(r, attr) ? r->val[attr] : 0;
}

void rec_set(struct rec *r, int attr, uint64_t v)
{
	r->present |= 1ULL << attr;
	r->val[attr] = v;
}

void rec_free(struct rec *r)
{
	free(r->peers);
	r->peers = NULL;
	r->npeers = 0;
	free(r->classes);
	r->classes = NULL;
	r->nclasses = 0;
}

/*
 * Stale: nobody holds the object any more, so nothing will ever use it
 * again unless someone opens it by name. A ring: no attached producer
 * and no consumer (the module counts their files; on memfd nobody holds
 * a role's OFD lock), so its creator, which always holds a role, is gone
 * too. A domain: no registered participant (the module's count; on memfd
 * the slots' OFD locks) and, on memfd, no open handle at all (the read
 * lock every handle holds); the module does not count handles that never
 * registered, so there such a domain shows stale. A pool: no holder (no
 * pool fd open anywhere). Unlinked objects are not
 * stale: they have no name left to take, and go with their last holder.
 * An attribute that did not come means "cannot tell": not stale.
 */
bool rec_stale(const struct rec *r)
{
	if (r->obj == OBJ_RING)
		return !rec_has(r, BATON_A_RING_UNLINKED) &&
		       rec_has(r, BATON_A_RING_PRODUCERS) &&
		       rec_has(r, BATON_A_RING_CONSUMERS) &&
		       !rec_get(r, BATON_A_RING_PRODUCERS) &&
		       !rec_get(r, BATON_A_RING_CONSUMERS);
	if (r->obj == OBJ_EPOCH)
		return !rec_has(r, BATON_A_EPOCH_UNLINKED) && !r->held &&
		       rec_has(r, BATON_A_EPOCH_PARTICIPANTS) &&
		       !rec_get(r, BATON_A_EPOCH_PARTICIPANTS);
	if (r->obj == OBJ_POOL)
		return !rec_has(r, BATON_A_POOL_UNLINKED) &&
		       rec_has(r, BATON_A_POOL_HOLDERS) &&
		       !rec_get(r, BATON_A_POOL_HOLDERS);
	return false;
}

struct rec *rec_add_peer(struct rec *r)
{
	struct rec *p = realloc(r->peers, (r->npeers + 1) * sizeof(*p));

	if (!p)
		return NULL;
	r->peers = p;
	p = &r->peers[r->npeers++];
	memset(p, 0, sizeof(*p));
	p->obj = OBJ_PEER;
	p->backend = r->backend;
	return p;
}

struct rec *rec_add_class(struct rec *r)
{
	struct rec *c = realloc(r->classes, (r->nclasses + 1) * sizeof(*c));

	if (!c)
		return NULL;
	r->classes = c;
	c = &r->classes[r->nclasses++];
	memset(c, 0, sizeof(*c));
	c->obj = OBJ_CLASS;
	c->backend = r->backend;
	return c;
}

/* ---- attribute tables ---- */

static const struct field ring_fields[] = {
	{ BATON_A_RING_NAME, FT_STR, FS_NUM, "name" },
	{ BATON_A_RING_KIND, FT_U32, FS_KIND, "kind" },
	{ BATON_A_RING_SLOT_COUNT, FT_U32, FS_NUM, "slot_count" },
	{ BATON_A_RING_SLOT_SIZE, FT_U32, FS_NUM, "slot_size" },
	{ BATON_A_RING_MAX_PRODUCERS, FT_U32, FS_NUM, "max_producers" },
	{ BATON_A_RING_UID, FT_U32, FS_NUM, "uid" },
	{ BATON_A_RING_GID, FT_U32, FS_NUM, "gid" },
	{ BATON_A_RING_MODE, FT_U32, FS_MODE, "mode" },
	{ BATON_A_RING_STATE, FT_U32, FS_STATE, "state" },
	{ BATON_A_RING_UNLINKED, FT_FLAG, FS_NUM, "unlinked" },
	{ BATON_A_RING_HEAD, FT_U64, FS_NUM, "head" },
	{ BATON_A_RING_TAIL, FT_U64, FS_NUM, "tail" },
	{ BATON_A_RING_OCCUPANCY, FT_U64, FS_NUM, "occupancy" },
	{ BATON_A_RING_PRODUCERS, FT_U32, FS_NUM, "producers" },
	{ BATON_A_RING_CONSUMERS, FT_U32, FS_NUM, "consumers" },
	{ BATON_A_RING_PARKED_PRODUCERS, FT_U32, FS_NUM, "parked_producers" },
	{ BATON_A_RING_PARKED_CONSUMERS, FT_U32, FS_NUM, "parked_consumers" },
	{ BATON_A_RING_PARKS_FULL, FT_U64, FS_NUM, "parks_full" },
	{ BATON_A_RING_PARKS_EMPTY, FT_U64, FS_NUM, "parks_empty" },
	{ BATON_A_RING_WAKES_OF_PRODUCER, FT_U64, FS_NUM, "wakes_of_producer" },
	{ BATON_A_RING_WAKES_OF_CONSUMER, FT_U64, FS_NUM, "wakes_of_consumer" },
	{ BATON_A_RING_PRODUCER_DEATHS, FT_U64, FS_NUM, "producer_deaths" },
	{ BATON_A_RING_CONSUMER_DEATHS, FT_U64, FS_NUM, "consumer_deaths" },
	{ BATON_A_RING_TOMBSTONES, FT_U64, FS_NUM, "tombstones" },
	{ BATON_A_RING_MSGS_CONSUMED, FT_U64, FS_NUM, "msgs_consumed" },
	{ BATON_A_RING_MSGS_RESERVED, FT_U64, FS_NUM, "msgs_reserved" },
	{ BATON_A_RING_SCRIBBLES, FT_U64, FS_NUM, "scribbles" },
	{ BATON_A_RING_PEERS_PARTIAL, FT_FLAG, FS_NUM, "peers_partial" },
	{ BATON_A_RING_IPC_NS, FT_U32, FS_NUM, "ipc_ns" },
	{ BATON_A_RING_PEERS, FT_PEERS, FS_NUM, "peers" },
	{ BATON_A_RING_PEER, FT_PEER, FS_NUM, "peers" },
};

static const struct field epoch_fields[] = {
	{ BATON_A_EPOCH_NAME, FT_STR, FS_NUM, "name" },
	{ BATON_A_EPOCH_UID, FT_U32, FS_NUM, "uid" },
	{ BATON_A_EPOCH_GID, FT_U32, FS_NUM, "gid" },
	{ BATON_A_EPOCH_MODE, FT_U32, FS_MODE, "mode" },
	{ BATON_A_EPOCH_UNLINKED, FT_FLAG, FS_NUM, "unlinked" },
	{ BATON_A_EPOCH_MAX_PARTICIPANTS, FT_U32, FS_NUM, "max_participants" },
	{ BATON_A_EPOCH_QUEUE_LEN, FT_U32, FS_NUM, "queue_len" },
	{ BATON_A_EPOCH_GLOBAL, FT_U64, FS_NUM, "global" },
	{ BATON_A_EPOCH_FRONTIER, FT_U64, FS_NUM, "frontier" },
	{ BATON_A_EPOCH_PARTICIPANTS, FT_U32, FS_NUM, "participants" },
	{ BATON_A_EPOCH_ACTIVE_READERS, FT_U32, FS_NUM, "active_readers" },
	{ BATON_A_EPOCH_OLDEST, FT_U64, FS_NUM, "oldest" },
	{ BATON_A_EPOCH_OLDEST_PID, FT_U32, FS_NUM, "oldest_pid" },
	{ BATON_A_EPOCH_PENDING, FT_U64, FS_NUM, "pending" },
	{ BATON_A_EPOCH_SYNC_WAITERS, FT_U32, FS_NUM, "sync_waiters" },
	{ BATON_A_EPOCH_SYNC_WAITS, FT_U64, FS_NUM, "sync_waits" },
	{ BATON_A_EPOCH_SYNC_TIMEOUTS, FT_U64, FS_NUM, "sync_timeouts" },
	{ BATON_A_EPOCH_ORPHANS, FT_U32, FS_NUM, "orphans" },
	{ BATON_A_EPOCH_PEERS_PARTIAL, FT_FLAG, FS_NUM, "peers_partial" },
	{ BATON_A_EPOCH_IPC_NS, FT_U32, FS_NUM, "ipc_ns" },
	{ BATON_A_EPOCH_PEERS, FT_PEERS, FS_NUM, "peers" },
	{ BATON_A_EPOCH_PEER, FT_PEER, FS_NUM, "peers" },
};

static const struct field pool_fields[] = {
	{ BATON_A_POOL_NAME, FT_STR, FS_NUM, "name" },
	{ BATON_A_POOL_UID, FT_U32, FS_NUM, "uid" },
	{ BATON_A_POOL_GID, FT_U32, FS_NUM, "gid" },
	{ BATON_A_POOL_MODE, FT_U32, FS_MODE, "mode" },
	{ BATON_A_POOL_UNLINKED, FT_FLAG, FS_NUM, "unlinked" },
	{ BATON_A_POOL_NR_CLASSES, FT_U32, FS_NUM, "nr_classes" },
	{ BATON_A_POOL_DECAY_MS, FT_U32, FS_NUM, "decay_ms" },
	{ BATON_A_POOL_KEEP, FT_U32, FS_NUM, "keep" },
	{ BATON_A_POOL_MAX_HOLDERS, FT_U32, FS_NUM, "max_holders" },
	{ BATON_A_POOL_DATA_SIZE, FT_U64, FS_NUM, "data_size" },
	{ BATON_A_POOL_HOLDERS, FT_U32, FS_NUM, "holders" },
	{ BATON_A_POOL_HOLDER_RELEASES, FT_U64, FS_NUM, "holder_releases" },
	{ BATON_A_POOL_RECLAIMED, FT_U64, FS_NUM, "reclaimed" },
	{ BATON_A_POOL_REPAIRED, FT_U64, FS_NUM, "repaired" },
	{ BATON_A_POOL_DECAYED, FT_U64, FS_NUM, "decayed" },
	{ BATON_A_POOL_DECAYED_BYTES, FT_U64, FS_NUM, "decayed_bytes" },
	{ BATON_A_POOL_DECAY_TICKS, FT_U64, FS_NUM, "decay_ticks" },
	{ BATON_A_POOL_BAD_WORDS, FT_U64, FS_NUM, "bad_words" },
	{ BATON_A_POOL_PEERS_PARTIAL, FT_FLAG, FS_NUM, "peers_partial" },
	{ BATON_A_POOL_IPC_NS, FT_U32, FS_NUM, "ipc_ns" },
	{ BATON_A_POOL_CLASSES, FT_CLASSES, FS_NUM, "classes" },
	{ BATON_A_POOL_CLASS, FT_CLASS, FS_NUM, "classes" },
	{ BATON_A_POOL_PEERS, FT_PEERS, FS_NUM, "peers" },
	{ BATON_A_POOL_PEER, FT_PEER, FS_NUM, "peers" },
};

static const struct field class_fields[] = {
	{ BATON_A_CLASS_INDEX, FT_U32, FS_NUM, "index" },
	{ BATON_A_CLASS_BUF_SIZE, FT_U32, FS_NUM, "buf_size" },
	{ BATON_A_CLASS_COUNT, FT_U32, FS_NUM, "count" },
	{ BATON_A_CLASS_FREE, FT_U32, FS_NUM, "free" },
	{ BATON_A_CLASS_COLD, FT_U32, FS_NUM, "cold" },
};

static const struct field peer_fields[] = {
	{ BATON_A_PEER_PID, FT_U32, FS_NUM, "pid" },
	{ BATON_A_PEER_ROLE, FT_U32, FS_ROLE, "role" },
	{ BATON_A_PEER_INDEX, FT_U32, FS_NUM, "index" },
	{ BATON_A_PEER_PARKED, FT_FLAG, FS_NUM, "parked" },
	{ BATON_A_PEER_ANNOUNCED, FT_U64, FS_NUM, "announced" },
	{ BATON_A_PEER_PENDING, FT_U64, FS_NUM, "pending" },
};

static const struct field event_fields[] = {
	{ BATON_A_EVENT_TYPE, FT_U32, FS_EVENT, "type" },
	{ BATON_A_EVENT_NAME, FT_STR, FS_NUM, "name" },
	{ BATON_A_EVENT_PID, FT_U32, FS_NUM, "pid" },
	{ BATON_A_EVENT_ROLE, FT_U32, FS_ROLE, "role" },
	{ BATON_A_EVENT_INDEX, FT_U32, FS_NUM, "index" },
	{ BATON_A_EVENT_COUNT, FT_U64, FS_NUM, "count" },
	{ BATON_A_EVENT_TICKET, FT_U64, FS_NUM, "ticket" },
	{ BATON_A_EVENT_EPOCH, FT_U64, FS_NUM, "epoch" },
	{ BATON_A_EVENT_WAITED_MS, FT_U64, FS_NUM, "waited_ms" },
	{ BATON_A_EVENT_DROPS, FT_U64, FS_NUM, "drops" },
};
#define FIELDSET(tbl, w) { tbl, sizeof(tbl) / sizeof(tbl[0]), w }

const struct fieldset fs_ring = FIELDSET(ring_fields, "ring");
const struct fieldset fs_epoch = FIELDSET(epoch_fields, "epoch");
const struct fieldset fs_peer = FIELDSET(peer_fields, "peer");
const struct fieldset fs_event = FIELDSET(event_fields, "event");
const struct fieldset fs_pool = FIELDSET(pool_fields, "pool");
const struct fieldset fs_class = FIELDSET(class_fields, "class");

const struct field *field_of(const struct fieldset *fs, int attr)
{
	size_t i;

	for (i = 0; i < fs->n; i++)
		if (fs->f[i].attr == attr)
			return &fs->f[i];
	return NULL;
}

/* ---- enum names ---- */

static const char *kind_name(uint64_t k)
{
	switch (k) {
	case BATON_RING_SPSC:	return "spsc";
	case BATON_RING_MPSC:	return "mpsc";
	default:		return NULL;
	}
}

static const char *role_name(uint64_t r)
{
	switch (r) {
	case BATON_ROLE_PRODUCER:	return "producer";
	case BATON_ROLE_CONSUMER:	return "consumer";
	default:			return NULL;
	}
}

static const char *const event_names[] = {
	[BATON_EVENT_RING_CREATED] = "ring_created",
	[BATON_EVENT_RING_UNLINKED] = "ring_unlinked",
	[BATON_EVENT_RING_DESTROYED] = "ring_destroyed",
	[BATON_EVENT_EPOCH_CREATED] = "epoch_created",
	[BATON_EVENT_EPOCH_UNLINKED] = "epoch_unlinked",
	[BATON_EVENT_EPOCH_DESTROYED] = "epoch_destroyed",
	[BATON_EVENT_PEER_DIED] = "peer_died",
	[BATON_EVENT_TOMBSTONES] = "tombstones",
	[BATON_EVENT_STRAGGLER] = "straggler",
	[BATON_EVENT_POOL_CREATED] = "pool_created",
	[BATON_EVENT_POOL_UNLINKED] = "pool_unlinked",
	[BATON_EVENT_POOL_DESTROYED] = "pool_destroyed",
	[BATON_EVENT_POOL_RECLAIMED] = "pool_reclaimed",
	[BATON_EVENT_POOL_DECAYED] = "pool_decayed",
};

static const char *event_name(uint64_t t)
{
	if (t < sizeof(event_names) / sizeof(event_names[0]))
		return event_names[t];
	return NULL;
}

const char *const state_bits[] = {
	"producer_gone",	/* BATON_STATE_PRODUCER_GONE */
	"consumer_gone",	/* BATON_STATE_CONSUMER_GONE */
};
const size_t n_state_bits = sizeof(state_bits) / sizeof(state_bits[0]);

/*
 * State bit @i by name, or "unknown_bitN" for one this batonctl does not
 * know (a newer module's), so that text and JSON show every bit set.
 */
const char *state_bit_name(unsigned int i, char *buf, size_t len)
{
	if (i < n_state_bits)
		return state_bits[i];
	snprintf(buf, len, "unknown_bit%u", i);
	return buf;
}

const char *const backend_names[] = { "kmod", "memfd" };
const char *const obj_names[] = { "ring", "epoch", "peer", "event", "pool",
				   "class" };

const char *enum_str(enum fshow show, uint64_t v, char *buf, size_t len)
{
	const char *s = NULL;

	if (show == FS_KIND)
		s = kind_name(v);
	else if (show == FS_ROLE)
		s = role_name(v);
	else if (show == FS_EVENT)
		s = event_name(v);
	if (s)
		return s;
	snprintf(buf, len, "unknown_%" PRIu64, v);
	return buf;
}

