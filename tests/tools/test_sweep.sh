#!/usr/bin/env bash
# End-to-end: `solvent sweep` on a small project: Touchstone written and read
# back (frequencies, reciprocity, agreement of the adaptive sweep with exact
# solves at every frequency), SVG and PNG plots produced, and bad arguments,
# bad projects and impossible memory limits refused with clear messages,
# non-zero exits and no output files.
# usage: test_sweep.sh SOLVENT_TOOL SOURCE_DIR
set -uo pipefail
tool=$1
# tmp, fail, expect
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"

# A through line (3 cells wide) with an open stub: 40 × 12 cells of 0.5 mm.
line=$(printf '#%.0s' $(seq 40))
empty=$(printf '.%.0s' $(seq 40))
stub="..................###..................."
{
  echo '{ "title": "test line with stub", "units": "mm",'
  echo '  "substrate": {"thickness": 0.8, "eps_r": 4.4},'
  echo '  "metal": {"conductivity": 5.8e7, "thickness": 0.035},'
  echo '  "grid": {"dx": 0.5, "dy": 0.5, "nx": 40, "ny": 12},'
  echo '  "pixels": ['
  for r in 1 2 3 4 5 6 7 8 9; do echo "    \"$stub\","; done
  echo "    \"$line\", \"$line\", \"$line\"],"
  echo '  "ports": [ {"name": "P1", "side": "left", "x": 0, "y": [0, 1.5]},'
  echo '             {"name": "P2", "side": "right", "x": 20, "y": [0, 1.5]} ],'
  echo '  "sweep": {"start": 1, "stop": 12, "points": 45, "unit": "GHz"} }'
} >"$tmp/p.json"

# --- help and argument errors (exit 2) ---
expect 0 "exit codes" -- "$tool" sweep --help
expect 2 "no project" -- "$tool" sweep
expect 2 "unknown option" -- "$tool" sweep "$tmp/p.json" --bogus
expect 2 "points" -- "$tool" sweep "$tmp/p.json" --points 0
expect 2 "points" -- "$tool" sweep "$tmp/p.json" --points abc
expect 2 "needs a value" -- "$tool" sweep "$tmp/p.json" --tol
expect 2 "svg or .png" -- "$tool" sweep "$tmp/p.json" --plot "$tmp/x.pdf"
expect 2 "frequency" -- "$tool" sweep "$tmp/p.json" --start 3furlongs
expect 2 "below" -- "$tool" sweep "$tmp/p.json" --start 5GHz --stop 1GHz
expect 2 "single, double" -- "$tool" sweep "$tmp/p.json" --precision quad
expect 2 "bytes" -- "$tool" sweep "$tmp/p.json" --memory-limit lots
expect 2 "gpu, cpu or auto" -- "$tool" sweep "$tmp/p.json" --device tpu
expect 2 "needs a value" -- "$tool" sweep "$tmp/p.json" --device
expect 2 "runs on the CPU only" -- "$tool" sweep "$tmp/p.json" --device gpu --precision double

# --- run failures (exit 1), no outputs left behind ---
expect 1 "none.json" -- "$tool" sweep "$tmp/none.json" -o "$tmp/none.s2p"
echo '{ "units": "mm", ' >"$tmp/broken.json"
expect 1 "broken.json" -- "$tool" sweep "$tmp/broken.json" -o "$tmp/broken.s2p"
sed 's/"eps_r": 4.4/"eps_r": -4/' "$tmp/p.json" >"$tmp/neg.json"
expect 1 "eps_r" -- "$tool" sweep "$tmp/neg.json" -o "$tmp/neg.s2p"
expect 1 "limit" -- "$tool" sweep "$tmp/p.json" -o "$tmp/big.s2p" --plot "$tmp/big.svg" --memory-limit 64K
[[ ! -e "$tmp/none.s2p" && ! -e "$tmp/broken.s2p" && ! -e "$tmp/neg.s2p" && ! -e "$tmp/big.s2p" && ! -e "$tmp/big.svg" ]] \
  || fail "a failed run left an output file"
ls "$tmp" | grep -q tmp && fail "a temporary file was left behind"

