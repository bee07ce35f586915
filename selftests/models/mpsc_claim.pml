/* MPSC tombstones: lib's claim protocol against kmod/mpsc.c's
 * baton_mpsc_attribute() and baton_mpsc_blame(), with producers that may
 * die at any step, and which pid each tombstone names.
 *
 *   producer k (lib/include/baton.h, baton_mpsc_push), per message:
 *     f = tail (relaxed; the room check reads it here); claim.floor = f;
 *     t = fetch_add(tail, 1) (I); claim.first = t; claim.count = 1 (J);
 *     write slot; seq[t] = t + 1 (K); claim.count = 0; claim.floor = NONE (J).
 *   death    at any step boundary (kill -9 between any two instructions);
 *            the kernel learns of it at file release: the producer's claim
 *            is no longer "live" and the horizon is the tail read then; it
 *            keeps a record of the tickets the producer may have held
 *            (exactly its claim if complete, else [floor, horizon); none if
 *            idle), at most DEAD_MAX of them, the oldest forgotten into a
 *            hull of what forgotten records may have held.
 *   kernel   the consumer's park check at ticket c (baton_mpsc_check_consumer
 *            and _attribute): c below the tail, unpublished, a death seen and
 *            c below its horizon -> read every live claim (count, first,
 *            floor: acquire loads, one step each); a claim covering c ->
 *            wait; a live floor <= c -> re-check later; else re-read seq[c]
 *            and, if still unpublished, write the tombstone with the pid
 *            baton_mpsc_blame() names: a record whose complete claim covers
 *            c; else the one record (kept or forgotten) that may hold c;
 *            else nobody (pid 0, counted unattributed).
 *
 * The model is sequentially consistent. That is sound for this protocol on
 * x86-TSO and under the C11 orders used: every step the argument needs is a
 * release store read by an acquire load (I, J, K), which TSO and C11 keep
 * in order; the one store->load pair on the producer side (count, then the
 * slot's seq) only makes the kernel see a claim later, which is the "maybe"
 * answer already explored here.
 *
 * Two producers of two messages each, either or both killed at any step
 * (so one can die before its claim and the other after a complete one);
 * DEAD_MAX is 1, so the second death overflows the records.
 *
 * Safety (assertions): the kernel never tombstones a ticket whose producer
 * is alive (the ghost owner[] of a tombstoned ticket is dead), a tombstone
 * names the producer that held the ticket or nobody, never another, a producer
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
 *   VARIANT 6: attribution before issue 17: an exact claim, else the dead
 *              record with the highest floor at or below c, complete or not,
 *              every death recorded, forgotten ones ignored: a producer killed
 *              after a complete claim is blamed for another's ticket -> caught
 *   VARIANT 7: the highest floor among incomplete records only, forgotten
 *              ones ignored: two mid-reserve deaths, or a forgotten holder,
 *              and the floor picks the wrong one                  -> caught
 *   VARIANT 8: as implemented but without the hull of forgotten records: a
 *              kept record that held nothing stands in for the forgotten
 *              holder                                             -> caught
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
#define NOBODY 255	/* pid 0: the tombstone names nobody */
#define DEAD_MAX 1	/* records kept; the second death overflows them */

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
bit mlock = 0;			/* m->lock: the consumer's check, or a release */

/* the kernel's records of dead producers (kmod/mpsc.c, baton_mpsc_dead) */
byte rec_pid[DEAD_MAX];		/* the producer, NOBODY: unused */
byte rec_lo[DEAD_MAX];		/* VARIANT 0, 8: the span it may have held */
byte rec_hi[DEAD_MAX];
bit rec_exact[DEAD_MAX];
byte rec_floor[DEAD_MAX];	/* VARIANT 6, 7: the claim as recorded */
byte rec_first[DEAD_MAX];
byte rec_count[DEAD_MAX];
byte rec_hor[DEAD_MAX];
byte rec_next = 0;
byte tmp_lo, tmp_hi;		/* remember()'s scratch, reset after */
bit tmp_exact;
bit forgot_any = 0;		/* the hull of what forgotten records held */
byte forgot_lo = 0;
byte forgot_hi = 0;

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
 * baton_mpsc_detach(): the record of producer k, read from its claim once.
 * VARIANT 6 and 7 record every death as the old code did; the others only
 * those that may hold a ticket, with the span, and fold an overwritten
 * record into the hull of forgotten ones.
 */
