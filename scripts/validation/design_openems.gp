# |S21| and |S11| in dB of a designed map: openEMS and Solvent's runs against
# the goal's masks (columns of design_openems.py's data file; the masks as
# segments, blank-line separated: x, y). Variables: data, s21masks, s11masks,
# out, title (columns 10-11: openEMS on the finer mesh, NaN when it has not run).
set terminal pngcairo size 1100,440 font ",10"
set output out
set multiplot layout 1,2 title title
set grid
set xlabel "frequency (GHz)"
set xrange [0:10]
set key bottom left
set ylabel "|S21| (dB)"
set yrange [-30:2]
plot data u 1:8 w l lw 2.5 lc rgb "black" t "openEMS", \
     data u 1:2 w l lw 1.5 lc rgb "red" t "Solvent, design model", \
     data u 1:4 w l lw 1.5 dt 2 lc rgb "blue" t "Solvent, full default model", \
     data u 1:6 w l lw 1.5 dt 3 lc rgb "dark-green" t "Solvent, openEMS's stack-up", \
     s21masks u 1:2 w l lw 4 lc rgb "orange" t "goal masks", \
     data u 1:10 w l lw 1.5 dt 4 lc rgb "gray40" t "openEMS, 2x finer mesh"
set ylabel "|S11| (dB)"
set yrange [-45:2]
set key bottom right
plot data u 1:9 w l lw 2.5 lc rgb "black" t "openEMS", \
     data u 1:3 w l lw 1.5 lc rgb "red" t "Solvent, design model", \
     data u 1:5 w l lw 1.5 dt 2 lc rgb "blue" t "Solvent, full default model", \
     data u 1:7 w l lw 1.5 dt 3 lc rgb "dark-green" t "Solvent, openEMS's stack-up", \
     s11masks u 1:2 w l lw 4 lc rgb "orange" t "goal masks", \
     data u 1:11 w l lw 1.5 dt 4 lc rgb "gray40" t "openEMS, 2x finer mesh"
unset multiplot
