#!/usr/bin/env bash
# End-to-end checks of what a hostile or careless command line does to the
# tool (issue 16): outputs through symlinks and special files, an output
# that is an input, the Touchstone name rule, frequency and memory limits,
# geometry far off the grid, escaped messages, `ode` exit codes and
# `codegen --name`. Each check names the defect it keeps out.
# usage: test_hardening.sh SOLVENT_TOOL SOURCE_DIR
set -uo pipefail
tool=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$2
# tmp, fail, expect
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"
no_temporaries() { ! ls -a "$1" | grep -q '\.tmp' || fail "a temporary file was left in $1: $(ls -a "$1")"; }

# a small two-port line: 10 x 4 cells of 1 mm, two cells wide
project() {  # project FILE [RECT_X PORT1_X SWEEP]
  local rx=${2:-0, 10} px=${3:-0} sweep=${4:-'"sweep": {"start": 1, "stop": 5, "points": 5, "unit": "GHz"}'}
  cat >"$1" <<EOF
{"units": "mm", "substrate": {"thickness": 1.6, "eps_r": 4.4}, "metal": {"conductivity": "inf"},
 "grid": {"dx": 1, "dy": 1, "nx": 10, "ny": 4},
 "rectangles": [{"x": [$rx], "y": [1, 3]}],
 "ports": [{"name": "P1", "side": "left", "x": $px, "y": [1, 3]}, {"name": "P2", "side": "right", "x": 10, "y": [1, 3]}],
 $sweep}
EOF
}
p=$tmp/p.json
project "$p"
pattern=$src/examples/patterns/hires.mtx

# --- item 1: outputs through symlinks are written at the link's target ---
mkdir "$tmp/links"
for out in sweep:s2p solve:s2p codegen:c ode:csv plot:svg; do
  cmd=${out%%:*} ext=${out##*:}
  [[ $cmd == plot ]] && ! command -v gnuplot >/dev/null && continue
  echo old >"$tmp/links/real_$cmd.$ext"
  ln -s "real_$cmd.$ext" "$tmp/links/link_$cmd.$ext"
  l=$tmp/links/link_$cmd.$ext
  case $cmd in
    sweep) expect 0 "" -- "$tool" sweep "$p" -o "$l" --quiet ;;
    plot) expect 0 "" -- "$tool" sweep "$p" -o "$tmp/links/plot.s2p" --plot "$l" --quiet ;;
    solve) expect 0 "" -- "$tool" solve "$p" --freq 1GHz -o "$l" ;;
    codegen) expect 0 "" -- "$tool" codegen "$pattern" -o "$l" --name hires_k ;;
    ode) expect 0 "" -- "$tool" ode rober --quiet --out "$l" ;;
  esac
  [[ -L "$l" ]] || fail "$cmd: the symlink $l was replaced"
  [[ "$(head -c 3 "$tmp/links/real_$cmd.$ext")" != "old" ]] || fail "$cmd: the link's target was not written"
done
no_temporaries "$tmp/links"

# --- item 1: special files are written through, never replaced ---
mkfifo "$tmp/out.fifo"
timeout 30 cat "$tmp/out.fifo" >"$tmp/fifo.txt" &  # (bounded: a tool that replaces the FIFO never opens it)
reader=$!
expect 0 "" -- "$tool" solve "$p" --freq 1GHz -o "$tmp/out.fifo"
wait $reader
[[ -p "$tmp/out.fifo" ]] || fail "the FIFO was replaced"
grep -q '^# GHz S RI R 50' "$tmp/fifo.txt" || fail "the FIFO's reader got no Touchstone file"
if [[ $(id -u) -eq 0 ]]; then
  mkdir "$tmp/dev"
  mknod "$tmp/dev/null" c 1 3 || fail "mknod failed"
  ln -s null "$tmp/dev/null.s2p"
  expect 0 "" -- "$tool" sweep "$p" -o "$tmp/dev/null" --quiet
  expect 0 "" -- "$tool" solve "$p" --freq 1GHz -o "$tmp/dev/null.s2p"
  expect 0 "" -- "$tool" codegen "$pattern" -o "$tmp/dev/null" --name k
  expect 0 "" -- "$tool" ode rober --quiet --out "$tmp/dev/null"
  [[ -c "$tmp/dev/null" ]] || fail "the device node was replaced by a regular file"
  [[ -L "$tmp/dev/null.s2p" ]] || fail "the symlink to the device node was replaced"
  [[ $(ls "$tmp/dev" | wc -l) -eq 2 ]] || fail "files appeared beside the device node: $(ls "$tmp/dev")"
