# Call 4 (carry2.tar.xz as call 2). On an H200: the A/B of base, S5 and S6 on
# head_dim 64 verify b16 q8 8k (bf16 / fp16, the general kernel), its head_dim
# 128 twin and the head_dim 64 decode rows (controls), five rounds: whether
# more ring stages move the bar where only the H200's bandwidth shows the gap
# (neutral on the H100, call 2). On any card: racecheck parts 5-8 of main's
# bundle (KV head pairs, GQA ratios, member pairs, the kernel test's later
# cases), which the sixty-first session's H200 did not reach.
tar -xJf carry2.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
export GPU_SESSION_PACK=$OUT/call4.tar.xz
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
if [[ $gpu == *H200* ]]; then
  AB_BENCH_LIMIT_S=60 bash tools/gpu_session.sh $OUT/r ab 5 \
    'Verify/heads:32_8/hd:(64|128)/batch:16/q:8/kv:8192/page:16/|hd:64/batch:(1|32)/q:1/' base S5 S6
fi
RACECHECK_PARTS="5 6 7 8" bash tools/gpu_session.sh $OUT/r racecheck
