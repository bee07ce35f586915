/* One wake per arm, store buffers (x86-TSO): kmod/ring.c's park, poll and
 * WAKE as built (issue 13 items 1 and 2). Started from the shared
 * park_clear_tso.pml.
 *
 * The consumer's waiting word has two bits, PARKED (a park is armed) and
 * POLL (an epoll registration is armed). The kernel keeps both in its own
 * copy (kpark, kpoll) and mirrors the word into shared memory; every store
 * of the consumer's side to the word is made under the wait-queue lock, so
 * it sits in the consumer CPU's store buffer (wbuf) at worst until that
 * lock is released: a WAKE, which takes the lock, sees it drained
 * (wake_locked waits for an empty wbuf). The producer's fast path stores
 * its tail (buffered too: drain) and loads the word with no fence (E).
 *
 * WAKE (under the lock): takes PARKED and POLL down, dequeues and wakes a
 * queued parker, wakes the epoll registration (a callback), writes the
 * word once. It takes PARKED down whether or not the parker is queued yet:
 * the parker re-checks its arm after queueing, and re-arms (store, F, G)
 * off the queue if a WAKE took it, so it never sleeps with its flag down.
 * The poller's arm is raised by every ->poll that finds it down, whatever
 * the readiness (edge-triggered epoll polls for the last time while the fd
 * is still ready), then F and G, then readiness. The consumer mixes the
 * two: each round it either makes a blocking pop (park, which may time
 * out) or an epoll_wait (edge-triggered: it returns only after a callback
 * since the last events were taken; the re-poll then decides).
 *
 * A second waker makes WAKEs that do not change the tail (MPSC: another
 * producer's ticket; signals).
 *
 * Besides the liveness property `done`, an assertion bounds the storm:
 * the producer (one thread) makes no more WAKEs than there were arms.
 *
 *   VARIANT 0: as built                                         -> errors: 0
 *   VARIANT 1: no re-arm: the parker sleeps with its flag down   -> lost wakeup
 *   VARIANT 2: user space clears the flag it saw after its WAKE,
 *              outside the lock (park.pml VARIANT 1)              -> lost wakeup
 *   VARIANT 3: WAKE never takes the flags down; the parker clears
 *              its own on the way out (main before issue 13)      -> storm
 *   VARIANT 4: re-arm without the IPI (G)                         -> lost wakeup
 *   VARIANT 5: re-arm without the parker's own barrier (F)        -> lost wakeup
 *   VARIANT 6: one bit for both: a park's exit takes the epoll
 *              arm down (main before issue 13)                    -> lost wakeup
 *   VARIANT 7: ->poll arms only when the fd is not ready           -> lost wakeup
 *   VARIANT 8: ->poll arms without F and G                         -> lost wakeup
 *   VARIANT 9: the reset made when the last file of the side goes
 *              takes the arms down without a wake, while a newcomer
 *              of the side is already armed (main before the fix)  -> lost wakeup
 *
 * The other waker stands for that reset too: as built it is a WAKE (flags
 * down, everyone woken), made at any time, whether or not a flag is up.
 */
#ifndef VARIANT
#define VARIANT 0
#endif
#define N 3
#define SPUR 1

byte tail_mem = 0;	/* the published tail, as memory holds it */
byte tail_p = 0;	/* the producer's own view (its buffered store) */
byte wmem = 0;		/* the waiting word in memory: bit 0 PARKED, 1 POLL */
chan wbuf = [3] of { byte };	/* the consumer CPU's buffered word stores */
bit kpark = 0;		/* the kernel's copy: PARKED */
bit kpoll = 0;		/* the kernel's copy: POLL */
byte head = 0;
bit queued = 0;		/* the parker is on the wait queue */
bit pollwoken = 0;	/* an epoll callback since the events were taken */
byte spur = 0;
byte arms = 0;		/* ghosts: the storm bound */
byte wakes = 0;

inline drain_w() { do :: wbuf?b -> wmem = b :: empty(wbuf) -> break od }
inline publish() { wbuf!(kpark + 2 * kpoll) }

