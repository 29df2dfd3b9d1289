# Call 2 (carry2.tar.xz: the bundle of eee7528 and ab/ built here from main
# plus this session's macros: bench_base = the bundle's benchmark; S5 / S6 =
# the general kernel at head_dim 64 with 5 / 6 ring stages
# (PA_GENERAL_STAGES_HD64; 6 leaves one query tile); F = its single-tile
# softmax with the logit scale in the exponent and ex2.approx.ftz
# (PA_HD64_SCALE_IN_EXP); S5F = both; test_S5 / test_F / modes_test_S5 = their
# kernel and modes tests):
#  1. A/B of base, S5, S6, F, S5F on every head_dim 64 case (two of them,
#     verify b16 q8 8k bf16 / fp16, run the general kernel; the decode ones
#     are controls) and the head_dim 128 twin of verify b16 q8 8k (a control),
#     three rounds, order rotated;
#  2. the variants' kernel tests and S5's modes test.
tar -xJf carry2.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
export GPU_SESSION_PACK=$OUT/call2.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
AB_BENCH_LIMIT_S=100 bash tools/gpu_session.sh $OUT/r ab 3 \
  'hd:64/|Verify/heads:32_8/hd:128/batch:16/q:8/kv:8192/page:16/iter' base S5 S6 F S5F
for t in test_S5 test_F modes_test_S5; do
  timeout 100 ab/$t > $OUT/r/$t.log 2>&1; echo "$t rc=$?"
  grep -hE '^\[  (PASSED|FAILED) |Failure|ERRSTAT' $OUT/r/$t.log | sort | uniq -c | sort -rn | head -5
  (cd $OUT/r && tar -cJf $GPU_SESSION_PACK .)
done
