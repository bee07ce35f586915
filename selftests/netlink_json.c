// SPDX-License-Identifier: GPL-2.0
/*
 * netlink_json: batonctl's JSON, parsed by a strict parser written here
 * (no jq or python in the VM), carries what the test created.
 *
 * Owns: `batonctl -j list`, `-j -p show NAME`, `-j epoch NAME` and `-j
 * epoch` are valid JSON (RFC 8259: no trailing commas, no leading zeros,
 * escapes and UTF-8 checked, nothing after the value, no duplicate keys),
 * arrays of objects with numbers as numbers, and their values match a
 * ring and a domain the test set up (geometry, owner, mode, indices,
 * peers with pids and roles, the active reader and its epoch); `-j watch`
 * prints one object per event and line as they happen and stops on
 * SIGINT with status 0, after -c N events, or at -t with status 3; a
 * ring and a domain on the memfd backend are shown read-only, the ring
 * with what it cannot see;
 * an unknown name is an error with status 1 (with -j: an empty array).
 * The text output names the same objects. Objects whose every holder
 * was killed are marked "stale" (live ones not), on both backends, and
 * `batonctl unlink` removes them, the memfd ones too, so the name can be
 * created again. Pools: `-j pool NAME`, `-j -p show pool NAME`, `-j list`
 * and `-j -a pool` carry a pool's geometry, classes (free depth as the
 * library sees it), counters and holder; the text of `pool NAME` and of
 * `list` parses back to the same numbers; a pool without holders is
 * stale and `unlink pool NAME` removes it (a bare `unlink NAME` does not:
 * that is a ring's name).
 */
#include "netlink_util.h"

#define NJ_WAIT_MS	30000

/* ---- a strict JSON parser ---- */

enum jt { JT_NULL, JT_BOOL, JT_NUM, JT_STR, JT_ARR, JT_OBJ };

struct jv {
	enum jt t;
	bool b;
	bool is_uint;		/* a non-negative integer that fits u64 */
	uint64_t u;
	char *s;		/* JT_STR */
	size_t n;		/* JT_ARR, JT_OBJ */
	struct jv *kids;
	char **keys;		/* JT_OBJ */
};

struct jp {
	const char *p, *end;
	int depth;
	const char *err;
};

#define JP_MAX_DEPTH	32

static void jp_ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' ||
				 *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static bool jp_fail(struct jp *j, const char *why)
{
	if (!j->err)
		j->err = why;
	return false;
}

static bool jp_lit(struct jp *j, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n))
		return jp_fail(j, "bad literal");
	j->p += n;
	return true;
}

