// SPDX-License-Identifier: MIT
//
// selftests/pkg/hello.cc: libbaton from C++, built by check-install.sh
// against a staged install with pkg-config: <baton/baton.h> must compile
// as C++ (extern "C", no C-only syntax in the inline fast paths) and link.
// Moves messages through a memfd ring with the inline fast path and the
// bulk forms, and checks the version as hello.c does.
#include <baton/baton.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <unistd.h>

namespace {

struct ring_closer {
	void operator()(baton_ring *r) const { baton_ring_close(r); }
};
using ring_ptr = std::unique_ptr<baton_ring, ring_closer>;

int fail(const char *what, int r)
{
	std::fprintf(stderr, "hello.cc: %s: %d\n", what, r);
	return 1;
}

} // namespace

int main()
{
	static_assert(BATON_VERSION_NUMBER ==
		      BATON_MAKE_VERSION(BATON_VERSION_MAJOR, BATON_VERSION_MINOR,
					 BATON_VERSION_PATCH), "version macros");
	if (baton_version() != BATON_VERSION_NUMBER)
		return fail("baton_version()", static_cast<int>(baton_version()));

	const std::string name = "pkg-hello-cc-" + std::to_string(getpid());
	baton_ring_params p{};
	p.kind = BATON_RING_SPSC;
	p.slot_count = 16;
	p.slot_size = 8;
	p.mode = 0600;
	p.backend = BATON_BACKEND_MEMFD;

	baton_ring *raw = nullptr;
	int r = baton_ring_create(name.c_str(), &p, BATON_ROLE_PRODUCER, &raw);
	if (r < 0)
		return fail("baton_ring_create", r);
	ring_ptr prod(raw);
	r = baton_ring_open(name.c_str(), BATON_ROLE_CONSUMER, BATON_BACKEND_MEMFD,
			    &raw);
	if (r < 0)
		return fail("baton_ring_open", r);
	ring_ptr cons(raw);
	baton_ring_unlink(name.c_str(), BATON_BACKEND_MEMFD);

	uint64_t in[4] = { 1, 2, 3, 4 }, out[4] = {};
	r = baton_spsc_try_push_bulk8(prod.get(), in, 4);
	if (r != 4)
		return fail("baton_spsc_try_push_bulk8", r);
	r = baton_spsc_try_pop_bulk8(cons.get(), out, 4);
	if (r != 4 || std::memcmp(in, out, sizeof(in)) != 0)
		return fail("baton_spsc_try_pop_bulk8", r);
	std::printf("%s from C++\n", BATON_VERSION_STRING);
	return 0;
}
