# plot.gp - draws a `sieve bench --csv` file: seen-set bytes per URL and
# nanoseconds per push against n, one line per contestant and rate.
#
#   gnuplot -e "csv='bench.csv'; out='bench.svg'" bench/plot.gp
#   gnuplot -e "csv='bench.csv'; out='bench.png'; rates='0.01 0.0001'" bench/plot.gp
#
# rates lists the --fp-rate values to draw (default 0.01); the exact set
# does not depend on the rate and is drawn once. `sieve bench --plot FILE`
# draws the same figure without this script.

if (!exists("csv")) csv = 'bench.csv'
if (!exists("out")) out = 'bench.svg'
if (!exists("rates")) rates = '0.01'

if (out[strlen(out)-3:] eq '.png') {
    set terminal pngcairo size 1100,460 font 'sans,10'
} else {
    set terminal svg size 1100,460 dynamic background rgb 'white' font 'sans,11'
}
set output out

# Rows of every contestant are interleaved in the file: a row that is not
# the series' own yields NaN, which "missing NaN" skips without breaking
# the line.
set datafile separator ','
set datafile missing NaN
set logscale x
set format x '10^{%T}'
set grid
set xlabel 'URLs pushed (n)'

# CSV columns used: 1 n, 2 fp_rate, 3 contestant, 11 bytes_per_url,
# 15 ns_per_push_median.
series(c, p, col) = (strcol(3) eq c && abs($2 - p) <= 1e-9 * p) ? column(col) : NaN
p0 = real(word(rates, 1))

set multiplot layout 1,2
set title 'seen-set memory'
set key center right
set logscale y
set ylabel 'bytes per URL (seen-set)'
plot for [i=1:words(rates)] csv skip 1 using 1:(series('bloom', real(word(rates, i)), 11)) \
         with linespoints lw 2 title sprintf('bloom p=%s', word(rates, i)), \
     for [i=1:words(rates)] csv skip 1 using 1:(series('classic', real(word(rates, i)), 11)) \
         with linespoints lw 2 title sprintf('classic p=%s', word(rates, i)), \
     csv skip 1 using 1:(series('exact', p0, 11)) with linespoints lw 2 title 'exact'

set title 'push time'
set key top left box opaque
unset logscale y
set yrange [0:*]
set ylabel 'ns per push (median)'
plot for [i=1:words(rates)] csv skip 1 using 1:(series('bloom', real(word(rates, i)), 15)) \
         with linespoints lw 2 title sprintf('bloom p=%s', word(rates, i)), \
     for [i=1:words(rates)] csv skip 1 using 1:(series('classic', real(word(rates, i)), 15)) \
         with linespoints lw 2 title sprintf('classic p=%s', word(rates, i)), \
     csv skip 1 using 1:(series('exact', p0, 15)) with linespoints lw 2 title 'exact'
unset multiplot
