// SPDX-License-Identifier: MIT
/*
 * lib/ctl/main.c: batonctl's command line: options, usage, and which
 * command runs. What batonctl is, and which file owns what, is in
 * batonctl.h.
 *
 *   batonctl [-j [-p]] list            rings, domains, pools, one line each
 *   batonctl [-j [-p]] show [ring|epoch|pool] NAME
 *                                      one object: every counter, its peers
 *   batonctl [-j [-p]] epoch [NAME]    epoch domains
 *   batonctl [-j [-p]] pool [NAME]     buffer pools: classes, counters
 *   batonctl [-j] [-c N] [-t SECS] watch   events until SIGINT, N, SECS
 *   batonctl [-a] list, [-a] epoch, [-a] pool   of every IPC namespace
 *   batonctl [-n NS] unlink [ring|epoch|pool] NAME   remove a name (in NS;
 *                                      else the memfd backend's)
 *   batonctl -V | --version            version, ABI and family version
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batonctl.h"

struct options opt;

/* lib/Makefile passes the library's version; a bare compiler run has none. */
#ifndef BATONCTL_VERSION
#define BATONCTL_VERSION "unknown"
#endif

static void usage(FILE *f)
{
	fprintf(f,
		"usage: batonctl [-j [-p]] [-a] list\n"
		"       batonctl [-j [-p]] show [ring|epoch|pool] NAME\n"
		"       batonctl [-j [-p]] [-a] epoch [NAME]\n"
		"       batonctl [-j [-p]] [-a] pool [NAME]\n"
		"       batonctl [-j] [-c COUNT] [-t SECONDS] watch\n"
		"       batonctl [-n NS] unlink [ring|epoch|pool] NAME\n"
		"       batonctl {-V | --version | -h | --help}\n"
		"  -j, --json           JSON output (an array of objects; watch: one object a line)\n"
		"  -p, --pretty         pretty JSON\n"
		"  -a, --all-ns         list, epoch, pool: objects of every IPC namespace, with its\n"
		"                       number (needs CAP_SYS_ADMIN in the initial user namespace)\n"
		"  -n, --ns NS          unlink: in the IPC namespace numbered NS (as --all-ns and\n"
		"                       /proc/PID/ns/ipc show it; same capability)\n"
		"  -c, --count COUNT    watch: stop after COUNT events\n"
		"  -t, --timeout SECS   watch: stop after SECS (exit 3 if -c events had not come)\n"
		"  -V, --version        print batonctl's version and the ABI it speaks\n"
		"  -h, --help           this text\n"
		"exit: 0 fine (an empty answer too), 1 error (a name nobody has too),\n"
		"      2 the command needs the module and it is not loaded, 3 timed out\n");
}

#define TIMEOUT_S_MAX	(100L * 366 * 24 * 3600)

static bool parse_long(const char *s, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return !errno && *s && !*end && *out >= 0;
}

/* An IPC namespace number: an inode number, never 0. */
static bool parse_ns(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || !v)
		return false;
	*out = v;
	return true;
}

