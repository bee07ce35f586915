// SPDX-License-Identifier: MIT
/*
 * batonctl: what the generic netlink family "baton" (uapi/linux/baton_nl.h)
 * says about rings and epoch domains, the way ss and ip -s show sockets.
 *
 *   batonctl [-j [-p]] list            rings and domains, one line each
 *   batonctl [-j [-p]] show NAME       one ring: every counter, its peers
 *   batonctl [-j [-p]] epoch [NAME]    epoch domains
 *   batonctl [-j] [-c N] [-t SECS] watch   events until SIGINT, N, SECS
 *
 * Owns: the command line, the libnl-genl-3 conversation (family lookup,
 * doit and dumpit requests, BATON_CMD_WATCH and the unicast events that
 * follow), the extack message of a failed request, the read-only view of
 * memfd-backend objects in /dev/shm, and the text and JSON output.
 *
 * Parsing is table driven: each attribute set has one table of {attribute,
 * type, output name}. An attribute that no table names is skipped, so a
 * newer module's additions do not break an older batonctl; one that a
 * table names but whose length is wrong is ignored with a warning. JSON
 * names are the attribute names in snake_case (BATON_A_RING_SLOT_COUNT is
 * "slot_count"); the schema is in Documentation/batonctl.rst.
 *
 * Exit status: 0 fine; 1 an error (the message says which); 2 the module
 * is not loaded and no memfd object answered the question; 3 watch -c N
 * ran out of time (-t) before N events arrived.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <netlink/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>

#include <linux/baton.h>
#include <linux/baton_nl.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define EXIT_NOMODULE	2
#define EXIT_TIMEDOUT	3

/* memfd backend naming and lock bytes: lib/backend_memfd.c, epoch_memfd.c */
#define SHM_DIR			"/dev/shm"
#define SHM_RING_PREFIX		"baton."
#define SHM_EPOCH_PREFIX	"baton-epoch."
#define MEMFD_LOCK_PRODUCER	0	/* SPSC producer's OFD lock byte */
#define MEMFD_LOCK_CONSUMER	1
#define MEMFD_LOCK_PRODUCER0	16	/* MPSC producer k: byte 16 + k */
/* participant i's OFD lock byte: base + i */
#define MEMFD_EPOCH_LOCK_BASE	(1LL << 40)
/* Participant region words (lib/epoch_internal.h, the same on kmod). */
#define MEMFD_EPOCH_L_ANN	0
#define MEMFD_EPOCH_L_TAIL	64
#define MEMFD_EPOCH_L_HEAD	128
#define MEMFD_EPOCH_L_PID	176

/* ---- records: one ring, domain, peer or event, as parsed ---- */

#define REC_ATTRS	64	/* attribute numbers a record can hold */

_Static_assert(BATON_A_RING_MAX < REC_ATTRS, "ring attributes fit a record");
_Static_assert(BATON_A_EPOCH_MAX < REC_ATTRS, "epoch attributes fit");
_Static_assert(BATON_A_PEER_MAX < REC_ATTRS, "peer attributes fit");
_Static_assert(BATON_A_EVENT_MAX < REC_ATTRS, "event attributes fit");

enum obj_kind { OBJ_RING, OBJ_EPOCH, OBJ_PEER, OBJ_EVENT };
enum backend { BE_KMOD, BE_MEMFD };

struct rec {
	enum obj_kind obj;
	enum backend backend;
	uint64_t present;		/* bit n: attribute n was seen */
	uint64_t val[REC_ATTRS];	/* numbers and flags (flag: 1) */
	char name[BATON_NAME_MAX];
	struct rec *peers;
	size_t npeers;
	const char *const *unavailable;	/* memfd: fields not known */
};

static bool rec_has(const struct rec *r, int attr)
{
	return r->present & (1ULL << attr);
}

static uint64_t rec_get(const struct rec *r, int attr)
{
	return rec_has(r, attr) ? r->val[attr] : 0;
}

static void rec_set(struct rec *r, int attr, uint64_t v)
{
	r->present |= 1ULL << attr;
	r->val[attr] = v;
}

static void rec_free(struct rec *r)
{
	free(r->peers);
	r->peers = NULL;
	r->npeers = 0;
}

static struct rec *rec_add_peer(struct rec *r)
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

/* ---- attribute tables ---- */

enum ftype { FT_U32, FT_U64, FT_STR, FT_FLAG, FT_PEERS, FT_PEER };
/* How a value prints: a plain number or one of the uapi enums. */
enum fshow { FS_NUM, FS_KIND, FS_ROLE, FS_STATE, FS_MODE, FS_EVENT };

struct field {
	int attr;
	enum ftype type;
	enum fshow show;
	const char *name;		/* JSON key and text label */
};

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
	{ BATON_A_EPOCH_PEERS, FT_PEERS, FS_NUM, "peers" },
	{ BATON_A_EPOCH_PEER, FT_PEER, FS_NUM, "peers" },
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

struct fieldset {
	const struct field *f;
	size_t n;
	const char *what;		/* for warnings */
};

#define FIELDSET(tbl, w) { tbl, sizeof(tbl) / sizeof(tbl[0]), w }

static const struct fieldset fs_ring = FIELDSET(ring_fields, "ring");
static const struct fieldset fs_epoch = FIELDSET(epoch_fields, "epoch");
static const struct fieldset fs_peer = FIELDSET(peer_fields, "peer");
static const struct fieldset fs_event = FIELDSET(event_fields, "event");

static const struct field *field_of(const struct fieldset *fs, int attr)
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
};

static const char *event_name(uint64_t t)
{
	if (t < sizeof(event_names) / sizeof(event_names[0]))
		return event_names[t];
	return NULL;
}

static const char *const state_bits[] = {
	"producer_gone",	/* BATON_STATE_PRODUCER_GONE */
	"consumer_gone",	/* BATON_STATE_CONSUMER_GONE */
};

/* An enum value this batonctl does not know prints as "unknown_<n>". */
static const char *enum_str(enum fshow show, uint64_t v, char *buf,
			    size_t len)
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

/* ---- output: JSON in iproute2's style, or text ---- */

static struct {
	bool json;
	bool pretty;
	long count;		/* watch: stop after this many events */
	long timeout_s;		/* watch: stop after this many seconds */
} opt;

struct jw {
	int depth;
	bool need_comma[16];
};

static struct jw jw;

