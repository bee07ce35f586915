/* SPDX-License-Identifier: MIT */
/*
 * selftests/pkg/hello.c: the smallest user of an installed libbaton, built
 * by check-install.sh against a staged install with pkg-config (and, as
 * hello.cc, by a C++ compiler). It includes <baton/baton.h> as a user
 * would, checks that the library it runs with is the version of the
 * headers it was compiled with, prints that version, and moves one message
 * through a memfd ring and one read section through an epoch domain.
 */
#define _DEFAULT_SOURCE
#include <baton/baton.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int fail(const char *what, int r)
{
	fprintf(stderr, "hello: %s: %d\n", what, r);
	return 1;
}

int main(void)
{
	struct baton_ring_params p;
	struct baton_epoch_params ep;
	struct baton_ring *prod, *cons;
	struct baton_epoch *d;
	char name[BATON_NAME_MAX], out[8] = "";
	int r;

	if (baton_version() != BATON_VERSION_NUMBER)
		return fail("baton_version() differs from BATON_VERSION_NUMBER",
			    (int)baton_version());
	printf("%s %d.%d.%d\n", BATON_VERSION_STRING, BATON_VERSION_MAJOR,
	       BATON_VERSION_MINOR, BATON_VERSION_PATCH);

	memset(&p, 0, sizeof(p));
	p.kind = BATON_RING_SPSC;
	p.slot_count = 8;
	p.slot_size = 8;
	p.mode = 0600;
	p.backend = BATON_BACKEND_MEMFD;
	snprintf(name, sizeof(name), "pkg-hello-%d", (int)getpid());
	r = baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &prod);
	if (r < 0)
		return fail("baton_ring_create", r);
	r = baton_ring_open(name, BATON_ROLE_CONSUMER, BATON_BACKEND_MEMFD, &cons);
	if (r < 0)
		return fail("baton_ring_open", r);
	r = baton_spsc_try_push(prod, "hello", 6);
	if (r < 0)
		return fail("baton_spsc_try_push", r);
	r = baton_spsc_try_pop(cons, out, 6);
	if (r < 0 || strcmp(out, "hello"))
		return fail("baton_spsc_try_pop", r);
	baton_ring_unlink(name, BATON_BACKEND_MEMFD);
	baton_ring_close(cons);
	baton_ring_close(prod);

	memset(&ep, 0, sizeof(ep));
	ep.max_participants = 1;
	ep.queue_len = 2;
	ep.mode = 0600;
	ep.backend = BATON_BACKEND_MEMFD;
	r = baton_epoch_create(name, &ep, &d);
	if (r < 0)
		return fail("baton_epoch_create", r);
	r = baton_epoch_register(d);
	if (r < 0)
		return fail("baton_epoch_register", r);
	baton_epoch_enter(d);
	baton_epoch_exit(d);
	baton_epoch_unlink(name, BATON_BACKEND_MEMFD);
	baton_epoch_close(d);
	return 0;
}