static int jp_hex4(struct jp *j)
{
	int v = 0, i;

	if (j->end - j->p < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		char c = *j->p++;

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static size_t jp_utf8_put(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Length of the valid UTF-8 sequence at @p (0 if invalid). */
static size_t jp_utf8_len(const unsigned char *p, const unsigned char *end)
{
	size_t n, i;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = p[0] & 0x0f;
	} else if ((p[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	if ((size_t)(end - p) < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond Unicode */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static bool jp_string(struct jp *j, char **out)
{
	char *o = malloc((size_t)(j->end - j->p) + 1);
	size_t len = 0;

	if (!o)
		return jp_fail(j, "out of memory");
	j->p++;			/* the opening quote */
	while (j->p < j->end && *j->p != '"') {
		unsigned char c = (unsigned char)*j->p;

		if (c < 0x20)
			goto bad;
		if (c == '\\') {
			int cp;

			if (++j->p >= j->end)
				goto bad;
			switch (*j->p++) {
			case '"': o[len++] = '"'; break;
			case '\\': o[len++] = '\\'; break;
			case '/': o[len++] = '/'; break;
			case 'b': o[len++] = '\b'; break;
			case 'f': o[len++] = '\f'; break;
			case 'n': o[len++] = '\n'; break;
			case 'r': o[len++] = '\r'; break;
			case 't': o[len++] = '\t'; break;
			case 'u':
				cp = jp_hex4(j);
				if (cp < 0 || (cp >= 0xdc00 && cp <= 0xdfff))
					goto bad;
				if (cp >= 0xd800 && cp <= 0xdbff) {
					int lo;

					if (j->end - j->p < 6 ||
					    j->p[0] != '\\' ||
					    j->p[1] != 'u')
						goto bad;
					j->p += 2;
					lo = jp_hex4(j);
					if (lo < 0xdc00 || lo > 0xdfff)
						goto bad;
					cp = 0x10000 + ((cp - 0xd800) << 10) +
					     (lo - 0xdc00);
				}
				/* a NUL would cut our C string: refuse it */
				if (!cp)
					goto bad;
				len += jp_utf8_put(o + len, (uint32_t)cp);
				break;
			default:
				goto bad;
			}
			continue;
		}
		{
			size_t n = jp_utf8_len((const unsigned char *)j->p,
					       (const unsigned char *)j->end);

			if (!n)
				goto bad;
			memcpy(o + len, j->p, n);
			len += n;
			j->p += n;
		}
	}
	if (j->p >= j->end)
		goto bad;
	j->p++;			/* the closing quote */
	o[len] = '\0';
	*out = o;
	return true;
bad:
	free(o);
	return jp_fail(j, "bad string");
}

static bool jp_digits(struct jp *j)
{
	const char *s = j->p;

	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > s;
}

static bool jp_number(struct jp *j, struct jv *v)
{
	const char *s = j->p;
	bool neg = false, integer = true;

	if (*j->p == '-') {
		neg = true;
		j->p++;
	}
	if (j->p < j->end && *j->p == '0') {
		j->p++;
		if (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			return jp_fail(j, "leading zero");
	} else if (!jp_digits(j)) {
		return jp_fail(j, "bad number");
	}
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		integer = false;
		if (!jp_digits(j))
			return jp_fail(j, "bad fraction");
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		integer = false;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!jp_digits(j))
			return jp_fail(j, "bad exponent");
	}
	v->t = JT_NUM;
	if (integer && !neg) {
		const char *q;
		uint64_t u = 0;

		v->is_uint = true;
		for (q = s; q < j->p; q++) {
			if (u > (UINT64_MAX - (uint64_t)(*q - '0')) / 10)
				v->is_uint = false;
			u = u * 10 + (uint64_t)(*q - '0');
		}
		v->u = u;
	}
	return true;
}

static bool jp_value(struct jp *j, struct jv *v);
static void jv_free(struct jv *v);

static bool jp_push(struct jv *v, struct jv *kid, char *key)
{
	struct jv *k = realloc(v->kids, (v->n + 1) * sizeof(*k));
	char **keys;

	if (!k)
		return false;
	v->kids = k;
	if (v->t == JT_OBJ) {
		keys = realloc(v->keys, (v->n + 1) * sizeof(*keys));
		if (!keys)
			return false;
		v->keys = keys;
		v->keys[v->n] = key;
	}
	v->kids[v->n++] = *kid;
	return true;
}

static bool jp_container(struct jp *j, struct jv *v, bool obj)
{
	char close = obj ? '}' : ']';

	if (++j->depth > JP_MAX_DEPTH)
		return jp_fail(j, "too deep");
	v->t = obj ? JT_OBJ : JT_ARR;
	j->p++;
	jp_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		j->depth--;
		return true;
	}
	for (;;) {
		struct jv kid;
		char *key = NULL;
		size_t i;

		memset(&kid, 0, sizeof(kid));
		jp_ws(j);
		if (obj) {
			if (j->p >= j->end || *j->p != '"' ||
			    !jp_string(j, &key))
				return jp_fail(j, "object key expected");
			for (i = 0; i < v->n; i++)
				if (!strcmp(v->keys[i], key)) {
					free(key);
					return jp_fail(j, "duplicate key");
				}
			jp_ws(j);
			if (j->p >= j->end || *j->p != ':') {
				free(key);
				return jp_fail(j, "':' expected");
			}
			j->p++;
		}
		if (!jp_value(j, &kid) || !jp_push(v, &kid, key)) {
			free(key);
			jv_free(&kid);
			return jp_fail(j, "bad member");
		}
		jp_ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			j->depth--;
			return true;
		}
		return jp_fail(j, "',' or close expected");
	}
}

static bool jp_value(struct jp *j, struct jv *v)
{
	memset(v, 0, sizeof(*v));
	jp_ws(j);
	if (j->p >= j->end)
		return jp_fail(j, "value expected");
	switch (*j->p) {
	case 'n':
		v->t = JT_NULL;
		return jp_lit(j, "null");
	case 't':
		v->t = JT_BOOL;
		v->b = true;
		return jp_lit(j, "true");
	case 'f':
		v->t = JT_BOOL;
		return jp_lit(j, "false");
	case '"':
		v->t = JT_STR;
		return jp_string(j, &v->s);
	case '[':
		return jp_container(j, v, false);
	case '{':
		return jp_container(j, v, true);
	default:
		if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9'))
			return jp_number(j, v);
		return jp_fail(j, "unexpected character");
	}
}

/* One JSON text: a value and nothing but whitespace around it. */
static bool json_parse(const char *s, struct jv *v, const char **err)
{
	struct jp j = { s, s + strlen(s), 0, NULL };

	if (!jp_value(&j, v))
		goto out;
	jp_ws(&j);
	if (j.p != j.end)
		jp_fail(&j, "text after the value");
out:
	*err = j.err;
	if (j.err)
		jv_free(v);	/* what was built before the error */
	return !j.err;
}

static void jv_free(struct jv *v)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		jv_free(&v->kids[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->kids);
	free(v->keys);
	free(v->s);
	memset(v, 0, sizeof(*v));
}

static const struct jv *jv_get(const struct jv *o, const char *key)
{
	size_t i;

	if (!o || o->t != JT_OBJ)
		return NULL;
	for (i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return &o->kids[i];
	return NULL;
}

/* The u64 at @key, or ~0 when absent or not a plain unsigned number. */
static uint64_t jv_u64(const struct jv *o, const char *key)
{
	const struct jv *v = jv_get(o, key);

	return v && v->t == JT_NUM && v->is_uint ? v->u : ~0ULL;
}

static const char *jv_str(const struct jv *o, const char *key)
{
	const struct jv *v = jv_get(o, key);

	return v && v->t == JT_STR ? v->s : "";
}

static int jv_bool(const struct jv *o, const char *key)
{
	const struct jv *v = jv_get(o, key);

	return v && v->t == JT_BOOL ? v->b : -1;
}

/* The element of array @a whose "name" is @name and "object" @obj. */
static const struct jv *jv_find(const struct jv *a, const char *obj,
				const char *name)
{
	size_t i;

	if (a->t != JT_ARR)
		return NULL;
	for (i = 0; i < a->n; i++)
		if (!strcmp(jv_str(&a->kids[i], "name"), name) &&
		    !strcmp(jv_str(&a->kids[i], "object"), obj))
			return &a->kids[i];
	return NULL;
}

/* Every element of a top-level array is an object. */
static bool jv_all_objects(const struct jv *a)
{
	size_t i;

	if (a->t != JT_ARR)
		return false;
	for (i = 0; i < a->n; i++)
		if (a->kids[i].t != JT_OBJ)
			return false;
	return true;
}

/* ---- the fixture: a ring with traffic, a domain with a reader ---- */

struct nj_shared {
	uint64_t epoch;
};

FIXTURE(batonctl) {
	char ring[BATON_NAME_MAX];
	char dom[BATON_NAME_MAX];
	struct baton_ring *prod, *cons;
	struct baton_epoch *d;
	struct nj_shared *sh;
	pid_t reader;
};

FIXTURE_SETUP(batonctl)
{
	struct baton_ring_params p = bt_params(64, 64);
	struct baton_epoch_params ep = { 4, 8, 0640, BATON_BACKEND_KMOD };
	char path[PATH_MAX];
	struct bt_sync s;
	uint64_t i, v;

	BT_REQUIRE_DEV();
	if (nlt_batonctl_path(path, sizeof(path)))
		SKIP(_exit(255), "helpers/batonctl missing (make lib selftests)");
	bt_make_name(self->ring, sizeof(self->ring), "nj");
	bt_make_name(self->dom, sizeof(self->dom), "nj");
	p.mode = 0640;
	ASSERT_EQ(0, baton_ring_create(self->ring, &p, BATON_ROLE_PRODUCER,
				       &self->prod));
	ASSERT_EQ(0, baton_ring_open(self->ring, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_KMOD, &self->cons));
	for (i = 0; i < 10; i++)
		ASSERT_EQ(0, baton_spsc_try_push(self->prod, &i, sizeof(i)));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, baton_spsc_try_pop(self->cons, &v, sizeof(v)));

	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	ASSERT_EQ(0, baton_epoch_create(self->dom, &ep, &self->d));
	ASSERT_LE(0, baton_epoch_register(self->d));
	ASSERT_EQ(0, bt_sync_init(&s));
	self->reader = fork();
	ASSERT_LE(0, self->reader);
	if (self->reader == 0) {
		struct baton_epoch *r;

		if (baton_epoch_open(self->dom, BATON_BACKEND_KMOD, &r) ||
		    baton_epoch_register(r) < 0)
			_exit(3);
		self->sh->epoch = baton_epoch_enter(r);
		bt_sync_post(&s);
		pause();
		_exit(4);
	}
	ASSERT_EQ(0, bt_sync_wait(&s, NJ_WAIT_MS));
	bt_sync_close(&s);
}

FIXTURE_TEARDOWN(batonctl)
{
	if (self->reader > 0) {
		kill(self->reader, SIGKILL);
		bt_wait(self->reader);
	}
	if (self->d)
		baton_epoch_close(self->d);
	baton_epoch_unlink(self->dom, BATON_BACKEND_KMOD);
	if (self->prod)
		baton_ring_close(self->prod);
	if (self->cons)
		baton_ring_close(self->cons);
	bt_unlink_quiet(self->ring);
}

/* Run batonctl, parse stdout as one JSON text; its exit status. */
static int nj_run_json(struct __test_metadata *_metadata, char *const argv[],
		       struct jv *out)
{
	char *o = NULL, *e = NULL;
	const char *err;
	int st = nlt_batonctl(argv, &o, &e);

	EXPECT_NE(NULL, o);
	if (!o)
		return -1;
	EXPECT_TRUE(json_parse(o, out, &err)) {
		TH_LOG("batonctl %s %s: not JSON (%s):\n%s", argv[1], argv[2],
		       err, o);
	}
	if (st)
		TH_LOG("batonctl exit %d, stderr: %s", st, e ? e : "");
	free(o);
	free(e);
	return st;
}

static void nj_check_ring(struct __test_metadata *_metadata,
			  const struct jv *r)
{
	ASSERT_NE(NULL, r);
	EXPECT_STREQ("kmod", jv_str(r, "backend"));
	EXPECT_STREQ("spsc", jv_str(r, "kind"));
	EXPECT_EQ(64, jv_u64(r, "slot_count"));
	EXPECT_EQ(64, jv_u64(r, "slot_size"));
	EXPECT_EQ(1, jv_u64(r, "max_producers"));
	EXPECT_EQ(getuid(), jv_u64(r, "uid"));
	EXPECT_EQ(getgid(), jv_u64(r, "gid"));
	EXPECT_EQ(0640, jv_u64(r, "mode"));
	EXPECT_EQ(3, jv_u64(r, "head"));
	EXPECT_EQ(10, jv_u64(r, "tail"));
	EXPECT_EQ(7, jv_u64(r, "occupancy"));
	EXPECT_EQ(3, jv_u64(r, "msgs_consumed"));
	EXPECT_EQ(10, jv_u64(r, "msgs_reserved"));
	EXPECT_EQ(1, jv_u64(r, "producers"));
	EXPECT_EQ(1, jv_u64(r, "consumers"));
	EXPECT_EQ(0, jv_u64(r, "parks_full"));
	EXPECT_EQ(0, jv_u64(r, "producer_deaths"));
	EXPECT_EQ(0, jv_bool(r, "unlinked"));
	EXPECT_EQ(JT_ARR, jv_get(r, "state") ? jv_get(r, "state")->t : JT_NULL);
}

static void nj_check_peers(struct __test_metadata *_metadata,
			   const struct jv *r)
{
	const struct jv *peers = jv_get(r, "peers");
	int prod = 0, cons = 0;
	size_t i;

	ASSERT_NE(NULL, peers);
	ASSERT_EQ(JT_ARR, peers->t);
	ASSERT_EQ(2, peers->n);
	for (i = 0; i < peers->n; i++) {
		const struct jv *p = &peers->kids[i];

		EXPECT_EQ(getpid(), jv_u64(p, "pid"));
		prod += !strcmp(jv_str(p, "role"), "producer");
		cons += !strcmp(jv_str(p, "role"), "consumer");
		EXPECT_EQ(0, jv_bool(p, "parked"));
	}
	EXPECT_EQ(1, prod);
	EXPECT_EQ(1, cons);
}

static void nj_check_domain(struct __test_metadata *_metadata,
			    FIXTURE_DATA(batonctl) *self, const struct jv *d)
{
	struct baton_epoch_stats st;

	ASSERT_NE(NULL, d);
	ASSERT_EQ(0, baton_epoch_stats(self->d, &st));
	EXPECT_STREQ("kmod", jv_str(d, "backend"));
	EXPECT_EQ(4, jv_u64(d, "max_participants"));
	EXPECT_EQ(8, jv_u64(d, "queue_len"));
	EXPECT_EQ(0640, jv_u64(d, "mode"));
	EXPECT_EQ(st.global, jv_u64(d, "global"));
	EXPECT_EQ(st.frontier, jv_u64(d, "frontier"));
	EXPECT_EQ(2, jv_u64(d, "participants"));
	EXPECT_EQ(1, jv_u64(d, "active_readers"));
	EXPECT_EQ(self->sh->epoch, jv_u64(d, "oldest"));
	EXPECT_EQ(self->reader, jv_u64(d, "oldest_pid"));
	EXPECT_EQ(0, jv_u64(d, "pending"));
	EXPECT_EQ(0, jv_u64(d, "sync_timeouts"));
}

TEST_F_TIMEOUT(batonctl, list_json, 60)
{
	char *argv[] = { "batonctl", "-j", "list", NULL };
	struct jv v;

	ASSERT_EQ(0, nj_run_json(_metadata, argv, &v));
	ASSERT_TRUE(jv_all_objects(&v));
	nj_check_ring(_metadata, jv_find(&v, "ring", self->ring));
	nj_check_domain(_metadata, self, jv_find(&v, "epoch", self->dom));
	/* held: not stale */
	EXPECT_EQ(0, jv_bool(jv_find(&v, "ring", self->ring), "stale"));
	EXPECT_EQ(0, jv_bool(jv_find(&v, "epoch", self->dom), "stale"));
	/* a ring and a domain may share a name; ours do not */
	EXPECT_EQ(NULL, jv_find(&v, "epoch", self->ring));
	jv_free(&v);
}

TEST_F_TIMEOUT(batonctl, show_json_pretty, 60)
{
	char *argv[] = { "batonctl", "-j", "-p", "show", self->ring, NULL };
	struct jv v;

	ASSERT_EQ(0, nj_run_json(_metadata, argv, &v));
	ASSERT_TRUE(jv_all_objects(&v));
	ASSERT_EQ(1, v.n);
	EXPECT_STREQ(self->ring, jv_str(&v.kids[0], "name"));
	EXPECT_STREQ("ring", jv_str(&v.kids[0], "object"));
	nj_check_ring(_metadata, &v.kids[0]);
	nj_check_peers(_metadata, &v.kids[0]);
	jv_free(&v);
}

TEST_F_TIMEOUT(batonctl, epoch_json, 60)
{
	char *one[] = { "batonctl", "-j", "epoch", self->dom, NULL };
	char *all[] = { "batonctl", "-j", "epoch", NULL };
	const struct jv *peers;
	struct jv v;
	size_t i;
	int found = 0;

	ASSERT_EQ(0, nj_run_json(_metadata, one, &v));
	ASSERT_TRUE(jv_all_objects(&v));
	ASSERT_EQ(1, v.n);
	nj_check_domain(_metadata, self, &v.kids[0]);
	peers = jv_get(&v.kids[0], "peers");
	ASSERT_NE(NULL, peers);
	ASSERT_EQ(2, peers->n);
	for (i = 0; i < peers->n; i++) {
		if (jv_u64(&peers->kids[i], "pid") != (uint64_t)self->reader)
			continue;
		found++;
		EXPECT_EQ(self->sh->epoch,
			  jv_u64(&peers->kids[i], "announced"));
	}
	EXPECT_EQ(1, found);
	jv_free(&v);

	ASSERT_EQ(0, nj_run_json(_metadata, all, &v));
	ASSERT_TRUE(jv_all_objects(&v));
	nj_check_domain(_metadata, self, jv_find(&v, "epoch", self->dom));
	jv_free(&v);
}

TEST_F_TIMEOUT(batonctl, unknown_name_is_an_error, 60)
{
	char *argv[] = { "batonctl", "show", "st.nj.no-such-ring", NULL };
	char *o = NULL, *e = NULL;

	EXPECT_EQ(1, nlt_batonctl(argv, &o, &e));
	ASSERT_NE(NULL, o);
	ASSERT_NE(NULL, e);
	EXPECT_STREQ("", o);
	EXPECT_NE(NULL, strstr(e, "st.nj.no-such-ring")) {
		TH_LOG("stderr: %s", e);
	}
	free(o);
	free(e);
}

TEST_F_TIMEOUT(batonctl, json_unknown_name_is_an_empty_array, 60)
{
	char *argv[] = { "batonctl", "-j", "show", "st.nj.no-such-ring", NULL };
	char *o = NULL, *e = NULL;
	const char *err;
	struct jv v;

	EXPECT_EQ(1, nlt_batonctl(argv, &o, &e));
	ASSERT_NE(NULL, o);
	ASSERT_NE(NULL, e);
	ASSERT_TRUE(json_parse(o, &v, &err)) TH_LOG("%s: %s", err, o);
	EXPECT_EQ(JT_ARR, v.t);
	EXPECT_EQ(0, v.n);
	EXPECT_NE(NULL, strstr(e, "st.nj.no-such-ring")) TH_LOG("%s", e);
	jv_free(&v);
	free(o);
	free(e);
}

/*
 * A child creates a ring and a registered domain on @backend, says so and
 * is killed with SIGKILL: what a crash leaves. 0 or -1.
 */
static int nj_kill_creator(const char *ring, const char *dom, int backend)
{
	struct baton_ring_params p = bt_params(16, 16);
	struct baton_epoch_params ep = { 2, 8, 0600, backend };
	struct bt_sync s;
	pid_t pid;
	int ret;

	p.backend = backend;
	if (bt_sync_init(&s))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct baton_ring *r;
		struct baton_epoch *d;

		if (baton_ring_create(ring, &p, BATON_ROLE_PRODUCER, &r) ||
		    baton_epoch_create(dom, &ep, &d) ||
		    baton_epoch_register(d) < 0)
			_exit(3);
		bt_sync_post(&s);
		pause();
		_exit(4);
	}
	ret = pid > 0 ? bt_sync_wait(&s, NJ_WAIT_MS) : -1;
	bt_sync_close(&s);
	if (pid > 0) {
		kill(pid, SIGKILL);
		bt_wait(pid);
	}
	return ret ? -1 : 0;
}

/* kill -9, then: the names stay (-EEXIST), stale, unlink, create again. */
static void nj_stale_then_unlink(struct __test_metadata *_metadata,
				 int backend, const char *tag)
{
	struct baton_ring_params p = bt_params(16, 16);
	struct baton_epoch_params ep = { 2, 8, 0600, backend };
	char ring[BATON_NAME_MAX], dom[BATON_NAME_MAX];
	char *list[] = { "batonctl", "-j", "list", NULL };
	char *unl_ring[] = { "batonctl", "unlink", ring, NULL };
	char *unl_dom[] = { "batonctl", "unlink", "epoch", dom, NULL };
	char *o = NULL, *e = NULL;
	struct baton_epoch *d;
	struct baton_ring *r;
	struct jv v;

	p.backend = backend;
	bt_make_name(ring, sizeof(ring), tag);
	bt_make_name(dom, sizeof(dom), tag);
	ASSERT_EQ(0, nj_kill_creator(ring, dom, backend));
	EXPECT_EQ(-EEXIST, baton_ring_create(ring, &p, BATON_ROLE_PRODUCER,
					     &r));
	EXPECT_EQ(-EEXIST, baton_epoch_create(dom, &ep, &d));

	ASSERT_EQ(0, nj_run_json(_metadata, list, &v));
	EXPECT_EQ(1, jv_bool(jv_find(&v, "ring", ring), "stale"));
	EXPECT_EQ(1, jv_bool(jv_find(&v, "epoch", dom), "stale"));
	jv_free(&v);

	EXPECT_EQ(0, nlt_batonctl(unl_ring, &o, &e)) TH_LOG("%s", e);
	free(o);
	free(e);
	EXPECT_EQ(0, nlt_batonctl(unl_dom, &o, &e)) TH_LOG("%s", e);
	free(o);
	free(e);
	ASSERT_EQ(0, baton_ring_create(ring, &p, BATON_ROLE_PRODUCER, &r));
	ASSERT_EQ(0, baton_epoch_create(dom, &ep, &d));
	baton_epoch_close(d);
	baton_ring_close(r);
	baton_epoch_unlink(dom, backend);
	baton_ring_unlink(ring, backend);
}

TEST_F_TIMEOUT(batonctl, kmod_stale_after_kill9, 60)
{
	nj_stale_then_unlink(_metadata, BATON_BACKEND_KMOD, "njk");
}

/* With the module loaded, unlink finds the memfd file after it. */
TEST_F_TIMEOUT(batonctl, memfd_stale_after_kill9, 60)
{
	struct baton_ring_params p = bt_params(16, 16);
	char name[BATON_NAME_MAX];
	struct baton_ring *r;

	bt_make_name(name, sizeof(name), "njp");
	p.backend = BATON_BACKEND_MEMFD;
	/* The VM's /init mounts a tmpfs on /dev/shm: memfd must work. */
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &r));
	baton_ring_close(r);
	baton_ring_unlink(name, BATON_BACKEND_MEMFD);
	nj_stale_then_unlink(_metadata, BATON_BACKEND_MEMFD, "njf");
}

TEST_F_TIMEOUT(batonctl, text_output_names_the_objects, 60)
{
	char *list[] = { "batonctl", "list", NULL };
	char *show[] = { "batonctl", "show", self->ring, NULL };
	char *o = NULL, *e = NULL;

	EXPECT_EQ(0, nlt_batonctl(list, &o, &e));
	ASSERT_NE(NULL, o);
	EXPECT_NE(NULL, strstr(o, self->ring));
	EXPECT_NE(NULL, strstr(o, self->dom));
	free(o);
	free(e);
	EXPECT_EQ(0, nlt_batonctl(show, &o, &e));
	ASSERT_NE(NULL, o);
	EXPECT_NE(NULL, strstr(o, "msgs_consumed"));
	EXPECT_NE(NULL, strstr(o, "peer pid"));
	free(o);
	free(e);
}

/* A memfd ring: read-only, with what the backend cannot see listed. */
TEST_F_TIMEOUT(batonctl, memfd_ring_shown_read_only, 60)
{
	struct baton_ring_params p = bt_params(16, 8);
	char name[BATON_NAME_MAX];
	char *argv[] = { "batonctl", "-j", "show", name, NULL };
	const struct jv *u;
	struct baton_ring *r;
	struct jv v;
	uint64_t i;
	size_t k;
	bool peers = false;

	bt_make_name(name, sizeof(name), "njm");
	p.backend = BATON_BACKEND_MEMFD;
	/* The VM's /init mounts a tmpfs on /dev/shm: memfd must work. */
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &r));
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, baton_spsc_try_push(r, &i, sizeof(i)));
	ASSERT_EQ(0, nj_run_json(_metadata, argv, &v));
	ASSERT_EQ(1, v.n);
	EXPECT_STREQ("memfd", jv_str(&v.kids[0], "backend"));
	EXPECT_EQ(16, jv_u64(&v.kids[0], "slot_count"));
	EXPECT_EQ(5, jv_u64(&v.kids[0], "tail"));
	EXPECT_EQ(0, jv_u64(&v.kids[0], "head"));
	EXPECT_EQ(5, jv_u64(&v.kids[0], "occupancy"));
	EXPECT_EQ(1, jv_u64(&v.kids[0], "producers"));
	EXPECT_EQ(0, jv_u64(&v.kids[0], "consumers"));
	u = jv_get(&v.kids[0], "unavailable");
	ASSERT_NE(NULL, u);
	for (k = 0; k < u->n; k++)
		peers |= u->kids[k].t == JT_STR &&
			 !strcmp(u->kids[k].s, "peers");
	EXPECT_TRUE(peers);
	jv_free(&v);
	/* batonctl never wrote: the ring still works from where it was */
	ASSERT_EQ(0, baton_spsc_try_push(r, &i, sizeof(i)));
	baton_ring_close(r);
	baton_ring_unlink(name, BATON_BACKEND_MEMFD);
}

