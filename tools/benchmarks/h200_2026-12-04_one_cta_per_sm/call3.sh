# Call 3 (carry.tar.xz: the bundle of bbc44e9: the benchmark with fp16 twins,
# kernels as 588c7db): the peer run.
tar -xJf carry.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/p.tar.xz bash tools/gpu_session.sh $OUT/p peers 2>&1 | tail -60