static void jw_indent(void)
{
	int i;

	if (!opt.pretty)
		return;
	putchar('\n');
	for (i = 0; i < jw.depth; i++)
		fputs("    ", stdout);
}

/* Separator, indentation and the key (NULL inside an array). */
static void jw_key(const char *key)
{
	if (jw.need_comma[jw.depth])
		putchar(',');
	jw.need_comma[jw.depth] = true;
	if (jw.depth > 0)
		jw_indent();
	if (key)
		printf(opt.pretty ? "\"%s\": " : "\"%s\":", key);
}

static void jw_open(const char *key, char c)
{
	jw_key(key);
	putchar(c);
	if (jw.depth + 1 < (int)(sizeof(jw.need_comma) /
				 sizeof(jw.need_comma[0])))
		jw.depth++;
	jw.need_comma[jw.depth] = false;
}

static void jw_close(char c)
{
	bool had = jw.need_comma[jw.depth];

	jw.depth--;
	if (had)
		jw_indent();
	putchar(c);
}

static void jw_string(const char *key, const char *s)
{
	const unsigned char *p;

	jw_key(key);
	putchar('"');
	for (p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

static void jw_u64(const char *key, uint64_t v)
{
	jw_key(key);
	printf("%" PRIu64, v);
}

static void jw_bool(const char *key, bool b)
{
	jw_key(key);
	fputs(b ? "true" : "false", stdout);
}

/* Top level: iproute2 prints an array of objects. */
static void jw_begin_array(void)
{
	memset(&jw, 0, sizeof(jw));
	putchar('[');
	jw.depth = 1;
}

static void jw_end_array(void)
{
	jw_close(']');
	putchar('\n');
}

static const char *const backend_names[] = { "kmod", "memfd" };
static const char *const obj_names[] = { "ring", "epoch", "peer", "event" };

static void json_field(const struct field *f, const struct rec *r);

static void json_rec(const struct fieldset *fs, const struct rec *r)
{
	const char *const *u;
	size_t i;

	jw_open(NULL, '{');
	if (r->obj == OBJ_RING || r->obj == OBJ_EPOCH) {
		jw_string("object", obj_names[r->obj]);
		jw_string("backend", backend_names[r->backend]);
	}
	for (i = 0; i < fs->n; i++) {
		const struct field *f = &fs->f[i];

		if (f->type == FT_PEER)
			continue;	/* printed with FT_PEERS */
		json_field(f, r);
	}
	if (r->unavailable) {
		jw_open("unavailable", '[');
		for (u = r->unavailable; *u; u++)
			jw_string(NULL, *u);
		jw_close(']');
	}
	jw_close('}');
}

static void json_field(const struct field *f, const struct rec *r)
{
	char buf[32];
	size_t i;

	switch (f->type) {
	case FT_STR:
		if (r->name[0])
			jw_string(f->name, r->name);
		return;
	case FT_FLAG:
		/* Absent means false, but memfd objects have no such flag. */
		if (r->backend == BE_KMOD || rec_has(r, f->attr))
			jw_bool(f->name, rec_has(r, f->attr));
		return;
	case FT_PEERS:
		if (r->obj == OBJ_EVENT || (r->backend == BE_MEMFD &&
					    r->obj == OBJ_RING))
			return;
		jw_open(f->name, '[');
		for (i = 0; i < r->npeers; i++)
			json_rec(&fs_peer, &r->peers[i]);
		jw_close(']');
		return;
	default:
		break;
	}
	if (!rec_has(r, f->attr))
		return;
	if (f->show == FS_NUM || f->show == FS_MODE) {
		jw_u64(f->name, r->val[f->attr]);
	} else if (f->show == FS_STATE) {
		jw_open(f->name, '[');
		for (i = 0; i < sizeof(state_bits) / sizeof(state_bits[0]); i++)
			if (r->val[f->attr] & (1ULL << i))
				jw_string(NULL, state_bits[i]);
		jw_close(']');
	} else {
		jw_string(f->name, enum_str(f->show, r->val[f->attr], buf,
					    sizeof(buf)));
	}
}

/* Text: "label value" for every present field, one per line. */
static void text_value(const struct field *f, const struct rec *r)
{
	uint64_t v = r->val[f->attr];
	char buf[32];
	size_t i;

	switch (f->show) {
	case FS_MODE:
		printf("%04" PRIo64, v);
		return;
	case FS_STATE:
		if (!v)
			fputs("-", stdout);
		for (i = 0; i < sizeof(state_bits) / sizeof(state_bits[0]); i++)
			if (v & (1ULL << i))
				printf("%s%s", state_bits[i],
				       v >> (i + 1) ? "," : "");
		return;
	case FS_NUM:
		printf("%" PRIu64, v);
		return;
	default:
		fputs(enum_str(f->show, v, buf, sizeof(buf)), stdout);
	}
}

static void text_fields(const struct fieldset *fs, const struct rec *r)
{
	size_t i;

	for (i = 0; i < fs->n; i++) {
		const struct field *f = &fs->f[i];

		if (f->type == FT_STR || f->type == FT_PEERS ||
		    f->type == FT_PEER || f->show == FS_KIND)
			continue;	/* in the title line or below */
		if (f->type == FT_FLAG) {
			if (rec_has(r, f->attr))
				printf("    %-20s yes\n", f->name);
			continue;
		}
		if (!rec_has(r, f->attr))
			continue;
		printf("    %-20s ", f->name);
		text_value(f, r);
		putchar('\n');
	}
}

static void text_peer(const struct rec *p)
{
	size_t i;

	fputs("    peer", stdout);
	for (i = 0; i < fs_peer.n; i++) {
		const struct field *f = &fs_peer.f[i];

		if (!rec_has(p, f->attr))
			continue;
		if (f->type == FT_FLAG) {
			printf(" %s", f->name);
			continue;
		}
		printf(" %s ", f->name);
		text_value(f, p);
	}
	putchar('\n');
}

static void text_unavailable(const struct rec *r)
{
	const char *const *u;

	if (!r->unavailable)
		return;
	fputs("    not visible on the memfd backend:", stdout);
	for (u = r->unavailable; *u; u++)
		printf(" %s", *u);
	putchar('\n');
}

/* ---- parsing netlink attributes into records ---- */

static bool warned_len;

/* Store one attribute if its length fits its type; else warn once. */
static void parse_value(const struct fieldset *fs, const struct field *f,
			const struct nlattr *a, struct rec *r)
{
	int len = nla_len(a);
	const char *s;

	switch (f->type) {
	case FT_U32:
		if (len != 4)
			goto bad;
		rec_set(r, f->attr, nla_get_u32(a));
		return;
	case FT_U64:
		if (len != 8)
			goto bad;
		rec_set(r, f->attr, nla_get_u64(a));
		return;
	case FT_FLAG:
		rec_set(r, f->attr, 1);
		return;
	case FT_STR:
		s = nla_data(a);
		if (len < 2 || len > BATON_NAME_MAX || s[len - 1] != '\0' ||
		    strlen(s) != (size_t)len - 1)
			goto bad;
		memcpy(r->name, s, (size_t)len);
		rec_set(r, f->attr, 1);
		return;
	default:
		return;
	}
bad:
	if (!warned_len)
		fprintf(stderr,
			"batonctl: %s attribute %d has length %d, which does not fit its type; ignored\n",
			fs->what, f->attr, len);
	warned_len = true;
}

static int parse_set(const struct fieldset *fs, struct nlattr *head, int len,
		     struct rec *r);

/* One peer (a nest of baton_a_peer) into a new peer record. */
static int parse_peer(struct rec *r, struct nlattr *a)
{
	struct rec *p = rec_add_peer(r);

	if (!p)
		return -ENOMEM;
	return parse_set(&fs_peer, nla_data(a), nla_len(a), p);
}

static int parse_set(const struct fieldset *fs, struct nlattr *head, int len,
		     struct rec *r)
{
	struct nlattr *a, *n;
	int rem, nrem, ret;

	nla_for_each_attr(a, head, len, rem) {
		const struct field *f = field_of(fs, nla_type(a));

		if (!f)
			continue;	/* a newer module's attribute */
		if (f->type == FT_PEER) {
			ret = parse_peer(r, a);
			if (ret)
				return ret;
		} else if (f->type == FT_PEERS) {
			nla_for_each_nested(n, a, nrem) {
				const struct field *pf =
					field_of(fs, nla_type(n));

				if (!pf || pf->type != FT_PEER)
					continue;
				ret = parse_peer(r, n);
				if (ret)
					return ret;
			}
		} else {
			parse_value(fs, f, a, r);
		}
	}
	return 0;
}

/* ---- the netlink conversation ---- */

struct reply {
	int cmd;			/* the command the replies carry */
	const struct fieldset *fs;
	enum obj_kind obj;
	struct rec *recs;		/* what arrived */
	size_t nrecs;
	int error;			/* negative errno from the kernel */
	char extack[256];		/* its extack message, if any */
	bool done;
	/* watch */
	long events;
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/*
 * The extack TLVs follow struct nlmsgerr and, unless the kernel capped
 * the echo (NLM_F_CAPPED), the whole request. Only the message and the
 * missing-attribute type are of use to a person.
 */
static void read_extack(const struct nlmsgerr *e, struct reply *rp)
{
	const struct nlmsghdr *h = (const struct nlmsghdr *)
		((const char *)e - NLMSG_HDRLEN);
	size_t echo = 0, off;
	struct nlattr *a;
	int rem;

	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(h->nlmsg_flags & NLM_F_CAPPED) &&
	    e->msg.nlmsg_len > NLMSG_HDRLEN)
		echo = e->msg.nlmsg_len - NLMSG_HDRLEN;
	off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(*e) + echo);
	if (off >= h->nlmsg_len)
		return;
	nla_for_each_attr(a, (struct nlattr *)((char *)h + off),
			  (int)(h->nlmsg_len - off), rem) {
		if (nla_type(a) == NLMSGERR_ATTR_MSG && nla_len(a) > 0) {
			snprintf(rp->extack, sizeof(rp->extack), "%.*s",
				 nla_len(a), (const char *)nla_data(a));
			rp->extack[strcspn(rp->extack, "\n")] = '\0';
		} else if (nla_type(a) == NLMSGERR_ATTR_MISS_TYPE &&
			   nla_len(a) == 4 && !rp->extack[0]) {
			snprintf(rp->extack, sizeof(rp->extack),
				 "missing attribute %u", nla_get_u32(a));
		}
	}
}

static int on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	struct reply *rp = arg;

	(void)who;
	rp->error = e->error;
	read_extack(e, rp);
	rp->done = true;
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	struct reply *rp = arg;

	(void)msg;
	rp->done = true;
	return NL_STOP;
}

