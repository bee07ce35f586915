// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection on every ioctl and mmap path of the module: for one
 * call at a time, fail its n-th allocation for n = 1, 2, ... until a run
 * of the call no longer reaches the n-th one (then it must succeed).
 *
 * The tool is /proc/thread-self/fail-nth (Documentation/fault-injection/
 * fault-injection.rst): writing n makes the n-th fault point this thread
 * passes fail; reading it back gives 0 once the fault was injected, or
 * what is left of n if the call passed fewer points. The fault points are
 * failslab (every slab allocation) and fail_page_alloc (every page
 * allocation), whose debugfs filters are opened here for the duration of
 * each test: ignore-gfp-wait N (GFP_KERNEL sleeps, and is what the module
 * uses), min-order 0 (single pages: the ring memory), and verbose 1 (one
 * line per injection, no stack dump that the VM runner would count as a
 * kernel report). probability stays 0, so nothing else in the system is
 * failed. A fault point is any allocation the call makes, the module's
 * and the kernel's own on its behalf (the vma, the file, the dentry, the
 * page tables, kmemleak's and KASAN's metadata).
 *
 * Each injected failure must give ENOMEM (the errno Documentation/abi.rst
 * gives for "out of memory"; mmap(2) says the same) or be absorbed (the
 * call succeeds: a fallback took over), and leave nothing behind:
 *  - a name that failed to be created can be created afterwards, and one
 *    that failed to be unlinked is still there;
 *  - a failed open or register leaves the role and participant counts
 *    (RING_IOC_INFO, the domain header) as they were;
 *  - a failed mmap leaves the process's vma count as it was;
 *  - once everything of an iteration is closed, the module's reference
 *    count (/sys/module/baton/refcnt: every ring or domain file pins it)
 *    is back at its baseline.
 * A leaked object the counts cannot see is kmemleak's (the debug VM run
 * scans after rmmod), a leaked mm-set entry trips the module's own
 * WARN_ON at free. The last, successful run of every path shows the
 * device still works.
 *
 * Output: one "# fault points" line per path and a total at exit. On a
 * kernel without CONFIG_FAULT_INJECTION (the Debian one) every test skips.
 */
#include "common.h"

#define FI_NTH		"/proc/thread-self/fail-nth"
#define FI_DEBUGFS	"/sys/kernel/debug"
#define FI_REFCNT	"/sys/module/baton/refcnt"
#define FI_MAX_N	2000	/* no path comes near; a loop that does is stuck */
#define FI_SLOTS	8
#define FI_SLOT_SIZE	64
#define FI_PRODUCERS	2
#define FI_PARTS	2
#define FI_QUEUE	16

/* The paths share one signature; not all of them use both arguments. */
#define FI_UNUSED	__attribute__((unused))

/* What one iteration made; torn down whatever happened. */
struct fi_obj {
	int dev;
	char name[BATON_NAME_MAX];
	bool ring_named, domain_named, pool_named;
	int fd;				/* the fd the call acts on */
	int peer;			/* keeps the ring's other role */
	int out_fd;			/* what a create/open under test made */
	struct baton_ring_offsets roff;
	struct baton_epoch_offsets eoff;
	volatile struct baton_epoch_hdr *ehdr;	/* read-only, for counts */
	struct baton_pool_hdr phdr;	/* a copy, for the pool's regions */
	void *map;			/* what an mmap under test made */
	size_t map_len;
	int vmas;			/* vma count before the call */
};

enum fi_region {
	FI_R_HDR, FI_R_PROD, FI_R_CONS, FI_R_SLOTS, FI_R_SEQ, FI_R_CLAIM,
	FI_E_HDR, FI_E_SELF, FI_E_TABLE,
	FI_P_HDR, FI_P_CTL, FI_P_DATA,
};

struct fi_path {
	const char *name;
	/* Outside injection: what the call needs. 0 or a step number. */
	int (*setup)(const struct fi_path *p, struct fi_obj *o);
	/* The call under injection: 0 or a positive errno. */
	int (*call)(const struct fi_path *p, struct fi_obj *o);
	/* After an injected failure: nothing left behind. 0 or a step. */
	int (*check)(const struct fi_path *p, struct fi_obj *o);
	int want;		/* the call's result without a fault */
	/*
	 * It allocates (an object, a file, a vma): an injection run must
	 * reach at least one fault point, or fail-nth did nothing.
	 */
	bool allocates;
	uint32_t kind, role;	/* ring paths */
	enum fi_region region;	/* mmap paths */
};

/* Fault points per path and in all, shared by the forked tests. */
struct fi_totals {
	unsigned int paths;
	unsigned int points;
	unsigned int absorbed;	/* injected, and the call still succeeded */
};
static struct fi_totals *fi_totals;

static void fi_print_totals(void)
{
	if (fi_totals && fi_totals->paths)
		printf("# fault_inject: %u fault points over %u paths (%u absorbed by a fallback)\n",
		       fi_totals->points, fi_totals->paths,
		       fi_totals->absorbed);
}

static void __attribute__((constructor)) fi_totals_init(void)
{
	void *p = mmap(NULL, sizeof(*fi_totals), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED)
		fi_totals = p;
	atexit(fi_print_totals);
}

/* ---- small helpers ---- */

static int fi_read_int(const char *path, long *val)
{
	char buf[32];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	*val = strtol(buf, NULL, 10);
	return 0;
}

static long fi_refcnt(void)
{
	long v;

	return fi_read_int(FI_REFCNT, &v) ? -1 : v;
}

