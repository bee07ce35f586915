#!/bin/bash
# bench/pool-suite.sh: owns bench/results/pool.md, pool.csv, pool-raw.csv,
# pool-syscalls.csv, pool-instructions.csv, pool-rss.csv, pool-diag.txt and pool-rss.png: the buffer pool's
# figures (issue 14, item 7), measured by bench/pool_bench (host) and
# bench/pool_bench-static (VM, kmod backend, via bench/pool-vm.sh).
# bench/run-suite.sh (`make bench`) calls it; it runs on its own too:
#
#   bench/pool-suite.sh [--quick] [--host-only | --vm-only | --report-only]
#
# Env: RUNS (runs per figure, default 5; --quick 2), CPUS (default 0,1),
# N (alloc+free operations per run, default 2M; --quick 200k), PIPE_MIB
# (bytes per pipeline run, default 512; --quick 64), BURST_MIB (RSS burst,
# default 256; the VM's VM_BURST_MIB 64), DECAY_MS (default 100),
# TRICKLE_MS (the -trickle series: 64 allocations every so many ms while
# idle, default 10),
# VM_RUNS (default 1), VM_N (default 20000) and VM_IDLE_MS (default 1500):
# TCG is slow, NEAR_NS (bench/placement.sh),
# BENCH_RESULTS (default bench/results).
#
# The host's cross-process runs (xproc, the pipeline) are bracketed by a
# cache-line ping-pong, and their raw rows end with the round trip before
# and after and the placement it says (near, far, moved), which pool.md
# gives per figure.
#
# Every figure: median over its runs, (min..max), ×runs, beside its
# baseline as a ratio of medians. Syscalls per operation: strace -f -c over
# N and 2N operations, the difference over N; instructions per operation
# the same way with callgrind. Nothing asserts a timing.
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
	*) echo "usage: pool-suite.sh [--quick] [--host-only|--vm-only|--report-only]" >&2; exit 2 ;;
	esac
done
if ((quick)); then
	RUNS=${RUNS:-2} N=${N:-200000} PIPE_MIB=${PIPE_MIB:-64}
else
	RUNS=${RUNS:-5} N=${N:-2000000} PIPE_MIB=${PIPE_MIB:-512}
fi
CPUS=${CPUS:-0,1}
BURST_MIB=${BURST_MIB:-256}
VM_BURST_MIB=${VM_BURST_MIB:-64}
DECAY_MS=${DECAY_MS:-100}
TRICKLE_MS=${TRICKLE_MS:-10}
VM_RUNS=${VM_RUNS:-1}
VM_N=${VM_N:-20000}
VM_IDLE_MS=${VM_IDLE_MS:-1500}
BIN=$here/pool_bench
JEMALLOC=${JEMALLOC:-/usr/lib/x86_64-linux-gnu/libjemalloc.so.2}
raw=$res/pool-raw.csv
sumcsv=$res/pool.csv
sysc=$res/pool-syscalls.csv
rsscsv=$res/pool-rss.csv
diag=$res/pool-diag.txt
instr=$res/pool-instructions.csv
PEERS_BIN=$here/peers
mkdir -p "$res"
# shellcheck source=bench/placement.sh
. "$here/placement.sh"
exec 8>"$res/.pool-lock"
flock -n 8 || { echo "pool-suite: another pool-suite.sh holds $res/.pool-lock" >&2; exit 1; }
t_start=$SECONDS

# cross_process ARGS...: whether a pool_bench run is two processes on the
# two CPUs (alloc's xproc, every pipeline), whose figure moves with
# placement.
cross_process() {
	[[ " $* " == *" -P xproc "* || " $* " == *" -q pipeline "* ]]
}

