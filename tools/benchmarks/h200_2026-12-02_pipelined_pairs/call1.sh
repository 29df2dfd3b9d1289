#!/usr/bin/env bash
# Prepared for the next device session (2026-12-01, after 7fad13d); run from
# the repository root with carry.tar.xz: gpu_bundle/ of 7fad13d (S, a7be378's
# kernel: the scale-in-exponent softmax only for requests whose units share
# K/V), ab/bench_UqF (e7c0337, the last peer run's build) and ab/bench_S (the
# bundle's benchmark). Rebuild them if this machine did not build them:
#   bash tools/gpu_bundle.sh && cp gpu_bundle/bin/attention_kernel_paged_attention_benchmark ab/bench_S
#   (bench_UqF: the same at e7c0337)
#   tar -cf - gpu_bundle ab/bench_UqF ab/bench_S | xz -9 -T1 > carry.tar.xz   # ~5 MB
# Steps: S's GPU tests, peer run and sanitizer/dump checks (S has only its A/B
# and GPU tests so far), then the tree paired kernel's b1 q64 loss under S
# (0.938-0.941 of base against UqF's 0.908-0.911; b16 / b64 did not lose):
# one launch each of UqF and S under ncu, SASS instruction counts and the
# stall reasons, to see whether the second softmax form changed the hot loop's
# code. ~8 min; each step's records are packed as it ends.
set -o pipefail
tar -xJf carry.tar.xz || exit 1
pack() { tar -cJf $OUT/call1.tar.xz -C $OUT r; }
bash tools/gpu_session.sh $OUT/r tests; pack
bash tools/gpu_session.sh $OUT/r peers; pack
bash tools/gpu_session.sh $OUT/r checks; pack
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib  # gpu_session.sh's does not reach this shell
c='TreeVerify/heads:32_8/hd:128/batch:1/q:64/kv:32768/page:16/tree:balanced_topk4/'
for name in UqF S; do
  timeout 100 ncu --kernel-name regex:PagedAttentionKernel --launch-skip 3 --launch-count 1 \
    --set full --import-source no -o /tmp/prof_$name -f ab/bench_$name \
    --benchmark_filter="^BM_PagedAttention$c" --benchmark_repetitions=1 > /dev/null 2>&1
  ncu -i /tmp/prof_$name.ncu-rep --page source --csv --print-source sass > /tmp/sass_$name.csv 2>&1
  ncu -i /tmp/prof_$name.ncu-rep --page details > $OUT/r/tree_q64_details_$name.txt 2>&1
  python3 tools/benchmarks/h200_2026-12-01_coread/ncu_sass_summary.py /tmp/sass_$name.csv \
    > $OUT/r/tree_q64_sass_summary_$name.txt 2>&1
  echo "== $name: SASS rows $(grep -c '^"' /tmp/sass_$name.csv)"
  grep -E "Duration|Issue Slots Busy|Instruction Cache|No Instruction" $OUT/r/tree_q64_details_$name.txt | head -4
done
pack
