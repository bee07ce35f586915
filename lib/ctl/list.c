// SPDX-License-Identifier: MIT
/*
 * lib/ctl/list.c: batonctl's list, show, epoch and pool: dumps and lookups
 * by name from the module first, then the memfd backend, sorted by name
 * and printed as a table, as "label value" lines or as JSON.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batonctl.h"

static int ns_attr(const struct rec *r)
{
	switch (r->obj) {
	case OBJ_RING:
		return BATON_A_RING_IPC_NS;
	case OBJ_EPOCH:
		return BATON_A_EPOCH_IPC_NS;
	default:
		return BATON_A_POOL_IPC_NS;
	}
}

static int unlinked_attr(const struct rec *r)
{
	switch (r->obj) {
	case OBJ_RING:
		return BATON_A_RING_UNLINKED;
	case OBJ_EPOCH:
		return BATON_A_EPOCH_UNLINKED;
	default:
		return BATON_A_POOL_UNLINKED;
	}
}

/* --all-ns: the IPC namespace column, "-" on memfd (no such thing). */
static void list_text_ns(const struct rec *r)
{
	char ns[24];

	if (opt.all_ns)
		printf("%-10s ", num_or_dash(r, ns_attr(r), ns, sizeof(ns)));
}

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	if (x->backend != y->backend)
		return (int)x->backend - (int)y->backend;
	/* --all-ns: one name in several IPC namespaces, by namespace */
	return x->val[ns_attr(x)] < y->val[ns_attr(y)] ? -1 :
	       x->val[ns_attr(x)] > y->val[ns_attr(y)];
}

static void sort_recs(struct reply *rp)
{
	if (rp->nrecs > 1)
		qsort(rp->recs, rp->nrecs, sizeof(rp->recs[0]), cmp_rec);
}

/* The Flags column: what a script may grep for; "-" when none. */
static const char *list_flags(const struct rec *r, char *buf, size_t len)
{
	int unl = unlinked_attr(r);

	snprintf(buf, len, "%s%s%s", rec_stale(r) ? "stale" : "",
		 rec_stale(r) && rec_has(r, unl) ? "," : "",
		 rec_has(r, unl) ? "unlinked" : "");
	return buf[0] ? buf : "-";
}

static void list_text_ring(const struct rec *r)
{
	char kind[24], slots[24], size[24], occ[24], prod[24], cons[24];
	char park[48], uid[24], flags[24];

	snprintf(park, sizeof(park), "-");
	if (rec_has(r, BATON_A_RING_PARKED_PRODUCERS))
		snprintf(park, sizeof(park), "%" PRIu64 "/%" PRIu64,
			 rec_get(r, BATON_A_RING_PARKED_PRODUCERS),
			 rec_get(r, BATON_A_RING_PARKED_CONSUMERS));
	list_text_ns(r);
	printf("%-5s %-5s %-4s %-28s %9s %6s %9s %4s %4s %5s %6s %04" PRIo64 " %s\n",
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
	       list_flags(r, flags, sizeof(flags)));
}

static void list_text_epoch(const struct rec *r)
{
	char b[6][24], flags[24];

	list_text_ns(r);
	printf("%-5s %-5s %-28s %10s %10s %5s %6s %8s %6s %04" PRIo64 " %s\n",
	       "epoch", backend_names[r->backend], r->name,
	       num_or_dash(r, BATON_A_EPOCH_GLOBAL, b[0], sizeof(b[0])),
	       num_or_dash(r, BATON_A_EPOCH_FRONTIER, b[1], sizeof(b[1])),
	       num_or_dash(r, BATON_A_EPOCH_PARTICIPANTS, b[2], sizeof(b[2])),
	       num_or_dash(r, BATON_A_EPOCH_ACTIVE_READERS, b[3],
			   sizeof(b[3])),
	       num_or_dash(r, BATON_A_EPOCH_PENDING, b[4], sizeof(b[4])),
	       num_or_dash(r, BATON_A_EPOCH_UID, b[5], sizeof(b[5])),
	       rec_get(r, BATON_A_EPOCH_MODE), list_flags(r, flags, sizeof(flags)));
}

/* Buffers of every class, or free ones: the sum over the class records. */
static const char *pool_sum(const struct rec *r, int attr, char *buf,
			    size_t len)
{
	uint64_t sum = 0;
	size_t i;

	if (!r->nclasses)
		return "-";
	for (i = 0; i < r->nclasses; i++)
		sum += rec_get(&r->classes[i], attr);
	snprintf(buf, len, "%" PRIu64, sum);
	return buf;
}

