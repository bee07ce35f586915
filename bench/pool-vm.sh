#!/bin/sh
# bench/pool-vm.sh: owns the VM half of bench/pool-suite.sh. Runs inside the
# test VM (busybox sh, kmod backend: /dev/baton) as `run-vm.sh exec` FILE,
# with bench/pool_bench-static beside it in /extra/.
# Args: RUNS N BURST_MIB DECAY_MS IDLE_MS (TCG is slow: a longer idle).
# Prints one "pool:vm,RUN,<pool_bench output>" line per run, and the RSS
# samples as "poolrss:vm-SERIES T_MS KIB". Under TCG emulation the ns
# figures mean little (they prove the pool works across processes on
# kmod); the RSS series are driven by the kernel's timer and do mean
# something.
runs=${1:-2}
n=${2:-20000}
burst=${3:-64}
decay=${4:-100}
idle=${5:-1500}
b=/extra/pool_bench-static
[ -c /dev/baton ] && export BATON_BACKEND=kmod || echo "pool-vm: no /dev/baton, memfd backend"
one() {
	r=1
	while [ "$r" -le "$runs" ]; do
		line=$("$b" "$@") || { echo "pool-vm: $* run $r failed (rc $?)"; r=$((r + 1)); continue; }
		echo "pool:vm,$r,$line"
		r=$((r + 1))
	done
}
for s in 4096 65536; do
	for pat in pair burst xproc; do
		one -q alloc -p pool -P "$pat" -s "$s" -n "$n"
	done
done
for s in 4096 65536 1048576; do
	for t in handle inline pipe; do
		one -q pipeline -t "$t" -s "$s" -n $((n / 40 + 16))
	done
	one -q pipeline -t handle -R 16 -s "$s" -n $((n / 40 + 16))
done
# RSS over time: every run's figures, run 1's samples. pool-trickle: 64
# allocations every 10 ms while idle (traffic: the decay must still work).
for series in pool static pool-trickle; do
	p=${series%-trickle} t=
	[ "$p" != "$series" ] && t="-T 10"
	r=1
	while [ "$r" -le "$runs" ]; do
		# shellcheck disable=SC2086 # $t: no option, or -T and its value
		line=$("$b" -q rss -p "$p" $t -d "$decay" -B "$burst" -i "$idle" -l "vm-$series" -o /tmp/rss.dat) ||
			{ echo "pool-vm: rss $series run $r failed"; r=$((r + 1)); continue; }
		echo "pool:vm,$r,$line"
		[ "$r" -eq 1 ] && grep -v '^#' /tmp/rss.dat | sed "s/^/poolrss:vm-$series /"
		r=$((r + 1))
	done
done
