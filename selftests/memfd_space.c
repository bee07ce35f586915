// SPDX-License-Identifier: GPL-2.0
/*
 * memfd_space: the memfd backend in a /dev/shm too small for the object.
 *
 * Owns what a user of a container's 16 MiB /dev/shm sees: creating a ring
 * or an epoch domain bigger than the room left is -ENOSPC at create, with
 * nothing left in /dev/shm, and never a SIGBUS later, in this process or
 * another. Each test runs in a child with a mount namespace of its own and
 * a fresh tmpfs of the given size over /dev/shm, so the host's is
 * untouched. Root only (mounting).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>

#include "common.h"

#define SMALL_SHM	"size=16m"

/* Child statuses: what went wrong, for the parent's message. */
enum {
	MS_OK,
	MS_SETUP = 10,		/* unshare or mount */
	MS_CREATED,		/* create returned 0 */
	MS_WRONG_ERRNO,		/* create failed, but not with -ENOSPC */
	MS_LEFT_BEHIND,		/* a baton file in /dev/shm */
	MS_SMALL_FAILED,	/* an object that fits was refused */
};

/* A private mount namespace with a tmpfs of @opts over /dev/shm. */
static int ms_small_shm(const char *opts)
{
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, opts))
		return -1;
	return 0;
}

/* Files in /dev/shm whose names start with "baton". */
static int ms_baton_files(void)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, "baton", 5);
	closedir(d);
	return n;
}

/*
 * Child: a 64 MiB ring in 16 MiB. Before the fix create returned 0 and
 * the first push to touch a page beyond the room died of SIGBUS, so the
 * pushes below are part of the test: they must never run, or not crash.
 */
static int ms_big_ring(void)
{
	struct baton_ring_params p = bt_params(16384, 4096);
	static uint64_t msg[4096 / 8];
	char name[BATON_NAME_MAX];
	struct baton_ring *r;
	uint32_t i;
	int ret;

	if (ms_small_shm(SMALL_SHM))
		return MS_SETUP;
	p.backend = BATON_BACKEND_MEMFD;
	bt_make_name(name, sizeof(name), "ms.ring");
	ret = baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &r);
	if (ret == 0) {
		for (i = 0; i < p.slot_count; i++)
			baton_spsc_try_push(r, msg, sizeof(msg));
		baton_ring_close(r);
		baton_ring_unlink(name, BATON_BACKEND_MEMFD);
		return MS_CREATED;
	}
	if (ret != -ENOSPC) {
		fprintf(stderr, "# create: %d\n", ret);
		return MS_WRONG_ERRNO;
	}
	if (ms_baton_files())
		return MS_LEFT_BEHIND;
	/* The room is still there for an object that fits. */
	p = bt_params(1024, 4096);
	p.backend = BATON_BACKEND_MEMFD;
	if (baton_ring_create(name, &p, BATON_ROLE_PRODUCER, &r))
		return MS_SMALL_FAILED;
	for (i = 0; i < p.slot_count; i++)
		baton_spsc_try_push(r, msg, sizeof(msg));
	baton_ring_close(r);
	baton_ring_unlink(name, BATON_BACKEND_MEMFD);
	return MS_OK;
}

/* Child: the largest epoch domain (256 x 4096 entries, 24 MiB) in 16. */
static int ms_big_domain(void)
{
	struct baton_epoch_params p = {
		.max_participants = BATON_EPOCH_PARTICIPANTS_MAX,
		.queue_len = BATON_EPOCH_QUEUE_MAX,
		.mode = 0600,
		.backend = BATON_BACKEND_MEMFD,
	};
	char name[BATON_NAME_MAX];
	struct baton_epoch *d;
	int ret;

	if (ms_small_shm(SMALL_SHM))
		return MS_SETUP;
	bt_make_name(name, sizeof(name), "ms.dom");
	ret = baton_epoch_create(name, &p, &d);
	if (ret == 0) {
		baton_epoch_close(d);
		baton_epoch_unlink(name, BATON_BACKEND_MEMFD);
		return MS_CREATED;
	}
	if (ret != -ENOSPC) {
		fprintf(stderr, "# create: %d\n", ret);
		return MS_WRONG_ERRNO;
	}
	if (ms_baton_files())
		return MS_LEFT_BEHIND;
	p.max_participants = 4;
	p.queue_len = 64;
	if (baton_epoch_create(name, &p, &d))
		return MS_SMALL_FAILED;
	baton_epoch_close(d);
	baton_epoch_unlink(name, BATON_BACKEND_MEMFD);
	return MS_OK;
}

static int ms_run(int (*child)(void))
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(child());
	return pid < 0 ? -1 : bt_wait_timeout(pid, 60000);
}

FIXTURE(memfd_small_shm) {
	int unused;
};

FIXTURE_SETUP(memfd_small_shm)
{
	self->unused = 0;
	if (getuid() != 0)
		SKIP(_exit(255), "needs root to mount a small /dev/shm");
}

FIXTURE_TEARDOWN(memfd_small_shm)
{
}

TEST_F(memfd_small_shm, ring_too_big_is_enospc_at_create)
{
	int rc = ms_run(ms_big_ring);

	ASSERT_NE(MS_SETUP, rc);
	ASSERT_NE(128 + SIGBUS, rc) TH_LOG("create returned 0, a push died of SIGBUS");
	ASSERT_NE(MS_CREATED, rc) TH_LOG("create of 64 MiB in 16 MiB returned 0");
	ASSERT_EQ(MS_OK, rc);
}

TEST_F(memfd_small_shm, domain_too_big_is_enospc_at_create)
{
	int rc = ms_run(ms_big_domain);

	ASSERT_NE(MS_SETUP, rc);
	ASSERT_NE(128 + SIGBUS, rc);
	ASSERT_NE(MS_CREATED, rc) TH_LOG("create of 24 MiB in 16 MiB returned 0");
	ASSERT_EQ(MS_OK, rc);
}

TEST_HARNESS_MAIN
