/* One wake per park episode on the memfd backend (issue 13, item 1).
 *
 * memfd has no wait-queue lock to clear the parker's flag under, so the
 * waiting word carries a per-park generation: word = gen * 2 + PARKED
 * (bit 0 PARKED; the real word also has bit 1 POLL and gen in bits 2..31).
 *   parker: arm a new generation (store, then membarrier: F and G), re-check
 *           the ring, FUTEX_WAIT on the word with the armed value, disarm
 *           (store 0) on the way out;
 *   waker:  after its index store, load the word (E); if PARKED, reload it
 *           and compare-and-swap PARKED off the very value it loaded; only
 *           if that succeeds, FUTEX_WAKE the word.
 * The futex compare and queue is atomic (its hash-bucket lock). The model
 * runs under sequential consistency: park_tso.pml shows F and G make the
 * store-then-load pairs behave so. It checks what the generation, the
 * compare-and-swap and the futex word add.
 *
 * Besides the liveness property `done`, an assertion bounds the storm:
 * FUTEX_WAKE calls never exceed parks (every successful compare-and-swap
 * takes one armed episode). A second waker (other_waker) makes wakes that
 * leave the parker's condition as it was: an MPSC producer publishing
 * another ticket, on the same cons_waiting word. Signals (SPUR) end
 * sleeps early, so one publication can span several episodes and a
 * 1-bit generation wraps.
 *
 *   VARIANT 0: as built: futex on the word, CAS, a 1-bit generation that
 *              wraps, another waker                          -> errors: 0
 *   VARIANT 1: memfd before: futex on the index, the waker FUTEX_WAKEs
 *              whenever it sees PARKED, only the parker clears
 *                                                            -> storm assertion
 *   VARIANT 2: futex on the index, CAS, no generation: a waker that saw
 *              an earlier episode takes a later one (ABA)    -> lost wakeup
 *   VARIANT 3: futex on the index, 1-bit generation: the same ABA
 *              across the wrap                               -> lost wakeup
 *   VARIANT 4: futex on the index, 2-bit generation, and another
 *              waker whose wake goes to its own index        -> lost wakeup
 *   VARIANT 5: futex on the word, but the waker clears after its
 *              FUTEX_WAKE (park.pml VARIANT 1)               -> lost wakeup
 *   VARIANT 6: futex on the index, generation, but the waker clears
 *              with a plain store of what it loaded (unconditional)
 *                                                            -> lost wakeup
 * With the futex on the word, a waker that takes a later episode (the
 * wrap) only causes a spurious return: the parker finds the word changed
 * or is woken, looks, and parks again; variant 0 shows nothing is lost.
 */
#ifndef VARIANT
#define VARIANT 0
#endif

#if VARIANT == 1 || VARIANT == 2 || VARIANT == 3 || VARIANT == 4 || VARIANT == 6
#define ON_INDEX 1
#else
#define ON_INDEX 0
#endif

#if VARIANT == 1 || VARIANT == 2
#define GENS 1
#elif VARIANT == 4 || VARIANT == 6
#define GENS 4
#else
#define GENS 2
#endif

#if VARIANT == 0 || VARIANT == 4
#define OTHERS 2
#else
#define OTHERS 0
#endif

#define N 3
#define SPUR 2

byte tail = 0;
byte head = 0;
byte word = 0;		/* gen * 2 + PARKED */
bit queued = 0;		/* in FUTEX_WAIT, not yet woken */
byte parks = 0;
byte wakes = 0;
byte spur = 0;
byte others = 0;

/* FUTEX_WAKE of the parker's futex: dequeue it if it sleeps. */
inline futex_wake() {
  atomic { wakes++; queued = 0; assert(wakes <= parks) }
}

/* The out-of-line wake (memfd_wake / baton__memfd_wake_word). */
inline take(w, ok, mine) {
#if VARIANT == 1
  futex_wake()
#else
  w = word;
  if
  :: (w & 1) ->
#if VARIANT == 6
     word = w - 1; ok = 1;
#elif VARIANT == 5
     skip;
#else
     atomic { if :: word == w -> word = w - 1; ok = 1 :: else -> ok = 0 fi };
#endif
#if VARIANT == 5
     futex_wake();
     atomic { if :: word == w -> word = w - 1 :: else -> skip fi }
#else
     if
     :: ok && (mine || !ON_INDEX) -> futex_wake()
     :: ok && !(mine || !ON_INDEX) -> atomic { wakes++ }   /* another futex */
     :: else -> skip
     fi
#endif
  :: else -> skip
  fi
#endif
}

active proctype producer() {
  byte i = 0, w;
  bit ok;
  do
  :: i < N ->
     tail++; i++;
     w = word;                       /* E */
     if
     :: (w & 1) -> take(w, ok, 1)
     :: else -> skip
     fi
  :: i == N -> break
  od
}

/* MPSC: another producer's publication, on a ticket the parker is not at. */
active proctype other_waker() {
  byte w;
  bit ok;
  do
  :: others < OTHERS && (word & 1) -> others++; take(w, ok, 0)
  :: others == OTHERS -> break
  :: head == N -> break
  od
}

active proctype consumer() {
  byte gen = 0, armed;
  do
  :: head == N -> break
  :: head < tail -> head++
  :: head == tail && head < N ->
     gen = (gen + 1) % GENS;
     armed = gen * 2 + 1;
     atomic { word = armed; parks++ };        /* arm, F, G */
     if
     :: tail != head -> skip                  /* re-check */
     :: else ->
        atomic {                              /* FUTEX_WAIT: compare, queue */
#if ON_INDEX
          if :: tail == head -> queued = 1 :: else -> skip fi
#else
          if :: word == armed -> queued = 1 :: else -> skip fi
#endif
        };
        if
        :: queued == 0 -> skip                /* woken, or never slept */
        :: atomic { spur < SPUR && queued -> spur++; queued = 0 }   /* signal */
        fi
     fi;
     word = 0                                 /* disarm */
  od
}

ltl done { <> (head == N) }
