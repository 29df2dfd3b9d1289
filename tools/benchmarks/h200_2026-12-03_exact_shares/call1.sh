# Call 1 (bundle of 834ee10, carry1.tar.xz = gpu_bundle only): the sanitizers
# and dumps, then every GPU test.
tar -xJf carry1.tar.xz && GPU_SESSION_PACK=$OUT/call1.tar.xz bash tools/gpu_session.sh $OUT/r checks tests
