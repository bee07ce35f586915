/* SPDX-License-Identifier: MIT */
/*
 * bench/bench.h: what the baton benchmarks share and nothing else: the
 * clock, CPU pinning, the spin-wait, shared anonymous memory, full-length
 * pipe I/O, summary statistics over runs, and a watchdog so a stalled peer
 * ends the program instead of hanging it. No measurement lives here; each
 * program (spsc_xproc.c, pipeline_demo.c) owns its own questions.
 */
#ifndef BATON_BENCH_H
#define BATON_BENCH_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Set when only one CPU is usable: spin-waits then yield now and then. */
extern int bench_single_cpu;

/* CLOCK_MONOTONIC in ns: one clock for both processes of a pair. */
uint64_t bench_now_ns(void);

/* Pin the calling thread to cpu; 0 or -errno. */
int bench_pin(int cpu);

/* Parse "A,B" into two CPU numbers; 0 or -1. */
int bench_parse_cpus(const char *s, int cpu[2]);

/*
 * Pick the two CPUs to run on. If cpu[1] cannot be used, say so once and
 * set bench_single_cpu so spinning peers do not starve each other.
 */
void bench_check_cpus(const char *prog, int cpu[2]);

/* Parse a count like "2000000", "2e6", "500k" or "2M"; 0 on error. */
uint64_t bench_parse_count(const char *s);

/*
 * One poll of a spin-wait. On one CPU a spinning peer would hold the CPU
 * its partner needs, so every 256th poll yields (a syscall, but only in
 * that degraded mode, which the programs announce).
 */
static inline void bench_relax(unsigned int *spins)
{
	__builtin_ia32_pause();
	if (bench_single_cpu && (++*spins & 255) == 0)
		sched_yield();
}

/*
 * Nanoseconds this process has spent runnable but not running (waiting on
 * a runqueue), from /proc/self/schedstat; 0 where that is unavailable.
 * The delta over a timed window is the time other work took from it.
 */
uint64_t bench_run_delay_ns(void);

/* MAP_SHARED|MAP_ANONYMOUS memory that survives fork(); exits on failure. */
void *bench_shared_alloc(size_t len);
void bench_shared_free(void *p, size_t len);

/* Touch every page so no page fault lands inside a timed window. */
void bench_prefault(void *p, size_t len, int write);

/* write()/read() the whole length, retrying short transfers; 0 or -errno. */
int bench_write_full(int fd, const void *buf, size_t len);
int bench_read_full(int fd, void *buf, size_t len);

/* Summary of n values: median, min, max. Does not modify v. */
struct bench_summary {
	double median;
	double min;
	double max;
};
void bench_summarize(const double *v, int n, struct bench_summary *s);

/*
 * Watchdog: SIGALRM after seconds prints "what" and exits 3. A peer that
 * crashed mid-run would otherwise leave the other side spinning forever.
 */
void bench_watchdog(unsigned int seconds, const char *what);

/* Kill the calling child when its parent dies (PR_SET_PDEATHSIG). */
void bench_die_with_parent(pid_t parent);

/*
 * The system calls the calling thread enters, counted by the kernel (the
 * raw_syscalls:sys_enter tracepoint, a perf counter on this thread alone):
 * every call, whoever makes it (the library, libc, the program), so a
 * peer's count cannot leave out what its own code does not count; all but
 * clock_gettime and clock_nanosleep (a filter on the counter), which are
 * the harness's timestamps and pacing (under TCG the vDSO cannot read the
 * clock, so there every timestamp is a syscall). -1
 * when the kernel will not count (no tracefs, no permission). Counting
 * costs each call about 35 ns here (getppid: 77 -> 111 ns). Take a
 * reading before and after, then bench_syscalls_between() of the two:
 * the calls made between them, the readings' own not included.
 */
int bench_syscalls_open(void);
uint64_t bench_syscalls_read(int fd);
uint64_t bench_syscalls_between(uint64_t first, uint64_t second);

#endif /* BATON_BENCH_H */
