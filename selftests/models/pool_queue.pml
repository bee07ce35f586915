/* One class's free queue of a buffer pool: lib/pool.c's refill() and
 * flush() in holders that may die at any step, against kmod/pool.c's
 * repairs (baton_pool_holder_release(), BATON_POOL_IOC_UNSTICK, the repair
 * work). Documentation/pool.rst has the protocol.
 *
 *   holder k, OPS times: refill when its magazine is empty, else flush some
 *     of its buffers (after using them, or not: a use bumps the generation);
 *     then it closes (kmod: the file's release, as for a death).
 *   refill (want 1 or 2): claim.op = POP; count the entries published from
 *     h = head; none but h below the tail -> wait for the head entry
 *     (wait_head(), UNSTICK(h)); claim.n, entries cleared; claim.floor = h
 *     (Y5); CAS head h -> h + k (a failure: floor = NONE, count again);
 *     claim.ticket = h; per entry: read the value and record it in the
 *     claim, seq = t + qcap (Y3), take the buffer (CAS FREE(gen) ->
 *     OWNED(k, gen), after waiting out KERNEL(gen)); nothing taken (holes,
 *     stale values) -> ticket, floor = NONE, again; claim idle.
 *   flush n (1 or 2): claim entries, n, op = PUSH; floor = tail (Y5);
 *     t = fetch_add(tail, n); ticket = t; per entry: wait until seq == t + i
 *     (wait_seq(), UNSTICK(t + i)), descriptor FREE, value and
 *     seq = t + i + 1 (Y1); claim idle.
 *   death: at any step boundary (a killer process, `unless`), at most MAXD
 *     holders. The kernel learns of it later, at release: until then the
 *     dead holder's claim is live to it.
 *   kernel: every section holds pool->lock (mutex; atomic sequences here,
 *     as each section reads and writes only what pool->lock or the words'
 *     owners being dead protect, or words it re-checks: see below):
 *     release of a gone holder: dead to UNSTICK from here, finish its claim
 *       (a push with a ticket: fill every entry still free for its ticket
 *       with the value if the buffer is FREE with its generation or OWNED
 *       by the dead holder (made FREE), else a hole; a pop with a ticket:
 *       release what is unreleased, requeue what was read and not taken; a
 *       pop with a floor and no ticket: a suspect), resolve the suspects,
 *       reclaim every buffer OWNED by it (KERNEL, next generation, push),
 *       reset its claim;
 *     push: only if the tail's entry is free for the tail's ticket (then
 *       the tail by cmpxchg, FREE, value, seq), else pending;
 *     repair work (every 5 ms while anything is left): resolve the
 *       suspects, push the pending buffers;
 *     UNSTICK(c), asked by a waiting holder (its ioctl: served by the
 *       kernel process here, one section at a time): c unpublished below the
 *       tail and no live holder may hold it for a push -> a hole
 *       (NO_INDEX); the entry still holding ticket c - qcap, taken (below
 *       the head) and no live holder may hold it for a pop -> release it
 *       and requeue its value. "May hold": a live claim of that op whose
 *       ticket covers it, or with no ticket and floor <= it.
 *   waits: the holders' spin-then-UNSTICK loops and the repair work's
 *     retries are modelled as "ask, then block until a word the answer
 *     depends on changes" (head, tail, a seq, a claim word, a release:
 *     every such store clears the watch bits), so a wait nothing will end
 *     is an end state, which `final` rejects.
 *
 * Why atomic kernel sections are enough: every kernel step on a shared
 * word is a cmpxchg from the exact value read (tail, descriptors), or a
 * write to an entry only the dead holder or nobody may write (seq
 * re-checked first), and its reads of the claims come after its acquire
 * load of the head or tail, which orders each holder's floor (stored
 * before its CAS or fetch_add) before; a holder that moves on during the
 * read of the claims releases or publishes the entry, which the
 * re-check of seq catches. The model is sequentially consistent; the
 * orders it needs are the release/acquire pairs Y1..Y5
 * (memory-ordering.rst). The decay (FREE -> KERNEL -> FREE, same
 * generation) and SENT buffers are not modelled; the memfd backend's
 * repair is the same rules run by a holder (lib/pool_memfd.c).
 *
 * Steps: one per store or atomic the argument is about (floor, CAS or
 * fetch_add, ticket, descriptor FREE, publication, release, take); stores
 * no reader can tell apart are one step (n and the entries with the
 * floor, a value with its seq, the read and record of a value with its
 * release: a death between them leaves the kernel reading the entry
 * instead of the claim, the same value).
 *
 * Geometry: 2 buffers, qcap 4 (the module's qcap for 2: a power of two
 * >= 2 * count, so the bound the queue relies on is tight), 2 holders of
 * OPS (2) operations each, both of which may die (MAXD). Two starts (see
 * init): FRESH, and AGED, a lap on with holes, where freers and the
 * kernel's pushes meet entries a taker still holds.
 *
 * Safety, in every state (monitor): no buffer is both queued and owned,
 * or queued twice (valid entries in [head, tail), i.e. published with the
 * buffer's current generation, plus 1 if OWNED or KERNEL, is at most 1);
 * a buffer in a live holder's magazine is OWNED by it (so never by two);
 * the queue never holds more than qcap tickets. A holder's publication
 * and release find the entry as it left it (assertions). At the end (no
 * move left): every holder gone and released, nothing pending, every
 * buffer FREE and queued exactly once; a holder still waiting fails it.
 *
 *   VARIANT 0: as implemented                                  -> errors: 0
 *   VARIANT 1: UNSTICK fills a hole without asking whether a live holder
 *              may hold the ticket: a live freer's entry is filled under
 *              it and it waits for ever                         -> caught
 *   VARIANT 2: flush makes its descriptors FREE before it takes its
 *              tickets: a freer that dies before publishing leaves FREE
 *              buffers on no queue, which the reclaim walk skips: lost
 *                                                                -> caught
 *   VARIANT 3: the kernel's push takes the tail by fetch_add and waits
 *              for the entry, holding pool->lock: the entry's taker is
 *              dead and its release needs the lock: wedged       -> caught
 *   VARIANT 4: refill stores its floor after the CAS on the head: a death
 *              between them leaves an idle-looking claim, and the entries
 *              it took are never released: the buffers are lost -> caught
 *
 * spin -DVARIANT=n -a pool_queue.pml && gcc -O2 -DNFAIR=3 -o pan pan.c &&
 * ./pan -a -f      (about 6 million states, 850 MB, 15 s for VARIANT 0)
 */
