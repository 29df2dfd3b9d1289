# Call 4 (carry3.tar.xz, the bundle of a2acdeb): every GPU test.
tar -xJf carry3.tar.xz && GPU_SESSION_PACK=$OUT/call4.tar.xz timeout 400 bash tools/gpu_session.sh $OUT/r tests
