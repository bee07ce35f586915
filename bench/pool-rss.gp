# bench/pool-rss.gp: owns pool-rss.png, resident memory over time for each
# series of bench/pool_bench -q rss. bench/pool-suite.sh calls it with out,
# hostfiles and vmfiles (space-separated lists of "t_ms rss_kib" files, the
# time shifted to 0 at the last free of the first burst, each named
# pool-rss-SERIES.plot) and decay (the pool's decay_ms).
set terminal pngcairo size 1000,760 font ",10"
set output out
title_of(f) = substr(f, strstrt(f, 'pool-rss-') + 9, strlen(f) - 5)
set grid
set key outside right top
set ylabel 'MiB'
set xlabel 'ms since the last free of the first burst'
set arrow 1 from 2*decay, graph 0 to 2*decay, graph 1 nohead dt 2 lc rgb 'gray40'
set label 1 '2 x decay\_ms' at 2*decay, graph 0.95 offset 0.5,0 tc rgb 'gray40'
set multiplot layout 2,1
set title sprintf('Host (memfd backend and malloc): RssAnon + RssShmem; burst, hold, free, idle, twice; decay\_ms %d', decay)
plot for [i=1:words(hostfiles)] word(hostfiles, i) using 1:($2/1024.0) with lines lw 1.5 title title_of(word(hostfiles, i))
# A host-only suite (pool-suite.sh --host-only) has no VM series.
if (words(vmfiles) > 0) {
	set title 'VM, QEMU TCG (kmod backend: the decay runs on a kernel timer)'
	plot for [i=1:words(vmfiles)] word(vmfiles, i) using 1:($2/1024.0) with lines lw 1.5 title title_of(word(vmfiles, i))
}
unset multiplot