inline remember(k)
{
#if VARIANT == 6 || VARIANT == 7
	rec_pid[rec_next] = k;
	rec_floor[rec_next] = cl_floor[k];
	rec_first[rec_next] = cl_first[k];
	rec_count[rec_next] = cl_count[k];
	rec_hor[rec_next] = tail;
	rec_next = (rec_next + 1) % DEAD_MAX
#else
	if
	:: cl_count[k] != 0 && cl_first[k] < tail ->
		tmp_lo = cl_first[k]; tmp_exact = 1;
		tmp_hi = (cl_first[k] + cl_count[k] < tail ->
				    cl_first[k] + cl_count[k] : tail)
	:: cl_count[k] == 0 && cl_floor[k] != NONE && cl_floor[k] < tail ->
		tmp_lo = cl_floor[k]; tmp_exact = 0;
		tmp_hi = tail
	:: else -> tmp_lo = NONE	/* idle: no record */
	fi;
	if
	:: tmp_lo != NONE ->
		if
		:: rec_pid[rec_next] != NOBODY ->
			if
			:: !forgot_any ->
				forgot_lo = rec_lo[rec_next];
				forgot_hi = rec_hi[rec_next];
				forgot_any = 1
			:: else ->
				forgot_lo = (rec_lo[rec_next] < forgot_lo ->
					     rec_lo[rec_next] : forgot_lo);
				forgot_hi = (rec_hi[rec_next] > forgot_hi ->
					     rec_hi[rec_next] : forgot_hi)
			fi
		:: else -> skip
		fi;
		rec_pid[rec_next] = k;
		rec_lo[rec_next] = tmp_lo;
		rec_hi[rec_next] = tmp_hi;
		rec_exact[rec_next] = tmp_exact;
		rec_next = (rec_next + 1) % DEAD_MAX
	:: else -> skip
	fi;
	tmp_lo = 0; tmp_hi = 0; tmp_exact = 0
#endif
}

/*
 * kill -9 at any point, and the kernel's release with it, of either
 * producer or both, in either order. (The release comes later in
 * reality; until then the kernel counts the claim as live and waits,
 * which this model also explores before the kill happens.)
 */
#define KILL(k)	atomic { !done[k] && !dead[k] && !mlock -> \
			 dead[k] = 1; live[k] = 0; \
			 remember(k); horizon = tail; dead_any = 1 }
active proctype killer()
{
end:
	do
	:: KILL(0)
	:: KILL(1)
	od
}

/*
 * baton_mpsc_blame(c): the producer the tombstone names, or NOBODY.
 */
inline blame(c, who)
{
	who = NOBODY;
	i = 0;
	n = 0;
	do
	:: i == DEAD_MAX -> break
	:: i < DEAD_MAX && rec_pid[i] == NOBODY -> i++
	:: i < DEAD_MAX && rec_pid[i] != NOBODY ->
#if VARIANT == 6
		if
		:: c < rec_hor[i] && rec_count[i] != 0 && c >= rec_first[i] &&
		   c - rec_first[i] < rec_count[i] ->
			who = rec_pid[i]; n = 255; break
		:: c < rec_hor[i] && rec_floor[i] != NONE && rec_floor[i] <= c &&
		   (who == NOBODY || rec_floor[i] > best) ->
			who = rec_pid[i]; best = rec_floor[i]
		:: else -> skip
		fi;
#elif VARIANT == 7
		if
		:: c < rec_hor[i] && rec_count[i] != 0 && c >= rec_first[i] &&
		   c - rec_first[i] < rec_count[i] ->
			who = rec_pid[i]; n = 255; break
		:: c < rec_hor[i] && rec_count[i] == 0 && rec_floor[i] != NONE &&
		   rec_floor[i] <= c && (who == NOBODY || rec_floor[i] > best) ->
			who = rec_pid[i]; best = rec_floor[i]
		:: else -> skip
		fi;
#else
		if
		:: rec_lo[i] <= c && c < rec_hi[i] && rec_exact[i] ->
			who = rec_pid[i]; n = 255; break
		:: rec_lo[i] <= c && c < rec_hi[i] && !rec_exact[i] ->
			who = rec_pid[i]; n++
		:: else -> skip
		fi;
#endif
		i++
	od;
#if VARIANT != 6 && VARIANT != 7
	if
	:: n == 255 -> skip	/* an exact claim */
#if VARIANT != 8
	:: n != 255 && forgot_any && forgot_lo <= c && c < forgot_hi ->
		who = NOBODY
#endif
	:: else -> who = (n == 1 -> who : NOBODY)
	fi
#endif
}

/* A word the waiting kernel read has changed. */
#define MOVED(k)	(live[k] != rlive[k] || cl_count[k] != rc[k] || \
			 cl_first[k] != rf[k] || cl_floor[k] != rl[k])

active proctype consumer()
{
	byte c = 0, s, k, cnt, fst, flr, who, i, n, best;
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
				/* under m->lock: no release in between */
				atomic { !mlock -> mlock = 1 };
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
					mlock = 0;
					/*
					 * A live claim covers c (wait) or a live
					 * producer may be mid-reserve (re-check
					 * within a millisecond). Either way the
					 * kernel looks again only after something
					 * moved; if nothing ever does, the consumer
					 * is wedged and wedge_check says so.
					 */
end_waiting:				(seq[c] != c || MOVED(0) || MOVED(1))
				:: else ->
#if VARIANT != 3
					s = seq[c];
#endif
					if
					:: s == c ->
						atomic {
							assert(dead[owner[c]]);
							blame(c, who);
							assert(who == NOBODY ||
							       who == owner[c]);
							seq[c] = c + 1 + TOMB;
							who = 0; i = 0; n = 0; best = 0
						}
					:: else -> skip
					fi;
					mlock = 0
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
		for (k : 0 .. DEAD_MAX - 1) { rec_pid[k] = NOBODY }
		run producer(0);
		run producer(1)
	}
}
