# The sparse kernels must perform exactly the operations their source
# spells out: no contraction of a*b+c into a fused multiply-add, so that the
# table-driven kernels, the straight-line emission and the batched lanes
# round identically (and agree bit for bit) whatever the -march. -O3 lets
# GCC vectorise the update runs (element-wise, so the rounding is unchanged).
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/sparse/kernels.c PROPERTIES COMPILE_OPTIONS "-ffp-contract=off;-O3")