/* NLMSG_DONE: a dump that failed half way carries its errno here. */
static int on_finish(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *h = nlmsg_hdr(msg);
	struct reply *rp = arg;
	int err;

	if (nlmsg_datalen(h) >= (int)sizeof(int)) {
		memcpy(&err, nlmsg_data(h), sizeof(err));
		if (err < 0)
			rp->error = err;
	}
	rp->done = true;
	return NL_STOP;
}

static void print_event(const struct rec *ev);

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *h = nlmsg_hdr(msg);
	struct reply *rp = arg;
	struct genlmsghdr *g;
	struct rec *r;

	if (!genlmsg_valid_hdr(h, 0))
		return NL_SKIP;
	g = genlmsg_hdr(h);
	if (g->cmd != rp->cmd)
		return NL_SKIP;	/* not what we asked for */
	r = realloc(rp->recs, (rp->nrecs + 1) * sizeof(*r));
	if (!r) {
		rp->error = -ENOMEM;
		return NL_STOP;
	}
	rp->recs = r;
	r = &rp->recs[rp->nrecs++];
	memset(r, 0, sizeof(*r));
	r->obj = rp->obj;
	r->backend = BE_KMOD;
	if (parse_set(rp->fs, genlmsg_attrdata(g, 0), genlmsg_attrlen(g, 0),
		      r)) {
		rp->error = -ENOMEM;
		return NL_STOP;
	}
	if (rp->obj != OBJ_EVENT)
		return NL_OK;
	/* watch: print as it comes, drop it, count it */
	print_event(r);
	rec_free(r);
	rp->nrecs--;
	if (opt.count && ++rp->events >= opt.count) {
		rp->done = true;
		return NL_STOP;
	}
	return NL_OK;
}

struct nl {
	struct nl_sock *sk;
	struct nl_cb *cb;
	int family;
};

/*
 * Connect and resolve the family. -ENOENT: the module is not loaded (or
 * has no netlink family); other negative errnos are failures.
 */
