// SPDX-License-Identifier: GPL-2.0
/*
 * netlink_family: the kernel side of the generic netlink family "baton",
 * spoken over raw netlink sockets (no libnl, so a library bug cannot hide
 * a kernel one).
 *
 * Owns: resolving the family through nlctrl; RING_GET and EPOCH_GET as
 * doit and dump against objects this test made, with values it set
 * (indices written through the producer's own mapping); the strict
 * policies (missing, oversized, unterminated and unknown attributes get
 * EINVAL with an extack message); ENOENT for names that do not exist or
 * that the caller may not see; WATCH and the events it brings (created,
 * unlinked, destroyed, peer died), and that an unprivileged watcher is
 * not told about a root-only ring.
 *
 * The broader VM tests of the family and of batonctl live in the other
 * selftests/netlink_*.c files.
 */
#include "mpsc_common.h"

#include <grp.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#include <linux/baton_nl.h>

#define NOBODY		65534
#define NL_BUFSZ	65536

struct nl {
	int fd;
	uint16_t family;
	uint32_t seq;
};

struct nl_req {
	struct nlmsghdr n;
	struct genlmsghdr g;
	char attrs[512];
};

/* What came back for one request: the reply (if any) and the ack. */
struct nl_answer {
	int err;			/* positive errno, 0 for success */
	char msg[256];			/* NLMSGERR_ATTR_MSG, or "" */
	uint32_t miss_type;		/* NLMSGERR_ATTR_MISS_TYPE, or 0 */
	size_t len;			/* bytes of the reply in buf */
	char buf[NL_BUFSZ];		/* the first reply message */
};

