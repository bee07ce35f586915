/* SPDX-License-Identifier: MIT */
/*
 * bench/mpsc_sweep.c: the MPSC producer-count sweep (Documentation/mpsc.rst:
 * why the push takes a ticket rather than looping on compare-and-swap).
 *
 * Question: does the cost of a push climb with the number of producers?
 * Rings, each with 1, 2, 4 and 8 producer processes feeding one consumer
 * process, 8-byte messages, in one run:
 *
 *   ticket       baton's MPSC ring: the inline steps of baton_mpsc_push
 *                (a look for room at the tail, one fetch_add, then a wait
 *                on the slot's own sequence)
 *   cas          a CAS-retry MPSC ring that exists only here: the same
 *                slot and sequence layout, but the ticket is taken with a
 *                compare-and-swap loop on the tail (the usual lock-free
 *                MPSC push)
 *   ticket-lib   baton_mpsc_push/pop as they are (spin, then park)
 *   ticket-noroom  the ticket push without the look for room (the library
 *                before it had one): producers take tickets on a full ring
 *                and hold them, which convoys when oversubscribed
 *
 * ticket, cas and ticket-noroom wait the same way on both sides (spin,
 * sched_yield every 64 polls), so they differ in the reservation alone.
 *
 * Reported per ring and producer count: ns/op (wall time from the start
 * signal until the consumer has everything, over all messages; median of
 * the runs, with min and max), "cas lost/op" (compare-and-swaps that lost
 * the race, per push: the retries a counter of full-ring retries cannot
 * see),
 * park calls per op of the library's blocking push and pop (producers and
 * consumer together; the mean of the runs), and the ratio cas/ticket. Then instruction counts per
 * op from valgrind --tool=callgrind (deterministic: producers as threads,
 * which valgrind serialises, the ring large enough that nobody waits),
 * counted only inside the push functions; beside them the bulk forms per
 * message (baton_mpsc_push_bulk8 and the consumer's try_pop_bulk8, in
 * batches of 32: what bench/peers' baton-mpsc uses at batch 32). Points
 * with more processes than CPUs are labelled oversubscribed.
 *
 * Targets (issue 3): ticket ns/op at 2 producers <= 1.3x its 1-producer
 * cost; ticket beats CAS at 2 or more producers. The verdicts are printed,
 * not enforced: this is a benchmark, not a test.
 *
 *   mpsc_sweep [-n total] [-r runs] [-s slots] [-C]
 *     -n  messages per run, split across the producers (default 400000)
 *     -r  runs per point (default 5)
 *     -s  ring slots, power of two (default 1024)
 *     -C  skip the callgrind counts
 */
#define _GNU_SOURCE
#include "bench.h"

#include <baton.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXP		8
#define SLOT		8

static const int sweep_p[] = { 1, 2, 4, 8 };
#define NPOINTS	((int)(sizeof(sweep_p) / sizeof(sweep_p[0])))

static inline void relax(void)
{
	__builtin_ia32_pause();
}

/* ---- the CAS-retry baseline (bench only) ---- */

struct cas_ring {
	uint64_t tail __attribute__((aligned(64)));
	uint64_t head __attribute__((aligned(64)));
	uint64_t lost[MAXP] __attribute__((aligned(64)));
	uint64_t mask;
	uint64_t *seq;		/* in the same shared mapping */
	uint64_t *slots;
};

static struct cas_ring *cas_new(uint32_t slots)
{
	size_t len = sizeof(struct cas_ring) + 2 * (size_t)slots * 8;
	struct cas_ring *r = bench_shared_alloc(len);
	uint32_t i;

	memset(r, 0, len);
	r->mask = slots - 1;
	r->seq = (uint64_t *)(r + 1);
	r->slots = r->seq + slots;
	for (i = 0; i < slots; i++)
		r->seq[i] = i;
	bench_prefault(r, len, 1);
	return r;
}

