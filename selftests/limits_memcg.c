// SPDX-License-Identifier: GPL-2.0
/*
 * limits_memcg: ring and domain memory is charged to the memory cgroup of
 * the creator (Documentation/limits.rst, "Memory cgroups").
 *
 * Owns the checks: in a cgroup v2 with a small memory.max, a ring larger
 * than the limit is ENOMEM and nobody is OOM-killed (memory.events counts
 * no oom), memory.current rises by about the size of a ring or domain
 * that fits and falls back once it is freed, and the charge stays with
 * the creator's cgroup after the creator has exited, until the object is
 * freed from outside.
 *
 * "About": memory.current also moves by the per-CPU charge batches
 * (64 pages per CPU) and the small structs of the object, so sizes are
 * compared within BT_SLACK. The cgroup2 hierarchy is mounted here if the
 * VM has not; the test skips only if the kernel has no cgroup2 or no
 * memory controller.
 */
#include "common.h"

#include <sys/mount.h>

#define MIB		(1024UL * 1024)
#define CG_MAX		(32 * MIB)	/* the cgroup's memory.max */
#define BT_SLACK	(1 * MIB)

/* ---- cgroup files ---- */

static int cg_write(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -1;
}

static int cg_read(const char *dir, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

/* memory.current, or -1. */
static long cg_current(const char *dir)
{
	char buf[64];

	if (cg_read(dir, "memory.current", buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 10);
}

/* One "key value" line of a flat-keyed file such as memory.events. */
static long cg_key(const char *dir, const char *file, const char *key)
{
	char buf[1024], *p;
	size_t klen = strlen(key);

	if (cg_read(dir, file, buf, sizeof(buf)))
		return -1;
	for (p = buf; p && *p; ) {
		if (!strncmp(p, key, klen) && p[klen] == ' ')
			return strtol(p + klen + 1, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* Where cgroup2 is mounted, from /proc/self/mountinfo; 0 if found. */
static int cg2_mount_point(char *buf, size_t len)
{
	char line[1024], mnt[PATH_MAX], fstype[64];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int found = -1;

	if (!f)
		return -1;
	while (found && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(sep, " - %63s", fstype) != 1)
			continue;
		if (!strcmp(fstype, "cgroup2") &&
		    (size_t)snprintf(buf, len, "%s", mnt) < len)
			found = 0;
	}
	fclose(f);
	return found;
}

/* ---- raw create helpers ---- */

static int ep_create(int dev, const char *name, uint32_t maxp, uint32_t qlen,
		     struct baton_epoch_create *out)
{
	return _test_epoch_create(dev, name, maxp, qlen, 0600, out);
}

static long ring_bytes(const struct baton_ring_offsets *o)
{
	return (long)o->hdr_size + o->prod_size + o->cons_size + o->slots_size;
}

static long domain_bytes(const struct baton_epoch_offsets *o)
{
	return (long)o->hdr_size + o->table_size;
}

/* ---- what the child measures, in memory shared with the test ---- */

struct memcg_report {
	int step;			/* the step that failed, 0 if none */
	int big_errno;			/* create of a ring above memory.max */
	long before, after_refused;	/* memory.current around it */
	long ring, with_ring, without_ring;
	long domain, with_domain, without_domain;
	long kept;			/* the ring left for the test to free */
};

FIXTURE(memcg) {
	char root[256];
	char cg[512];
	bool mounted;
	bool enabled_memory;
	struct memcg_report *rep;
	char name[3][BATON_NAME_MAX];
};

FIXTURE_SETUP(memcg)
{
	char buf[256];
	int i;

	BT_REQUIRE_DEV();
	if (geteuid() != 0)
		SKIP(_exit(255), "needs root to make a cgroup");
	if (cg2_mount_point(self->root, sizeof(self->root))) {
		snprintf(self->root, sizeof(self->root), "/tmp/bt-cg2.%d",
			 (int)getpid());
		ASSERT_EQ(0, mkdir(self->root, 0755));
		if (mount("none", self->root, "cgroup2", 0, NULL)) {
			int err = errno;

			rmdir(self->root);
			if (err == ENODEV)
				SKIP(_exit(255), "no cgroup2 in this kernel");
			ASSERT_EQ(0, err);
		}
		self->mounted = true;
	}
	if (cg_read(self->root, "cgroup.controllers", buf, sizeof(buf)) ||
	    !strstr(buf, "memory"))
		SKIP(_exit(255), "no memory controller in cgroup2");
	ASSERT_EQ(0, cg_read(self->root, "cgroup.subtree_control", buf,
			     sizeof(buf)));
	if (!strstr(buf, "memory")) {
		ASSERT_EQ(0, cg_write(self->root, "cgroup.subtree_control",
				      "+memory"));
		self->enabled_memory = true;
	}
	ASSERT_GT(sizeof(self->cg),
		  (size_t)snprintf(self->cg, sizeof(self->cg),
				   "%s/baton-limits.%d", self->root,
				   (int)getpid()));
	ASSERT_EQ(0, mkdir(self->cg, 0755));
	snprintf(buf, sizeof(buf), "%lu", CG_MAX);
	ASSERT_EQ(0, cg_write(self->cg, "memory.max", buf));
	/* Nothing may leave through swap: what is charged stays charged. */
	cg_write(self->cg, "memory.swap.max", "0");

	self->rep = mmap(NULL, sizeof(*self->rep), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->rep);
	memset(self->rep, 0, sizeof(*self->rep));
	for (i = 0; i < 3; i++)
		bt_make_name(self->name[i], BATON_NAME_MAX, "memcg");
}

FIXTURE_TEARDOWN(memcg)
{
	int i, dev = bt_dev_open();

	for (i = 0; i < 3; i++) {
		_test_unlink(dev, self->name[i]);
		_test_epoch_unlink(dev, self->name[i]);
	}
	close(dev);
	rmdir(self->cg);
	if (self->enabled_memory)
		cg_write(self->root, "cgroup.subtree_control", "-memory");
	if (self->mounted) {
		umount(self->root);
		rmdir(self->root);
	}
}

#define STEP(n, cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "# memcg child: step %d failed: %s "	\
			"(errno %d)\n", n, #cond, errno);		\
		rep->step = n;						\
		return n;						\
	}								\
} while (0)

/*
 * In the cgroup: a 64 MiB ring (refused), an 8 MiB ring and a domain of
 * 6.25 MiB (created, measured, freed), then one more 8 MiB ring left in
 * the registry for the test.
 */
static int memcg_child(FIXTURE_DATA(memcg) *self)
{
	struct memcg_report *rep = self->rep;
	struct baton_ring_create r;
	struct baton_epoch_create d;
	const char *cg = self->cg;
	int dev;

	STEP(1, !cg_write(cg, "cgroup.procs", "0"));
	dev = bt_dev_open();
	STEP(2, dev >= 0);

	rep->before = cg_current(cg);
	rep->big_errno = _test_ring_create(dev, self->name[0],
					   BATON_ROLE_PRODUCER, 16384, 4096,
					   0600, NULL);
	rep->after_refused = cg_current(cg);

	STEP(3, !_test_ring_create(dev, self->name[0], BATON_ROLE_PRODUCER,
				   2048, 4096, 0600, &r));
	rep->ring = ring_bytes(&r.out_off);
	rep->with_ring = cg_current(cg);
	close(r.out_fd);
	STEP(4, !_test_unlink(dev, self->name[0]));
	rep->without_ring = cg_current(cg);

	STEP(5, !ep_create(dev, self->name[1], 64, 4096, &d));
	rep->domain = domain_bytes(&d.out_off);
	rep->with_domain = cg_current(cg);
	close(d.out_fd);
	STEP(6, !_test_epoch_unlink(dev, self->name[1]));
	rep->without_domain = cg_current(cg);

	STEP(7, !_test_ring_create(dev, self->name[2], BATON_ROLE_PRODUCER,
				   2048, 4096, 0600, &r));
	rep->kept = ring_bytes(&r.out_off);
	close(dev);
	return 0;
}

TEST_F(memcg, charged_to_creator)
{
	struct memcg_report *rep = self->rep;
	long held, freed;
	pid_t pid;
	int dev;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(memcg_child(self));
	ASSERT_EQ(0, bt_wait_timeout(pid, 60000));
	ASSERT_EQ(0, rep->step);

	/* Over memory.max: ENOMEM, nothing left charged, nobody killed. */
	EXPECT_EQ(ENOMEM, rep->big_errno);
	EXPECT_GT(BT_SLACK, labs(rep->after_refused - rep->before));
	EXPECT_EQ(0, cg_key(self->cg, "memory.events", "oom"));
	EXPECT_EQ(0, cg_key(self->cg, "memory.events", "oom_kill"));
	EXPECT_LT(0, cg_key(self->cg, "memory.events", "max")) {
		TH_LOG("the refused ring should have hit memory.max");
	}

	/* A ring that fits: up by about its size, and back down. */
	TH_LOG("ring %ld: before %ld, with %ld, without %ld", rep->ring,
	       rep->after_refused, rep->with_ring, rep->without_ring);
	EXPECT_GT(BT_SLACK,
		  labs(rep->with_ring - rep->after_refused - rep->ring));
	EXPECT_GT(BT_SLACK,
		  labs(rep->with_ring - rep->without_ring - rep->ring));

	TH_LOG("domain %ld: before %ld, with %ld, without %ld", rep->domain,
	       rep->without_ring, rep->with_domain, rep->without_domain);
	EXPECT_GT(BT_SLACK,
		  labs(rep->with_domain - rep->without_ring - rep->domain));
	EXPECT_GT(BT_SLACK,
		  labs(rep->with_domain - rep->without_domain - rep->domain));

	/*
	 * The creator is gone and its cgroup empty, but the ring it left in
	 * the registry is still charged there until someone frees it.
	 */
	held = cg_current(self->cg);
	EXPECT_LT(rep->kept - (long)BT_SLACK, held);
	dev = bt_dev_open();
	ASSERT_LE(0, dev);
	EXPECT_EQ(0, _test_unlink(dev, self->name[2]));
	close(dev);
	freed = cg_current(self->cg);
	TH_LOG("kept ring %ld: held %ld, after unlink %ld", rep->kept, held,
	       freed);
	EXPECT_GT(BT_SLACK, labs(held - freed - rep->kept));
}

TEST_HARNESS_MAIN