static int nl_open(struct nl *nl)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 5 };
	int one = 1;

	nl->seq = 1;
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl->fd < 0)
		return -1;
	if (setsockopt(nl->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one,
		       sizeof(one)) ||
	    setsockopt(nl->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one,
		       sizeof(one)) ||
	    setsockopt(nl->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	return 0;
}

static void req_init(struct nl_req *r, uint16_t type, uint8_t cmd,
		     uint16_t flags)
{
	memset(r, 0, sizeof(*r));
	r->n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r->n.nlmsg_type = type;
	r->n.nlmsg_flags = NLM_F_REQUEST | flags;
	r->g.cmd = cmd;
	r->g.version = 1;
}

static void req_put(struct nl_req *r, uint16_t type, const void *data,
		    size_t len)
{
	struct nlattr *a = (struct nlattr *)((char *)r +
					     NLMSG_ALIGN(r->n.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->n.nlmsg_len = NLMSG_ALIGN(r->n.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static void req_put_str(struct nl_req *r, uint16_t type, const char *s)
{
	req_put(r, type, s, strlen(s) + 1);
}

static int nl_send(struct nl *nl, struct nl_req *r)
{
	r->n.nlmsg_seq = nl->seq++;
	return send(nl->fd, r, r->n.nlmsg_len, 0) == (ssize_t)r->n.nlmsg_len ?
	       0 : -1;
}

/* The attribute @type among the attributes at @p, @len bytes, or NULL. */
static struct nlattr *attr_find(void *p, size_t len, uint16_t type)
{
	struct nlattr *a = p;

	while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	       a->nla_len <= len) {
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
		len -= NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
	return NULL;
}

#define ATTR_DATA(a)	((void *)((char *)(a) + NLA_HDRLEN))
#define ATTR_LEN(a)	((a)->nla_len - NLA_HDRLEN)

/* Attributes of a generic netlink message. */
#define GENL_ATTRS(n)	((void *)((char *)NLMSG_DATA(n) + GENL_HDRLEN))
#define GENL_ATTRLEN(n)	((n)->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN))

static struct nlattr *msg_attr(struct nlmsghdr *n, uint16_t type)
{
	return attr_find(GENL_ATTRS(n), GENL_ATTRLEN(n), type);
}

/* u32 or u64 attribute; @def when absent. */
static uint64_t msg_uint(struct nlmsghdr *n, uint16_t type, uint64_t def)
{
	struct nlattr *a = msg_attr(n, type);
	uint32_t v32;
	uint64_t v64;

	if (!a)
		return def;
	if (ATTR_LEN(a) == 8) {
		memcpy(&v64, ATTR_DATA(a), 8);
		return v64;
	}
	memcpy(&v32, ATTR_DATA(a), 4);
	return v32;
}

static void parse_ack(struct nlmsghdr *n, struct nl_answer *ans)
{
	struct nlmsgerr *e = NLMSG_DATA(n);
	size_t off = sizeof(*e), len;
	struct nlattr *a;

	ans->err = -e->error;
	if (!(n->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(n->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(e->msg);
	len = n->nlmsg_len - NLMSG_HDRLEN - off;
	a = attr_find((char *)e + off, len, NLMSGERR_ATTR_MSG);
	if (a)
		snprintf(ans->msg, sizeof(ans->msg), "%s",
			 (char *)ATTR_DATA(a));
	a = attr_find((char *)e + off, len, NLMSGERR_ATTR_MISS_TYPE);
	if (a)
		memcpy(&ans->miss_type, ATTR_DATA(a), 4);
}

/* Send a doit request with NLM_F_ACK and collect its reply and ack. */
static int nl_do(struct nl *nl, struct nl_req *r, struct nl_answer *ans)
{
	static char buf[NL_BUFSZ];
	uint32_t seq = nl->seq;

	memset(ans, 0, offsetof(struct nl_answer, buf));
	r->n.nlmsg_flags |= NLM_F_ACK;
	if (nl_send(nl, r))
		return -1;
	for (;;) {
		ssize_t got = recv(nl->fd, buf, sizeof(buf), 0);
		struct nlmsghdr *n = (struct nlmsghdr *)buf;

		if (got < 0)
			return -1;
		for (; NLMSG_OK(n, got); n = NLMSG_NEXT(n, got)) {
			if (n->nlmsg_seq != seq)
				continue;	/* an event, or stale */
			if (n->nlmsg_type == NLMSG_ERROR) {
				parse_ack(n, ans);
				return 0;
			}
			if (!ans->len && n->nlmsg_len <= sizeof(ans->buf)) {
				memcpy(ans->buf, n, n->nlmsg_len);
				ans->len = n->nlmsg_len;
			}
		}
	}
}

/* nlctrl: the family's id and its "events" group. */
static int nl_resolve(struct nl *nl, uint32_t *events_group)
{
	struct nl_answer *ans = calloc(1, sizeof(*ans));
	struct nlattr *grps, *g;
	struct nl_req r;
	size_t left;
	int ret = -1;

	*events_group = 0;
	req_init(&r, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	req_put_str(&r, CTRL_ATTR_FAMILY_NAME, BATON_FAMILY_NAME);
	if (!ans || nl_do(nl, &r, ans) || ans->err || !ans->len)
		goto out;
	nl->family = msg_uint((struct nlmsghdr *)ans->buf, CTRL_ATTR_FAMILY_ID,
			      0);
	grps = msg_attr((struct nlmsghdr *)ans->buf, CTRL_ATTR_MCAST_GROUPS);
	if (grps) {
		g = ATTR_DATA(grps);
		left = ATTR_LEN(grps);
		while (left >= NLA_HDRLEN && g->nla_len >= NLA_HDRLEN &&
		       g->nla_len <= left) {
			struct nlattr *name = attr_find(ATTR_DATA(g),
							ATTR_LEN(g),
							CTRL_ATTR_MCAST_GRP_NAME);
			struct nlattr *id = attr_find(ATTR_DATA(g), ATTR_LEN(g),
						      CTRL_ATTR_MCAST_GRP_ID);

			if (name && id &&
			    !strcmp(ATTR_DATA(name), BATON_MCGRP_EVENTS))
				memcpy(events_group, ATTR_DATA(id), 4);
			left -= NLA_ALIGN(g->nla_len);
			g = (struct nlattr *)((char *)g + NLA_ALIGN(g->nla_len));
		}
	}
	ret = nl->family ? 0 : -1;
out:
	free(ans);
	return ret;
}

/* A doit of @cmd on @name (NULL: no name attribute). */
static int nl_get(struct nl *nl, uint8_t cmd, uint16_t name_attr,
		  const char *name, struct nl_answer *ans)
{
	struct nl_req r;

	req_init(&r, nl->family, cmd, 0);
	if (name)
		req_put_str(&r, name_attr, name);
	return nl_do(nl, &r, ans);
}

/*
 * Dump @cmd; count the objects named @name among those it lists, and in
 * *@unlinked those of them that carry @unlinked_attr.
 */
static int nl_dump_count_unlinked(struct nl *nl, uint8_t cmd,
				  uint16_t name_attr, const char *name,
				  int *total, uint16_t unlinked_attr,
				  int *unlinked)
{
	static char buf[NL_BUFSZ];
	uint32_t seq = nl->seq;
	struct nl_req r;
	int found = 0;

	*total = 0;
	*unlinked = 0;
	req_init(&r, nl->family, cmd, NLM_F_DUMP);
	if (nl_send(nl, &r))
		return -1;
	for (;;) {
		ssize_t got = recv(nl->fd, buf, sizeof(buf), 0);
		struct nlmsghdr *n = (struct nlmsghdr *)buf;

		if (got < 0)
			return -1;
		for (; NLMSG_OK(n, got); n = NLMSG_NEXT(n, got)) {
			struct nlattr *a;

			if (n->nlmsg_seq != seq)
				continue;
			if (n->nlmsg_type == NLMSG_DONE)
				return found;
			if (n->nlmsg_type == NLMSG_ERROR)
				return -1;
			(*total)++;
			a = msg_attr(n, name_attr);
			if (!a || strcmp(ATTR_DATA(a), name))
				continue;
			found++;
			if (msg_attr(n, unlinked_attr))
				(*unlinked)++;
		}
	}
}

static int nl_dump_count(struct nl *nl, uint8_t cmd, uint16_t name_attr,
			 const char *name, int *total)
{
	int unlinked;

	return nl_dump_count_unlinked(nl, cmd, name_attr, name, total,
				      cmd == BATON_CMD_RING_GET ?
				      BATON_A_RING_UNLINKED :
				      BATON_A_EPOCH_UNLINKED, &unlinked);
}

static int nl_simple(struct nl *nl, uint8_t cmd)
{
	struct nl_answer *ans = calloc(1, sizeof(*ans));
	struct nl_req r;
	int ret;

	req_init(&r, nl->family, cmd, 0);
	ret = !ans || nl_do(nl, &r, ans) ? -1 : ans->err;
	free(ans);
	return ret;
}

/*
 * Wait (5 s at most) for an event of @type about @name; 0 when it came,
 * with its attributes' pid and role stored if asked for. Events of other
 * objects (other tests, other processes) are skipped.
 */
static int nl_wait_event_msg(struct nl *nl, uint32_t type, const char *name,
			     struct nlmsghdr *out, size_t outlen)
{
	static char buf[NL_BUFSZ];
	int64_t until = bt_now_ns() + 5 * BT_NSEC;

	while (bt_now_ns() < until) {
		ssize_t got = recv(nl->fd, buf, sizeof(buf), 0);
		struct nlmsghdr *n = (struct nlmsghdr *)buf;

		if (got < 0 && errno == ENOBUFS)
			continue;	/* an overrun was reported: go on */
		if (got < 0)
			return -1;
		for (; NLMSG_OK(n, got); n = NLMSG_NEXT(n, got)) {
			struct genlmsghdr *g = NLMSG_DATA(n);
			struct nlattr *a;

			if (n->nlmsg_type != nl->family ||
			    g->cmd != BATON_CMD_EVENT)
				continue;
			a = msg_attr(n, BATON_A_EVENT_NAME);
			if (msg_uint(n, BATON_A_EVENT_TYPE, 0) != type || !a ||
			    strcmp(ATTR_DATA(a), name))
				continue;
			if (out && n->nlmsg_len <= outlen)
				memcpy(out, n, n->nlmsg_len);
			return 0;
		}
	}
	return -1;
}

static int nl_wait_event(struct nl *nl, uint32_t type, const char *name,
			 uint32_t *pid, uint32_t *role)
{
	static char buf[NL_BUFSZ];
	struct nlmsghdr *n = (struct nlmsghdr *)buf;

	if (nl_wait_event_msg(nl, type, name, n, sizeof(buf)))
		return -1;
	if (pid)
		*pid = msg_uint(n, BATON_A_EVENT_PID, 0);
	if (role)
		*role = msg_uint(n, BATON_A_EVENT_ROLE, 0);
	return 0;
}

/* The first event of @type, whatever it names, into @name. */
static int nl_next_event_name(struct nl *nl, uint32_t type, char *name,
			      size_t len)
{
	static char buf[NL_BUFSZ];

	for (;;) {
		ssize_t got = recv(nl->fd, buf, sizeof(buf), 0);
		struct nlmsghdr *n = (struct nlmsghdr *)buf;

		if (got < 0)
			return -1;
		for (; NLMSG_OK(n, got); n = NLMSG_NEXT(n, got)) {
			struct nlattr *a = msg_attr(n, BATON_A_EVENT_NAME);

			if (n->nlmsg_type != nl->family || !a ||
			    msg_uint(n, BATON_A_EVENT_TYPE, 0) != type)
				continue;
			snprintf(name, len, "%s", (char *)ATTR_DATA(a));
			return 0;
		}
	}
}

/* Peers of a reply: how many, and how many are (@pid, @role). */
static int count_peers(struct nlmsghdr *n, uint16_t peers_attr,
		       uint32_t pid, uint32_t role, int *matching)
{
	struct nlattr *peers = msg_attr(n, peers_attr), *p;
	size_t left;
	int total = 0;

	*matching = 0;
	if (!peers)
		return 0;
	p = ATTR_DATA(peers);
	left = ATTR_LEN(peers);
	while (left >= NLA_HDRLEN && p->nla_len >= NLA_HDRLEN &&
	       p->nla_len <= left) {
		struct nlattr *a = attr_find(ATTR_DATA(p), ATTR_LEN(p),
					     BATON_A_PEER_PID);
		struct nlattr *r = attr_find(ATTR_DATA(p), ATTR_LEN(p),
					     BATON_A_PEER_ROLE);
		uint32_t v = 0, rv = 0;

		if (a)
			memcpy(&v, ATTR_DATA(a), 4);
		if (r)
			memcpy(&rv, ATTR_DATA(r), 4);
		if (v == pid && rv == role)
			(*matching)++;
		total++;
		left -= NLA_ALIGN(p->nla_len);
		p = (struct nlattr *)((char *)p + NLA_ALIGN(p->nla_len));
	}
	return total;
}

static void bt_unlink_epoch(int dev, const char *name)
{
	struct baton_unlink u;

	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	snprintf(u.name, sizeof(u.name), "%s", name);
	ioctl(dev, BATON_IOC_EPOCH_UNLINK, &u);
}

FIXTURE(raw_family) {
	int dev;
	struct nl nl;
	struct nl_answer *ans;
	uint32_t events_group;
	char name[BATON_NAME_MAX];
	char name2[BATON_NAME_MAX];
	char name3[BATON_NAME_MAX];
};

FIXTURE_SETUP(raw_family)
{
	BT_REQUIRE_DEV();
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	ASSERT_EQ(0, nl_open(&self->nl));
	ASSERT_EQ(0, nl_resolve(&self->nl, &self->events_group));
	self->ans = calloc(1, sizeof(*self->ans));
	ASSERT_NE(NULL, self->ans);
	bt_make_name(self->name, sizeof(self->name), "nl");
	bt_make_name(self->name2, sizeof(self->name2), "nl");
	bt_make_name(self->name3, sizeof(self->name3), "nl");
}

FIXTURE_TEARDOWN(raw_family)
{
	if (self->dev > 0) {
		_test_unlink(self->dev, self->name);
		_test_unlink(self->dev, self->name2);
		_test_unlink(self->dev, self->name3);
		close(self->dev);
	}
	close(self->nl.fd);
	free(self->ans);
}

TEST_F(raw_family, family_resolves)
{
	EXPECT_NE(0, self->nl.family);
	EXPECT_NE(0, self->events_group);
}

TEST_F(raw_family, ring_get_doit_reports_what_was_done)
{
	struct baton_ring_create c;
	struct nlmsghdr *n = (struct nlmsghdr *)self->ans->buf;
	volatile uint64_t *tail;
	void *prod;
	int fd, cfd, mine, total;

	fd = test_ring_create(self->dev, self->name, BATON_ROLE_PRODUCER, 8,
			      64, 0600, &c);
	prod = bt_map(fd, &c.out_off, BT_PROD, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, prod);
	tail = BT_WORD(prod, c.out_off.prod_tail, uint64_t);
	*tail = 5;	/* five messages "published": the kernel only samples */

	ASSERT_EQ(0, nl_get(&self->nl, BATON_CMD_RING_GET, BATON_A_RING_NAME,
			    self->name, self->ans));
	ASSERT_EQ(0, self->ans->err);
	ASSERT_NE(0, self->ans->len);
	EXPECT_STREQ(self->name, ATTR_DATA(msg_attr(n, BATON_A_RING_NAME)));
	EXPECT_EQ(BATON_RING_SPSC, msg_uint(n, BATON_A_RING_KIND, 0));
	EXPECT_EQ(8, msg_uint(n, BATON_A_RING_SLOT_COUNT, 0));
	EXPECT_EQ(64, msg_uint(n, BATON_A_RING_SLOT_SIZE, 0));
	EXPECT_EQ(0600, msg_uint(n, BATON_A_RING_MODE, 0));
	EXPECT_EQ(getuid(), msg_uint(n, BATON_A_RING_UID, ~0ULL));
	EXPECT_EQ(1, msg_uint(n, BATON_A_RING_PRODUCERS, ~0ULL));
	EXPECT_EQ(0, msg_uint(n, BATON_A_RING_CONSUMERS, ~0ULL));
	EXPECT_EQ(0, msg_uint(n, BATON_A_RING_HEAD, ~0ULL));
	EXPECT_EQ(5, msg_uint(n, BATON_A_RING_TAIL, ~0ULL));
	EXPECT_EQ(5, msg_uint(n, BATON_A_RING_OCCUPANCY, ~0ULL));
	EXPECT_EQ(5, msg_uint(n, BATON_A_RING_MSGS_RESERVED, ~0ULL));
	EXPECT_EQ(0, msg_uint(n, BATON_A_RING_SCRIBBLES, ~0ULL));
	EXPECT_EQ(NULL, msg_attr(n, BATON_A_RING_UNLINKED));
	EXPECT_EQ(1, count_peers(n, BATON_A_RING_PEERS, getpid(),
				 BATON_ROLE_PRODUCER, &mine));
	EXPECT_EQ(1, mine);

	/* A consumer attaches: two peers now. */
	cfd = test_ring_open(self->dev, self->name, BATON_ROLE_CONSUMER, NULL);
	/* A scribbled tail: reported as read, occupancy clamped, counted. */
	*tail = 1000;
	ASSERT_EQ(0, nl_get(&self->nl, BATON_CMD_RING_GET, BATON_A_RING_NAME,
			    self->name, self->ans));
	ASSERT_EQ(0, self->ans->err);
	EXPECT_EQ(1, msg_uint(n, BATON_A_RING_CONSUMERS, ~0ULL));
	EXPECT_EQ(1000, msg_uint(n, BATON_A_RING_TAIL, 0));
	EXPECT_EQ(8, msg_uint(n, BATON_A_RING_OCCUPANCY, 0));
	EXPECT_LE(1, msg_uint(n, BATON_A_RING_SCRIBBLES, 0));
	total = count_peers(n, BATON_A_RING_PEERS, getpid(),
			    BATON_ROLE_CONSUMER, &mine);
	EXPECT_EQ(2, total);
	EXPECT_EQ(1, mine);

	/* Unlinked but alive: still reported by nobody's name. */
	test_unlink(self->dev, self->name);
	ASSERT_EQ(0, nl_get(&self->nl, BATON_CMD_RING_GET, BATON_A_RING_NAME,
			    self->name, self->ans));
	EXPECT_EQ(ENOENT, self->ans->err);

	close(cfd);
	bt_unmap(&c.out_off, BT_PROD, prod);
	close(fd);
}

TEST_F(raw_family, ring_dump_lists_each_ring_once)
{
	const char *names[] = { self->name, self->name2, self->name3 };
	int fds[3], i, total, unlinked;

	for (i = 0; i < 3; i++)
		fds[i] = test_ring_create(self->dev, names[i],
					  BATON_ROLE_CONSUMER, 4, 8, 0600,
					  NULL);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(1, nl_dump_count(&self->nl, BATON_CMD_RING_GET,
					   BATON_A_RING_NAME, names[i],
					   &total));
	EXPECT_LE(3, total);

	/* Unlinked but still open: listed, and flagged. */
	test_unlink(self->dev, self->name2);
	EXPECT_EQ(1, nl_dump_count_unlinked(&self->nl, BATON_CMD_RING_GET,
					    BATON_A_RING_NAME, self->name2,
					    &total, BATON_A_RING_UNLINKED,
					    &unlinked));
	EXPECT_EQ(1, unlinked);
	EXPECT_EQ(1, nl_dump_count_unlinked(&self->nl, BATON_CMD_RING_GET,
					    BATON_A_RING_NAME, self->name3,
					    &total, BATON_A_RING_UNLINKED,
					    &unlinked));
	EXPECT_EQ(0, unlinked);
	/* Freed: gone from the dump. */
	close(fds[1]);
	EXPECT_EQ(0, nl_dump_count(&self->nl, BATON_CMD_RING_GET,
				   BATON_A_RING_NAME, self->name2, &total));
	close(fds[0]);
	close(fds[2]);
}

TEST_F(raw_family, missing_name_is_einval_with_extack)
{
	ASSERT_EQ(0, nl_get(&self->nl, BATON_CMD_RING_GET, 0, NULL,
			    self->ans));
	EXPECT_EQ(EINVAL, self->ans->err);
	EXPECT_NE(0, strlen(self->ans->msg));
	EXPECT_EQ(BATON_A_RING_NAME, self->ans->miss_type);
	TH_LOG("ring: %s", self->ans->msg);

	ASSERT_EQ(0, nl_get(&self->nl, BATON_CMD_EPOCH_GET, 0, NULL,
			    self->ans));
	EXPECT_EQ(EINVAL, self->ans->err);
	EXPECT_NE(0, strlen(self->ans->msg));
	EXPECT_EQ(BATON_A_EPOCH_NAME, self->ans->miss_type);
}

TEST_F(raw_family, oversized_or_unterminated_name_is_einval_with_extack)
{
	char big[BATON_NAME_MAX + 1];
	struct nl_req r;

	memset(big, 'a', BATON_NAME_MAX);
	big[BATON_NAME_MAX] = '\0';	/* 64 bytes before the NUL */
	ASSERT_EQ(0, nl_get(&self->nl, BATON_CMD_RING_GET, BATON_A_RING_NAME,
			    big, self->ans));
	EXPECT_EQ(EINVAL, self->ans->err);
	EXPECT_NE(0, strlen(self->ans->msg));
	TH_LOG("oversized: %s", self->ans->msg);

	/* No NUL at all. */
	req_init(&r, self->nl.family, BATON_CMD_EPOCH_GET, 0);
	req_put(&r, BATON_A_EPOCH_NAME, "abc", 3);
	ASSERT_EQ(0, nl_do(&self->nl, &r, self->ans));
	EXPECT_EQ(EINVAL, self->ans->err);
	EXPECT_NE(0, strlen(self->ans->msg));

	/* Bytes outside the name alphabet. */
	ASSERT_EQ(0, nl_get(&self->nl, BATON_CMD_RING_GET, BATON_A_RING_NAME,
			    "a/b", self->ans));
	EXPECT_EQ(EINVAL, self->ans->err);
	EXPECT_NE(0, strlen(self->ans->msg));
}

TEST_F(raw_family, unknown_attributes_are_rejected)
{
	uint32_t v = 1;
	struct nl_req r;

	/* An attribute the request policy does not know. */
	req_init(&r, self->nl.family, BATON_CMD_RING_GET, 0);
	req_put_str(&r, BATON_A_RING_NAME, "x");
	req_put(&r, BATON_A_RING_SLOT_COUNT, &v, sizeof(v));
	ASSERT_EQ(0, nl_do(&self->nl, &r, self->ans));
	EXPECT_EQ(EINVAL, self->ans->err);
	EXPECT_NE(0, strlen(self->ans->msg));

	/* WATCH takes no attribute at all. */
	req_init(&r, self->nl.family, BATON_CMD_WATCH, 0);
	req_put(&r, 1, &v, sizeof(v));
	ASSERT_EQ(0, nl_do(&self->nl, &r, self->ans));
	EXPECT_EQ(EINVAL, self->ans->err);
}

TEST_F(raw_family, absent_name_is_enoent)
{
	ASSERT_EQ(0, nl_get(&self->nl, BATON_CMD_RING_GET, BATON_A_RING_NAME,
			    self->name, self->ans));
	EXPECT_EQ(ENOENT, self->ans->err);
	ASSERT_EQ(0, nl_get(&self->nl, BATON_CMD_EPOCH_GET,
			    BATON_A_EPOCH_NAME, self->name, self->ans));
	EXPECT_EQ(ENOENT, self->ans->err);
}

TEST_F(raw_family, watch_sees_ring_created_unlinked_destroyed)
{
	int fd;

	ASSERT_EQ(0, nl_simple(&self->nl, BATON_CMD_WATCH));
	/* Idempotent. */
	ASSERT_EQ(0, nl_simple(&self->nl, BATON_CMD_WATCH));

	fd = test_ring_create(self->dev, self->name, BATON_ROLE_PRODUCER, 4,
			      8, 0600, NULL);
	EXPECT_EQ(0, nl_wait_event(&self->nl, BATON_EVENT_RING_CREATED,
				   self->name, NULL, NULL));
	test_unlink(self->dev, self->name);
	EXPECT_EQ(0, nl_wait_event(&self->nl, BATON_EVENT_RING_UNLINKED,
				   self->name, NULL, NULL));
	close(fd);
	EXPECT_EQ(0, nl_wait_event(&self->nl, BATON_EVENT_RING_DESTROYED,
				   self->name, NULL, NULL));

	EXPECT_EQ(0, nl_simple(&self->nl, BATON_CMD_UNWATCH));
	EXPECT_EQ(ENOENT, nl_simple(&self->nl, BATON_CMD_UNWATCH));
}

TEST_F(raw_family, killed_producer_is_a_peer_death)
{
	struct nlmsghdr *n = (struct nlmsghdr *)self->ans->buf;
	uint32_t pid = 0, role = 0;
	int fd, sync[2];
	pid_t child;
	char c;

	ASSERT_EQ(0, nl_simple(&self->nl, BATON_CMD_WATCH));
	fd = test_ring_create(self->dev, self->name, BATON_ROLE_CONSUMER, 4,
			      8, 0600, NULL);
	ASSERT_EQ(0, pipe(sync));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		struct baton_ring_open o;

		if (_test_ring_open(self->dev, self->name,
				    BATON_ROLE_PRODUCER, &o))
			_exit(1);
		if (write(sync[1], "x", 1) != 1)
			_exit(2);
		pause();	/* the fd goes with the process */
		_exit(3);
	}
	ASSERT_EQ(1, read(sync[0], &c, 1));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	ASSERT_EQ(0, nl_wait_event(&self->nl, BATON_EVENT_PEER_DIED,
				   self->name, &pid, &role));
	EXPECT_EQ((uint32_t)child, pid);
	EXPECT_EQ(BATON_ROLE_PRODUCER, role);

	ASSERT_EQ(0, nl_get(&self->nl, BATON_CMD_RING_GET, BATON_A_RING_NAME,
			    self->name, self->ans));
	ASSERT_EQ(0, self->ans->err);
	EXPECT_EQ(1, msg_uint(n, BATON_A_RING_PRODUCER_DEATHS, 0));
	EXPECT_EQ(0, msg_uint(n, BATON_A_RING_PRODUCERS, ~0ULL));
	close(sync[0]);
	close(sync[1]);
	close(fd);
}

TEST_F(raw_family, epoch_get_doit_and_dump)
{
	struct nlmsghdr *n = (struct nlmsghdr *)self->ans->buf;
	struct baton_epoch_register reg = { .size = sizeof(reg) };
	struct baton_epoch_create c;
	struct baton_unlink u;
	int mine, total;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.max_participants = 4;
	c.queue_len = 8;
	c.mode = 0600;
	snprintf(c.name, sizeof(c.name), "%s", self->name);
	ASSERT_EQ(0, bt_ioctl(self->dev, BATON_IOC_EPOCH_CREATE, &c));
	ASSERT_EQ(0, bt_ioctl(c.out_fd, BATON_EPOCH_IOC_REGISTER, &reg));

	ASSERT_EQ(0, nl_get(&self->nl, BATON_CMD_EPOCH_GET,
			    BATON_A_EPOCH_NAME, self->name, self->ans));
	ASSERT_EQ(0, self->ans->err);
	EXPECT_EQ(4, msg_uint(n, BATON_A_EPOCH_MAX_PARTICIPANTS, 0));
	EXPECT_EQ(8, msg_uint(n, BATON_A_EPOCH_QUEUE_LEN, 0));
	EXPECT_EQ(1, msg_uint(n, BATON_A_EPOCH_PARTICIPANTS, 0));
	EXPECT_EQ(0, msg_uint(n, BATON_A_EPOCH_ACTIVE_READERS, ~0ULL));
	EXPECT_LE(1, msg_uint(n, BATON_A_EPOCH_GLOBAL, 0));
	EXPECT_EQ(0, msg_uint(n, BATON_A_EPOCH_PENDING, ~0ULL));
	EXPECT_EQ(1, count_peers(n, BATON_A_EPOCH_PEERS, getpid(), 0, &mine));
	EXPECT_EQ(1, mine);

	EXPECT_EQ(1, nl_dump_count(&self->nl, BATON_CMD_EPOCH_GET,
				   BATON_A_EPOCH_NAME, self->name, &total));
	close(c.out_fd);
	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	snprintf(u.name, sizeof(u.name), "%s", self->name);
	EXPECT_EQ(0, bt_ioctl(self->dev, BATON_IOC_EPOCH_UNLINK, &u));
}

/*
 * Child, as nobody: may it see root's 0600 ring by name or in a dump, and
 * which creation event reaches it first? Exit code names the failed step.
 */
static int nobody_view(int dev, const char *root_ring, const char *own,
		       int go_fd, int ready_fd)
{
	struct nl_answer *ans = calloc(1, sizeof(*ans));
	char first[BATON_NAME_MAX];
	struct nl nl;
	int total;
	char c;

	if (!ans || setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return 10;
	if (nl_open(&nl) || nl_resolve(&nl, &(uint32_t){ 0 }))
		return 11;
	if (nl_simple(&nl, BATON_CMD_WATCH))
		return 12;
	if (write(ready_fd, "w", 1) != 1 || read(go_fd, &c, 1) != 1)
		return 13;
	/* Root made its ring after our WATCH; now ours. */
	if (nl_get(&nl, BATON_CMD_RING_GET, BATON_A_RING_NAME, root_ring, ans) ||
	    ans->err != ENOENT)
		return 14;
	if (nl_dump_count(&nl, BATON_CMD_RING_GET, BATON_A_RING_NAME,
			  root_ring, &total) != 0)
		return 15;
	if (_test_ring_create(dev, own, BATON_ROLE_PRODUCER, 4, 8, 0600, NULL))
		return 16;
	/* Events come in order: root's would be first, were it visible. */
	if (nl_next_event_name(&nl, BATON_EVENT_RING_CREATED, first,
			       sizeof(first)) || strcmp(first, own))
		return 17;
	if (nl_get(&nl, BATON_CMD_RING_GET, BATON_A_RING_NAME, own, ans) ||
	    ans->err)
		return 18;
	free(ans);
	return 0;
}

TEST_F(raw_family, unprivileged_sees_only_what_it_could_open)
{
	int go[2], ready[2], status, fd;
	pid_t child;
	char c;

	if (geteuid() != 0)
		SKIP(return, "needs root to switch to nobody");
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(ready));
	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		_exit(nobody_view(self->dev, self->name, self->name2, go[0],
				  ready[1]));
	ASSERT_EQ(1, read(ready[0], &c, 1));
	fd = test_ring_create(self->dev, self->name, BATON_ROLE_PRODUCER, 4,
			      8, 0600, NULL);
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* The nobody ring: root (CAP_SYS_ADMIN) sees it. */
	ASSERT_EQ(0, nl_get(&self->nl, BATON_CMD_RING_GET, BATON_A_RING_NAME,
			    self->name2, self->ans));
	EXPECT_EQ(0, self->ans->err);
	close(fd);
}

TEST_F(raw_family, thousand_messages_are_counted_from_the_indices)
{
	struct nlmsghdr *n = (struct nlmsghdr *)self->ans->buf;
	struct baton_ring_params p = bt_params(64, 8);
	struct baton_ring *prod, *cons;
	uint64_t v, i;

	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_PRODUCER,
				       &prod));
	ASSERT_EQ(0, baton_ring_open(self->name, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_KMOD, &cons));
	for (i = 0; i < 1000; i++) {
		ASSERT_EQ(0, baton_spsc_try_push(prod, &i, sizeof(i)));
		ASSERT_EQ(0, baton_spsc_try_pop(cons, &v, sizeof(v)));
		ASSERT_EQ(i, v);
	}
	ASSERT_EQ(0, baton_spsc_try_push(prod, &i, sizeof(i)));
	ASSERT_EQ(0, nl_get(&self->nl, BATON_CMD_RING_GET, BATON_A_RING_NAME,
			    self->name, self->ans));
	ASSERT_EQ(0, self->ans->err);
	EXPECT_EQ(1000, msg_uint(n, BATON_A_RING_MSGS_CONSUMED, 0));
	EXPECT_EQ(1001, msg_uint(n, BATON_A_RING_MSGS_RESERVED, 0));
	EXPECT_EQ(1, msg_uint(n, BATON_A_RING_OCCUPANCY, 0));
	baton_ring_close(cons);
	baton_ring_close(prod);
}

TEST_F_TIMEOUT(raw_family, dead_producers_tickets_are_a_tombstones_event, 60)
{
	static char buf[NL_BUFSZ];
	struct nlmsghdr *ev = (struct nlmsghdr *)buf;
	struct nlmsghdr *n = (struct nlmsghdr *)self->ans->buf;
	struct baton_ring_params p = mp_params(8, 2);
	struct baton_mpsc_loss loss = { 0, 0 };
	uint64_t m[2], seen = 0;
	struct baton_ring *c;
	struct bt_sync s;
	pid_t pid;
	int i;

	ASSERT_EQ(0, nl_simple(&self->nl, BATON_CMD_WATCH));
	ASSERT_EQ(0, bt_sync_init(&s));
	ASSERT_EQ(0, baton_ring_create(self->name, &p, BATON_ROLE_CONSUMER,
				       &c));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct baton_ring *pr;

		if (baton_ring_open(self->name, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_KMOD, &pr))
			_exit(3);
		baton_mpsc_prod_reserve(pr, 3);	/* and never publish */
		bt_sync_post(&s);
		pause();
		_exit(4);
	}
	ASSERT_EQ(0, bt_sync_wait(&s, 20000));
	kill(pid, SIGKILL);
	EXPECT_EQ(128 + SIGKILL, bt_wait_timeout(pid, 20000));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(BATON_MPSC_LOST,
			  baton_mpsc_pop(c, m, sizeof(m), 10 * BT_NSEC, &loss));

	/* One event or several (merged while queued): three tickets. */
	while (seen < 3 &&
	       !nl_wait_event_msg(&self->nl, BATON_EVENT_TOMBSTONES,
				  self->name, ev, sizeof(buf))) {
		if (!seen)
			EXPECT_EQ(0, msg_uint(ev, BATON_A_EVENT_TICKET, ~0ULL));
		EXPECT_EQ((uint64_t)pid, msg_uint(ev, BATON_A_EVENT_PID, 0));
		seen += msg_uint(ev, BATON_A_EVENT_COUNT, 0);
	}
	EXPECT_EQ(3, seen);
	ASSERT_EQ(0, nl_get(&self->nl, BATON_CMD_RING_GET, BATON_A_RING_NAME,
			    self->name, self->ans));
	ASSERT_EQ(0, self->ans->err);
	EXPECT_EQ(3, msg_uint(n, BATON_A_RING_TOMBSTONES, 0));
	EXPECT_EQ(BATON_RING_MPSC, msg_uint(n, BATON_A_RING_KIND, 0));
	baton_ring_close(c);
	bt_sync_close(&s);
}

TEST_F_TIMEOUT(raw_family, straggler_holding_a_synchronize_is_reported, 60)
{
	static char buf[NL_BUFSZ];
	struct nlmsghdr *ev = (struct nlmsghdr *)buf;
	struct baton_epoch_register reg = { .size = sizeof(reg) };
	struct baton_epoch_sync sync;
	struct baton_epoch_create c;
	volatile uint64_t *ann;
	void *self_region;

	ASSERT_EQ(0, nl_simple(&self->nl, BATON_CMD_WATCH));
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.max_participants = 2;
	c.queue_len = 8;
	c.mode = 0600;
	snprintf(c.name, sizeof(c.name), "%s", self->name);
	ASSERT_EQ(0, bt_ioctl(self->dev, BATON_IOC_EPOCH_CREATE, &c));
	ASSERT_EQ(0, bt_ioctl(c.out_fd, BATON_EPOCH_IOC_REGISTER, &reg));
	self_region = mmap(NULL, c.out_off.self_size, PROT_READ | PROT_WRITE,
			   MAP_SHARED, c.out_fd, c.out_off.self_mmap);
	ASSERT_NE(MAP_FAILED, self_region);
	ann = BT_WORD(self_region, c.out_off.ann, uint64_t);
	*ann = BATON_EPOCH_ANN(1);	/* a reader inside epoch 1, forever */

	/* straggler_ms defaults to 1000; give it three seconds. */
	memset(&sync, 0, sizeof(sync));
	sync.size = sizeof(sync);
	sync.flags = BATON_EPOCH_SYNC_DEADLINE;
	sync.epoch = 1;
	sync.deadline_ns = bt_now_ns() + 3 * BT_NSEC;
	EXPECT_EQ(ETIMEDOUT, bt_ioctl(c.out_fd, BATON_EPOCH_IOC_SYNCHRONIZE,
				      &sync));
	EXPECT_EQ(getpid(), sync.out_holder_pid);

	ASSERT_EQ(0, nl_wait_event_msg(&self->nl, BATON_EVENT_STRAGGLER,
				       self->name, ev, sizeof(buf)));
	EXPECT_EQ((uint64_t)getpid(), msg_uint(ev, BATON_A_EVENT_PID, 0));
	EXPECT_EQ(1, msg_uint(ev, BATON_A_EVENT_EPOCH, 0));
	EXPECT_EQ(reg.out_index, msg_uint(ev, BATON_A_EVENT_INDEX, ~0ULL));
	EXPECT_LE(1, msg_uint(ev, BATON_A_EVENT_WAITED_MS, 0));
	/* Once per call: no second one for the same synchronize. */

	ASSERT_EQ(0, nl_get(&self->nl, BATON_CMD_EPOCH_GET,
			    BATON_A_EPOCH_NAME, self->name, self->ans));
	ASSERT_EQ(0, self->ans->err);
	ev = (struct nlmsghdr *)self->ans->buf;
	EXPECT_EQ(1, msg_uint(ev, BATON_A_EPOCH_ACTIVE_READERS, 0));
	EXPECT_EQ(1, msg_uint(ev, BATON_A_EPOCH_OLDEST, 0));
	EXPECT_EQ((uint64_t)getpid(),
		  msg_uint(ev, BATON_A_EPOCH_OLDEST_PID, 0));
	EXPECT_EQ(1, msg_uint(ev, BATON_A_EPOCH_SYNC_TIMEOUTS, 0));
	EXPECT_LE(1, msg_uint(ev, BATON_A_EPOCH_SYNC_WAITS, 0));
	EXPECT_EQ(0, msg_uint(ev, BATON_A_EPOCH_SYNC_WAITERS, ~0ULL));
	*ann = 0;
	munmap(self_region, c.out_off.self_size);
	close(c.out_fd);
	bt_unlink_epoch(self->dev, self->name);
}

/*
 * 100 rings, dumped through a small buffer (several dump calls), with
 * half of them unlinked after the first chunk: no crash, no duplicate,
 * and every ring that stayed is listed.
 */
#define DUMP_RINGS	100

static void dump_name(char *buf, size_t len, int i)
{
	snprintf(buf, len, "nl.dump.%d.%d", (int)getpid(), i);
}

/* Which of this test's rings @name is, or -1. */
static int dump_index(const char *name)
{
	int pid, i;

	if (sscanf(name, "nl.dump.%d.%d", &pid, &i) != 2 || pid != getpid() ||
	    i < 0 || i >= DUMP_RINGS)
		return -1;
	return i;
}

TEST_F_TIMEOUT(raw_family, dump_of_100_rings_survives_unlinks_between_calls, 120)
{
	static char buf[8192];
	char name[32];
	int fds[DUMP_RINGS], seen[DUMP_RINGS] = { 0 };
	struct nl small;
	struct nl_req r;
	uint32_t seq;
	int i, chunks = 0;
	bool done = false;

	/*
	 * A fresh socket that never received into a big buffer: netlink
	 * sizes dump messages by the largest recv() buffer seen so far.
	 */
	ASSERT_EQ(0, nl_open(&small));
	small.family = self->nl.family;
	for (i = 0; i < DUMP_RINGS; i++) {
		dump_name(name, sizeof(name), i);
		fds[i] = test_ring_create(self->dev, name,
					  BATON_ROLE_PRODUCER, 2, 8, 0600,
					  NULL);
	}
	seq = small.seq;
	req_init(&r, small.family, BATON_CMD_RING_GET, NLM_F_DUMP);
	ASSERT_EQ(0, nl_send(&small, &r));
	while (!done) {
		ssize_t got = recv(small.fd, buf, sizeof(buf), MSG_TRUNC);
		struct nlmsghdr *n = (struct nlmsghdr *)buf;

		ASSERT_LT(0, got);
		ASSERT_GE(sizeof(buf), (size_t)got);	/* nothing cut off */
		for (; NLMSG_OK(n, got); n = NLMSG_NEXT(n, got)) {
			struct nlattr *a;

			if (n->nlmsg_seq != seq)
				continue;
			ASSERT_NE(NLMSG_ERROR, n->nlmsg_type);
			if (n->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			a = msg_attr(n, BATON_A_RING_NAME);
			ASSERT_NE(NULL, a);
			i = dump_index(ATTR_DATA(a));
			if (i >= 0)
				seen[i]++;
		}
		/* After the first chunk: the odd ones go, mid-dump. */
		if (!chunks++)
			for (i = 1; i < DUMP_RINGS; i += 2) {
				dump_name(name, sizeof(name), i);
				test_unlink(self->dev, name);
			}
	}
	TH_LOG("%d chunks", chunks);
	EXPECT_LT(1, chunks);
	for (i = 0; i < DUMP_RINGS; i++) {
		EXPECT_GE(1, seen[i]);
		if (!(i % 2))
			EXPECT_EQ(1, seen[i]);
		dump_name(name, sizeof(name), i);
		if (i % 2 == 0)
			test_unlink(self->dev, name);
		close(fds[i]);
	}
	close(small.fd);
}

TEST_F(raw_family, killed_participant_is_a_peer_death)
{
	uint32_t pid = 0;
	struct baton_epoch_create c;
	int sync[2];
	pid_t child;
	char x;

	ASSERT_EQ(0, nl_simple(&self->nl, BATON_CMD_WATCH));
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.max_participants = 2;
	c.queue_len = 8;
	c.mode = 0600;
	snprintf(c.name, sizeof(c.name), "%s", self->name);
	ASSERT_EQ(0, bt_ioctl(self->dev, BATON_IOC_EPOCH_CREATE, &c));
	ASSERT_EQ(0, pipe(sync));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		struct baton_epoch_register reg = { .size = sizeof(reg) };
		struct baton_epoch_open o;

		memset(&o, 0, sizeof(o));
		o.size = sizeof(o);
		snprintf(o.name, sizeof(o.name), "%s", self->name);
		if (bt_ioctl(self->dev, BATON_IOC_EPOCH_OPEN, &o) ||
		    bt_ioctl(o.out_fd, BATON_EPOCH_IOC_REGISTER, &reg))
			_exit(1);
		if (write(sync[1], "x", 1) != 1)
			_exit(2);
		pause();
		_exit(3);
	}
	ASSERT_EQ(1, read(sync[0], &x, 1));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ASSERT_EQ(0, nl_wait_event(&self->nl, BATON_EVENT_PEER_DIED,
				   self->name, &pid, NULL));
	EXPECT_EQ((uint32_t)child, pid);
	close(sync[0]);
	close(sync[1]);
	close(c.out_fd);
	bt_unlink_epoch(self->dev, self->name);
}

/* Read whatever is queued, without waiting; ENOBUFS (overrun) is fine. */
static void nl_drain(struct nl *nl)
{
	static char buf[NL_BUFSZ];

	while (recv(nl->fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0 ||
	       errno == ENOBUFS)
		;
}

/*
 * A watcher that does not read: its socket fills, the kernel never
 * blocks on it, and the next event it can take says how many it lost.
 */
TEST_F_TIMEOUT(raw_family, full_watcher_socket_counts_drops, 120)
{
	static char buf[NL_BUFSZ];
	struct nlmsghdr *ev = (struct nlmsghdr *)buf;
	char name[32];
	int rcvbuf = 1, i, fd;
	bool got = false;

	/* WATCH first: a tiny buffer filled by an early event drops the ack. */
	ASSERT_EQ(0, nl_simple(&self->nl, BATON_CMD_WATCH));
	ASSERT_EQ(0, setsockopt(self->nl.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
				sizeof(rcvbuf)));
	for (i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "nl.drop.%d.%d", (int)getpid(), i);
		fd = test_ring_create(self->dev, name, BATON_ROLE_PRODUCER, 2,
				      8, 0600, NULL);
		test_unlink(self->dev, name);
		close(fd);
	}
	/*
	 * Delivery is asynchronous: empty the socket and make one more event;
	 * if a late one of the burst filled the socket again and this one
	 * was dropped too, try again with the next name.
	 */
	for (i = 0; i < 3; i++) {
		const char *n = i == 0 ? self->name :
				i == 1 ? self->name2 : self->name3;

		bt_sleep_ms(200);
		nl_drain(&self->nl);
		fd = test_ring_create(self->dev, n, BATON_ROLE_PRODUCER, 2, 8,
				      0600, NULL);
		got = !nl_wait_event_msg(&self->nl, BATON_EVENT_RING_CREATED,
					 n, ev, sizeof(buf));
		close(fd);
		if (got)
			break;
	}
	ASSERT_TRUE(got);
	TH_LOG("drops reported: %llu",
	       (unsigned long long)msg_uint(ev, BATON_A_EVENT_DROPS, 0));
	EXPECT_LT(0, msg_uint(ev, BATON_A_EVENT_DROPS, 0));
}

/* The events group is admin-only: nobody may not join, root may. */
TEST_F(raw_family, events_group_is_admin_only)
{
	uint32_t grp = self->events_group;
	int status, fd;
	pid_t child;

	if (geteuid() != 0)
		SKIP(return, "needs root to switch to nobody");
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		struct nl nl;

		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY) || nl_open(&nl))
			_exit(10);
		if (!setsockopt(nl.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
				&grp, sizeof(grp)))
			_exit(11);
		_exit(errno == EPERM ? 0 : 12);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));

	/* Root joins and hears a creation without any WATCH. */
	ASSERT_EQ(0, setsockopt(self->nl.fd, SOL_NETLINK,
				NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp)));
	fd = test_ring_create(self->dev, self->name, BATON_ROLE_PRODUCER, 4,
			      8, 0600, NULL);
	EXPECT_EQ(0, nl_wait_event(&self->nl, BATON_EVENT_RING_CREATED,
				   self->name, NULL, NULL));
	close(fd);
}

TEST_HARNESS_MAIN
