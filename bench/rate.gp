# bench/rate.gp: owns the rate sweep's plots (bench/rate-sweep.sh calls it
# with resdir and files, one data file per peer: "target achieved cpu_med
# cpu_min cpu_max p99_med p99_min p99_max"). Points are medians, error bars
# the min..max over the runs; the x axis is the target rate.
set terminal pngcairo size 800,420 font ",10"
set grid
set logscale xy
set xlabel 'target messages/s (log)'
set key top left
title_of(f) = substrof(f)
substrof(f) = system(sprintf("basename %s .dat | sed 's/^rate-//'", f))

set output resdir.'/rate_cpu.png'
set title 'CPU per message, both processes (host, memfd; median, min..max)'
set ylabel 'ns CPU / message (log)'
plot for [f in files] f using 1:3:4:5 with yerrorlines title title_of(f)

set output resdir.'/rate_p99.png'
set title 'Latency p99, producer timestamp to receipt (host, memfd)'
set ylabel 'ns (log)'
plot for [f in files] f using 1:6:7:8 with yerrorlines title title_of(f)
