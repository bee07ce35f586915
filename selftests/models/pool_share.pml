/* Fan-out of a pool buffer (Documentation/pool.rst, "Fan-out"; Y8): one
 * buffer shared twice (generations 1 and 2) by a sender with two readers,
 * each of which may die at any step; the module's release of a holder
 * (its death, or its close at the end) gives up its part. lib/pool.c
 * baton_pool_share(), baton_pool_put(); kmod/pool.c baton_pool_unshare()
 * and baton_pool_reclaim(); lib/pool_memfd.c drop_dead_readers() (the
 * same rules under the repair lock).
 *
 * Words: the descriptor's state (gen, kind) and aux (agen, mask), each
 * changed only by stores of its owner or by compare-and-swap (atomic
 * blocks here). Sequential consistency: every access is an atomic with
 * acquire/release or stronger; the orderings are Y8's, argued in
 * memory-ordering.rst; this model is about the races between puts, the
 * last put's take and the release.
 *
 *   sender    round r = 1, 2: the buffer OWNED by it under gen r; the mask
 *             of the readers it knows alive, then SHARED (atomically with
 *             reading who is alive: a sender that learned of a death names
 *             that reader no more); waits until the buffer is back.
 *   reader i  each round: wait for SHARED under gen r, check its bit,
 *             read, put (state check; CAS on aux checking agen and its
 *             bit; if it cleared the last bit, CAS the state SHARED ->
 *             OWNED by it, then free). A reader may die before any
 *             step, and between its two CASes; its release then runs.
 *   stale_put another thread of reader 0 repeats its round-1 put, at any
 *             time after it (an application bug), racing the reuse.
 *   release   of holder i: read the state; if SHARED, and aux's agen
 *             matches: clear i's bit if set (CAS); if the mask is then
 *             (or was) empty, CAS the state SHARED -> freed.
 *
 * Checked: a buffer is never freed while a reader of that generation is
 * between its check and its put (assert in free), never freed twice, and
 * every generation is freed once when everything has stopped (the sender
 * waits for it: a leak is an invalid end state).
 *
 *   VARIANT 0: as implemented                                     -> errors: 0
 *   VARIANT 1: the put clears its bit without checking agen (an atomic
 *              AND): the stale put, whose state check saw generation 1,
 *              clears reader 0's bit of generation 2, and reader 1's put
 *              frees it while reader 0 reads                      -> caught
 *   VARIANT 2: the release frees only when it cleared the last bit
 *              itself: a last reader that dies between its two CASes
 *              leaves the buffer SHARED with an empty mask        -> caught
 *   VARIANT 3: the last reader takes the buffer with a plain store, not a
 *              CAS from SHARED: it and a release that found the mask
 *              empty both free it                                 -> caught
 *
 * spin -DVARIANT=n -a pool_share.pml && gcc -O2 -o pan pan.c && ./pan -a -f
 */
#ifndef VARIANT
#define VARIANT 0
#endif

#define K_OWNED  1
#define K_SHARED 2
#define K_FREE   3

byte gen = 0;          /* the state word: generation ... */
byte kind = K_FREE;    /* ... and kind */
byte agen = 0;         /* aux: generation ... */
byte mask = 0;         /* ... and the readers' bits */
byte freed[3];         /* frees per generation */
byte reading[2];       /* the generation reader i reads now, or 0 */
bit  dead[2];
bit  put0_done = 0;  /* reader 0 has put generation 1 */

inline free_gen(g) {
  assert(reading[0] != g && reading[1] != g);
  freed[g]++;
  assert(freed[g] == 1);
  kind = K_FREE
}

/*
 * The module's release of holder i (a death, or a close). Its aux update
 * is a compare-and-swap loop that re-reads on failure: one atomic step
 * here (the same outcomes; the loop is bounded in the code).
 */
inline release(i) {
  byte s_gen;
  bit sh = 0, free_it = 0;

  atomic { s_gen = gen; sh = (kind == K_SHARED) };
  if
  :: sh ->
     atomic {
       if
       :: agen != s_gen -> free_it = 0     /* reused since: not ours */
       :: agen == s_gen && !((mask >> i) & 1) ->
#if VARIANT == 2
          free_it = 0
#else
          free_it = (mask == 0)
#endif
       :: agen == s_gen && (mask >> i) & 1 ->
          mask = mask & ~(1 << i); free_it = (mask == 0)
       fi
     };
     if
     :: free_it ->
        atomic { if :: kind == K_SHARED && gen == s_gen -> free_gen(s_gen) :: else -> skip fi }
     :: else -> skip
     fi
  :: else -> skip
  fi
}

/* A death, or a close once done: either way the release runs. */
inline die_or_go_on(i) {
  if
  :: true -> skip
  :: true -> reading[i] = 0; dead[i] = 1; goto gone
  fi
}

/* Reader i's put of generation g. */
inline put(i, g) {
  bit ok = 0, last = 0;

  atomic { ok = (kind == K_SHARED && gen == g) };
  if
  :: ok ->
     atomic {
#if VARIANT == 1
       if
       :: (mask >> i) & 1 -> mask = mask & ~(1 << i); last = (mask == 0)
       :: else -> ok = 0
       fi
#else
       if
       :: agen == g && (mask >> i) & 1 -> mask = mask & ~(1 << i); last = (mask == 0)
       :: else -> ok = 0
       fi
#endif
     };
     if
     :: last ->
        die_or_go_on(i);                  /* between the two CASes */
#if VARIANT == 3
        atomic { kind = K_OWNED };
        atomic { free_gen(g) }
#else
        atomic {
          if
          :: kind == K_SHARED && gen == g -> kind = K_OWNED; free_gen(g)
          :: else -> skip                 /* a release freed it first */
          fi
        }
#endif
     :: else -> skip
     fi
  :: else -> skip
  fi
}

proctype reader(byte i) {
  byte r = 1;

  do
  :: r > 2 -> break
  :: r <= 2 ->
     die_or_go_on(i);
     /* receive: SHARED under gen r with our bit, or not for us */
     (gen == r && kind != K_OWNED) || gen > r;
     atomic {
       if
       :: gen == r && kind == K_SHARED && agen == r && (mask >> i) & 1 -> reading[i] = r
       :: else -> skip
       fi
     };
     die_or_go_on(i);
     if
     :: reading[i] == r -> reading[i] = 0; die_or_go_on(i); put(i, r)
     :: else -> skip
     fi;
     if
     :: i == 0 && r == 1 -> put0_done = 1
     :: else -> skip
     fi;
     r++
  od;
  atomic { dead[i] = 1 };   /* closes: counts as gone for the sender */
gone:
  release(i)
}

active proctype sender() {
  byte r = 1, m;

  do
  :: r > 2 -> break
  :: r <= 2 ->
     atomic { gen = r; kind = K_OWNED };
     atomic {
       m = (dead[0] -> 0 : 1) | (dead[1] -> 0 : 2);
       if
       :: m == 0 -> free_gen(r)           /* no reader left: free it */
       :: else -> agen = r; mask = m; kind = K_SHARED
       fi
     };
     freed[r] == 1;                        /* back before the next round */
     r++
  od
}

/*
 * Another thread of reader 0's process repeats its round-1 put (an
 * application bug) at any time after it: a stale put, racing the reuse of
 * the buffer for generation 2. Not a death: "gone" only ends it.
 */
proctype stale_put() {
  byte i = 0;

end:
  put0_done == 1;     /* reader 0 may die first: then never */
  put(i, 1);
gone:
  skip
}

init {
  atomic { run reader(0); run reader(1); run stale_put() }
}
