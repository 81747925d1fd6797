# Attenuation against frequency: model (points) and closed form (line).
# Variables: data, out, title.
set terminal pngcairo size 640,420 font ",10"
set output out
set title title
set grid
set xlabel "frequency (GHz)"
set ylabel "attenuation (Np/m)"
set key top left
plot data u 1:2 w p pt 7 ps 1.3 lc rgb "red" t "Solvent", data u 1:3 w l lw 2 lc rgb "black" t "closed form"