#ifndef VARIANT
#define VARIANT 0
#endif
#define NB 2		/* buffers */
#define Q 4		/* qcap */
#define NH 2		/* holders */
#define W 2		/* most entries per refill or flush */
#define OPS 2		/* refills and flushes per holder */
#define MAXD 2		/* deaths: both holders may die */
#define NONE 255	/* BATON_POOL_NO_TICKET */
#define NOIDX 255	/* BATON_POOL_NO_INDEX */
#define FREE 1
#define OWNED 2
#define KERNEL 3
#define PUSH 1
#define POP 2
#define V(g, b)	((g) * 4 + (b))	/* BATON_POOL_ENTRY(gen, index) */
#define VIDX(v)	((v) % 4)
#define VGEN(v)	((v) / 4)

byte head = 0;
byte tail = NB;
byte seq[Q];
byte val[Q];
byte dkind[NB];			/* descriptor: kind, holder + 1, generation */
byte downer[NB];
byte dgen[NB];
byte cop[NH];			/* claim pages */
byte cn[NH];
byte cfloor[NH];
byte cticket[NH];
byte cent[NH * W];
bit live[NH];			/* the kernel's holder[]: not released yet */
bit gone[NH];			/* stopped: killed, or closed */
byte deaths = 0;
bit pend[NB];			/* the kernel's pending bitmap */
byte sfirst[NH];		/* suspects: a dead refill's floor and n */
byte sn[NH];
byte nsusp = 0;
bit mutex = 0;			/* pool->lock */
byte watchers = 0;		/* holders waiting for a change, one bit each */
bit kwatch = 0;			/* the repair work, likewise */
byte inmag[NB];			/* ghost: holder + 1 whose magazine has it */