/* The CAS loop: observe the tail, CAS it; a lost race goes around. */
__attribute__((noinline)) void sweep_cas_push(struct cas_ring *r, int me,
					      uint64_t v)
{
	unsigned int polls = 0;
	uint64_t t, s;

	for (;;) {
		t = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
		s = __atomic_load_n(&r->seq[t & r->mask], __ATOMIC_ACQUIRE);
		if (s == t) {
			if (__atomic_compare_exchange_n(&r->tail, &t, t + 1, 0,
							__ATOMIC_ACQ_REL,
							__ATOMIC_RELAXED))
				break;
			r->lost[me]++;	/* own cache line per producer */
		} else if ((int64_t)(s - t) < 0) {
			/* full: the slot still holds the previous lap */
			relax();
			if (++polls % 64 == 0)
				sched_yield();
		}
	}
	r->slots[t & r->mask] = v;
	__atomic_store_n(&r->seq[t & r->mask], t + 1, __ATOMIC_RELEASE);
}

static int cas_pop(struct cas_ring *r, uint64_t *c, uint64_t *v)
{
	uint64_t s = __atomic_load_n(&r->seq[*c & r->mask], __ATOMIC_ACQUIRE);

	if (s != *c + 1)
		return 0;
	*v = r->slots[*c & r->mask];
	__atomic_store_n(&r->seq[*c & r->mask], *c + r->mask + 1,
			 __ATOMIC_RELEASE);
	(*c)++;
	return 1;
}

/* ---- the ticket ring ---- */

/*
 * The ticket push without the look for room: the library's push before
 * baton_mpsc_prod_room(), kept to show what that look buys.
 */
__attribute__((noinline)) int sweep_noroom_push(struct baton_ring *r,
						uint64_t v)
{
	uint64_t t = baton_mpsc_prod_reserve(r, 1);
	unsigned int polls = 0;

	while (!baton_mpsc_prod_slot_free(r, t)) {
		relax();
		if (++polls % 64 == 0)
			sched_yield();
	}
	memcpy(baton_ring_slot(r, t), &v, sizeof(v));
	baton_mpsc_prod_publish(r, t);
	baton_mpsc_prod_done(r);
	return 0;
}

/*
 * The same inline steps as baton_mpsc_push() (look for room, one
 * fetch_add, wait on the slot's sequence), with the baseline's waiting
 * policy (spin, yield every 64 polls) instead of the library's bounded
 * spin then park, so ticket and cas differ in the reservation alone.
 */
__attribute__((noinline)) int sweep_ticket_push(struct baton_ring *r,
						uint64_t v)
{
	unsigned int polls = 0;
	uint64_t t, tail;

	while (!baton_mpsc_prod_room(r, &tail)) {
		relax();
		if (++polls % 64 == 0)
			sched_yield();
	}
	t = baton_mpsc_prod_reserve_from(r, 1, tail);
	polls = 0;
	while (t != tail && !baton_mpsc_prod_slot_free(r, t)) {
		relax();
		if (++polls % 64 == 0)
			sched_yield();
	}
	memcpy(baton_ring_slot(r, t), &v, sizeof(v));
	baton_mpsc_prod_publish(r, t);
	baton_mpsc_prod_done(r);
	return 0;
}

/* The library's own blocking push: spins, then parks on its slot. */
__attribute__((noinline)) int sweep_lib_push(struct baton_ring *r, uint64_t v)
{
	return baton_mpsc_push(r, &v, sizeof(v));
}

enum { RING_TICKET, RING_CAS, RING_LIB, RING_NOROOM, NRINGS };
static const char *const ring_name[NRINGS] = {
	"ticket", "cas", "ticket-lib", "ticket-noroom",
};

/* ---- one timed point ---- */

struct shared {
	uint32_t ready;
	uint32_t go;
	uint64_t parks;		/* ticket: park calls, producers + consumer */
};

struct point {
	double ns_op;
	double lost_op;
	double parks_op;
};

static void producer_proc(int kind, const char *name, struct cas_ring *cr,
			  struct shared *sh, int me, uint64_t n)
{
	int ticket = kind != RING_CAS;
	struct baton_ring *r = NULL;
	unsigned int spins = 0;
	uint64_t i;

	bench_die_with_parent(getppid());
	if (ticket && baton_ring_open(name, BATON_ROLE_PRODUCER,
				      BATON_BACKEND_AUTO, &r))
		_exit(3);
	__atomic_fetch_add(&sh->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE))
		bench_relax(&spins);
	for (i = 0; i < n; i++) {
		uint64_t v = (uint64_t)me << 56 | i;

		if (kind == RING_LIB) {
			if (sweep_lib_push(r, v))
				_exit(4);
		} else if (kind == RING_NOROOM) {
			sweep_noroom_push(r, v);
		} else if (ticket) {
			sweep_ticket_push(r, v);
		} else {
			sweep_cas_push(cr, me, v);
		}
	}
	if (ticket) {
		struct baton_mpsc_stats st;

		baton_mpsc_stats(r, &st);
		__atomic_fetch_add(&sh->parks, st.park_calls,
				   __ATOMIC_RELAXED);
		baton_ring_close(r);
	}
	_exit(0);
}

