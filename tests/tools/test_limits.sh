#!/usr/bin/env bash
# Under an address-space limit (ulimit -v) the tool never hangs: OpenBLAS
# 0.3.21 retries a failed buffer mapping forever, at load (before main) and
# at its calls. The launcher runs on the threads that fit or stops with a
# message naming the limit; the tool maps OpenBLAS's buffers when it starts
# and gives the contexts the room left as their budget (docs/threads.md).
# Every run here must end (exit 0, or 1 with a message) well within its timeout.
# usage: test_limits.sh SOLVENT_TOOL SOURCE_DIR
set -u
tool=$1
src=$2
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"
if [[ -n ${SV_TEST_SANITIZE:-} ]]; then
  echo "skipped: AddressSanitizer reserves terabytes of address space, so no ulimit -v fits it"
  exit 77
fi

# limited MIB CMD...: run CMD under ulimit -v MIB MiB with a 60 s timeout; $rc and $tmp/err
limited() {
  local mib=$1
  shift
  (ulimit -v $((mib * 1024)) && exec timeout 60 "$@") >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [[ $rc -ne 124 ]] || fail "ulimit -v ${mib} MiB: '$*' hung (killed after 60 s)"
}

# far too small: a message naming the limit, before OpenBLAS loads
limited 120 "$tool" --version
[[ $rc -eq 1 ]] || fail "120 MiB --version: exit $rc"
grep -q "ulimit -v" "$tmp/err" || fail "120 MiB: message: $(cat "$tmp/err")"

# OpenBLAS loads on one thread; --version runs (it hung at 300 MiB)
limited 300 "$tool" --version
[[ $rc -eq 0 ]] || fail "300 MiB --version: exit $rc: $(cat "$tmp/err")"
grep -q "^solvent " "$tmp/out" || fail "300 MiB --version printed: $(cat "$tmp/out")"

# a run with no room for OpenBLAS's call buffer: refused with the size to raise the limit to
limited 300 "$tool" sweep "$src/examples/stub.json" -o "$tmp/a.s2p" --quiet
[[ $rc -eq 1 ]] || fail "300 MiB sweep: exit $rc"
grep -q "raise the limit to at least" "$tmp/err" || fail "300 MiB sweep: message: $(cat "$tmp/err")"
[[ -e "$tmp/a.s2p" ]] && fail "300 MiB sweep left an output"

# room for OpenBLAS but not for this sweep's estimate: a budget message, no output (it hung at 400–600 MiB)
limited 420 "$tool" sweep "$src/examples/pixel2port.json" -o "$tmp/b.s2p" --quiet
[[ $rc -eq 0 || $rc -eq 1 ]] || fail "420 MiB sweep: exit $rc"
if [[ $rc -eq 1 ]]; then
  grep -q "ulimit -v" "$tmp/err" || fail "420 MiB sweep: message: $(cat "$tmp/err")"
  [[ -e "$tmp/b.s2p" ]] && fail "420 MiB sweep failed and left an output"
fi

# enough for the sweep on one thread
limited 560 "$tool" sweep "$src/examples/pixel2port.json" -o "$tmp/c.s2p" --quiet
[[ $rc -eq 0 ]] || fail "560 MiB sweep: exit $rc: $(cat "$tmp/err")"
[[ -s "$tmp/c.s2p" ]] || fail "560 MiB sweep wrote no output"

# the other commands under a limit: they end, with a result or a message
limited 560 "$tool" solve "$src/examples/pixel2port.json" --freq 5GHz -o "$tmp/d.s2p"
[[ $rc -eq 0 ]] || fail "560 MiB solve: exit $rc: $(cat "$tmp/err")"
limited 560 "$tool" ode rober --ensemble 64 --quiet
[[ $rc -eq 0 ]] || fail "560 MiB ode: exit $rc: $(cat "$tmp/err")"
limited 560 "$tool" dense --n 3000
[[ $rc -eq 0 || $rc -eq 1 ]] || fail "560 MiB dense: exit $rc"
echo "limits test: every run under ulimit -v ended with a result or a message"
