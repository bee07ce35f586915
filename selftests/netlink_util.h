/* SPDX-License-Identifier: GPL-2.0 */
/*
 * selftests/netlink_util.h: what the netlink_* selftests share on top of
 * common.h: a raw generic netlink client for the "baton" family (no
 * libnl, so a test controls every byte and a batonctl bug cannot hide a
 * kernel one), attribute parsing into flat records, extack extraction,
 * event watching, and running the batonctl helper with its output
 * captured.
 *
 * Functions here return 0 or a negative errno and never ASSERT, so
 * forked children can use them too.
 */
#ifndef BATON_SELFTEST_NETLINK_UTIL_H
#define BATON_SELFTEST_NETLINK_UTIL_H

#include "common.h"

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#include <linux/baton_nl.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define NLT_BUF		65536
#define NLT_PEERS	64
#define NLT_ATTRS	64

/* One socket, its family id and sequence counter. */
struct nlt {
	int fd;
	uint16_t family;
	uint32_t seq;
};

/* The kernel's answer to a request that failed. */
struct nlt_err {
	int error;			/* negative errno, 0 for an ack */
	bool has_tlvs;			/* NLM_F_ACK_TLVS */
	char msg[256];			/* NLMSGERR_ATTR_MSG or "" */
	uint32_t miss_type;		/* NLMSGERR_ATTR_MISS_TYPE or 0 */
};

/* A flat view of one attribute set: numbers by attribute type. */
struct nlt_rec {
	uint64_t present;
	uint64_t v[NLT_ATTRS];
	char name[BATON_NAME_MAX + 8];
};

/* One ring, domain, pool or event, with its peers (and a pool's classes). */
struct nlt_obj {
	struct nlt_rec a;
	int npeers;
	struct nlt_rec peers[NLT_PEERS];
	int nclasses;
	struct nlt_rec classes[BATON_POOL_CLASSES_MAX];
};

static inline bool nlt_has(const struct nlt_rec *r, int type)
{
	return type < NLT_ATTRS && (r->present & (1ULL << type));
}

/* ---- message building ---- */

struct nlt_msg {
	union {
		struct nlmsghdr nh;
		char b[4096];
	};
	size_t len;
};

static inline void nlt_msg_init(struct nlt_msg *m, uint16_t type,
				uint16_t flags, uint8_t cmd)
{
	struct genlmsghdr *g;

	memset(m, 0, sizeof(*m));
	m->nh.nlmsg_type = type;
	m->nh.nlmsg_flags = NLM_F_REQUEST | flags;
	g = (struct genlmsghdr *)(m->b + NLMSG_HDRLEN);
	g->cmd = cmd;
	g->version = BATON_FAMILY_VERSION;
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
}

/* Append an attribute; @len bytes of @data, padded. */
static inline void nlt_put(struct nlt_msg *m, uint16_t type, const void *data,
			   size_t len)
{
	struct nlattr *a = (struct nlattr *)(m->b + m->len);

	if (m->len + NLA_HDRLEN + NLA_ALIGN(len) > sizeof(m->b))
		return;
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	if (len)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	memset((char *)a + NLA_HDRLEN + len, 0, NLA_ALIGN(len) - len);
	m->len += NLA_HDRLEN + NLA_ALIGN(len);
}

static inline void nlt_put_str(struct nlt_msg *m, uint16_t type,
			       const char *s)
{
	nlt_put(m, type, s, strlen(s) + 1);
}

/* Send @m (its length fixed up here unless @raw_len is non-zero). */
static inline int nlt_send_raw(struct nlt *s, struct nlt_msg *m,
			       size_t raw_len)
{
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	size_t len = raw_len ? raw_len : m->len;

	m->nh.nlmsg_seq = ++s->seq;
	if (!raw_len)
		m->nh.nlmsg_len = (uint32_t)m->len;
	if (sendto(s->fd, m->b, len, 0, (struct sockaddr *)&to,
		   sizeof(to)) != (ssize_t)len)
		return -errno;
	return 0;
}