static int run_point(int kind, int np, uint64_t total, uint32_t slots,
		     struct point *pt)
{
	int ticket = kind != RING_CAS;
	uint64_t per = total / (uint64_t)np, got = 0, c = 0, v;
	uint64_t next[MAXP] = { 0 }, t0, t1, lost = 0;
	struct baton_ring_params p;
	struct baton_ring *cons = NULL;
	struct cas_ring *cr = NULL;
	struct shared *sh;
	char name[64];
	pid_t pid[MAXP];
	int i, st, ret = 0;

	sh = bench_shared_alloc(sizeof(*sh));
	memset(sh, 0, sizeof(*sh));
	snprintf(name, sizeof(name), "mpsc_sweep.%d", (int)getpid());
	if (ticket) {
		memset(&p, 0, sizeof(p));
		p.kind = BATON_RING_MPSC;
		p.slot_count = slots;
		p.slot_size = SLOT;
		p.mode = 0600;
		p.backend = BATON_BACKEND_AUTO;
		p.max_producers = MAXP;
		baton_ring_unlink(name, BATON_BACKEND_AUTO);
		ret = baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &cons);
		if (ret) {
			fprintf(stderr, "mpsc_sweep: create: %s\n",
				strerror(-ret));
			return ret;
		}
	} else {
		cr = cas_new(slots);
	}
	for (i = 0; i < np; i++) {
		pid[i] = fork();
		if (pid[i] < 0)
			return -errno;
		if (!pid[i])
			producer_proc(kind, name, cr, sh, i, per);
	}
	while (__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) < (uint32_t)np)
		usleep(100);
	t0 = bench_now_ns();
	__atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);
	while (got < per * (uint64_t)np) {
		int rc;

		unsigned int polls = 0;

		if (kind == RING_LIB) {
			rc = baton_mpsc_pop(cons, &v, sizeof(v), 10000000000LL,
					    NULL);
		} else if (ticket) {
			/* the baseline's waiting policy, as in the push */
			while ((rc = baton_mpsc_try_pop(cons, &v, sizeof(v),
							NULL)) == -EAGAIN) {
				relax();
				if (++polls % 64 == 0)
					sched_yield();
			}
		} else {
			while (!cas_pop(cr, &c, &v)) {
				relax();
				if (++polls % 64 == 0)
					sched_yield();
			}
			rc = 0;
		}
		if (rc != 0) {
			fprintf(stderr, "mpsc_sweep: pop: %d\n", rc);
			ret = -EIO;
			break;
		}
		/* in order per producer, or the figure is of a broken ring */
		if ((v & ((1ULL << 56) - 1)) != next[v >> 56]++) {
			fprintf(stderr, "mpsc_sweep: producer %llu out of order\n",
				(unsigned long long)(v >> 56));
			ret = -EPROTO;
			break;
		}
		got++;
	}
	t1 = bench_now_ns();
	for (i = 0; i < np; i++) {
		if (ret)
			kill(pid[i], SIGKILL);
		waitpid(pid[i], &st, 0);
		if (!ret && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
			ret = -ECHILD;
	}
	if (cr)
		for (i = 0; i < np; i++)
			lost += cr->lost[i];
	pt->ns_op = (double)(t1 - t0) / (double)got;
	pt->lost_op = (double)lost / (double)got;
	if (cons) {
		struct baton_mpsc_stats cst;

		/* The consumer parks too, and at P = 1 it is the one waiting. */
		baton_mpsc_stats(cons, &cst);
		sh->parks += cst.park_calls;
	}
	pt->parks_op = (double)sh->parks / (double)got;
	if (cons) {
		baton_ring_close(cons);
		baton_ring_unlink(name, BATON_BACKEND_AUTO);
	}
	if (cr)
		bench_shared_free(cr, sizeof(*cr) + 2 * (size_t)slots * 8);
	bench_shared_free(sh, sizeof(*sh));
	return ret;
}

/* ---- callgrind: instructions per push, deterministic ---- */

#define CG_BATCH	32