static int bt_nl_open(struct nl *nl)
{
	int one = 1, fd, ret;

	memset(nl, 0, sizeof(*nl));
	nl->sk = nl_socket_alloc();
	nl->cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!nl->sk || !nl->cb)
		return -ENOMEM;
	ret = genl_connect(nl->sk);
	if (ret)
		return -EIO;
	fd = nl_socket_get_fd(nl->sk);
	/* extack messages, and no echo of our request in errors */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	/* a dump's datagrams may be larger than libnl's default buffer */
	nl_socket_enable_msg_peek(nl->sk);
	/* requests are acked only when asked (WATCH); errors always come */
	nl_socket_disable_auto_ack(nl->sk);
	nl->family = genl_ctrl_resolve(nl->sk, BATON_FAMILY_NAME);
	if (nl->family == -NLE_OBJ_NOTFOUND)
		return -ENOENT;
	if (nl->family < 0)
		return -EIO;
	return 0;
}

static void bt_nl_close(struct nl *nl)
{
	if (nl->cb)
		nl_cb_put(nl->cb);
	if (nl->sk)
		nl_socket_free(nl->sk);
}

static void reply_init(struct reply *rp, int cmd, const struct fieldset *fs,
		       enum obj_kind obj)
{
	memset(rp, 0, sizeof(*rp));
	rp->cmd = cmd;
	rp->fs = fs;
	rp->obj = obj;
}

static void reply_free(struct reply *rp)
{
	size_t i;

	for (i = 0; i < rp->nrecs; i++)
		rec_free(&rp->recs[i]);
	free(rp->recs);
	rp->recs = NULL;
	rp->nrecs = 0;
}

/*
 * Send @cmd (a dump when @name is NULL, with @name_attr otherwise; with
 * an ACK requested when @ack) and collect the answer in @rp. Returns 0
 * or a negative errno; the kernel's own errno and message are in @rp.
 */
static int bt_nl_request(struct nl *nl, int cmd, int name_attr,
			 const char *name, bool ack, struct reply *rp)
{
	int flags = (name || ack) ? 0 : NLM_F_DUMP;
	struct nl_msg *msg = nlmsg_alloc();
	int ret;

	if (!msg)
		return -ENOMEM;
	if (ack)
		flags |= NLM_F_ACK;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0, flags,
			 (uint8_t)cmd, BATON_FAMILY_VERSION) ||
	    (name && nla_put_string(msg, name_attr, name))) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_cb_set(nl->cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, rp);
	nl_cb_set(nl->cb, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, rp);
	nl_cb_set(nl->cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, rp);
	nl_cb_err(nl->cb, NL_CB_CUSTOM, on_error, rp);
	ret = nl_send_auto(nl->sk, msg);
	nlmsg_free(msg);
	if (ret < 0)
		return -EIO;
	/* A doit answers with one message (or an error); a dump until DONE. */
	while (!rp->done) {
		ret = nl_recvmsgs(nl->sk, nl->cb);
		if (rp->error)
			return rp->error;
		if (ret < 0)
			return -EIO;
		if (name && !ack && rp->nrecs)
			break;
	}
	return rp->error;
}

/* ---- memfd backend: read-only views of /dev/shm objects ---- */

/* state: nothing on this backend sets the *_GONE bits */
static const char *const memfd_ring_unavailable[] = {
	"state", "peers", "parks_full", "parks_empty", "wakes_of_producer",
	"wakes_of_consumer", "producer_deaths", "consumer_deaths",
	"tombstones", "scribbles", "events", NULL,
};

static const char *const memfd_epoch_unavailable[] = {
	"events", NULL,
};

static bool name_valid(const char *s)
{
	size_t n = strlen(s), i;

	if (n < 1 || n >= BATON_NAME_MAX)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return false;
	}
	return true;
}

/*
 * Read-only access: O_RDONLY and pread(), never a writable mapping, and
 * never a mapping at all, so a file truncated under us is a short read
 * instead of SIGBUS. Every word is copied once and checked before use.
 */
static bool pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	return pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

