/* The decay while a holder without COLD is attached (the module's blind
 * mode): kmod/pool.c baton_pool_decay_warm(), baton_pool_decay_take() and
 * baton_pool_decay_requeue() with baton_pool_push(), against a library
 * that takes COLD buffers (lib/pool.c refill() and take_cold(), as in
 * pool_cold.pml) and one that does not (an old library: a stale entry is
 * dropped, an empty queue is ENOMEM). Documentation/pool.rst, "Libraries
 * without COLD", has the protocol; memory-ordering.rst (Y11, Y12) the
 * order.
 *
 *   holder 0 (takes COLD) twice and holder 1 (does not) once:
 *     allocate, and free what it got (pool_cold.pml's steps; a second
 *     round of holder 1 adds no step the argument is about and
 *     quadruples the states).
 *   decay, NDEC steps, each chosen freely (holders open and close
 *   without COLD between passes, so the mode changes too):
 *     warm: a COLD buffer whose aux is at or below the head read before
 *       it (Y11) -> cmpxchg from the COLD read to KERNEL, then the push
 *       under the next generation.
 *     give: a FREE buffer with pages (aux not 0: a buffer the module
 *       queued has none, and blind passes leave it) -> KERNEL (cmpxchg
 *       from the value read), its
 *       pages truncated (no step: nothing here reads them), then the
 *       requeue (Y12): cmpxchg KERNEL(gen) -> KERNEL(next gen), then the
 *       push under that generation.
 *     cold: a pass with no holder blind, as pool_cold.pml's decay: a
 *       FREE buffer -> KERNEL, aux = the tail, COLD (Y10).
 *     push (baton_pool_push(), baton_pool_try_push()): aux 0, then, when
 *       the tail's entry is free for this lap, a CAS of the tail, FREE,
 *       the value and seq = t + 1 (Y1); else the repair work retries,
 *       which is the pass waiting here.
 *
 * At the start buffer 0 is COLD from an earlier pass (no holder was blind
 * then) with its stale entry still queued at ticket 0 and aux 2 (the tail
 * it saw); buffer 1 is FREE, queued at ticket 1. The model is
 * sequentially consistent: one step per store or atomic the argument is
 * about. Deaths are not modelled (pool_queue.pml covers a holder's; a
 * taker that dies waiting on KERNEL is why the requeue pushes rather than
 * storing FREE in place: its release leaves the KERNEL buffer alone).
 *
 * Safety, in every state (monitor): no buffer has more than two entries
 * in [head, tail) (its valid one and one stale), so the queue never holds
 * more than qcap = 2 * NB and a push never waits on a lap that no taker
 * is finishing; no buffer has two valid entries, nor a valid entry while
 * it is owned. At the end: every buffer FREE and validly queued exactly
 * once, or COLD, or owned by nobody and waiting in no pass.
 *
 *   VARIANT 0: as implemented                                  -> errors: 0
 *   VARIANT 1: the warm-up does not check aux against the head: buffer
 *              0 goes back on the queue with its stale entry still ahead,
 *              a pass with nobody blind makes it COLD again, and a
 *              second warm-up adds a third entry                -> caught
 *   VARIANT 2: the requeue pushes under the same generation: the stale
 *              entry the give left is valid again beside the new one, and
 *              the queue outgrows qcap (no buffer is owned twice:
 *              a taker's CAS from FREE(gen) still picks one)    -> caught
 *   VARIANT 3: the warm-up stores KERNEL instead of a cmpxchg from the
 *              COLD read: holder 0 takes the buffer COLD meanwhile and
 *              the push queues a buffer it owns                 -> caught
 *   VARIANT 4: the give takes a buffer with no pages (aux 0) too: one
 *              it has just requeued, its stale entry still ahead, gets a
 *              third entry (the skip bounds the queue, not only the
 *              work)                                            -> caught
 *
 * spin -DVARIANT=n -a pool_blind.pml && gcc -O2 -DNFAIR=3 -o pan pan.c &&
 * ./pan -a -f
 */
#ifndef VARIANT
#define VARIANT 0
#endif
#define NB 2		/* buffers */
#define Q 4		/* qcap: 2 * NB */
#define NH 2		/* holders */
#define OPS(k)	(k == 0 -> 2 : 1)	/* allocations of holder k */
#define NDEC 3		/* decay steps */
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

/*
 * Entries in [head, tail) naming buffer i (n), those of its current
 * generation (w), and of them the valid ones, while it is FREE (v).
 */
inline count_entries(i, n, v, w)
{
	n = 0;
	v = 0;
	w = 0;
	t = head;
	do
	:: t < tail ->
		if
		:: names(t, i) ->
			n++;
			if
			:: qgen[t % Q] == gen[i] ->
				w++;
				if
				:: kind[i] == FREE -> v++
				:: else -> skip
				fi
			:: else -> skip
			fi
		:: else -> skip
		fi;
		t++
	:: else -> break
	od
}

