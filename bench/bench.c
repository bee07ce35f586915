/* SPDX-License-Identifier: MIT */
/*
 * bench/bench.c: the helpers declared in bench.h (clock, pinning, shared
 * memory, pipe I/O, run statistics, watchdog). Measurements live in the
 * programs, not here.
 */
#define _GNU_SOURCE	/* sched_setaffinity, sched_getcpu */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int bench_single_cpu;

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int bench_pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return -EINVAL;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return -errno;
	return 0;
}

int bench_parse_cpus(const char *s, int cpu[2])
{
	char *end;
	long a, b;

	a = strtol(s, &end, 10);
	if (end == s || *end != ',')
		return -1;
	s = end + 1;
	b = strtol(s, &end, 10);
	if (end == s || *end || a < 0 || b < 0 || a >= CPU_SETSIZE ||
	    b >= CPU_SETSIZE)
		return -1;
	cpu[0] = (int)a;
	cpu[1] = (int)b;
	return 0;
}

static int cpu_usable(int cpu)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	return CPU_ISSET(cpu, &set);
}

void bench_check_cpus(const char *prog, int cpu[2])
{
	if (!cpu_usable(cpu[0])) {
		fprintf(stderr, "%s: CPU %d not usable, running unpinned\n",
			prog, cpu[0]);
		cpu[0] = -1;
	}
	if (cpu[1] == cpu[0] || !cpu_usable(cpu[1])) {
		fprintf(stderr,
			"%s: WARNING: no second CPU (%d); both processes share one CPU, spin-waits yield\n",
			prog, cpu[1]);
		cpu[1] = cpu[0];
		bench_single_cpu = 1;
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		bench_single_cpu = 1;
}

uint64_t bench_parse_count(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || v < 0)
		return 0;
	if (*end == 'k' || *end == 'K')
		v *= 1e3, end++;
	else if (*end == 'm' || *end == 'M')
		v *= 1e6, end++;
	if (*end || v < 1 || v > 1e15)
		return 0;
	return (uint64_t)v;
}

void *bench_shared_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap shared");
		exit(1);
	}
	return p;
}

void bench_shared_free(void *p, size_t len)
{
	munmap(p, len);
}

void bench_prefault(void *p, size_t len, int write)
{
	volatile uint8_t *b = p;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t i;

	for (i = 0; i < len; i += pg) {
		if (write)
			b[i] = b[i];
		else
			(void)b[i];
	}
}

int bench_write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EPIPE;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int bench_read_full(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t r = read(fd, p, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EPIPE;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void bench_summarize(const double *v, int n, struct bench_summary *s)
{
	double *c;

	memset(s, 0, sizeof(*s));
	if (n <= 0)
		return;
	c = malloc(sizeof(*c) * (size_t)n);
	if (!c)
		exit(1);
	memcpy(c, v, sizeof(*c) * (size_t)n);
	qsort(c, (size_t)n, sizeof(*c), cmp_double);
	s->median = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	s->min = c[0];
	s->max = c[n - 1];
	free(c);
}

static const char *watchdog_what = "run";

static void watchdog_fire(int sig)
{
	static const char msg[] = "bench: watchdog: timed out in ";

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	(void)!write(2, watchdog_what, strlen(watchdog_what));
	(void)!write(2, " (peer stalled or died)\n", 24);
	_exit(3);
}

void bench_watchdog(unsigned int seconds, const char *what)
{
	static int installed;

	if (!installed) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = watchdog_fire;
		sigaction(SIGALRM, &sa, NULL);
		installed = 1;
	}
	watchdog_what = what;
	alarm(seconds);
}

void bench_die_with_parent(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* The parent may have died before prctl took effect. */
	if (getppid() != parent)
		_exit(1);
}

uint64_t bench_run_delay_ns(void)
{
	unsigned long long run, wait;
	char buf[128];
	ssize_t n;
	int fd = open("/proc/self/schedstat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	if (sscanf(buf, "%llu %llu", &run, &wait) != 2)
		return 0;
	return wait;
}

/* The id of raw_syscalls:sys_enter, from tracefs wherever it is mounted. */
static long sys_enter_id(void)
{
	static const char *const where[] = {
		"/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
		"/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id",
	};
	long id = -1;

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]) && id < 0; i++) {
		FILE *f = fopen(where[i], "re");

		if (!f)
			continue;
		if (fscanf(f, "%ld", &id) != 1)
			id = -1;
		fclose(f);
	}
	return id;
}

int bench_syscalls_open(void)
{
	struct perf_event_attr attr;
	long id = sys_enter_id();
	char filter[64];
	int fd;

	if (id < 0)
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (uint64_t)id;
	/* This thread, any CPU; counting, never sampling. */
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -1;
	/*
	 * Not the clock: its reads are the harness's timestamps (where the
	 * vDSO cannot read the clock, a VM under TCG, each is a syscall),
	 * and its sleeps the producer's pacing.
	 */
	snprintf(filter, sizeof(filter), "id != %d && id != %d",
		 (int)SYS_clock_gettime, (int)SYS_clock_nanosleep);
	if (ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter)) {
		close(fd);
		return -1;
	}
	return fd;
}

uint64_t bench_syscalls_read(int fd)
{
	uint64_t v = 0;

	if (fd < 0 || read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		return 0;
	return v;
}

uint64_t bench_syscalls_between(uint64_t first, uint64_t second)
{
	/* second counts its own read (it entered before it counted). */
	return second > first ? second - first - 1 : 0;
}