/* The bulk forms, counted per message: a batch of CG_BATCH 8-byte ones. */
__attribute__((noinline)) int sweep_push_bulk(struct baton_ring *r,
					      const uint64_t *m)
{
	return baton_mpsc_push_bulk8(r, m, CG_BATCH, NULL);
}

__attribute__((noinline)) int sweep_pop_bulk(struct baton_ring *r,
					     uint64_t *m)
{
	return baton_mpsc_try_pop_bulk8(r, m, CG_BATCH, NULL);
}

/* cg_child's modes: what runs and what valgrind counts. */
enum { CG_CAS, CG_TICKET, CG_PUSH_BULK, CG_POP_BULK };

struct cg_arg {
	int ticket;
	int me;
	uint64_t n;
	const char *name;
	struct cas_ring *cr;
	int err;
};

static void *cg_producer(void *arg)
{
	struct cg_arg *a = arg;
	struct baton_ring *r = NULL;
	uint64_t i;

	if (a->ticket && baton_ring_open(a->name, BATON_ROLE_PRODUCER,
					 BATON_BACKEND_AUTO, &r)) {
		a->err = 1;
		return NULL;
	}
	if (a->ticket == CG_PUSH_BULK || a->ticket == CG_POP_BULK) {
		uint64_t m[CG_BATCH];

		for (i = 0; i < a->n; i += CG_BATCH) {
			for (int k = 0; k < CG_BATCH; k++)
				m[k] = i + (uint64_t)k;
			a->err |= sweep_push_bulk(r, m) != CG_BATCH;
		}
	}
	for (i = 0; a->ticket <= CG_TICKET && i < a->n; i++) {
		if (a->ticket)
			a->err |= sweep_ticket_push(r, i);
		else
			sweep_cas_push(a->cr, a->me, i);
	}
	if (r)
		baton_ring_close(r);
	return NULL;
}

/* The child valgrind runs: np threads push n each into a ring that holds them all. */
static int cg_child(int ticket, int np, uint64_t n)
{
	uint32_t slots = 1;
	struct baton_ring_params p;
	struct baton_ring *cons = NULL;
	struct cg_arg a[MAXP];
	pthread_t th[MAXP];
	char name[64];
	int i, err = 0;

	while (slots < n * (uint64_t)np)
		slots <<= 1;
	snprintf(name, sizeof(name), "mpsc_sweep_cg.%d", (int)getpid());
	memset(&p, 0, sizeof(p));
	p.kind = BATON_RING_MPSC;
	p.slot_count = slots;
	p.slot_size = SLOT;
	p.mode = 0600;
	p.backend = BATON_BACKEND_AUTO;
	p.max_producers = MAXP;
	if (ticket && baton_ring_create(name, &p, BATON_ROLE_CONSUMER, &cons))
		return 3;
	for (i = 0; i < np; i++) {
		a[i] = (struct cg_arg){ .ticket = ticket, .me = i, .n = n,
					.name = name };
		a[i].cr = ticket ? NULL : (i ? a[0].cr : cas_new(slots));
		if (pthread_create(&th[i], NULL, cg_producer, &a[i]))
			return 4;
	}
	for (i = 0; i < np; i++) {
		pthread_join(th[i], NULL);
		err |= a[i].err;
	}
	if (cons && ticket == CG_POP_BULK) {
		uint64_t m[CG_BATCH], got = 0;

		while (got < n * (uint64_t)np) {
			int k = sweep_pop_bulk(cons, m);

			if (k <= 0)
				return 6;
			got += (uint64_t)k;
		}
	}
	if (cons) {
		baton_ring_close(cons);
		baton_ring_unlink(name, BATON_BACKEND_AUTO);
	}
	return err ? 5 : 0;
}

