# Call 5 (carry.tar.xz: gpu_bundle of the review's simplification, in which
# both consumer groups get the two lists in one order and no longer take the
# max of the step's tiles and their own; ab/bench_{pairs,one} as call 4):
# every GPU test, and the A/B of call 4.
tar -xJf carry.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/c5.tar.xz AB_REPLAY_GAP_US=2000 bash tools/gpu_session.sh $OUT/c5 \
  tests ab 2 '/q:(64|512|2048)/' pairs one
