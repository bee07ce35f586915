# lib/version.mk: the package version for Makefiles, read from the one place
# it is written, lib/include/baton_version.h. Include it after setting
# BATON_TOP to the repository's root (relative or absolute).
#
#   BATON_PKG_VERSION   2.0.0
#   BATON_SOVERSION     2 (the major: libbaton.so.2)

baton_empty :=
baton_space := $(baton_empty) $(baton_empty)
baton_version_part = $(shell sed -n 's/^\#define BATON_VERSION_$(1)[[:space:]]\{1,\}\([0-9]\{1,\}\)$$/\1/p' \
	$(BATON_TOP)/lib/include/baton_version.h)
baton_version_parts := $(foreach p,MAJOR MINOR PATCH,$(call baton_version_part,$(p)))
ifneq ($(words $(baton_version_parts)),3)
$(error lib/version.mk: no MAJOR, MINOR and PATCH in $(BATON_TOP)/lib/include/baton_version.h)
endif
BATON_SOVERSION := $(word 1,$(baton_version_parts))
BATON_PKG_VERSION := $(subst $(baton_space),.,$(baton_version_parts))