# --- the sweep itself ---
expect 0 "exact solves" -- "$tool" sweep "$tmp/p.json" -o "$tmp/afs.s2p" --plot "$tmp/afs.svg" --threads 2
grep -q "<svg" "$tmp/afs.svg" || fail "the SVG plot has no <svg> element"
grep -q "exact solve" "$tmp/afs.svg" || fail "the SVG plot has no exact-solve markers in its legend"
expect 0 "" -- "$tool" sweep "$tmp/p.json" -o "$tmp/afs2.s2p" --plot "$tmp/afs.png" --quiet
[[ "$(head -c 8 "$tmp/afs.png" | od -An -tx1 | tr -d ' \n')" == "89504e470d0a1a0a" ]] || fail "the PNG plot is not a PNG"
[[ ! -s "$tmp/out" ]] || fail "--quiet printed something"
expect 0 "" -- "$tool" sweep "$tmp/p.json" -o "$tmp/exact.s2p" --exact --quiet

# Read the Touchstone files back (v1, RI, two ports: f S11 S21 S12 S22).
data() { grep -v '^[!#]' "$1" | grep -v '^[[:space:]]*$'; }
grep -q '^# GHz S RI R 50' "$tmp/afs.s2p" || fail "no '# GHz S RI R 50' option line"
[[ $(data "$tmp/afs.s2p" | wc -l) -eq 45 ]] || fail "expected 45 frequency lines"
data "$tmp/afs.s2p" | awk 'NR==1 && ($1 < 0.999999 || $1 > 1.000001) {exit 1}
                          END {if ($1 < 11.99999 || $1 > 12.00001) exit 1}' || fail "band is not 1 to 12 GHz"
# reciprocity S21 = S12 and passivity |S11|, |S21| <= 1
data "$tmp/afs.s2p" | awk '{ d = ($4-$6)^2 + ($5-$7)^2; if (d > 1e-20) exit 1;
                             if ($2^2+$3^2 > 1+1e-9 || $4^2+$5^2 > 1+1e-9) exit 1 }' || fail "S not reciprocal or not passive"
# the adaptive sweep against exact solves at every frequency
paste <(data "$tmp/afs.s2p") <(data "$tmp/exact.s2p") | awk '
  { if ($1 != $10) { print "frequency mismatch"; exit 1 }
    for (k = 2; k <= 8; k += 2) { d = sqrt(($k-$(k+9))^2 + ($(k+1)-$(k+10))^2); if (d > m) m = d } }
  END { printf "max |S_afs - S_exact| = %.3g\n", m; if (m > 1e-9) exit 1 }' || fail "adaptive sweep differs from exact solves"

# --subdivide K: the same mesh as the file's grid.subdivide, the same S;
# past 16 in all, refused
expect 2 "1 to 16" -- "$tool" sweep "$tmp/p.json" --subdivide 17
sed 's/"ny": 12}/"ny": 12, "subdivide": 2}/' "$tmp/p.json" >"$tmp/p2.json"
expect 0 "split 2 x 2" -- "$tool" sweep "$tmp/p.json" -o "$tmp/s2a.s2p" --subdivide 2 --points 5 --stop 3GHz
expect 0 "split 2 x 2" -- "$tool" sweep "$tmp/p2.json" -o "$tmp/s2b.s2p" --points 5 --stop 3GHz
cmp -s <(data "$tmp/s2a.s2p") <(data "$tmp/s2b.s2p") || fail "--subdivide 2 differs from grid.subdivide 2"
expect 0 "" -- "$tool" sweep "$tmp/p.json" -o "$tmp/s1.s2p" --points 5 --stop 3GHz --quiet
cmp -s <(data "$tmp/s2a.s2p") <(data "$tmp/s1.s2p") && fail "--subdivide 2 changed nothing"
expect 1 "split of 9 x 9 on the project.s grid.subdivide of 2 is 18 x 18 in all: expected at most 16 x 16" -- "$tool" sweep "$tmp/p2.json" -o "$tmp/s9.s2p" --subdivide 9
[[ ! -e "$tmp/s9.s2p" ]] || fail "a refused split left an output file"