static int fi_vma_count(void)
{
	char buf[4096];
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	int lines = 0;
	ssize_t n, i;

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (i = 0; i < n; i++)
			lines += buf[i] == '\n';
	close(fd);
	return lines;
}

static int fi_write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* The debugfs knobs set for the test, and their values before it. */
static const char *const fi_knob_names[] = {
	"failslab/ignore-gfp-wait",
	"failslab/task-filter",
	"failslab/verbose",
	"fail_page_alloc/ignore-gfp-wait",
	"fail_page_alloc/task-filter",
	"fail_page_alloc/min-order",
	"fail_page_alloc/verbose",
};
static const char *const fi_knob_values[] = {
	"N", "N", "1", "N", "N", "0", "1",
};
#define FI_NR_KNOBS	(sizeof(fi_knob_names) / sizeof(fi_knob_names[0]))

struct fi_knobs {
	char old[FI_NR_KNOBS][16];
	bool saved[FI_NR_KNOBS];
};

static void fi_knob_path(char *buf, size_t len, size_t i)
{
	snprintf(buf, len, "%s/%s", FI_DEBUGFS, fi_knob_names[i]);
}

/* 0, or the index + 1 of the knob that could not be set. */
static int fi_knobs_set(struct fi_knobs *k)
{
	char path[128];
	size_t i;

	for (i = 0; i < FI_NR_KNOBS; i++) {
		int fd;
		ssize_t n;

		fi_knob_path(path, sizeof(path), i);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return i + 1;
		n = read(fd, k->old[i], sizeof(k->old[i]) - 1);
		close(fd);
		if (n <= 0)
			return i + 1;
		k->old[i][n] = 0;
		k->saved[i] = true;
		if (fi_write_str(path, fi_knob_values[i]))
			return i + 1;
	}
	return 0;
}

static void fi_knobs_restore(struct fi_knobs *k)
{
	char path[128];
	size_t i;

	for (i = 0; i < FI_NR_KNOBS; i++) {
		if (!k->saved[i])
			continue;
		fi_knob_path(path, sizeof(path), i);
		k->old[i][strcspn(k->old[i], "\n")] = 0;
		fi_write_str(path, k->old[i]);
	}
}

/* ---- building blocks of the paths ---- */

static int fi_ring_create(struct fi_obj *o, uint32_t kind, uint32_t role,
			  int *fd)
{
	struct baton_ring_create c;
	int rc;

	bt_create_init(&c, o->name, role, FI_SLOTS, FI_SLOT_SIZE, 0600);
	c.kind = kind;
	c.max_producers = kind == BATON_RING_MPSC ? FI_PRODUCERS : 0;
	rc = bt_ioctl(o->dev, BATON_IOC_RING_CREATE, &c);
	if (!rc) {
		*fd = c.out_fd;
		o->roff = c.out_off;
		o->ring_named = true;
	}
	return rc;
}

static int fi_ring_open(struct fi_obj *o, uint32_t role, int *fd)
{
	struct baton_ring_open op;
	int rc = _test_ring_open(o->dev, o->name, role, &op);

	if (!rc)
		*fd = op.out_fd;
	return rc;
}

static uint32_t fi_other(uint32_t role)
{
	return role == BATON_ROLE_PRODUCER ? BATON_ROLE_CONSUMER :
					     BATON_ROLE_PRODUCER;
}

static int fi_domain_create(struct fi_obj *o, int *fd)
{
	struct baton_epoch_create c;
	int rc;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.max_participants = FI_PARTS;
	c.queue_len = FI_QUEUE;
	c.mode = 0600;
	snprintf(c.name, sizeof(c.name), "%s", o->name);
	rc = bt_ioctl(o->dev, BATON_IOC_EPOCH_CREATE, &c);
	if (!rc) {
		*fd = c.out_fd;
		o->eoff = c.out_off;
		o->domain_named = true;
	}
	return rc;
}

/* Two classes, a decay timer: every allocation create and release make. */
static int fi_pool_create(struct fi_obj *o, int *fd)
{
	struct baton_pool_create k;
	void *h;
	int rc;

	memset(&k, 0, sizeof(k));
	k.size = sizeof(k);
	k.mode = 0600;
	k.nr_classes = 2;
	k.max_holders = 4;
	k.decay_ms = 50;
	k.classes[0].buf_shift = 12;
	k.classes[0].count = 16;
	k.classes[1].buf_shift = 16;
	k.classes[1].count = 4;
	snprintf(k.name, sizeof(k.name), "%s", o->name);
	rc = bt_ioctl(o->dev, BATON_IOC_POOL_CREATE, &k);
	if (rc)
		return rc;
	*fd = k.out_fd;
	o->pool_named = true;
	/* Outside injection only: the region offsets for the mmap paths. */
	h = mmap(NULL, BT_PAGE, PROT_READ, MAP_SHARED, k.out_fd,
		 BATON_POOL_HDR_MMAP);
	if (h != MAP_FAILED) {
		memcpy(&o->phdr, h, sizeof(o->phdr));
		munmap(h, BT_PAGE);
	}
	return 0;
}

static int fi_unlink(struct fi_obj *o, unsigned long cmd)
{
	struct baton_unlink u;

	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	snprintf(u.name, sizeof(u.name), "%s", o->name);
	return bt_ioctl(o->dev, cmd, &u);
}

static int fi_register(int fd, uint32_t *index)
{
	struct baton_epoch_register r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	rc = bt_ioctl(fd, BATON_EPOCH_IOC_REGISTER, &r);
	if (!rc && index)
		*index = r.out_index;
	return rc;
}