# one WHERE RUN ARGS...: one pool_bench run into raw.csv; a skip (exit 4)
# is recorded with its reason. A host cross-process run gets its
# placement (bench/placement.sh) at the end of its row.
one() {
	local where=$1 run=$2 line rc=0 before='' after='' tail=''
	shift 2
	if [[ $where == host ]] && cross_process "$@"; then
		before=$(clpp_ns)
	fi
	line=$(BATON_BACKEND=memfd "$BIN" -c "$CPUS" "$@" 2>"$res/pool-last.err") || rc=$?
	if [[ -n $before ]]; then
		after=$(clpp_ns)
		tail=",$before,$after,$(placement "$before" "$after")"
	fi
	if ((rc == 4)); then
		echo "$where,$run,skip,$*,$(tail -n 1 "$res/pool-last.err" | tr ',' ';')" >>"$raw"
		echo "  $where $* run $run: skipped: $(tail -n 1 "$res/pool-last.err")"
		return 0
	elif ((rc)); then
		echo "  $where $* run $run: FAILED (rc $rc): $(tail -n 1 "$res/pool-last.err")"
		return 0
	fi
	echo "$where,$run,$line$tail" >>"$raw"
	sed -n "s/^# /$where run $run: /p" "$res/pool-last.err" >>"$diag"
	echo "  $where run $run/$RUNS ($((SECONDS - t_start)) s): $line${before:+ (clpp $before/$after ns)}"
}

# calls ARGS...: every syscall of a pool_bench run (all processes).
calls() {
	local f=$res/pool-strace.tmp
	BATON_BACKEND=memfd strace -f -c -o "$f" "$BIN" -c "$CPUS" "$@" >/dev/null 2>&1 ||
		{ echo NA; rm -f "$f"; return; }
	awk '$NF == "total" { print $4 }' "$f"
	rm -f "$f"
}

syscalls() {
	local peer=$1 pat=$2 size=$3 n=20000 a b
	a=$(calls -q alloc -p "$peer" -P "$pat" -s "$size" -n $n)
	b=$(calls -q alloc -p "$peer" -P "$pat" -s "$size" -n $((2 * n)))
	if [[ $a == NA || $b == NA || -z $a || -z $b ]]; then
		echo "host,$peer,$pat,$size,NA"
	else
		awk -v a="$a" -v b="$b" -v n=$n -v p="$peer" -v t="$pat" -v s="$size" \
			'BEGIN { printf "host,%s,%s,%s,%.4f\n", p, t, s, (b - a) / n }'
	fi
}

# instrs ARGS...: the instructions a pool_bench run executed and its L1
# data-cache misses, reads plus writes, as "IR MISSES" (callgrind with its
# cache simulator: an LRU model of this CPU's L1, so a conflict between
# buffers whose words share a cache set shows, repeatably; one process:
# the xproc pattern is not counted).
instrs() {
	local f=$res/pool-callgrind.tmp
	BATON_BACKEND=memfd valgrind --tool=callgrind --cache-sim=yes \
		--callgrind-out-file="$f" "$BIN" -c "$CPUS" "$@" >/dev/null 2>&1 ||
		{ echo NA; rm -f "$f"; return; }
	awk '/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i }
	     /^(summary|totals):/ { print $col["Ir"], $col["D1mr"] + $col["D1mw"]; exit }' "$f"
	rm -f "$f"
}

# Instructions and L1 data misses per alloc+free, from N and 2N: what a
# loaded machine's timings cannot say (the perf gate's method).
instructions() {
	local peer=$1 pat=$2 size=$3 n=100000 a b
	a=$(instrs -q alloc -p "$peer" -P "$pat" -s "$size" -n $n)
	b=$(instrs -q alloc -p "$peer" -P "$pat" -s "$size" -n $((2 * n)))
	if [[ $a == NA || $b == NA || -z $a || -z $b ]]; then
		echo "host,$peer,$pat,$size,NA,NA"
	else
		awk -v a="$a" -v b="$b" -v n=$n -v p="$peer" -v t="$pat" -v s="$size" \
			'BEGIN { split(a, x, " "); split(b, y, " ")
			         printf "host,%s,%s,%s,%.1f,%.2f\n", p, t, s,
			                (y[1] - x[1]) / n, (y[2] - x[2]) / n }'
	fi
}

