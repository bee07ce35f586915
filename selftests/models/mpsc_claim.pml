/* MPSC tombstone attribution: lib's claim protocol against kmod/mpsc.c's
 * baton_mpsc_attribute(), with producers that may die at any step.
 *
 *   producer k (lib/include/baton.h, baton_mpsc_push), per message:
 *     f = tail (relaxed; the room check reads it here); claim.floor = f;
 *     t = fetch_add(tail, 1) (I); claim.first = t; claim.count = 1 (J);
 *     write slot; seq[t] = t + 1 (K); claim.count = 0; claim.floor = NONE (J).
 *   death    at any step boundary (kill -9 between any two instructions);
 *            the kernel learns of it at file release: the producer's claim
 *            is no longer "live" and the horizon is the tail read then.
 *   kernel   the consumer's park check at ticket c (baton_mpsc_check_consumer
 *            and _attribute): c below the tail, unpublished, a death seen and
 *            c below its horizon -> read every live claim (count, first,
 *            floor: acquire loads, one step each); a claim covering c ->
 *            wait; a live floor <= c -> re-check later; else re-read seq[c]
 *            and, if still unpublished, write the tombstone.
 *
 * The model is sequentially consistent. That is sound for this protocol on
 * x86-TSO and under the C11 orders used: every step the argument needs is a
 * release store read by an acquire load (I, J, K), which TSO and C11 keep
 * in order; the one store->load pair on the producer side (count, then the
 * slot's seq) only makes the kernel see a claim later, which is the "maybe"
 * answer already explored here.
 *
 * Safety (assertions): the kernel never tombstones a ticket whose producer
 * is alive (the ghost owner[] of a tombstoned ticket is dead), a producer
 * never finds its ticket's slot taken by a tombstone when it publishes, and
 * when nothing can move any more every ticket handed out is published or
 * tombstoned, so a dead producer never wedges the consumer (the kernel's
 * waits are modelled as blocking until a word it read changes, so a wait
 * nothing will end shows up as that final state).
 *
 *   VARIANT 0: as implemented                                    -> errors: 0
 *   VARIANT 1: no floor: a LIVE producer between its fetch_add and J
 *              looks idle, and its ticket is tombstoned          -> caught
 *   VARIANT 2: the claim is cleared before the publication (J before K):
 *              same window, from the other side                 -> caught
 *   VARIANT 3: the kernel reads seq[c] before the claims: a publication and
 *              clear in between make a published ticket look abandoned
 *                                                                -> caught
 *   VARIANT 4: the kernel ignores "maybe" (a live floor <= c): it tombstones
 *              a ticket whose holder is between fetch_add and J  -> caught
 *   VARIANT 5: the kernel still counts a released producer's claim: the
 *              consumer waits on a dead producer's ticket forever -> caught
 *
 * spin -DVARIANT=n -a mpsc_claim.pml && gcc -O2 -o pan pan.c && ./pan -a -f
 */
#ifndef VARIANT
#define VARIANT 0
#endif
#define NP 2		/* producers */
#define MSGS 2		/* messages each */
#define NT 4		/* tickets: NP * MSGS, no wrap */
#define NONE 255
#define TOMB 32

byte tail = 0;
byte seq[NT];			/* c: unpublished; c+1: message; c+1+TOMB: tombstone */
byte cl_floor[NP];
byte cl_first[NP];
byte cl_count[NP];
bit dead[NP];			/* it took its last step */
bit live[NP];			/* the kernel's view: file not yet released */
bit dead_any = 0;
byte horizon = 0;		/* tail read at the (last) release */
byte owner[NT];			/* ghost: who took each ticket */
bit done[NP];			/* ghost: pushed everything */

/* One producer step. Death cuts in between any two (the `unless` below). */
#define STEP(k, s)	s

