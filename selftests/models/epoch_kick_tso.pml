/* The epoch exit kick with store buffers (x86-TSO): a synchronizer parked on
 * an epoch, a straggler that holds it, and the kick that must wake it
 * (kmod/epoch.c baton_epoch_waiters() and baton_epoch_synchronize(), the exit
 * in lib/include/baton_epoch.h). epoch_tso.pml has the safety side (nothing
 * freed while held); this one has the liveness side: no lost kick.
 *
 * Every CPU's stores sit in its own FIFO buffer (a channel) until a drain step,
 * which may happen at any time, moves the oldest one to memory; loads of other
 * CPUs' words read memory. A full barrier empties the CPU's own buffer; the
 * IPI (Q) empties the reader's.
 *
 *   reader     starts inside a section at epoch 1 (announced, visible): the
 *              straggler. Exit: held = its own epoch; ann = 0 (buffered, S);
 *              load sync_epoch (T); kick (wake_seq++) if held <= it. Then one
 *              busy section: the fenceless enter (epoch_tso.pml), whose
 *              retry re-announces and kicks like an exit if the stale epoch
 *              is <= sync_epoch, then the same exit.
 *   synchronizer  (the kernel: it is also the collector) waits for
 *              frontier >= 1. One cycle; if not proven: raise sync_epoch to 1
 *              (buffered), V: own full fence, then loop: seq = wake_seq; one
 *              cycle (publish G+1 buffered, P own fence, Q drain the reader,
 *              R scan); proven: done; else sleep until wake_seq != seq. No
 *              10 ms backstop here: a lost kick sleeps for ever.
 *
 * Property: the synchronizer always finishes. A lost kick leaves it blocked in
 * its sleep with everyone else done: pan reports an invalid end state.
 *
 *   VARIANT 0: as implemented                                   -> errors: 0
 *   VARIANT 1: the load of sync_epoch hoisted above the ann = 0 store (what
 *              C11 allows a compiler without the signal fence): the load
 *              misses the raise while the store still precedes the IPI's
 *              scan in memory order -> caught
 *   VARIANT 2: kick only if held < sync_epoch (strictly): the straggler that
 *              holds exactly the epoch waited on never kicks -> caught
 *   VARIANT 3: sync_epoch raised after the first parked cycle's scan instead
 *              of before its IPI: an exit between that scan and the raise
 *              reads 0 and does not kick -> caught
 *   VARIANT 4: an enter whose re-check fails re-announces without the kick
 *              test: a scan saw its stale announcement at the epoch waited
 *              on, and the new one, above it, is an exit nobody reports
 *              (before the kick was conditional, the reader's later exit
 *              kicked anyway) -> caught
 *
 * spin -DVARIANT=n -a epoch_kick_tso.pml && gcc -O2 -o pan pan.c && ./pan -a -f
 */
#ifndef VARIANT
#define VARIANT 0
#endif
#define E 1                 /* the epoch the synchronizer waits on */
#define W_GLOBAL 0          /* collector store buffer entries: which word */
#define W_SYNC 1

byte g_mem = 1;             /* global epoch in memory */
byte se_mem = 0;            /* hdr->sync_epoch in memory */
byte ann_mem = 3;           /* the straggler: inside at epoch 1, visible */
chan abuf = [3] of { byte };            /* the reader's store buffer */
chan cbuf = [2] of { bit, byte };       /* the synchronizer's */
byte wake_seq = 0;
byte frontier = 0;
bit sync_done = 0;

inline drain_a() { do :: abuf?v -> ann_mem = v :: empty(abuf) -> break od }
inline drain_c() {
  do
  :: cbuf?w,v -> if :: w == W_GLOBAL -> g_mem = v :: else -> se_mem = v fi
  :: empty(cbuf) -> break
  od
}

active proctype drain() {
  byte v; bit w;
end:
  do
  :: atomic { abuf?v -> ann_mem = v }
  :: atomic { cbuf?w,v -> if :: w == W_GLOBAL -> g_mem = v :: else -> se_mem = v fi }
  od
}

/* Exit: S then T, kick if the epoch held can be what a waiter waits for. */
inline reader_exit(held) {
#if VARIANT == 1
  s = se_mem;                           /* T hoisted above S */
  abuf!0;
#else
  abuf!0;                               /* S */
  s = se_mem;                           /* T */
#endif
#if VARIANT == 2
  if :: held < s -> wake_seq++ :: else -> skip fi
#else
  if :: held <= s -> wake_seq++ :: else -> skip fi
#endif
}

active proctype reader() {
  byte e, s, stale;
  reader_exit(1);                       /* the straggler leaves */
  e = g_mem;                            /* a busy reader's next section */
  abuf!(2 * e + 1);                     /* O: no fence */
  do
  :: g_mem == e -> break                /* re-check */
  :: else ->                            /* __baton_epoch_reenter() */
     stale = e;
     e = g_mem;
     abuf!(2 * e + 1);                  /* O: replaces the stale word */
#if VARIANT != 4
     s = se_mem;                        /* T */
     if :: stale <= s -> wake_seq++ :: else -> skip fi
#endif
  od;
  reader_exit(e)
}

byte g_c = 1;                           /* the collector's own latest global */

/* One collection cycle: publish, P, Q, R. */
inline cycle() {
  g_c = g_c + 1;
  cbuf!W_GLOBAL,g_c;                    /* publish G+1 */
  atomic { drain_c() };                 /* P */
  atomic { drain_a() };                 /* Q: IPI barrier on the reader */
  a = ann_mem;                          /* R */
  if
  :: a % 2 == 1 -> m = a / 2
  :: else -> m = g_c
  fi;
  if
  :: m - 1 > frontier -> frontier = m - 1
  :: else -> skip
  fi
}

active proctype synchronizer() {
  byte seq, a, m, v;
  bit w, raised = 0;
  cycle();                              /* the quiescent try: no raise */
  if
  :: frontier >= E -> goto finished
  :: else -> skip
  fi;
#if VARIANT != 3
  cbuf!W_SYNC,E;                        /* raise sync_epoch */
  atomic { drain_c() };                 /* V */
  raised = 1;
#endif
  do
  :: seq = wake_seq;
     cycle();
     if
     :: frontier >= E -> break
     :: else -> skip
     fi;
     if
     :: !raised -> cbuf!W_SYNC,E; atomic { drain_c() }; raised = 1
     :: else -> skip
     fi;
     wake_seq != seq                    /* sleep until kicked */
  od;
finished:
  sync_done = 1
}
