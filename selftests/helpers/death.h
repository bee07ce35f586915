/* SPDX-License-Identifier: GPL-2.0 */
/*
 * selftests/helpers/death.h: what the kill -9 matrix (kill_matrix.c) and
 * the soak (soak.c) share on top of common.h.
 *
 * Owns: the iteration and duration knobs (environment), shared anonymous
 * memory between a test and its children, the stall figures (time from a
 * kill to the survivor's next progress: max and median, printed, never
 * asserted), the "wait until that process is asleep, then die" step of a
 * victim, and the count of live kernel objects that baton.ko allocated,
 * which must return to its baseline once everything is closed.
 *
 * Counting baton's objects. /proc/meminfo's Slab and /proc/slabinfo move
 * with everything else the kernel does (pipes, page tables, the harness's
 * forks), so a baseline on them needs a tolerance that would also hide a
 * small leak. The test VM boots with slub_debug=FZPU: every cache stores
 * the allocation site and stack of each live object, and debugfs shows
 * them in /sys/kernel/debug/slab/<cache>/alloc_traces. We count the live
 * objects whose site or stack names a [baton] function, plus the vmap
 * areas in /proc/vmallocinfo whose caller is in [baton] (the ring and
 * domain memory). That count is exact: it must come back to the baseline,
 * with no tolerance. The vmap_area cache is left out: vunmap() frees its
 * struct vmap_area lazily, in batches, whenever the kernel purges lazy
 * areas, so those objects outlive the ring by design (the live areas are
 * in /proc/vmallocinfo, which is counted). The count can fail falsely
 * only if a free is deferred beyond the retry window (RCU, a workqueue),
 * and it cannot see pages allocated with alloc_page() themselves (their
 * vmap area and the page array are counted instead). Without debugfs or
 * slub_debug it returns -1 and the caller skips the check, saying why.
 */
#ifndef BATON_SELFTEST_DEATH_H
#define BATON_SELFTEST_DEATH_H

#include <dirent.h>
#include <ctype.h>

/* Iterations of each kill point: $BATON_KILL_ITERS, default @dflt. */
static inline unsigned int dt_iters(unsigned int dflt)
{
	const char *s = getenv("BATON_KILL_ITERS");
	long v = s ? strtol(s, NULL, 10) : 0;

	return v > 0 && v < 10000000 ? (unsigned int)v : dflt;
}

/* Anonymous memory shared with forked children, zeroed. */
static inline void *dt_shared(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* ---- stall figures ---- */

struct dt_stalls {
	unsigned int n;
	unsigned int cap;
	int64_t *ns;
};

static inline int dt_stalls_init(struct dt_stalls *s, unsigned int cap)
{
	s->n = 0;
	s->cap = cap;
	s->ns = calloc(cap ? cap : 1, sizeof(*s->ns));
	return s->ns ? 0 : -1;
}

static inline void dt_stalls_add(struct dt_stalls *s, int64_t ns)
{
	if (s->n < s->cap)
		s->ns[s->n++] = ns;
}

static int dt_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts in place; max and median in microseconds (0 when empty). */
static inline void dt_stalls_figures(struct dt_stalls *s, double *max_us,
				     double *median_us)
{
	*max_us = 0;
	*median_us = 0;
	if (!s->n)
		return;
	qsort(s->ns, s->n, sizeof(*s->ns), dt_cmp_i64);
	*max_us = s->ns[s->n - 1] / 1e3;
	*median_us = s->ns[s->n / 2] / 1e3;
}

/* The mean in microseconds (0 when empty). */
static inline double dt_stalls_mean_us(const struct dt_stalls *s)
{
	double sum = 0;
	unsigned int i;

	for (i = 0; i < s->n; i++)
		sum += s->ns[i];
	return s->n ? sum / s->n / 1e3 : 0;
}

static inline void dt_stalls_free(struct dt_stalls *s)
{
	free(s->ns);
	s->ns = NULL;
}

/* ---- victims ---- */

/* A short sleep for polling loops: a kill iteration waits several times. */
static inline void dt_nap(void)
{
	struct timespec ts = { 0, 100000 };

	nanosleep(&ts, NULL);
}

/*
 * Wait until @pid sleeps interruptibly after @flag turned non-zero (the
 * flag says it announced a park, the state that it got past the re-check
 * and really sleeps), both within @ms. 0 or -1. Polls every 100 us: the
 * 1 ms of bt_wait_flag() and bt_wait_sleeping() adds up over thousands of
 * kills.
 */
static inline int dt_wait_parked(volatile uint32_t *flag, pid_t pid, long ms)
{
	int64_t end = bt_now_ns() + ms * BT_MSEC;

	while (flag && !__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
		if (bt_now_ns() > end)
			return -1;
		dt_nap();
	}
	while (bt_proc_state(pid) != 'S') {
		if (bt_now_ns() > end)
			return -1;
		dt_nap();
	}
	return 0;
}

/*
 * Reap @pid: its status as bt_wait_timeout() gives it, -1 (then it was
 * killed) after @ms. A pidfd wakes us the moment it exits instead of
 * bt_wait_timeout()'s 5 ms polls; without pidfd_open() (before 5.3) we
 * fall back to those.
 */
static inline int dt_reap(pid_t pid, long ms)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int st;

	if (fd < 0)
		return bt_wait_timeout(pid, ms);
	if (poll(&pfd, 1, (int)ms) != 1)
		kill(pid, SIGKILL);
	close(fd);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -2;
	if (pfd.revents == 0)
		return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

/* Record the moment, then die the way kill -9 kills. */
static inline void __attribute__((noreturn))
dt_die(volatile int64_t *kill_ns)
{
	__atomic_store_n(kill_ns, bt_now_ns(), __ATOMIC_RELEASE);
	kill(getpid(), SIGKILL);
	for (;;)
		pause();
}

/* SIGKILL @pid and record the moment; the survivor measures from it. */
static inline void dt_kill(pid_t pid, volatile int64_t *kill_ns)
{
	__atomic_store_n(kill_ns, bt_now_ns(), __ATOMIC_RELEASE);
	kill(pid, SIGKILL);
}

/* ---- baton's live kernel objects ---- */

/*
 * Live objects in one alloc_traces file whose site or stack is baton's;
 * with @dump, each such record's first line is printed as a "#" line.
 */
static inline long dt_count_traces(const char *path, bool dump)
{
	char line[512], head[512] = "";
	long total = 0, count = 0;
	bool ours = false;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = line;

		while (*p == ' ')
			p++;
		/* "  <count> <site> age=..." opens a record; frames follow. */
		if (isdigit((unsigned char)*p) && p - line <= 8 &&
		    strchr(p, '+')) {
			if (ours) {
				total += count;
				if (dump)
					printf("# %s: %s", path, head);
			}
			count = strtol(p, NULL, 10);
			ours = false;
			snprintf(head, sizeof(head), "%s", p);
		}
		if (strstr(line, "[baton]"))
			ours = true;
	}
	if (ours) {
		total += count;
		if (dump)
			printf("# %s: %s", path, head);
	}
	fclose(f);
	return total;
}