/* Ir inside the push function, per push; < 0 if valgrind is unusable. */
static double cg_count(const char *self, int ticket, int np, uint64_t n)
{
	char out[128], cmd[1024], line[512];
	double ir = -1;
	FILE *f;

	snprintf(out, sizeof(out), "/tmp/mpsc_sweep.cg.%d", (int)getpid());
	snprintf(cmd, sizeof(cmd),
		 "valgrind --tool=callgrind --fair-sched=yes --callgrind-out-file=%s --toggle-collect=%s %s --callgrind-child %d %d %llu >/dev/null 2>&1",
		 out, ticket == CG_TICKET ? "sweep_ticket_push" :
		 ticket == CG_PUSH_BULK ? "sweep_push_bulk" :
		 ticket == CG_POP_BULK ? "sweep_pop_bulk" : "sweep_cas_push", self,
		 ticket, np, (unsigned long long)n);
	if (system(cmd) != 0)
		return -1;
	f = fopen(out, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "summary:", 8) || !strncmp(line, "totals:", 7))
			ir = strtod(strchr(line, ':') + 1, NULL);
	fclose(f);
	unlink(out);
	return ir < 0 ? -1 : ir / (double)(n * (uint64_t)np);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	uint64_t total = 400000;
	uint32_t slots = 1024;
	int runs = 5, callgrind = 1, opt, i, k, r, ncpu;
	struct point pts[NRINGS][NPOINTS];
	double med[NRINGS][NPOINTS], mn[NRINGS][NPOINTS], mx[NRINGS][NPOINTS];
	double cg[4][NPOINTS];
	double v[64];

	if (argc == 5 && !strcmp(argv[1], "--callgrind-child"))
		return cg_child(atoi(argv[2]), atoi(argv[3]),
				strtoull(argv[4], NULL, 10));
	while ((opt = getopt(argc, argv, "n:r:s:C")) != -1) {
		switch (opt) {
		case 'n':
			total = bench_parse_count(optarg);
			break;
		case 'r':
			runs = atoi(optarg);
			break;
		case 's':
			slots = (uint32_t)bench_parse_count(optarg);
			break;
		case 'C':
			callgrind = 0;
			break;
		default:
			fprintf(stderr, "usage: %s [-n total] [-r runs] [-s slots] [-C]\n",
				argv[0]);
			return 2;
		}
	}
	if (runs < 1 || runs > 64 || !total || slots < 2 || (slots & (slots - 1))) {
		fprintf(stderr, "mpsc_sweep: bad arguments\n");
		return 2;
	}
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	bench_watchdog(1800, "mpsc_sweep");
	printf("mpsc_sweep: 1 consumer process, P producer processes, %d-byte messages, %u-slot ring\n",
	       SLOT, slots);
	printf("  %llu messages per run split across the producers, %d runs per point, median [min..max]\n",
	       (unsigned long long)total, runs);
	printf("  backend %s, %d CPUs online; points with P + 1 > %d processes are oversubscribed\n",
	       baton_backend_name(baton_backend_resolve(BATON_BACKEND_AUTO)),
	       ncpu, ncpu);
	printf("  ticket: baton_mpsc_push (one fetch_add, then the slot's own sequence)\n");
	printf("  cas:    CAS-retry reservation on the tail, same slots (bench/mpsc_sweep.c only)\n\n");

	for (i = 0; i < NPOINTS; i++) {
		double vv[NRINGS][64], lost[NRINGS] = { 0 }, parks[NRINGS] = { 0 };

		for (r = 0; r < runs; r++) {
			/* alternate the order, so drift hits both rings alike */
			for (k = 0; k < NRINGS; k++) {
				int ring = (k + r) % NRINGS;
				struct point pt = { 0, 0, 0 };

				if (run_point(ring, sweep_p[i], total,
					      slots, &pt)) {
					fprintf(stderr, "mpsc_sweep: P=%d %s failed\n",
						sweep_p[i],
						ring_name[ring]);
					return 1;
				}
				vv[ring][r] = pt.ns_op;
				lost[ring] += pt.lost_op;
				parks[ring] += pt.parks_op;
			}
		}
		for (k = 0; k < NRINGS; k++) {
			memcpy(v, vv[k], sizeof(double) * (size_t)runs);
			qsort(v, (size_t)runs, sizeof(v[0]), cmp_double);
			med[k][i] = v[runs / 2];
			mn[k][i] = v[0];
			mx[k][i] = v[runs - 1];
			pts[k][i].lost_op = lost[k] / runs;
			pts[k][i].parks_op = parks[k] / runs;
		}
	}

	printf("ticket and cas wait alike (spin, sched_yield every 64 polls) on both sides, so\n");
	printf("they differ in the reservation only; ticket-lib is the library's own blocking\n");
	printf("push and pop (spin %s polls, then park in the kernel or on a futex);\n"
	       "ticket-noroom is the ticket push without its look for room at the tail\n"
	       "(the library before it had one): tickets are taken and held on a full ring.\n"
	       "lib parks/op: ticket-lib's park calls, producers and consumer, per op (mean of the runs).\n\n",
	       getenv("BATON_SPIN_LIMIT") ? getenv("BATON_SPIN_LIMIT") : "2000");
	printf("%-3s %-24s %-24s %-10s %-11s %-24s %-24s %-12s %s\n", "P",
	       "ticket ns/op", "cas ns/op", "cas/ticket", "cas lost/op",
	       "ticket-noroom ns/op", "ticket-lib ns/op", "lib parks/op",
	       "");
	for (i = 0; i < NPOINTS; i++) {
		char a[64], b[64], l[64], m[64];

		snprintf(m, sizeof(m), "%.1f [%.1f..%.1f]", med[3][i],
			 mn[3][i], mx[3][i]);

		snprintf(l, sizeof(l), "%.1f [%.1f..%.1f]", med[2][i],
			 mn[2][i], mx[2][i]);

		snprintf(a, sizeof(a), "%.1f [%.1f..%.1f]", med[0][i],
			 mn[0][i], mx[0][i]);
		snprintf(b, sizeof(b), "%.1f [%.1f..%.1f]", med[1][i],
			 mn[1][i], mx[1][i]);
		printf("%-3d %-24s %-24s %-10.2f %-11.4f %-24s %-24s %-12.4f %s\n",
		       sweep_p[i], a, b, med[1][i] / med[0][i],
		       pts[1][i].lost_op, m, l, pts[2][i].parks_op,
		       sweep_p[i] + 1 > ncpu ? "oversubscribed" : "");
	}

	if (callgrind) {
		const uint64_t n = 20000;

		printf("\ncallgrind instructions per push (valgrind --tool=callgrind --fair-sched=yes,\n");
		printf("  producers as threads, %llu pushes each, ring holds the whole run, counted\n",
		       (unsigned long long)n);
		printf("  inside sweep_ticket_push / sweep_cas_push only; push-bulk and pop-bulk:\n");
		printf("  baton_mpsc_push_bulk8 / try_pop_bulk8 in batches of %d, per message):\n",
		       CG_BATCH);
		printf("%-3s %-10s %-10s %-10s %-10s %s\n", "P", "ticket", "cas",
		       "push-bulk", "pop-bulk", "cas/ticket");
		for (i = 0; i < NPOINTS; i++) {
			cg[0][i] = cg_count(argv[0], CG_TICKET, sweep_p[i], n);
			cg[1][i] = cg_count(argv[0], CG_CAS, sweep_p[i], n);
			cg[2][i] = cg_count(argv[0], CG_PUSH_BULK, sweep_p[i], n);
			cg[3][i] = cg_count(argv[0], CG_POP_BULK, sweep_p[i], n);
			if (cg[0][i] < 0 || cg[1][i] < 0 || cg[2][i] < 0 ||
			    cg[3][i] < 0) {
				printf("  (valgrind not available: skipped)\n");
				break;
			}
			printf("%-3d %-10.2f %-10.2f %-10.2f %-10.2f %.2f\n",
			       sweep_p[i], cg[0][i], cg[1][i], cg[2][i], cg[3][i],
			       cg[1][i] / cg[0][i]);
		}
	}

	printf("\ntarget: ticket ns/op at P=2 <= 1.3x P=1: %.2fx %s\n",
	       med[0][1] / med[0][0],
	       med[0][1] <= 1.3 * med[0][0] ? "MET" : "NOT MET");
	printf("target: ticket beats cas at P>=2: cas/ticket P=2 %.2fx %s; "
	       "oversubscribed: P=4 %.2fx %s, P=8 %.2fx %s\n",
	       med[1][1] / med[0][1], med[1][1] > med[0][1] ? "MET" : "NOT MET",
	       med[1][2] / med[0][2], med[1][2] > med[0][2] ? "met" : "not met",
	       med[1][3] / med[0][3], med[1][3] > med[0][3] ? "met" : "not met");
	printf("ticket-noroom: P=2 %.2fx P=1; cas/ticket-noroom P=2 %.2fx, P=4 %.2fx, P=8 %.2fx\n",
	       med[3][1] / med[3][0], med[1][1] / med[3][1],
	       med[1][2] / med[3][2], med[1][3] / med[3][3]);
	printf("(%d CPUs: with P + 1 > %d processes the points are oversubscribed)\n",
	       ncpu, ncpu);
	return 0;
}
