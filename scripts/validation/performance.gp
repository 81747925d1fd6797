# Ratios as bars on a log axis, 1 marked. Variables: data, out, title, width.
set terminal pngcairo size width,520 font ",9"
set output out
set termoption noenhanced
set title title
set logscale y
set grid y
set ylabel "ours / anchor (time)"
set style fill solid 0.6
set boxwidth 0.7
set xtics rotate by -50 left
set bmargin 16
set rmargin 10
set xrange [-0.7:*]
plot data u 0:2:xtic(stringcolumn(1)) w boxes lc rgb "steelblue" notitle, 1 w l lc rgb "black" lw 1.5 notitle
