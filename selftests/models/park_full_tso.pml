/* The mirror image of park_tso.pml: the PRODUCER parks on a FULL ring, with store
 * buffers (x86-TSO). Each process's stores sit in its own buffer until drained, in
 * order; its own loads see its own latest store first.
 *
 * Wake avoidance on this side is again a store followed by a load of the other
 * side's word, with no fence on the fast path:
 *   consumer: store head (C)            ... load prod_waiting (E), wake if set
 *   producer: store prod_waiting        ... load head (re-check "still full?")
 * so both loads can see stale values. The parker pays inside the park call:
 *   1. a full barrier on its own CPU (F): its prod_waiting store is visible;
 *   2. a barrier forced on the consumer's CPU by an IPI (G): the consumer's
 *      buffered head store is visible;
 *   3. a re-check (expected - head == capacity), atomically with going to sleep
 *      under the wait-queue lock.
 * The wake call is a full barrier on the consumer's CPU (H): entering the kernel
 * and taking the wait-queue lock drains its buffer before it looks at the queue.
 *
 *   VARIANT 0: all three steps (correct)                      -> errors: 0
 *   VARIANT 1: step 2 left out (no IPI)                       -> lost wakeup
 *   VARIANT 2: step 1 left out (flag may still be buffered)   -> lost wakeup
 *
 * A lost wakeup shows as an acceptance cycle of `done`: the producer sleeps on a
 * ring the consumer has already drained, and nobody ever moves again.
 *
 * Modelling choices:
 *  - head is buffered as two counters (what others see, the consumer's own
 *    latest); the buffer drains one increment at a time, in order: exact TSO for
 *    a monotonic word.
 *  - prod_waiting is buffered as (value in memory, number of pending stores).
 *    The producer only ever stores 1, 0, 1, 0 ... so the count says what each
 *    pending store is: also exact TSO for this word, including a stale 0 that
 *    drains before a later 1.
 *  - the tail is stored straight to memory. Delaying it would only slow the
 *    consumer; (F) drains it before the producer can sleep anyway.
 *  - the consumer never parks; when the ring is empty it just cannot move, so a
 *    sleeping producer and an empty ring is a deadlock the LTL check sees.
 *
 * spin -DVARIANT=n -a park_full_tso.pml && gcc -O2 -DNFAIR=3 -o pan pan.c && ./pan -a -f
 */
#ifndef VARIANT
#define VARIANT 0
#endif
#define N 4          /* messages sent */
#define C 2          /* ring capacity (slot count) */

byte tail = 0;       /* producer index (see modelling choices) */
byte head_mem = 0;   /* consumer index as other CPUs see it */
byte head_c = 0;     /* the consumer's own latest store (head_mem < head_c: buffered) */
bit  pw_mem = 0;     /* prod_waiting as other CPUs see it */
byte pw_pend = 0;    /* the producer's buffered stores to prod_waiting, alternating */
bit  asleep = 0;     /* kernel wait-queue state, under the kernel's lock */

active proctype producer() {
  byte expected;
  do
  :: tail == N -> break
  :: tail < N && tail - head_mem < C -> tail = tail + 1   /* write slot, store tail (A) */
  :: tail < N && tail - head_mem == C ->                  /* full: park */
     expected = tail;
     pw_pend++;                                 /* kernel stores prod_waiting = 1: buffered */
#if VARIANT != 2
     atomic {                                   /* 1. own full barrier (F) */
       if :: pw_pend % 2 == 1 -> pw_mem = 1 - pw_mem :: else -> skip fi;
       pw_pend = 0
     }
#endif
#if VARIANT != 1
     atomic { head_mem = head_c };              /* 2. IPI barrier on the consumer's CPU (G) */
#endif
     /* 3. re-check and sleep, under the wait-queue lock */
     atomic { if :: expected - head_mem == C -> asleep = 1 :: else -> skip fi };
     (asleep == 0);
     pw_pend++                                  /* kernel clears prod_waiting: buffered */
  od
}

active proctype drain() {   /* store buffers drain on their own, in order, at any time */
  do
  :: atomic { head_mem < head_c -> head_mem = head_mem + 1 }
  :: atomic { pw_pend > 0 -> pw_mem = 1 - pw_mem; pw_pend-- }
  :: head_mem == N -> break
  od
}

active proctype consumer() {
  do
  :: head_c == N -> break
  :: head_c < tail ->                           /* load tail (B), read the slot */
     head_c = head_c + 1;                       /* store head (C): to the store buffer */
     if
     :: pw_mem ->                               /* load prod_waiting (E): no fence before it */
        /* the wake call: a full barrier on the consumer's CPU (H), then the
         * wake under the wait-queue lock */
        atomic { head_mem = head_c; if :: asleep -> asleep = 0 :: else -> skip fi }
     :: else -> skip
     fi
  od
}

ltl done { <> (head_c == N) }
