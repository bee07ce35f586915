// SPDX-License-Identifier: MIT
/*
 * lib/ctl/watch.c: batonctl watch: subscribes with BATON_CMD_WATCH and
 * prints each event as it arrives (text, or one JSON object a line) until
 * a signal, -c events or -t seconds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <netlink/genl/genl.h>

#include "batonctl.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* Each event goes out as it comes; one that cannot ends the watch. */
static void stop_if_unwritable(void)
{
	if (fflush(stdout) || ferror(stdout))
		stop_requested = 1;	/* main() says why, status 1 */
}

void print_event(const struct rec *ev)
{
	size_t i;

	if (opt.json) {
		/* one object per event and line, flushed as it goes */
		jw_reset();
		json_rec(&fs_event, ev);
		putchar('\n');
		stop_if_unwritable();
		return;
	}
	for (i = 0; i < fs_event.n; i++) {
		const struct field *f = &fs_event.f[i];

		if (!rec_has(ev, f->attr))
			continue;
		if (f->type == FT_STR) {
			printf(" %s %s", f->name, ev->name);
			continue;
		}
		if (f->attr == BATON_A_EVENT_TYPE) {
			text_value(f, ev);
			continue;
		}
		printf(" %s ", f->name);
		text_value(f, ev);
	}
	putchar('\n');
	stop_if_unwritable();
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for events on the subscribed socket; 0, or an exit status. */
static int watch_loop(struct nl *nl, struct reply *rp)
{
	int64_t end = opt.timeout_s ? now_ms() + opt.timeout_s * 1000 : 0;
	struct pollfd pfd = {
		.fd = nl_socket_get_fd(nl->sk),
		.events = POLLIN,
	};
	int ret;

	while (!stop_requested && !(opt.count && rp->events >= opt.count)) {
		int wait = -1;

		if (end) {
			int64_t left = end - now_ms();

			if (left <= 0)
				return opt.count ? EXIT_TIMEDOUT : 0;
			wait = left > 1000 ? 1000 : (int)left;
		}
		ret = poll(&pfd, 1, wait);
		if (ret < 0 && errno != EINTR)
			return 1;
		if (ret <= 0)
			continue;
		ret = nl_recvmsgs(nl->sk, nl->cb);
		if (ret == -NLE_NOMEM)	/* ENOBUFS: the socket overran */
			fprintf(stderr, "batonctl: events were lost (receive buffer overrun)\n");
		else if (ret < 0 && rp->error)
			return 1;
	}
	return 0;
}

int cmd_watch(void)
{
	struct sigaction sa;
	struct reply rp;
	struct nl nl;
	int ret;

	ret = bt_nl_open(&nl);
	if (ret == -ENOENT) {
		say_no_module("events need the module; the memfd backend has none");
		bt_nl_close(&nl);
		return EXIT_NOMODULE;
	}
	if (ret) {
		fprintf(stderr, "batonctl: generic netlink: %s\n",
			strerror(-ret));
		bt_nl_close(&nl);
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: poll returns */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* one object a line (batonctl.rst): -p does not apply here */
	opt.pretty = false;
	/* events come unsolicited, with sequence numbers of their own */
	nl_socket_disable_seq_check(nl.sk);
	nl_socket_set_buffer_size(nl.sk, 1 << 20, 0);
	/*
	 * Events, not WATCH replies: the kernel may deliver some between
	 * adding this watcher and acknowledging the request, and those are
	 * printed and counted as any other (a reply set up for WATCH
	 * skipped them as not what was asked for).
	 */
	reply_init(&rp, BATON_CMD_EVENT, &fs_event, OBJ_EVENT);
	ret = bt_nl_request(&nl, BATON_CMD_WATCH, 0, NULL, REQ_ACK, &rp);
	if (ret) {
		say_kernel_error("subscribing to events", ret, &rp);
		bt_nl_close(&nl);
		return 1;
	}
	/* Tools and tests wait for this line before causing events. */
	fprintf(stderr, "batonctl: watching events\n");
	ret = watch_loop(&nl, &rp);
	reply_free(&rp);
	bt_nl_close(&nl);	/* closing the socket ends the subscription */
	return ret;
}