static const struct option long_opts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "pretty", no_argument, NULL, 'p' },
	{ "all-ns", no_argument, NULL, 'a' },
	{ "ns", required_argument, NULL, 'n' },
	{ "count", required_argument, NULL, 'c' },
	{ "timeout", required_argument, NULL, 't' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* 0 if the options parsed, else the exit status (-h, -V: 0, done). */
static int parse_options(int argc, char **argv, bool *done)
{
	int c;

	*done = false;
	while ((c = getopt_long(argc, argv, "jpan:c:t:hV", long_opts,
				NULL)) != -1) {
		switch (c) {
		case 'j':
			opt.json = true;
			break;
		case 'p':
			opt.pretty = true;
			break;
		case 'a':
			opt.all_ns = true;
			break;
		case 'n':
			if (!parse_ns(optarg, &opt.ns)) {
				fprintf(stderr, "batonctl: --ns wants an IPC namespace number\n");
				return 1;
			}
			opt.have_ns = true;
			break;
		case 'c':
			if (!parse_long(optarg, &opt.count)) {
				fprintf(stderr, "batonctl: -c wants a count\n");
				return 1;
			}
			break;
		case 't':
			/* at most a century: the deadline is in ms */
			if (!parse_long(optarg, &opt.timeout_s) ||
			    opt.timeout_s > TIMEOUT_S_MAX) {
				fprintf(stderr, "batonctl: -t wants seconds (at most %ld)\n",
					TIMEOUT_S_MAX);
				return 1;
			}
			break;
		case 'h':
			usage(stdout);
			*done = true;
			return 0;
		case 'V':
			printf("batonctl %s (baton ABI %d, netlink family \"%s\" version %d)\n",
			       BATONCTL_VERSION, BATON_ABI_VERSION,
			       BATON_FAMILY_NAME, BATON_FAMILY_VERSION);
			*done = true;
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	return 0;
}

/* "ring", "epoch" or "pool" into *@obj; false for any other word. */
static bool parse_kind(const char *word, enum obj_kind *obj)
{
	if (!strcmp(word, "ring"))
		*obj = OBJ_RING;
	else if (!strcmp(word, "epoch"))
		*obj = OBJ_EPOCH;
	else if (!strcmp(word, "pool"))
		*obj = OBJ_POOL;
	else
		return false;
	return true;
}

/* unlink [ring|epoch|pool] NAME; -1 if the words do not fit. */
static int run_unlink(int nargs, char **args)
{
	opt.unlink_obj = OBJ_RING;
	if (nargs == 1)
		return cmd_unlink(args[0]);
	if (nargs != 2 || !parse_kind(args[0], &opt.unlink_obj))
		return -1;
	return cmd_unlink(args[1]);
}

/* show [ring|epoch|pool] NAME (a ring when no kind is named). */
static int run_show(int nargs, char **args)
{
	enum obj_kind obj = OBJ_RING;

	if (nargs == 1)
		return cmd_get(OBJ_RING, args[0]);
	if (nargs != 2 || !parse_kind(args[0], &obj))
		return -1;
	return cmd_get(obj, args[1]);
}

/* Commands that dump when given no name: --all-ns applies to those. */
static bool is_dump(const char *cmd, int nargs)
{
	return !strcmp(cmd, "list") || !strcmp(cmd, "ls") ||
	       ((!strcmp(cmd, "epoch") || !strcmp(cmd, "pool")) && !nargs);
}

/* The command in @cmd with @nargs words after it; -1: a usage error. */
static int run(const char *cmd, int nargs, char **args)
{
	/* --all-ns is for dumps, --ns for unlink */
	if (opt.all_ns && !is_dump(cmd, nargs))
		return -1;
	if (opt.have_ns && strcmp(cmd, "unlink"))
		return -1;
	if (!strcmp(cmd, "list") || !strcmp(cmd, "ls")) {
		if (!nargs)
			return cmd_list();
	} else if (!strcmp(cmd, "show")) {
		return run_show(nargs, args);
	} else if (!strcmp(cmd, "epoch")) {
		if (nargs <= 1)
			return cmd_get(OBJ_EPOCH, args[0]);
	} else if (!strcmp(cmd, "pool")) {
		if (nargs <= 1)
			return cmd_get(OBJ_POOL, args[0]);
	} else if (!strcmp(cmd, "watch")) {
		if (!nargs)
			return cmd_watch();
	} else if (!strcmp(cmd, "unlink")) {
		return run_unlink(nargs, args);
	} else if (!strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	return -1;
}

/*
 * The answer is standard output: if it could not all be written (a full
 * disk, a closed pipe's reader), the command failed, whatever it found.
 */
static int stdout_written(int ret)
{
	errno = 0;
	if (!fflush(stdout) && !ferror(stdout))
		return ret;
	fprintf(stderr, "batonctl: standard output: %s\n",
		errno ? strerror(errno) : "write error");
	return ret ? ret : 1;
}

int main(int argc, char **argv)
{
	const char *cmd;
	bool done;
	int ret;

	ret = parse_options(argc, argv, &done);
	if (ret || done)
		return stdout_written(ret);
	if (optind >= argc) {
		usage(stderr);
		return 1;
	}
	cmd = argv[optind++];
	ret = run(cmd, argc - optind, argv + optind);
	if (ret < 0) {
		usage(stderr);
		return 1;
	}
	return stdout_written(ret);
}
