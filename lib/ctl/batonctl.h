/* SPDX-License-Identifier: MIT */
/*
 * lib/ctl/batonctl.h: what batonctl's files share. batonctl shows what the
 * generic netlink family "baton" (uapi/linux/baton_nl.h) says about rings,
 * epoch domains and buffer pools, the way ss and ip -s show sockets, reads
 * memfd-backend objects from /dev/shm, and unlinks objects through
 * /dev/baton.
 *
 * Everything batonctl knows about an object is a struct rec: the values of
 * the netlink attributes it carries, by attribute number, whichever
 * backend it came from. Parsing and printing are table driven: each
 * attribute set has one table of {attribute, type, output name}
 * (records.c). An attribute that no table names is skipped, so a newer
 * module's additions do not break an older batonctl; one that a table
 * names but whose length is wrong is ignored with a warning. JSON names
 * are the attribute names in snake_case (BATON_A_RING_SLOT_COUNT is
 * "slot_count"); the schema is in Documentation/batonctl.rst.
 *
 * The files, each owning one thing:
 *   main.c     the command line, usage and dispatch
 *   records.c  records, the attribute tables, the names of uapi enums
 *   json.c     JSON output in iproute2's style
 *   text.c     text output of records
 *   netlink.c  the libnl-genl-3 conversation: family, requests, extack,
 *              attributes into records
 *   memfd.c    read-only views of memfd-backend objects in /dev/shm
 *   list.c     list, show, epoch and pool
 *   watch.c    watch: events as they come
 *   unlink.c   unlink: the module's name (in the caller's or another IPC
 *              namespace), else the memfd backend's file
 *
 * Exit status: 0 fine, an empty answer included; 1 an error (the message
 * on stderr says which), a name nobody has included; 2 the command needs
 * the module (watch, unlink --ns) and it is not loaded; 3 watch -c N ran
 * out of time (-t) before N events arrived.
 */
#ifndef BATONCTL_H
#define BATONCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <netlink/netlink.h>

#include <linux/baton.h>
#include <linux/baton_nl.h>

#define EXIT_NOMODULE	2
#define EXIT_TIMEDOUT	3

/* ---- records: one ring, domain, peer or event, as parsed ---- */

#define REC_ATTRS	64	/* attribute numbers a record can hold */

_Static_assert(BATON_A_RING_MAX < REC_ATTRS, "ring attributes fit a record");
_Static_assert(BATON_A_EPOCH_MAX < REC_ATTRS, "epoch attributes fit");
_Static_assert(BATON_A_PEER_MAX < REC_ATTRS, "peer attributes fit");
_Static_assert(BATON_A_EVENT_MAX < REC_ATTRS, "event attributes fit");
_Static_assert(BATON_A_POOL_MAX < REC_ATTRS, "pool attributes fit");
_Static_assert(BATON_A_CLASS_MAX < REC_ATTRS, "class attributes fit");

/* OBJ_CLASS: one size class of a pool, a sub-record as a peer is. */
enum obj_kind { OBJ_RING, OBJ_EPOCH, OBJ_PEER, OBJ_EVENT, OBJ_POOL,
		OBJ_CLASS };
enum backend { BE_KMOD, BE_MEMFD };

struct rec {
	enum obj_kind obj;
	enum backend backend;
	uint64_t present;		/* bit n: attribute n was seen */
	uint64_t val[REC_ATTRS];	/* numbers and flags (flag: 1) */
	char name[BATON_NAME_MAX];
	struct rec *peers;
	size_t npeers;
	struct rec *classes;		/* pools: one per size class */
	size_t nclasses;
	const char *const *unavailable;	/* memfd: fields not known */
	bool held;			/* memfd domain: a handle is open */
};

bool rec_has(const struct rec *r, int attr);
uint64_t rec_get(const struct rec *r, int attr);
void rec_set(struct rec *r, int attr, uint64_t v);
void rec_free(struct rec *r);
bool rec_stale(const struct rec *r);
struct rec *rec_add_peer(struct rec *r);
struct rec *rec_add_class(struct rec *r);

