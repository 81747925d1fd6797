#!/usr/bin/env bash
# End-to-end: `solvent design` on the example spec (examples/design: a
# low-pass mask on the Momentum dataset's board): every output written in
# its form (the map's CSV the board's 35 × 11 with the launches kept and
# the region mirror-symmetric as the spec asks, the project file read back
# by `solvent sweep`, a cost history that falls, a 2-port Touchstone over
# the board's band, the plot), and bad specs refused naming the field.
# usage: test_design.sh SOLVENT_TOOL SOURCE_DIR
set -uo pipefail
tool=$1
src=$(cd "$2" && pwd)
# tmp, fail, expect
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"

# --- arguments and bad specs ---
expect 2 "usage" -- "$tool" design
expect 2 "unknown option" -- "$tool" design "$src/examples/design/lowpass.json" --bogus
sed 's/"symmetry": "none"/"symmetry": "z"/' "$src/examples/design/lowpass.json" >"$tmp/bad.json"
sed -i "s|\"board.json\"|\"$src/examples/design/board.json\"|" "$tmp/bad.json"
expect 1 "symmetry" -- "$tool" design "$tmp/bad.json" -o "$tmp/bad"
[[ ! -e "$tmp/bad/map.csv" ]] || fail "a refused spec wrote a map"

# --- the example ---
expect 0 "cost:" -- "$tool" design "$src/examples/design/lowpass.json" -o "$tmp/design"
cp "$tmp/out" "$tmp/summary"
for f in map.csv design.json design.gds history.csv design.s2p design.svg; do
  [[ -s "$tmp/design/$f" ]] || fail "no $f"
done
# the layout is the designed board's metal: the project read back from its
# GDSII (the reader is checked against gdstk) writes the same bytes again
/usr/bin/python3 - "$tmp/design/design.json" "$tmp/fromgds.json" "$tmp/design/design.gds" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("pixels", "rectangles"):
    d.pop(k, None)
d["gds"] = {"file": sys.argv[3], "layer": 1}
json.dump(d, open(sys.argv[2], "w"))
PY
expect 0 "" -- "$tool" gds "$tmp/fromgds.json" -o "$tmp/again.gds"
cmp -s "$tmp/again.gds" "$tmp/design/design.gds" || fail "design.gds does not hold the designed map's metal"
# the map: 11 rows of 35 values; launches (rows 2-8, columns 0-12 and 22-34) metal; rows r and 10 - r equal (symmetry y)
awk -F, 'NF != 35 { exit 1 } END { if (NR != 11) exit 1 }' "$tmp/design/map.csv" || fail "map.csv is not 11 x 35"
awk -F, 'NR >= 3 && NR <= 9 { for (c = 1; c <= 13; c++) if ($c != 1 || $(c + 22) != 1) exit 1 }' "$tmp/design/map.csv" ||
  fail "the launches changed"
awk '{ row[NR] = $0 } END { for (r = 1; r <= 11; r++) if (row[r] != row[12 - r]) exit 1 }' "$tmp/design/map.csv" ||
  fail "the map is not mirror-symmetric top to bottom"
# the history: a header, then costs that never rise, the last one the summary's
awk -F, 'NR == 1 { next } NR > 2 && $2 > prev + 1e-9 { exit 1 } { prev = $2 }' "$tmp/design/history.csv" ||
  fail "the cost history rises"
last=$(tail -1 "$tmp/design/history.csv" | cut -d, -f2)
end=$(grep -oE '[0-9.]+ dB at the end' "$tmp/summary" | cut -d' ' -f1)
awk -v a="$last" -v b="$end" 'BEGIN { exit !(a - b < 1e-3 && b - a < 1e-3) }' || fail "history ends at $last, the summary says $end"
# the Touchstone: 200 frequencies of the board's band (0.05-10 GHz)
n=$(grep -cvE '^[[:space:]]*[!#]' "$tmp/design/design.s2p")
[[ $n -eq 200 ]] || fail "design.s2p has $n frequency lines, expected 200"
# the project file is a project `solvent sweep` runs, with the map's metal
expect 0 "" -- "$tool" sweep "$tmp/design/design.json" -o "$tmp/again.s2p" --points 5 --quiet
echo "ok (final cost $last dB)"