/* kernel scratch, zero outside its sections */
byte kv, kb, kg, kt, ks, kp, ki, kj, kk, kh;
byte ask[NH];			/* UNSTICK asked for ticket + 1, 0: none */
bit kres, kleft;

#define WAKE	watchers = 0; kwatch = 0
/* A holder gone: its magazine is nobody's use any more (ghost). */
#define FORGET(h1)	if :: inmag[0] == (h1) -> inmag[0] = 0 :: else -> skip fi; \
			if :: inmag[1] == (h1) -> inmag[1] = 0 :: else -> skip fi
#define WATCHING(k)	(watchers & (1 << (k)))
#define UNWATCH		watchers = watchers & (255 - (1 << me))

/* ---- the invariant ---- */

/* The ticket entry j stands for in [head, head + Q). */
#define TK(j)	(head + (((j) + Q - head % Q) % Q))
#define VALID(j, b)	(TK(j) < tail && seq[j] == TK(j) + 1 && \
			 val[j] == V(dgen[b], b))
#define NVALID(b)	(VALID(0, b) + VALID(1, b) + VALID(2, b) + VALID(3, b))
#define HELD(b)		(dkind[b] == OWNED || dkind[b] == KERNEL)
#define ONE(b)		(NVALID(b) + HELD(b) <= 1 && \
			 (inmag[b] == 0 || \
			  (dkind[b] == OWNED && downer[b] == inmag[b])))
#define INV		(ONE(0) && ONE(1) && tail - head <= Q)

active proctype monitor()
{
end:
	atomic { !INV -> assert(INV) }
}

/* ---- the kernel (kmod/pool.c), every inline under pool->lock ---- */

/* baton_pool_live_may_hold(): kres */
inline live_may_hold(op, c)
{
	kres = 0;
	ki = 0;
	do
	:: ki == NH -> break
	:: ki < NH ->
		if
		:: live[ki] && cop[ki] == op && cticket[ki] != NONE &&
		   c >= cticket[ki] && c - cticket[ki] < cn[ki] -> kres = 1
		:: live[ki] && cop[ki] == op && cticket[ki] == NONE &&
		   cfloor[ki] <= c -> kres = 1
		:: else -> skip
		fi;
		ki++
	od;
	ki = 0
}

/* baton_pool_push(): buffer pb (the kernel's) as FREE(pg), now or pending */
inline kpush(pb, pg)
{
	dkind[pb] = KERNEL;
	downer[pb] = 0;
	dgen[pb] = pg;
	kp = tail;
#if VARIANT == 3
	tail = kp + 1;
	WAKE;
	(seq[kp % Q] == kp);	/* waits for user space, holding the lock */
	dkind[pb] = FREE;
	val[kp % Q] = V(pg, pb);
	seq[kp % Q] = kp + 1;
#else
	if
	:: seq[kp % Q] == kp ->	/* baton_pool_try_push() */
		tail = kp + 1;
		dkind[pb] = FREE;
		val[kp % Q] = V(pg, pb);
		seq[kp % Q] = kp + 1;
		WAKE
	:: else -> pend[pb] = 1
	fi;
#endif
	kp = 0
}

/* baton_pool_requeue(): a value a dead taker removed and never took */
inline requeue(rv)
{
	if
	:: rv != NOIDX && dkind[VIDX(rv)] == FREE &&
	   dgen[VIDX(rv)] == VGEN(rv) && VGEN(rv) != 0 ->
		kb = VIDX(rv);
		kg = VGEN(rv);
		kpush(kb, kg)
	:: else -> skip
	fi
}

