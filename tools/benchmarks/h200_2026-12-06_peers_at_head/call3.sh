#!/usr/bin/env bash
# Call 3 (device tool; carry: call 1's carry.tar.xz): is the H100 peer run's
# tree/chain 1.157 (32/8 b64 q64 4k balanced; H200 1.104) the board's clock
# under its power cap? The chain verify and both trees of that shape, with no
# idle between replays and with 2 ms (--replay_gap_us, so the cap does not set
# the clock), two rounds each; sm_MHz is each case's clock under load.
# Prediction (before the call): with 2 ms idle, balanced tree/chain 1.08-1.11
# (the H200's 1.104 / 1.086); without, 1.12-1.16 as the peer run.
set -u
tar -xJf carry.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c3_gpu.txt
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
for round in 1 2; do for gap in 0 2000; do
  timeout 100 gpu_bundle/bin/attention_kernel_paged_attention_benchmark \
    --benchmark_filter='^BM_PagedAttention(Tree)?Verify/heads:32_8/hd:128/batch:64/q:64/kv:4096/page:16/(tree:[a-z_0-9]+/)?iter' \
    --replay_gap_us=$gap --benchmark_out=$OUT/c3_gap${gap}_r$round.json --benchmark_out_format=json \
    2>&1 | grep -E 'median' | sed "s/^/gap $gap r$round /" | cut -c1-220
done; done | tee $OUT/c3_tree_clock.txt
echo "call: $SECONDS s"
