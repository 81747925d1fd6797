#!/usr/bin/env bash
# End-to-end: `solvent batch` over the eight Momentum maps of the dataset
# (tests/em/data/momentum/pixelmaps) on the dataset's board
# (examples/batch/board.json; raw ports and 11 frequencies here, so that it
# stays fast): each map's Touchstone file the same as `solvent sweep` of
# the board with that map on one thread (the batch runs each map on one),
# a map with no metal at a port and an unreadable CSV reported in the index
# with the reason while the others are solved (exit 3), a second run
# solving nothing, a resumed run solving only the maps the index lacks (a
# last row cut short dropped), the .npy array read back against the
# Touchstone files, and Ctrl-C keeping every finished map and resuming.
# usage: test_batch.sh SOLVENT_TOOL SOURCE_DIR
set -uo pipefail
tool=$1
src=$(cd "$2" && pwd)
# tmp, fail, expect
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"
maps=$src/tests/em/data/momentum/pixelmaps

# the board: raw ports, 11 frequencies
/usr/bin/python3 - "$src/examples/batch/board.json" "$tmp/board.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["ports"]:
    p["calibration"] = "none"
d["sweep"]["points"] = 11
json.dump(d, open(sys.argv[2], "w"))
PY
mkdir "$tmp/maps"
cp "$maps"/*.csv "$tmp/maps/"
# sim213 with its west launch cut at column 0: no metal at port P1
awk -F, 'BEGIN{OFS=","} {$1 = 0; print}' "$maps/sim213.csv" >"$tmp/maps/cut.csv"
head -5 "$maps/sim213.csv" >"$tmp/maps/short.csv"

# --- arguments ---
expect 2 "no maps" -- "$tool" batch "$tmp/board.json" -o "$tmp/x"
expect 2 "no output directory" -- "$tool" batch "$tmp/board.json" "$tmp/maps"
expect 2 "unknown option" -- "$tool" batch "$tmp/board.json" "$tmp/maps" -o "$tmp/x" --bogus
expect 2 "touchstone or npy" -- "$tool" batch "$tmp/board.json" "$tmp/maps" -o "$tmp/x" --format mat
expect 2 "two maps named 'sim213'" -- "$tool" batch "$tmp/board.json" "$tmp/maps" "$maps/sim213.csv" -o "$tmp/x"
expect 1 "nothere.json: cannot open" -- "$tool" batch "$src/examples/batch/nothere.json" "$tmp/maps" -o "$tmp/x"

# --- a batch with two maps that cannot run ---
expect 3 "10 maps: 8 solved, 2 failed" -- "$tool" batch "$tmp/board.json" "$tmp/maps" -o "$tmp/ts" --threads 2
[[ $(wc -l <"$tmp/ts/index.csv") -eq 11 ]] || fail "index.csv: not a row per map"
grep -q "^[0-9]*,cut,failed,\"port 'P1': cell (0, 2) must be metal" "$tmp/ts/index.csv" || fail "no port message for cut"
grep -q "^[0-9]*,short,failed,.*short.csv: 5 rows: expected grid.ny = 11 rows" "$tmp/ts/index.csv" ||
  fail "no parse message for short"
[[ $(grep -c ",ok," "$tmp/ts/index.csv") -eq 8 ]] || fail "not 8 maps ok"
grep -qi "map cut: port 'P1'" "$tmp/err" || fail "the failed map is not reported on stderr"
# each map's Touchstone is a separate sweep's, to the last digit
for m in sim106 sim572 sim878; do
  sed "s|\"pixels\": \[[^]]*\]|\"pixels\": {\"csv\": \"$maps/$m.csv\"}|" "$tmp/board.json" >"$tmp/$m.json"
  expect 0 "" -- "$tool" sweep "$tmp/$m.json" -o "$tmp/$m.s2p" --threads 1 --quiet
  cmp -s <(grep -v '^!' "$tmp/$m.s2p") <(grep -v '^!' "$tmp/ts/$m.s2p") || fail "$m: batch and sweep differ"
done

# --- run again: nothing to do; resumed: only what the index lacks ---
touch -d '2001-01-01' "$tmp/ts"/*.s2p
expect 3 "0 solved, 0 failed, 10 done before \(2 of them failed\)" -- "$tool" batch "$tmp/board.json" "$tmp/maps" -o "$tmp/ts"
[[ -z $(find "$tmp/ts" -name '*.s2p' -newermt '2002-01-01') ]] || fail "a second run rewrote a map"
grep -v -e ',sim106,' -e ',sim572,' -e ',sim878,' "$tmp/ts/index.csv" >"$tmp/index" # three rows lost
printf '7,sim7' >>"$tmp/index"                                                           # a row cut short
cp "$tmp/index" "$tmp/ts/index.csv"
expect 3 "3 solved, 0 failed, 7 done before \(2 of them failed\)" -- \
  "$tool" batch "$tmp/board.json" "$tmp/maps" -o "$tmp/ts"
[[ $(find "$tmp/ts" -name '*.s2p' -newermt '2002-01-01' | wc -l) -eq 3 ]] || fail "not the three missing maps"
[[ $(wc -l <"$tmp/ts/index.csv") -eq 11 ]] || fail "resumed index: $(cat "$tmp/ts/index.csv")"
grep -q "sim7$" "$tmp/ts/index.csv" && fail "the cut row was kept"

# --- a list file: paths relative to its folder, blank and # lines skipped ---
printf '# two maps\n\nmaps/sim106.csv\n  %s\n' "$maps/sim878.csv" >"$tmp/list.txt"
expect 0 "2 maps: 2 solved, 0 failed" -- "$tool" batch "$tmp/board.json" --list "$tmp/list.txt" -o "$tmp/li"
cmp -s <(grep -v '^!' "$tmp/li/sim106.s2p") <(grep -v '^!' "$tmp/ts/sim106.s2p") || fail "--list: sim106 differs"
[[ -s "$tmp/li/sim878.s2p" ]] || fail "--list: no sim878.s2p"
expect 2 "cannot read" -- "$tool" batch "$tmp/board.json" --list "$tmp/nolist.txt" -o "$tmp/li"

# --- one array for all ---
expect 3 "8 solved" -- "$tool" batch "$tmp/board.json" "$tmp/maps" -o "$tmp/np" --format npy
/usr/bin/python3 - "$tmp/np" "$tmp/ts" <<'PY'
import ast, cmath, math, struct, sys
def load(path):
    b = open(path, "rb").read()
    assert b[:8] == b"\x93NUMPY\x01\x00", "magic"
    n = struct.unpack("<H", b[8:10])[0]
    assert (10 + n) % 64 == 0 and b[10 + n - 1:10 + n] == b"\n", "header padding"
    h = ast.literal_eval(b[10:10 + n].decode("ascii"))
    return h, b[10 + n:]
h, data = load(sys.argv[1] + "/s.npy")
assert h["descr"] == "<c16" and h["fortran_order"] is False and h["shape"] == (10, 11, 2, 2), h
hf, fdata = load(sys.argv[1] + "/freq_hz.npy")
assert hf["descr"] == "<f8" and hf["shape"] == (11,), hf
freq = struct.unpack("<11d", fdata)
rows = {}
for line in open(sys.argv[1] + "/index.csv").read().splitlines()[1:]:
    k, name, status = line.split(",")[:3]
    rows[name] = (int(k), status)
for name, (k, status) in rows.items():
    block = struct.unpack("<88d", data[k * 704:(k + 1) * 704])
    s = [complex(block[2 * q], block[2 * q + 1]) for q in range(44)]
    if status != "ok":
        assert all(math.isnan(v.real) for v in s), name
        continue
    ts = [l.split() for l in open(sys.argv[2] + "/" + name + ".s2p") if l.strip() and l[0] not in "!#"]
    for f in range(11):
        t = [float(x) for x in ts[f]]
        assert abs(t[0] * 1e9 - freq[f]) < 1e-3 * freq[f], (name, f)
        # Touchstone 1.1 two-port order: S11 S21 S12 S22; the array S[f, i, j] C-ordered
        ref = [complex(t[1 + 2 * e], t[2 + 2 * e]) for e in range(4)]
        got = [s[4 * f + 0], s[4 * f + 2], s[4 * f + 1], s[4 * f + 3]]
        assert max(abs(a - b) for a, b in zip(got, ref)) < 1e-9, (name, f, got, ref)
print("s.npy: 10 x 11 x 2 x 2, the eight solved maps as their Touchstone files, the failed ones NaN")
PY
[[ $? -eq 0 ]] || fail "s.npy"
if python3 -c "import numpy" 2>/dev/null; then
  python3 -c "
import numpy as np, sys
s = np.load('$tmp/np/s.npy'); f = np.load('$tmp/np/freq_hz.npy')
assert s.shape == (10, 11, 2, 2) and s.dtype == np.complex128 and f.shape == (11,), (s.shape, s.dtype)
assert np.isfinite(s).all(axis=(1, 2, 3)).sum() == 8
" || fail "numpy cannot read s.npy"
fi

# --- Ctrl-C: every map in the index complete, the rest on the next run ---
mkdir "$tmp/many"
for k in $(seq 1 5); do for m in "$maps"/*.csv; do cp "$m" "$tmp/many/$k-$(basename "$m")"; done; done
"$tool" batch "$tmp/board.json" "$tmp/many" -o "$tmp/int" --threads 1 >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 1 600); do
  [[ -f "$tmp/int/index.csv" && $(wc -l <"$tmp/int/index.csv") -ge 3 ]] && break
  sleep 0.05
done
kill -INT "$pid"
wait "$pid"
rc=$?
if [[ $rc -eq 0 ]]; then
  echo "Ctrl-C: the batch finished first (not a check)"
else
  [[ $rc -eq 130 ]] || { cat "$tmp/err" >&2; fail "Ctrl-C: exit $rc, expected 130"; }
  grep -q "interrupted" "$tmp/err" || fail "Ctrl-C: no message"
  while IFS=, read -r k name status _; do
    [[ $k == row ]] && continue
    [[ $status == ok && -s "$tmp/int/$name.s2p" ]] || fail "Ctrl-C: index row $k ($name) without its file"
  done <"$tmp/int/index.csv"
  done_before=$(($(wc -l <"$tmp/int/index.csv") - 1))
  expect 0 "$done_before done before" -- "$tool" batch "$tmp/board.json" "$tmp/many" -o "$tmp/int"
  echo "Ctrl-C: exit 130 after $done_before maps; the next run solved the other $((40 - done_before))"
fi
[[ $(ls "$tmp/int"/*.s2p 2>/dev/null | wc -l) -eq 40 || $rc -ne 130 ]] || fail "Ctrl-C: not every map after the resumed run"
echo "batch: ok"
