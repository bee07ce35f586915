#!/bin/sh
# selftests/vm/job-exec.sh: becomes /job for `run-vm.sh exec PROG [FILE...]`.
# Owns running one program (copied to /extra/) with its output as the job's
# output; the job's exit status is the program's. Used for smoke tests and
# for running a single binary by hand.

cd /tmp
prog=/extra/${BATON_EXEC:?}
[ -x "$prog" ] || { echo "not ok - $prog missing from the image"; exit 1; }
# shellcheck disable=SC2086 # word splitting of the args is intended
"$prog" ${BATON_EXEC_ARGS:-}