# effects.dispersion: said on the summary's model line, and it moves S
sed 's/"title": "test line with stub",/"title": "test line with stub", "effects": {"dispersion": true},/' "$tmp/p.json" >"$tmp/pd.json"
expect 0 "\(radiation and dispersion on, its far field in [1-8] terms\)" -- "$tool" sweep "$tmp/pd.json" -o "$tmp/sd.s2p" --points 5 --stop 3GHz
sed 's/"dispersion": true/"dispersion": true, "dispersion_far_field": false/' "$tmp/pd.json" >"$tmp/pf.json"
expect 0 "\(radiation and dispersion on\)" -- "$tool" sweep "$tmp/pf.json" -o "$tmp/sf.s2p" --points 5 --stop 3GHz
cmp -s <(data "$tmp/sf.s2p") <(data "$tmp/sd.s2p") && fail "the far field changed nothing"
cmp -s <(data "$tmp/sd.s2p") <(data "$tmp/s1.s2p") && fail "dispersion changed nothing"
grep -q "expansion may leave" "$tmp/out" && fail "a dispersion note below its limit"
expect 0 "above 12.7.* GHz dispersion's expansion may leave eps_eff more than 2 % off" -- "$tool" sweep "$tmp/pd.json" -o "$tmp/sd2.s2p" --points 3 --stop 14GHz

# command-line band overrides the project's
expect 0 "" -- "$tool" sweep "$tmp/p.json" -o "$tmp/one.s2p" --start 2GHz --stop 2GHz --points 1 --quiet
[[ $(data "$tmp/one.s2p" | wc -l) -eq 1 ]] || fail "--points 1 did not give one frequency"
# --device: cpu as before, the summary says so; auto picks the GPU only
# when one passes the self-test, else says why; gpu agrees with auto: it
# runs where auto found a device and fails cleanly (exit 1, no output)
# where auto did not.
expect 0 "" -- "$tool" sweep "$tmp/p.json" -o "$tmp/cpu.s2p" --exact --device cpu
grep -qE '^  device +cpu$' "$tmp/out" || fail "--device cpu: no 'device  cpu' summary line"
# (the default run above used --device auto: the GPU where there is one)
paste <(data "$tmp/cpu.s2p") <(data "$tmp/exact.s2p") | awk '
  { for (k = 2; k <= 8; k++) { d = $k - $(k+9); if (d < 0) d = -d; if (d > m) m = d } }
  END { if (m > 1e-9) exit 1 }' || fail "--device cpu differs from the default run"
expect 0 "" -- "$tool" sweep "$tmp/p.json" -o "$tmp/auto.s2p" --exact --device auto
devline=$(grep -E '^  device ' "$tmp/out") || fail "--device auto: no device summary line"
if [[ "$devline" =~ device\ +cpu\ \((.*)\)$ ]]; then
  reason=${BASH_REMATCH[1]}
  [[ -n "$reason" ]] || fail "--device auto on the CPU without a reason"
  cmp -s <(data "$tmp/auto.s2p") <(data "$tmp/exact.s2p") || fail "--device auto on the CPU differs from the CPU run"
  expect 1 "device gpu: no usable CUDA device" -- "$tool" sweep "$tmp/p.json" -o "$tmp/gpu.s2p" --device gpu
  [[ ! -e "$tmp/gpu.s2p" ]] || fail "--device gpu without a device left an output file"
  echo "no GPU here: $reason"
elif [[ "$devline" =~ device\ +gpu ]]; then
  expect 0 "device +gpu" -- "$tool" sweep "$tmp/p.json" -o "$tmp/gpu.s2p" --exact --device gpu
  paste <(data "$tmp/gpu.s2p") <(data "$tmp/exact.s2p") | awk '
    { for (k = 2; k <= 8; k++) { d = $k - $(k+9); if (d < 0) d = -d; if (d > m) m = d } }
    END { printf "max |S_gpu - S_cpu| = %.3g\n", m; if (m > 1e-9) exit 1 }' || fail "--device gpu differs from the CPU"
else
  fail "unexpected device line: $devline"
fi
echo "ok"
