/* The decay's COLD buffers on one class's free queue: lib/pool.c's
 * refill() and flush() (one entry at a time) and take_cold(), against the
 * decay (kmod/pool.c baton_pool_decay_take() and _give(); lib/pool_memfd.c
 * decay_one() is the same rules run by a holder). Documentation/pool.rst,
 * "Decay", has the protocol; memory-ordering.rst (Y10) the order.
 *
 *   holder k, OPS times: allocate, and free what it got.
 *   allocate: h = head; the head entry published -> CAS head h -> h + 1,
 *     read the value and release the entry (seq = h + Q), take the buffer
 *     (wait while it is KERNEL with the entry's generation, then CAS
 *     FREE(gen) -> OWNED(k, gen); anything else: a stale entry, dropped:
 *     allocate again); unpublished below the tail -> wait for it; the
 *     queue empty (tail == h) -> take_cold: h = head, tail == h or
 *     ENOMEM; per buffer, read its state, then its aux, and if it is COLD
 *     with aux <= h, CAS COLD(gen) -> OWNED(k, gen).
 *   free: the generation moves on (the handle is stale at once); t =
 *     fetch_add(tail, 1); wait until seq[t] == t (the previous lap's taker
 *     has released it); aux (a free time, here 1), then the descriptor
 *     FREE; value and seq = t + 1 (Y1). The decay may take the buffer
 *     between its FREE and its publication: the entry is stale when
 *     published, and the tail the decay read is past it.
 *   decay, NDEC times: a FREE buffer -> KERNEL (cmpxchg from the value
 *     read); aux = the tail (read now); COLD with the same generation
 *     (release: Y10). Its queue entry is stale from here.
 *
 * The model is sequentially consistent: one step per store or atomic the
 * argument is about. Deaths are not modelled: a COLD buffer is taken by
 * one compare-and-swap, so a holder that dies holding it owns it, which
 * pool_queue.pml's reclaim covers; the decay is the kernel's (never
 * dies) or, on memfd, a holder's, whose death leaves KERNEL with its
 * index, which the repair makes FREE again with its entry still queued.
 *
 * Safety, in every state (monitor): the queue never holds more tickets
 * than there are buffers (so a freer never waits on a lap: qcap is twice
 * the count); a buffer is never both reachable from a valid entry and
 * owned. At a COLD take (assertion): no published entry in
 * [head, tail) names the buffer. At the end: every buffer FREE and
 * validly queued exactly once, or COLD; no holder left waiting.
 *
 *   VARIANT 0: as implemented                                  -> errors: 0
 *   VARIANT 1: take_cold does not check aux against the head it saw: a
 *              buffer freed and decayed after the taker saw the queue
 *              empty is taken with its stale entry still queued, and
 *              freed again it has two                            -> caught
 *   VARIANT 2: the decay stores COLD before aux: a taker reads COLD with
 *              the old aux (a free time, below any head) and takes the
 *              buffer with its stale entry still queued         -> caught
 *
 * spin -DVARIANT=n -a pool_cold.pml && gcc -O2 -DNFAIR=3 -o pan pan.c &&
 * ./pan -a -f
 */
#ifndef VARIANT
#define VARIANT 0
#endif
#define NB 2		/* buffers */
#define Q 4		/* qcap: 2 * NB */
#define NH 2		/* holders */
#define OPS 2		/* allocations per holder */
#define NDEC 2		/* decays */
#define NOBODY 255
#define FREE 1
#define OWNED 2
#define KERNEL 3
#define COLD 6

byte head, tail;
byte seq[Q];
byte qidx[Q];
byte qgen[Q];
byte kind[NB];
byte gen[NB];
byte aux[NB];
byte running = NH + 1;

/* A published entry of ticket t naming buffer i. */
#define names(t, i)	(seq[(t) % Q] == (t) + 1 && qidx[(t) % Q] == (i))

/* Entries in [head, tail) that would still hand buffer i out. */
inline count_valid(i, n)
{
	n = 0;
	t = head;
	do
	:: t < tail ->
		if
		:: names(t, i) && qgen[t % Q] == gen[i] && kind[i] == FREE ->
			n++
		:: else -> skip
		fi;
		t++
	:: else -> break
	od
}

