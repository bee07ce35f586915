// SPDX-License-Identifier: MIT
/*
 * lib/ctl/netlink.c: batonctl's conversation with the generic netlink
 * family "baton" through libnl-genl-3: the family lookup, doit and dumpit
 * requests (and WATCH, whose unicast events follow), the extack message
 * of a failed request, and the attributes of each answer parsed into
 * records by the tables of records.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#include "batonctl.h"

/* ---- attributes into records ---- */

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

/* One peer or pool class (a nest of its own set) into a new sub-record. */
static int parse_sub(struct rec *r, enum ftype type, struct nlattr *a)
{
	struct rec *p = type == FT_PEER ? rec_add_peer(r) : rec_add_class(r);

	if (!p)
		return -ENOMEM;
	return parse_set(type == FT_PEER ? &fs_peer : &fs_class, nla_data(a),
			 nla_len(a), p);
}

/* The type of the repeated attribute a list nest (PEERS, CLASSES) holds. */
static enum ftype item_type(enum ftype list)
{
	return list == FT_PEERS ? FT_PEER : FT_CLASS;
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
		if (f->type == FT_PEER || f->type == FT_CLASS) {
			ret = parse_sub(r, f->type, a);
			if (ret)
				return ret;
		} else if (f->type == FT_PEERS || f->type == FT_CLASSES) {
			nla_for_each_nested(n, a, nrem) {
				const struct field *pf =
					field_of(fs, nla_type(n));

				if (!pf || pf->type != item_type(f->type))
					continue;
				ret = parse_sub(r, pf->type, n);
				if (ret)
					return ret;
			}
		} else {
			parse_value(fs, f, a, r);
		}
	}
	return 0;
}

/* ---- the conversation ---- */

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

/*
 * Connect and resolve the family. -ENOENT: the module is not loaded (or
 * has no netlink family); other negative errnos are failures.
 */
int bt_nl_open(struct nl *nl)
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

void bt_nl_close(struct nl *nl)
{
	if (nl->cb)
		nl_cb_put(nl->cb);
	if (nl->sk)
		nl_socket_free(nl->sk);
}

void reply_init(struct reply *rp, int cmd, const struct fieldset *fs,
		enum obj_kind obj)
{
	memset(rp, 0, sizeof(*rp));
	rp->cmd = cmd;
	rp->fs = fs;
	rp->obj = obj;
}

void reply_free(struct reply *rp)
{
	size_t i;

	for (i = 0; i < rp->nrecs; i++)
		rec_free(&rp->recs[i]);
	free(rp->recs);
	rp->recs = NULL;
	rp->nrecs = 0;
}

/* The flag that makes a dump of @cmd cover every IPC namespace. */
static int all_ns_attr(int cmd)
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
 * Send @cmd (a dump when @name is NULL, with @name_attr otherwise; with
 * an ACK requested when @req has REQ_ACK, and a dump of every IPC
 * namespace when it has REQ_ALL_NS) and collect the answer in @rp.
 * Returns 0 or a negative errno; the kernel's own errno and message are
 * in @rp.
 */
int bt_nl_request(struct nl *nl, int cmd, int name_attr, const char *name,
		  unsigned int req, struct reply *rp)
{
	bool ack = req & REQ_ACK;
	int flags = (name || ack) ? 0 : NLM_F_DUMP;
	struct nl_msg *msg = nlmsg_alloc();
	int ret;

	if (!msg)
		return -ENOMEM;
	if (ack)
		flags |= NLM_F_ACK;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0, flags,
			 (uint8_t)cmd, BATON_FAMILY_VERSION) ||
	    (name && nla_put_string(msg, name_attr, name)) ||
	    ((req & REQ_ALL_NS) && nla_put_flag(msg, all_ns_attr(cmd)))) {
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

void say_no_module(const char *what)
{
	fprintf(stderr,
		"batonctl: the baton module is not loaded (no generic netlink family \"%s\"); %s\n",
		BATON_FAMILY_NAME, what);
}

void say_kernel_error(const char *what, int err, const struct reply *rp)
{
	fprintf(stderr, "batonctl: %s: %s", what, strerror(-err));
	if (rp->extack[0])
		fprintf(stderr, " (kernel: %s)", rp->extack);
	fputc('\n', stderr);
}
