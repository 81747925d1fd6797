# Each round's scaling from one Dask worker to two, against the ceiling two
# plain processes reached in the same round (columns of distributed.py's
# data file: round, then scaling and ceiling of the ODE scan and of the
# batch of maps). Variables: data, out, title.
set terminal pngcairo size 1000,420 font ",10"
set output out
set multiplot layout 1,2 title title
set grid
set xlabel "round"
set ylabel "two workers' throughput / one's"
set yrange [1:2.4]
set key bottom right
set title "Robertson scan, 400 000 trajectories"
plot data u 1:2 w lp pt 7 lc rgb "red" t "Dask, 2 workers vs 1", \
     data u 1:3 w lp pt 5 lc rgb "black" t "2 plain processes vs 1 (ceiling)", \
     2 w l dt 2 lc rgb "gray40" t "2", 1.8 w l dt 3 lc rgb "orange" t "1.8"
set title "batch, 128 maps on the dataset's board"
plot data u 1:4 w lp pt 7 lc rgb "red" t "Dask, 2 workers vs 1", \
     data u 1:5 w lp pt 5 lc rgb "black" t "2 plain processes vs 1 (ceiling)", \
     2 w l dt 2 lc rgb "gray40" t "2", 1.8 w l dt 3 lc rgb "orange" t "1.8"
unset multiplot
