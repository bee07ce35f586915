// SPDX-License-Identifier: GPL-2.0
/*
 * netlink_malformed: bad requests to the "baton" family, byte by byte.
 *
 * Owns the rejection contract of uapi/linux/baton_nl.h: a doit without
 * its name, a name longer than BATON_NAME_MAX, a name of the wrong type
 * (not a NUL-terminated string), an attribute type the policy does not
 * know, and attributes that do not parse each fail with EINVAL and an
 * extack message (for the missing name, a message or the missing
 * attribute's type). Two rejections come from the generic netlink core
 * before the family sees the message, and carry no message in 6.1: an
 * unknown command (EOPNOTSUPP) and a message shorter than the genetlink
 * header (EINVAL). Then 2000 requests of random bytes: each gets an
 * answer, and the family still answers a good dump afterwards. The
 * runner checks that the kernel log stayed clean.
 */
#include "netlink_util.h"

FIXTURE(malformed_request) {
	struct nlt nl;
	char name[BATON_NAME_MAX];
	int dev;
};

FIXTURE_SETUP(malformed_request)
{
	BT_REQUIRE_DEV();
	ASSERT_EQ(0, nlt_open(&self->nl));
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	bt_make_name(self->name, sizeof(self->name), "nm");
	ASSERT_EQ(0, _test_ring_create(self->dev, self->name,
				       BATON_ROLE_PRODUCER, 4, 8, 0600, NULL));
}

FIXTURE_TEARDOWN(malformed_request)
{
	if (self->dev > 0) {
		_test_unlink(self->dev, self->name);
		close(self->dev);
	}
	nlt_close(&self->nl);
}

/* Send @m and return the kernel's answer (negative errno, message). */
static int nm_ask(struct nlt *s, struct nlt_msg *m, size_t raw_len,
		  struct nlt_err *e)
{
	int ret = nlt_send_raw(s, m, raw_len);

	if (ret)
		return ret;
	return nlt_collect(s, e, NULL, NULL);
}

TEST_F(malformed_request, missing_name)
{
	static const int cmds[] = { BATON_CMD_RING_GET, BATON_CMD_EPOCH_GET };
	struct nlt_msg m;
	struct nlt_err e;
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		nlt_msg_init(&m, self->nl.family, NLM_F_ACK, (uint8_t)cmds[i]);
		EXPECT_EQ(-EINVAL, nm_ask(&self->nl, &m, 0, &e));
		EXPECT_TRUE(e.has_tlvs);
		EXPECT_TRUE(e.msg[0] ||
			    e.miss_type == (uint32_t)nlt_name_attr(cmds[i])) {
			TH_LOG("cmd %d: no extack message, miss_type %u",
			       cmds[i], e.miss_type);
		}
		TH_LOG("cmd %d without a name: \"%s\" (miss_type %u)", cmds[i],
		       e.msg, e.miss_type);
	}
}

TEST_F(malformed_request, name_longer_than_name_max)
{
	char longname[BATON_NAME_MAX * 2];
	struct nlt_msg m;
	struct nlt_err e;

	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	nlt_msg_init(&m, self->nl.family, NLM_F_ACK, BATON_CMD_RING_GET);
	nlt_put_str(&m, BATON_A_RING_NAME, longname);
	EXPECT_EQ(-EINVAL, nm_ask(&self->nl, &m, 0, &e));
	EXPECT_NE(0, e.msg[0]);
	TH_LOG("ring name of %zu bytes: \"%s\"", sizeof(longname) - 1, e.msg);

	/* exactly BATON_NAME_MAX characters: one too many for the NUL */
	longname[BATON_NAME_MAX] = '\0';
	nlt_msg_init(&m, self->nl.family, NLM_F_ACK, BATON_CMD_EPOCH_GET);
	nlt_put_str(&m, BATON_A_EPOCH_NAME, longname);
	EXPECT_EQ(-EINVAL, nm_ask(&self->nl, &m, 0, &e));
	EXPECT_NE(0, e.msg[0]);
}

TEST_F(malformed_request, name_of_wrong_type)
{
	uint32_t not_a_string = 0x41414141;
	uint64_t wide = 0x4141414141414141ULL;
	struct nlt_msg m;
	struct nlt_err e;

	/* four bytes, no NUL: not a string */
	nlt_msg_init(&m, self->nl.family, NLM_F_ACK, BATON_CMD_RING_GET);
	nlt_put(&m, BATON_A_RING_NAME, &not_a_string, sizeof(not_a_string));
	EXPECT_EQ(-EINVAL, nm_ask(&self->nl, &m, 0, &e));
	EXPECT_NE(0, e.msg[0]);
	TH_LOG("u32 as the name: \"%s\"", e.msg);

	nlt_msg_init(&m, self->nl.family, NLM_F_ACK, BATON_CMD_EPOCH_GET);
	nlt_put(&m, BATON_A_EPOCH_NAME, &wide, sizeof(wide));
	EXPECT_EQ(-EINVAL, nm_ask(&self->nl, &m, 0, &e));
	EXPECT_NE(0, e.msg[0]);

	/* an empty attribute where a string belongs */
	nlt_msg_init(&m, self->nl.family, NLM_F_ACK, BATON_CMD_RING_GET);
	nlt_put(&m, BATON_A_RING_NAME, NULL, 0);
	EXPECT_EQ(-EINVAL, nm_ask(&self->nl, &m, 0, &e));
	EXPECT_NE(0, e.msg[0]);
}

