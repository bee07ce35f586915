#!/bin/sh
# selftests/vm/job-demo.sh: becomes /job for `run-vm.sh demo`. Owns running
# bench/pipeline_demo (which prints its own result); the job's exit status is
# the demo's. BATON_DEMO_ARGS, if set on the host, is passed through.

cd /tmp
[ -x /bench/pipeline_demo ] || { echo "not ok - pipeline_demo missing from the image"; exit 1; }
# shellcheck disable=SC2086 # word splitting of the args is intended
/bench/pipeline_demo ${BATON_DEMO_ARGS:-}
rc=$?
if [ "$rc" = 0 ]; then
	echo "ok - pipeline_demo"
else
	echo "not ok - pipeline_demo: exit status $rc"
fi
exit $rc