/* A memfd domain: participants, the active reader, its pid, read-only. */
TEST_F_TIMEOUT(batonctl, memfd_domain_shown_read_only, 60)
{
	struct baton_epoch_params ep = { 4, 8, 0600, BATON_BACKEND_MEMFD };
	char name[BATON_NAME_MAX];
	char *argv[] = { "batonctl", "-j", "epoch", name, NULL };
	const struct jv *d, *peers;
	struct baton_epoch *m;
	struct jv v;
	uint64_t e;

	bt_make_name(name, sizeof(name), "njd");
	/* The VM's /init mounts a tmpfs on /dev/shm: memfd must work. */
	ASSERT_EQ(0, baton_epoch_create(name, &ep, &m));
	ASSERT_LE(0, baton_epoch_register(m));
	e = baton_epoch_enter(m);
	ASSERT_EQ(0, nj_run_json(_metadata, argv, &v));
	ASSERT_EQ(1, v.n);
	d = &v.kids[0];
	EXPECT_STREQ("memfd", jv_str(d, "backend"));
	EXPECT_STREQ("epoch", jv_str(d, "object"));
	EXPECT_EQ(4, jv_u64(d, "max_participants"));
	EXPECT_EQ(1, jv_u64(d, "participants"));
	EXPECT_EQ(1, jv_u64(d, "active_readers"));
	EXPECT_EQ(e, jv_u64(d, "oldest"));
	EXPECT_EQ(getpid(), jv_u64(d, "oldest_pid"));
	peers = jv_get(d, "peers");
	ASSERT_NE(NULL, peers);
	ASSERT_EQ(1, peers->n);
	EXPECT_EQ(getpid(), jv_u64(&peers->kids[0], "pid"));
	EXPECT_EQ(e, jv_u64(&peers->kids[0], "announced"));
	jv_free(&v);
	baton_epoch_exit(m);
	baton_epoch_close(m);
	baton_epoch_unlink(name, BATON_BACKEND_MEMFD);
}