proctype producer(byte k)
{
	byte f, t, m = 0;
	{
	do
	:: m == MSGS -> break
	:: m < MSGS ->
#if VARIANT == 1
		STEP(k, f = tail);
#else
		STEP(k, f = tail);
		STEP(k, cl_floor[k] = f);
#endif
		/* I: the one locked instruction; the ghost owner with it */
		STEP(k, atomic { t = tail; tail++; owner[t] = k });
		STEP(k, cl_first[k] = t);
		STEP(k, cl_count[k] = 1);
#if VARIANT == 2
		STEP(k, cl_count[k] = 0);
		STEP(k, cl_floor[k] = NONE);
#endif
		/* K: publish; the slot must still be ours */
		STEP(k, atomic { assert(seq[t] == t); seq[t] = t + 1 });
#if VARIANT != 2
		STEP(k, cl_count[k] = 0);
		STEP(k, cl_floor[k] = NONE);
#endif
		m++
	od;
	done[k] = 1
	} unless { dead[k] }
}

/*
 * kill -9 at any point, and the kernel's release with it: at most one
 * death. (The release comes later in reality; until then the kernel counts
 * the claim as live and waits, which this model also explores before the
 * kill happens.)
 */
#define KILL(k)	atomic { !done[k] -> dead[k] = 1; live[k] = 0; \
			 horizon = tail; dead_any = 1 }
active proctype killer()
{
	if
	:: skip
	:: KILL(0)
	:: KILL(1)
	fi
}

active proctype consumer()
{
	byte c = 0, s, k, cnt, fst, flr;
	byte rc[NP], rf[NP], rl[NP];	/* the claim words as read */
	bit rlive[NP];
	bit maybe, covered;
end:
	do
	:: c == NT -> break
	:: c < NT ->
		s = seq[c];
		if
		:: s == c + 1 || s == c + 1 + TOMB -> c++
		:: s == c ->
			/* park until something may have changed */
end_parked:		(seq[c] != c || (dead_any && c < tail && c < horizon));
			if
			:: seq[c] != c -> skip
			:: else ->
				maybe = 0; covered = 0;
#if VARIANT == 3
				s = seq[c];
#endif
				k = 0;
				do
				:: k == NP -> break
#if VARIANT == 5
				:: k < NP && 0 -> k++
				:: k < NP ->
#else
				:: k < NP && !live[k] -> rlive[k] = 0; k++
				:: k < NP && live[k] ->
#endif
					rlive[k] = live[k];
					cnt = cl_count[k];
					fst = cl_first[k];
					flr = cl_floor[k];
					rc[k] = cnt; rf[k] = fst; rl[k] = flr;
					if
					:: cnt != 0 && c - fst < cnt && c >= fst -> covered = 1
					:: cnt != 0 && !(c - fst < cnt && c >= fst) -> skip
					:: cnt == 0 && flr != NONE && c >= flr -> maybe = 1
					:: cnt == 0 && !(flr != NONE && c >= flr) -> skip
					fi;
					k++
				od;
#if VARIANT == 4
				maybe = 0;
#endif
				if
				:: covered || maybe ->
					/*
					 * A live claim covers c (wait) or a live
					 * producer may be mid-reserve (re-check
					 * within a millisecond). Either way the
					 * kernel looks again only after something
					 * moved; if nothing ever does, the consumer
					 * is wedged and wedge_check says so.
					 */
end_waiting:				(seq[c] != c ||
					 live[0] != rlive[0] || live[1] != rlive[1] ||
					 cl_count[0] != rc[0] || cl_first[0] != rf[0] ||
					 cl_floor[0] != rl[0] ||
					 cl_count[1] != rc[1] || cl_first[1] != rf[1] ||
					 cl_floor[1] != rl[1])
				:: else ->
#if VARIANT != 3
					s = seq[c];
#endif
					if
					:: s == c ->
						atomic {
							assert(dead[owner[c]]);
							seq[c] = c + 1 + TOMB
						}
					:: else -> skip
					fi
				fi
			fi
		fi
	od
}

/* When nothing can move: every ticket handed out has been consumed. */
active proctype wedge_check()
{
	byte i;
end:
	timeout ->
	i = 0;
	do
	:: i < tail -> assert(seq[i] != i); i++
	:: i == tail -> break
	od
}

init {
	byte k;
	atomic {
		for (k : 0 .. NT - 1) { seq[k] = k }
		for (k : 0 .. NP - 1) { cl_floor[k] = NONE; live[k] = 1 }
		run producer(0);
		run producer(1)
	}
}
