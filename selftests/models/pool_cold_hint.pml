/* The cold hint of a pool class (struct baton_pool_cold.cold): how many
 * COLD buffers the takers may search for. lib/pool.c take_cold() and
 * claim_cold_hint() against the decay's count (kmod/pool.c
 * baton_pool_decay_class(), lib/pool_memfd.c decay()), which scans the
 * descriptors one by one and then stores what it counted plus what it
 * made COLD itself. Documentation/pool.rst, "Decay", has the protocol.
 *
 * A taker with the queue empty searches only while the hint is not 0,
 * and answers ENOMEM otherwise, until the next tick stores a fresh count.
 * So the hint may err high (a search that finds nothing) but must never
 * read less than the COLD buffers there are once everyone is done: that
 * would be ENOMEM with buffers to give, for a whole tick (a tick is
 * decay_ms / 4; up to 150 s).
 *
 *   taker k, TAKES times: take one COLD buffer (CAS COLD -> OWNED), then
 *     give it back to the decay's next pass (OWNED -> FREE, as a free
 *     does; the next decay may make it COLD again).
 *   decay, NDEC times: count the COLD descriptors one at a time, make
 *     one FREE buffer COLD (if any), store hint = count + made.
 *
 * Safety at the end (every process done): hint >= the COLD buffers.
 *
 *   VARIANT 0: as implemented: claim hint units first (CAS hint -> hint
 *              - 1, none when 0), then search; a search that finds
 *              nothing gives its unit back                    -> errors: 0
 *   VARIANT 1: search first, then decrement by what was taken (the
 *              tree before): a count the decay took while a taker sat
 *              between its CAS and its decrement is decremented for a
 *              buffer it never counted: hint below COLD          -> caught
 *
 * spin -DVARIANT=n -a pool_cold_hint.pml && gcc -O2 -DNFAIR=3 -o pan pan.c &&
 * ./pan -a -f
 */
#ifndef VARIANT
#define VARIANT 0
#endif
#define NB 3		/* buffers */
#define NT 2		/* takers */
#define TAKES 2		/* takes per taker */
#define NDEC 2		/* decay passes */
#define FREE 1
#define OWNED 2
#define COLD 6

byte kind[NB];
byte hint;
byte running = NT + 1;

/* One search: the first COLD buffer taken by CAS, in *got (NB: none). */
inline search(got)
{
	got = 0;
	do
	:: got < NB ->
		atomic {
			if
			:: kind[got] == COLD -> kind[got] = OWNED; break
			:: else -> got++
			fi
		}
	:: else -> break
	od
}

proctype taker()
{
	byte n = 0, got, have;

	do
	:: n < TAKES ->
#if VARIANT == 1
		search(got);
		if
		:: got < NB -> hint = hint - 1	/* a wrap reads high */
		:: else -> skip
		fi;
#else
		/* claim_cold_hint(): one CAS, none when 0 */
		atomic {
			have = hint;
			if
			:: have > 0 -> hint = have - 1
			:: else -> have = 0
			fi
		}
		if
		:: have > 0 ->
			search(got);
			if
			:: got == NB -> hint = hint + 1	/* unused: back */
			:: else -> skip
			fi
		:: else -> got = NB	/* ENOMEM: the hint said none */
		fi;
#endif
		if
		:: got < NB -> kind[got] = FREE	/* used, freed */
		:: else -> skip
		fi;
		n++
	:: else -> break
	od;
	running--
}

proctype decay()
{
	byte n = 0, i, cnt, made;

	do
	:: n < NDEC ->
		cnt = 0;
		made = 0;
		i = 0;
		do
		:: i < NB ->
			if
			:: kind[i] == COLD -> cnt++
			:: else -> skip
			fi;
			i++
		:: else -> break
		od;
		/* FREE -> COLD (the KERNEL step between is not the point) */
		i = 0;
		do
		:: i < NB ->
			atomic {
				if
				:: kind[i] == FREE -> kind[i] = COLD; made = 1;
					break
				:: else -> i++
				fi
			}
		:: else -> break
		od;
		hint = cnt + made;
		n++
	:: else -> break
	od;
	running--
}

init {
	byte i, cold;

	atomic {
		i = 0;
		do
		:: i < NB -> kind[i] = COLD; i++
		:: else -> break
		od;
		hint = NB;
		i = 0;
		do
		:: i < NT -> run taker(); i++
		:: else -> break
		od;
		run decay()
	}
	running == 0;
	cold = 0;
	i = 0;
	do
	:: i < NB ->
		if
		:: kind[i] == COLD -> cold++
		:: else -> skip
		fi;
		i++
	:: else -> break
	od;
	assert(hint >= cold)
}
