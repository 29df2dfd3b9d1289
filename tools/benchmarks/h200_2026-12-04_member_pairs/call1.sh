# Call 1 (carry.tar.xz: gpu_bundle of this change + ab/bench_pairs and
# ab/bench_one, wrappers of the bundle's benchmark, the second with
# PA_ATTENTION_NO_MEMBER_PAIRS=1): every GPU test, then the A/B of the
# compute-bound cases (q 64, 512, 2048; tree q64 as the unpaired control),
# three rounds, 2 ms idle after each replay.
tar -xJf carry.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/c1.tar.xz AB_REPLAY_GAP_US=2000 bash tools/gpu_session.sh $OUT/c1 \
  tests ab 3 '/q:(64|512|2048)/' pairs one
grep -E "MemberPairs|FAILED|PASSED" $OUT/c1/gpu_tests.log | head -20
