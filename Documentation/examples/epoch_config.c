/* SPDX-License-Identifier: MIT */
/*
 * epoch_config.c: an epoch-protected structure with synchronous destroy.
 *
 * A "config" lives in memory shared by four processes. Three readers read
 * it over and over; one writer replaces it 1000 times. A reader must never
 * see a config half-written or already freed, yet readers take no lock and
 * make no syscall: each read is bracketed by baton_epoch_enter()/exit(),
 * one store each. The writer publishes a new config, then calls
 * baton_epoch_destroy_sync() on the old one, which returns once no reader
 * can still be reading it; only then does the writer "free" it (here: it
 * writes poison into it, which a reader would notice).
 *
 *   cc epoch_config.c $(pkg-config --cflags --libs baton) -o epoch_config
 *   BATON_BACKEND=memfd ./epoch_config
 *
 * Errors are a negative errno: checked with `r < 0`.
 */
#define _DEFAULT_SOURCE	/* fork() and the like under -std=c11 too */
#include <baton/baton.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define READERS		3
#define VERSIONS	1000
#define POISON		0xdeadbeefdeadbeefULL
#define WAIT_NS		(30LL * 1000000000LL)	/* never hang a test */

struct config {
	uint64_t version;
	uint64_t check;		/* derived from version: a torn read shows */
};

/* The shared memory: two config slots, and which one is live. */
struct shared {
	uint64_t live;		/* 0 or 1 */
	uint64_t ready;		/* readers that are reading */
	uint64_t done;		/* the writer has finished */
	struct config slot[2];
};

static uint64_t check_of(uint64_t version)
{
	return version * 0x9e3779b97f4a7c15ULL + 1;
}

/*
 * Both sides touch the slots at once, so every access is an atomic one
 * (relaxed: the ordering comes from `live` and from the epoch domain).
 */
static void config_write(struct config *c, uint64_t version, uint64_t check)
{
	__atomic_store_n(&c->version, version, __ATOMIC_RELAXED);
	__atomic_store_n(&c->check, check, __ATOMIC_RELAXED);
}

static int fail(const char *who, const char *what, int r)
{
	fprintf(stderr, "epoch_config: %s: %s: %s\n", who, what, strerror(-r));
	return 1;
}

/* Join the domain by name and become a participant (enter needs it). */
static int join(const char *name, const char *who, struct baton_epoch **d)
{
	int ret = baton_epoch_open(name, BATON_BACKEND_AUTO, d);

	if (ret < 0)
		return fail(who, "baton_epoch_open", ret);
	ret = baton_epoch_register(*d);
	if (ret < 0)
		return fail(who, "baton_epoch_register", ret);
	return 0;
}

static int reader(const char *name, struct shared *sh)
{
	struct baton_epoch *d;
	uint64_t reads = 0;

	if (join(name, "reader", &d))
		return 1;
	__atomic_fetch_add(&sh->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&sh->done, __ATOMIC_ACQUIRE)) {
		struct config *c;
		uint64_t version, check;

		baton_epoch_enter(d);	/* from here the live config cannot go */
		c = &sh->slot[__atomic_load_n(&sh->live, __ATOMIC_ACQUIRE)];
		version = __atomic_load_n(&c->version, __ATOMIC_RELAXED);
		check = __atomic_load_n(&c->check, __ATOMIC_RELAXED);
		baton_epoch_exit(d);	/* ... and from here it may */

		if (version == POISON || check != check_of(version)) {
			fprintf(stderr, "epoch_config: read a freed config\n");
			return 1;
		}
		reads++;
	}
	baton_epoch_close(d);
	printf("epoch_config: a reader read %llu configs\n",
	       (unsigned long long)reads);
	fflush(stdout);	/* the child ends with _exit(), which does not */
	return 0;
}

static int writer(struct baton_epoch *d, struct shared *sh)
{
	uint64_t v;
	pid_t holder;
	int ret;

	/* Replace the config while every reader is reading it. */
	while (__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) < READERS)
		usleep(1000);
	for (v = 1; v <= VERSIONS; v++) {
		uint64_t old = sh->live, fresh = 1 - old;

		/* The free slot: nobody can be reading it (proved below). */
		config_write(&sh->slot[fresh], v, check_of(v));
		/* Publish: a reader that sees `live` sees the config too. */
		__atomic_store_n(&sh->live, fresh, __ATOMIC_RELEASE);
		/*
		 * Retire the old config ({handle, tag} name it for us) and
		 * sleep until every reader that might hold it has left.
		 */
		ret = baton_epoch_destroy_sync(d, old, v, WAIT_NS, &holder);
		if (ret < 0) {
			fprintf(stderr, "epoch_config: held by pid %d\n", (int)holder);
			return fail("writer", "baton_epoch_destroy_sync", ret);
		}
		/* Now it is ours again: free it (poison it, so it shows). */
		config_write(&sh->slot[old], POISON, POISON);
	}
	__atomic_store_n(&sh->done, 1, __ATOMIC_RELEASE);
	return 0;
}

int main(void)
{
	struct baton_epoch_params p = {
		.max_participants = READERS + 1,
		.queue_len = 64,	/* retirements in flight, power of two */
		.mode = 0600,
		.backend = BATON_BACKEND_AUTO,
	};
	struct baton_epoch *d;
	struct shared *sh;
	char name[BATON_NAME_MAX];
	int i, ret, status, failed = 0;

	/* Shared with the children fork() makes. */
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	config_write(&sh->slot[0], 0, check_of(0));
	config_write(&sh->slot[1], POISON, POISON);

	snprintf(name, sizeof(name), "example-epoch-%d", (int)getpid());
	ret = baton_epoch_create(name, &p, &d);
	if (ret < 0)
		return fail("writer", "baton_epoch_create", ret);
	ret = baton_epoch_register(d);	/* retiring needs a participant */
	if (ret < 0)
		return fail("writer", "baton_epoch_register", ret);

	for (i = 0; i < READERS; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0)
			_exit(reader(name, sh));
	}

	failed = writer(d, sh);
	if (failed)	/* let the readers stop */
		__atomic_store_n(&sh->done, 1, __ATOMIC_RELEASE);
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed = 1;
	ret = baton_epoch_unlink(name, BATON_BACKEND_AUTO);
	baton_epoch_close(d);
	if (failed || ret < 0)
		return 1;
	printf("epoch_config: %d configs replaced under %d readers on %s\n",
	       VERSIONS, READERS,
	       baton_backend_name(baton_backend_resolve(BATON_BACKEND_AUTO)));
	return 0;
}
