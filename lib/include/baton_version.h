/* SPDX-License-Identifier: MIT */
/*
 * libbaton: the package version, the one place it is written.
 *
 * Everything else takes it from these three lines: the shared library's
 * soname (libbaton.so.<MAJOR>) and file name, baton.pc, the DKMS tree's
 * dkms.conf and /usr/src/baton-<version> (lib/version.mk reads them), and
 * baton_version(), which returns what the library was built with. A test
 * (selftests/pkg/check-install.sh) checks that they agree.
 *
 * This is not BATON_ABI_VERSION of <linux/baton.h>: that numbers the
 * module's ioctl ABI, which changes only when the ioctl structs do
 * (Documentation/abi.rst, "Versions").
 */
#ifndef BATON_VERSION_H
#define BATON_VERSION_H

#define BATON_VERSION_MAJOR	2
#define BATON_VERSION_MINOR	10
#define BATON_VERSION_PATCH	3

/* A version as one comparable number: 2.0.0 is 0x020000. */
#define BATON_MAKE_VERSION(major, minor, patch) \
	(((major) << 16) | ((minor) << 8) | (patch))

/* The version of the headers being compiled against. */
#define BATON_VERSION_NUMBER \
	BATON_MAKE_VERSION(BATON_VERSION_MAJOR, BATON_VERSION_MINOR, \
			   BATON_VERSION_PATCH)

#define BATON__STRINGIFY(x)	#x
#define BATON__VERSION_STR(a, b, c) \
	BATON__STRINGIFY(a) "." BATON__STRINGIFY(b) "." BATON__STRINGIFY(c)
/* "2.0.0" */
#define BATON_VERSION_STRING \
	BATON__VERSION_STR(BATON_VERSION_MAJOR, BATON_VERSION_MINOR, \
			   BATON_VERSION_PATCH)

#endif /* BATON_VERSION_H */
