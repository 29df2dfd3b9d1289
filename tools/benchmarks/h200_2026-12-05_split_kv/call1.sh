# Call 1 (carry.tar.xz from `tools/ab_carry.sh --bundle HEAD MAIN=bundle` at
# main 607ec27, whose kernels are `ab890cd`'s, SMERGE): every GPU test of the
# bundle on an H200 (the last session ran them on an H100 only), then
# racecheck parts 1-5 of gpu_session.sh (the kernel test's targeted cases,
# the fp16 sweep at pages 1/16/256, the bf16 sweep at page 16, the tree
# cases, the KV head pairs test); SMERGE changed every kernel's SASS and only
# memcheck ran on it. Parts 6-7 (GQA ratios, member pairs: 240 s each) go
# with call 2.
tar -xJf carry.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
RACECHECK_PARTS="1 2 3 4 5" GPU_SESSION_PACK=$OUT/c1.tar.xz timeout 570 \
  bash tools/gpu_session.sh $OUT/c1 tests racecheck
