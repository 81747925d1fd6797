#!/usr/bin/env bash
# End-to-end checks of `solvent ode`: a run against the Bari ROBER reference,
# an ensemble written as CSV, a bouncing ball's events against the closed
# form, clear errors with the documented exit codes,
# and no output file left behind by a failed run.
set -euo pipefail
tool=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test_ode: $*" >&2; exit 1; }

# ROBER to t = 1e11: y1 = 2.083340149701255e-08 (Bari test set reference)
"$tool" ode rober --quiet --out "$tmp/rober.csv"
y1=$(tail -1 "$tmp/rober.csv" | cut -d, -f4)
awk -v y="$y1" 'BEGIN { r = 2.083340149701255e-08; e = (y - r) / r; if (e < 0) e = -e; exit !(e < 1e-4) }' ||
  fail "rober y1 = $y1, reference 2.083340149701255e-08"

# an ensemble with several save times: header + ntraj*nsave rows, all succeeded
"$tool" ode vdpol --ensemble 20 --save 3 --out "$tmp/vdpol.csv" > "$tmp/summary.txt"
grep -q "trajectories 20: 20 succeeded" "$tmp/summary.txt" || fail "summary: $(cat "$tmp/summary.txt")"
[[ $(wc -l < "$tmp/vdpol.csv") -eq 61 ]] || fail "vdpol.csv has $(wc -l < "$tmp/vdpol.csv") lines, expected 61"
head -1 "$tmp/vdpol.csv" | grep -q '^traj,status,t,y1,y2$' || fail "bad header: $(head -1 "$tmp/vdpol.csv")"
awk -F, 'NR > 1 && $2 != 0 { exit 1 }' "$tmp/vdpol.csv" || fail "a trajectory did not succeed"

# Tsit5 and the single-precision LU are accepted
"$tool" ode lorenz --method tsit5 --ensemble 8 --quiet
"$tool" ode hires --lu single --quiet

# sensitivities: dy1/dk1 of Robertson at t = 1e4 (CVODES at rtol 1e-12:
# -3.4378169111133947, tests/ode/cvodes_refs.h), in the CSV's own columns
"$tool" ode rober --sens p1,y1 --t1 1e4 --rtol 1e-8 --atol 1e-12 --out "$tmp/sens.csv" > "$tmp/summary.txt"
grep -q "sensitivities 2 directions" "$tmp/summary.txt" || fail "sens summary: $(cat "$tmp/summary.txt")"
head -1 "$tmp/sens.csv" | grep -q '^traj,status,t,y1,y2,y3,dy1/dp1,dy1/dy1,dy2/dp1,dy2/dy1,dy3/dp1,dy3/dy1$' ||
  fail "bad sensitivity header: $(head -1 "$tmp/sens.csv")"
s11=$(tail -1 "$tmp/sens.csv" | cut -d, -f7)
awk -v s="$s11" 'BEGIN { r = -3.4378169111133947; e = (s - r) / r; if (e < 0) e = -e; exit !(e < 1e-6) }' ||
  fail "rober dy1/dk1 = $s11, CVODES -3.4378169111133947"

# the bouncing ball: its first impact at sqrt(2·10/9.81) = 1.4278431229270645 s (closed
# form), seven bounces in [0, 10]
"$tool" ode ball > "$tmp/summary.txt"
grep -q "^events    7 (7.0 per trajectory); trajectory 0 at t = 1.427843123 " "$tmp/summary.txt" ||
  fail "ball: $(cat "$tmp/summary.txt")"

# bad arguments: exit code 2 and a message naming the problem
set +e
"$tool" ode nosuch 2> "$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "unknown built-in problem 'nosuch'" "$tmp/err" || fail "unknown problem: rc $rc, $(cat "$tmp/err")"
"$tool" ode rober --lu half 2> "$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "expected single or double" "$tmp/err" || fail "--lu half: rc $rc"
"$tool" ode rober --rtol abc 2> "$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "expected a decimal number" "$tmp/err" || fail "--rtol abc: rc $rc"
# impossible tolerance: an argument the library refuses (exit 2, as --help
# says), no output file
"$tool" ode rober --rtol 1e-30 --out "$tmp/none.csv" 2> "$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "rtol = 1e-30" "$tmp/err" || fail "--rtol 1e-30: rc $rc, $(cat "$tmp/err")"
[[ ! -e "$tmp/none.csv" ]] || fail "a failed run left none.csv behind"
# failed trajectories: exit 1 and a per-trajectory status in the message
"$tool" ode vdpol --max-steps 5 --quiet --out "$tmp/partial.csv" 2> "$tmp/err"; rc=$?
[[ $rc -eq 1 ]] && grep -q "1 of 1 trajectories failed; first: trajectory 0: maximum number of steps" "$tmp/err" ||
  fail "--max-steps 5: rc $rc, $(cat "$tmp/err")"
# (the CSV is still written, with the status column telling which rows to trust)
awk -F, 'NR == 2 && $2 != 1 { exit 1 }' "$tmp/partial.csv" || fail "status column of partial.csv"
"$tool" ode rober --sens p4 2> "$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "expected a comma-separated list of p1..p3 and y1..y3" "$tmp/err" || fail "--sens p4: rc $rc"
# every built-in carries its sensitivity callbacks: Lorenz with Rodas5P
# runs (the library's refusal without a second-order callback is
# tests/ode/test_sens.c's), a problem without parameters says so
"$tool" ode lorenz --sens p1,p2 > "$tmp/summary.txt" 2> "$tmp/err"; rc=$?
[[ $rc -eq 0 ]] && grep -q "sensitivities 2 directions" "$tmp/summary.txt" || fail "lorenz --sens: rc $rc, $(cat "$tmp/err")"
"$tool" ode orego --sens p1 2> "$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "no parameters: expected a comma-separated list of y1..y3" "$tmp/err" ||
  fail "orego --sens p1: rc $rc, $(cat "$tmp/err")"
"$tool" ode rober --frobnicate 1 2> "$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "unknown option '--frobnicate'" "$tmp/err" || fail "unknown option: rc $rc"
set -e
ls "$tmp" | grep -q tmp && fail "temporary file left behind: $(ls "$tmp")"
echo "test_ode: all checks passed"