/* Read one line from @fd within @ms into @buf (NUL-terminated). */
static int nj_read_line(int fd, char *buf, size_t len, long ms)
{
	int64_t end = bt_now_ns() + ms * BT_MSEC;
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = (end - bt_now_ns()) / BT_MSEC;

		if (left <= 0 || poll(&p, 1, (int)left) != 1)
			return -ETIMEDOUT;
		if (read(fd, buf + n, 1) != 1)
			return -EIO;
		if (buf[n] == '\n') {
			buf[n] = '\0';
			return 0;
		}
		n++;
	}
	return -ENOSPC;
}

TEST_F_TIMEOUT(batonctl, watch_json_stream_until_sigint, 90)
{
	char *argv[] = { "batonctl", "-j", "watch", NULL };
	struct baton_ring_params p = bt_params(4, 8);
	char name[BATON_NAME_MAX], line[1024];
	bool created = false, unlinked = false;
	struct baton_ring *r;
	struct nlt_run run;
	const char *err;
	struct jv v;

	bt_make_name(name, sizeof(name), "njw");
	ASSERT_EQ(0, nlt_batonctl_start(argv, &run));
	ASSERT_EQ(0, nj_read_line(run.err, line, sizeof(line), NJ_WAIT_MS));
	EXPECT_STREQ("batonctl: watching events", line);

	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &r));
	ASSERT_EQ(0, baton_ring_unlink(name, BATON_BACKEND_KMOD));
	while (!(created && unlinked)) {
		ASSERT_EQ(0, nj_read_line(run.out, line, sizeof(line),
					  NJ_WAIT_MS));
		ASSERT_TRUE(json_parse(line, &v, &err)) {
			TH_LOG("not JSON (%s): %s", err, line);
		}
		ASSERT_EQ(JT_OBJ, v.t);
		ASSERT_EQ(JT_STR, jv_get(&v, "type") ?
			  jv_get(&v, "type")->t : JT_NULL);
		if (!strcmp(jv_str(&v, "name"), name)) {
			created |= !strcmp(jv_str(&v, "type"), "ring_created");
			unlinked |= !strcmp(jv_str(&v, "type"),
					    "ring_unlinked");
		}
		jv_free(&v);
	}
	kill(run.pid, SIGINT);
	EXPECT_EQ(0, bt_wait_timeout(run.pid, NJ_WAIT_MS));
	close(run.out);
	close(run.err);
	baton_ring_close(r);
}

