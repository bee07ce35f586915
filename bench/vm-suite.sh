#!/bin/sh
# bench/vm-suite.sh: owns the VM half of `make bench`. Runs inside the test
# VM (busybox sh, kmod backend: /dev/baton) as `run-vm.sh exec` FILE, with
# bench/peers-static, bench/rate and bench/death_epipe beside it in /extra/.
# Args: RUNS RT_N TARGET_NS RATE_RUNS RATE_WINDOW_NS.
# Prints one "csv:" line per run (the host's run-suite.sh collects them):
#   csv:vm,RUN,<peers-static output>,CLPP_BEFORE_NS,CLPP_AFTER_NS
# and one "rate:" line per run of the rate sweep (bench/rate-sweep.sh):
#   rate:vm,RUN,<bench/rate output>   (rate:vm,skip,... for a skipped peer)
# Under TCG emulation absolute figures mean little; ratios within one run do.
runs=${1:-2}
rt_n=${2:-2000}
target=${3:-50000000}
rate_runs=${4:-1}
rate_window=${5:-100000000}
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
# The rate sweep, kmod backend: the same rates and peers as the host's,
# runs interleaved as there (run r of every peer before run r + 1).
rate=/extra/rate
for rt in 10000 100000 1000000 10000000; do
	r=1
	skipped=" "
	while [ "$r" -le "$rate_runs" ]; do
		for peer in baton-block baton-epoll baton-waitset futex efd pipe; do
			case $skipped in *" $peer "*) continue ;; esac
			line=$("$rate" -p "$peer" -r "$rt" -T "$rate_window")
			rc=$?
			if [ "$rc" -eq 4 ]; then
				echo "rate:vm,skip,$line"
				skipped="$skipped$peer "
				continue
			elif [ "$rc" -ne 0 ]; then
				echo "vm-suite: rate $peer $rt/s run $r failed"
			else
				echo "rate:vm,$r,$line"
			fi
			echo "vm-suite: rate $peer $rt/s run $r/$rate_runs done" >&2
		done
		r=$((r + 1))
	done
done
# kill -9 of a peer to the survivor's EPIPE (issue 13): kmod's figures.
if [ -x /extra/death_epipe ]; then
	/extra/death_epipe 11 || echo "vm-suite: death_epipe failed"
fi
echo "ok - vm-suite"