else
  echo "not root: the device-node checks are skipped (mknod needs root)"
fi

# --- item 2: an output that is an input is refused, the input intact ---
cp "$p" "$tmp/proj.s2p"
cp "$tmp/proj.s2p" "$tmp/keep.json"
ln "$tmp/proj.s2p" "$tmp/hard.s2p"
ln -s proj.s2p "$tmp/sym.s2p"
for o in "$tmp/proj.s2p" "$tmp/hard.s2p" "$tmp/sym.s2p"; do
  expect 2 "is the input file" -- "$tool" sweep "$tmp/proj.s2p" -o "$o" --quiet
  expect 2 "is the input file" -- "$tool" solve "$tmp/proj.s2p" --freq 1GHz -o "$o"
done
(cd "$tmp" && "$tool" sweep proj.s2p --quiet >/dev/null 2>"$tmp/err"); rc=$?
[[ $rc -eq 2 ]] && grep -q "default output proj.s2p is the input file" "$tmp/err" || fail "default output over the input: rc $rc"
cmp -s "$tmp/proj.s2p" "$tmp/keep.json" || fail "the project file was overwritten"
# the project's CSV pixel map is an input too
mkdir "$tmp/csv"
printf '0,0,0,0,0,0,0,0,0,0\n1,1,1,1,1,1,1,1,1,1\n1,1,1,1,1,1,1,1,1,1\n0,0,0,0,0,0,0,0,0,0\n' >"$tmp/csv/map.s2p"
cp "$tmp/csv/map.s2p" "$tmp/csv/keep.csv"
sed 's|"rectangles": \[{"x": \[0, 10\], "y": \[1, 3\]}\]|"pixels": {"csv": "map.s2p"}|' "$p" >"$tmp/csv/p.json"
expect 0 "" -- "$tool" solve "$tmp/csv/p.json" --freq 1GHz -o "$tmp/csv/ok.s2p"
expect 2 "is the input file .*map.s2p" -- "$tool" solve "$tmp/csv/p.json" --freq 1GHz -o "$tmp/csv/map.s2p"
expect 2 "is the input file .*map.s2p" -- "$tool" sweep "$tmp/csv/p.json" -o "$tmp/csv/map.s2p" --quiet
cmp -s "$tmp/csv/map.s2p" "$tmp/csv/keep.csv" || fail "the pixel map was overwritten"
cp "$pattern" "$tmp/pat.mtx"
expect 2 "is the input file" -- "$tool" codegen "$tmp/pat.mtx" -o "$tmp/pat.mtx"
cmp -s "$tmp/pat.mtx" "$pattern" || fail "the pattern file was overwritten"
if command -v gnuplot >/dev/null; then
  ln -s proj.s2p "$tmp/plot.svg"
  expect 2 "--plot .* is the input file" -- "$tool" sweep "$tmp/proj.s2p" -o "$tmp/x.s2p" --plot "$tmp/plot.svg" --quiet
