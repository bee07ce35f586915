#!/bin/bash
# bench/run-suite.sh: owns `make bench`: runs baton and its peers (bench/peers)
# on the same two pinned CPUs, host (memfd backend) then VM (kmod backend,
# bench/vm-suite.sh inside selftests/vm/run-vm.sh exec), and writes
# bench/results/: raw.csv (every run), summary.csv (per figure: runs,
# median, min, max), syscalls.csv, *.png (gnuplot) and summary.md; the rate
# sweep (bench/rate-sweep.sh, host and VM rows) writes rate.md and its own
# csv files and plots beside them; the buffer pool's (bench/pool-suite.sh)
# pool.md, pool.csv and pool-rss.png.
#
#   bench/run-suite.sh [--quick] [--host-only | --vm-only | --report-only]
#
# --report-only measures nothing: summary.csv, the plots and summary.md
# again from the raw.csv and syscalls.csv already there.
#
# Env: RUNS (runs per figure, default 5; --quick 2), CPUS (default 0,1),
# TARGET_NS (stream window per run, default 3e8; --quick 5e7), RT_N (round
# trips sampled per run, default 20000; --quick 2000), PEERS (default: all
# that bench/peers was built with), SIZES, BATCHES, BENCH_RESULTS (output
# directory, default bench/results), NEAR_NS (cache-line
# round trip below which a placement counts as "near", default 250).
#
# Every figure's runs are bracketed by a bare cache-line ping-pong (clpp) on
# the same CPUs, before and after, because the two vCPUs here move between
# a near and a far placement; each run's row says which it saw. Syscalls per
# message come from strace -f -c over N messages less a setup-only run (so
# setup cancels), median and spread of a few runs. Nothing here asserts a timing: targets are printed next to
# what was measured.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
res=${BENCH_RESULTS:-$here/results}
quick=0 do_host=1 do_vm=1
for a in "$@"; do
	case $a in
	--quick) quick=1 ;;
	--host-only) do_vm=0 ;;
	--vm-only) do_host=0 ;;
	--report-only) do_host=0 do_vm=0 ;;
	*) echo "usage: run-suite.sh [--quick] [--host-only|--vm-only|--report-only]" >&2; exit 2 ;;
	esac
done
if ((quick)); then
	RUNS=${RUNS:-2} TARGET_NS=${TARGET_NS:-50000000} RT_N=${RT_N:-2000}
else
	RUNS=${RUNS:-5} TARGET_NS=${TARGET_NS:-300000000} RT_N=${RT_N:-20000}
fi
CPUS=${CPUS:-0,1}
# The rate sweep: runs per figure and the VM's window (TCG is slow).
if ((quick)); then
	RATE_RUNS=${RATE_RUNS:-1} RATE_WINDOW_VM_NS=${RATE_WINDOW_VM_NS:-100000000}
else
	RATE_RUNS=${RATE_RUNS:-3} RATE_WINDOW_VM_NS=${RATE_WINDOW_VM_NS:-300000000}
fi
SIZES=${SIZES:-8 64 1024}
BATCHES=${BATCHES:-1 32}
PEERS_BIN=$here/peers
[[ -x $PEERS_BIN ]] || { echo "run-suite: $PEERS_BIN missing (make bench-build)" >&2; exit 1; }
PEERS=${PEERS:-$("$PEERS_BIN" -l | sed 's/^clpp //')}
mkdir -p "$res"
# One suite at a time: two would share the CPUs and the result files.
exec 9>"$res/.lock"
flock -n 9 || { echo "run-suite: another run-suite.sh holds $res/.lock; wait for it" >&2; exit 1; }
raw=$res/raw.csv
sumcsv=$res/summary.csv
sysc=$res/syscalls.csv
t_start=$SECONDS

roudi_pid=
cleanup() {
	if [[ -n $roudi_pid ]]; then
		kill "$roudi_pid" 2>/dev/null || true
		wait "$roudi_pid" 2>/dev/null || true
		roudi_pid=
		# RouDi 2.0 can abort on SIGTERM (it tries to kill clients that
		# have already exited) and then leaves its segments behind: the
		# management one and the payload one named after the user.
		rm -f /dev/shm/iceoryx_mgmt "/dev/shm/$(id -un)"
	fi
}
trap cleanup EXIT

