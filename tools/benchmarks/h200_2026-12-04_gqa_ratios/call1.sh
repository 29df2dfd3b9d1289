# Call 1 (carry.tar.xz: the bundle of ce40574: kernels as 588c7db, the new
# UnevenGqaRatiosMatchReference test and six Gqa benchmark cases): GPU tests,
# then the peer run.
tar -xJf carry.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/c1.tar.xz bash tools/gpu_session.sh $OUT/c1 tests peers 2>&1 | tail -80
