// SPDX-License-Identifier: MIT
/*
 * lib/ctl/list.c: batonctl's list, show and epoch: dumps and lookups by
 * name from the module first, then the memfd backend, sorted by name and
 * printed as a table, as "label value" lines or as JSON.
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
	return r->obj == OBJ_RING ? BATON_A_RING_IPC_NS : BATON_A_EPOCH_IPC_NS;
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
	int unl = r->obj == OBJ_RING ? BATON_A_RING_UNLINKED :
				       BATON_A_EPOCH_UNLINKED;

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
	else
		printf("%-5s %-5s %-28s %10s %10s %5s %6s %8s %6s %-4s %s\n",
		       "Type", "Back", "Name", "Global", "Frontier", "Parts",
		       "Active", "Pending", "Uid", "Mode", "Flags");
}

/*
 * Text: rings under the ring heading, then a blank line and domains under
 * theirs; a kind with no objects prints nothing, so an idle system prints
 * nothing at all (as `ip link show type vxlan` does with no such links).
 */
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
	if (rings->nrecs)
		list_heading(OBJ_RING);
	for (i = 0; i < rings->nrecs; i++)
		list_text_ring(&rings->recs[i]);
	if (rings->nrecs && doms->nrecs)
		putchar('\n');
	if (doms->nrecs)
		list_heading(OBJ_EPOCH);
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
	ret = bt_nl_request(nl, cmd, 0, NULL, opt.all_ns ? REQ_ALL_NS : 0, rp);
	if (ret)
		say_kernel_error(what, ret, rp);
	return ret;
}

int cmd_list(void)
{
	struct reply rings, doms;
	struct nl nl;
	int nl_ret, ret = 0;

	reply_init(&rings, BATON_CMD_RING_GET, &fs_ring, OBJ_RING);
	reply_init(&doms, BATON_CMD_EPOCH_GET, &fs_epoch, OBJ_EPOCH);
	nl_ret = bt_nl_open(&nl);
	if (nl_ret == -ENOENT)
		say_no_module("the memfd backend's rings and domains are listed below");
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
	/* No module is an answer: the memfd backend's, maybe empty. */
	if (nl_ret && nl_ret != -ENOENT && !rings.nrecs && !doms.nrecs)
		ret = 1;
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
 * module first; the memfd backend when the module has no such name. A
 * name neither has is exit 1 with a message on stderr; a dump that finds
 * nothing is an empty answer, exit 0, as in iproute2.
 */
int cmd_get(enum obj_kind obj, const char *name)
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
		kret = bt_nl_request(&nl, cmd, attr, name,
				     !name && opt.all_ns ? REQ_ALL_NS : 0, &rp);
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