fi
# a plot's temporary folder left by a killed run (its process gone) goes with
# the next plot; another live process's folder stays
if command -v gnuplot >/dev/null; then
  mkdir -p "$tmp/plotroot"
  sh -c 'exit 0' & dead=$!
  wait "$dead"
  mkdir "$tmp/plotroot/solvent-plot-$dead-Ab12Cd" "$tmp/plotroot/solvent-plot-$$-Ef34Gh"
  touch "$tmp/plotroot/solvent-plot-$dead-Ab12Cd/data.dat" "$tmp/plotroot/solvent-plot-$dead-Ab12Cd/image"
  expect 0 "" -- env TMPDIR="$tmp/plotroot" "$tool" sweep "$p" -o "$tmp/pl.s2p" --plot "$tmp/pl.svg" --quiet
  [[ ! -e "$tmp/plotroot/solvent-plot-$dead-Ab12Cd" ]] || fail "a killed plot's temporary folder was left"
  [[ -d "$tmp/plotroot/solvent-plot-$$-Ef34Gh" ]] || fail "a live process's plot folder was removed"
  [[ $(ls "$tmp/plotroot" | wc -l) -eq 1 ]] || fail "the plot left its own temporary folder"
  rmdir "$tmp/plotroot/solvent-plot-$$-Ef34Gh"
fi
# a control character in the project's name stays out of the Touchstone
# comment (a carriage return would end that line for some readers)
cr=$'\r' esc=$'\e'
cp "$p" "$tmp/a${cr}b${esc}c.json"
expect 0 "" -- "$tool" solve "$tmp/a${cr}b${esc}c.json" --freq 1GHz -o "$tmp/cr.s2p"
! grep -q "[$cr$esc]" "$tmp/cr.s2p" || fail "a control character reached the Touchstone file"
grep -q '^! .*a?b?c.json' "$tmp/cr.s2p" || fail "the comment does not name the project"
# one rule for the Touchstone name: .sNp for N ports, in sweep as in solve
expect 2 "2-port result needs a name ending in .s2p" -- "$tool" sweep "$p" -o "$tmp/x.s3p" --quiet
expect 2 "2-port result needs a name ending in .s2p" -- "$tool" solve "$p" --freq 1GHz -o "$tmp/x.s3p"
expect 2 "needs a name ending in .s2p" -- "$tool" sweep "$p" -o "$tmp/x.txt" --quiet
expect 0 "" -- "$tool" sweep "$p" -o "$tmp/X.S2P" --quiet
[[ ! -e "$tmp/x.s3p" && ! -e "$tmp/x.txt" ]] || fail "a refused output was written"

# --- item 10: frequency limits after the unit, start = stop, memory limits ---
expect 2 "1e15 Hz" -- "$tool" sweep "$p" --start 1e14GHz --stop 2e14GHz --quiet
expect 2 "1e15 Hz" -- "$tool" sweep "$p" --start 1e300 --quiet
expect 2 "1e15 Hz" -- "$tool" solve "$p" --freq 1e14GHz -o "$tmp/f.s2p"
expect 2 "--points 1" -- "$tool" sweep "$p" --start 1GHz --stop 1GHz --points 5 -o "$tmp/f.s2p" --quiet
project "$tmp/hi.json" "0, 10" 0 '"sweep": {"start": 1e14, "stop": 2e14, "points": 3, "unit": "GHz"}'
expect 1 "sweep.start = 100000000000000: expected a number >= 0 and <= 1e\+06" -- "$tool" sweep "$tmp/hi.json" -o "$tmp/f.s2p" --quiet
project "$tmp/eq.json" "0, 10" 0 '"sweep": {"start": 2, "stop": 2, "points": 4, "unit": "GHz"}'
expect 1 "sweep.points = 4: expected 1 when start = stop" -- "$tool" sweep "$tmp/eq.json" -o "$tmp/f.s2p" --quiet
# the band from the project and the command line together (the library's check)
project "$tmp/band.json" "0, 10" 0 '"sweep": {"start": 1, "stop": 2, "points": 4, "unit": "GHz"}'
expect 1 "points = 4 with start = stop = 1e\+09 Hz" -- "$tool" sweep "$tmp/band.json" --stop 1GHz -o "$tmp/f.s2p" --quiet
expect 0 "" -- "$tool" sweep "$tmp/band.json" --stop 1GHz --points 1 -o "$tmp/one.s2p" --quiet
expect 2 "bytes >= 1" -- "$tool" sweep "$p" --memory-limit 0.5 --quiet
expect 2 "bytes >= 1" -- "$tool" sweep "$p" --memory-limit 0 --quiet
[[ ! -e "$tmp/f.s2p" ]] || fail "a refused sweep wrote its output"