host_rss() {
	local run series
	for ((run = 1; run <= RUNS; run++)); do
		one host "$run" -q rss -p pool -d "$DECAY_MS" -B "$BURST_MIB" -l pool-memfd -o "$res/pool-rss-pool-memfd.$run.dat"
		one host "$run" -q rss -p pool -d "$DECAY_MS" -B "$BURST_MIB" -T "$TRICKLE_MS" -l pool-memfd-trickle \
			-o "$res/pool-rss-pool-memfd-trickle.$run.dat"
		one host "$run" -q rss -p pool -d "$DECAY_MS" -B "$BURST_MIB" -W -l pool-memfd-recv \
			-o "$res/pool-rss-pool-memfd-recv.$run.dat"
		one host "$run" -q rss -p static -B "$BURST_MIB" -l static-memfd -o "$res/pool-rss-static-memfd.$run.dat"
		one host "$run" -q rss -p malloc -B "$BURST_MIB" -l glibc -o "$res/pool-rss-glibc.$run.dat"
		[[ -f $JEMALLOC ]] || continue
		for series in jemalloc jemalloc-trickle jemalloc-bg; do
			local conf="dirty_decay_ms:$DECAY_MS,muzzy_decay_ms:0" trickle=()
			[[ $series == jemalloc-bg ]] && conf="$conf,background_thread:true"
			[[ $series == jemalloc-trickle ]] && trickle=(-T "$TRICKLE_MS")
			LD_PRELOAD=$JEMALLOC MALLOC_CONF=$conf \
				one host "$run" -q rss -p malloc -d "$DECAY_MS" -B "$BURST_MIB" "${trickle[@]}" \
				-l "$series" -o "$res/pool-rss-$series.$run.dat"
		done
	done
	[[ -f $JEMALLOC ]] || echo "pool-suite: no $JEMALLOC (libjemalloc2): no jemalloc series"
}

# iceoryx's loans need its daemon: start one for the run unless one runs
# (bench/run-suite.sh starts its own for the rings' figures).
roudi_pid=
start_roudi() {
	pgrep -x iox-roudi >/dev/null && return 0
	command -v iox-roudi >/dev/null || { echo "pool-suite: no iox-roudi: no iceoryx figures"; return 0; }
	iox-roudi >"$res/pool-roudi.log" 2>&1 &
	roudi_pid=$!
	sleep 2
}
stop_roudi() {
	[[ -n $roudi_pid ]] || return 0
	kill "$roudi_pid" 2>/dev/null || true
	wait "$roudi_pid" 2>/dev/null || true
	roudi_pid=
	# RouDi 2.0 may abort on SIGTERM and leave its segments behind.
	rm -f /dev/shm/iceoryx_mgmt "/dev/shm/$(id -un)"
}
trap stop_roudi EXIT

host_suite() {
	local run size peer pat t
	echo "pool-suite: host (memfd backend), CPUs $CPUS, $RUNS runs per figure"
	start_roudi
	# Run by run, every figure once a round: a ratio's two sides are
	# measured minutes apart at most, and a noisy minute moves one run of
	# each figure, not all the runs of one (the suite of 2026-12-07 01:48,
	# run figure by figure, had the 4 KiB pair at 7.7 ns in all 5 runs,
	# 3.9 to 4.0 ns in runs of the same binary just after).
	for ((run = 1; run <= RUNS; run++)); do
		for size in 4096 65536; do
			for peer in pool rte malloc iox; do
				for pat in pair burst burst-spread xproc; do
					one host "$run" -q alloc -p "$peer" -P "$pat" -s "$size" -n "$N"
				done
			done
		done
		for size in 4096 65536 1048576; do
			for t in handle handle-r16 inline pipe; do
				local targs=(-t "$t")
				[[ $t == handle-r16 ]] && targs=(-t handle -R 16)
				one host "$run" -q pipeline "${targs[@]}" -s "$size" -n $((PIPE_MIB * 1048576 / size))
			done
		done
	done
	host_rss
	if command -v valgrind >/dev/null; then
		echo "pool-suite: instructions and L1 data misses per alloc+free (callgrind, N and 2N)"
		echo "backend,peer,pattern,size,instructions_per_op,l1d_misses_per_op" >"$instr"
		for size in 4096 65536; do
			for peer in pool rte malloc iox; do
				for pat in pair burst burst-spread; do
					[[ $peer == iox && $pat != pair ]] && continue
					instructions "$peer" "$pat" "$size" | tee -a "$instr" | sed 's/^/  /'
				done
			done
		done
	fi
	echo "pool-suite: syscalls per alloc+free (strace -f -c, N and 2N)"
	echo "backend,peer,pattern,size,syscalls_per_op" >"$sysc"
	for size in 4096 65536; do
		for peer in pool rte malloc iox; do
			for pat in pair burst xproc; do
				[[ $peer == malloc && $pat == xproc ]] && continue
				[[ $peer == iox && $pat != pair ]] && continue
				syscalls "$peer" "$pat" "$size" | tee -a "$sysc" | sed 's/^/  /'
			done
		done
	done
}

