#!/usr/bin/env bash
# The device's assembly rounds as the CPU's: compile its kernels
# (src/gpu/cuda/assemble.cu) to PTX as the module is built (--fmad=false,
# -O3) and check that no double-precision multiply-add was fused (the CPU's
# C17 build contracts none) and that division and square root are the
# correctly rounded ones (.rn, not .approx). The same source compiled with
# fused multiply-adds allowed must show some, or the count measures
# nothing. Needs only the compiler, not a device.
# usage: ptx_assembly_check.sh NVCC SOURCE_DIR ARCH
set -euo pipefail
nvcc=$1 src=$2 arch=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ptx() { "$nvcc" -ptx -O3 "$@" -I"$src/include" -I"$src/src" -arch="sm_$arch" "$src/src/gpu/cuda/assemble.cu" -o "$tmp/out.ptx"; }
ptx --fmad=false
fused=$(grep -cE '\bfma\.[a-z]+\.f64' "$tmp/out.ptx" || true)
approx=$(grep -cE '\b(div|sqrt|rcp)\.approx' "$tmp/out.ptx" || true)
rounded=$(grep -cE '\bsqrt\.rn\.f64' "$tmp/out.ptx" || true)
ptx
control=$(grep -cE '\bfma\.[a-z]+\.f64' "$tmp/out.ptx" || true)
echo "assembly kernels: $fused fused f64 multiply-adds, $approx approximate divisions or roots, $rounded sqrt.rn.f64 (with fused multiply-adds allowed: $control fma.f64)"
[[ $fused -eq 0 ]] || { echo "FAIL: the assembly kernels fuse multiply-adds: they would not round as the CPU" >&2; exit 1; }
[[ $approx -eq 0 ]] || { echo "FAIL: approximate division or square root in the assembly kernels" >&2; exit 1; }
[[ $rounded -gt 0 && $control -gt 0 ]] || { echo "FAIL: the check does not see the point approximation's arithmetic" >&2; exit 1; }
echo ok