inline take_cold(k, got)
{
	h = head;
	if
	:: tail != h -> skip		/* entries came: ENOMEM this time */
	:: else ->
		j = 0;
		do
		:: j < NB && got == NOBODY ->
			sk = kind[j];
			sg = gen[j];
			sa = aux[j];
			if
			:: sk == COLD && (VARIANT == 1 || sa <= h) ->
				atomic {
					if
					:: kind[j] == COLD && gen[j] == sg ->
						t = head;
						do
						:: t < tail ->
							assert(!names(t, j));
							t++
						:: else -> break
						od;
						kind[j] = OWNED;
						got = j
					:: else -> skip
					fi
				}
			:: else -> skip
			fi;
			j++
		:: else -> break
		od
	fi;
	skip;
	d_step { j = 0; sk = 0; sg = 0; sa = 0; t = 0 }
}

inline allocate(k, got)
{
	got = NOBODY;
again:
	h = head;
	if
	:: seq[h % Q] == h + 1 ->
		atomic {
			if
			:: head == h -> head = h + 1; took = 1
			:: else -> took = 0
			fi
		}
		if
		:: took ->
			d_step { vi = qidx[h % Q]; vg = qgen[h % Q]; seq[h % Q] = h + Q }
			(kind[vi] != KERNEL || gen[vi] != vg);
			atomic {
				if
				:: kind[vi] == FREE && gen[vi] == vg ->
					kind[vi] = OWNED;
					got = vi
				:: else -> skip
				fi
			}
			if
			:: got == NOBODY -> goto again
			:: else -> skip
			fi
		:: else -> goto again
		fi
	:: seq[h % Q] != h + 1 && tail > h ->
		(head != h || seq[h % Q] == h + 1);
		goto again
	:: seq[h % Q] != h + 1 && tail <= h ->
		take_cold(k, got)
	fi;
	skip;
	d_step { h = 0; vi = 0; vg = 0; took = 0 }
}

inline free_one(k, i)
{
	gen[i] = gen[i] + 1;
	atomic { t = tail; tail++ }
	(seq[t % Q] == t);
	aux[i] = 1;
	kind[i] = FREE;
	d_step { qidx[t % Q] = i; qgen[t % Q] = gen[i]; seq[t % Q] = t + 1;
		 t = 0 }
}

proctype holder(byte k)
{
	byte h, t, j, sk, sg, sa, vi, vg, took, got, ops = 0;

	do
	:: ops < OPS ->
		allocate(k, got);
		if
		:: got != NOBODY -> free_one(k, got)
		:: else -> skip
		fi;
		ops++
	:: else -> break
	od;
	running--
}

proctype decay()
{
	byte i, g, n = 0;

	do
	:: n < NDEC ->
		if
		:: i = 0
		:: i = 1
		fi;
		atomic {
			if
			:: kind[i] == FREE -> kind[i] = KERNEL; g = gen[i]
			:: else -> g = 0
			fi
		}
		if
		:: g != 0 ->
#if VARIANT == 2
			kind[i] = COLD;
			aux[i] = tail
#else
			aux[i] = tail;
			kind[i] = COLD
#endif
		:: else -> skip
		fi;
		d_step { i = 0; g = 0; n++ }
	:: else -> break
	od;
	running--
}

active proctype monitor()
{
	byte i, n, t;

	do
	:: atomic {
		assert(tail - head <= NB);
		i = 0;
		do
		:: i < NB ->
			count_valid(i, n);
			assert(n + (kind[i] != FREE -> 1 : 0) <= 1);
			i++
		:: else -> break
		od;
		i = 0;
		n = 0;
		t = 0
	   }
	:: running == 0 -> break
	od;
	/* The end: each buffer FREE and validly queued once, or COLD. */
	i = 0;
	do
	:: i < NB ->
		count_valid(i, n);
		assert((kind[i] == FREE && n == 1) || kind[i] == COLD);
		i++
	:: else -> break
	od
}

init
{
	byte i;

	atomic {
		i = 0;
		do
		:: i < Q ->
			seq[i] = (i < NB -> i + 1 : i);
			i++
		:: else -> break
		od;
		i = 0;
		do
		:: i < NB ->
			qidx[i] = i;
			qgen[i] = 1;
			kind[i] = FREE;
			gen[i] = 1;
			aux[i] = 1;
			i++
		:: else -> break
		od;
		head = 0;
		tail = NB;
		run holder(0);
		run holder(1);
		run decay()
	}
}