static inline int nlt_send(struct nlt *s, struct nlt_msg *m)
{
	return nlt_send_raw(s, m, 0);
}

/* One datagram, waiting at most @timeout_ms; its length or -errno. */
static inline ssize_t nlt_recv(struct nlt *s, char *buf, size_t len,
			       int timeout_ms)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN };
	ssize_t n;
	int r;

	do {
		r = poll(&p, 1, timeout_ms);
	} while (r < 0 && errno == EINTR);
	if (r == 0)
		return -ETIMEDOUT;
	if (r < 0)
		return -errno;
	n = recv(s->fd, buf, len, 0);
	return n < 0 ? -errno : n;
}

/* ---- parsing ---- */

/* Is there a whole attribute at @a within @len bytes? */
static inline bool nlt_attr_ok(const struct nlattr *a, int len)
{
	return len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	       a->nla_len <= len;
}

static inline const struct nlattr *nlt_attr_next(const struct nlattr *a,
						  int *len)
{
	*len -= NLA_ALIGN(a->nla_len);
	return (const struct nlattr *)((const char *)a +
				       NLA_ALIGN(a->nla_len));
}

static inline const void *nlt_attr_data(const struct nlattr *a)
{
	return (const char *)a + NLA_HDRLEN;
}

/*
 * Flat parse: a 4-byte attribute is a u32, an 8-byte one a u64, an
 * empty one a flag, @name_type a string; @peers_type a nest of nests.
 */
static inline void nlt_parse_rec(const struct nlattr *a, int len,
				 int name_type, struct nlt_rec *r)
{
	memset(r, 0, sizeof(*r));
	for (; nlt_attr_ok(a, len); a = nlt_attr_next(a, &len)) {
		int type = a->nla_type & NLA_TYPE_MASK;
		int alen = a->nla_len - NLA_HDRLEN;
		const char *d = nlt_attr_data(a);

		if (type < NLT_ATTRS) {
			if (type == name_type && alen > 0) {
				snprintf(r->name, sizeof(r->name), "%.*s",
					 alen, d);
				r->present |= 1ULL << type;
			} else if (alen == 4) {
				uint32_t x;

				memcpy(&x, d, 4);
				r->v[type] = x;
				r->present |= 1ULL << type;
			} else if (alen == 8) {
				memcpy(&r->v[type], d, 8);
				r->present |= 1ULL << type;
			} else if (alen == 0) {
				r->v[type] = 1;
				r->present |= 1ULL << type;
			}
		}
	}
}

/* The nests inside the list nest @list_type (PEERS, CLASSES); how many. */
static inline int nlt_parse_list(const struct nlmsghdr *h, int list_type,
				 struct nlt_rec *out, int max)
{
	const struct nlattr *a = (const struct nlattr *)
		((const char *)NLMSG_DATA(h) + GENL_HDRLEN);
	int len = (int)h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, n = 0;

	for (; nlt_attr_ok(a, len); a = nlt_attr_next(a, &len)) {
		const struct nlattr *p = nlt_attr_data(a);
		int plen = a->nla_len - NLA_HDRLEN;

		if ((a->nla_type & NLA_TYPE_MASK) != list_type)
			continue;
		for (; nlt_attr_ok(p, plen) && n < max;
		     p = nlt_attr_next(p, &plen))
			nlt_parse_rec(nlt_attr_data(p), p->nla_len - NLA_HDRLEN,
				      -1, &out[n++]);
	}
	return n;
}

static inline void nlt_parse_obj(const struct nlmsghdr *h, int name_type,
				 int peers_type, struct nlt_obj *o)
{
	const struct nlattr *a = (const struct nlattr *)
		((const char *)NLMSG_DATA(h) + GENL_HDRLEN);
	int len = (int)h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;

	nlt_parse_rec(a, len, name_type, &o->a);
	o->npeers = nlt_parse_list(h, peers_type, o->peers, NLT_PEERS);
	o->nclasses = 0;
}

