// SPDX-License-Identifier: MIT
/*
 * batonctl_memfd: batonctl (lib/batonctl, the real binary) against the
 * memfd backend on the host, in the way a user meets it without the
 * module: an idle system, a name nobody has, the list's headings, a
 * ring and a domain left behind by a kill -9 (Documentation/batonctl.rst,
 * "Stale objects"), and a pool: geometry, free depth, holders by their
 * locks, stale, unlink.
 *
 * Each test runs in a mount namespace of its own with a fresh tmpfs on
 * /dev/shm, so what other programs leave in the host's /dev/shm neither
 * shows up nor gets touched; that needs root (CAP_SYS_ADMIN), else the
 * tests skip. Every JSON answer is parsed with jansson, a real parser,
 * not with string matching.
 */
#include "kselftest_harness.h"

#include <jansson.h>
#include <sched.h>
#include <sys/mount.h>

#include "common.h"
#include "baton_epoch.h"

#ifndef BATONCTL_PATH
#error "the Makefile passes BATONCTL_PATH, lib/batonctl"
#endif

#define NOBODY 65534

struct run {
	int status;		/* exit status, or -1 if it did not exit */
	char out[65536];
	char err[4096];
};

static void slurp(int fd, char *buf, size_t cap)
{
	size_t len = 0;
	ssize_t n;

	while (len + 1 < cap) {
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
}

/*
 * batonctl with @argv (NULL-terminated, argv[0] included), as @uid (0:
 * as we are). Outputs are small: stdout fits its pipe while we read
 * stderr after it.
 */
static void batonctl_as(uid_t uid, char *const argv[], struct run *r)
{
	int o[2], e[2], st;
	pid_t pid;

	r->status = -1;
	r->out[0] = r->err[0] = '\0';
	if (pipe(o) || pipe(e))
		return;
	pid = fork();
	if (pid == 0) {
		dup2(o[1], 1);
		dup2(e[1], 2);
		if (uid && (setgid(uid) || setuid(uid)))
			_exit(126);
		execv(BATONCTL_PATH, argv);
		_exit(127);
	}
	close(o[1]);
	close(e[1]);
	slurp(o[0], r->out, sizeof(r->out));
	slurp(e[0], r->err, sizeof(r->err));
	close(o[0]);
	close(e[0]);
	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st))
		r->status = WEXITSTATUS(st);
}

static void batonctl(char *const argv[], struct run *r)
{
	batonctl_as(0, argv, r);
}

/* The array batonctl -j printed, or NULL (logged) if it is not one. */
static json_t *parse_array(struct __test_metadata *_metadata, const char *s)
{
	json_error_t err;
	json_t *v = json_loads(s, 0, &err);

	if (!v || !json_is_array(v)) {
		TH_LOG("not a JSON array (line %d: %s): %s", err.line,
		       err.text, s);
		json_decref(v);
		return NULL;
	}
	return v;
}

/* The object of @obj ("ring", "epoch") named @name in @arr, or NULL. */
static json_t *find(json_t *arr, const char *obj, const char *name)
{
	size_t i;
	json_t *o;

	json_array_foreach(arr, i, o) {
		const char *n = json_string_value(json_object_get(o, "name"));
		const char *k = json_string_value(json_object_get(o, "object"));

		if (n && k && !strcmp(n, name) && !strcmp(k, obj))
			return o;
	}
	return NULL;
}

/* 1 stale, 0 not, -1 no boolean "stale" member. */
static int stale_of(json_t *o)
{
	json_t *s = json_object_get(o, "stale");

	return json_is_boolean(s) ? json_is_true(s) : -1;
}

static bool shm_has(const char *prefix, const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/dev/shm/%s%s", prefix, name);
	return access(path, F_OK) == 0;
}

FIXTURE(ctl) {
	char ring[BATON_NAME_MAX];
	char mpsc[BATON_NAME_MAX];
	char dom[BATON_NAME_MAX];
};

FIXTURE_SETUP(ctl)
{
	if (geteuid() || access(BATONCTL_PATH, X_OK))
		SKIP(_exit(255), "needs root and %s (make lib)", BATONCTL_PATH);
	if (!access("/dev/baton", F_OK))
		SKIP(_exit(255), "the module is loaded: batonctl would list its objects");
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("baton-test", "/dev/shm", "tmpfs", 0, "mode=1777,size=64m"))
		SKIP(_exit(255), "no private tmpfs on /dev/shm: %s",
		     strerror(errno));
	force_memfd();
	ring_name(self->ring, sizeof(self->ring), "ctl");
	ring_name(self->mpsc, sizeof(self->mpsc), "ctlm");
	ring_name(self->dom, sizeof(self->dom), "ctld");
}

