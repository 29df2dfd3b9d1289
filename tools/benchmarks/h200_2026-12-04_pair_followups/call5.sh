# Call 5 (carry.tar.xz: gpu_bundle of bf03ece (OVL2: FA3's softmax / P V
# overlap inside each member group), ab/bench_BASE built at a537c41's
# kernels (PTX identical to c872c9e), ab/bench_NEW running the bundle's
# benchmark): A/B over the compute-bound cases, 5 rounds, then every GPU test
# (the member pairs' test: the same bits as one group per CTA).
tar -xJf carry.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/c5.tar.xz AB_REPLAY_GAP_US=2000 bash tools/gpu_session.sh $OUT/c5 \
  ab 5 '/q:(64|512|2048)/' BASE NEW tests