static bool in_file(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* Is byte @at of the file OFD-locked by anyone (a role or a slot held)? */
static bool memfd_locked(int fd, long long at)
{
	struct flock fl = {
		.l_type = F_WRLCK,
		.l_whence = SEEK_SET,
		.l_start = (off_t)at,
		.l_len = 1,
	};

	if (fcntl(fd, F_OFD_GETLK, &fl))
		return false;
	return fl.l_type != F_UNLCK;
}

static void memfd_owner(struct rec *r, const struct stat *st, int a_uid,
			int a_gid, int a_mode)
{
	rec_set(r, a_uid, st->st_uid);
	rec_set(r, a_gid, st->st_gid);
	rec_set(r, a_mode, st->st_mode & 0777);
}

static int memfd_ring_read(int fd, const struct stat *st, struct rec *r)
{
	uint64_t size = (uint64_t)st->st_size, head, tail, k;
	struct baton_ring_hdr h;
	struct baton_mpsc_hdr mh;
	uint32_t pw = 0, cw = 0, producers = 0;
	const struct baton_ring_offsets *o = &h.off;

	if (!pread_full(fd, &h, sizeof(h), 0) || h.magic != BATON_RING_MAGIC ||
	    h.abi_version != BATON_ABI_VERSION ||
	    (h.kind != BATON_RING_SPSC && h.kind != BATON_RING_MPSC) ||
	    h.slot_count < BATON_SLOTS_MIN || h.slot_count > BATON_SLOTS_MAX ||
	    (h.slot_count & (h.slot_count - 1)) ||
	    !in_file(o->prod_mmap, o->prod_size, size) ||
	    !in_file(o->cons_mmap, o->cons_size, size) ||
	    (uint64_t)o->prod_tail + 8 > o->prod_size ||
	    (uint64_t)o->cons_head + 8 > o->cons_size ||
	    (uint64_t)o->prod_waiting + 4 > o->prod_size ||
	    (uint64_t)o->cons_waiting + 4 > o->cons_size)
		return -EPROTO;
	if (!pread_full(fd, &tail, 8, o->prod_mmap + o->prod_tail) ||
	    !pread_full(fd, &head, 8, o->cons_mmap + o->cons_head) ||
	    !pread_full(fd, &pw, 4, o->prod_mmap + o->prod_waiting) ||
	    !pread_full(fd, &cw, 4, o->cons_mmap + o->cons_waiting))
		return -EPROTO;
	rec_set(r, BATON_A_RING_KIND, h.kind);
	rec_set(r, BATON_A_RING_SLOT_COUNT, h.slot_count);
	rec_set(r, BATON_A_RING_SLOT_SIZE, h.slot_size);
	rec_set(r, BATON_A_RING_HEAD, head);
	rec_set(r, BATON_A_RING_TAIL, tail);
	/* clamped, as the kernel does: a scribbled index is not a size */
	rec_set(r, BATON_A_RING_OCCUPANCY, tail - head <= h.slot_count ?
		tail - head : (tail > head ? h.slot_count : 0));
	rec_set(r, BATON_A_RING_MSGS_CONSUMED, head);
	rec_set(r, BATON_A_RING_MSGS_RESERVED, tail);
	/* the waiting words: set around a park by the library itself */
	rec_set(r, BATON_A_RING_PARKED_CONSUMERS, cw ? 1 : 0);
	if (h.kind == BATON_RING_MPSC) {
		if (o->mpsc_hdr % 8 ||
		    (uint64_t)o->mpsc_hdr + sizeof(mh) > o->hdr_size ||
		    !pread_full(fd, &mh, sizeof(mh), o->mpsc_hdr) ||
		    !mh.max_producers ||
		    mh.max_producers > BATON_MPSC_PRODUCERS_MAX)
			return -EPROTO;
		rec_set(r, BATON_A_RING_MAX_PRODUCERS, mh.max_producers);
		rec_set(r, BATON_A_RING_PARKED_PRODUCERS,
			pw <= mh.max_producers ? pw : mh.max_producers);
		for (k = 0; k < mh.max_producers; k++)
			producers += memfd_locked(fd, MEMFD_LOCK_PRODUCER0 +
						      (long long)k);
	} else {
		rec_set(r, BATON_A_RING_MAX_PRODUCERS, 1);
		rec_set(r, BATON_A_RING_PARKED_PRODUCERS, pw ? 1 : 0);
		producers = memfd_locked(fd, MEMFD_LOCK_PRODUCER);
	}
	rec_set(r, BATON_A_RING_PRODUCERS, producers);
	rec_set(r, BATON_A_RING_CONSUMERS,
		memfd_locked(fd, MEMFD_LOCK_CONSUMER));
	memfd_owner(r, st, BATON_A_RING_UID, BATON_A_RING_GID,
		    BATON_A_RING_MODE);
	r->unavailable = memfd_ring_unavailable;
	return 0;
}

/* One participant region: announcement, queue, registration, pid. */
static int memfd_participant(int fd, const struct baton_epoch_hdr *h,
			     uint64_t size, uint32_t i, struct rec *r,
			     uint64_t *oldest, uint32_t *oldest_pid)
{
	const struct baton_epoch_offsets *o = &h->off;
	uint64_t base = o->table_mmap + (uint64_t)i * o->part_stride;
	uint64_t ann, tail, qhead, pending;
	uint32_t pid;
	bool held = memfd_locked(fd, MEMFD_EPOCH_LOCK_BASE + i);
	struct rec *p;

	if (!in_file(base, MEMFD_EPOCH_L_PID + 4, size) ||
	    !pread_full(fd, &ann, 8, base + MEMFD_EPOCH_L_ANN) ||
	    !pread_full(fd, &tail, 8, base + MEMFD_EPOCH_L_TAIL) ||
	    !pread_full(fd, &qhead, 8, base + MEMFD_EPOCH_L_HEAD) ||
	    !pread_full(fd, &pid, 4, base + MEMFD_EPOCH_L_PID))
		return -EPROTO;
	/* a scribbled queue counts as full, never as negative */
	pending = tail - qhead <= h->queue_len ? tail - qhead : h->queue_len;
	if (!held) {
		if (pending) {
			rec_set(r, BATON_A_EPOCH_ORPHANS,
				rec_get(r, BATON_A_EPOCH_ORPHANS) + 1);
			rec_set(r, BATON_A_EPOCH_PENDING,
				rec_get(r, BATON_A_EPOCH_PENDING) + pending);
		}
		return 0;
	}
	rec_set(r, BATON_A_EPOCH_PARTICIPANTS,
		rec_get(r, BATON_A_EPOCH_PARTICIPANTS) + 1);
	rec_set(r, BATON_A_EPOCH_PENDING,
		rec_get(r, BATON_A_EPOCH_PENDING) + pending);
	p = rec_add_peer(r);
	if (!p)
		return -ENOMEM;
	rec_set(p, BATON_A_PEER_PID, pid);
	rec_set(p, BATON_A_PEER_INDEX, i);
	rec_set(p, BATON_A_PEER_PENDING, pending);
	if (ann & BATON_EPOCH_ANN_ACTIVE) {
		rec_set(p, BATON_A_PEER_ANNOUNCED, ann >> 1);
		rec_set(r, BATON_A_EPOCH_ACTIVE_READERS,
			rec_get(r, BATON_A_EPOCH_ACTIVE_READERS) + 1);
		if (ann >> 1 < *oldest) {
			*oldest = ann >> 1;
			*oldest_pid = pid;
		}
	}
	return 0;
}

static int memfd_epoch_read(int fd, const struct stat *st, struct rec *r)
{
	uint64_t size = (uint64_t)st->st_size, oldest = UINT64_MAX;
	const struct baton_epoch_offsets *o;
	struct baton_epoch_hdr h;
	uint32_t i, oldest_pid = 0;
	int ret;

	if (!pread_full(fd, &h, sizeof(h), 0) ||
	    h.magic != BATON_EPOCH_MAGIC ||
	    h.abi_version != BATON_ABI_VERSION || !h.max_participants ||
	    h.max_participants > BATON_EPOCH_PARTICIPANTS_MAX ||
	    h.queue_len < BATON_EPOCH_QUEUE_MIN ||
	    h.queue_len > BATON_EPOCH_QUEUE_MAX)
		return -EPROTO;
	o = &h.off;
	if (o->part_stride < MEMFD_EPOCH_L_PID + 4 ||
	    !in_file(o->table_mmap,
		     (uint64_t)h.max_participants * o->part_stride, size))
		return -EPROTO;
	memfd_owner(r, st, BATON_A_EPOCH_UID, BATON_A_EPOCH_GID,
		    BATON_A_EPOCH_MODE);
	rec_set(r, BATON_A_EPOCH_MAX_PARTICIPANTS, h.max_participants);
	rec_set(r, BATON_A_EPOCH_QUEUE_LEN, h.queue_len);
	rec_set(r, BATON_A_EPOCH_GLOBAL, h.global);
	rec_set(r, BATON_A_EPOCH_FRONTIER, h.frontier);
	rec_set(r, BATON_A_EPOCH_SYNC_WAITERS, h.sync_waiters);
	rec_set(r, BATON_A_EPOCH_SYNC_WAITS, h.sync_waits);
	rec_set(r, BATON_A_EPOCH_SYNC_TIMEOUTS, h.sync_timeouts);
	rec_set(r, BATON_A_EPOCH_PARTICIPANTS, 0);
	rec_set(r, BATON_A_EPOCH_ACTIVE_READERS, 0);
	rec_set(r, BATON_A_EPOCH_PENDING, 0);
	rec_set(r, BATON_A_EPOCH_ORPHANS, 0);
	for (i = 0; i < h.max_participants; i++) {
		ret = memfd_participant(fd, &h, size, i, r, &oldest,
					&oldest_pid);
		if (ret)
			return ret;
	}
	if (oldest != UINT64_MAX) {
		rec_set(r, BATON_A_EPOCH_OLDEST, oldest);
		rec_set(r, BATON_A_EPOCH_OLDEST_PID, oldest_pid);
	}
	r->unavailable = memfd_epoch_unavailable;
	return 0;
}

/* Open /dev/shm/<prefix><name> read-only and fill @r; negative errno. */
static int memfd_read(enum obj_kind obj, const char *name, struct rec *r)
{
	const char *prefix = obj == OBJ_RING ? SHM_RING_PREFIX :
					       SHM_EPOCH_PREFIX;
	char path[sizeof(SHM_DIR) + sizeof(SHM_EPOCH_PREFIX) + BATON_NAME_MAX];
	struct stat st;
	int fd, ret;

	if (!name_valid(name))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%s%s", SHM_DIR, prefix, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	memset(r, 0, sizeof(*r));
	r->obj = obj;
	r->backend = BE_MEMFD;
	snprintf(r->name, sizeof(r->name), "%s", name);
	rec_set(r, obj == OBJ_RING ? BATON_A_RING_NAME : BATON_A_EPOCH_NAME,
		1);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		ret = -EPROTO;
	else if (obj == OBJ_RING)
		ret = memfd_ring_read(fd, &st, r);
	else
		ret = memfd_epoch_read(fd, &st, r);
	close(fd);
	if (ret)
		rec_free(r);
	return ret;
}

/* Append every memfd object of kind @obj to @rp (unreadable ones warn). */
static void memfd_scan(enum obj_kind obj, struct reply *rp)
{
	const char *prefix = obj == OBJ_RING ? SHM_RING_PREFIX :
					       SHM_EPOCH_PREFIX;
	size_t plen = strlen(prefix);
	struct dirent *de;
	DIR *dir = opendir(SHM_DIR);
	struct rec r, *grown;
	int ret;

	if (!dir)
		return;
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, prefix, plen) ||
		    !name_valid(de->d_name + plen))
			continue;
		ret = memfd_read(obj, de->d_name + plen, &r);
		if (ret) {
			if (ret != -ENOENT)
				fprintf(stderr,
					"batonctl: %s/%s: not a readable baton object: %s\n",
					SHM_DIR, de->d_name, strerror(-ret));
			continue;
		}
		grown = realloc(rp->recs, (rp->nrecs + 1) * sizeof(*grown));
		if (!grown) {
			rec_free(&r);
			break;
		}
		rp->recs = grown;
		rp->recs[rp->nrecs++] = r;
	}
	closedir(dir);
}