/* NLMSG_ERROR: the errno and the extack TLVs (we asked for CAP_ACK). */
static inline void nlt_parse_err(const struct nlmsghdr *h, struct nlt_err *e)
{
	const struct nlmsgerr *me = NLMSG_DATA(h);
	size_t echo = 0, off;
	const struct nlattr *a;
	int len;

	memset(e, 0, sizeof(*e));
	if (h->nlmsg_len < NLMSG_HDRLEN + sizeof(*me)) {
		e->error = -EBADMSG;
		return;
	}
	e->error = me->error;
	e->has_tlvs = h->nlmsg_flags & NLM_F_ACK_TLVS;
	if (!e->has_tlvs)
		return;
	if (!(h->nlmsg_flags & NLM_F_CAPPED) &&
	    me->msg.nlmsg_len > NLMSG_HDRLEN)
		echo = me->msg.nlmsg_len - NLMSG_HDRLEN;
	off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(*me) + echo);
	if (off >= h->nlmsg_len)
		return;
	a = (const struct nlattr *)((const char *)h + off);
	len = (int)(h->nlmsg_len - off);
	for (; nlt_attr_ok(a, len); a = nlt_attr_next(a, &len)) {
		const char *d = nlt_attr_data(a);
		int alen = a->nla_len - NLA_HDRLEN;

		if (a->nla_type == NLMSGERR_ATTR_MSG && alen > 0)
			snprintf(e->msg, sizeof(e->msg), "%.*s", alen, d);
		else if (a->nla_type == NLMSGERR_ATTR_MISS_TYPE && alen == 4)
			memcpy(&e->miss_type, d, 4);
	}
}

/* ---- the socket ---- */

