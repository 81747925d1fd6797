#!/usr/bin/env bash
# End-to-end: bands from 0 Hz. `solvent sweep --start 0` and `solvent solve
# --freq 0` write the DC point from the model's DC limit: a perfect-metal
# through line is an ideal thru there (S21 = 1), and a project whose sweep
# section starts at 0 sweeps from DC; a band of DC alone is refused. A lossy
# 10 mm line from DC to 1 MHz (the loop-tree path below a few MHz): S21
# continuous with DC, every S reciprocal and passive to 1e-10; frequencies
# between 0 and 1 nHz refused, nothing written.
set -u
tool=$1
src=$2
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"

"$tool" sweep "$src/examples/line_44.json" --start 0 --stop 2GHz --points 5 -o "$tmp/line.s2p" --quiet \
  || fail "sweep from 0 failed"
# first data line: 0 S11re S11im S21re S21im ...
read -r f s11r s11i s21r s21i _ < <(grep -v '^[!#]' "$tmp/line.s2p" | head -1)
[[ "$f" == "0" ]] || fail "first frequency $f, expected 0"
awk -v a="$s21r" -v b="$s11r" 'BEGIN{exit !(a > 0.999999 && b < 1e-6 && b > -1e-6)}' || fail "DC S21 $s21r, S11 $s11r"
[[ $(grep -vc '^[!#]' "$tmp/line.s2p") -eq 5 ]] || fail "expected 5 frequencies"

"$tool" solve "$src/examples/line_44.json" --freq 0,1GHz -o "$tmp/solve.s2p" >/dev/null || fail "solve at 0 failed"
grep -v '^[!#]' "$tmp/solve.s2p" | head -1 | grep -q '^0 ' || fail "solve: no DC line"

# a project whose sweep starts at 0
/usr/bin/python3 - "$src/examples/line_44.json" "$tmp/dc.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["sweep"] = {"start": 0, "stop": 1, "points": 3, "unit": "GHz"}
json.dump(d, open(sys.argv[2], "w"))
PY
"$tool" sweep "$tmp/dc.json" -o "$tmp/dc.s2p" --quiet || fail "project band from 0 failed"
grep -v '^[!#]' "$tmp/dc.s2p" | head -1 | grep -q '^0 ' || fail "project band: no DC line"

"$tool" sweep "$src/examples/line_44.json" --start 0 --points 1 -o "$tmp/bad.s2p" 2>"$tmp/err"; rc=$?
[[ $rc -ne 0 ]] || fail "DC alone accepted"
grep -q "DC alone" "$tmp/err" || fail "DC alone message: $(cat "$tmp/err")"
[[ -f "$tmp/bad.s2p" ]] && fail "output left behind"

# the lossy line: 1.6 mm FR-4 (tan d 0.02), 35 um copper, 1 mm cells, calibrated ports
cat >"$tmp/lossy.json" <<'EOF'
{"units": "mm", "substrate": {"thickness": 1.6, "eps_r": 4.4, "tan_delta": 0.02},
 "metal": {"conductivity": 5.8e7, "thickness": 0.035}, "grid": {"dx": 1, "dy": 1, "nx": 10, "ny": 3},
 "rectangles": [{"x": [0, 10], "y": [0, 3]}],
 "ports": [{"name": "P1", "side": "left", "x": 0, "y": [0, 3]}, {"name": "P2", "side": "right", "x": 10, "y": [0, 3]}]}
EOF
"$tool" solve "$tmp/lossy.json" --freq 0,1e-9,10,50,1000,1MHz -o "$tmp/lossy.s2p" >/dev/null || fail "lossy line from 0 failed"
# S21 (real part: the imaginary is below 1e-8 there) at 0 and at 10 Hz within 1e-6; every S11 below 1e-4
grep -v '^[!#]' "$tmp/lossy.s2p" | awk '{s21[NR] = $4; if ($2 > 1e-4 || $2 < 0) bad = 1}
  END {d = s21[3] - s21[1]; exit !(NR == 6 && !bad && d < 1e-6 && d > -1e-6)}' \
  || fail "lossy line: not continuous with DC: $(cat "$tmp/lossy.s2p")"
"$tool" sweep "$tmp/lossy.json" --start 0 --stop 1MHz --points 21 -o "$tmp/band.s2p" >"$tmp/out" || fail "band from 0 failed"
read -r asym sv < <(sed -n 's/.*max |S - S^T| \([^,]*\), max singular value of S \(.*\)/\1 \2/p' "$tmp/out")
awk -v a="$asym" -v s="$sv" 'BEGIN{exit !(a <= 1e-10 && s <= 1 + 1e-10)}' || fail "band from 0: |S - S^T| $asym, max sv $sv"
expect 1 "frequency 0 = 1e-300 Hz: .*1e-09 Hz.*DC" -- "$tool" solve "$tmp/lossy.json" --freq 1e-300 -o "$tmp/tiny.s2p"
[[ -f "$tmp/tiny.s2p" ]] && fail "output left behind"
expect 1 "frequency 1 = 5e-11 Hz: .*1e-09 Hz" -- "$tool" sweep "$tmp/lossy.json" --start 0 --stop 1e-10 --points 3 -o "$tmp/tiny.s2p"
exit 0