/* baton_pool_fill(): publish fv at ticket ft if still free for it */
inline fill(ft, fv, fh)
{
	if
	:: seq[(ft) % Q] != (ft) -> skip
	:: else ->
		kv = fv;
		if
		:: kv != NOIDX ->
			kb = VIDX(kv);
			kg = VGEN(kv);
			if
			:: dkind[kb] == OWNED && downer[kb] == (fh) + 1 &&
			   dgen[kb] == kg ->
				dkind[kb] = FREE;
				downer[kb] = 0
			:: else -> skip
			fi;
			if
			:: dkind[kb] == FREE && dgen[kb] == kg -> skip
			:: else -> kv = NOIDX
			fi
		:: else -> skip
		fi;
		val[(ft) % Q] = kv;
		seq[(ft) % Q] = (ft) + 1;
		WAKE
	fi
}

/* baton_pool_finish_claim() */
inline finish_claim(hh)
{
	if
	:: cop[hh] == 0 || (cticket[hh] == NONE && cfloor[hh] == NONE) -> skip
	:: cop[hh] == POP && cticket[hh] == NONE && cfloor[hh] != NONE ->
		sfirst[nsusp] = cfloor[hh];	/* baton_pool_suspect() */
		sn[nsusp] = cn[hh];
		nsusp++
	:: cop[hh] == PUSH && cticket[hh] == NONE && cfloor[hh] != NONE ->
		skip			/* its holes are UNSTICK's */
	:: cop[hh] == PUSH && cticket[hh] != NONE ->
		kj = 0;
		do
		:: kj == cn[hh] -> break
		:: kj < cn[hh] ->
			fill(cticket[hh] + kj, cent[hh * W + kj], hh);
			kj++
		od
	:: cop[hh] == POP && cticket[hh] != NONE ->
		kj = 0;
		do
		:: kj == cn[hh] -> break
		:: kj < cn[hh] ->
			kt = cticket[hh] + kj;
			if
			:: seq[kt % Q] == kt + 1 ->
				kv = val[kt % Q];
				seq[kt % Q] = kt + Q;
				WAKE
			:: else -> kv = cent[hh * W + kj]
			fi;
			requeue(kv);
			kj++
		od
	fi
}

/* baton_pool_resolve(): settle the suspects no live holder may hold */
inline resolve()
{
	kk = 0;
	do
	:: kk >= nsusp -> break
	:: kk < nsusp ->
		kleft = 0;
		if
		:: head < sfirst[kk] + sn[kk] -> skip	/* its CAS failed */
		:: else ->
			kj = 0;
			do
			:: kj == sn[kk] -> break
			:: kj < sn[kk] ->
				kt = sfirst[kk] + kj;
				if
				:: seq[kt % Q] == kt + 1 ->
					live_may_hold(POP, kt);
					if
					:: kres -> kleft = 1
					:: else ->
						kv = val[kt % Q];
						seq[kt % Q] = kt + Q;
						WAKE;
						requeue(kv)
					fi
				:: else -> skip
				fi;
				kj++
			od
		fi;
		if
		:: kleft -> kk++
		:: else ->
			nsusp--;
			sfirst[kk] = sfirst[nsusp];
			sn[kk] = sn[nsusp];
			sfirst[nsusp] = 0;
			sn[nsusp] = 0
		fi
	od
}

/* baton_pool_reclaim(): every buffer OWNED by the dead hh */
inline reclaim(hh)
{
	kj = 0;
	do
	:: kj == NB -> break
	:: kj < NB ->
		if
		:: dkind[kj] == OWNED && downer[kj] == (hh) + 1 ->
			kg = dgen[kj] + 1;
			kpush(kj, kg)
		:: else -> skip
		fi;
		kj++
	od
}

/* baton_pool_push_pending() */
inline push_pending()
{
	kj = 0;
	do
	:: kj == NB -> break
	:: kj < NB ->
		kp = tail;
		if
		:: pend[kj] && seq[kp % Q] == kp ->
			pend[kj] = 0;
			tail = kp + 1;
			dkind[kj] = FREE;
			val[kp % Q] = V(dgen[kj], kj);
			seq[kp % Q] = kp + 1;
			WAKE
		:: else -> skip
		fi;
		kj++
	od;
	kp = 0
}