/* WAKE after H, the wait-queue lock held: our side's stores are drained. */
inline wake_locked() {
  empty(wbuf);
#if VARIANT != 3
  kpark = 0; kpoll = 0; wmem = 0;
#endif
  queued = 0;
  pollwoken = 1
}

active proctype producer() {
  byte i = 0;
  do
  :: i < N ->
     tail_p = tail_p + 1; i++;
     if
     :: wmem != 0 ->                                   /* E */
        atomic { tail_mem = tail_p; wakes++; assert(wakes <= arms); wake_locked() }
#if VARIANT == 2
        ; wmem = 0                   /* user space "uses up" the flag it saw */
#endif
     :: else -> skip
     fi
  :: i == N -> break
  od
}

active proctype other_waker() {
  do
  :: atomic { spur < SPUR && wmem != 0 -> wake_locked(); spur++ }
#if VARIANT == 9
  :: atomic { spur < SPUR -> empty(wbuf); kpark = 0; kpoll = 0; wmem = 0; spur++ }
#else
  :: atomic { spur < SPUR -> wake_locked(); spur++ }
#endif
  :: spur == SPUR -> break
  :: head == N -> break
  od
}

active proctype drain() {
  byte b;
  do
  :: atomic { tail_mem < tail_p -> tail_mem = tail_mem + 1 }
  :: atomic { wbuf?b -> wmem = b }
  :: head == N -> break
  od
}

/* The store, F, G of an arm (park or poll). */
inline barriers() {
  atomic { drain_w() };          /* F */
  atomic { tail_mem = tail_p }   /* G: the IPI drains the producer's store */
}

/* ->poll: arm if down, F, G, then readiness into `ready`. */
inline poll_once() {
#if VARIANT == 7
  if
  :: tail_mem != head -> skip
  :: else ->
#endif
  if
  :: atomic { kpoll == 0 -> kpoll = 1; arms++; publish() };
#if VARIANT != 8
     barriers()
#else
     skip
#endif
  :: else -> skip
  fi
#if VARIANT == 7
  fi
#endif
  ;
  ready = (tail_mem != head)
}

proctype consumer() {
  byte b;
  bit f, ready;
  bit tmo = 0;	/* one park times out (the issue's case), the rest wait */

  poll_once();                                 /* EPOLL_CTL_ADD */
  if                                           /* reported at once if ready */
  :: ready -> pollwoken = 1                    /* (a callback may have come) */
  :: else -> skip
  fi;
  do
  :: head == N -> break
  :: head < tail_mem -> head = head + 1        /* the fast path */
  :: head == tail_mem && head < N ->
     if
     :: true ->   /* a blocking pop: park */
        atomic { kpark = 1; arms++; publish() };
        barriers();
        do
        :: atomic { queued = 1 };                  /* prepare_to_wait */
           if
           :: tail_mem != head -> break
           :: tmo == 0 -> tmo = 1; break           /* the deadline passed */
           :: else -> skip
           fi;
#if VARIANT != 1
           f = kpark;
           if
           :: f == 0 ->                            /* a WAKE took the arm: */
              queued = 0;                          /* finish_wait, re-arm */
              atomic { kpark = 1; arms++; publish() };
#if VARIANT != 5
              atomic { drain_w() };                /* F */
#endif
#if VARIANT != 4
              atomic { tail_mem = tail_p }         /* G */
#else
              skip
#endif
           :: f != 0 -> (queued == 0)              /* schedule() */
           fi
#else
           (queued == 0)
#endif
        od;
        /* finish_wait; our arm goes, if a WAKE has not taken it */
#if VARIANT == 6
        atomic { queued = 0; kpark = 0; kpoll = 0; publish() }
#else
        atomic { queued = 0; kpark = 0; publish() }
#endif
     :: true ->   /* epoll_wait, edge-triggered: sleeps until a callback */
        atomic { pollwoken -> pollwoken = 0 };
        poll_once()                                /* ep_send_events' ->poll */
     fi
  od
}

init { run consumer() }

ltl done { <> (head == N) }