/* ---- attribute tables ---- */

enum ftype { FT_U32, FT_U64, FT_STR, FT_FLAG, FT_PEERS, FT_PEER,
	     FT_CLASSES, FT_CLASS };
/* How a value prints: a plain number or one of the uapi enums. */
enum fshow { FS_NUM, FS_KIND, FS_ROLE, FS_STATE, FS_MODE, FS_EVENT };

struct field {
	int attr;
	enum ftype type;
	enum fshow show;
	const char *name;		/* JSON key and text label */
};

struct fieldset {
	const struct field *f;
	size_t n;
	const char *what;		/* for warnings */
};

extern const struct fieldset fs_ring, fs_epoch, fs_peer, fs_event, fs_pool,
	fs_class;

const struct field *field_of(const struct fieldset *fs, int attr);

/* ---- names ---- */

extern const char *const backend_names[];	/* by enum backend */
extern const char *const obj_names[];		/* by enum obj_kind */
extern const char *const state_bits[];		/* BATON_STATE_* bit n */
extern const size_t n_state_bits;
const char *state_bit_name(unsigned int i, char *buf, size_t len);

/* An enum value this batonctl does not know prints as "unknown_<n>". */
const char *enum_str(enum fshow show, uint64_t v, char *buf, size_t len);

/* ---- the command line's options ---- */

struct options {
	bool json;
	bool pretty;
	long count;		/* watch: stop after this many events */
	long timeout_s;		/* watch: stop after this many seconds */
	bool all_ns;		/* list: every IPC namespace (admin) */
	bool have_ns;		/* unlink: in IPC namespace ns */
	uint64_t ns;
	enum obj_kind unlink_obj;	/* unlink: a ring, domain or pool */
};

extern struct options opt;

/* ---- output ---- */

void jw_begin_array(void);
void jw_end_array(void);
void jw_reset(void);
void json_rec(const struct fieldset *fs, const struct rec *r);

void text_value(const struct field *f, const struct rec *r);
void text_fields(const struct fieldset *fs, const struct rec *r);
void text_peer(const struct rec *p);
void text_class(const struct rec *c);
void text_unavailable(const struct rec *r);
const char *num_or_dash(const struct rec *r, int attr, char *buf,
			size_t len);

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

struct nl {
	struct nl_sock *sk;
	struct nl_cb *cb;
	int family;
};

/* Request flags of bt_nl_request(). */
#define REQ_ACK		(1U << 0)	/* ask for an ACK (WATCH) */
#define REQ_ALL_NS	(1U << 1)	/* a dump of every IPC namespace */

int bt_nl_open(struct nl *nl);
void bt_nl_close(struct nl *nl);
void reply_init(struct reply *rp, int cmd, const struct fieldset *fs,
		enum obj_kind obj);
void reply_free(struct reply *rp);
int bt_nl_request(struct nl *nl, int cmd, int name_attr, const char *name,
		  unsigned int flags, struct reply *rp);
void say_no_module(const char *what);
void say_kernel_error(const char *what, int err, const struct reply *rp);

/* ---- memfd backend ---- */

bool name_valid(const char *s);
int memfd_read(enum obj_kind obj, const char *name, struct rec *r);
void memfd_say_unreadable(enum obj_kind obj, const char *name, int err);
int memfd_unlink(enum obj_kind obj, const char *name);
void memfd_scan(enum obj_kind obj, struct reply *rp);

/* ---- commands ---- */

int cmd_list(void);
int cmd_get(enum obj_kind obj, const char *name);
int cmd_watch(void);
int cmd_unlink(const char *name);
/* watch: one event, as it arrives (netlink.c calls it) */
void print_event(const struct rec *ev);

#endif /* BATONCTL_H */
