/* A reap that stops, on the memfd backend, with store buffers (x86-TSO):
 * the set-aside of (Y13), Documentation/memory-ordering.rst, and
 * Documentation/pool.rst, "Idle magazines". lib/pool.c reap_wait(),
 * set_aside(), keep_from_flush() and baton__pool_drain() are the holder's
 * side; lib/pool_memfd.c idle_reap() the reaper's. pool_mag_tso.pml checks
 * the handshake itself (store, signal fence, look at the word; word,
 * barrier, second read); this model adds what a waiter does when the
 * reaper has stopped between its second read and its punches.
 *
 * The reaper scans the descriptors (the IDLE values it sees are its
 * candidates), sets the word, runs the barrier on every holder's CPU,
 * reads each candidate again and decides to punch those still as seen.
 * It then stops for as long as the interleaving likes (SIGSTOP), or for
 * good (an end state: stopped longer than anyone may wait), punches, and
 * clears the word. Holder H starts with buffers A and B IDLE in its
 * magazine; the free queue holds C. H allocates (pops, stores OWNED,
 * looks at the word), frees (IDLE, the next generation, into the magazine),
 * flushes (FREE, the look, then the entry) and drains its aside list, in
 * any order. A waiter that finds the word set either waits for 0, or
 * (stopped reaper) sets aside: the popped buffer and its whole magazine
 * (a flush: the buffer, with a hole for its entry, and the magazine), and
 * from then on, while the word keeps that value, takes what it pops
 * without waiting. Taker T, another holder, takes entries from the queue
 * and writes them, with the same look and the same set-aside.
 *
 * Property: no buffer is punched while a holder has data in it (assert);
 * every process can finish (no invalid end state), the reaper stopped for
 * good included: nobody waits for it.
 *
 *   VARIANT 0: as implemented                                    -> errors: 0
 *   VARIANT 1: the set-aside keeps only the popped buffer, not the
 *              rest of the magazine: the next pop skips the wait  -> caught
 *   VARIANT 2: the aside list drains while the word still says the
 *              reap that set it aside                             -> caught
 *   VARIANT 3: a flush past a stopped reap publishes its entry
 *              instead of a hole: a taker that set aside skips
 *              the wait for it                                    -> caught
 *   VARIANT 4: a free that keeps the generation: the reaper's
 *              second read cannot tell a buffer freed since       -> caught
 *   VARIANT 5: a waiter only waits (2.9): a reaper stopped for
 *              good holds it for good                             -> caught
 *
 * spin -DVARIANT=n -a pool_aside_tso.pml && gcc -O2 -o pan pan.c && ./pan -a -f
 */
#ifndef VARIANT
#define VARIANT 0
#endif

#define NB	3	/* A, B (H's magazine), C (the queue) */
#define IDLE	0
#define OWNED	1
#define FREE	2
#define VAL(kind, gen)	((kind) * 4 + (gen))
#define KIND(v)		((v) / 4)
#define GEN(v)		((v) % 4)
#define HOLE	9
#define OPS	4	/* H's operations */

byte d_mem[NB];		/* the descriptors in memory */
byte d_h[NB];		/* H's latest store to each (its store buffer) */
byte q[4];		/* the free queue's entries, in ticket order */
byte q_tail = 1;	/* published */
byte q_head = 0;	/* taken */
bit reap_mem = 0;	/* the reap word (one reap: value 1; the reaper's
			 * own stores are seq_cst, then release: in memory
			 * at once, which only shortens a waiter's wait) */
bit live[NB];		/* a holder has written data in it */
bit punch[NB];		/* the reaper's second read chose it */

/*
 * H's stores drain on their own, at any time: one pending per word, the
 * lowest index first (the barrier, a locked instruction and a release
 * publication drain them all: drain_all()). With none pending it blocks,
 * at an end state, so that a process waiting for good shows as one
 * (invalid end state) instead of hiding behind a drain that always runs.
 */
#if NB != 3
#error PENDING names each of the NB descriptors
#endif
#define PENDING	(d_mem[0] != d_h[0] || d_mem[1] != d_h[1] || d_mem[2] != d_h[2])

proctype drain() {
  byte i;
end:
  do
  :: atomic {
       PENDING;
       i = 0;
       do
       :: i < NB && d_mem[i] == d_h[i] -> i++
       :: i < NB && d_mem[i] != d_h[i] -> d_mem[i] = d_h[i]; break
       :: i == NB -> break
       od
     }
  od
}

/* The barrier on every CPU of H (membarrier): its stores reach memory. */
inline drain_all() {
  i = 0;
  do
  :: i < NB -> d_mem[i] = d_h[i]; i++
  :: else -> break
  od
}

proctype reaper() {
  byte seen[NB], i;

  atomic {				/* the ticks' scans */
    i = 0;
    do
    :: i < NB -> seen[i] = d_mem[i]; i++
    :: else -> break
    od
  };
  reap_mem = 1;				/* seq_cst store */
  atomic { drain_all() };		/* membarrier(GLOBAL_EXPEDITED) */
  atomic {				/* the second read */
    i = 0;
    do
    :: i < NB ->
       punch[i] = (KIND(seen[i]) == IDLE && d_mem[i] == seen[i]);
       i++
    :: else -> break
    od
  };
  /* Stopped here for as long as anyone likes, or for good. */
  if
  :: skip
  :: true ->
end_stopped:
     false
  fi;
  i = 0;
  do
  :: i < NB ->
     if
     :: punch[i] -> assert(!live[i])
     :: else -> skip
     fi;
     i++
  :: else -> break
  od;
  reap_mem = 0					/* release */
}