vm_suite() {
	local out=$root/build/logs/vm-exec.out
	echo "pool-suite: VM (kmod backend, TCG), bench/pool-vm.sh via selftests/vm/run-vm.sh exec"
	if ! BATON_EXEC_ARGS="$VM_RUNS $VM_N $VM_BURST_MIB $DECAY_MS $VM_IDLE_MS" \
		"$root/selftests/vm/run-vm.sh" exec "$here/pool-vm.sh" "$here/pool_bench-static" \
		>"$res/pool-vm.log" 2>&1; then
		echo "pool-suite: VM run failed (see $res/pool-vm.log, $out)"
	fi
	[[ -f $out ]] || return 0
	sed -n 's/^pool://p' "$out" | tr -d '\r' >>"$raw"
	sed -n 's/^# \(handle\|inline\|pipe\) /vm: \1 /p' "$out" | tr -d '\r' >>"$diag"
	sed -n 's/^poolrss:\(vm-[a-z-]*\) /\1 /p' "$out" | tr -d '\r' >"$res/pool-rss-vm.tmp"
	for s in pool static pool-trickle; do
		awk -v s="vm-$s" '$1 == s { print $2, $3 }' "$res/pool-rss-vm.tmp" >"$res/pool-rss-vm-$s-kmod.1.dat"
	done
	rm -f "$res/pool-rss-vm.tmp"
	grep -c '^vm,' "$raw" | sed 's/^/  VM rows: /' || true
}

# The raw rows in long form: where,question,subject,variant,size,metric,value.
longform() {
	awk -F, -v OFS=, '
	$3 == "alloc"    { print $1, "alloc", $4, $5, $6, "ns_per_op", $8 }
	$3 == "pipeline" { print $1, "pipeline", $4, "-", $5, "ns_per_frame", $7
	                   print $1, "pipeline", $4, "-", $5, "mb_per_s", $8 }
	$3 == "rss"      { print $1, "rss", $4, $5, $6, "base_kib", $7
	                   print $1, "rss", $4, $5, $6, "peak_kib", $8
	                   print $1, "rss", $4, $5, $6, "held_kib", $9 - $7
	                   print $1, "rss", $4, $5, $6, "settle_base_1_ms", $10
	                   print $1, "rss", $4, $5, $6, "settle_95_1_ms", $11
	                   print $1, "rss", $4, $5, $6, "settle_base_2_ms", $12
	                   print $1, "rss", $4, $5, $6, "settle_95_2_ms", $13
	                   print $1, "rss", $4, $5, $6, "burst1_ms", $17
	                   print $1, "rss", $4, $5, $6, "burst2_ms", $18
	                   # exact RSS (smaps_rollup) 2 x decay_ms after each
	                   # burst, over the exact RSS before the first
	                   if ($20 > 0 && $21 > 0) print $1, "rss", $4, $5, $6, "exact_1_x", $21 / $20
	                   if ($20 > 0 && $22 > 0) print $1, "rss", $4, $5, $6, "exact_2_x", $22 / $20
	                   if ($20 > 0) print $1, "rss", $4, $5, $6, "exact_base_kib", $20 }' "$raw"
}