FIXTURE_TEARDOWN(ctl)
{
}

static struct baton_ring_params spsc_params(void)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_SPSC, .slot_count = 16, .slot_size = 16,
		.mode = 0600, .backend = BATON_BACKEND_MEMFD,
	};

	return p;
}

static struct baton_epoch_params dom_params(void)
{
	struct baton_epoch_params p = {
		.max_participants = 4, .queue_len = 8, .mode = 0600,
		.backend = BATON_BACKEND_MEMFD,
	};

	return p;
}

/* An idle system: nothing to list is an empty answer, exit 0. */
TEST_F(ctl, idle_list_is_empty_and_fine)
{
	char *text[] = { "batonctl", "list", NULL };
	char *json[] = { "batonctl", "-j", "list", NULL };
	char *epochs[] = { "batonctl", "-j", "epoch", NULL };
	struct run r;
	json_t *v;

	batonctl(text, &r);
	EXPECT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	EXPECT_STREQ("", r.out);
	batonctl(json, &r);
	EXPECT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	v = parse_array(_metadata, r.out);
	ASSERT_NE(NULL, v);
	EXPECT_EQ(0U, json_array_size(v));
	json_decref(v);
	batonctl(epochs, &r);
	EXPECT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	v = parse_array(_metadata, r.out);
	ASSERT_NE(NULL, v);
	EXPECT_EQ(0U, json_array_size(v));
	json_decref(v);
}

/* -j show of a missing name: [] as batonctl.rst says, a message, exit 1. */
TEST_F(ctl, json_show_of_a_missing_name)
{
	char *show[] = { "batonctl", "-j", "show", "nosuch", NULL };
	char *epoch[] = { "batonctl", "-j", "epoch", "nosuch", NULL };
	char *text[] = { "batonctl", "show", "nosuch", NULL };
	struct run r;
	json_t *v;

	batonctl(show, &r);
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, "nosuch")) TH_LOG("stderr: %s", r.err);
	v = parse_array(_metadata, r.out);
	ASSERT_NE(NULL, v);
	EXPECT_EQ(0U, json_array_size(v));
	json_decref(v);

	batonctl(epoch, &r);
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, "nosuch")) TH_LOG("stderr: %s", r.err);
	v = parse_array(_metadata, r.out);
	ASSERT_NE(NULL, v);
	json_decref(v);

	/* text: nothing on stdout, the message on stderr */
	batonctl(text, &r);
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("", r.out);
	EXPECT_NE(NULL, strstr(r.err, "nosuch"));
}

TEST_F(ctl, version_and_help)
{
	char *version[] = { "batonctl", "--version", NULL };
	char *v[] = { "batonctl", "-V", NULL };
	char *help[] = { "batonctl", "--help", NULL };
	struct run r;

	batonctl(version, &r);
	EXPECT_EQ(0, r.status);
	EXPECT_EQ(0, strncmp(r.out, "batonctl ", 9)) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "ABI")) TH_LOG("%s", r.out);
	EXPECT_STREQ("", r.err);
	batonctl(v, &r);
	EXPECT_EQ(0, r.status);
	batonctl(help, &r);
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "--version"));
}

/*
 * The index in @out of the heading line (one starting with "Type") that
 * the line starting with @row falls under; -1 if none.
 */