static inline int nlt_socket(struct nlt *s)
{
	struct sockaddr_nl me = { .nl_family = AF_NETLINK };
	int one = 1;

	memset(s, 0, sizeof(*s));
	s->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (s->fd < 0)
		return -errno;
	if (bind(s->fd, (struct sockaddr *)&me, sizeof(me)))
		return -errno;
	setsockopt(s->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(s->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	return 0;
}

static inline void nlt_close(struct nlt *s)
{
	if (s->fd > 0)
		close(s->fd);
	s->fd = -1;
}

/*
 * A socket bound to the port id @portid (not the kernel's choice), with
 * the family id @family already known: the churn tests reuse port ids.
 * 0, or -errno (-EADDRINUSE while another socket holds it).
 */
static inline int nlt_socket_at(struct nlt *s, uint32_t portid,
				uint16_t family)
{
	struct sockaddr_nl me = { .nl_family = AF_NETLINK, .nl_pid = portid };
	int one = 1;

	memset(s, 0, sizeof(*s));
	s->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (s->fd < 0)
		return -errno;
	setsockopt(s->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(s->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	s->family = family;
	return bind(s->fd, (struct sockaddr *)&me, sizeof(me)) ? -errno : 0;
}

/* Pass @fd over the unix socket @via (SCM_RIGHTS); 0 or -errno. */
static inline int nlt_send_fd(int via, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'f';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(via, &mh, 0) == 1 ? 0 : -errno;
}

/* Receive a descriptor sent by nlt_send_fd(); it, or -errno. */
static inline int nlt_recv_fd(int via)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(via, &mh, MSG_CMSG_CLOEXEC) != 1)
		return -EPROTO;
	c = CMSG_FIRSTHDR(&mh);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* Open and resolve "baton": 0, -ENOENT without the family, -errno. */
static inline int nlt_open(struct nlt *s)
{
	static char buf[NLT_BUF];
	struct nlmsghdr *h;
	struct nlt_msg m;
	ssize_t n;
	int ret = nlt_socket(s);

	if (ret)
		return ret;
	nlt_msg_init(&m, GENL_ID_CTRL, 0, CTRL_CMD_GETFAMILY);
	((struct genlmsghdr *)(m.b + NLMSG_HDRLEN))->version = 1;
	nlt_put_str(&m, CTRL_ATTR_FAMILY_NAME, BATON_FAMILY_NAME);
	ret = nlt_send(s, &m);
	if (ret)
		return ret;
	n = nlt_recv(s, buf, sizeof(buf), 5000);
	if (n < 0)
		return (int)n;
	for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
		const struct nlattr *a = (const struct nlattr *)
			((const char *)NLMSG_DATA(h) + GENL_HDRLEN);
		int len = (int)h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;

		if (h->nlmsg_type == NLMSG_ERROR) {
			struct nlt_err e;

			nlt_parse_err(h, &e);
			return e.error ? e.error : -EPROTO;
		}
		/* CTRL_ATTR_FAMILY_ID is a u16 */
		for (; nlt_attr_ok(a, len); a = nlt_attr_next(a, &len)) {
			if (a->nla_type == CTRL_ATTR_FAMILY_ID &&
			    a->nla_len >= NLA_HDRLEN + 2) {
				memcpy(&s->family, nlt_attr_data(a), 2);
				return 0;
			}
		}
	}
	return -EPROTO;
}

/* NLMSG_DONE carries 0, or the errno of a dump that failed half way. */
static inline int nlt_done_error(const struct nlmsghdr *h)
{
	int err = 0;

	if (NLMSG_PAYLOAD(h, 0) >= sizeof(err))
		memcpy(&err, NLMSG_DATA(h), sizeof(err));
	return err;
}

/*
 * Wait for the answer to the last request: the first NLMSG_ERROR (an ack
 * is error 0) fills @e and ends it; so does NLMSG_DONE. Data messages go
 * to @fn (may be NULL). 0 when the answer ended with DONE or an ack, the
 * kernel's negative errno otherwise.
 */
static inline int nlt_collect(struct nlt *s, struct nlt_err *e,
			      void (*fn)(const struct nlmsghdr *h, void *arg),
			      void *arg)
{
	static char buf[NLT_BUF];
	struct nlt_err tmp;

	if (!e)
		e = &tmp;
	memset(e, 0, sizeof(*e));
	for (;;) {
		ssize_t n = nlt_recv(s, buf, sizeof(buf), 10000);
		struct nlmsghdr *h;

		if (n < 0)
			return (int)n;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != s->seq)
				continue;	/* an event, or stale */
			if (h->nlmsg_type == NLMSG_ERROR) {
				nlt_parse_err(h, e);
				return e->error;
			}
			if (h->nlmsg_type == NLMSG_DONE) {
				e->error = nlt_done_error(h);
				return e->error;
			}
			if (fn)
				fn(h, arg);
		}
	}
}

/* ---- requests ---- */

/* Send a request without attributes and wait for its ack. */
static inline int nlt_simple(struct nlt *s, uint8_t cmd, struct nlt_err *e)
{
	struct nlt_msg m;
	int ret;

	nlt_msg_init(&m, s->family, NLM_F_ACK, cmd);
	ret = nlt_send(s, &m);
	return ret ? ret : nlt_collect(s, e, NULL, NULL);
}

static inline int nlt_name_attr(int cmd)
{
	switch (cmd) {
	case BATON_CMD_RING_GET:
		return BATON_A_RING_NAME;
	case BATON_CMD_EPOCH_GET:
		return BATON_A_EPOCH_NAME;
	default:
		return BATON_A_POOL_NAME;
	}
}

static inline int nlt_peers_attr(int cmd)
{
	switch (cmd) {
	case BATON_CMD_RING_GET:
		return BATON_A_RING_PEERS;
	case BATON_CMD_EPOCH_GET:
		return BATON_A_EPOCH_PEERS;
	default:
		return BATON_A_POOL_PEERS;
	}
}

static inline int nlt_unlinked_attr(int cmd)
{
	switch (cmd) {
	case BATON_CMD_RING_GET:
		return BATON_A_RING_UNLINKED;
	case BATON_CMD_EPOCH_GET:
		return BATON_A_EPOCH_UNLINKED;
	default:
		return BATON_A_POOL_UNLINKED;
	}
}