# --- item 14: solve estimates its memory and refuses before allocating, like sweep ---
expect 1 "pixel2port.json: the solves need about .* for 2042 unknowns, more than the 20.0 MiB limit" -- \
  "$tool" solve "$src/examples/pixel2port.json" --freq 1GHz -o "$tmp/m.s2p" --memory-limit 20M
expect 2 "--memory-limit '0.5'" -- "$tool" solve "$p" --freq 1GHz -o "$tmp/m.s2p" --memory-limit 0.5
[[ ! -e "$tmp/m.s2p" ]] || fail "a refused solve wrote its output"
# a calibrated port 40 cells wide: its thru standards (three widths long)
# need far more than the 830-unknown circuit, refused before the circuit's
# solves and sweep rather than after them
cat >"$tmp/wide.json" <<EOF
{"units": "mm", "substrate": {"thickness": 1.6, "eps_r": 4.4}, "metal": {"conductivity": 5.8e7, "thickness": 0.035},
 "grid": {"dx": 1, "dy": 1, "nx": 10, "ny": 40}, "rectangles": [{"x": [0, 10], "y": [0, 40]}],
 "ports": [{"name": "a", "side": "left", "x": 0, "y": [0, 40]}, {"name": "b", "side": "right", "x": 10, "y": [0, 40]}]}
EOF
expect 1 "wide.json: the solves need about .*; after them the ports' calibration standards .* for 830 unknowns, more than the 500.0 MiB limit" -- \
  "$tool" solve "$tmp/wide.json" --freq 1GHz -o "$tmp/m.s2p" --memory-limit 500M
expect 1 "wide.json: this sweep needs about .*; after it the ports' calibration standards .* for 830 unknowns, more than the 500.0 MiB limit" -- \
  "$tool" sweep "$tmp/wide.json" --start 1GHz --stop 2GHz --points 3 -o "$tmp/m.s2p" --memory-limit 500M --quiet
[[ ! -e "$tmp/m.s2p" ]] || fail "a refused calibration wrote its output"

# --- item 4: geometry far off the grid (2^32 mm would wrap to 0) ---
project "$tmp/far.json" "4294967296, 4294967306" 0
expect 1 "rectangles\[0\]\.x .*outside the grid" -- "$tool" solve "$tmp/far.json" --freq 1GHz -o "$tmp/far.s2p"
project "$tmp/farport.json" "0, 10" 4294967296
expect 1 "ports\[0\]\.x .*outside the grid" -- "$tool" solve "$tmp/farport.json" --freq 1GHz -o "$tmp/far.s2p"
project "$tmp/farneg.json" "-1e300, 10" 0
expect 1 "outside the grid" -- "$tool" solve "$tmp/farneg.json" --freq 1GHz -o "$tmp/far.s2p"
[[ ! -e "$tmp/far.s2p" ]] || fail "geometry off the grid was solved"

# --- item 11: values the model cannot compute are refused by field, messages escaped ---
sed 's/"conductivity": "inf"/"conductivity": 5e-324, "thickness": 0.035/' "$p" >"$tmp/sigma.json"
expect 1 "sigma.json: metal.conductivity = .*expected a number >= 0.001" -- \
  "$tool" solve "$tmp/sigma.json" --freq 1GHz -o "$tmp/n.s2p"