/* The domain header, read-only, for the participant count. */
static int fi_map_ehdr(struct fi_obj *o)
{
	void *p = mmap(NULL, o->eoff.hdr_size, PROT_READ, MAP_SHARED, o->fd,
		       (off_t)o->eoff.hdr_mmap);

	if (p == MAP_FAILED)
		return -1;
	o->ehdr = p;
	return 0;
}

/* ---- setups ---- */

static int fi_setup_none(const struct fi_path *p FI_UNUSED,
                         struct fi_obj *o FI_UNUSED)
{
	return 0;
}

/* A ring; o->fd has p->role, o->peer the other role. */
static int fi_setup_ring(const struct fi_path *p FI_UNUSED,
                         struct fi_obj *o FI_UNUSED)
{
	if (fi_ring_create(o, p->kind, p->role, &o->fd))
		return 1;
	if (fi_ring_open(o, fi_other(p->role), &o->peer))
		return 2;
	return 0;
}

/* A ring with only p->role's other side, for opening p->role. */
static int fi_setup_ring_for_open(const struct fi_path *p FI_UNUSED,
                                  struct fi_obj *o FI_UNUSED)
{
	return fi_ring_create(o, p->kind, fi_other(p->role), &o->peer) ? 1 : 0;
}

/* A named ring with no fd left. */
static int fi_setup_ring_closed(const struct fi_path *p FI_UNUSED,
                                struct fi_obj *o FI_UNUSED)
{
	int fd;

	if (fi_ring_create(o, p->kind, BATON_ROLE_CONSUMER, &fd))
		return 1;
	close(fd);
	return 0;
}

static int fi_setup_domain(const struct fi_path *p FI_UNUSED,
                           struct fi_obj *o FI_UNUSED)
{
	if (fi_domain_create(o, &o->fd))
		return 1;
	return fi_map_ehdr(o) ? 2 : 0;
}

static int fi_setup_domain_registered(const struct fi_path *p FI_UNUSED,
                                      struct fi_obj *o FI_UNUSED)
{
	int ret = fi_setup_domain(p, o);

	if (ret)
		return ret;
	return fi_register(o->fd, NULL) ? 3 : 0;
}

static int fi_setup_domain_closed(const struct fi_path *p FI_UNUSED,
                                  struct fi_obj *o FI_UNUSED)
{
	int fd;

	if (fi_domain_create(o, &fd))
		return 1;
	close(fd);
	return 0;
}

static int fi_setup_pool(const struct fi_path *p FI_UNUSED,
                         struct fi_obj *o FI_UNUSED)
{
	return fi_pool_create(o, &o->fd) ? 1 : 0;
}

static int fi_setup_pool_closed(const struct fi_path *p FI_UNUSED,
                                struct fi_obj *o FI_UNUSED)
{
	int fd;

	if (fi_pool_create(o, &fd))
		return 1;
	close(fd);
	return 0;
}

/* ---- calls ---- */

static int fi_call_version(const struct fi_path *p FI_UNUSED,
                           struct fi_obj *o FI_UNUSED)
{
	struct baton_version v;

	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	return bt_ioctl(o->dev, BATON_IOC_VERSION, &v);
}

static int fi_call_ring_create(const struct fi_path *p FI_UNUSED,
                               struct fi_obj *o FI_UNUSED)
{
	return fi_ring_create(o, p->kind, p->role, &o->out_fd);
}

static int fi_call_ring_open(const struct fi_path *p FI_UNUSED,
                             struct fi_obj *o FI_UNUSED)
{
	return fi_ring_open(o, p->role, &o->out_fd);
}

static int fi_call_ring_unlink(const struct fi_path *p FI_UNUSED,
                               struct fi_obj *o FI_UNUSED)
{
	int rc = fi_unlink(o, BATON_IOC_UNLINK);

	if (!rc)
		o->ring_named = false;
	return rc;
}

/* Consumer of an empty ring, deadline already passed: ETIMEDOUT. */
static int fi_call_park(const struct fi_path *p FI_UNUSED,
                        struct fi_obj *o FI_UNUSED)
{
	return _test_park(o->fd, BATON_PARK_DEADLINE, 0, 0);
}

static int fi_call_wake(const struct fi_path *p FI_UNUSED,
                        struct fi_obj *o FI_UNUSED)
{
	return _test_wake(o->fd);
}

static int fi_call_info(const struct fi_path *p FI_UNUSED,
                        struct fi_obj *o FI_UNUSED)
{
	struct baton_ring_info info;

	return _test_info(o->fd, &info);
}

static int fi_call_epoch_create(const struct fi_path *p FI_UNUSED,
                                struct fi_obj *o FI_UNUSED)
{
	return fi_domain_create(o, &o->out_fd);
}

static int fi_call_epoch_open(const struct fi_path *p FI_UNUSED,
                              struct fi_obj *o FI_UNUSED)
{
	struct baton_epoch_open op;
	int rc;

	memset(&op, 0, sizeof(op));
	op.size = sizeof(op);
	snprintf(op.name, sizeof(op.name), "%s", o->name);
	rc = bt_ioctl(o->dev, BATON_IOC_EPOCH_OPEN, &op);
	if (!rc)
		o->out_fd = op.out_fd;
	return rc;
}

static int fi_call_epoch_unlink(const struct fi_path *p FI_UNUSED,
                                struct fi_obj *o FI_UNUSED)
{
	int rc = fi_unlink(o, BATON_IOC_EPOCH_UNLINK);