/* One answer of @cmd: attributes, peers and, for a pool, its classes. */
static inline void nlt_parse_cmd(const struct nlmsghdr *h, int cmd,
				 struct nlt_obj *o)
{
	nlt_parse_obj(h, nlt_name_attr(cmd), nlt_peers_attr(cmd), o);
	if (cmd == BATON_CMD_POOL_GET)
		o->nclasses = nlt_parse_list(h, BATON_A_POOL_CLASSES,
					     o->classes,
					     BATON_POOL_CLASSES_MAX);
}

struct nlt_get_ctx {
	int cmd;
	struct nlt_obj *out;
	int got;
};

static inline void nlt_get_one(const struct nlmsghdr *h, void *arg)
{
	struct nlt_get_ctx *c = arg;

	if (c->got++ == 0)
		nlt_parse_cmd(h, c->cmd, c->out);
}

/* doit by name (with an ack, so the answer ends clearly). */
static inline int nlt_get(struct nlt *s, int cmd, const char *name,
			  struct nlt_obj *out, struct nlt_err *e)
{
	struct nlt_get_ctx c = { cmd, out, 0 };
	struct nlt_msg m;
	int ret;

	nlt_msg_init(&m, s->family, NLM_F_ACK, (uint8_t)cmd);
	nlt_put_str(&m, (uint16_t)nlt_name_attr(cmd), name);
	ret = nlt_send(s, &m);
	if (ret)
		return ret;
	ret = nlt_collect(s, e, nlt_get_one, &c);
	if (!ret && c.got != 1)
		return -EPROTO;
	return ret;
}

struct nlt_dump_ctx {
	int cmd;
	const char *prefix;
	struct nlt_obj *objs;		/* may be NULL: count only */
	int max, n, total;
	bool unlinked_too;
};

static inline void nlt_dump_one(const struct nlmsghdr *h, void *arg)
{
	struct nlt_dump_ctx *c = arg;
	static struct nlt_obj o;

	nlt_parse_cmd(h, c->cmd, &o);
	c->total++;
	if (strncmp(o.a.name, c->prefix, strlen(c->prefix)))
		return;
	if (!c->unlinked_too && nlt_has(&o.a, nlt_unlinked_attr(c->cmd)))
		return;
	if (c->objs && c->n < c->max)
		c->objs[c->n] = o;
	c->n++;
}

/*
 * Dump @cmd and keep what carries @prefix (names that are still linked).
 * The count, or a negative errno; @objs (up to @max) may be NULL.
 */
static inline int nlt_dump(struct nlt *s, int cmd, const char *prefix,
			   struct nlt_obj *objs, int max)
{
	struct nlt_dump_ctx c = { cmd, prefix, objs, max, 0, 0, false };
	struct nlt_msg m;
	int ret;

	nlt_msg_init(&m, s->family, NLM_F_DUMP, (uint8_t)cmd);
	ret = nlt_send(s, &m);
	if (ret)
		return ret;
	ret = nlt_collect(s, NULL, nlt_dump_one, &c);
	return ret ? ret : c.n;
}

/* Subscribe to events and wait for the ack. */
static inline int nlt_watch(struct nlt *s, struct nlt_err *e)
{
	return nlt_simple(s, BATON_CMD_WATCH, e);
}

/*
 * Wait up to @timeout_ms for an event of @type about @name (NULL: any
 * name). Events that do not match go to @other (may be NULL) and are
 * otherwise dropped. 0 and *@ev, or -ETIMEDOUT.
 */