TEST_F_TIMEOUT(batonctl, watch_count_and_timeout, 90)
{
	char *count[] = { "batonctl", "-j", "-c", "1", "-t", "60", "watch",
			  NULL };
	char *timeout[] = { "batonctl", "-c", "1000", "-t", "1", "watch",
			    NULL };
	struct baton_ring_params p = bt_params(4, 8);
	char name[BATON_NAME_MAX], line[1024];
	struct baton_ring *r;
	struct nlt_run run;
	const char *err;
	char *o, *e;
	struct jv v;

	bt_make_name(name, sizeof(name), "njc");
	ASSERT_EQ(0, nlt_batonctl_start(count, &run));
	ASSERT_EQ(0, nj_read_line(run.err, line, sizeof(line), NJ_WAIT_MS));
	ASSERT_EQ(0, baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &r));
	o = nlt_slurp(run.out);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(0, bt_wait_timeout(run.pid, NJ_WAIT_MS));
	/* one event, one line: a JSON object with a type */
	EXPECT_TRUE(json_parse(o, &v, &err)) {
		TH_LOG("not one JSON object (%s): %s", err, o);
	}
	EXPECT_EQ(JT_OBJ, v.t);
	EXPECT_NE(0, jv_str(&v, "type")[0]);
	jv_free(&v);
	free(o);
	close(run.out);
	close(run.err);
	baton_ring_close(r);
	baton_ring_unlink(name, BATON_BACKEND_KMOD);

	/* -t without -c events arriving: status 3 */
	EXPECT_EQ(3, nlt_batonctl(timeout, &o, &e));
	free(o);
	free(e);
}