	if (!rc)
		o->domain_named = false;
	return rc;
}

static int fi_call_pool_create(const struct fi_path *p FI_UNUSED,
                               struct fi_obj *o FI_UNUSED)
{
	return fi_pool_create(o, &o->out_fd);
}

static int fi_call_pool_open(const struct fi_path *p FI_UNUSED,
                             struct fi_obj *o FI_UNUSED)
{
	struct baton_pool_open op;
	int rc;

	memset(&op, 0, sizeof(op));
	op.size = sizeof(op);
	snprintf(op.name, sizeof(op.name), "%s", o->name);
	rc = bt_ioctl(o->dev, BATON_IOC_POOL_OPEN, &op);
	if (!rc)
		o->out_fd = op.out_fd;
	return rc;
}

static int fi_call_pool_unlink(const struct fi_path *p FI_UNUSED,
                               struct fi_obj *o FI_UNUSED)
{
	int rc = fi_unlink(o, BATON_IOC_POOL_UNLINK);

	if (!rc)
		o->pool_named = false;
	return rc;
}

/* A ticket whose entry is published: "it moved", 0. */
static int fi_call_pool_unstick(const struct fi_path *p FI_UNUSED,
                                struct fi_obj *o FI_UNUSED)
{
	struct baton_pool_unstick u;

	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	return bt_ioctl(o->fd, BATON_POOL_IOC_UNSTICK, &u);
}

static int fi_call_register(const struct fi_path *p FI_UNUSED,
                            struct fi_obj *o FI_UNUSED)
{
	return fi_register(o->fd, NULL);
}

static int fi_call_collect(const struct fi_path *p FI_UNUSED,
                           struct fi_obj *o FI_UNUSED)
{
	struct baton_epoch_collect c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	return bt_ioctl(o->fd, BATON_EPOCH_IOC_COLLECT, &c);
}

/* Epoch 1 (the first global epoch) with no reader: one cycle proves it. */
static int fi_call_synchronize(const struct fi_path *p FI_UNUSED,
                               struct fi_obj *o FI_UNUSED)
{
	struct baton_epoch_sync s;

	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.flags = BATON_EPOCH_SYNC_DEADLINE;
	s.epoch = 1;
	s.deadline_ns = (uint64_t)(bt_now_ns() + 10 * BT_NSEC);
	return bt_ioctl(o->fd, BATON_EPOCH_IOC_SYNCHRONIZE, &s);
}

static int fi_call_poll(const struct fi_path *p FI_UNUSED,
                        struct fi_obj *o FI_UNUSED)
{
	struct baton_epoch_poll q;

	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.epoch = 1;
	return bt_ioctl(o->fd, BATON_EPOCH_IOC_POLL, &q);
}

static int fi_call_kick(const struct fi_path *p FI_UNUSED,
                        struct fi_obj *o FI_UNUSED)
{
	return ioctl(o->fd, BATON_EPOCH_IOC_KICK, 0UL) ? errno : 0;
}

/* Offset, length and protection of the region a mmap path maps. */
static void fi_region(const struct fi_path *p, const struct fi_obj *o,
		      uint64_t *off, size_t *len, int *prot)
{
	const struct baton_ring_offsets *r = &o->roff;
	const struct baton_epoch_offsets *e = &o->eoff;
	bool producer = p->role == BATON_ROLE_PRODUCER;
	bool rw = false;

	switch (p->region) {
	case FI_R_HDR:
		*off = r->hdr_mmap, *len = r->hdr_size;
		break;
	case FI_R_PROD:
		*off = r->prod_mmap, *len = r->prod_size, rw = producer;
		break;
	case FI_R_CONS:
		*off = r->cons_mmap, *len = r->cons_size, rw = !producer;
		break;
	case FI_R_SLOTS:
		*off = r->slots_mmap, *len = r->slots_size, rw = producer;
		break;
	case FI_R_SEQ:
		*off = r->seq_mmap, *len = r->seq_size, rw = true;
		break;
	case FI_R_CLAIM:
		*off = r->claim_mmap, *len = r->claim_size, rw = true;
		break;
	case FI_E_HDR:
		*off = e->hdr_mmap, *len = e->hdr_size;
		break;
	case FI_E_SELF:
		*off = e->self_mmap, *len = e->self_size, rw = true;
		break;
	case FI_E_TABLE:
		*off = e->table_mmap, *len = e->table_size;
		break;
	case FI_P_HDR:
		*off = BATON_POOL_HDR_MMAP, *len = BT_PAGE;
		break;
	case FI_P_CTL:
		*off = o->phdr.ctl_mmap, *len = o->phdr.ctl_size, rw = true;
		break;
	case FI_P_DATA:
		*off = o->phdr.data_mmap, *len = o->phdr.data_size, rw = true;
		break;
	}
	*prot = PROT_READ | (rw ? PROT_WRITE : 0);
}

static int fi_call_mmap(const struct fi_path *p FI_UNUSED,
                        struct fi_obj *o FI_UNUSED)
{
	uint64_t off = 0;
	size_t len = 0;
	int prot;
	void *m;

	fi_region(p, o, &off, &len, &prot);
	m = mmap(NULL, len, prot, MAP_SHARED, o->fd, (off_t)off);
	if (m == MAP_FAILED)
		return errno;
	o->map = m;
	o->map_len = len;
	return 0;
}

/* ---- checks after an injected failure ---- */

