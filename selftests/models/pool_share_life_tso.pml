/* A reader released while baton_pool_send_shared() pushes, with store
 * buffers (x86-TSO): the life word of its holder index (uapi:
 * BATON_POOL_CLAIM_LIFE; Y8 in memory-ordering.rst). pool_share.pml has
 * the puts and the last put's races; this one has only the share against
 * the release that may have walked before it.
 *
 *   sender   (lib/pool.c baton_pool_send_shared(), settle_released())
 *            reads the reader's life word (life0) before its pushes; then
 *            the mask and SHARED (buffered, in order); a full fence; loads
 *            the life word again: if it moved or is even, clears the
 *            reader's bit itself (a locked CAS) and, the mask empty, frees
 *            the buffer by a CAS on the state.
 *   release  of the reader, at any moment after the sender read life0
 *            (the reader was alive when the call began; one gone before
 *            is the documented limit: pool.rst, "Fan-out") (kmod/pool.c
 *            baton_pool_life_end(), then baton_pool_reclaim(); memfd:
 *            life_end() in repair_dead()): makes the word even (buffered),
 *            a full fence, then walks: a SHARED buffer with the reader's
 *            bit gets it cleared (CAS) and, the mask empty, is freed (CAS
 *            on the state). Then, maybe, a new holder takes the index: the
 *            next odd value.
 *
 * Property: the buffer is freed exactly once (assert in free; when all is
 * done, a final assert that it was freed: a leak fails it).
 *
 *   VARIANT 0: as implemented                                     -> errors: 0
 *   VARIANT 1: no fence in the sender between its share and its load of
 *              the life word                                      -> caught
 *   VARIANT 2: no fence in the release between the word and its walk
 *                                                                  -> caught
 *   VARIANT 3: the sender tests only the word's parity, no snapshot: a
 *              new holder of the index makes it odd again       -> caught
 *
 * spin -DVARIANT=n -a pool_share_life_tso.pml && gcc -O2 -o pan pan.c && ./pan -a -f
 */
#ifndef VARIANT
#define VARIANT 0
#endif

#define K_OWNED  1
#define K_SHARED 2
#define K_FREE   3

byte kind_mem = K_OWNED;  /* the state word in memory */
byte kind_s = K_OWNED;    /* the sender's latest store of it */
bit  mask_mem = 0;        /* the reader's bit in memory (aux) */
bit  mask_s = 0;          /* the sender's latest store of it */
byte life_mem = 1;        /* the reader's index is held: odd */
byte life_r = 1;          /* the releaser's latest store of it */
byte freed = 0;
bit  snapped = 0;         /* the sender has read life0 */
bit  sender_done = 0;
bit  release_done = 0;

inline free_it() {
  freed++;
  assert(freed == 1);
  kind_mem = K_FREE; kind_s = K_FREE
}

/* Store buffers drain in order, at any time (the mask before the state). */
active proctype drain() {
end:
  do
  :: atomic { mask_mem != mask_s -> mask_mem = mask_s }
  :: atomic { mask_mem == mask_s && kind_mem != kind_s -> kind_mem = kind_s }
  :: atomic { life_mem != life_r -> life_mem = life_r }
  od
}

active proctype sender() {
  byte life0, v;
  bit gone;

  atomic { life0 = life_mem; snapped = 1 }  /* before the pushes */
  mask_s = 1;                               /* the mask, then SHARED: buffered */
  kind_s = K_SHARED;
#if VARIANT != 1
  atomic { mask_mem = mask_s; kind_mem = kind_s };   /* full fence */
#endif
  v = life_mem;
#if VARIANT == 3
  gone = ((v & 1) == 0);
#else
  gone = (v != life0 || (v & 1) == 0);
#endif
  if
  :: gone ->
     atomic {                               /* CAS: drains our buffer first */
       mask_mem = mask_s; kind_mem = kind_s;
       if
       :: mask_mem -> mask_mem = 0; mask_s = 0;
          if
          :: kind_mem == K_SHARED -> free_it()
          :: else -> skip
          fi
       :: else -> skip
       fi
     }
  :: else -> skip
  fi;
  sender_done = 1
}

active proctype release() {
  snapped;                                  /* the reader was alive at the call */
  life_r = 2;                               /* even: buffered */
#if VARIANT != 2
  atomic { life_mem = life_r };             /* full fence */
#endif
  atomic {                                  /* the walk's CAS on aux */
    if
    :: kind_mem == K_SHARED && mask_mem -> mask_mem = 0; mask_s = 0;
       if
       :: kind_mem == K_SHARED -> free_it()
       :: else -> skip
       fi
    :: else -> skip
    fi
  };
  if
  :: true -> atomic { life_mem = life_r }; life_r = 3   /* a new holder */
  :: true -> skip
  fi;
  release_done = 1
}

/* When both are done and the buffers drained, the buffer must be freed. */
active proctype monitor() {
  atomic {
    sender_done && release_done && mask_mem == mask_s &&
    kind_mem == kind_s && life_mem == life_r -> assert(freed == 1)
  }
}
