#!/usr/bin/env bash
# End-to-end: bands from 0 Hz. `solvent sweep --start 0` and `solvent solve
# --freq 0` write the DC point from the model's DC limit: a perfect-metal
# through line is an ideal thru there (S21 = 1), and a project whose sweep
# section starts at 0 sweeps from DC; a band of DC alone is refused.
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
exit 0
