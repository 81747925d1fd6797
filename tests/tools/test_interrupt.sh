#!/usr/bin/env bash
# End-to-end: Ctrl-C. SIGINT (and SIGTERM) while `solvent sweep`, `solve`
# or `ode` works stops it through the library's cancel: exit code 130, the
# message "interrupted: nothing written", no output file and nothing left
# beside it; under the sanitizer build the exit also finds no leak.
set -u
tool=$1
src=$2
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"

# interrupt SIGNAL DELAY NAME -- command...: the command started in $tmp/run,
# SIGNAL sent after DELAY seconds; checks what it left.
interrupt() {
  local sig=$1 delay=$2 name=$3
  shift 4
  rm -rf "$tmp/run"
  mkdir "$tmp/run"
  ( cd "$tmp/run" && exec "$@" ) >"$tmp/out" 2>"$tmp/err" &
  local pid=$!
  sleep "$delay"
  local t0
  t0=$(date +%s.%N)
  kill -"$sig" "$pid" 2>/dev/null
  wait "$pid"
  local rc=$? t1
  t1=$(date +%s.%N)
  if [[ $rc -eq 0 ]]; then
    echo "$name: finished before SIG$sig after ${delay} s (not a check)"
    return
  fi
  [[ $rc -eq 130 ]] || { cat "$tmp/err" >&2; fail "$name: SIG$sig after ${delay} s: exit $rc, expected 130"; }
  grep -q "interrupted: nothing written" "$tmp/err" || { cat "$tmp/err" >&2; fail "$name: no interruption message"; }
  local left
  left=$(ls -A "$tmp/run")
  [[ -z "$left" ]] || fail "$name: SIG$sig after ${delay} s left files: $left"
  echo "$name: SIG$sig after ${delay} s: exit 130 in $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}') s, nothing written"
}

p=$src/examples/pixel2port.json
for d in 0.3 1.5 3; do
  interrupt INT "$d" "sweep" -- "$tool" sweep "$p" -o out.s2p --plot out.svg --quiet
done
interrupt TERM 1.5 "sweep" -- "$tool" sweep "$p" -o out.s2p --quiet
interrupt INT 1.5 "solve" -- "$tool" solve "$p" --freq 1GHz,2GHz,3GHz,4GHz,5GHz,6GHz,7GHz,8GHz -o out.s2p
interrupt INT 1 "ode" -- "$tool" ode rober --ensemble 2000000 --out out.csv --quiet
exit 0