static long heading_of(const char *out, const char *row)
{
	const char *at = strstr(out, row), *p, *h = NULL;

	if (!at || (at != out && at[-1] != '\n'))
		return -1;
	for (p = out; p && p < at; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (!strncmp(p, "Type", 4))
			h = p;
	return h ? h - out : -1;
}

/* Rings under the ring columns, domains under their own. */
TEST_F(ctl, list_has_a_heading_per_kind)
{
	struct baton_ring_params rp = spsc_params();
	struct baton_epoch_params ep = dom_params();
	char *list[] = { "batonctl", "list", NULL };
	char row[96], head[160];
	struct baton_epoch *d;
	struct baton_ring *ring;
	struct run r;
	long rh, dh;
	char *nl;

	ASSERT_EQ(0, baton_ring_create(self->ring, &rp, BATON_ROLE_PRODUCER,
				       &ring));
	ASSERT_EQ(0, baton_epoch_create(self->dom, &ep, &d));
	batonctl(list, &r);
	EXPECT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);

	snprintf(row, sizeof(row), "ring  memfd spsc %s ", self->ring);
	rh = heading_of(r.out, row);
	snprintf(row, sizeof(row), "epoch memfd %s ", self->dom);
	dh = heading_of(r.out, row);
	ASSERT_LE(0, rh) TH_LOG("no ring row under a heading:\n%s", r.out);
	ASSERT_LE(0, dh) TH_LOG("no domain row under a heading:\n%s", r.out);
	EXPECT_NE(rh, dh) TH_LOG("one heading for both:\n%s", r.out);

	snprintf(head, sizeof(head), "%s", r.out + rh);
	nl = strchr(head, '\n');
	if (nl)
		*nl = '\0';
	EXPECT_NE(NULL, strstr(head, "Slots")) TH_LOG("%s", head);
	snprintf(head, sizeof(head), "%s", r.out + dh);
	nl = strchr(head, '\n');
	if (nl)
		*nl = '\0';
	EXPECT_NE(NULL, strstr(head, "Global")) TH_LOG("%s", head);
	EXPECT_EQ(NULL, strstr(head, "Slots")) TH_LOG("%s", head);

	baton_epoch_close(d);
	baton_ring_close(ring);
	baton_epoch_unlink(self->dom, BATON_BACKEND_MEMFD);
	baton_ring_unlink(self->ring, BATON_BACKEND_MEMFD);
}

/*
 * A child creates an SPSC ring (producer), an MPSC ring (producer) and a
 * domain (registered), says so, and waits to be killed.
 */
static pid_t holder(struct __test_metadata *_metadata, FIXTURE_DATA(ctl) *self)
{
	struct baton_ring_params sp = spsc_params(), mp = spsc_params();
	struct baton_epoch_params ep = dom_params();
	struct baton_ring *a, *b;
	struct baton_epoch *d;
	int ready[2];
	pid_t pid;
	char c;

	mp.kind = BATON_RING_MPSC;
	mp.max_producers = 3;
	if (pipe(ready))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(ready[0]);
		if (baton_ring_create(self->ring, &sp, BATON_ROLE_PRODUCER, &a) ||
		    baton_ring_create(self->mpsc, &mp, BATON_ROLE_PRODUCER, &b) ||
		    baton_epoch_create(self->dom, &ep, &d) ||
		    baton_epoch_register(d) < 0)
			_exit(1);
		(void)!write(ready[1], "r", 1);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1) {
		TH_LOG("the holder could not create its objects");
		pid = -1;
	}
	close(ready[0]);
	return pid;
}

/* The stale member of each of the three objects, from one -j list. */
static void stale_marks(struct __test_metadata *_metadata,
			FIXTURE_DATA(ctl) *self, int out[3])
{
	char *list[] = { "batonctl", "-j", "list", NULL };
	struct run r;
	json_t *v;

	out[0] = out[1] = out[2] = -2;
	batonctl(list, &r);
	EXPECT_EQ(0, r.status) TH_LOG("stderr: %s", r.err);
	v = parse_array(_metadata, r.out);
	if (!v)
		return;
	out[0] = find(v, "ring", self->ring) ?
		 stale_of(find(v, "ring", self->ring)) : -2;
	out[1] = find(v, "ring", self->mpsc) ?
		 stale_of(find(v, "ring", self->mpsc)) : -2;
	out[2] = find(v, "epoch", self->dom) ?
		 stale_of(find(v, "epoch", self->dom)) : -2;
	json_decref(v);
}

/*
 * The Why of issue 12: after a kill -9 the name stays (create says
 * -EEXIST, on purpose: Documentation/memfd-backend.rst, "Stale
 * objects"), batonctl marks the objects stale, and batonctl unlink
 * removes them so the next create succeeds. While the holder lives,
 * nothing is stale.
 */