sed 's/"thickness": 1.6/"thickness": 1e308/' "$p" >"$tmp/thick.json"
expect 1 "substrate.thickness = 1e\+308: expected a length" -- "$tool" solve "$tmp/thick.json" --freq 1GHz -o "$tmp/n.s2p"
sed 's/"dx": 1,/"dx": 1e-7,/' "$p" >"$tmp/cell.json"
expect 1 "grid.dx = 1e-07: expected a length from 1e-06" -- "$tool" solve "$tmp/cell.json" --freq 1GHz -o "$tmp/n.s2p"
# a model electrically tiny is solved (the loop-tree path); below 1 nHz the
# frequency is refused: the message names the file, the frequency and the
# cause; on lossless metal its ports are joined by a near short there, and S
# could not be formed to 1e-9: refused, saying what to do
sed 's/"units": "mm"/"units": "m"/; s/"thickness": 1.6/"thickness": 1/' "$p" >"$tmp/lossless_tiny.json"
expect 1 "lossless_tiny.json: at 0.001 Hz: .*near short.*conductivity" -- \
  "$tool" solve "$tmp/lossless_tiny.json" --freq 1e-3Hz -o "$tmp/tiny.s2p"
[[ ! -e "$tmp/tiny.s2p" ]] || fail "a refused near short was written"
sed 's/"conductivity": "inf"/"conductivity": 5.8e7, "thickness": 35e-6/' "$tmp/lossless_tiny.json" >"$tmp/tiny.json"
expect 0 "" -- "$tool" solve "$tmp/tiny.json" --freq 1e-3Hz -o "$tmp/tiny.s2p"
expect 1 "tiny.json: frequency 0 = 1e-12 Hz: .*DC limit" -- "$tool" solve "$tmp/tiny.json" --freq 1e-12Hz -o "$tmp/tiny.s2p"
[[ -s "$tmp/tiny.s2p" ]] || fail "the tiny model solved at 1e-3 Hz wrote nothing"
printf '{"units": "mm", "\033[2J\033]0;pwned\007": 1, "x\nforged line": 2}' >"$tmp/esc.json"
expect 1 "esc.json: \\\\x1b\[2J\\\\x1b\]0;pwned\\\\x07: unknown field" -- "$tool" solve "$tmp/esc.json" --freq 1GHz -o "$tmp/n.s2p"
grep -q $'\033' "$tmp/err" && fail "an ESC byte reached the terminal"
[[ $(wc -l <"$tmp/err") -eq 1 ]] || fail "a key with a newline forged a message line"
printf '{"units": "\xff\xfe\xc0\xaf"}' >"$tmp/utf.json"
expect 1 'units = "\\xff\\xfe\\xc0\\xaf"' -- "$tool" solve "$tmp/utf.json" --freq 1GHz -o "$tmp/n.s2p"
expect 2 "unknown option '--\\\\x1b\[31m'" -- "$tool" sweep "$p" $'--\033[31m'
[[ ! -e "$tmp/n.s2p" ]] || fail "a refused project was solved"

# --- item 12: `solvent ode` exit codes: 2 for any argument the library refuses ---
expect 2 "rtol = 1e-30" -- "$tool" ode rober --rtol 1e-30 --quiet
expect 2 "--lanes '3': expected 1, 2, 4, 8 or 16" -- "$tool" ode rober --lanes 3 --quiet
expect 2 "rtol = 0 and atol = 0" -- "$tool" ode rober --rtol 0 --atol 0 --quiet
expect 2 "--rtol '-1': expected a number >= 0" -- "$tool" ode rober --rtol -1 --quiet
expect 2 "--atol '-1e-9': expected a number >= 0" -- "$tool" ode rober --atol -1e-9 --quiet
expect 2 "--arg '-3': expected a number > 0" -- "$tool" ode bruss2d --arg -3 --quiet
expect 2 "--first-step '-1'" -- "$tool" ode rober --first-step -1 --quiet

