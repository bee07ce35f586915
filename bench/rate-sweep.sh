#!/bin/bash
# bench/rate-sweep.sh: owns the rate sweep of `make bench` (issue 13 item 9):
# bench/rate at 10 k, 100 k, 1 M and 10 M messages/s for every consumer
# (baton blocking, baton epoll, baton waitset) and baseline (futex ring,
# eventfd ring, pipe), RUNS runs each, host (memfd backend) and, from the
# VM half of the suite, kmod. Writes into BENCH_RESULTS (bench/results):
#   rate-raw.csv   every run: where,run,<bench/rate -h columns>
#   rate.csv       per (where, peer, rate): runs, median and min..max
#   rate.md        the table (markdown), with runs and spread
#   rate_cpu.png, rate_p99.png   (bench/rate.gp)
#
#   bench/rate-sweep.sh [--quick] [--host | --vm-rows FILE | --report]
#
# --host runs the host half and reports; --vm-rows FILE appends the
# "rate:" lines a VM run printed (bench/vm-suite.sh) and reports; --report
# only rewrites rate.csv, rate.md and the plots. Default: --host.
# Env: RUNS (default 3; --quick 1), RATE_WINDOW_NS (default 1e9; --quick
# 1e8), RATES, RATE_PEERS, CPUS (default 0,1), NEAR_NS. Nothing here
# asserts a timing; a skipped peer (memfd epoll) is listed as such. Each
# host run is bracketed by a cache-line ping-pong (bench/placement.sh) and
# its row says near, far or moved; the VM's rows say "-" (TCG: no
# placement to speak of).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
res=${BENCH_RESULTS:-$here/results}
quick=0 mode=host vmrows=
while (($#)); do
	case $1 in
	--quick) quick=1 ;;
	--host) mode=host ;;
	--vm-rows) mode=vm vmrows=$2; shift ;;
	--report) mode=report ;;
	*) echo "usage: rate-sweep.sh [--quick] [--host | --vm-rows FILE | --report]" >&2; exit 2 ;;
	esac
	shift
done
if ((quick)); then
	RUNS=${RUNS:-1} RATE_WINDOW_NS=${RATE_WINDOW_NS:-100000000}
else
	RUNS=${RUNS:-3} RATE_WINDOW_NS=${RATE_WINDOW_NS:-1000000000}
fi
RATES=${RATES:-10000 100000 1000000 10000000}
RATE_PEERS=${RATE_PEERS:-baton-block baton-epoll baton-waitset futex efd pipe}
CPUS=${CPUS:-0,1}
bin=$here/rate
raw=$res/rate-raw.csv
PEERS_BIN=$here/peers
mkdir -p "$res"
# shellcheck source=bench/placement.sh
. "$here/placement.sh"

header() { echo "where,run,$("$bin" -h),clpp_before_ns,clpp_after_ns,placement"; }

# Runs interleave: run r of every peer at a rate before run r + 1 of any,
# so a stretch of host noise (steal, a neighbour's burst) lands on every
# peer alike instead of on whichever peer was running its runs then.
host_sweep() {
	local rate peer r line rc skipped before after
	[[ -x $bin ]] || { echo "rate-sweep: $bin missing (make bench-build)" >&2; exit 1; }
	header >"$raw"
	echo "rate-sweep: host, memfd backend, CPUs $CPUS, $RUNS runs, window $RATE_WINDOW_NS ns, runs interleaved"
	for rate in $RATES; do
		skipped=" "
		for ((r = 1; r <= RUNS; r++)); do
			for peer in $RATE_PEERS; do
				[[ $skipped == *" $peer "* ]] && continue
				rc=0
				before=$(clpp_ns)
				line=$(BATON_BACKEND=memfd "$bin" -p "$peer" -r "$rate" \
					-T "$RATE_WINDOW_NS" -c "$CPUS" 2>"$res/rate-last.err") || rc=$?
				after=$(clpp_ns)
				if ((rc == 4)); then
					echo "  $peer @ $rate/s: skipped: $(echo "$line" | cut -d, -f3)"
					echo "host,skip,$line" >>"$raw"
					skipped="$skipped$peer "
					continue
				elif ((rc)); then
					echo "  $peer @ $rate/s run $r: FAILED: $(tail -n 1 "$res/rate-last.err")"
					continue
				fi
				echo "host,$r,$line,$before,$after,$(placement "$before" "$after")" >>"$raw"
				echo "  $peer @ $rate/s run $r/$RUNS: $(echo "$line" | awk -F, '{ printf "%.0f/s, %.0f ns CPU/msg, %.3f syscalls/msg, p50 %.0f p99 %.0f ns, from ready p99 %.0f ns", $4, $7, $10, $14, $15, $19 }') (clpp $before/$after ns)"
			done
		done
	done
}

# Rows from the VM's output (lines "rate:vm,RUN,<bench/rate line>").
vm_rows() {
	[[ -f $raw ]] || header >"$raw"
	sed -n 's/^rate://p' "$1" | tr -d '\r' | sed 's/$/,-,-,-/' >>"$raw"
	echo "rate-sweep: VM rows: $(grep -c '^vm,' "$raw" || true)"
}

