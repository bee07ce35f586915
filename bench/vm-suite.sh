#!/bin/sh
# bench/vm-suite.sh: owns the VM half of `make bench`. Runs inside the test
# VM (busybox sh, kmod backend: /dev/baton) as `run-vm.sh exec` FILE, with
# bench/peers-static (and bench/death_epipe) beside it in /extra/. Args:
# RUNS RT_N TARGET_NS.
# Prints one "csv:" line per run (the host's run-suite.sh collects them):
#   csv:vm,RUN,<peers-static output>,CLPP_BEFORE_NS,CLPP_AFTER_NS
# Under TCG emulation absolute figures mean little; ratios within one run do.
runs=${1:-2}
rt_n=${2:-2000}
target=${3:-50000000}
p=/extra/peers-static
[ -c /dev/baton ] && export BATON_BACKEND=kmod || echo "vm-suite: no /dev/baton, memfd backend"
clpp() { "$p" -p clpp -m rt -n 5000 | cut -d, -f9; }
for peer in baton baton-park baton-mpsc bare futex pipe ck; do
	for mode in rt stream; do
		for batch in 1 32; do
			r=1
			while [ "$r" -le "$runs" ]; do
				b=$(clpp)
				if [ "$mode" = rt ]; then
					line=$("$p" -p "$peer" -m rt -s 64 -b "$batch" -n "$rt_n")
				else
					line=$("$p" -p "$peer" -m stream -s 64 -b "$batch" -n 0 -T "$target")
				fi || { echo "vm-suite: $peer $mode b=$batch run $r failed"; r=$((r + 1)); continue; }
				a=$(clpp)
				echo "csv:vm,$r,$line,$b,$a"
				echo "vm-suite: $peer $mode 64B b=$batch run $r/$runs done" >&2
				r=$((r + 1))
			done
		done
	done
done
# kill -9 of a peer to the survivor's EPIPE (issue 13): kmod's figures.
if [ -x /extra/death_epipe ]; then
	/extra/death_epipe 11 || echo "vm-suite: death_epipe failed"
fi
echo "ok - vm-suite"