# --- item 13: `codegen --name` is a C identifier that is not a keyword ---
expect 2 "name = 'int': a C keyword" -- "$tool" codegen "$pattern" -o "$tmp/k.c" --name int
expect 2 "name = '_Bool'" -- "$tool" codegen "$pattern" -o "$tmp/k.c" --name _Bool
expect 2 "name = '2x'" -- "$tool" codegen "$pattern" -o "$tmp/k.c" --name 2x
expect 2 "name = 'd1_factor'" -- "$tool" codegen "$pattern" -o "$tmp/k.c" --name d1_factor
[[ ! -e "$tmp/k.c" ]] || fail "codegen wrote a file for a bad --name"
# a default name from an output called like a keyword is made valid
expect 0 "table 'k_int'" -- "$tool" codegen "$pattern" -o "$tmp/int.c"
${CC:-cc} -std=c17 -Wall -Wextra -Werror -fsyntax-only "$tmp/int.c" || fail "int.c does not compile"

# --- item 8: pattern files with entries beyond the count ---
printf '%%%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 1\n2 2\n1 2\n' >"$tmp/extra.mtx"
expect 1 "line 5: more entries than the 2 announced" -- "$tool" codegen "$tmp/extra.mtx" -o "$tmp/e.c"
[[ ! -e "$tmp/e.c" ]] || fail "codegen wrote kernels for a misread pattern"
# a huge announced size: budgeted like the other commands, and over the
# code limits refused before the analysis (which took 8 s and 4 GB)
printf '%%%%MatrixMarket matrix coordinate pattern general\n100000000 100000000 1\n1 1\n' >"$tmp/huge.mtx"
expect 1 "huge.mtx': sparse pattern workspace needs .* memory limit" -- \
  "$tool" codegen "$tmp/huge.mtx" -o "$tmp/h.c" --memory-limit 100M
printf '%%%%MatrixMarket matrix coordinate pattern general\n1000000 1000000 1\n1 1\n' >"$tmp/big.mtx"
expect 1 "1000000 entries, so at least as many substitution terms: more than --max-subst 50000" -- \
  "$tool" codegen "$tmp/big.mtx" -o "$tmp/h.c"
[[ ! -e "$tmp/h.c" ]] || fail "codegen wrote kernels past its limits"

# --- issue 40: inputs at their edges ---
# numbers as people write them: hexadecimal, inf and nan refused naming the
# text (0x10 was read as 16 Hz); a subnormal frequency is read as written
expect 2 "--freq: '0x10': expected a decimal frequency" -- "$tool" solve "$p" --freq 0x10 -o "$tmp/e.s2p"
expect 2 "--freq: 'inf'" -- "$tool" solve "$p" --freq inf -o "$tmp/e.s2p"
expect 2 "--freq: 'nan'" -- "$tool" solve "$p" --freq 1e9,nan -o "$tmp/e.s2p"
expect 2 "--freq: '1e-400'" -- "$tool" solve "$p" --freq 1e-400 -o "$tmp/e.s2p"
expect 2 "--start '0x1p3'" -- "$tool" sweep "$p" --start 0x1p3 --quiet
expect 2 "--memory-limit '0x10'" -- "$tool" sweep "$p" --memory-limit 0x10 --quiet
expect 2 "--rtol 'nan': expected a decimal number" -- "$tool" ode rober --rtol nan --quiet
"$tool" solve "$p" --freq 1e-320 -o "$tmp/e.s2p" >/dev/null 2>"$tmp/err"
[[ $? -ne 2 ]] && ! grep -q "expected a decimal frequency" "$tmp/err" || fail "--freq 1e-320 (subnormal) refused as out of range"
# one value per option: a repeated one is refused, not the last taken
expect 2 "--subdivide is given twice" -- "$tool" sweep "$p" --subdivide 2 --subdivide 3 --quiet
expect 2 "-o is given twice" -- "$tool" sweep "$p" -o "$tmp/a.s2p" --output "$tmp/b.s2p" --quiet
expect 2 "--freq is given twice" -- "$tool" solve "$p" --freq 1e9 --freq 2e9 -o "$tmp/e.s2p"
expect 2 "--rtol is given twice" -- "$tool" ode rober --rtol 1e-6 --rtol 1e-7 --quiet
expect 2 "--name is given twice" -- "$tool" codegen "$pattern" -o "$tmp/e.c" --name a --name b
# the combined split is stated
sed 's/"ny": 4}/"ny": 4, "subdivide": 4}/' "$p" >"$tmp/sub4.json"
expect 1 "split of 5 x 5 on the project's grid.subdivide of 4 is 20 x 20 in all" -- \
  "$tool" sweep "$tmp/sub4.json" --subdivide 5 -o "$tmp/e.s2p" --quiet