static int fi_check_nothing(const struct fi_path *p FI_UNUSED,
                            struct fi_obj *o FI_UNUSED)
{
	return 0;
}

/* The name is free: creating it works (and is undone by the teardown). */
static int fi_check_ring_name_free(const struct fi_path *p FI_UNUSED,
                                   struct fi_obj *o FI_UNUSED)
{
	return fi_ring_create(o, p->kind, p->role, &o->out_fd) ? 1 : 0;
}

static int fi_check_domain_name_free(const struct fi_path *p FI_UNUSED,
                                     struct fi_obj *o FI_UNUSED)
{
	return fi_domain_create(o, &o->out_fd) ? 1 : 0;
}

/* The name is still there: opening it works. */
static int fi_check_ring_name_kept(const struct fi_path *p FI_UNUSED,
                                   struct fi_obj *o FI_UNUSED)
{
	return fi_ring_open(o, BATON_ROLE_CONSUMER, &o->out_fd) ? 1 : 0;
}

static int fi_check_domain_name_kept(const struct fi_path *p FI_UNUSED,
                                     struct fi_obj *o FI_UNUSED)
{
	return fi_call_epoch_open(p, o) ? 1 : 0;
}

static int fi_check_pool_name_free(const struct fi_path *p FI_UNUSED,
                                   struct fi_obj *o FI_UNUSED)
{
	return fi_pool_create(o, &o->out_fd) ? 1 : 0;
}

static int fi_check_pool_name_kept(const struct fi_path *p FI_UNUSED,
                                   struct fi_obj *o FI_UNUSED)
{
	return fi_call_pool_open(p, o) ? 1 : 0;
}

/* The role is not counted: the peer's INFO sees none of it. */
static int fi_check_role_uncounted(const struct fi_path *p FI_UNUSED,
                                   struct fi_obj *o FI_UNUSED)
{
	struct baton_ring_info info;

	if (_test_info(o->peer, &info))
		return 1;
	if ((p->role == BATON_ROLE_PRODUCER ? info.out_producers :
					      info.out_consumers) != 0)
		return 2;
	return 0;
}

/* No participant counted, and registering now gets index 0. */
static int fi_check_unregistered(const struct fi_path *p FI_UNUSED,
                                 struct fi_obj *o FI_UNUSED)
{
	uint32_t index = UINT32_MAX;

	if (o->ehdr->participants != 0)
		return 1;
	if (fi_register(o->fd, &index) || index != 0)
		return 2;
	return 0;
}

/* mmap failed: no vma appeared. */
static int fi_check_no_vma(const struct fi_path *p FI_UNUSED,
                           struct fi_obj *o FI_UNUSED)
{
	return fi_vma_count() == o->vmas ? 0 : 1;
}

/* ---- the paths ---- */

#define FI_RING_MMAP(n, k, r, reg) {					\
	.name = n, .setup = fi_setup_ring, .call = fi_call_mmap,	\
	.check = fi_check_no_vma, .kind = k, .role = r, .region = reg,	\
	.allocates = true,						\
}
#define FI_DOMAIN_MMAP(n, setup_fn, reg) {				\
	.name = n, .setup = setup_fn, .call = fi_call_mmap,		\
	.check = fi_check_no_vma, .region = reg,			\
	.allocates = true,						\
}

#define SPSC	BATON_RING_SPSC
#define MPSC	BATON_RING_MPSC
#define PROD	BATON_ROLE_PRODUCER
#define CONS	BATON_ROLE_CONSUMER

