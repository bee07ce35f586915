# shellcheck shell=bash
# bench/placement.sh: sourced by the bench scripts that time two processes
# on two CPUs (run-suite.sh, rate-sweep.sh, pool-suite.sh). Owns what
# "near" and "far" mean: the two vCPUs here move between a placement that
# shares a cache (a cache-line round trip of ~100 ns) and one that does
# not (~500 ns), so a cross-process figure is bracketed by a bare
# cache-line ping-pong (bench/peers -p clpp) before and after, and each
# run says which placement it saw.
#
# Needs: PEERS_BIN (bench/peers), CPUS ("A,B"), NEAR_NS (round trip below
# which a placement counts as near; default 250).

NEAR_NS=${NEAR_NS:-250}

# clpp_ns: the cache-line round trip p50 right now, on the same CPUs; "-"
# when bench/peers is missing or fails (the run's placement is then "-").
clpp_ns() {
	local v
	v=$("$PEERS_BIN" -p clpp -m rt -n 20000 -c "$CPUS" 2>/dev/null | cut -d, -f9) || v=
	echo "${v:--}"
}

# placement BEFORE AFTER: near, far, or moved (the two disagree).
placement() {
	[[ $1 == - || $2 == - ]] && { echo -; return; }
	awk -v a="$1" -v b="$2" -v near="$NEAR_NS" 'BEGIN {
		pa = (a < near) ? "near" : "far"; pb = (b < near) ? "near" : "far";
		print (pa == pb) ? pa : "moved" }'
}
