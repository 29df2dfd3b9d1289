# Call 3 (carry.tar.xz from `tools/ab_carry.sh --bundle 0db6251 BASE=607ec27
# SKVC=6a05274 LAG0=59c1326`): the LAG0 probe (SKVC with each tile's V right
# after its K) against BASE and SKVC, 2 rounds, 2 ms between replays, each
# process cut at 60 s: is SKVC's ~22% the producer's V lag or the split
# barriers themselves?
tar -xJf carry.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
AB_BENCH_LIMIT_S=60 AB_REPLAY_GAP_US=2000 GPU_SESSION_PACK=$OUT/c3.tar.xz timeout 200 \
  bash tools/gpu_session.sh $OUT/c3 \
  ab 2 'Verify/heads:32_8/hd:128/batch:16/q:64/kv:8192/page:16/iter|Prefill/heads:32_8/hd:128/batch:4/|Softcap/heads:32_8/hd:128/batch:16/q:64|TreeVerify/heads:32_8/hd:128/batch:16/q:64/kv:8192/page:16/tree:balanced' BASE SKVC LAG0
echo "call: $SECONDS s"