static const struct fi_path fi_version = {
	.name = "version", .setup = fi_setup_none,
	.call = fi_call_version, .check = fi_check_nothing,
};
static const struct fi_path fi_ring_create_spsc = {
	.name = "ring_create_spsc", .setup = fi_setup_none,
	.allocates = true,
	.call = fi_call_ring_create, .check = fi_check_ring_name_free,
	.kind = SPSC, .role = CONS,
};
static const struct fi_path fi_ring_create_mpsc = {
	.name = "ring_create_mpsc", .setup = fi_setup_none,
	.allocates = true,
	.call = fi_call_ring_create, .check = fi_check_ring_name_free,
	.kind = MPSC, .role = CONS,
};
static const struct fi_path fi_ring_open_spsc_prod = {
	.name = "ring_open_spsc_producer", .setup = fi_setup_ring_for_open,
	.allocates = true,
	.call = fi_call_ring_open, .check = fi_check_role_uncounted,
	.kind = SPSC, .role = PROD,
};
static const struct fi_path fi_ring_open_spsc_cons = {
	.name = "ring_open_spsc_consumer", .setup = fi_setup_ring_for_open,
	.allocates = true,
	.call = fi_call_ring_open, .check = fi_check_role_uncounted,
	.kind = SPSC, .role = CONS,
};
static const struct fi_path fi_ring_open_mpsc_prod = {
	.name = "ring_open_mpsc_producer", .setup = fi_setup_ring_for_open,
	.allocates = true,
	.call = fi_call_ring_open, .check = fi_check_role_uncounted,
	.kind = MPSC, .role = PROD,
};
static const struct fi_path fi_ring_unlink = {
	.name = "ring_unlink", .setup = fi_setup_ring_closed,
	.call = fi_call_ring_unlink, .check = fi_check_ring_name_kept,
	.kind = SPSC,
};
static const struct fi_path fi_epoch_create = {
	.name = "epoch_create", .setup = fi_setup_none,
	.allocates = true,
	.call = fi_call_epoch_create, .check = fi_check_domain_name_free,
};
static const struct fi_path fi_epoch_open = {
	.name = "epoch_open", .setup = fi_setup_domain,
	.allocates = true,
	.call = fi_call_epoch_open, .check = fi_check_nothing,
};
static const struct fi_path fi_epoch_unlink = {
	.name = "epoch_unlink", .setup = fi_setup_domain_closed,
	.call = fi_call_epoch_unlink, .check = fi_check_domain_name_kept,
};
static const struct fi_path fi_park = {
	.name = "ring_park", .setup = fi_setup_ring,
	.call = fi_call_park, .check = fi_check_nothing,
	.want = ETIMEDOUT, .kind = SPSC, .role = CONS,
};
static const struct fi_path fi_park_mpsc = {
	.name = "ring_park_mpsc", .setup = fi_setup_ring,
	.call = fi_call_park, .check = fi_check_nothing,
	.want = ETIMEDOUT, .kind = MPSC, .role = CONS,
};
static const struct fi_path fi_wake = {
	.name = "ring_wake", .setup = fi_setup_ring,
	.call = fi_call_wake, .check = fi_check_nothing,
	.kind = SPSC, .role = PROD,
};
static const struct fi_path fi_info = {
	.name = "ring_info", .setup = fi_setup_ring,
	.call = fi_call_info, .check = fi_check_nothing,
	.kind = SPSC, .role = PROD,
};
static const struct fi_path fi_register_p = {
	.name = "epoch_register", .setup = fi_setup_domain,
	.call = fi_call_register, .check = fi_check_unregistered,
};
static const struct fi_path fi_collect = {
	.name = "epoch_collect", .setup = fi_setup_domain_registered,
	.call = fi_call_collect, .check = fi_check_nothing,
};
static const struct fi_path fi_synchronize = {
	.name = "epoch_synchronize", .setup = fi_setup_domain_registered,
	.call = fi_call_synchronize, .check = fi_check_nothing,
};
static const struct fi_path fi_poll = {
	.name = "epoch_poll", .setup = fi_setup_domain_registered,
	.call = fi_call_poll, .check = fi_check_nothing,
};
static const struct fi_path fi_kick = {
	.name = "epoch_kick", .setup = fi_setup_domain_registered,
	.call = fi_call_kick, .check = fi_check_nothing,
};

static const struct fi_path fi_mmaps[] = {
	FI_RING_MMAP("mmap_spsc_producer_hdr", SPSC, PROD, FI_R_HDR),
	FI_RING_MMAP("mmap_spsc_producer_prod", SPSC, PROD, FI_R_PROD),
	FI_RING_MMAP("mmap_spsc_producer_cons", SPSC, PROD, FI_R_CONS),
	FI_RING_MMAP("mmap_spsc_producer_slots", SPSC, PROD, FI_R_SLOTS),
	FI_RING_MMAP("mmap_spsc_consumer_hdr", SPSC, CONS, FI_R_HDR),
	FI_RING_MMAP("mmap_spsc_consumer_prod", SPSC, CONS, FI_R_PROD),
	FI_RING_MMAP("mmap_spsc_consumer_cons", SPSC, CONS, FI_R_CONS),
	FI_RING_MMAP("mmap_spsc_consumer_slots", SPSC, CONS, FI_R_SLOTS),
	FI_RING_MMAP("mmap_mpsc_producer_hdr", MPSC, PROD, FI_R_HDR),
	FI_RING_MMAP("mmap_mpsc_producer_prod", MPSC, PROD, FI_R_PROD),
	FI_RING_MMAP("mmap_mpsc_producer_cons", MPSC, PROD, FI_R_CONS),
	FI_RING_MMAP("mmap_mpsc_producer_slots", MPSC, PROD, FI_R_SLOTS),
	FI_RING_MMAP("mmap_mpsc_producer_seq", MPSC, PROD, FI_R_SEQ),
	FI_RING_MMAP("mmap_mpsc_producer_claim", MPSC, PROD, FI_R_CLAIM),
	FI_RING_MMAP("mmap_mpsc_consumer_hdr", MPSC, CONS, FI_R_HDR),
	FI_RING_MMAP("mmap_mpsc_consumer_prod", MPSC, CONS, FI_R_PROD),
	FI_RING_MMAP("mmap_mpsc_consumer_cons", MPSC, CONS, FI_R_CONS),
	FI_RING_MMAP("mmap_mpsc_consumer_slots", MPSC, CONS, FI_R_SLOTS),
	FI_RING_MMAP("mmap_mpsc_consumer_seq", MPSC, CONS, FI_R_SEQ),
	FI_DOMAIN_MMAP("mmap_epoch_hdr", fi_setup_domain, FI_E_HDR),
	FI_DOMAIN_MMAP("mmap_epoch_self", fi_setup_domain_registered,
		       FI_E_SELF),
	FI_DOMAIN_MMAP("mmap_epoch_table", fi_setup_domain, FI_E_TABLE),
	FI_DOMAIN_MMAP("mmap_pool_hdr", fi_setup_pool, FI_P_HDR),
	FI_DOMAIN_MMAP("mmap_pool_ctl", fi_setup_pool, FI_P_CTL),
	FI_DOMAIN_MMAP("mmap_pool_data", fi_setup_pool, FI_P_DATA),
};
static const struct fi_path fi_pool_create_p = {
	.name = "pool_create", .setup = fi_setup_none,
	.allocates = true,
	.call = fi_call_pool_create, .check = fi_check_pool_name_free,
};
static const struct fi_path fi_pool_open_p = {
	.name = "pool_open", .setup = fi_setup_pool,
	.allocates = true,
	.call = fi_call_pool_open, .check = fi_check_pool_name_kept,
};
static const struct fi_path fi_pool_unlink_p = {
	.name = "pool_unlink", .setup = fi_setup_pool_closed,
	.call = fi_call_pool_unlink, .check = fi_check_pool_name_kept,
};
static const struct fi_path fi_pool_unstick_p = {
	.name = "pool_unstick", .setup = fi_setup_pool,
	.call = fi_call_pool_unstick, .check = fi_check_nothing,
};

