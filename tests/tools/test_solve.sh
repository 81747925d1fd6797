#!/usr/bin/env bash
# End-to-end: `solvent solve` on the stub example writes a Touchstone file
# whose |S21| is deep at the notch and near 0 dB far below it, and whose S
# are those of `solvent sweep` (the same model and calibration); bad input
# gives a clear message, a non-zero exit and no output file.
set -u
tool=$1
src=$2
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"

"$tool" solve "$src/examples/stub.json" --freq 0.3GHz,1.9934GHz --format db --version 2 -o "$tmp/stub.s2p" \
  || fail "solve failed"
[[ -f "$tmp/stub.s2p" ]] || fail "no output file"
grep -q '^\[Version\] 2.0' "$tmp/stub.s2p" || fail "not a version 2 file"
grep -q '^# GHz S DB R 50' "$tmp/stub.s2p" || fail "option line"
# data lines: freq S11dB S11ang S21dB S21ang ...
s21_low=$(awk '/^0.3 /{print $4}' "$tmp/stub.s2p")
s21_notch=$(awk '/^1.9934 /{print $4}' "$tmp/stub.s2p")
awk -v a="$s21_low" 'BEGIN{exit !(a > -1.5)}' || fail "|S21| at 0.3 GHz = $s21_low dB"
awk -v a="$s21_notch" 'BEGIN{exit !(a < -40)}' || fail "|S21| at the notch = $s21_notch dB"
ls "$tmp" | grep -q tmp && fail "temporary file left behind"

# the same model as `solvent sweep` (radiation, calibrated ports): the same S
"$tool" solve "$src/examples/stub.json" --freq 1GHz,2GHz,3GHz -o "$tmp/solve3.s2p" || fail "solve at 3 frequencies"
"$tool" sweep "$src/examples/stub.json" --start 1GHz --stop 3GHz --points 3 --exact --quiet -o "$tmp/sweep3.s2p" \
  || fail "sweep at 3 frequencies"
grep -q "radiation, calibrated ports" "$tmp/solve3.s2p" || fail "solve's comment does not name the model's effects"
paste <(grep -v '^[!#]' "$tmp/solve3.s2p") <(grep -v '^[!#]' "$tmp/sweep3.s2p") | awk '
  { n = NF / 2; for (i = 2; i <= n; i++) { d = $i - $(i + n); if (d < 0) d = -d; if (d > m) m = d } }
  END { if (m > 1e-9) { print "solve and sweep differ by " m; exit 1 } }' || fail "solve and sweep disagree"

# errors: exit status and no output
out="$tmp/bad.s2p"
"$tool" solve "$src/examples/stub.json" --freq abc -o "$out" 2>"$tmp/err"; rc=$?
[[ $rc -eq 2 ]] || fail "bad --freq: exit $rc"
grep -q "abc" "$tmp/err" || fail "bad --freq message: $(cat "$tmp/err")"
"$tool" solve "$src/examples/stub.json" --freq 1GHz -o "$tmp/bad.s3p" 2>"$tmp/err"; rc=$?
[[ $rc -eq 2 ]] || fail "wrong extension: exit $rc"
grep -q "s2p" "$tmp/err" || fail "wrong extension message"
"$tool" solve "$tmp/missing.json" --freq 1GHz -o "$out" 2>"$tmp/err"; rc=$?
[[ $rc -eq 1 ]] || fail "missing project: exit $rc"
grep -q "missing.json" "$tmp/err" || fail "missing project message"
printf '{"units": "mm", "grid": 3}' > "$tmp/broken.json"
"$tool" solve "$tmp/broken.json" --freq 1GHz -o "$out" 2>"$tmp/err"; rc=$?
[[ $rc -eq 1 ]] || fail "broken project: exit $rc"
grep -q "substrate" "$tmp/err" || fail "broken project message: $(cat "$tmp/err")"
"$tool" solve "$src/examples/stub.json" --freq 1GHz 2>"$tmp/err"; rc=$?
[[ $rc -eq 2 ]] || fail "missing -o: exit $rc"
[[ -e "$out" ]] && fail "output written on error"
echo "ok"
