/* The decay of a holder's magazine, with store buffers (x86-TSO): (Y13) of
 * Documentation/memory-ordering.rst. lib/include/baton.h
 * baton__pool_alloc_inline() is the holder, kmod/pool.c
 * baton_pool_idle_reap() the kernel (Documentation/pool.rst, "Idle
 * magazines").
 *
 * A magazine keeps buffers its holder freed, in its own process's memory:
 * the kernel cannot see the magazine, only each buffer's descriptor,
 * which a free leaves IDLE (the holder's, idle). Allocation pops a handle
 * with plain loads and stores and must stay free of fences and locked
 * instructions, so the kernel, which wants to give a long-idle IDLE
 * buffer's pages back, cannot take it by compare-and-swap against a
 * holder that never does one. The asymmetric pattern of the ring's park
 * instead:
 *
 *   holder  pop the handle; store the descriptor OWNED (plain: buffered);
 *           a signal fence (no instruction: the compiler keeps the load
 *           below the store); load the pool's reap word; 0: use the
 *           buffer. Not 0: wait until it is 0 again, then use the buffer
 *           (its pages may be new and zeroed: an allocation's contents
 *           are undefined anyway).
 *   kernel  with the candidates seen IDLE under one generation on five
 *           ticks in a row: store reap = 1; smp_mb(); an IPI that runs smp_mb() on
 *           every CPU of the pool's mms (the holder's buffered stores
 *           reach memory, and its later loads see reap); read the
 *           descriptor again: still IDLE under that generation, give its
 *           pages back; then reap = 0 (release).
 *
 * Either the holder's OWNED store came before the IPI's barrier, and the
 * kernel's second read sees it and leaves the buffer alone; or it came
 * after, and then so does the holder's load of reap, which sees 1, and the
 * holder waits until the kernel is done with the buffer.
 *
 * The flush (lib/pool.c, the magazine's overflow to the free queue) is the
 * other way out of IDLE, and the same pattern: store the descriptor FREE
 * (release), a signal fence, load reap, wait while it is set, and only then
 * publish the queue entry, from which another holder (the taker here) may
 * allocate the buffer and write it. The holder takes either way, chosen
 * nondeterministically, so both are checked against the same kernel.
 *
 * Property: the kernel never gives back the pages of a buffer a holder is
 * using (assert), and the buffer always gets used (a holder or taker left
 * waiting is an invalid end state).
 *
 *   VARIANT 0: as implemented                                    -> errors: 0
 *   VARIANT 1: no IPI: the holder's OWNED is still buffered when the
 *              kernel reads IDLE                                  -> caught
 *   VARIANT 2: the holder's load of reap hoisted above its store (no
 *              signal fence): it reads 0, the kernel reads IDLE   -> caught
 *   VARIANT 3: the kernel decides from its earlier read, without the
 *              second one after the IPI                          -> caught
 *   VARIANT 4: a holder that sees reap set goes on without waiting for
 *              the kernel to finish                              -> caught
 *   VARIANT 5: the flush publishes the entry without looking at reap
 *              (its FREE store alone)                            -> caught
 *
 * spin -DVARIANT=n -a pool_mag_tso.pml && gcc -O2 -o pan pan.c && ./pan -a -f
 */
#ifndef VARIANT
#define VARIANT 0
#endif

#define IDLE	0
#define OWNED	1
#define FREE	2

byte state_mem = IDLE;   /* the descriptor in memory (one generation) */
byte state_h = IDLE;     /* the holder's own latest store of it */
bit  published = 0;      /* the flush's queue entry (release: after FREE) */
bit  reap_mem = 0;      /* the reap word in memory */
bit  reap_k = 0;        /* the kernel's own latest store of it */
bit  using = 0;         /* the holder is writing the buffer */
bit  used = 0;
bit  kernel_done = 0;

/* Store buffers drain on their own, at any time. */
active proctype drain() {
end:
  do
  :: atomic { state_mem != state_h -> state_mem = state_h }
  :: atomic { reap_mem != reap_k -> reap_mem = reap_k }
  od
}

/* The descriptor store of either way out of IDLE, then the look at reap. */
inline leave_idle(to) {
#if VARIANT == 2
  r = reap_mem;                             /* the load, hoisted */
  state_h = to;
#else
  state_h = to;                             /* plain store: buffered */
  r = reap_mem;                             /* after the signal fence */
#endif
}

/* Wait for the kernel to be done, when the look saw reap set. */
inline wait_reap() {
  if
  :: r == 0 -> skip
  :: else ->
#if VARIANT != 4
     (reap_mem == 0)                        /* the kernel is done */
#else
     skip
#endif
  fi
}

active proctype holder() {
  bit r;

  if
  :: leave_idle(OWNED);                     /* allocate it */
     wait_reap();
     using = 1;                             /* writes the buffer */
     used = 1;
     using = 0
  :: leave_idle(FREE);                      /* flush it */
#if VARIANT != 5
     wait_reap();
#endif
     /* The entry's release store: the FREE store drains first (TSO). */
     atomic { state_mem = state_h; published = 1 }
  fi
}

/* Another holder: allocates the flushed buffer from the queue and writes. */
active proctype taker() {
end:
  published == 1;
  using = 1;
  used = 1;
  using = 0
}

active proctype kernel() {
  byte seen;

  seen = state_mem;                         /* the tick's scan */
  if
  :: seen == IDLE ->
     reap_k = 1;
     atomic { reap_mem = reap_k };          /* smp_mb() */
#if VARIANT != 1
     atomic { state_mem = state_h };        /* the IPI's smp_mb() there */
#endif
#if VARIANT != 3
     seen = state_mem;                      /* read again */
#endif
     if
     :: seen == IDLE -> assert(!using)       /* give the pages back */
     :: else -> skip
     fi;
     reap_k = 0                             /* release */
  :: else -> skip
  fi;
  kernel_done = 1
}