inline kclean()
{
	kv = 0; kb = 0; kg = 0; kt = 0; ks = 0; kp = 0;
	ki = 0; kj = 0; kk = 0; kh = 0; kres = 0; kleft = 0
}

/* baton_pool_holder_release() */
inline release(hh)
{
	live[hh] = 0;
	WAKE;
	finish_claim(hh);
	if
	:: nsusp > 0 -> resolve()
	:: else -> skip
	fi;
	reclaim(hh);
	cop[hh] = 0;
	cn[hh] = 0;
	cfloor[hh] = NONE;
	cticket[hh] = NONE;
	cent[hh * W] = 0;
	cent[hh * W + 1] = 0
}

/* baton_pool_unstick(): ticket c, asked by a waiting holder */
inline unstick(c)
{
	kt = c;
	ks = seq[kt % Q];
	if
	:: ks == kt && kt < tail ->
#if VARIANT != 1
		live_may_hold(PUSH, kt);
#endif
		if
		:: !kres && seq[kt % Q] == kt -> fill(kt, NOIDX, 0)
		:: else -> skip
		fi
	:: kt >= Q && ks == kt - Q + 1 && kt - Q >= head -> skip
	:: kt >= Q && ks == kt - Q + 1 && kt - Q < head ->
		live_may_hold(POP, kt - Q);
		if
		:: !kres && seq[kt % Q] == kt - Q + 1 ->
			kv = val[kt % Q];
			seq[kt % Q] = kt;
			WAKE;
			requeue(kv)
		:: else -> skip
		fi
	:: else -> skip
	fi
}

/*
 * The kernel: releases, UNSTICK (served here for the asking holder, whose
 * ioctl it is: one section at a time, as pool->lock makes them) and the
 * repair work.
 */
active proctype kernel()
{
end:
	do
	:: atomic { mutex == 0 && ((gone[0] && live[0]) || (gone[1] && live[1])) ->
		mutex = 1;
		if
		:: gone[0] && live[0] -> kh = 0
		:: gone[1] && live[1] -> kh = 1
		fi;
		release(kh);
		mutex = 0;
		kclean() }
	:: atomic { mutex == 0 && (ask[0] != 0 || ask[1] != 0) ->
		mutex = 1;
		if
		:: ask[0] != 0 -> kh = 0
		:: ask[1] != 0 -> kh = 1
		fi;
		unstick(ask[kh] - 1);
		ask[kh] = 0;
		mutex = 0;
		if
		:: !gone[kh] -> watchers = watchers | (1 << kh)
		:: else -> skip
		fi;
		kclean() }
	:: atomic { mutex == 0 && !kwatch &&
		    (nsusp > 0 || pend[0] || pend[1]) ->
		mutex = 1;
		resolve();
		push_pending();
		mutex = 0;
		kclean();
		kwatch = (nsusp > 0 || pend[0] || pend[1]) }
	od
}

/* ---- the holders (lib/pool.c) ---- */

/* Ask the kernel about ticket c (UNSTICK), then wait until something moved. */
#define ASK(c, done) \
	ask[me] = (c) + 1; \
	(ask[me] == 0 && ((done) || !WATCHING(me)))

