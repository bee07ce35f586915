/* The epoch read side with store buffers (x86-TSO), kmod/epoch.c's cycle.
 *
 * Every CPU's stores sit in its own FIFO buffer (a channel) until a drain step,
 * which may happen at any time, moves the oldest one to memory; a CPU's loads of
 * shared words read memory (the buffered words here are each written by one CPU,
 * which never loads them back except where noted). A full barrier waits for the
 * CPU's own buffer to empty.
 *
 *   reader   enter: e = global; ann = 2e+1 (buffered, NO fence); re-check
 *            global == e else retry; then load `linked` and hold the object;
 *            exit: stop holding, ann = 0 (buffered, release). Two sections.
 *   writer   unlink (linked = 0, buffered); U: full fence; r = global; wait for
 *            frontier >= r (SYNCHRONIZE); free: nobody may still hold it.
 *   collector  cycles: global = G+1 (buffered); P: own full fence; Q: the IPI,
 *            a full barrier on the participants' CPUs (reader and writer): their
 *            buffers drain at once; R: read ann; frontier = max(frontier,
 *            (active ? e : G+1) - 1).
 *
 * Safety (assertions): no reader picks up the object after it is freed, and no
 * object is freed while a reader holds it.
 *
 *   VARIANT 0: as implemented                                   -> errors: 0
 *   VARIANT 1: no IPI (Q): the reader's announcement may still be buffered when
 *              the collector scans, and its re-check load passed it -> caught
 *   VARIANT 2: fenceless reader and no collector barrier (P): the new global is
 *              still in the collector's buffer when the reader re-checks -> caught
 *   VARIANT 3: no fence (U) in retire: the retire epoch is read before the unlink
 *              is visible                                        -> caught
 *
 * spin -DVARIANT=n -a epoch_tso.pml && gcc -O2 -o pan pan.c && ./pan -a -f
 */
#ifndef VARIANT
#define VARIANT 0
#endif
#define CYCLES 3

byte g_mem = 1;            /* global epoch in memory */
byte g_c = 1;              /* the collector's own latest store of it */
chan gbuf = [2] of { byte };
byte ann_mem = 0;          /* reader's announcement in memory: 2e+1 or 0 */
chan abuf = [3] of { byte };
bit linked_mem = 1;        /* the object is reachable from the table */
chan lbuf = [1] of { bit };
byte frontier = 0;         /* the collector's proof, read by the synchronizer */
bit holding = 0;           /* a reader holds the object now */
bit freed = 0;

/* Drain all of a buffer at once: a full barrier on that CPU (mb or IPI). */
inline drain_a() { do :: abuf?v -> ann_mem = v :: empty(abuf) -> break od }
inline drain_l() { do :: lbuf?b -> linked_mem = b :: empty(lbuf) -> break od }

active proctype drain() {
  byte v; bit b;
end:
  do
  :: atomic { abuf?v -> ann_mem = v }
  :: atomic { gbuf?v -> g_mem = v }
  :: atomic { lbuf?b -> linked_mem = b }
  od
}

active proctype reader() {
  byte e, n = 0;
  do
  :: n < 2 ->
enter:
     e = g_mem;
     abuf!(2 * e + 1);                  /* O: plain store, no fence */
     if
     :: g_mem != e -> goto enter        /* re-check */
     :: else -> skip
     fi;
     if
     :: linked_mem -> atomic { assert(!freed); holding = 1 }
     :: else -> skip
     fi;
     holding = 0;                       /* reads done ... */
     abuf!0;                            /* S: ... before ann = 0 (TSO: in order) */
     n++
  :: else -> break
  od
}

active proctype writer() {
  byte r;
  bit b; byte v;
  lbuf!0;                               /* unlink */
#if VARIANT != 3
  atomic { drain_l() };                 /* U */
#endif
  r = g_mem;
  if
  :: frontier >= r -> atomic { assert(!holding); freed = 1 }
  :: timeout -> skip                    /* collector done, reader still inside */
  fi
}

active proctype collector() {
  byte c = 0, g, a, m;
  byte v; bit b;
  do
  :: c < CYCLES ->
     g = g_c + 1; g_c = g;
     gbuf!g;                            /* publish G+1 */
#if VARIANT != 2
     atomic { do :: gbuf?v -> g_mem = v :: empty(gbuf) -> break od }  /* P */
#endif
#if VARIANT != 1
     atomic { drain_a(); drain_l() };   /* Q: IPI barrier on readers' CPUs */
#endif
     a = ann_mem;                       /* R: scan, read once */
     if
     :: a % 2 == 1 -> m = a / 2
     :: else -> m = g
     fi;
     if
     :: m - 1 > frontier -> frontier = m - 1
     :: else -> skip
     fi;
     c++
  :: else -> break
  od
}
