#!/usr/bin/env bash
# Run from the repository root with carry.tar.xz (gpu_bundle/ of 3007cd8,
# ab/bench_{NEW,FTZ,FUSED}: 743d2cd, 2^x flushed only, 3007cd8). The steps of
# tools/gpu_session.sh (GPU tests, A/B on verify and prefill, the peer run,
# sanitizers and dumps), then the paired loop of b1 q64 under ncu again (that
# step wrote no report in the recorded call: its output is not kept).
tar -xJf carry.tar.xz || exit 1
F='^BM_PagedAttention(Verify|TreeVerify|Prefill|Decode/heads:32_8/hd:128/batch:32/q:1/kv:16384|DraftExtend/heads:64_8/hd:128/batch:16/q:4)/'
bash tools/gpu_session.sh $OUT/r tests ab 3 "$F" NEW FTZ FUSED peers checks
tar -cJf $OUT/call4.tar.xz -C $OUT r
c='Verify/heads:32_8/hd:128/batch:1/q:64/kv:32768/page:16/'
timeout 100 ncu --kernel-name regex:PagedAttentionKernel --launch-skip 3 --launch-count 1 --set full \
  --import-source no -o /tmp/prof_q64 -f gpu_bundle/bin/attention_kernel_paged_attention_benchmark \
  --benchmark_filter="^BM_PagedAttention$c" --benchmark_repetitions=1 > /dev/null 2>&1
ncu -i /tmp/prof_q64.ncu-rep --page source --csv --print-source sass > $OUT/r/sass_q64_fused.csv 2>&1
ncu -i /tmp/prof_q64.ncu-rep --page details > $OUT/r/details_q64_fused.txt 2>&1
grep -E "Duration|Issue Slots Busy|No Eligible" $OUT/r/details_q64_fused.txt | head -4
tar -cJf $OUT/call4.tar.xz -C $OUT r
