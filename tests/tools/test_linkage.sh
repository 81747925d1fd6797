#!/usr/bin/env bash
# The CUDA back end is a module loaded on demand (docs/gpu.md): the tool and
# the shared library beside it link no CUDA library, a `--device cpu` run
# loads none, and where there is no CUDA driver a `--device auto` run loads
# none either (the driver is looked for first) and says why on its summary.
# usage: test_linkage.sh SOLVENT_TOOL SOURCE_DIR
set -uo pipefail
tool=$1
src=$2
dir=$(dirname "$tool")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cuda_libs='lib(cuda|cudart|cublas|cublasLt|cusolver)\.so|libsolvent-cuda'

for f in "$tool" "$dir/solvent-run" "$dir/libsolvent.so"; do
  [[ -e "$f" ]] || continue
  ldd "$f" >"$tmp/ldd" || fail "ldd $f failed"
  ! grep -E "$cuda_libs" "$tmp/ldd" || fail "$f links a CUDA library"
done

# the libraries a run loads, as the dynamic loader reports them
loaded() { # log
  grep -oE 'file=[^ ]+' "$1" | sed 's/^file=//' | sort -u
}
LD_DEBUG=files "$tool" sweep "$src/examples/stub.json" --device cpu -o "$tmp/cpu.s2p" >"$tmp/out" 2>"$tmp/ld" ||
  fail "--device cpu run failed"
! loaded "$tmp/ld" | grep -E "$cuda_libs" || fail "--device cpu loaded a CUDA library"

LD_DEBUG=files "$tool" sweep "$src/examples/stub.json" --device auto -o "$tmp/auto.s2p" >"$tmp/out" 2>"$tmp/ld" ||
  fail "--device auto run failed"
devline=$(grep -E '^  device ' "$tmp/out") || fail "--device auto: no device summary line"
echo "$devline"
if [[ "$devline" == *"no CUDA driver (libcuda.so.1 not found)"* ]]; then
  ! loaded "$tmp/ld" | grep -E 'libcudart|libcublas|libsolvent-cuda' || fail "no driver, yet the CUDA back end was loaded"
fi
echo "linkage test: no CUDA library linked; none loaded by a CPU run"