/* lib/pool.c take_cold(): only holder 0's library knows COLD. */
inline take_cold(k, got)
{
	h = head;
	if
	:: tail != h || k != 0 -> skip	/* entries came, or ENOMEM */
	:: else ->
		j = 0;
		do
		:: j < NB && got == NOBODY ->
			/* One word: the kind and generation read together. */
			d_step { sk = kind[j]; sg = gen[j] }
			sa = aux[j];
			if
			:: sk == COLD && sa <= h ->
				atomic {
					if
					:: kind[j] == COLD && gen[j] == sg ->
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
	d_step { j = 0; sk = 0; sg = 0; sa = 0 }
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

/*
 * The entry's value is the generation the freer stored (flush() computes
 * it before its tickets): a give between the FREE and the publication
 * moves the descriptor on, and the entry is then stale.
 */
inline free_one(k, i)
{
	gen[i] = gen[i] + 1;
	fg = gen[i];
	atomic { t = tail; tail++ }
	(seq[t % Q] == t);
	aux[i] = 1;
	kind[i] = FREE;
	d_step { qidx[t % Q] = i; qgen[t % Q] = fg; seq[t % Q] = t + 1;
		 t = 0; fg = 0 }
}

proctype holder(byte k)
{
	byte h, t, j, sk, sg, sa, vi, vg, took, got, fg, ops = 0;

	do
	:: ops < OPS(k) ->
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

/* baton_pool_push() of buffer i, KERNEL under generation g already. */
inline kernel_push(i, g)
{
	aux[i] = 0;
	/* try_push() when the entry is free; else the repair, later. */
	atomic { seq[tail % Q] == tail -> t = tail; tail++ };
	kind[i] = FREE;
	d_step { qidx[t % Q] = i; qgen[t % Q] = g; seq[t % Q] = t + 1;
		 t = 0 }
}

proctype decay()
{
	byte i, g, s, a, h, t, n = 0;

	do
	:: n < NDEC ->
		if
		:: i = 0
		:: i = 1
		fi;
		if
		:: /* warm (Y11): head, then the state, then aux */
			h = head;
			d_step { s = kind[i]; g = gen[i] }
			a = aux[i];
			if
			:: s == COLD && (VARIANT == 1 || a <= h) ->
#if VARIANT == 3
				kind[i] = KERNEL;
				gen[i] = g + 1;
				kernel_push(i, g + 1)
#else
				atomic {
					if
					:: kind[i] == COLD && gen[i] == g ->
						kind[i] = KERNEL;
						gen[i] = g + 1;
						s = KERNEL
					:: else -> s = 0
					fi
				}
				if
				:: s == KERNEL -> kernel_push(i, g + 1)
				:: s != KERNEL -> skip
				fi
#endif
			:: !(s == COLD && (VARIANT == 1 || a <= h)) -> skip
			fi
		:: /* give: take, truncate, requeue (Y12); no pages, no take */
			atomic {
				if
				:: kind[i] == FREE && (VARIANT == 4 || aux[i] != 0) ->
					kind[i] = KERNEL;
					g = gen[i]
				:: !(kind[i] == FREE && (VARIANT == 4 || aux[i] != 0)) ->
					g = 0
				fi
			}
			if
			:: g != 0 ->
#if VARIANT == 2
				kernel_push(i, g)
#else
				atomic {
					if
					:: kind[i] == KERNEL && gen[i] == g ->
						gen[i] = g + 1;
						s = KERNEL
					:: else -> s = 0
					fi
				}
				if
				:: s == KERNEL -> kernel_push(i, g + 1)
				:: s != KERNEL -> skip
				fi
#endif
			:: g == 0 -> skip
			fi
		:: /* a pass with no holder blind (pool_cold.pml's decay) */
			atomic {
				if
				:: kind[i] == FREE -> kind[i] = KERNEL; g = gen[i]
				:: kind[i] != FREE -> g = 0
				fi
			}
			if
			:: g != 0 ->
				aux[i] = tail;
				kind[i] = COLD
			:: g == 0 -> skip
			fi
		fi;
		d_step { i = 0; g = 0; s = 0; a = 0; h = 0; n++ }
	:: else -> break
	od;
	running--
}

active proctype monitor()
{
	byte i, n, v, w, t;

	do
	:: atomic {
		assert(tail - head <= Q);
		i = 0;
		do
		:: i < NB ->
			count_entries(i, n, v, w);
			assert(n <= 2);
			assert(v <= 1);
			/* Owned: no entry of its generation is queued. */
			assert(kind[i] != OWNED || w == 0);
			i++
		:: else -> break
		od;
		i = 0;
		n = 0;
		v = 0;
		w = 0;
		t = 0
	   }
	:: running == 0 -> break
	od;
	/* The end: each buffer FREE and validly queued once, or COLD. */
	i = 0;
	do
	:: i < NB ->
		count_entries(i, n, v, w);
		assert((kind[i] == FREE && v == 1) || kind[i] == COLD);
		i++
	:: else -> break
	od
}

init
{
	atomic {
		seq[0] = 1; seq[1] = 2; seq[2] = 2; seq[3] = 3;
		qidx[0] = 0; qgen[0] = 1;	/* buffer 0's stale entry */
		qidx[1] = 1; qgen[1] = 1;
		kind[0] = COLD; gen[0] = 1; aux[0] = 2;
		kind[1] = FREE; gen[1] = 1; aux[1] = 1;
		head = 0;
		tail = 2;
		run holder(0);
		run holder(1);
		run decay()
	}
}
