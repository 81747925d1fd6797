#!/usr/bin/env bash
# End-to-end: `solvent codegen` on the example pattern files; the generated C
# must compile with -Wall -Wextra -Werror (as C99 and C17) and pass the
# driver's checks (bit for bit against the table-driven kernels, residual);
# bad input gives the documented exit codes and no output file.
# usage: test_codegen.sh SOLVENT_TOOL SOURCE_DIR
set -euo pipefail
tool=$1
src=$2
build=$(cd "$(dirname "$tool")" && pwd)
cc=${CC:-cc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for case in eb50_declared:amd pollu:natural brusselator_4x4:amd; do
  pat=${case%%:*}
  ord=${case##*:}
  "$tool" codegen "$src/examples/patterns/$pat.mtx" -o "$work/gen_kernels.c" --ordering $ord --emit f64,b8 2>/dev/null
  $cc -std=c99 -Wall -Wextra -Werror -fsyntax-only "$work/gen_kernels.c"
  $cc -std=c17 -O1 -Wall -Wextra -Werror -c "$work/gen_kernels.c" -o "$work/gen.o"
  $cc -std=c17 -O2 -Wall -Wextra -Werror ${SV_TEST_SANITIZE:-} -I"$src/include" "$src/tests/tools/codegen_driver.c" \
      "$work/gen.o" -o "$work/driver" -L"$build" -lsolvent -Wl,-rpath,"$build" -lm
  "$work/driver" "$src/examples/patterns/$pat.mtx" $ord >/dev/null || { echo "FAIL: $pat $ord"; exit 1; }
done

# Default emission (several variants) compiles cleanly too, including with the header.
"$tool" codegen "$src/examples/patterns/pollu.mtx" -o "$work/pollu_kernels.c" 2>/dev/null
grep -q "const sv_sparse_kernels pollu_kernels" "$work/pollu_kernels.c"
$cc -std=c17 -O1 -Wall -Wextra -Werror -include "$src/include/solvent/sparse.h" -I"$src/include" \
  -c "$work/pollu_kernels.c" -o "$work/p.o"

# Exit codes: missing file 1, bad argument 2, over the limits 1 (no file left).
set +e
"$tool" codegen "$work/missing.mtx" -o "$work/x.c" 2>/dev/null; [[ $? -eq 1 ]] || { echo "FAIL: missing file"; exit 1; }
"$tool" codegen "$src/examples/patterns/pollu.mtx" 2>/dev/null; [[ $? -eq 2 ]] || { echo "FAIL: no -o"; exit 1; }
"$tool" codegen "$src/examples/patterns/pollu.mtx" -o "$work/x.c" --emit bogus 2>/dev/null
[[ $? -eq 2 ]] || { echo "FAIL: bad --emit"; exit 1; }
"$tool" codegen "$src/examples/patterns/pollu.mtx" -o "$work/x.c" --max-updates 5 2>/dev/null
[[ $? -eq 1 ]] || { echo "FAIL: limits"; exit 1; }
[[ ! -e "$work/x.c" ]] || { echo "FAIL: output left behind"; exit 1; }
printf '%%%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 1\n4 1\n' > "$work/bad.mtx"
msg=$("$tool" codegen "$work/bad.mtx" -o "$work/x.c" 2>&1); rc=$?
[[ $rc -eq 1 && "$msg" == *"line 4"* ]] || { echo "FAIL: bad pattern: $rc $msg"; exit 1; }
set -e
echo "test_codegen: ok"