TEST_F(ctl, kill9_leaves_stale_objects_unlink_removes_them)
{
	struct baton_ring_params sp = spsc_params();
	struct baton_epoch_params ep = dom_params();
	char *unlink_ring[] = { "batonctl", "unlink", self->ring, NULL };
	char *unlink_mpsc[] = { "batonctl", "unlink", "ring", self->mpsc,
				NULL };
	char *unlink_dom[] = { "batonctl", "unlink", "epoch", self->dom,
			       NULL };
	char *text[] = { "batonctl", "list", NULL };
	char *show[] = { "batonctl", "show", self->ring, NULL };
	struct baton_epoch *d;
	struct baton_ring *r;
	struct run run;
	int marks[3];
	pid_t pid;

	pid = holder(_metadata, self);
	ASSERT_LT(0, pid);
	stale_marks(_metadata, self, marks);
	EXPECT_EQ(0, marks[0]);
	EXPECT_EQ(0, marks[1]);
	EXPECT_EQ(0, marks[2]);

	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));

	/* The names outlive their creator, as the module's do. */
	EXPECT_EQ(-EEXIST, baton_ring_create(self->ring, &sp,
					     BATON_ROLE_PRODUCER, &r));
	EXPECT_EQ(-EEXIST, baton_epoch_create(self->dom, &ep, &d));

	stale_marks(_metadata, self, marks);
	EXPECT_EQ(1, marks[0]);
	EXPECT_EQ(1, marks[1]);
	EXPECT_EQ(1, marks[2]);
	batonctl(text, &run);
	EXPECT_NE(NULL, strstr(run.out, " stale\n")) TH_LOG("%s", run.out);
	batonctl(show, &run);
	EXPECT_NE(NULL, strstr(run.out, "stale")) TH_LOG("%s", run.out);

	batonctl(unlink_ring, &run);
	EXPECT_EQ(0, run.status) TH_LOG("stderr: %s", run.err);
	batonctl(unlink_mpsc, &run);
	EXPECT_EQ(0, run.status) TH_LOG("stderr: %s", run.err);
	batonctl(unlink_dom, &run);
	EXPECT_EQ(0, run.status) TH_LOG("stderr: %s", run.err);
	EXPECT_FALSE(shm_has("baton.", self->ring));
	EXPECT_FALSE(shm_has("baton.", self->mpsc));
	EXPECT_FALSE(shm_has("baton-epoch.", self->dom));

	/* A second unlink: nobody has the name, exit 1 and why. */
	batonctl(unlink_ring, &run);
	EXPECT_EQ(1, run.status);
	EXPECT_NE(NULL, strstr(run.err, "No such file")) TH_LOG("%s", run.err);

	ASSERT_EQ(0, baton_ring_create(self->ring, &sp, BATON_ROLE_PRODUCER,
				       &r));
	ASSERT_EQ(0, baton_epoch_create(self->dom, &ep, &d));
	baton_epoch_close(d);
	baton_ring_close(r);
	baton_epoch_unlink(self->dom, BATON_BACKEND_MEMFD);
	baton_ring_unlink(self->ring, BATON_BACKEND_MEMFD);
}

/* A consumer alone keeps a ring live: any role holder does. */
TEST_F(ctl, any_role_holder_keeps_a_ring_live)
{
	struct baton_ring_params sp = spsc_params();
	struct baton_ring *p, *c;
	int marks[3];

	ASSERT_EQ(0, baton_ring_create(self->ring, &sp, BATON_ROLE_PRODUCER,
				       &p));
	ASSERT_EQ(0, baton_ring_open(self->ring, BATON_ROLE_CONSUMER,
				     BATON_BACKEND_MEMFD, &c));
	baton_ring_close(p);
	stale_marks(_metadata, self, marks);
	EXPECT_EQ(0, marks[0]);
	baton_ring_close(c);
	stale_marks(_metadata, self, marks);
	EXPECT_EQ(1, marks[0]);
	baton_ring_unlink(self->ring, BATON_BACKEND_MEMFD);
}

/*
 * The module's rule: only the owner (or root) may unlink. Nobody may
 * open a 0666 ring but not remove root's name.
 */
TEST_F(ctl, unlink_is_for_the_owner)
{
	struct baton_ring_params sp = spsc_params();
	char *unl[] = { "batonctl", "unlink", self->ring, NULL };
	struct baton_ring *r;
	struct run run;

	sp.mode = 0666;
	ASSERT_EQ(0, baton_ring_create(self->ring, &sp, BATON_ROLE_PRODUCER,
				       &r));
	baton_ring_close(r);
	batonctl_as(NOBODY, unl, &run);
	EXPECT_EQ(1, run.status);
	EXPECT_NE(NULL, strstr(run.err, "Permission denied"))
		TH_LOG("stderr: %s", run.err);
	EXPECT_TRUE(shm_has("baton.", self->ring));
	batonctl(unl, &run);
	EXPECT_EQ(0, run.status) TH_LOG("stderr: %s", run.err);
	EXPECT_FALSE(shm_has("baton.", self->ring));
}