/* H's state (a proctype's locals are not visible to inlines' callers). */
byte mag[NB];
byte mag_n = 2;
byte held;		/* bit per buffer H has allocated */
byte nheld = 0;
byte aside;		/* bit per buffer on H's aside list */
bit h_aside_on = 0;	/* H's magazines were set aside for reap 1 */
bit t_aside_on = 0;

/* Look at the word after a store: 1 to go on, 0 when set aside. */
inline look(aside_on, result) {
  if
  :: reap_mem == 0 -> result = 1
  :: reap_mem == 1 && aside_on -> result = 1	/* came after the set-aside */
  :: reap_mem == 1 && !aside_on ->
     if
     :: (reap_mem == 0) -> result = 1		/* waited */
#if VARIANT != 5
     :: result = 0				/* 10 ms: stopped */
#endif
     fi
  fi
}

/* H: the magazine onto the aside list (VARIANT 1: not). */
inline set_aside_h() {
#if VARIANT != 1
  do
  :: mag_n > 0 -> mag_n--; aside = aside | (1 << mag[mag_n]);
     d_h[mag[mag_n]] = VAL(OWNED, GEN(d_h[mag[mag_n]]))
  :: else -> break
  od;
#endif
  h_aside_on = 1
}

inline h_alloc() {
  if
  :: mag_n == 0 ->
     atomic {
       if
       :: q_head < q_tail ->
          x = q[q_head]; q_head++;
          if
          :: x != HOLE && KIND(d_mem[x]) == FREE ->
             d_h[x] = VAL(OWNED, GEN(d_mem[x])); d_mem[x] = d_h[x];
             mag[mag_n] = x; mag_n++
          :: else -> skip
          fi
       :: else -> skip
       fi
     }
  :: else -> skip
  fi;
  if
  :: mag_n > 0 ->
     mag_n--; x = mag[mag_n];
     d_h[x] = VAL(OWNED, GEN(d_h[x]));	/* plain: buffered */
     look(h_aside_on, ok);			/* after the signal fence */
     if
     :: ok -> held = held | (1 << x); nheld++; live[x] = 1
     :: else -> aside = aside | (1 << x); set_aside_h()
     fi
  :: else -> skip
  fi
}

inline h_free() {
  if
  :: held & 1 -> x = 0
  :: held & 2 -> x = 1
  :: held & 4 -> x = 2
  fi;
  held = held & ~(1 << x);
  nheld--;
  live[x] = 0;
#if VARIANT != 4
  d_h[x] = VAL(IDLE, (GEN(d_h[x]) + 1) % 4);
#else
  d_h[x] = VAL(IDLE, GEN(d_h[x]));
#endif
  mag[mag_n] = x; mag_n++
}

/* The bottom of the magazine to the queue. */
inline h_flush() {
  x = mag[0];
  i = 1;
  do
  :: i < mag_n -> mag[i - 1] = mag[i]; i++
  :: else -> break
  od;
  mag_n--;
  d_h[x] = VAL(FREE, GEN(d_h[x]));
  look(h_aside_on, ok);
#if VARIANT == 3
  ok = 1;
#endif
  atomic {
    drain_all();				/* release: the entry after */
    if
    :: ok -> q[q_tail] = x
    :: else ->
       d_h[x] = VAL(OWNED, GEN(d_h[x])); d_mem[x] = d_h[x];
       aside = aside | (1 << x);
       q[q_tail] = HOLE
    fi;
    q_tail++
  };
  if
  :: !ok -> set_aside_h()
  :: else -> skip
  fi
}

/* Back to the magazine once the word moved (VARIANT 2: at once). */
inline h_drain_aside() {
  i = 0;
  do
  :: i < NB ->
     if
     :: aside & (1 << i) -> mag[mag_n] = i; mag_n++
     :: else -> skip
     fi;
     i++
  :: else -> break
  od;
  aside = 0;
#if VARIANT != 2
  h_aside_on = 0		/* the look at the word that gated this */
#endif
}

proctype holder() {
  byte x, i, ops = 0;
  bit ok;

  do
  :: ops < OPS ->
     ops++;
     if
     :: nheld < 2 -> h_alloc()
     :: nheld > 0 -> h_free()
     :: mag_n > 0 && q_tail < 4 -> h_flush()
#if VARIANT != 2
     :: aside != 0 && reap_mem == 0 -> h_drain_aside()
#else
     :: aside != 0 -> h_drain_aside()
#endif
     fi
  :: else -> break
  od
}

/* Another holder: takes entries and writes each, or sets it aside. */
proctype taker() {
  byte x, n = 0;
  bit ok;

  do
  :: n < 2 ->
end_wait:
     atomic { q_head < q_tail -> x = q[q_head]; q_head++ };
     n++;
     if
     :: x != HOLE && KIND(d_mem[x]) == FREE ->
        d_mem[x] = VAL(OWNED, GEN(d_mem[x])); d_h[x] = d_mem[x];
        look(t_aside_on, ok);
        if
        :: ok -> live[x] = 1
        :: else -> t_aside_on = 1		/* its magazine: just x */
        fi
     :: else -> skip
     fi
  :: else -> break
  od
}

init {
  atomic {
    d_mem[0] = VAL(IDLE, 0); d_h[0] = d_mem[0]; mag[0] = 0;
    d_mem[1] = VAL(IDLE, 0); d_h[1] = d_mem[1]; mag[1] = 1;
    d_mem[2] = VAL(FREE, 0); d_h[2] = d_mem[2]; q[0] = 2;
    run drain(); run reaper(); run holder(); run taker()
  }
}