# Median and min..max per (where, peer, rate) of the figures that matter.
summarize() {
	echo "where,peer,backend,rate_target,runs,rate_med,rate_min,rate_max,cpu_med,cpu_min,cpu_max,sys_med,sys_min,sys_max,p50_med,p50_min,p50_max,p99_med,p99_min,p99_max,p999_med,p999_min,p999_max,rp50_med,rp50_min,rp50_max,rp99_med,rp99_min,rp99_max,placements" >"$res/rate.csv"
	grep -v -e '^where,' -e ',skip,' "$raw" | sort -t, -k1,1 -k3,3 -k5,5n |
	awk -F, -v OFS=, '
	function srt(s, a,   n, i, j, t) { n = split(s, a, " "); for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }; return n }
	function three(s,   a, n, m) { n = srt(s, a); m = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2; return m OFS a[1] OFS a[n] }
	function flush() {
		if (key == "") return
		print key, runs, three(rate), three(cpu), three(sys), three(p50), three(p99), three(p999), three(rp50), three(rp99), (pl == "" ? "-" : substr(pl, 2))
	}
	{
		k = $1 OFS $3 OFS $4 OFS $5
		if (k != key) { flush(); key = k; runs = 0; rate = cpu = sys = p50 = p99 = p999 = rp50 = rp99 = pl = "" }
		# Placements seen, in order of first sight; rows before
		# bench/placement.sh have none.
		if ($25 != "" && $25 != "-" && index(pl " ", " " $25 " ") == 0) pl = pl " " $25
		runs++; rate = rate " " $6; cpu = cpu " " $9; sys = sys " " $12
		p50 = p50 " " $16; p99 = p99 " " $17; p999 = p999 " " $18
		rp50 = rp50 " " $20; rp99 = rp99 " " $21
	}
	END { flush() }' >>"$res/rate.csv"
}

table() {
	{
		echo "# Rate sweep (bench/rate, bench/rate-sweep.sh)"
		echo
		echo "Producer at a fixed rate into one consumer process; median (min..max) over"
		echo "the runs given. CPU: user+system ns of both processes per message. Syscalls:"
		echo "every call each side entered, as the kernel counts them (a perf counter on the"
		echo "raw_syscalls:sys_enter tracepoint, each side's own thread: bench_syscalls_open()),"
		echo "clock reads and the producer's pacing sleeps excluded (a filter on the counter:"
		echo "under TCG every clock read is a syscall); the same count for every peer. Latency:"
		echo "producer timestamp to consumer receipt. From ready: from when the message was"
		echo "in the producer's hands (its due time, or the end of the pacing sleep it fell"
		echo "due in), so the producer's own cost of sending the messages ahead of it in a"
		echo "burst (fences, wake calls) counts; the pacing's timer slack does not"
		echo "(bench/rate.c, produce()). 10 M/s is \"as fast as it can\":"
		echo "the achieved rate is the second column. Measured on $(nproc) CPUs, $(date -u +%F)."
		echo "Placements: which the host runs saw (bench/placement.sh: near = the two"
		echo "CPUs' cache-line round trip under $NEAR_NS ns before and after the run,"
		echo "moved = it changed during the run); the VM has none."
		echo
		echo "| where | peer | target/s | achieved/s | runs | CPU ns/msg | syscalls/msg | p50 µs | p99 µs | p99.9 µs | from ready: p50 µs | p99 µs | placements |"
		echo "|---|---|---:|---:|---:|---|---|---|---|---|---|---|---|"
		tail -n +2 "$res/rate.csv" | sort -t, -k1,1 -k4,4n -k2,2 |
		awk -F, '{ printf "| %s | %s | %d | %.0f | %d | %.0f (%.0f..%.0f) | %.3f (%.3f..%.3f) | %.1f (%.1f..%.1f) | %.1f (%.1f..%.1f) | %.1f | %.1f (%.1f..%.1f) | %.1f (%.1f..%.1f) | %s |\n",
			$1, $2 ($3 != "-" ? " (" $3 ")" : ""), $4, $6, $5, $9, $10, $11, $12, $13, $14,
			$15 / 1e3, $16 / 1e3, $17 / 1e3, $18 / 1e3, $19 / 1e3, $20 / 1e3, $21 / 1e3,
			$24 / 1e3, $25 / 1e3, $26 / 1e3, $27 / 1e3, $28 / 1e3, $29 / 1e3,
			($30 == "" ? "-" : $30) }'
		if grep -q ',skip,' "$raw"; then
			echo
			echo "Skipped:"
			grep ',skip,' "$raw" | awk -F, '{ print "- " $1 " " $4 ": " $5 }' | sort -u
		fi
	} >"$res/rate.md"
	echo "rate-sweep: wrote $res/rate.md"
}

plots() {
	command -v gnuplot >/dev/null || { echo "rate-sweep: gnuplot missing, no plots"; return 0; }
	local p f=
	for p in $(tail -n +2 "$res/rate.csv" | awk -F, '$1 == "host" { print $2 }' | sort -u); do
		awk -F, -v p="$p" '$1 == "host" && $2 == p { print $4, $6, $9, $10, $11, $18, $19, $20 }' \
			"$res/rate.csv" | sort -n >"$res/rate-$p.dat"
	done
	for p in "$res"/rate-*.dat; do
		[[ -f $p ]] && f="$f $p"
	done
	[[ -n $f ]] || { echo "rate-sweep: no host rows, no plots"; return 0; }
	gnuplot -e "resdir='$res'; files='$f'" "$here/rate.gp" 2>"$res/rate-gnuplot.log" ||
		echo "rate-sweep: gnuplot failed (see $res/rate-gnuplot.log)"
	rm -f "$res"/rate-*.dat
}

report() {
	[[ -f $raw ]] || { echo "rate-sweep: no $raw" >&2; exit 1; }
	summarize
	table
	plots
	cat "$res/rate.md"
}

case $mode in
host) host_sweep ;;
vm) vm_rows "$vmrows" ;;
esac
report
