# bench/plots.gp: owns the suite's plots (run-suite.sh calls it with
# resdir='bench/results'). Data files: "peer median min max" per line;
# bars are medians, error bars the min..max over the runs.
set terminal pngcairo size 800,420 font ",10"
set style fill solid 0.6 border -1
set boxwidth 0.6
set grid ytics
set logscale y
set xtics rotate by -30
unset key

set output resdir.'/rt64.png'
set title 'Round trip, 64 B inline, batch 1 (host, memfd; median, min..max)'
set ylabel 'ns (log)'
plot resdir.'/rt64.dat' using 0:2:xtic(1) with boxes lc rgb '#4477aa', \
     '' using 0:2:3:4 with yerrorbars lc rgb 'black' pt 0

set output resdir.'/stream8.png'
set title 'Streaming 8 B inline (host, memfd; median, min..max)'
set ylabel 'messages/s (log)'
set key top right
set boxwidth 0.35
plot resdir.'/stream8b32.dat' using ($0-0.18):2:xtic(1) with boxes lc rgb '#4477aa' title 'batch 32', \
     '' using ($0-0.18):2:3:4 with yerrorbars lc rgb 'black' pt 0 notitle, \
     resdir.'/stream8b1.dat' using ($0+0.18):2 with boxes lc rgb '#ee6677' title 'batch 1', \
     '' using ($0+0.18):2:3:4 with yerrorbars lc rgb 'black' pt 0 notitle
