#!/usr/bin/env bash
# Prepared without a GPU (2026-12-01); run from the repository root with
# carry.tar.xz: gpu_bundle/ of 02d5c50 and ab/bench_{base,Ug,Uq,F,UgF}
# (base = 02d5c50; the others are it with this folder's patches, built by
# build_variants.sh: Ug = uniform_stage,
# Uq = uniform_stage_and_query, F = fused_scale_ftz_exp2_on_f2c6b73, UgF = Ug
# + F). The A/B on 64-row units (verify, tree verify, prefill) with a decode
# and a 16-row control, three rounds rotated (~330 s); then one launch of b1
# q64 32k under Nsight Compute for base and Uq, whose SASS tables show whether
# the shuffles removed the R2UR moves (count them with
# ../h200_2026-12-01_coread/ncu_sass_summary.py or grep).
set -o pipefail
tar -xJf carry.tar.xz || exit 1
F='^BM_PagedAttention(Verify|TreeVerify|Prefill|Decode/heads:32_8/hd:128/batch:32/q:1/kv:16384|DraftExtend/heads:64_8/hd:128/batch:16/q:4)/'
bash tools/gpu_session.sh $OUT/r ab 3 "$F" base Ug Uq F UgF
tar -cJf $OUT/call1.tar.xz -C $OUT r
# gpu_session.sh's LD_LIBRARY_PATH does not reach this shell: without it the
# benchmark cannot load its libraries under ncu (the likely reason the coread
# session's call4.sh got no report).
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
c='Verify/heads:32_8/hd:128/batch:1/q:64/kv:32768/page:16/'
for name in base Uq; do
  timeout 100 ncu --kernel-name regex:PagedAttentionKernel --launch-skip 3 --launch-count 1 \
    --set full --import-source no -o /tmp/prof_$name -f ab/bench_$name \
    --benchmark_filter="^BM_PagedAttention$c" --benchmark_repetitions=1 > /dev/null 2>&1
  ncu -i /tmp/prof_$name.ncu-rep --page source --csv --print-source sass > $OUT/r/sass_q64_$name.csv 2>&1
  ncu -i /tmp/prof_$name.ncu-rep --page details > $OUT/r/details_q64_$name.txt 2>&1
  echo "== $name: R2UR rows $(grep -c R2UR $OUT/r/sass_q64_$name.csv)"
  grep -E "Duration|Issue Slots Busy" $OUT/r/details_q64_$name.txt | head -2
done
tar -cJf $OUT/call1.tar.xz -C $OUT r
