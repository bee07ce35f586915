/* SPDX-License-Identifier: MIT */
/*
 * bench/gate.h: what every perf-gate harness (bench/gate_*.c) shares: the
 * marker for a measured function and the self-test's injected cost.
 *
 * A measured operation is one noinline function gate_op_<path>; the gate
 * (bench/perf-gate.sh) counts the instructions callgrind collects inside
 * it and divides by the calls the harness reports.
 *
 * GATE_INJECT() opens every measured function. Normally empty. The
 * self-test (`make perf-gate-selftest`) builds a harness with
 * -DBATON_GATE_DRIFT_NOPS=N to stand for a commit that made every path
 * costlier by a fraction of an instruction: N nops once every 1000 calls,
 * i.e. N / 1000 instructions per call on top of the counter's own cost,
 * which -DBATON_GATE_DRIFT_NOPS=0 measures for the reference. That is how
 * it shows a 3% drift in three 1% steps on paths of 20 instructions.
 */
#ifndef BATON_BENCH_GATE_H
#define BATON_BENCH_GATE_H

#define GATE_NOINLINE __attribute__((noinline, noclone, used))

#ifdef BATON_GATE_DRIFT_NOPS
#define GATE_STR_(x) #x
#define GATE_STR(x) GATE_STR_(x)
/* A counter per measured function: the harnesses call several in turn. */
#define GATE_INJECT()							\
	do {								\
		static unsigned int gate_drift_tick;			\
		if (++gate_drift_tick == 1000) {			\
			gate_drift_tick = 0;				\
			__asm__ volatile(".rept " GATE_STR(BATON_GATE_DRIFT_NOPS) \
					 "\n\tnop\n\t.endr" ::: "memory"); \
		}							\
	} while (0)
#else
#define GATE_INJECT() do { } while (0)
#endif

#endif /* BATON_BENCH_GATE_H */
