# bench/pool-rss.gp: owns pool-rss.png, resident memory over time for each
# series of bench/pool_bench -q rss (bench/pool-suite.sh calls it with
# out, files and titles: space-separated lists, one "t_ms rss_kib" file
# per series; decay: the pool's decay_ms).
set terminal pngcairo size 960,480 font ",10"
set output out
set title sprintf('Resident memory (RssAnon + RssShmem): burst, hold, free, idle, twice; pool decay\_ms %d', decay)
set xlabel 'ms since start'
set ylabel 'MiB'
set grid
set key outside right top
plot for [i=1:words(files)] word(files, i) using 1:($2/1024.0) with lines lw 1.5 title word(titles, i)