static void list_text_pool(const struct rec *r)
{
	char b[8][24], flags[24];

	list_text_ns(r);
	printf("%-5s %-5s %-28s %7s %7s %7s %12s %7s %9s %9s %6s %04" PRIo64 " %s\n",
	       "pool", backend_names[r->backend], r->name,
	       num_or_dash(r, BATON_A_POOL_NR_CLASSES, b[0], sizeof(b[0])),
	       pool_sum(r, BATON_A_CLASS_COUNT, b[1], sizeof(b[1])),
	       pool_sum(r, BATON_A_CLASS_FREE, b[2], sizeof(b[2])),
	       num_or_dash(r, BATON_A_POOL_DATA_SIZE, b[3], sizeof(b[3])),
	       num_or_dash(r, BATON_A_POOL_HOLDERS, b[4], sizeof(b[4])),
	       num_or_dash(r, BATON_A_POOL_RECLAIMED, b[5], sizeof(b[5])),
	       num_or_dash(r, BATON_A_POOL_DECAYED, b[6], sizeof(b[6])),
	       num_or_dash(r, BATON_A_POOL_UID, b[7], sizeof(b[7])),
	       rec_get(r, BATON_A_POOL_MODE), list_flags(r, flags, sizeof(flags)));
}

/* One heading per kind of object, each over its own columns. */
static void list_heading(enum obj_kind obj)
{
	if (opt.all_ns)
		printf("%-10s ", "IpcNs");
	if (obj == OBJ_RING)
		printf("%-5s %-5s %-4s %-28s %9s %6s %9s %4s %4s %5s %6s %-4s %s\n",
		       "Type", "Back", "Kind", "Name", "Slots", "Size",
		       "Occupancy", "Prod", "Cons", "Park", "Uid", "Mode",
		       "Flags");
	else if (obj == OBJ_EPOCH)
		printf("%-5s %-5s %-28s %10s %10s %5s %6s %8s %6s %-4s %s\n",
		       "Type", "Back", "Name", "Global", "Frontier", "Parts",
		       "Active", "Pending", "Uid", "Mode", "Flags");
	else
		printf("%-5s %-5s %-28s %7s %7s %7s %12s %7s %9s %9s %6s %-4s %s\n",
		       "Type", "Back", "Name", "Classes", "Buffers", "Free",
		       "Bytes", "Holders", "Reclaimed", "Decayed", "Uid", "Mode",
		       "Flags");
}

/* Each kind's heading and rows, a blank line between two kinds. */
static void list_kind(const struct reply *rp, bool *printed,
		      void (*row)(const struct rec *r))
{
	size_t i;

	if (!rp->nrecs)
		return;
	if (*printed)
		putchar('\n');
	*printed = true;
	list_heading(rp->obj);
	for (i = 0; i < rp->nrecs; i++)
		row(&rp->recs[i]);
}

/*
 * Text: rings under the ring heading, then a blank line and domains under
 * theirs, then pools; a kind with no objects prints nothing, so an idle
 * system prints nothing at all (as `ip link show type vxlan` does with no
 * such links).
 */
static void print_list(const struct reply *rings, const struct reply *doms,
		       const struct reply *pools)
{
	bool printed = false;
	size_t i;

	if (opt.json) {
		jw_begin_array();
		for (i = 0; i < rings->nrecs; i++)
			json_rec(&fs_ring, &rings->recs[i]);
		for (i = 0; i < doms->nrecs; i++)
			json_rec(&fs_epoch, &doms->recs[i]);
		for (i = 0; i < pools->nrecs; i++)
			json_rec(&fs_pool, &pools->recs[i]);
		jw_end_array();
		return;
	}
	list_kind(rings, &printed, list_text_ring);
	list_kind(doms, &printed, list_text_epoch);
	list_kind(pools, &printed, list_text_pool);
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
	ret = bt_nl_request(nl, cmd, 0, NULL, opt.all_ns ? REQ_ALL_NS : 0, rp);
	if (ret)
		say_kernel_error(what, ret, rp);
	return ret;
}

