# Call 1 (carry.tar.xz: gpu_bundle of 9ecf165, ab/bench_BASE built at
# c872c9e, ab/bench_NEW running the bundle's benchmark): A/B over the
# compute-bound member pairs' cases, 5 rounds, then every GPU test.
tar -xJf carry.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/c1.tar.xz AB_REPLAY_GAP_US=2000 bash tools/gpu_session.sh $OUT/c1 \
  ab 5 '/q:(64|512|2048)/' BASE NEW tests