# Median, min, max over the runs of each figure. A settle time of -1 (not
# within the idle window) is counted in `never`, not in the statistics.
summarize() {
	echo "where,question,subject,variant,size,metric,runs,median,min,max,never" >"$sumcsv"
	longform | sort -t, -k1,6 | awk -F, -v OFS=, '
	function srt(s, a,   n, i, j, t) { n = split(s, a, " "); for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }; return n }
	function flush(   a, n, med) {
		if (key == "") return
		n = srt(vals, a)
		if (n == 0) { print key, runs, "", "", "", never; return }
		med = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		print key, runs, med, a[1], a[n], never
	}
	{
		k = $1 OFS $2 OFS $3 OFS $4 OFS $5 OFS $6
		if (k != key) { flush(); key = k; runs = 0; never = 0; vals = "" }
		runs++
		if ($6 ~ /^settle/ && $7 < 0) never++; else vals = vals " " $7
	}
	END { flush() }' >>"$sumcsv"
}

# RSS samples of run 1 of each series, one file for gnuplot and the csv.
rss_data() {
	local f s
	echo "series,t_ms,rss_kib" >"$rsscsv"
	for f in "$res"/pool-rss-*.1.dat; do
		[[ -f $f ]] || continue
		s=${f##*/pool-rss-}
		s=${s%.1.dat}
		grep -v '^#' "$f" | awk -v s="$s" -v OFS=, '{ print s, $1, $2 }' >>"$rsscsv"
	done
}

# Run 1 of each series, its time shifted so that 0 is the last free of its
# first burst (where each allocator's decay starts), host and VM apart.
plot() {
	command -v gnuplot >/dev/null || { echo "pool-suite: gnuplot missing, no plot"; return 0; }
	local host=() vm=() f s label where t0 out
	for f in "$res"/pool-rss-*.1.dat; do
		[[ -f $f ]] || continue
		s=${f##*/pool-rss-}
		s=${s%.1.dat}
		label=$s where=host
		[[ $s == vm-* ]] && label=${s%-kmod} where=vm
		t0=$(awk -F, -v w="$where" -v l="$label" '$1 == w && $2 == 1 && $3 == "rss" && $4 == l { print $15; exit }' "$raw")
		[[ -n $t0 ]] || continue
		out=$res/pool-rss-$s.plot
		grep -v '^#' "$f" | awk -v t0="$t0" '{ print $1 - t0, $2 }' >"$out"
		if [[ $where == vm ]]; then vm+=("$out"); else host+=("$out"); fi
	done
	((${#host[@]} + ${#vm[@]})) || { echo "pool-suite: no RSS samples, no plot"; return 0; }
	gnuplot -e "out='$res/pool-rss.png'; hostfiles='${host[*]}'; vmfiles='${vm[*]}'; decay=$DECAY_MS" \
		"$here/pool-rss.gp" 2>"$res/pool-gnuplot.log" ||
		echo "pool-suite: gnuplot failed (see $res/pool-gnuplot.log)"
	rm -f "$res"/pool-rss-*.plot
}

if ((do_host || do_vm)); then
	: >"$raw"
	: >"$diag"
	rm -f "$res"/pool-rss-*.dat
fi
((do_host)) && host_suite
((do_vm)) && vm_suite
summarize
rss_data
plot
RUNS=$RUNS N=$N PIPE_MIB=$PIPE_MIB BURST_MIB=$BURST_MIB VM_BURST_MIB=$VM_BURST_MIB DECAY_MS=$DECAY_MS \
	TRICKLE_MS=$TRICKLE_MS VM_IDLE_MS=$VM_IDLE_MS \
	"$here/pool-report.sh" "$sumcsv" "$sysc" "$raw" "$instr" >"$res/pool.md"
echo "pool-suite: wrote $res/pool.md in $((SECONDS - t_start)) s"