/* ---- pools: `pool NAME`, `show pool NAME`, list, unlink ---- */

#define NJP_SMALL	32
#define NJP_LARGE	4
#define NJP_TAKEN	5
#define NJP_DATA	(NJP_SMALL * 4096 + NJP_LARGE * 16384)

FIXTURE(batonctl_pool) {
	char name[BATON_NAME_MAX];
	struct baton_pool *pool;
	uint64_t h[NJP_TAKEN];
	struct baton_pool_info info;
};

FIXTURE_SETUP(batonctl_pool)
{
	struct baton_pool_params p;
	char path[PATH_MAX];
	int i;

	BT_REQUIRE_DEV();
	if (nlt_batonctl_path(path, sizeof(path)))
		SKIP(_exit(255), "helpers/batonctl missing (make lib selftests)");
	memset(&p, 0, sizeof(p));
	p.nr_classes = 2;
	p.max_holders = 4;
	p.mode = 0640;
	p.classes[0].buf_shift = 12;
	p.classes[0].count = NJP_SMALL;
	p.classes[1].buf_shift = 14;
	p.classes[1].count = NJP_LARGE;
	bt_make_name(self->name, sizeof(self->name), "njp");
	ASSERT_EQ(0, baton_pool_create(self->name, &p, &self->pool));
	for (i = 0; i < NJP_TAKEN; i++)
		ASSERT_EQ(0, baton_pool_alloc(self->pool, 4096, &self->h[i]));
	ASSERT_EQ(0, baton_pool_info(self->pool, &self->info));
}