/* ---- commands ---- */

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return (int)x->backend - (int)y->backend;
}

static void sort_recs(struct reply *rp)
{
	if (rp->nrecs > 1)
		qsort(rp->recs, rp->nrecs, sizeof(rp->recs[0]), cmp_rec);
}

static void say_no_module(const char *what)
{
	fprintf(stderr,
		"batonctl: the baton module is not loaded (no generic netlink family \"%s\"); %s\n",
		BATON_FAMILY_NAME, what);
}

static void say_kernel_error(const char *what, int err, const struct reply *rp)
{
	fprintf(stderr, "batonctl: %s: %s", what, strerror(-err));
	if (rp->extack[0])
		fprintf(stderr, " (kernel: %s)", rp->extack);
	fputc('\n', stderr);
}

static const char *num_or_dash(const struct rec *r, int attr, char *buf,
			       size_t len)
{
	if (!rec_has(r, attr))
		return "-";
	snprintf(buf, len, "%" PRIu64, r->val[attr]);
	return buf;
}

static void list_text_ring(const struct rec *r)
{
	char kind[24], slots[24], size[24], occ[24], prod[24], cons[24];
	char park[48], uid[24];

	snprintf(park, sizeof(park), "-");
	if (rec_has(r, BATON_A_RING_PARKED_PRODUCERS))
		snprintf(park, sizeof(park), "%" PRIu64 "/%" PRIu64,
			 rec_get(r, BATON_A_RING_PARKED_PRODUCERS),
			 rec_get(r, BATON_A_RING_PARKED_CONSUMERS));
	printf("%-5s %-5s %-4s %-28s %9s %6s %9s %4s %4s %5s %6s %04" PRIo64 "%s\n",
	       "ring", backend_names[r->backend],
	       enum_str(FS_KIND, rec_get(r, BATON_A_RING_KIND), kind,
			sizeof(kind)),
	       r->name,
	       num_or_dash(r, BATON_A_RING_SLOT_COUNT, slots, sizeof(slots)),
	       num_or_dash(r, BATON_A_RING_SLOT_SIZE, size, sizeof(size)),
	       num_or_dash(r, BATON_A_RING_OCCUPANCY, occ, sizeof(occ)),
	       num_or_dash(r, BATON_A_RING_PRODUCERS, prod, sizeof(prod)),
	       num_or_dash(r, BATON_A_RING_CONSUMERS, cons, sizeof(cons)),
	       park, num_or_dash(r, BATON_A_RING_UID, uid, sizeof(uid)),
	       rec_get(r, BATON_A_RING_MODE),
	       rec_has(r, BATON_A_RING_UNLINKED) ? " unlinked" : "");
}

