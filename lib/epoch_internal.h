/* SPDX-License-Identifier: MIT */
/*
 * libbaton epoch internals: what lib/epoch.c (the API and the kmod
 * backend) shares with lib/epoch_memfd.c (the memfd backend). Hidden.
 */
#ifndef BATON_EPOCH_INTERNAL_H
#define BATON_EPOCH_INTERNAL_H

#include "internal.h"

/* Participant region layout, the same on both backends. */
#define BATON_EPOCH_L_ANN	0
#define BATON_EPOCH_L_TAIL	64
#define BATON_EPOCH_L_HEAD	128
#define BATON_EPOCH_L_PID	176	/* memfd only: the registrant's pid */
#define BATON_EPOCH_L_ENTRIES	192

BATON_HIDDEN int baton__epoch_params_valid(uint32_t max_participants,
					   uint32_t queue_len);
BATON_HIDDEN int baton__epoch_params_check(const struct baton__what *w,
					   uint32_t max_participants,
					   uint32_t queue_len);
BATON_HIDDEN int baton__epoch_offsets_valid(const struct baton_epoch_offsets *o,
					    uint32_t max_participants,
					    uint32_t queue_len,
					    uint64_t file_size);
/* Point the fast-path fields at participant @index inside @region. */
BATON_HIDDEN void baton__epoch_bind(struct baton_epoch *d, uint8_t *region,
				    int index);

/* lib/epoch_memfd.c */
BATON_HIDDEN int baton__epoch_memfd_create(const char *name,
					   const struct baton_epoch_params *p,
					   struct baton_epoch *d);
BATON_HIDDEN int baton__epoch_memfd_open(const char *name,
					 struct baton_epoch *d);
BATON_HIDDEN int baton__epoch_memfd_unlink(const char *name);
BATON_HIDDEN int baton__epoch_memfd_register(struct baton_epoch *d);
BATON_HIDDEN int baton__epoch_memfd_collect(struct baton_epoch *d,
					    uint64_t *frontier,
					    uint64_t *completed,
					    int *holder);
BATON_HIDDEN int baton__epoch_memfd_try_collect(struct baton_epoch *d,
						uint64_t *frontier);
BATON_HIDDEN void baton__epoch_memfd_raise_sync(struct baton_epoch *d,
						uint64_t epoch);
BATON_HIDDEN int baton__epoch_memfd_synchronize(struct baton_epoch *d,
						uint64_t epoch,
						int has_deadline,
						uint64_t deadline_ns,
						pid_t *holder);
BATON_HIDDEN void baton__epoch_memfd_kick(struct baton_epoch *d);

#endif /* BATON_EPOCH_INTERNAL_H */