# the sweep's tolerance is bounded where the library bounds it
expect 2 "--tol '0.6': expected a number > 0 and <= 0.5" -- "$tool" sweep "$p" --tol 0.6 --quiet
expect 0 "" -- "$tool" sweep "$p" --tol 0.5 -o "$tmp/tol.s2p" --quiet
# ode: tolerances bounded (rober at 1e300 ended at y = (-1.9e57, -1e30, -3.1e34), exit 0),
# an empty --sens and an unused --arg refused, --help and --lanes agree
expect 2 "rtol = 1e\+300: expected a value >= 0 and <= 0.1" -- "$tool" ode rober --rtol 1e300 --atol 1e300 --quiet
expect 2 "atol = 1e\+300: expected at most 1 " -- "$tool" ode rober --atol 1e300 --quiet
expect 2 "--sens '': expected a comma-separated list" -- "$tool" ode rober --sens "" --quiet
expect 2 "rober: arg = 5: this problem takes no argument" -- "$tool" ode rober --arg 5 --quiet
"$tool" ode --help | grep -q "rtol at most" || fail "ode --help does not state the tolerances' bounds"
lanes=$("$tool" ode --help | grep -A1 -- "--lanes" | grep -oE "[0-9]+(, [0-9]+)* or [0-9]+")
[[ $lanes == "1, 2, 4, 8 or 16" ]] || fail "ode --help lists lanes '$lanes'"
for w in 1 2 4 8 16; do expect 0 "" -- "$tool" ode rober --lanes $w --quiet; done
expect 2 "--lanes '0': expected 1, 2, 4, 8 or 16" -- "$tool" ode rober --lanes 0 --quiet
# codegen: a size that overflows is "too large", a full disk names the file and the error
printf '%%%%MatrixMarket matrix coordinate pattern general\n99999999999999999999 99999999999999999999 1\n1 1\n' >"$tmp/over.mtx"
expect 1 "over.mtx', line 2: size too large: expected n <= 100000000" -- "$tool" codegen "$tmp/over.mtx" -o "$tmp/e.c"
[[ -w /dev/full ]] && expect 1 "-o /dev/full: .*No space left on device" -- "$tool" codegen "$pattern" -o /dev/full --name k
# reference planes that cross (|S21| = 1.00126 on a lossy line) are refused naming both ports
sed 's/"x": 0, "y": \[1, 3\]}/"x": 0, "y": [1, 3], "reference_plane": 6}/; s/"x": 10, "y": \[1, 3\]}/"x": 10, "y": [1, 3], "reference_plane": 6}/' \
  "$p" >"$tmp/cross.json"
expect 1 "cross.json: ports\[0\] and ports\[1\] reference_plane: the reference planes of ports 'P1' \(x = 6\) and 'P2' \(x = 4\) cross" -- \
  "$tool" solve "$tmp/cross.json" --freq 1GHz -o "$tmp/e.s2p"
# inputs that are not regular files: refused at once (a FIFO with no writer hung in open())
mkfifo "$tmp/fifo.json" "$tmp/csv/fifo.csv"
mkdir "$tmp/dir.json" "$tmp/csv/dir.csv"
expect 1 "fifo.json: is a FIFO \(named pipe\), not a regular file" -- timeout 20 "$tool" solve "$tmp/fifo.json" --freq 1GHz -o "$tmp/e.s2p"
expect 1 "dir.json: is a directory" -- timeout 20 "$tool" sweep "$tmp/dir.json" -o "$tmp/e.s2p" --quiet
expect 1 "fifo.json'?: is a FIFO" -- timeout 20 "$tool" codegen "$tmp/fifo.json" -o "$tmp/e.c"
for m in fifo dir; do
  sed "s|map.s2p|$m.csv|" "$tmp/csv/p.json" >"$tmp/csv/$m.json"
  expect 1 "pixels.csv = .*$m.csv.*: is a (FIFO|directory)" -- timeout 20 "$tool" solve "$tmp/csv/$m.json" --freq 1GHz -o "$tmp/e.s2p"