/* Pretty JSON is the same JSON, and every member a reader needs is there. */
TEST_F(ctl, pretty_json_parses)
{
	struct baton_ring_params sp = spsc_params();
	struct baton_epoch_params ep = dom_params();
	char *list[] = { "batonctl", "-j", "-p", "list", NULL };
	struct baton_epoch *d;
	struct baton_ring *r;
	struct run run;
	json_t *v, *o;

	ASSERT_EQ(0, baton_ring_create(self->ring, &sp, BATON_ROLE_PRODUCER,
				       &r));
	ASSERT_EQ(0, baton_epoch_create(self->dom, &ep, &d));
	batonctl(list, &run);
	EXPECT_EQ(0, run.status);
	v = parse_array(_metadata, run.out);
	ASSERT_NE(NULL, v);
	EXPECT_EQ(2U, json_array_size(v));
	o = find(v, "ring", self->ring);
	ASSERT_NE(NULL, o);
	EXPECT_STREQ("memfd", json_string_value(json_object_get(o, "backend")));
	EXPECT_EQ(16, json_integer_value(json_object_get(o, "slot_count")));
	EXPECT_EQ(1, json_integer_value(json_object_get(o, "producers")));
	EXPECT_EQ(0, stale_of(o));
	o = find(v, "epoch", self->dom);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(4, json_integer_value(json_object_get(o, "max_participants")));
	/* never registered, but its creator holds it open: not stale */
	EXPECT_EQ(0, stale_of(o));
	json_decref(v);
	baton_epoch_close(d);
	baton_ring_close(r);
	/* now nobody holds either */
	batonctl(list, &run);
	v = parse_array(_metadata, run.out);
	ASSERT_NE(NULL, v);
	EXPECT_EQ(1, stale_of(find(v, "ring", self->ring)));
	EXPECT_EQ(1, stale_of(find(v, "epoch", self->dom)));
	json_decref(v);
}

/* Field @key of class @index in a pool object's "classes", or -1. */
static json_int_t pool_class_field(json_t *pool, json_int_t index,
				   const char *key)
{
	json_t *c, *f;
	size_t i;

	json_array_foreach(json_object_get(pool, "classes"), i, c)
		if (json_integer_value(json_object_get(c, "index")) == index) {
			f = json_object_get(c, key);
			return f ? json_integer_value(f) : -1;
		}
	return -1;
}

static json_int_t pool_free(json_t *pool, json_int_t index)
{
	return pool_class_field(pool, index, "free");
}

static bool has_string(json_t *arr, const char *s)
{
	json_t *v;
	size_t i;

	json_array_foreach(arr, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), s))
			return true;
	return false;
}

/*
 * A memfd pool: its header's geometry and counters, each class's free
 * depth (as the library sees it), holders counted by their locks (a
 * killed holder's lock is gone at once, whatever the header still says),
 * what the backend cannot know listed, stale once nobody holds it, and
 * `unlink pool` removes its file.
 */