/* ---- the loop ---- */

/* Arm: the n-th fault point this thread passes fails. */
static int fi_arm(int nth_fd, unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	return write(nth_fd, buf, len) == len ? 0 : -1;
}

/*
 * Disarm: 1 if the fault was injected (fail-nth read back 0), 0 if the
 * call passed fewer than n fault points, -1 if fail-nth could not be
 * read (then nothing can be told; the caller fails the test).
 */
static int fi_disarm(int nth_fd)
{
	char buf[16];
	ssize_t n = pread(nth_fd, buf, sizeof(buf) - 1, 0);
	long left;

	if (n <= 0)
		return -1;
	buf[n] = 0;
	left = strtol(buf, NULL, 10);
	if (left)
		fi_arm(nth_fd, 0);
	return left == 0;
}

static void fi_teardown_obj(struct fi_obj *o)
{
	if (o->map)
		munmap(o->map, o->map_len);
	if (o->ehdr)
		munmap((void *)o->ehdr, o->eoff.hdr_size);
	if (o->out_fd >= 0)
		close(o->out_fd);
	if (o->fd >= 0)
		close(o->fd);
	if (o->peer >= 0)
		close(o->peer);
	if (o->ring_named)
		fi_unlink(o, BATON_IOC_UNLINK);
	if (o->domain_named)
		fi_unlink(o, BATON_IOC_EPOCH_UNLINK);
	if (o->pool_named)
		fi_unlink(o, BATON_IOC_POOL_UNLINK);
}

FIXTURE(fault_point) {
	int dev;
	int nth_fd;
	long refcnt0;
	struct fi_knobs knobs;
};

FIXTURE_VARIANT(fault_point) {
	const struct fi_path *path;
};

FIXTURE_SETUP(fault_point)
{
	int bad;

	self->dev = -1;
	self->nth_fd = -1;
	memset(&self->knobs, 0, sizeof(self->knobs));
	BT_REQUIRE_DEV();
	if (access(FI_NTH, F_OK))
		SKIP(_exit(255), "%s absent: kernel without CONFIG_FAULT_INJECTION (run on the debug kernel: make vm-check-debug)",
		     FI_NTH);
	if (access(FI_DEBUGFS "/failslab", F_OK) ||
	    access(FI_DEBUGFS "/fail_page_alloc", F_OK))
		SKIP(_exit(255), "no failslab or fail_page_alloc in %s: kernel without CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC or CONFIG_FAULT_INJECTION_DEBUG_FS",
		     FI_DEBUGFS);
	bad = fi_knobs_set(&self->knobs);
	ASSERT_EQ(0, bad) TH_LOG("cannot set %s/%s", FI_DEBUGFS,
				 fi_knob_names[bad - 1]);
	self->nth_fd = open(FI_NTH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->nth_fd);
	self->dev = bt_dev_open();
	ASSERT_LE(0, self->dev);
	self->refcnt0 = fi_refcnt();
	ASSERT_LE(0, self->refcnt0);
}

FIXTURE_TEARDOWN(fault_point)
{
	if (self->nth_fd >= 0) {
		fi_arm(self->nth_fd, 0);
		close(self->nth_fd);
	}
	fi_knobs_restore(&self->knobs);
	if (self->dev >= 0)
		close(self->dev);
}

#define FI_VARIANT(id, p) FIXTURE_VARIANT_ADD(fault_point, id) { .path = p }

