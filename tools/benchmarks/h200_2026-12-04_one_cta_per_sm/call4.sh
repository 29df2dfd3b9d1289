# Call 4 (carry.tar.xz: the bundle of bbc44e9): the GPU tests.
tar -xJf carry.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/t.tar.xz bash tools/gpu_session.sh $OUT/t tests 2>&1 | tail -20
