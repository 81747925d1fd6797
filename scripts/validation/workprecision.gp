# Work-precision diagram: error (x, log, reversed so accuracy grows to the
# right) against time per solve (y, log). Variables: out, title, d1..d5
# (Rodas5P, Tsit5, CVODE, scipy Radau, scipy BDF: columns error, seconds).
set terminal pngcairo size 760,520 font ",10"
set output out
set title title
set grid
set logscale xy
set format x "10^{%L}"
set format y "10^{%L}"
set xrange [*:*] reverse
set xlabel "largest relative error at t1"
set ylabel "time per solve (s)"
set key outside right top
plot d1 u 1:2 w lp pt 7 lw 2 lc rgb "red" t "Solvent Rodas5P", \
     d2 u 1:2 w lp pt 9 lw 2 lc rgb "orange" t "Solvent Tsit5", \
     d3 u 1:2 w lp pt 5 lw 2 lc rgb "blue" t "CVODE BDF", \
     d4 u 1:2 w lp pt 11 lw 1.5 lc rgb "dark-green" t "scipy Radau", \
     d5 u 1:2 w lp pt 13 lw 1.5 lc rgb "purple" t "scipy BDF"