static void list_text_epoch(const struct rec *r)
{
	char b[6][24];

	printf("%-5s %-5s %-4s %-28s global %s frontier %s participants %s active %s pending %s uid %s mode %04" PRIo64 "%s\n",
	       "epoch", backend_names[r->backend], "-", r->name,
	       num_or_dash(r, BATON_A_EPOCH_GLOBAL, b[0], sizeof(b[0])),
	       num_or_dash(r, BATON_A_EPOCH_FRONTIER, b[1], sizeof(b[1])),
	       num_or_dash(r, BATON_A_EPOCH_PARTICIPANTS, b[2], sizeof(b[2])),
	       num_or_dash(r, BATON_A_EPOCH_ACTIVE_READERS, b[3],
			   sizeof(b[3])),
	       num_or_dash(r, BATON_A_EPOCH_PENDING, b[4], sizeof(b[4])),
	       num_or_dash(r, BATON_A_EPOCH_UID, b[5], sizeof(b[5])),
	       rec_get(r, BATON_A_EPOCH_MODE),
	       rec_has(r, BATON_A_EPOCH_UNLINKED) ? " unlinked" : "");
}

static void print_list(const struct reply *rings, const struct reply *doms)
{
	size_t i;

	if (opt.json) {
		jw_begin_array();
		for (i = 0; i < rings->nrecs; i++)
			json_rec(&fs_ring, &rings->recs[i]);
		for (i = 0; i < doms->nrecs; i++)
			json_rec(&fs_epoch, &doms->recs[i]);
		jw_end_array();
		return;
	}
	printf("%-5s %-5s %-4s %-28s %9s %6s %9s %4s %4s %5s %6s %s\n",
	       "Type", "Back", "Kind", "Name", "Slots", "Size", "Occupancy",
	       "Prod", "Cons", "Park", "Uid", "Mode");
	for (i = 0; i < rings->nrecs; i++)
		list_text_ring(&rings->recs[i]);
	for (i = 0; i < doms->nrecs; i++)
		list_text_epoch(&doms->recs[i]);
}

/*
 * Dump @cmd into @rp. 0, -ENOENT when the family is missing (after
 * saying so once), or another negative errno (reported).
 */
static int dump(struct nl *nl, int nl_ret, int cmd, const char *what,
		struct reply *rp)
{
	int ret;

	if (nl_ret)
		return nl_ret;
	ret = bt_nl_request(nl, cmd, 0, NULL, false, rp);
	if (ret)
		say_kernel_error(what, ret, rp);
	return ret;
}

static int cmd_list(void)
{
	struct reply rings, doms;
	struct nl nl;
	int nl_ret, ret = 0;

	reply_init(&rings, BATON_CMD_RING_GET, &fs_ring, OBJ_RING);
	reply_init(&doms, BATON_CMD_EPOCH_GET, &fs_epoch, OBJ_EPOCH);
	nl_ret = bt_nl_open(&nl);
	if (nl_ret == -ENOENT)
		say_no_module("rings on the memfd backend are listed below");
	else if (nl_ret)
		fprintf(stderr, "batonctl: generic netlink: %s\n",
			strerror(-nl_ret));
	if (dump(&nl, nl_ret, BATON_CMD_RING_GET, "dumping rings", &rings) &&
	    !nl_ret)
		ret = 1;
	if (dump(&nl, nl_ret, BATON_CMD_EPOCH_GET, "dumping epoch domains",
		 &doms) && !nl_ret)
		ret = 1;
	bt_nl_close(&nl);
	memfd_scan(OBJ_RING, &rings);
	memfd_scan(OBJ_EPOCH, &doms);
	sort_recs(&rings);
	sort_recs(&doms);
	print_list(&rings, &doms);
	if (nl_ret && !rings.nrecs && !doms.nrecs)
		ret = nl_ret == -ENOENT ? EXIT_NOMODULE : 1;
	reply_free(&rings);
	reply_free(&doms);
	return ret;
}

static void print_objects(const struct fieldset *fs, const struct reply *rp)
{
	char k[32];
	size_t i, j;

	if (opt.json) {
		jw_begin_array();
		for (i = 0; i < rp->nrecs; i++)
			json_rec(fs, &rp->recs[i]);
		jw_end_array();
		return;
	}
	for (i = 0; i < rp->nrecs; i++) {
		const struct rec *r = &rp->recs[i];

		if (r->obj == OBJ_RING)
			printf("ring %s (%s, %s)\n", r->name,
			       backend_names[r->backend],
			       enum_str(FS_KIND, rec_get(r, BATON_A_RING_KIND),
					k, sizeof(k)));
		else
			printf("epoch %s (%s)\n", r->name,
			       backend_names[r->backend]);
		text_fields(fs, r);
		for (j = 0; j < r->npeers; j++)
			text_peer(&r->peers[j]);
		text_unavailable(r);
	}
}

/*
 * One object by name (show, epoch NAME) or all domains (epoch): the
 * module first; the memfd backend when the module has no such name.
 */
static int cmd_get(enum obj_kind obj, const char *name)
{
	const struct fieldset *fs = obj == OBJ_RING ? &fs_ring : &fs_epoch;
	int cmd = obj == OBJ_RING ? BATON_CMD_RING_GET : BATON_CMD_EPOCH_GET;
	int attr = obj == OBJ_RING ? BATON_A_RING_NAME : BATON_A_EPOCH_NAME;
	const char *what = obj == OBJ_RING ? "ring" : "epoch domain";
	struct reply rp;
	struct rec r, *grown;
	struct nl nl;
	int nl_ret, ret = 0, kret = 0;

	reply_init(&rp, cmd, fs, obj);
	nl_ret = bt_nl_open(&nl);
	if (nl_ret == -ENOENT)
		say_no_module(obj == OBJ_RING ?
			      "rings on the memfd backend are shown below" :
			      "epoch domains on the memfd backend are shown below");
	else if (nl_ret)
		fprintf(stderr, "batonctl: generic netlink: %s\n",
			strerror(-nl_ret));
	if (!nl_ret) {
		kret = bt_nl_request(&nl, cmd, attr, name, false, &rp);
		/* ENOENT by name: maybe a memfd object; say so only then */
		if (kret && !(name && kret == -ENOENT)) {
			say_kernel_error(name ? name : "dumping epoch domains",
					 kret, &rp);
			ret = 1;
		}
	}
	bt_nl_close(&nl);
	if (!name) {
		memfd_scan(obj, &rp);
		sort_recs(&rp);
	} else if (!rp.nrecs && memfd_read(obj, name, &r) == 0) {
		grown = realloc(rp.recs, sizeof(*grown));
		if (grown) {
			rp.recs = grown;
			rp.recs[rp.nrecs++] = r;
		}
	}
	if (name && !rp.nrecs) {
		if (kret == -ENOENT)
			say_kernel_error(name, kret, &rp);
		else if (nl_ret)
			fprintf(stderr, "batonctl: no %s named %s on the memfd backend\n",
				what, name);
		ret = nl_ret == -ENOENT ? EXIT_NOMODULE : 1;
	} else if (!name && nl_ret && !rp.nrecs) {
		ret = nl_ret == -ENOENT ? EXIT_NOMODULE : 1;
	}
	if (rp.nrecs || !name)
		print_objects(fs, &rp);
	reply_free(&rp);
	return ret;
}

