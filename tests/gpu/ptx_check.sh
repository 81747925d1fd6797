#!/usr/bin/env bash
# The device compiler keeps the error terms: compile the double-float product
# kernel (src/gpu/cuda/df_products.cu) to PTX as the library is built
# (--fmad=false, -O3) and count the single-precision subtractions of the
# packed-row kernel: the error-free transforms need them (two-sum alone is
# four additions/subtractions), the build without error terms
# (SV_GPU_BREAK_EFT) has none. PTX instructions with an explicit rounding
# mode (.rn) are not contracted or reassociated by ptxas, so what is counted
# here is what runs. Needs only the compiler, not a device.
# usage: ptx_check.sh NVCC SOURCE_DIR ARCH
set -euo pipefail
nvcc=$1 src=$2 arch=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
count() { awk '/\.entry.*df_packed_kernel/,/^}/' "$1" | grep -cE '^\s+sub\.rn\.f32' || true; }
"$nvcc" -ptx -O3 --fmad=false -I"$src/include" -arch="sm_$arch" "$src/src/gpu/cuda/df_products.cu" -o "$tmp/good.ptx"
"$nvcc" -ptx -O3 --fmad=false -I"$src/include" -arch="sm_$arch" -DSV_GPU_BREAK_EFT "$src/src/gpu/cuda/df_products.cu" -o "$tmp/broken.ptx"
good=$(count "$tmp/good.ptx") broken=$(count "$tmp/broken.ptx")
echo "sub.rn.f32 in the packed-row kernel: $good (error terms kept), $broken (SV_GPU_BREAK_EFT)"
[[ $good -ge 8 ]] || { echo "FAIL: the device compiler dropped the error terms' subtractions" >&2; exit 1; }
[[ $broken -eq 0 ]] || { echo "FAIL: the broken build still has subtractions: the count does not measure the error terms" >&2; exit 1; }
grep -q 'fma\.rn\.f32' "$tmp/good.ptx" || { echo "FAIL: no fused multiply-add for two-product" >&2; exit 1; }
echo ok