FIXTURE_TEARDOWN(batonctl_pool)
{
	if (self->pool)
		baton_pool_close(self->pool);
	baton_pool_unlink(self->name);
}

/* The class object of @index in a pool's "classes" array, or NULL. */
static const struct jv *njp_class(const struct jv *pool, uint64_t index)
{
	const struct jv *a = jv_get(pool, "classes");
	size_t i;

	if (!a || a->t != JT_ARR)
		return NULL;
	for (i = 0; i < a->n; i++)
		if (jv_u64(&a->kids[i], "index") == index)
			return &a->kids[i];
	return NULL;
}

static void njp_check_pool(struct __test_metadata *_metadata,
			   FIXTURE_DATA(batonctl_pool) *self,
			   const struct jv *p)
{
	const struct jv *c, *peers;

	ASSERT_NE(NULL, p);
	EXPECT_STREQ("pool", jv_str(p, "object"));
	EXPECT_STREQ("kmod", jv_str(p, "backend"));
	EXPECT_EQ(0, jv_bool(p, "stale"));
	EXPECT_EQ(0, jv_bool(p, "unlinked"));
	EXPECT_EQ(getuid(), jv_u64(p, "uid"));
	EXPECT_EQ(getgid(), jv_u64(p, "gid"));
	EXPECT_EQ(0640, jv_u64(p, "mode"));
	EXPECT_EQ(2, jv_u64(p, "nr_classes"));
	EXPECT_EQ(0, jv_u64(p, "decay_ms"));
	EXPECT_EQ(0, jv_u64(p, "keep"));
	EXPECT_EQ(4, jv_u64(p, "max_holders"));
	EXPECT_EQ(NJP_DATA, jv_u64(p, "data_size"));
	EXPECT_EQ(1, jv_u64(p, "holders"));
	EXPECT_EQ(0, jv_u64(p, "holder_releases"));
	EXPECT_EQ(0, jv_u64(p, "reclaimed"));
	EXPECT_EQ(0, jv_u64(p, "repaired"));
	EXPECT_EQ(0, jv_u64(p, "decayed"));
	EXPECT_EQ(0, jv_u64(p, "decayed_bytes"));
	EXPECT_EQ(0, jv_u64(p, "bad_words"));
	ASSERT_NE(NULL, jv_get(p, "classes"));
	EXPECT_EQ(2, jv_get(p, "classes")->n);
	c = njp_class(p, 0);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(4096, jv_u64(c, "buf_size"));
	EXPECT_EQ(NJP_SMALL, jv_u64(c, "count"));
	EXPECT_EQ(self->info.classes[0].free, jv_u64(c, "free"));
	EXPECT_EQ(NJP_SMALL - NJP_TAKEN - self->info.classes[0].cached,
		  jv_u64(c, "free"));
	/* No decay: nothing is ever COLD, and the count is there to say so. */
	ASSERT_NE(NULL, jv_get(c, "cold"));
	EXPECT_EQ(0, jv_u64(c, "cold"));
	c = njp_class(p, 1);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(16384, jv_u64(c, "buf_size"));
	EXPECT_EQ(NJP_LARGE, jv_u64(c, "count"));
	EXPECT_EQ(NJP_LARGE, jv_u64(c, "free"));
	peers = jv_get(p, "peers");
	ASSERT_NE(NULL, peers);
	ASSERT_EQ(JT_ARR, peers->t);
	ASSERT_EQ(1, peers->n);
	EXPECT_EQ(getpid(), jv_u64(&peers->kids[0], "pid"));
	EXPECT_EQ(self->info.holder, jv_u64(&peers->kids[0], "index"));
	EXPECT_EQ(NULL, jv_get(&peers->kids[0], "role"));
}

TEST_F_TIMEOUT(batonctl_pool, pool_json, 60)
{
	char *one[] = { "batonctl", "-j", "pool", self->name, NULL };
	char *show[] = { "batonctl", "-j", "-p", "show", "pool", self->name,
			 NULL };
	char *list[] = { "batonctl", "-j", "list", NULL };
	char *all[] = { "batonctl", "-j", "-a", "pool", NULL };
	const struct jv *p;
	struct jv v;

	EXPECT_EQ(0, nj_run_json(_metadata, one, &v));
	ASSERT_EQ(JT_ARR, v.t);
	ASSERT_EQ(1, v.n);
	njp_check_pool(_metadata, self, jv_find(&v, "pool", self->name));
	jv_free(&v);

	EXPECT_EQ(0, nj_run_json(_metadata, show, &v));
	ASSERT_EQ(1, v.n);
	njp_check_pool(_metadata, self, jv_find(&v, "pool", self->name));
	jv_free(&v);

	EXPECT_EQ(0, nj_run_json(_metadata, list, &v));
	EXPECT_TRUE(jv_all_objects(&v));
	njp_check_pool(_metadata, self, jv_find(&v, "pool", self->name));
	/* a ring of the same name would be another object: none here */
	EXPECT_EQ(NULL, jv_find(&v, "ring", self->name));
	jv_free(&v);

	/* every IPC namespace (we are root): the same pool, with its ns */
	EXPECT_EQ(0, nj_run_json(_metadata, all, &v));
	p = jv_find(&v, "pool", self->name);
	ASSERT_NE(NULL, p);
	EXPECT_NE(~0ULL, jv_u64(p, "ipc_ns"));
	EXPECT_NE(0, jv_u64(p, "ipc_ns"));
	jv_free(&v);
}

