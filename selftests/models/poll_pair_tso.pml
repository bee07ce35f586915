/* Two pollers of one side, store buffers (x86-TSO): kmod/ring.c's
 * baton_poll_arm() when two files of the same side poll (two MPSC
 * producers each with EPOLLOUT, or two epolls on one fd).
 *
 * The ring is full; the consumer pops its one message: it stores its head
 * (buffered in its CPU until drained) and loads the side's waiting word
 * with no fence (E); if POLL is up it makes a WAKE, which drains its store
 * (H), takes POLL down and wakes both pollers. Each poller's ->poll takes
 * the wait-queue lock, raises POLL if it is down (its store to the word is
 * buffered in its own CPU until its F), drops the lock, then pays F (drain
 * its own buffer) and G (the IPI drains the consumer's store and the other
 * poller's), then reads
 * the head: ready or not. Not ready, it sleeps until woken, then polls
 * again. Liveness: both pollers learn that the ring has room.
 *
 * A poller that finds POLL up skips the arm. As built, it still pays F
 * and G unless the arm it found has finished its own (the kernel counts
 * raised arms and covered arms under the lock): POLL up is not POLL
 * visible, while the arm that raised it is between its store and its F.
 *
 *   VARIANT 0: as built                                        -> errors: 0
 *   VARIANT 1: a poller that finds POLL up returns at once, with
 *              no F and G of its own (main before the fix)      -> lost wakeup
 *   VARIANT 2: an arm counts as covered when raised, before its
 *              F and G                                           -> lost wakeup
 */
#ifndef VARIANT
#define VARIANT 0
#endif

bit head_mem = 0;	/* the consumer's head as memory holds it: 1 = room */
bit head_c = 0;		/* the consumer's own view (its buffered store) */
bit wmem = 0;		/* the word in memory: POLL */
chan buf0 = [1] of { bit };	/* poller 0's buffered word store */
chan buf1 = [1] of { bit };	/* poller 1's */
bit kpoll = 0;		/* the kernel's copy of POLL (wait-queue lock) */
byte raised = 0;	/* arms raised (wait-queue lock) */
byte covered = 0;	/* arms whose F and G are done (wait-queue lock) */
bit woken[2];		/* a wake since the poller last polled */
bit done[2];
bit popped = 0;

/* A WAKE: H drained the consumer; the lock sees the pollers' stores. */
inline wake_locked() {
  empty(buf0) && empty(buf1);
  kpoll = 0; wmem = 0;
  woken[0] = 1; woken[1] = 1
}

active proctype consumer() {
  head_c = 1;                            /* pop: store the head (buffered) */
  popped = 1;
  if
  :: wmem != 0 ->                        /* E: no fence */
     atomic { head_mem = head_c; wake_locked() }   /* H, then WAKE */
  :: else -> skip
  fi
}

active proctype drain() {
  bit b;
  do
  :: atomic { head_mem != head_c -> head_mem = head_c }
  :: atomic { buf0?b -> wmem = b }
  :: atomic { buf1?b -> wmem = b }
  :: done[0] && done[1] -> break
  od
}

/* F: drain the poller's own buffer. */
inline own_fence(me) {
  if
  :: me == 0 -> atomic { do :: buf0?b -> wmem = b :: empty(buf0) -> break od }
  :: else -> atomic { do :: buf1?b -> wmem = b :: empty(buf1) -> break od }
  fi
}

/*
 * G: the IPI runs smp_mb() on every CPU that runs a process mapping the
 * ring (barrier.c): the consumer's, and the other poller's, which is in
 * the kernel in its own ->poll, so its buffered word store drains too.
 */
inline barrier_peers(me) {
  atomic {
    head_mem = head_c;
    if
    :: me == 0 -> do :: buf1?b -> wmem = b :: empty(buf1) -> break od
    :: else -> do :: buf0?b -> wmem = b :: empty(buf0) -> break od
    fi
  }
}

proctype poller(bit me) {
  bit arm, fence, ready, b;
  byte seq;

  do
  :: atomic {                             /* under the wait-queue lock */
       woken[me] = 0;
       if
       :: kpoll == 0 ->
          kpoll = 1; raised++; seq = raised; arm = 1; fence = 1;
#if VARIANT == 2
          covered = seq;
#endif
          if
          :: me == 0 -> buf0!1
          :: else -> buf1!1
          fi
       :: else ->
          arm = 0;
#if VARIANT == 1
          fence = 0
#else
          fence = (covered < raised)
#endif
       fi
     };
     if
     :: fence ->
        own_fence(me);                    /* F */
        barrier_peers(me);                /* G */
        if
        :: arm -> atomic { if :: covered < seq -> covered = seq :: else -> skip fi }
        :: else -> skip
        fi
     :: else -> skip
     fi;
     ready = head_mem;
     if
     :: ready -> done[me] = 1; break
     :: else -> woken[me] == 1           /* epoll_wait until a callback */
     fi
  od
}

init {
  run poller(0);
  run poller(1)
}

ltl both_learn { <> (done[0] && done[1]) }