proctype holder(byte me)
{
	byte ops = 0, mag = 0, want, h, k, i, v, n, t, e;
	byte fb[W];
	bit ok;
	{
	do
	:: ops == OPS -> break
	:: ops < OPS && mag == 0 ->
		/* refill() */
		atomic {
			if
			:: want = 1
			:: want = 2
			fi;
			cop[me] = POP;
			WAKE }
again:
		do
		:: atomic {
			h = head;	/* published(): Y2 */
			k = 0;
			do
			:: k < want && seq[(h + k) % Q] == h + k + 1 -> k++
			:: else -> break
			od }
			if
			:: k == 0 && tail <= h -> break	/* empty: ENOMEM */
			:: k == 0 && tail > h ->
				/* wait_head() */
				do
				:: atomic { seq[h % Q] == h + 1 || head != h ->
					UNWATCH };
					break
				:: else -> ASK(h, (seq[h % Q] == h + 1 || head != h))
				od
			:: k > 0 ->
				/* n and the entries, then the floor (Y5) */
				atomic { cn[me] = k;
					 cent[me * W] = NOIDX;
					 cent[me * W + 1] = NOIDX;
#if VARIANT != 4
					 cfloor[me] = h;
#endif
					 WAKE }
				atomic {
					if
					:: head == h -> head = h + k; ok = 1
					:: else -> ok = 0
					fi;
					WAKE }
				if
				:: ok -> ok = 0; break
				:: else ->
#if VARIANT != 4
					cfloor[me] = NONE;
					WAKE
#else
					skip
#endif
				fi
			fi
		od;
		if
		:: k > 0 ->
#if VARIANT == 4
			cfloor[me] = h;
			WAKE;
#endif
			cticket[me] = h;
			WAKE;
			i = 0;
			do
			:: i == k -> break
			:: i < k ->
				e = (h + i) % Q;
				atomic {	/* read, record, release (Y3) */
					v = val[e];
					cent[me * W + i] = v;
					assert(seq[e] == h + i + 1);
					seq[e] = h + i + Q;
					WAKE }
				/* take_entry(): wait out KERNEL(gen), CAS */
				if
				:: v == NOIDX -> skip
				:: else ->
					atomic {
						(dkind[VIDX(v)] != KERNEL ||
						 dgen[VIDX(v)] != VGEN(v)) ->
						if
						:: dkind[VIDX(v)] == FREE &&
						   dgen[VIDX(v)] == VGEN(v) ->
							dkind[VIDX(v)] = OWNED;
							downer[VIDX(v)] = me + 1;
							assert(inmag[VIDX(v)] == 0);
							inmag[VIDX(v)] = me + 1;
							mag = mag | (1 << VIDX(v))
						:: else -> skip
						fi }
				fi;
				v = 0;
				i++
			od;
			if
			:: mag == 0 ->	/* only holes or stale values */
				atomic { cticket[me] = NONE;
					 cfloor[me] = NONE;
					 WAKE }
				goto again
			:: else -> skip
			fi
		:: else -> skip
		fi;
		atomic {	/* claim_idle() */
			cop[me] = 0; cticket[me] = NONE; cfloor[me] = NONE;
			WAKE;
			h = 0; k = 0; i = 0; e = 0; want = 0 };
		ops++
	:: ops < OPS && mag != 0 ->
		/* use some, then flush() them */
		atomic {
			if
			:: mag == 1 -> n = 1; fb[0] = 0
			:: mag == 2 -> n = 1; fb[0] = 1
			:: mag == 3 -> n = 1; fb[0] = 0
			:: mag == 3 -> n = 1; fb[0] = 1
			:: mag == 3 -> n = 2; fb[0] = 0; fb[1] = 1
			fi;
			if
			:: skip		/* never allocated */
			:: i = 0;	/* allocated and freed: a new generation */
				do
				:: i == n -> break
				:: i < n ->
					dgen[fb[i]] = dgen[fb[i]] + 1;
					i++
				od;
				i = 0
			fi;
			i = 0;
			do
			:: i == n -> break
			:: i < n ->
				cent[me * W + i] = V(dgen[fb[i]], fb[i]);
				i++
			od;
			i = 0;
			cn[me] = n;
			cop[me] = PUSH;
			WAKE }
#if VARIANT == 2
		atomic {
			i = 0;
			do
			:: i == n -> break
			:: i < n ->
				dkind[fb[i]] = FREE;
				downer[fb[i]] = 0;
				inmag[fb[i]] = 0;
				i++
			od;
			i = 0 }
#endif
		cfloor[me] = tail;	/* Y5 */
		WAKE;
		atomic { t = tail; tail = tail + n; WAKE }
		cticket[me] = t;
		WAKE;
		i = 0;
		do
		:: i == n -> break
		:: i < n ->
			e = (t + i) % Q;
			/* wait_seq() */
			do
			:: atomic { seq[e] == t + i -> UNWATCH }; break
			:: else -> ASK(t + i, seq[e] == t + i)
			od;
#if VARIANT != 2
			atomic {	/* Y1: the descriptor first */
				dkind[fb[i]] = FREE;
				downer[fb[i]] = 0;
				inmag[fb[i]] = 0 }
#endif
			atomic {
				assert(seq[e] == t + i);
				val[e] = V(dgen[fb[i]], fb[i]);
				seq[e] = t + i + 1;
				WAKE }
			i++
		od;
		atomic {	/* claim_idle() */
			cop[me] = 0; cticket[me] = NONE; cfloor[me] = NONE;
			WAKE;
			i = 0;
			do
			:: i == n -> break
			:: i < n -> mag = mag & (255 - (1 << fb[i])); i++
			od;
			i = 0; n = 0; t = 0; e = 0; fb[0] = 0; fb[1] = 0 };
		ops++
	od;
	atomic {	/* close: released as a dead holder is */
		ops = 0; mag = 0; want = 0; ok = 0;
		FORGET(me + 1);
		gone[me] = 1 }
	} unless {
		gone[me] ->
		atomic { ops = 0; mag = 0; want = 0; h = 0; k = 0; i = 0;
			 v = 0; n = 0; t = 0; e = 0; fb[0] = 0; fb[1] = 0;
			 ok = 0; UNWATCH }
	}
}