FI_VARIANT(version, &fi_version);
FI_VARIANT(ring_create_spsc, &fi_ring_create_spsc);
FI_VARIANT(ring_create_mpsc, &fi_ring_create_mpsc);
FI_VARIANT(ring_open_spsc_producer, &fi_ring_open_spsc_prod);
FI_VARIANT(ring_open_spsc_consumer, &fi_ring_open_spsc_cons);
FI_VARIANT(ring_open_mpsc_producer, &fi_ring_open_mpsc_prod);
FI_VARIANT(ring_unlink, &fi_ring_unlink);
FI_VARIANT(ring_park, &fi_park);
FI_VARIANT(ring_park_mpsc, &fi_park_mpsc);
FI_VARIANT(ring_wake, &fi_wake);
FI_VARIANT(ring_info, &fi_info);
FI_VARIANT(epoch_create, &fi_epoch_create);
FI_VARIANT(epoch_open, &fi_epoch_open);
FI_VARIANT(epoch_unlink, &fi_epoch_unlink);
FI_VARIANT(epoch_register, &fi_register_p);
FI_VARIANT(epoch_collect, &fi_collect);
FI_VARIANT(epoch_synchronize, &fi_synchronize);
FI_VARIANT(epoch_poll, &fi_poll);
FI_VARIANT(epoch_kick, &fi_kick);
FI_VARIANT(mmap_spsc_producer_hdr, &fi_mmaps[0]);
FI_VARIANT(mmap_spsc_producer_prod, &fi_mmaps[1]);
FI_VARIANT(mmap_spsc_producer_cons, &fi_mmaps[2]);
FI_VARIANT(mmap_spsc_producer_slots, &fi_mmaps[3]);
FI_VARIANT(mmap_spsc_consumer_hdr, &fi_mmaps[4]);
FI_VARIANT(mmap_spsc_consumer_prod, &fi_mmaps[5]);
FI_VARIANT(mmap_spsc_consumer_cons, &fi_mmaps[6]);
FI_VARIANT(mmap_spsc_consumer_slots, &fi_mmaps[7]);
FI_VARIANT(mmap_mpsc_producer_hdr, &fi_mmaps[8]);
FI_VARIANT(mmap_mpsc_producer_prod, &fi_mmaps[9]);
FI_VARIANT(mmap_mpsc_producer_cons, &fi_mmaps[10]);
FI_VARIANT(mmap_mpsc_producer_slots, &fi_mmaps[11]);
FI_VARIANT(mmap_mpsc_producer_seq, &fi_mmaps[12]);
FI_VARIANT(mmap_mpsc_producer_claim, &fi_mmaps[13]);
FI_VARIANT(mmap_mpsc_consumer_hdr, &fi_mmaps[14]);
FI_VARIANT(mmap_mpsc_consumer_prod, &fi_mmaps[15]);
FI_VARIANT(mmap_mpsc_consumer_cons, &fi_mmaps[16]);
FI_VARIANT(mmap_mpsc_consumer_slots, &fi_mmaps[17]);
FI_VARIANT(mmap_mpsc_consumer_seq, &fi_mmaps[18]);
FI_VARIANT(mmap_epoch_hdr, &fi_mmaps[19]);
FI_VARIANT(mmap_epoch_self, &fi_mmaps[20]);
FI_VARIANT(mmap_epoch_table, &fi_mmaps[21]);
FI_VARIANT(mmap_pool_hdr, &fi_mmaps[22]);
FI_VARIANT(mmap_pool_ctl, &fi_mmaps[23]);
FI_VARIANT(mmap_pool_data, &fi_mmaps[24]);
FI_VARIANT(pool_create, &fi_pool_create_p);
FI_VARIANT(pool_open, &fi_pool_open_p);
FI_VARIANT(pool_unlink, &fi_pool_unlink_p);
FI_VARIANT(pool_unstick, &fi_pool_unstick_p);

/*
 * Fail the n-th fault point of the path's call for n = 1, 2, ...: every
 * injected failure is ENOMEM (or absorbed), leaves nothing behind, and
 * the first n the call does not reach gives the fault-free result.
 */
TEST_F_TIMEOUT(fault_point, every_fault_point, 300)
{
	const struct fi_path *p = variant->path;
	unsigned int n, points = 0, absorbed = 0;
	bool done = false;

	for (n = 1; n <= FI_MAX_N && !done; n++) {
		struct fi_obj o = { .dev = self->dev, .fd = -1, .peer = -1,
				    .out_fd = -1 };
		int rc, step, injected;

		bt_make_name(o.name, sizeof(o.name), "fi");
		step = p->setup(p, &o);
		if (step)
			fi_teardown_obj(&o);
		ASSERT_EQ(0, step) TH_LOG("%s: setup failed at step %d (n=%u): %s",
					  p->name, step, n, strerror(errno));
		o.vmas = fi_vma_count();

		ASSERT_EQ(0, fi_arm(self->nth_fd, n));
		rc = p->call(p, &o);
		injected = fi_disarm(self->nth_fd);
		if (injected < 0)
			fi_teardown_obj(&o);
		ASSERT_LE(0, injected) TH_LOG("%s: fail-nth unreadable: %s",
					      p->name, strerror(errno));

		if (!injected) {
			/* The call passed fewer than n fault points. */
			done = true;
			EXPECT_EQ(p->want, rc) TH_LOG("%s: fault-free run gave %s",
						     p->name, strerror(rc));
		} else if (rc == p->want) {
			/* A fallback took over (kvmalloc, kmemleak's pool). */
			points++;
			absorbed++;
		} else {
			points++;
			EXPECT_EQ(ENOMEM, rc) TH_LOG("%s: fault %u gave %s, not ENOMEM",
						    p->name, n, strerror(rc));
			step = p->check(p, &o);
			EXPECT_EQ(0, step) TH_LOG("%s: after fault %u, check step %d failed",
						  p->name, n, step);
		}
		fi_teardown_obj(&o);
		/* Every file of the iteration is closed: no reference left. */
		EXPECT_EQ(self->refcnt0, fi_refcnt())
			TH_LOG("%s: module refcnt after fault %u", p->name, n);
		if (!_metadata->passed)
			return;
	}
	ASSERT_TRUE(done) TH_LOG("%s: still failing after %u fault points",
				 p->name, FI_MAX_N);
	/* A run that injected nothing would pass with fail-nth inert. */
	if (p->allocates)
		EXPECT_LT(0U, points) TH_LOG("%s: no fault point was reached",
					     p->name);

	printf("# fault points: %-28s %4u (%u absorbed)\n", p->name, points,
	       absorbed);
	fflush(stdout);
	if (fi_totals) {
		__atomic_add_fetch(&fi_totals->paths, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&fi_totals->points, points,
				   __ATOMIC_RELAXED);
		__atomic_add_fetch(&fi_totals->absorbed, absorbed,
				   __ATOMIC_RELAXED);
	}
}

TEST_HARNESS_MAIN