TEST_F(malformed_request, unknown_attribute)
{
	uint32_t v = 1;
	struct nlt_msg m;
	struct nlt_err e;

	/* a valid name plus an attribute type beyond the policy */
	nlt_msg_init(&m, self->nl.family, NLM_F_ACK, BATON_CMD_RING_GET);
	nlt_put_str(&m, BATON_A_RING_NAME, self->name);
	nlt_put(&m, BATON_A_RING_MAX + 10, &v, sizeof(v));
	EXPECT_EQ(-EINVAL, nm_ask(&self->nl, &m, 0, &e));
	EXPECT_NE(0, e.msg[0]);
	TH_LOG("attribute %d: \"%s\"", BATON_A_RING_MAX + 10, e.msg);
}

TEST_F(malformed_request, attributes_that_do_not_parse)
{
	struct nlt_msg m;
	struct nlt_err e;
	struct nlattr *a;

	/* an attribute header claiming 3 bytes: shorter than itself */
	nlt_msg_init(&m, self->nl.family, NLM_F_ACK, BATON_CMD_RING_GET);
	a = (struct nlattr *)(m.b + m.len);
	a->nla_type = BATON_A_RING_NAME;
	a->nla_len = 3;
	m.len += NLA_HDRLEN + 4;
	EXPECT_EQ(-EINVAL, nm_ask(&self->nl, &m, 0, &e));
	EXPECT_NE(0, e.msg[0]);
	TH_LOG("attribute of length 3: \"%s\"", e.msg);

	/* a name attribute claiming more bytes than the message holds */
	nlt_msg_init(&m, self->nl.family, NLM_F_ACK, BATON_CMD_RING_GET);
	nlt_put_str(&m, BATON_A_RING_NAME, self->name);
	a = (struct nlattr *)(m.b + NLMSG_HDRLEN + GENL_HDRLEN);
	a->nla_len = 200;
	EXPECT_EQ(-EINVAL, nm_ask(&self->nl, &m, 0, &e));
	EXPECT_NE(0, e.msg[0]);
}

/* The core answers these before the family sees them: no message. */
TEST_F(malformed_request, unknown_command_and_short_header)
{
	struct nlt_msg m;
	struct nlt_err e;

	nlt_msg_init(&m, self->nl.family, NLM_F_ACK, 0xee);
	EXPECT_EQ(-EOPNOTSUPP, nm_ask(&self->nl, &m, 0, &e));
	TH_LOG("unknown command: \"%s\"", e.msg);

	nlt_msg_init(&m, self->nl.family, NLM_F_ACK, BATON_CMD_UNSPEC);
	EXPECT_EQ(-EOPNOTSUPP, nm_ask(&self->nl, &m, 0, &e));

	/* two bytes of genetlink header instead of four */
	nlt_msg_init(&m, self->nl.family, NLM_F_ACK, BATON_CMD_RING_GET);
	m.nh.nlmsg_len = NLMSG_HDRLEN + 2;
	EXPECT_EQ(-EINVAL, nm_ask(&self->nl, &m, NLMSG_HDRLEN + 2, &e));

	/* the header's reserved field must be 0 */
	nlt_msg_init(&m, self->nl.family, NLM_F_ACK | NLM_F_DUMP,
		     BATON_CMD_RING_GET);
	((struct genlmsghdr *)(m.b + NLMSG_HDRLEN))->reserved = 0x5a5a;
	EXPECT_EQ(-EINVAL, nm_ask(&self->nl, &m, 0, &e));
	TH_LOG("reserved != 0: \"%s\"", e.msg);
}

/* xorshift64: a fixed seed, so a failure replays */
static uint64_t nm_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#define NM_FUZZ		2000

TEST_F_TIMEOUT(malformed_request, random_payloads_always_answered, 300)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	struct nlt_msg m;
	struct nlt_err e;
	int i, errors = 0, answered = 0;

	for (i = 0; i < NM_FUZZ; i++) {
		uint64_t r = nm_rand(&seed);
		size_t len = r % 300, k;
		uint8_t cmd = (uint8_t)((r >> 16) % (BATON_CMD_MAX + 3));
		uint16_t flags = NLM_F_ACK | ((r >> 24) & 1 ? NLM_F_DUMP : 0);
		int ret;

		nlt_msg_init(&m, self->nl.family, flags, cmd);
		for (k = 0; k < len; k++)
			m.b[m.len + k] = (char)nm_rand(&seed);
		/* half of them: a plausible attribute header first */
		if ((r >> 32) & 1 && len >= NLA_HDRLEN) {
			struct nlattr *a = (struct nlattr *)(m.b + m.len);

			a->nla_len = (uint16_t)(NLA_HDRLEN + (r >> 40) % len);
			a->nla_type = (uint16_t)((r >> 48) % (BATON_A_RING_MAX +
							      2));
		}
		m.len += len;
		ret = nm_ask(&self->nl, &m, 0, &e);
		ASSERT_NE(-ETIMEDOUT, ret) {
			TH_LOG("request %d (cmd %u, %zu bytes) got no answer",
			       i, cmd, len);
		}
		answered++;
		errors += ret < 0;
		if (cmd == BATON_CMD_WATCH && ret == 0) {
			/* a lucky subscription: drop it again */
			nlt_msg_init(&m, self->nl.family, NLM_F_ACK,
				     BATON_CMD_UNWATCH);
			nm_ask(&self->nl, &m, 0, &e);
		}
	}
	TH_LOG("%d requests answered, %d with an error", answered, errors);
	EXPECT_LE(1, errors);
	/* the family is still fine */
	EXPECT_LE(1, nlt_dump(&self->nl, BATON_CMD_RING_GET, "st.nm.", NULL,
			      0));
}

TEST_HARNESS_MAIN