static inline int nlt_wait_event(struct nlt *s, uint32_t type,
				 const char *name, long timeout_ms,
				 struct nlt_obj *ev,
				 void (*other)(const struct nlt_obj *ev,
					       void *arg),
				 void *arg)
{
	static char buf[NLT_BUF];
	int64_t end = bt_now_ns() + timeout_ms * BT_MSEC;

	for (;;) {
		int64_t left = (end - bt_now_ns()) / BT_MSEC;
		struct nlmsghdr *h;
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		n = nlt_recv(s, buf, sizeof(buf), (int)left);
		if (n == -ETIMEDOUT)
			return -ETIMEDOUT;
		if (n < 0)
			return (int)n;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, n);
		     h = NLMSG_NEXT(h, n)) {
			struct genlmsghdr *g = NLMSG_DATA(h);

			if (h->nlmsg_type != s->family ||
			    g->cmd != BATON_CMD_EVENT)
				continue;
			nlt_parse_obj(h, BATON_A_EVENT_NAME, -1, ev);
			if (ev->a.v[BATON_A_EVENT_TYPE] == type &&
			    (!name || !strcmp(ev->a.name, name)))
				return 0;
			if (other)
				other(ev, arg);
		}
	}
}

/*
 * For a reader thread that tallies events: one datagram of @s (waiting at
 * most @timeout_ms), each of the family's messages in it handed to @fn.
 * Returns what nlt_recv() did. The buffer is the calling thread's.
 */
static inline ssize_t nlt_read_events(struct nlt *s, int timeout_ms,
				      void (*fn)(const struct nlmsghdr *h,
						 void *arg),
				      void *arg)
{
	static __thread char buf[NLT_BUF];
	ssize_t n = nlt_recv(s, buf, sizeof(buf), timeout_ms), left = n;
	struct nlmsghdr *h;

	for (h = (struct nlmsghdr *)buf; left > 0 && NLMSG_OK(h, left);
	     h = NLMSG_NEXT(h, left))
		if (h->nlmsg_type == s->family)
			fn(h, arg);
	return n;
}

/* ---- batonctl ---- */

/* The helper next to this binary, else where the VM image keeps it. */
static inline int nlt_batonctl_path(char *buf, size_t len)
{
	if (bt_helper_path(buf, len, "batonctl") == 0)
		return 0;
	snprintf(buf, len, "/selftests/helpers/batonctl");
	return access(buf, X_OK) ? -ENOENT : 0;
}

struct nlt_run {
	pid_t pid;
	int out;			/* its stdout */
	int err;			/* its stderr */
};

/* Start batonctl with @argv (argv[0] ignored); 0 or -errno. */
static inline int nlt_batonctl_start(char *const argv[], struct nlt_run *r)
{
	char path[PATH_MAX];
	int o[2], e[2];

	if (nlt_batonctl_path(path, sizeof(path)))
		return -ENOENT;
	if (pipe2(o, O_CLOEXEC) || pipe2(e, O_CLOEXEC))
		return -errno;
	r->pid = fork();
	if (r->pid < 0)
		return -errno;
	if (r->pid == 0) {
		dup2(o[1], 1);
		dup2(e[1], 2);
		execv(path, argv);
		_exit(127);
	}
	close(o[1]);
	close(e[1]);
	r->out = o[0];
	r->err = e[0];
	return 0;
}

/* Read @fd to EOF into a malloc'ed, NUL-terminated string. */
static inline char *nlt_slurp(int fd)
{
	size_t len = 0, cap = 4096;
	char *s = malloc(cap);
	ssize_t n;

	if (!s)
		return NULL;
	for (;;) {
		if (len + 1 >= cap) {
			char *t = realloc(s, cap * 2);

			if (!t)
				break;
			s = t;
			cap *= 2;
		}
		n = read(fd, s + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	s[len] = '\0';
	return s;
}

/*
 * Run batonctl to completion: its exit status (128 + signal if killed),
 * stdout and stderr in malloc'ed strings (the caller frees).
 */
static inline int nlt_batonctl(char *const argv[], char **out, char **err)
{
	struct nlt_run r;
	int ret = nlt_batonctl_start(argv, &r);

	if (ret)
		return ret;
	/* small outputs: stdout fits the pipe while stderr waits */
	*out = nlt_slurp(r.out);
	*err = nlt_slurp(r.err);
	close(r.out);
	close(r.err);
	return bt_wait_timeout(r.pid, 30000);
}

#endif /* BATON_SELFTEST_NETLINK_UTIL_H */