TEST_F(ctl, memfd_pool_shown_then_stale_then_unlinked)
{
	struct baton_pool_params p = {
		.nr_classes = 2, .max_holders = 4, .mode = 0640,
		.classes = { { 12, 32 }, { 14, 4 } },
	};
	char *one[] = { "batonctl", "-j", "pool", self->ring, NULL };
	char *list[] = { "batonctl", "-j", "list", NULL };
	char *text[] = { "batonctl", "list", NULL };
	char *unl[] = { "batonctl", "unlink", "pool", self->ring, NULL };
	struct baton_pool_info info;
	struct baton_pool *pool, *other;
	uint64_t h[5];
	struct run run;
	json_t *arr, *o;
	pid_t pid;
	int i, sync[2];

	ASSERT_EQ(0, baton_pool_create(self->ring, &p, &pool));
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, baton_pool_alloc(pool, 4096, &h[i]));
	ASSERT_EQ(0, baton_pool_info(pool, &info));

	/* a second holder that dies */
	ASSERT_EQ(0, pipe(sync));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char c = 1;

		if (baton_pool_open(self->ring, &other))
			_exit(3);
		if (write(sync[1], &c, 1) != 1)
			_exit(4);
		pause();
		_exit(5);
	}
	{
		char c;

		ASSERT_EQ(1, read(sync[0], &c, 1));
	}
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));

	batonctl(one, &run);
	EXPECT_EQ(0, run.status) TH_LOG("stderr: %s", run.err);
	arr = parse_array(_metadata, run.out);
	ASSERT_NE(NULL, arr);
	o = find(arr, "pool", self->ring);
	ASSERT_NE(NULL, o) TH_LOG("%s", run.out);
	EXPECT_STREQ("memfd", json_string_value(json_object_get(o, "backend")));
	EXPECT_EQ(0, stale_of(o));
	EXPECT_EQ(0640, json_integer_value(json_object_get(o, "mode")));
	EXPECT_EQ(2, json_integer_value(json_object_get(o, "nr_classes")));
	EXPECT_EQ(4, json_integer_value(json_object_get(o, "max_holders")));
	EXPECT_EQ(32 * 4096 + 4 * 16384,
		  json_integer_value(json_object_get(o, "data_size")));
	EXPECT_EQ(1, json_integer_value(json_object_get(o, "holders")));
	EXPECT_EQ((json_int_t)info.classes[0].free, pool_free(o, 0));
	EXPECT_EQ(32 - 5 - (json_int_t)info.classes[0].cached,
		  pool_free(o, 0));
	EXPECT_EQ(4, pool_free(o, 1));
	EXPECT_EQ(0, pool_class_field(o, 0, "cold"));
	EXPECT_EQ(NULL, json_object_get(o, "peers"));
	EXPECT_TRUE(has_string(json_object_get(o, "unavailable"), "peers"));
	json_decref(arr);

	batonctl(list, &run);
	EXPECT_EQ(0, run.status);
	arr = parse_array(_metadata, run.out);
	ASSERT_NE(NULL, arr);
	EXPECT_NE(NULL, find(arr, "pool", self->ring));
	json_decref(arr);

	/* nobody holds it: stale, in JSON and in the list's Flags */
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, baton_pool_free(pool, h[i]));
	baton_pool_close(pool);
	batonctl(one, &run);
	arr = parse_array(_metadata, run.out);
	ASSERT_NE(NULL, arr);
	o = find(arr, "pool", self->ring);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(1, stale_of(o));
	EXPECT_EQ(0, json_integer_value(json_object_get(o, "holders")));
	json_decref(arr);
	batonctl(text, &run);
	EXPECT_NE(NULL, strstr(run.out, "pool  memfd ")) TH_LOG("%s", run.out);
	EXPECT_NE(NULL, strstr(run.out, " stale\n")) TH_LOG("%s", run.out);

	batonctl(unl, &run);
	EXPECT_EQ(0, run.status) TH_LOG("stderr: %s", run.err);
	EXPECT_FALSE(shm_has("baton-pool.", self->ring));
	batonctl(one, &run);
	EXPECT_EQ(1, run.status);
	EXPECT_STREQ("[]\n", run.out);
	close(sync[0]);
	close(sync[1]);
}

/*
 * A member of the ring @name in batonctl -j show: its integer value, or
 * -1 (logged) when batonctl or its JSON failed.
 */
static long long ring_member(struct __test_metadata *_metadata,
			     const char *name, const char *member)
{
	char *show[] = { "batonctl", "-j", "show", (char *)name, NULL };
	long long n = -1;
	struct run r;
	json_t *v, *o;

	batonctl(show, &r);
	v = parse_array(_metadata, r.out);
	o = v ? find(v, "ring", name) : NULL;
	if (o && json_is_integer(json_object_get(o, member)))
		n = json_integer_value(json_object_get(o, member));
	else
		TH_LOG("no %s (status %d): %s", member, r.status, r.err);
	json_decref(v);
	return n;
}

/* Until show's @member of ring @name is @want, 10 s at most: its value. */
static long long ring_member_becomes(struct __test_metadata *_metadata,
				     const char *name, const char *member,
				     long long want)
{
	long long n = -1;
	int i;

	for (i = 0; i < 1000; i++) {
		n = ring_member(_metadata, name, member);
		if (n == want)
			break;
		usleep(10000);
	}
	return n;
}

/*
 * An MPSC producer parked on a full memfd ring is one parked producer.
 * The producers' word there is a summary, their number above the
 * PARKED bit (lib/internal.h); batonctl used to print the raw word
 * (capped at max_producers): 5 for one parker.
 */
