#!/usr/bin/env bash
# End-to-end: `solvent dense` solves its demonstration system on both paths
# with backward errors at double level, and reports bad arguments (exit 2)
# and a memory limit that is too small (exit 1).
set -euo pipefail
tool=$1
out=$("$tool" dense --n 300 --rhs 2 --threads 2)
echo "$out"
grep -q "path LDLT" <<<"$out"
# Both backward errors must be at double level (≤ 1e-14).
mapfile -t errs < <(grep -o "backward error [0-9.e+-]*" <<<"$out" | awk '{print $3}')
[[ ${#errs[@]} -eq 2 ]]
for e in "${errs[@]}"; do
  awk -v e="$e" 'BEGIN { exit !(e <= 1e-14) }'
done
set +e
"$tool" dense --n -3 >/dev/null 2>&1; [[ $? -eq 2 ]] || { echo "negative n not refused"; exit 1; }
"$tool" dense --bogus 1 >/dev/null 2>&1; [[ $? -eq 2 ]] || { echo "unknown option not refused"; exit 1; }
msg=$("$tool" dense --n 2000 --memory-limit 10 2>&1); rc=$?
[[ $rc -eq 1 ]] || { echo "memory limit not enforced (rc $rc)"; exit 1; }
grep -q "memory limit" <<<"$msg" || { echo "no memory-limit message: $msg"; exit 1; }
echo "ok"
