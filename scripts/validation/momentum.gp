# |S21| and |S11| in dB against frequency: Momentum, Solvent with raw ports
# and with dispersion (columns of planar_momentum.py's data file).
# Variables: data, out, title.
set terminal pngcairo size 1000,420 font ",10"
set output out
set multiplot layout 1,2 title title
set grid
set xlabel "frequency (GHz)"
set ylabel "|S21| (dB)"
set key bottom left
plot data u 1:2 w l lw 2 lc rgb "black" t "Momentum", \
     data u 1:3 w l lw 1.5 lc rgb "red" t "Solvent, raw ports", \
     data u 1:4 w l lw 1.5 dt 2 lc rgb "blue" t "Solvent + dispersion"
set ylabel "|S11| (dB)"
plot data u 1:5 w l lw 2 lc rgb "black" t "Momentum", \
     data u 1:6 w l lw 1.5 lc rgb "red" t "Solvent, raw ports", \
     data u 1:7 w l lw 1.5 dt 2 lc rgb "blue" t "Solvent + dispersion"
unset multiplot