done
# a CSV map with a byte-order mark (Excel's) is read; a NUL is shown escaped
{ printf '\xef\xbb\xbf'; cat "$tmp/csv/keep.csv"; } >"$tmp/csv/bom.csv"
sed 's|map.s2p|bom.csv|' "$tmp/csv/p.json" >"$tmp/csv/bom.json"
expect 0 "" -- "$tool" solve "$tmp/csv/bom.json" --freq 1GHz -o "$tmp/csv/bom.s2p"
cmp -s <(grep -v '^!' "$tmp/csv/bom.s2p") <(grep -v '^!' "$tmp/csv/ok.s2p") || fail "the map with a byte-order mark gave other S"
printf '0,0\0,0,0,0,0,0,0,0\n' | cat - <(tail -n 3 "$tmp/csv/keep.csv") >"$tmp/csv/nul.csv"
sed 's|map.s2p|nul.csv|' "$tmp/csv/p.json" >"$tmp/csv/nul.json"
expect 1 "nul.csv: row 1, column 2: '\\\\x00': expected ',' between values" -- "$tool" solve "$tmp/csv/nul.json" --freq 1GHz -o "$tmp/e.s2p"
# a NUL in the project's JSON is refused with its place
{ head -c 20 "$p"; printf '\0'; tail -c +21 "$p"; } >"$tmp/nul.json"
expect 1 "nul.json: line 1 \(byte 20\): a NUL byte \('\\\\x00'\)" -- "$tool" solve "$tmp/nul.json" --freq 1GHz -o "$tmp/e.s2p"
# effect switches with nothing to act on are read with a warning; metal far thicker than its board is refused
sed 's/"ny": 4}/"ny": 4}, "effects": {"dispersion_far_field": true, "dielectric_loss": true}/' "$p" >"$tmp/idle.json"
expect 0 "idle.json: effects.dispersion_far_field = true does nothing without effects.dispersion = true" -- \
  "$tool" solve "$tmp/idle.json" --freq 1GHz -o "$tmp/idle.s2p"
grep -q "solvent solve: warning: .*idle.json: effects.dielectric_loss = true does nothing with substrate.tan_delta 0" "$tmp/err" ||
  fail "no warning for dielectric_loss without a loss tangent"
expect 0 "sweep: warning: .*dispersion_far_field" -- "$tool" sweep "$tmp/idle.json" -o "$tmp/idle.s2p" --quiet
sed 's/"conductivity": "inf"/"conductivity": 5.8e7, "thickness": 1000/' "$p" >"$tmp/thick1000.json"
expect 1 "metal.thickness = 1000: thicker than 2 times substrate.thickness \(1.6\)" -- \
  "$tool" solve "$tmp/thick1000.json" --freq 1GHz -o "$tmp/e.s2p"
# frequencies far past the radiation's range: the frequency and the range, not a LAPACK code
# (refused at the model's limit unless allowed; allowed, where the expansion overflows)
expect 1 "frequency 100000 GHz is above [0-9.]+ GHz, the limit of the model's radiation terms" -- \
  "$tool" solve "$p" --freq 1e14 -o "$tmp/e.s2p"
expect 1 "radiation at 1e\+14 Hz: .*the model holds up to [0-9.e+]+ Hz" -- \
  "$tool" solve "$p" --freq 1e14 --allow-beyond-validity -o "$tmp/e.s2p"
[[ ! -e "$tmp/e.s2p" && ! -e "$tmp/e.c" ]] || fail "a refused input was solved"

no_temporaries "$tmp"
echo "test_hardening: ok"
