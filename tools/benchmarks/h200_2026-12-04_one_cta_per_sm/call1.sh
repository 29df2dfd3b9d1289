# Call 1 (carry.tar.xz: the bundle of 588c7db = HEAD's kernels; ab/bench_BASE =
# its benchmark, ab/bench_W1 = the same with one_cta_per_sm_probe_W1.patch):
# A/B of every case, 3 rounds.
tar -xJf carry.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/s.tar.xz bash tools/gpu_session.sh $OUT/s ab 3 '.' BASE W1 2>&1 | tail -12