/* kill -9 of any holder at any step, at most MAXD of them */
active proctype killer()
{
end:
	do
	:: atomic { deaths < MAXD && !gone[0] ->
		gone[0] = 1; deaths++; FORGET(1) }
	:: atomic { deaths < MAXD && !gone[1] ->
		gone[1] = 1; deaths++; FORGET(2) }
	od
}

/* When nothing can move: everyone released, every buffer back, once. */
active proctype final()
{
end:
	timeout ->
	assert(gone[0] && gone[1] && !live[0] && !live[1]);
	assert(nsusp == 0 && !pend[0] && !pend[1]);
	assert(dkind[0] == FREE && NVALID(0) == 1);
	assert(dkind[1] == FREE && NVALID(1) == 1)
}

/*
 * Two starts, both reachable. FRESH: as created, every buffer queued
 * once. AGED: the queue a lap on and full (tail - head == qcap): a third
 * holder took both buffers, took tickets 2 and 3 to free them and died
 * before storing its ticket; its release requeued both (next generation)
 * at 4 and 5 and left 2 and 3 unpublished for UNSTICK. Takers must pass
 * those holes, so the next lap's freers and the kernel's pushes meet
 * entries a taker still holds (UNSTICK's second case, pending pushes).
 */
init {
	byte j;
	atomic {
		for (j : 0 .. NH - 1) {
			cfloor[j] = NONE; cticket[j] = NONE; live[j] = 1
		}
		if
		:: for (j : 0 .. Q - 1) {	/* FRESH */
			if
			:: j < NB -> seq[j] = j + 1; val[j] = V(1, j)
			:: else -> seq[j] = j
			fi
		   }
		   for (j : 0 .. NB - 1) { dkind[j] = FREE; dgen[j] = 1 }
		:: head = 2;			/* AGED */
		   tail = 6;
		   seq[0] = 5; val[0] = V(2, 0);
		   seq[1] = 6; val[1] = V(2, 1);
		   seq[2] = 2; val[2] = V(1, 0);
		   seq[3] = 3; val[3] = V(1, 1);
		   for (j : 0 .. NB - 1) { dkind[j] = FREE; dgen[j] = 2 }
		fi;
		j = 0;
		run holder(0);
		run holder(1)
	}
}