TEST_F(ctl, mpsc_parked_producers_are_counted)
{
	struct baton_ring_params p = {
		.kind = BATON_RING_MPSC, .slot_count = 16, .slot_size = 16,
		.max_producers = 8, .mode = 0600,
		.backend = BATON_BACKEND_MEMFD,
	};
	uint64_t m[2] = { 1, 2 };
	struct baton_ring *c, *pr;
	pid_t pid;
	int i;

	ASSERT_EQ(0, baton_ring_create(self->mpsc, &p, BATON_ROLE_CONSUMER,
				       &c));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (baton_ring_open(self->mpsc, BATON_ROLE_PRODUCER,
				    BATON_BACKEND_MEMFD, &pr))
			_exit(1);
		for (i = 0; i < 16; i++)
			if (baton_mpsc_push_timeout(pr, m, sizeof(m), 0))
				_exit(2);
		/* full: parks until the test kills it */
		baton_mpsc_push_timeout(pr, m, sizeof(m), -1);
		_exit(3);
	}
	EXPECT_EQ(1, ring_member_becomes(_metadata, self->mpsc,
					 "parked_producers", 1));
	EXPECT_EQ(1, ring_member(_metadata, self->mpsc, "producers"));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	baton_ring_close(c);
}

/*
 * A consumer killed while parked leaves its word armed; the producer's
 * next push wakes it, which takes PARKED down and leaves the park's
 * generation in the word. Nobody is parked then: batonctl used to count
 * any non-zero word as a parked consumer.
 */
TEST_F(ctl, a_dead_parkers_word_is_not_a_parked_consumer)
{
	struct baton_ring_params p = spsc_params();
	struct baton_ring *prod, *cons;
	uint64_t m[2] = { 1, 2 };
	pid_t pid;

	ASSERT_EQ(0, baton_ring_create(self->ring, &p, BATON_ROLE_PRODUCER,
				       &prod));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (baton_ring_open(self->ring, BATON_ROLE_CONSUMER,
				    BATON_BACKEND_MEMFD, &cons))
			_exit(1);
		baton_spsc_pop(cons, m, sizeof(m), -1);	/* parks */
		_exit(2);
	}
	ASSERT_EQ(1, ring_member_becomes(_metadata, self->ring,
					 "parked_consumers", 1));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ASSERT_EQ(0, baton_spsc_push(prod, m, sizeof(m), 0));
	EXPECT_EQ(0, ring_member(_metadata, self->ring, "consumers"));
	EXPECT_EQ(0, ring_member(_metadata, self->ring, "parked_consumers"));
	baton_ring_close(prod);
}

/*
 * batonctl's answer is its standard output: when that cannot be written
 * (a full disk, here /dev/full), it exits 1 and says why, never 0 with
 * the answer lost.
 */
TEST_F(ctl, an_unwritable_stdout_is_an_error)
{
	char *list[] = { "batonctl", "-j", "list", NULL };
	char err[4096];
	int e[2], full, st;
	pid_t pid;

	full = open("/dev/full", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, full);
	ASSERT_EQ(0, pipe(e));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		dup2(full, 1);
		dup2(e[1], 2);
		execv(BATONCTL_PATH, list);
		_exit(127);
	}
	close(e[1]);
	slurp(e[0], err, sizeof(err));
	close(e[0]);
	close(full);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(1, WEXITSTATUS(st));
	EXPECT_NE(NULL, strstr(err, "batonctl: ")) TH_LOG("stderr: %s", err);
}

/*
 * show of a name whose file is there but fails the checks: reported as
 * such (as list reports it), not as a name nobody has.
 */
TEST_F(ctl, show_of_an_unreadable_file_says_so)
{
	struct baton_ring_params p = spsc_params();
	char *show[] = { "batonctl", "show", self->ring, NULL };
	char path[128];
	struct baton_ring *r;
	struct run run;

	ASSERT_EQ(0, baton_ring_create(self->ring, &p, BATON_ROLE_PRODUCER,
				       &r));
	baton_ring_close(r);
	snprintf(path, sizeof(path), "/dev/shm/baton.%s", self->ring);
	ASSERT_EQ(0, truncate(path, 100));
	batonctl(show, &run);
	EXPECT_EQ(1, run.status);
	EXPECT_NE(NULL, strstr(run.err, "not a readable baton object"))
		TH_LOG("stderr: %s", run.err);
}

TEST_HARNESS_MAIN
