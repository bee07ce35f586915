#!/bin/bash
# selftests/vm/tap-lines.sh: owns taking the result lines out of a test log.
# Prints every "ok"/"not ok" line of LOG (stdin without one), and names the
# skipped tests: the kselftest harness prints a skip as "ok 19 # SKIP why",
# without the test's name, which is on the "#  RUN name ..." line before it.
# Such a line becomes "ok 19 name # SKIP why", so a report of skips (and
# .ci/expected-skips) can say which test skipped. Lines that have a name
# are printed as they are.
#
#   tap-lines.sh [LOG]
set -euo pipefail

awk '
	# "#  RUN           fixture.variant.test ...": the test now running.
	$1 == "#" && $2 == "RUN" { name = $3; next }
	/^(not )?ok( |$)/ {
		if (name != "" && match($0, /^(not )?ok [0-9]+ # /))
			$0 = substr($0, 1, RLENGTH - 2) name substr($0, RLENGTH - 2)
		print
		name = ""
	}
' "$@"
