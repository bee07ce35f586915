/* Parking on an empty pool class, with store buffers (x86-TSO): (Y7) of
 * Documentation/memory-ordering.rst. lib/pool.c baton_pool_alloc_wait() is
 * the parker; baton__pool_wake_parked() (a flush) and kmod/pool.c
 * baton_pool_kick() (the kernel's publications) are the freer.
 *
 * Each CPU's stores sit in its own buffer until a drain step, which may
 * happen at any time, moves them to memory; loads of other CPUs' words read
 * memory, a CPU's own loads see its own latest store. A locked RMW (the
 * parker's seq_cst add, the freer's add to wakes) or a full fence empties
 * the CPU's own buffer first and writes memory directly.
 *
 *   parker  one allocation that finds its class empty: waiters += 1 (seq_cst
 *           RMW), seen = wakes, look at the queue; empty: sleep while
 *           wakes == seen (FUTEX_WAIT on memfd, wait_event() in BATON_POOL_
 *           IOC_WAIT on kmod: both compare against memory atomically with
 *           going to sleep); then waiters -= 1 and loop. It takes the buffer
 *           once it sees it.
 *   freer   publishes one buffer (a queue entry's seq store, release:
 *           buffered), full fence, loads waiters; if non-zero: wakes += 1
 *           (RMW) and the wake call.
 *
 * No sleep slice here: in the library a slice (100 ms kmod, 5 ms memfd)
 * bounds what a lost wake costs; the model shows none is lost, so the
 * slice is only a backstop for a count scribbled by a hostile holder.
 *
 * Property: the parker always gets the buffer. A lost wake leaves it asleep
 * with the freer done and the buffers drained: pan reports an invalid end
 * state.
 *
 *   VARIANT 0: as implemented                                    -> errors: 0
 *   VARIANT 1: the freer without its full fence: its load of waiters
 *              passes its buffered publication; it reads 0 while the
 *              parker reads an empty queue                       -> caught
 *   VARIANT 2: the parker counts itself with a plain store (buffered)
 *              instead of the RMW: its look passes the count     -> caught
 *   VARIANT 3: the parker reads seen after its look at the queue: a wake
 *              between the two is taken for the one it waits past -> caught
 *   VARIANT 4: the freer adds to wakes before it publishes: the parker
 *              wakes, looks, finds nothing, sleeps on the new value -> caught
 *
 * spin -DVARIANT=n -a pool_park_tso.pml && gcc -O2 -o pan pan.c && ./pan -a -f
 */
#ifndef VARIANT
#define VARIANT 0
#endif

bit  q_mem = 0;       /* the queue holds a buffer, as other CPUs see it */
bit  q_f = 0;         /* the freer's own latest store of it */
byte waiters_mem = 0; /* the class's waiters count in memory */
byte waiters_p = 0;   /* the parker's own latest store of it */
byte wakes = 0;       /* written only by RMWs: always in memory */
bit  freer_done = 0;
bit  got = 0;

/* A store buffer drains on its own, at any time. */
active proctype drain() {
end:
  do
  :: atomic { q_mem != q_f -> q_mem = q_f }
  :: atomic { waiters_mem != waiters_p -> waiters_mem = waiters_p }
  od
}

active proctype freer() {
#if VARIANT == 4
  atomic { q_mem = q_f; wakes++ };
#endif
  q_f = 1;                                  /* publish: buffered */
#if VARIANT != 1
  atomic { q_mem = q_f };                   /* full fence (Y7) */
#endif
  if
  :: waiters_mem > 0 ->                     /* load waiters */
#if VARIANT != 4
     atomic { q_mem = q_f; wakes++ }        /* RMW, then the wake call */
#else
     skip
#endif
  :: else -> skip
  fi;
  freer_done = 1
}

active proctype parker() {
  byte seen;

  do
  :: got -> break
  :: !got ->
#if VARIANT == 2
     waiters_p = waiters_p + 1;             /* plain store: buffered */
#else
     atomic { waiters_mem = waiters_p + 1; waiters_p = waiters_mem };
#endif
#if VARIANT != 3
     seen = wakes;
#endif
     if
     :: q_mem -> got = 1                    /* the look finds it */
     :: else ->
#if VARIANT == 3
        seen = wakes;
#endif
        (wakes != seen)                     /* sleep while wakes == seen */
     fi;
     atomic { waiters_mem = waiters_p - 1; waiters_p = waiters_mem }
  od;
  assert(got)
}
