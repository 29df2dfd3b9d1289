#!/usr/bin/env bash
# Fourth call of 2026-12-02 (run from the repository root with carry.tar.xz:
# gpu_bundle/ of PF = S with L2 prefetches of TMA units' K/V rows four tiles
# ahead of the ring; ab/bench_S = a7be378, ab/bench_WG = the producer
# warpgroup (call 3), ab/bench_PF = the bundle's benchmark): the A/B of the
# three on the paired kernels' shapes, then PF's kernel tests, the most
# telling first (the session's last ~200 s of device time: no peer run, and
# the tests may be cut short). Packed after each step.
set -o pipefail
tar -xJf carry.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call4.tar.xz
F='^BM_PagedAttention(Verify|TreeVerify|Prefill)/'
bash tools/gpu_session.sh $OUT/r ab 3 "$F" S WG PF
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
for test in attention_kernel_paged_attention_test attention_kernel_graph_replay_stress_test \
            attention_kernel_paged_attention_modes_test; do
  gpu_bundle/bin/$test --gtest_color=no > $OUT/r/$test.log 2>&1
  echo "$test rc=$? $(grep -hE '^\[  (PASSED|FAILED) |replays matched' $OUT/r/$test.log | tr '\n' ' ')"
  tar -cJf $GPU_SESSION_PACK -C $OUT r
done
