// SPDX-License-Identifier: MIT
/*
 * libbaton messages: the print callback (baton_set_print(), in the style
 * of libbpf_set_print()), the helpers the rest of the library uses to say
 * why a create, open or register was refused, and baton_strerror().
 *
 * The library never prints on a fast path: only the setup calls and
 * their failures reach this file. Levels:
 *   BATON_LOG_WARN   the caller's arguments break a rule (EINVAL, naming
 *                    the field and the rule), shared pages are corrupt
 *                    (EPROTO), or the module and the library disagree;
 *   BATON_LOG_INFO   the system said no (EACCES, EDQUOT, ENODEV, ENOSPC...);
 *   BATON_LOG_DEBUG  answers a caller often expects and handles (ENOENT,
 *                    EEXIST, EBUSY), and what open-or-create did.
 * The default printer writes BATON_LOG_WARN messages to stderr, or the
 * levels $BATON_LOG names ("none", "warn", "info", "debug").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int default_print(enum baton_log_level level, const char *fmt,
			 va_list ap)
{
	const char *env = getenv("BATON_LOG");
	int max = BATON_LOG_WARN;

	if (env && *env) {
		if (!strcmp(env, "none"))
			return 0;
		if (!strcmp(env, "info"))
			max = BATON_LOG_INFO;
		else if (!strcmp(env, "debug"))
			max = BATON_LOG_DEBUG;
	}
	if ((int)level > max)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static baton_print_fn print_fn = default_print;

baton_print_fn baton_set_print(baton_print_fn fn)
{
	return __atomic_exchange_n(&print_fn, fn, __ATOMIC_ACQ_REL);
}

void baton__log(enum baton_log_level level, const char *fmt, ...)
{
	baton_print_fn fn = __atomic_load_n(&print_fn, __ATOMIC_ACQUIRE);
	int saved = errno;	/* a printer must not change the caller's errno */
	va_list ap;

	if (!fn)
		return;
	va_start(ap, fmt);
	fn(level, fmt, ap);
	va_end(ap);
	errno = saved;
}

/*
 * "baton_ring_create("t.x")": the call and the name as the caller gave
 * it, bytes outside printable ASCII as \xNN, cut after 63 bytes.
 */
void baton__what(struct baton__what *w, const char *call, const char *name)
{
	size_t n = 0, i;
	int len;

	w->call = call;
	if (!name) {
		snprintf(w->buf, sizeof(w->buf), "%s(NULL)", call);
		return;
	}
	len = snprintf(w->buf, sizeof(w->buf), "%s(\"", call);
	n = len > 0 && (size_t)len < sizeof(w->buf) ? (size_t)len : 0;
	for (i = 0; name[i] && i < BATON_NAME_MAX - 1 &&
		    n + 8 < sizeof(w->buf); i++) {
		unsigned char c = (unsigned char)name[i];

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			w->buf[n++] = (char)c;
		else
			n += (size_t)snprintf(w->buf + n, sizeof(w->buf) - n,
					      "\\x%02x", c);
	}
	snprintf(w->buf + n, sizeof(w->buf) - n, "%s\")",
		 name[i] ? "..." : "");
}

int baton__reject(const struct baton__what *w, int err, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (!w)
		return err;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	baton__log(err == -EINVAL || err == -EPROTO ? BATON_LOG_WARN :
						      BATON_LOG_INFO,
		   "libbaton: %s: %s\n", w->buf, msg);
	return err;
}

/* The level a failure of create/open/register is told at. */
static enum baton_log_level level_of(int err)
{
	switch (err) {
	case -ENOENT:
	case -EEXIST:
	case -EBUSY:
	case -ETIMEDOUT:
		return BATON_LOG_DEBUG;
	case -EINVAL:
	case -EPROTO:
	case -EPROTONOSUPPORT:
		return BATON_LOG_WARN;
	default:
		return BATON_LOG_INFO;
	}
}

int baton__fail(const struct baton__what *w, int err)
{
	if (err >= 0)
		return err;
	if (err == -EINVAL) {
		/* Every rule the module enforces is checked before the
		 * ioctl, with its own message; an EINVAL that still comes
		 * back means the two disagree.
		 */
		baton__log(BATON_LOG_WARN,
			   "libbaton: %s: refused by the backend (EINVAL) after the library's own checks passed: the library and the module disagree on a rule? (BATON_IOC_VERSION tells the module's ABI)\n",
			   w->buf);
		return err;
	}
	baton__log(level_of(err), "libbaton: %s: %s (%s)\n", w->buf,
		   baton_strerror(err), strerrorname_np(-err) ?
		   strerrorname_np(-err) : "?");
	return err;
}

/*
 * What an errno means when a baton call returns it; Documentation/abi.rst
 * has the errno table of the ioctls behind these.
 */
const char *baton_strerror(int err)
{
	switch (err < 0 ? -err : err) {
	case 0:
		return "success";
	case EINVAL:
		return "invalid argument (the library's log names the field and the rule: baton_set_print())";
	case ENOENT:
		return "no ring or domain of that name (in this IPC namespace)";
	case EEXIST:
		return "the name is taken (or, for open-or-create, taken by an object of another geometry)";
	case EBUSY:
		return "the role is taken (SPSC producer or consumer, MPSC consumer), max_producers are attached, or the handle is already registered";
	case EACCES:
		return "the object's mode does not allow this role or operation for the caller";
	case EPERM:
		return "operation needs CAP_SYS_ADMIN in the initial user namespace";
	case EDQUOT:
		return "the owner is at a per-user cap (max_objects_per_user or max_bytes_per_user)";
	case ENOSPC:
		return "no room: /dev/shm is full (memfd create), the retire queue is full, or every participant slot is taken";
	case ENODEV:
		return "backend missing: no /dev/baton (module not loaded) or no tmpfs at /dev/shm";
	case EPROTONOSUPPORT:
		return "the module speaks another ABI version than this library";
	case EOPNOTSUPP:
		return "the module lacks a feature this call needs (BATON_IOC_VERSION's features)";
	case EPIPE:
		return "the peer has gone (a consumer sees it only once the ring is drained: end of stream)";
	case EPROTO:
		return "the shared pages are inconsistent (scribbled by a process, or another layout)";
	case ETIMEDOUT:
		return "the timeout passed";
	case EAGAIN:
		return "nothing to do now: the ring is empty (pop) or full (push)";
	case EINTR:
		return "interrupted by a signal";
	case ENOMEM:
		return "out of memory, or the memory cgroup's limit";
	case EXDEV:
		return "the objects live on different backends";
	case EBADF:
		return "not a valid handle for this call (wrong kind, or closed)";
	default:
		return strerror(err < 0 ? -err : err);
	}
}