int cmd_list(void)
{
	struct reply rings, doms, pools;
	struct nl nl;
	int nl_ret, ret = 0;

	reply_init(&rings, BATON_CMD_RING_GET, &fs_ring, OBJ_RING);
	reply_init(&doms, BATON_CMD_EPOCH_GET, &fs_epoch, OBJ_EPOCH);
	reply_init(&pools, BATON_CMD_POOL_GET, &fs_pool, OBJ_POOL);
	nl_ret = bt_nl_open(&nl);
	if (nl_ret == -ENOENT)
		say_no_module("the memfd backend's rings, domains and pools are listed below");
	else if (nl_ret)
		fprintf(stderr, "batonctl: generic netlink: %s\n",
			strerror(-nl_ret));
	if (dump(&nl, nl_ret, BATON_CMD_RING_GET, "dumping rings", &rings) &&
	    !nl_ret)
		ret = 1;
	if (dump(&nl, nl_ret, BATON_CMD_EPOCH_GET, "dumping epoch domains",
		 &doms) && !nl_ret)
		ret = 1;
	if (dump(&nl, nl_ret, BATON_CMD_POOL_GET, "dumping pools", &pools) &&
	    !nl_ret)
		ret = 1;
	bt_nl_close(&nl);
	memfd_scan(OBJ_RING, &rings);
	memfd_scan(OBJ_EPOCH, &doms);
	memfd_scan(OBJ_POOL, &pools);
	sort_recs(&rings);
	sort_recs(&doms);
	sort_recs(&pools);
	print_list(&rings, &doms, &pools);
	/* No module is an answer: the memfd backend's, maybe empty. */
	if (nl_ret && nl_ret != -ENOENT && !rings.nrecs && !doms.nrecs &&
	    !pools.nrecs)
		ret = 1;
	reply_free(&rings);
	reply_free(&doms);
	reply_free(&pools);
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
			printf("%s %s (%s)\n", obj_names[r->obj], r->name,
			       backend_names[r->backend]);
		text_fields(fs, r);
		for (j = 0; j < r->nclasses; j++)
			text_class(&r->classes[j]);
		for (j = 0; j < r->npeers; j++)
			text_peer(&r->peers[j]);
		text_unavailable(r);
	}
}

/* What cmd_get() asks the module for, and says, about one kind. */
struct get_kind {
	const struct fieldset *fs;
	int cmd;
	int name_attr;
	const char *what;		/* "no WHAT named ..." */
	const char *dumping;		/* a failed dump's message */
	const char *memfd_note;		/* said when the module is missing */
};

static const struct get_kind get_kinds[] = {
	[OBJ_RING] = { &fs_ring, BATON_CMD_RING_GET, BATON_A_RING_NAME,
		       "ring", "dumping rings",
		       "rings on the memfd backend are shown below" },
	[OBJ_EPOCH] = { &fs_epoch, BATON_CMD_EPOCH_GET, BATON_A_EPOCH_NAME,
			"epoch domain", "dumping epoch domains",
			"epoch domains on the memfd backend are shown below" },
	[OBJ_POOL] = { &fs_pool, BATON_CMD_POOL_GET, BATON_A_POOL_NAME,
		       "pool", "dumping pools",
		       "pools on the memfd backend are shown below" },
};

/*
 * One object by name (show, epoch NAME, pool NAME) or all domains or
 * pools (epoch, pool): the module first; the memfd backend when the
 * module has no such name. A name neither has is exit 1 with a message
 * on stderr; a dump that finds nothing is an empty answer, exit 0, as in
 * iproute2.
 */
int cmd_get(enum obj_kind obj, const char *name)
{
	const struct get_kind *gk = &get_kinds[obj];
	const struct fieldset *fs = gk->fs;
	int cmd = gk->cmd;
	int attr = gk->name_attr;
	const char *what = gk->what;
	struct reply rp;
	struct rec r, *grown;
	struct nl nl;
	int nl_ret, ret = 0, kret = 0, mret = -ENOENT;

	reply_init(&rp, cmd, fs, obj);
	nl_ret = bt_nl_open(&nl);
	if (nl_ret == -ENOENT)
		say_no_module(gk->memfd_note);
	else if (nl_ret)
		fprintf(stderr, "batonctl: generic netlink: %s\n",
			strerror(-nl_ret));
	if (!nl_ret) {
		kret = bt_nl_request(&nl, cmd, attr, name,
				     !name && opt.all_ns ? REQ_ALL_NS : 0, &rp);
		/* ENOENT by name: maybe a memfd object; say so only then */
		if (kret && !(name && kret == -ENOENT)) {
			say_kernel_error(name ? name : gk->dumping, kret, &rp);
			ret = 1;
		}
	}
	bt_nl_close(&nl);
	if (!name) {
		memfd_scan(obj, &rp);
		sort_recs(&rp);
	} else if (!rp.nrecs && (mret = memfd_read(obj, name, &r)) == 0) {
		grown = realloc(rp.recs, sizeof(*grown));
		if (grown) {
			rp.recs = grown;
			rp.recs[rp.nrecs++] = r;
		}
	}
	if (name && !rp.nrecs) {
		/* there, but not usable: say so, as list does (EINVAL: a bad name) */
		if (mret && mret != -ENOENT && mret != -EINVAL)
			memfd_say_unreadable(obj, name, mret);
		else if (kret == -ENOENT)
			say_kernel_error(name, kret, &rp);
		else if (nl_ret)
			fprintf(stderr, "batonctl: no %s named %s on the memfd backend\n",
				what, name);
		ret = 1;
	} else if (!name && nl_ret && nl_ret != -ENOENT && !rp.nrecs) {
		ret = 1;
	}
	/* -j: always an array, [] for a name nobody has (batonctl.rst) */
	if (rp.nrecs || !name || opt.json)
		print_objects(fs, &rp);
	reply_free(&rp);
	return ret;
}

