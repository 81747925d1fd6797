# |S21| and |S11| in dB: a reference and two Solvent runs (columns of
# planar_openems.py's data file). Variables: data, out, title, ref, l1, l2.
set terminal pngcairo size 1000,420 font ",10"
set output out
set multiplot layout 1,2 title title
set grid
set xlabel "frequency (GHz)"
set key bottom left
set ylabel "|S21| (dB)"
plot data u 1:2 w l lw 2 lc rgb "black" t ref, \
     data u 1:4 w l lw 1.5 lc rgb "red" t l1, \
     data u 1:6 w l lw 1.5 dt 2 lc rgb "blue" t l2
set ylabel "|S11| (dB)"
plot data u 1:3 w l lw 2 lc rgb "black" t ref, \
     data u 1:5 w l lw 1.5 lc rgb "red" t l1, \
     data u 1:7 w l lw 1.5 dt 2 lc rgb "blue" t l2
unset multiplot