/* vmap areas (ring and domain memory) made by baton. */
static inline long dt_count_vmaps(bool dump)
{
	char line[512];
	long n = 0;
	FILE *f = fopen("/proc/vmallocinfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "[baton]"))
			continue;
		n++;
		if (dump)
			printf("# vmallocinfo: %s", line);
	}
	fclose(f);
	return n;
}

#define DT_SLAB_DEBUGFS	"/sys/kernel/debug/slab"

/*
 * On a KASAN kernel (the debug kernel) a freed object waits in KASAN's
 * quarantine, still allocated as far as SLUB and alloc_traces know, and
 * the quarantine drains only when it is full: a count would include
 * whatever was freed lately. Shrinking a cache empties its share of the
 * quarantine (kmem_cache_shrink() -> kasan_cache_shrink()), so do that
 * before counting. Elsewhere the write only trims empty slabs.
 */
static inline void dt_flush_quarantine(const char *cache)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", cache);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, "1", 1) != 1) {
		/* nothing to do: the count is then only less exact */
	}
	close(fd);
}

/*
 * See the file comment: -1 when this kernel cannot tell. @prefix limits
 * the caches read to those whose name starts with it (NULL: all; reading
 * them all takes seconds under TCG). With @dump the objects counted are
 * listed.
 */
static inline long dt_baton_objects_in(const char *prefix, bool dump)
{
	char path[PATH_MAX];
	struct dirent *de;
	long total = 0, n, caches = 0;
	DIR *d = opendir(DT_SLAB_DEBUGFS);

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		/* Freed lazily, in batches, long after vunmap(): see above. */
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "vmap_area"))
			continue;
		if (prefix && strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		dt_flush_quarantine(de->d_name);
		snprintf(path, sizeof(path), DT_SLAB_DEBUGFS "/%s/alloc_traces",
			 de->d_name);
		n = dt_count_traces(path, dump);
		if (n < 0)
			continue;
		caches++;
		total += n;
	}
	closedir(d);
	if (!caches)
		return -1;
	n = dt_count_vmaps(dump);
	return n < 0 ? -1 : total + n;
}

static inline long dt_baton_objects(void)
{
	return dt_baton_objects_in(NULL, false);
}

/*
 * The kmalloc caches only: every allocation baton.ko makes itself comes
 * from them (kzalloc, kcalloc, kvcalloc of GFP_KERNEL_ACCOUNT); what the
 * full count adds is what the kernel allocates on baton's behalf (struct
 * file, dentries of its anonymous inodes).
 */
#define DT_KMALLOC	"kmalloc-"

static inline long dt_baton_kmalloc_objects(void)
{
	return dt_baton_objects_in(DT_KMALLOC, false);
}

/*
 * Poll until the count is back at @baseline (frees after a kill happen in
 * the victim's exit, but a release may finish just after its waitpid).
 * Returns the last count seen; on a timeout the objects are listed.
 */
static inline long dt_objects_settle(const char *prefix, long baseline,
				     long ms)
{
	int64_t end = bt_now_ns() + ms * BT_MSEC;
	long n;

	for (;;) {
		n = dt_baton_objects_in(prefix, false);
		if (n <= baseline)
			return n;
		if (bt_now_ns() > end) {
			n = dt_baton_objects_in(prefix, true);
			fflush(stdout);
			return n;
		}
		bt_sleep_ms(50);
	}
}

#endif /* BATON_SELFTEST_DEATH_H */