/* The line of @out that starts with @start, or NULL. */
static const char *njp_line(const char *out, const char *start)
{
	const char *l = out;
	size_t n = strlen(start);

	while (l && *l) {
		if (!strncmp(l, start, n))
			return l;
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	return NULL;
}

TEST_F_TIMEOUT(batonctl_pool, pool_text, 60)
{
	char *one[] = { "batonctl", "pool", self->name, NULL };
	char *list[] = { "batonctl", "list", NULL };
	unsigned int idx, size, count, free_, classes, bufs, nfree, holders;
	unsigned long long bytes, reclaimed, decayed;
	char title[BATON_NAME_MAX + 32], type[8], back[8], nm[BATON_NAME_MAX];
	char *o = NULL, *e = NULL;
	const char *l;
	int pid;

	EXPECT_EQ(0, nlt_batonctl(one, &o, &e));
	ASSERT_NE(NULL, o);
	snprintf(title, sizeof(title), "pool %s (kmod)\n", self->name);
	EXPECT_EQ(0, strncmp(o, title, strlen(title))) TH_LOG("%s", o);
	l = njp_line(o, "    holders ");
	ASSERT_NE(NULL, l) TH_LOG("%s", o);
	EXPECT_EQ(1, sscanf(l, " holders %u", &holders));
	EXPECT_EQ(1, holders);
	l = njp_line(o, "    data_size ");
	ASSERT_NE(NULL, l);
	EXPECT_EQ(1, sscanf(l, " data_size %llu", &bytes));
	EXPECT_EQ(NJP_DATA, bytes);
	l = njp_line(o, "    class index 0 ");
	ASSERT_NE(NULL, l) TH_LOG("%s", o);
	ASSERT_EQ(4, sscanf(l, " class index %u buf_size %u count %u free %u",
			    &idx, &size, &count, &free_));
	EXPECT_EQ(4096, size);
	EXPECT_EQ(NJP_SMALL, count);
	EXPECT_EQ(self->info.classes[0].free, free_);
	l = njp_line(o, "    class index 1 ");
	ASSERT_NE(NULL, l);
	ASSERT_EQ(4, sscanf(l, " class index %u buf_size %u count %u free %u",
			    &idx, &size, &count, &free_));
	EXPECT_EQ(16384, size);
	EXPECT_EQ(NJP_LARGE, free_);
	l = njp_line(o, "    peer ");
	ASSERT_NE(NULL, l);
	ASSERT_EQ(2, sscanf(l, " peer pid %d index %u", &pid, &idx));
	EXPECT_EQ(getpid(), pid);
	EXPECT_EQ(self->info.holder, idx);
	free(o);
	free(e);

	/* list: a pool heading, and the pool's row under it */
	EXPECT_EQ(0, nlt_batonctl(list, &o, &e));
	ASSERT_NE(NULL, o);
	EXPECT_NE(NULL, njp_line(o, "Type  Back  Name")) TH_LOG("%s", o);
	snprintf(title, sizeof(title), "pool  kmod  %s ", self->name);
	l = njp_line(o, title);
	ASSERT_NE(NULL, l) TH_LOG("%s", o);
	ASSERT_EQ(10, sscanf(l, "%7s %7s %63s %u %u %u %llu %u %llu %llu",
			     type, back, nm, &classes, &bufs, &nfree, &bytes,
			     &holders, &reclaimed, &decayed));
	EXPECT_STREQ(self->name, nm);
	EXPECT_EQ(2, classes);
	EXPECT_EQ(NJP_SMALL + NJP_LARGE, bufs);
	EXPECT_EQ(self->info.classes[0].free + NJP_LARGE, nfree);
	EXPECT_EQ(NJP_DATA, bytes);
	EXPECT_EQ(1, holders);
	EXPECT_EQ(0, reclaimed);
	EXPECT_EQ(0, decayed);
	free(o);
	free(e);
}

/* No holder left: stale; `unlink pool` removes it; then it is gone. */
TEST_F_TIMEOUT(batonctl_pool, stale_then_unlink_pool, 60)
{
	char *one[] = { "batonctl", "-j", "pool", self->name, NULL };
	char *unl[] = { "batonctl", "unlink", "pool", self->name, NULL };
	char *ring[] = { "batonctl", "unlink", self->name, NULL };
	char *o = NULL, *e = NULL;
	const struct jv *p;
	struct jv v;
	int i;

	for (i = 0; i < NJP_TAKEN; i++)
		ASSERT_EQ(0, baton_pool_free(self->pool, self->h[i]));
	baton_pool_close(self->pool);
	self->pool = NULL;
	EXPECT_EQ(0, nj_run_json(_metadata, one, &v));
	p = jv_find(&v, "pool", self->name);
	ASSERT_NE(NULL, p);
	EXPECT_EQ(1, jv_bool(p, "stale"));
	EXPECT_EQ(0, jv_u64(p, "holders"));
	EXPECT_EQ(NJP_SMALL, jv_u64(njp_class(p, 0), "free"));
	jv_free(&v);

	/* without a kind, unlink means a ring: no ring has that name */
	EXPECT_EQ(1, nlt_batonctl(ring, &o, &e));
	free(o);
	free(e);
	EXPECT_EQ(0, nlt_batonctl(unl, &o, &e)) TH_LOG("%s", e ? e : "");
	free(o);
	free(e);
	EXPECT_EQ(1, nj_run_json(_metadata, one, &v));
	EXPECT_EQ(JT_ARR, v.t);
	EXPECT_EQ(0, v.n);
	jv_free(&v);
	EXPECT_EQ(-ENOENT, baton_pool_unlink(self->name));
}

TEST_HARNESS_MAIN