static void print_event(const struct rec *ev)
{
	size_t i;

	if (opt.json) {
		/* one object per event and line, flushed as it goes */
		memset(&jw, 0, sizeof(jw));
		json_rec(&fs_event, ev);
		putchar('\n');
		fflush(stdout);
		return;
	}
	for (i = 0; i < fs_event.n; i++) {
		const struct field *f = &fs_event.f[i];

		if (!rec_has(ev, f->attr))
			continue;
		if (f->type == FT_STR) {
			printf(" %s %s", f->name, ev->name);
			continue;
		}
		if (f->attr == BATON_A_EVENT_TYPE) {
			text_value(f, ev);
			continue;
		}
		printf(" %s ", f->name);
		text_value(f, ev);
	}
	putchar('\n');
	fflush(stdout);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for events on the subscribed socket; 0, or an exit status. */
static int watch_loop(struct nl *nl, struct reply *rp)
{
	int64_t end = opt.timeout_s ? now_ms() + opt.timeout_s * 1000 : 0;
	struct pollfd pfd = {
		.fd = nl_socket_get_fd(nl->sk),
		.events = POLLIN,
	};
	int ret;

	reply_init(rp, BATON_CMD_EVENT, &fs_event, OBJ_EVENT);
	while (!stop_requested && !(opt.count && rp->events >= opt.count)) {
		int wait = -1;

		if (end) {
			int64_t left = end - now_ms();

			if (left <= 0)
				return opt.count ? EXIT_TIMEDOUT : 0;
			wait = left > 1000 ? 1000 : (int)left;
		}
		ret = poll(&pfd, 1, wait);
		if (ret < 0 && errno != EINTR)
			return 1;
		if (ret <= 0)
			continue;
		ret = nl_recvmsgs(nl->sk, nl->cb);
		if (ret == -NLE_NOMEM)	/* ENOBUFS: the socket overran */
			fprintf(stderr, "batonctl: events were lost (receive buffer overrun)\n");
		else if (ret < 0 && rp->error)
			return 1;
	}
	return 0;
}

static int cmd_watch(void)
{
	struct sigaction sa;
	struct reply rp;
	struct nl nl;
	int ret;

	ret = bt_nl_open(&nl);
	if (ret == -ENOENT) {
		say_no_module("events need the module; the memfd backend has none");
		bt_nl_close(&nl);
		return EXIT_NOMODULE;
	}
	if (ret) {
		fprintf(stderr, "batonctl: generic netlink: %s\n",
			strerror(-ret));
		bt_nl_close(&nl);
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: poll returns */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* events come unsolicited, with sequence numbers of their own */
	nl_socket_disable_seq_check(nl.sk);
	nl_socket_set_buffer_size(nl.sk, 1 << 20, 0);
	reply_init(&rp, BATON_CMD_WATCH, &fs_event, OBJ_EVENT);
	ret = bt_nl_request(&nl, BATON_CMD_WATCH, 0, NULL, true, &rp);
	if (ret) {
		say_kernel_error("subscribing to events", ret, &rp);
		bt_nl_close(&nl);
		return 1;
	}
	/* Tools and tests wait for this line before causing events. */
	fprintf(stderr, "batonctl: watching events\n");
	ret = watch_loop(&nl, &rp);
	reply_free(&rp);
	bt_nl_close(&nl);	/* closing the socket ends the subscription */
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: batonctl [-j [-p]] list\n"
		"       batonctl [-j [-p]] show NAME\n"
		"       batonctl [-j [-p]] epoch [NAME]\n"
		"       batonctl [-j] [-c COUNT] [-t SECONDS] watch\n"
		"  -j  JSON output (an array of objects; watch: one object a line)\n"
		"  -p  pretty JSON\n"
		"  -c  watch: stop after COUNT events\n"
		"  -t  watch: stop after SECONDS (exit 3 if -c events had not come)\n"
		"exit: 0 fine, 1 error, 2 module not loaded and nothing on memfd, 3 timed out\n");
}

static bool parse_long(const char *s, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return !errno && *s && !*end && *out >= 0;
}

int main(int argc, char **argv)
{
	const char *cmd;
	int c;

	while ((c = getopt(argc, argv, "jpc:t:h")) != -1) {
		switch (c) {
		case 'j':
			opt.json = true;
			break;
		case 'p':
			opt.pretty = true;
			break;
		case 'c':
			if (!parse_long(optarg, &opt.count)) {
				fprintf(stderr, "batonctl: -c wants a count\n");
				return 1;
			}
			break;
		case 't':
			if (!parse_long(optarg, &opt.timeout_s)) {
				fprintf(stderr, "batonctl: -t wants seconds\n");
				return 1;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 1;
	}
	cmd = argv[optind++];
	if (!strcmp(cmd, "list") || !strcmp(cmd, "ls")) {
		if (optind == argc)
			return cmd_list();
	} else if (!strcmp(cmd, "show")) {
		if (optind + 1 == argc)
			return cmd_get(OBJ_RING, argv[optind]);
	} else if (!strcmp(cmd, "epoch")) {
		if (optind + 1 >= argc)
			return cmd_get(OBJ_EPOCH, argv[optind]);
	} else if (!strcmp(cmd, "watch")) {
		if (optind == argc)
			return cmd_watch();
	} else if (!strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	usage(stderr);
	return 1;
}