# iceoryx needs its daemon: start it for the run, stop it after.
start_roudi() {
	[[ " $PEERS " == *" iceoryx "* ]] || return 0
	if ! command -v iox-roudi >/dev/null; then
		echo "run-suite: iox-roudi not installed; skipping iceoryx"
		PEERS=${PEERS//iceoryx/}
		return 0
	fi
	iox-roudi >"$res/roudi.log" 2>&1 &
	roudi_pid=$!
	sleep 2
	echo "run-suite: started iox-roudi (pid $roudi_pid)"
}

# clpp_ns and placement: bench/placement.sh.
# shellcheck source=bench/placement.sh
. "$here/placement.sh"

# figure BACKEND PEER MODE SIZE HANDLE BATCH RUN: run RUN of a figure,
# bracketed by clpp.
n_fig=0 i_fig=0
figure() {
	local backend=$1 peer=$2 mode=$3 size=$4 handle=$5 batch=$6 r=$7 line before after hflag=''
	((handle)) && hflag=-H
	before=$(clpp_ns)
	if [[ $mode == rt ]]; then
		line=$(BATON_BACKEND=memfd "$PEERS_BIN" -p "$peer" -m rt -s "$size" $hflag \
			-b "$batch" -n "$RT_N" -c "$CPUS" 2>"$res/last.err") || line=ERR
	else
		line=$(BATON_BACKEND=memfd "$PEERS_BIN" -p "$peer" -m stream -s "$size" $hflag \
			-b "$batch" -n 0 -T "$TARGET_NS" -c "$CPUS" 2>"$res/last.err") || line=ERR
	fi
	after=$(clpp_ns)
	if [[ $line == ERR ]]; then
		echo "  [$i_fig/$n_fig] $peer $mode ${size}B h=$handle b=$batch run $r: FAILED: $(tail -n 1 "$res/last.err")"
		return 0
	fi
	echo "$backend,$r,$line,$before,$after,$(placement "$before" "$after")" >>"$raw"
	printf '  [%d/%d] %-8s %-6s %5sB h=%d b=%-2s run %d/%d: %s msgs/s, rt p50 %s ns, cpu %s ns/msg (clpp %s/%s ns) %ds\n' \
		"$i_fig" "$n_fig" "$peer" "$mode" "$size" "$handle" "$batch" "$r" "$RUNS" \
		"$(echo "$line" | cut -d, -f8)" "$(echo "$line" | cut -d, -f9)" \
		"$(echo "$line" | cut -d, -f12)" "$before" "$after" $((SECONDS - t_start))
}

# strace_calls ARGS...: total syscalls of a peers run (all processes).
strace_calls() {
	local f=$res/strace.tmp
	BATON_BACKEND=memfd strace -f -c -o "$f" "$PEERS_BIN" "$@" >/dev/null 2>&1 || { echo NA; return; }
	awk '$NF == "total" { print $4 }' "$f"
	rm -f "$f"
}

# syscalls PEER BATCH: per message, stream 64 B inline: (a run of N
# messages less a run of SETUP_N) / (N - SETUP_N), so the setup's calls
# cancel; median, min and max over SYSCALL_RUNS runs of N. A blocking
# peer's count depends on how often its consumer happened to sleep, and
# varies between runs by 2x here (efd: 6146 and 12432 calls for the same
# 20000 messages), so one difference of two such runs could even come out
# negative: the spread says how much the figure moves.
SYSCALL_RUNS=${SYSCALL_RUNS:-5}
syscalls() {
	local peer=$1 batch=$2 n=40000 setup_n=64 base r c per=()
	base=$(strace_calls -p "$peer" -m stream -s 64 -b "$batch" -n $setup_n -c "$CPUS")
	for ((r = 0; r < SYSCALL_RUNS; r++)); do
		c=$(strace_calls -p "$peer" -m stream -s 64 -b "$batch" -n $n -c "$CPUS")
		[[ $c == NA || -z $c || $base == NA || -z $base ]] && { echo "host,$peer,$batch,NA,NA,NA,0"; return; }
		per+=("$(awk -v c="$c" -v b="$base" -v n=$((n - setup_n)) \
			'BEGIN { printf "%.4f", (c - b) / n }')")
	done
	printf '%s\n' "${per[@]}" | sort -g | awk -v p="$peer" -v bt="$batch" '
		{ v[NR] = $1 }
		END { printf "host,%s,%s,%s,%s,%s,%d\n", p, bt, v[int((NR + 1) / 2)], v[1], v[NR], NR }'
}

host_suite() {
	local peer mode size handle batch
	echo "run-suite: host, memfd backend, CPUs $CPUS, $RUNS runs per figure, peers: $PEERS"
	start_roudi
	local figs=() f r
	for peer in $PEERS; do
		for mode in rt stream; do
			for size in $SIZES; do
				for handle in 0 1; do
					for batch in $BATCHES; do
						figs+=("$peer $mode $size $handle $batch")
					done
				done
			done
		done
	done
	n_fig=${#figs[@]}
	# Run by run, every figure once a round (as bench/pool-suite.sh): a
	# noisy minute on this shared host moves one run of many figures,
	# which their medians absorb, not all the runs of the one figure
	# that happened to be running then.
	for ((r = 1; r <= RUNS; r++)); do
		i_fig=0
		for f in "${figs[@]}"; do
			i_fig=$((i_fig + 1))
			# shellcheck disable=SC2086 # f is five words
			figure host $f "$r"
		done
	done
	echo "run-suite: syscalls per message (strace -f -c, N less a setup run, stream 64 B, $SYSCALL_RUNS runs)"
	echo "backend,peer,batch,syscalls_per_msg,min,max,runs" >"$sysc"
	for peer in $PEERS; do
		for batch in $BATCHES; do
			syscalls "$peer" "$batch" | tee -a "$sysc" | sed 's/^/  /'
		done
	done
	cleanup
}

# The VM: kmod backend. TCG emulation: only ratios inside the VM mean much.
vm_suite() {
	local out=$root/build/logs/vm-exec.out
	echo "run-suite: VM (kmod backend, TCG), bench/vm-suite.sh via selftests/vm/run-vm.sh exec"
	if ! BATON_EXEC_ARGS="$RUNS $RT_N $TARGET_NS $RATE_RUNS $RATE_WINDOW_VM_NS" \
		"$root/selftests/vm/run-vm.sh" exec \
		"$here/vm-suite.sh" "$here/peers-static" "$here/rate" "$here/death_epipe" >"$res/vm.log" 2>&1; then
		echo "run-suite: VM run failed (see $res/vm.log, $out)"
	fi
	# kill -9 to EPIPE on kmod (bench/death_epipe): beside the host's.
	if [[ -f $out ]]; then
		grep -E '^(# kill|# baseline|death,)' "$out" | tr -d '\r' >"$res/death_epipe-vm.txt" || true
		sed 's/^/  /' "$res/death_epipe-vm.txt"
	fi
	# Each VM row ends with its clpp before and after (fields 17, 18):
	# its placement by the same rule as the host's rows.
	if [[ -f $out ]]; then
		local row f
		sed -n 's/^csv://p' "$out" | tr -d '\r' | while IFS= read -r row; do
			IFS=, read -ra f <<<"$row"
			echo "$row,$(placement "${f[16]:--}" "${f[17]:--}")"
		done >>"$raw" || true
	fi
	grep -c '^vm,' "$raw" | sed 's/^/  VM rows: /' || true
	if [[ -f $out ]]; then
		BENCH_RESULTS=$res "$here/rate-sweep.sh" --vm-rows "$out" >/dev/null ||
			echo "run-suite: rate sweep report failed"
	fi
}

# The rate sweep (bench/rate-sweep.sh owns it): host rows now, VM rows in
# vm_suite; rate.md is rewritten after each.
rate_sweep() {
	local q=
	((quick)) && q=--quick
	BENCH_RESULTS=$res RUNS=$RATE_RUNS CPUS=$CPUS "$here/rate-sweep.sh" $q --host |
		grep -v '^|' || echo "run-suite: rate sweep failed"
}

# The other bench programs (each owns its questions and prints its own runs
# and spread): their full output goes to results/<prog>.txt.
companions() {
	local prog args
	for prog in spsc_xproc mpsc_sweep epoch_snapshot death_epipe; do
		[[ -x $here/$prog ]] || { echo "run-suite: no bench/$prog (not built); skipped"; continue; }
		args=
		[[ $prog == spsc_xproc ]] && ((quick)) && args=-q
		echo "run-suite: bench/$prog $args -> $res/$prog.txt"
		# shellcheck disable=SC2086 # args is one optional flag
		if BATON_BACKEND=memfd "$here/$prog" $args >"$res/$prog.txt" 2>&1; then
			tail -n 3 "$res/$prog.txt" | sed 's/^/  /'
		else
			echo "run-suite: bench/$prog failed (see $res/$prog.txt)"
		fi
	done
}

# The buffer pool's figures (bench/pool-suite.sh owns them and pool.md).
pool_suite() {
	local args=()
	((quick)) && args+=(--quick)
	((do_host && !do_vm)) && args+=(--host-only)
	((do_vm && !do_host)) && args+=(--vm-only)
	((!do_host && !do_vm)) && args+=(--report-only)
	BENCH_RESULTS=$res CPUS=$CPUS RUNS=$RUNS "$here/pool-suite.sh" "${args[@]}" ||
		echo "run-suite: pool suite failed"
}

# Median, min, max and runs per figure from raw.csv.
summarize() {
	echo "backend,peer,mode,size,handle,batch,runs,rate_med,rate_min,rate_max,p50_med,p50_min,p50_max,p99_med,p999_med,cpu_med,clpp_med,placements" >"$sumcsv"
	tail -n +2 "$raw" | sort -t, -k1,1 -k3,3 -k4,4 -k5,5n -k6,6n -k7,7n |
	awk -F, -v OFS=, '
	# mawk has no asort: split into a[1..n] and insertion-sort numerically.
	function srt(s, a,   n, i, j, t) { n = split(s, a, " "); for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }; return n }
	function med(s,   a, n) { n = srt(s, a); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
	function mn(s,   a, n) { n = srt(s, a); return a[1] }
	function mx(s,   a, n) { n = srt(s, a); return a[n] }
	function flush() {
		if (key == "") return
		print key, runs, med(rate), mn(rate), mx(rate), med(p50), mn(p50), mx(p50), med(p99), med(p999), med(cpu), med(clpp), pl
	}
	{
		k = $1 OFS $3 OFS $4 OFS $5 OFS $6 OFS $7
		if (k != key) { flush(); key = k; runs = 0; rate = p50 = p99 = p999 = cpu = clpp = pl = "" }
		runs++; rate = rate " " $10; p50 = p50 " " $11; p99 = p99 " " $12; p999 = p999 " " $13; cpu = cpu " " $14
		clpp = clpp " " ($17 + $18) / 2
		if (index(" " pl " ", " " $19 " ") == 0) pl = pl (pl == "" ? "" : " ") $19
	}
	END { flush() }' >>"$sumcsv"
}

plots() {
	command -v gnuplot >/dev/null || { echo "run-suite: gnuplot missing, no plots"; return 0; }
	# One data file per plot: label, median, min, max.
	awk -F, '$1 == "host" && $3 == "rt" && $4 == 64 && $5 == 0 && $6 == 1 { print $2, $11, $12, $13 }' "$sumcsv" >"$res/rt64.dat"
	awk -F, '$1 == "host" && $3 == "stream" && $4 == 8 && $5 == 0 && $6 == 32 { print $2, $8, $9, $10 }' "$sumcsv" >"$res/stream8b32.dat"
	awk -F, '$1 == "host" && $3 == "stream" && $4 == 8 && $5 == 0 && $6 == 1 { print $2, $8, $9, $10 }' "$sumcsv" >"$res/stream8b1.dat"
	if [[ ! -s $res/rt64.dat || ! -s $res/stream8b32.dat || ! -s $res/stream8b1.dat ]]; then
		echo "run-suite: no host figures for the plots (64 B rt, 8 B stream); no plots"
		rm -f "$res"/*.dat
		return 0
	fi
	gnuplot -e "resdir='$res'" "$here/plots.gp" 2>"$res/gnuplot.log" || echo "run-suite: gnuplot failed (see $res/gnuplot.log)"
	rm -f "$res"/*.dat
}

report() {
	NEAR_NS=$NEAR_NS "$here/summary.sh" "$sumcsv" "$sysc" "$raw" >"$res/summary.md"
	echo "run-suite: every figure (median (min..max) over runs; rt: round trips/s and p50 ns):"
	awk -F, 'NR > 1 {
		printf "  %-5s %-10s %-6s %5sB h=%s b=%-2s  %12.0f/s (%.0f..%.0f)", $1, $2, $3, $4, $5, $6, $8, $9, $10
		if ($3 == "rt") printf "  p50 %.0f ns (%.0f..%.0f) p99 %.0f p99.9 %.0f", $11, $12, $13, $14, $15
		printf "  x%d [%s]\n", $7, $18 }' "$sumcsv"
	echo "run-suite: wrote $res/summary.md"
}

if ((do_host || do_vm)); then
	echo "backend,run,peer,mode,size,handle,batch,n,secs,rate,p50_ns,p99_ns,p999_ns,cpu_ns_per_msg,cpu_parent,cpu_child,clpp_before_ns,clpp_after_ns,placement" >"$raw"
fi
((do_host)) && host_suite
((do_host)) && companions
((do_host)) && rate_sweep
((do_vm)) && vm_suite
pool_suite
summarize
plots
report
echo "run-suite: done in $((SECONDS - t_start)) s; results in $res/"
