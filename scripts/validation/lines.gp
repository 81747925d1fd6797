# Model against closed form: two quantities (left) and their differences in
# percent (right). Variables: data, out, title, xl, logx, y1l, y2l.
set terminal pngcairo size 1000,420 font ",10"
set output out
set termoption noenhanced
set multiplot layout 1,2 title title
set grid
set xlabel xl
if (logx) set logscale x 2
set key top right
set ylabel y1l
set y2label y2l
set ytics nomirror
set y2tics
plot data u 1:2 w p pt 7 lc rgb "red" t "Z0 model", data u 1:3 w l lc rgb "red" t "Z0 closed form", \
     data u 1:4 w p pt 5 lc rgb "blue" axes x1y2 t "eps_eff model", data u 1:5 w l lc rgb "blue" axes x1y2 t "eps_eff closed form"
unset y2tics
unset y2label
set ytics mirror
set ylabel "model / closed form - 1 (%)"
set key top left
plot data u 1:6 w lp pt 7 lc rgb "red" t "Z0", data u 1:7 w lp pt 5 lc rgb "blue" t "eps_eff", 0 w l lc rgb "black" notitle
unset multiplot
