# Call 2 (instead of call 1, which got no machine; carry.tar.xz from
# `tools/ab_carry.sh --prune --bundle 0db6251 BASE=607ec27 SKVC=6a05274
# SKV=bundle`): the member pairs' test on the SKV bundle first, cut at 60 s
# (a barrier mistake in the split ring hangs, it does not fail), then the A/B
# of the member-pair cases (q64 verify b1 / b16 / b64, prefill, capped q64
# verify; the tree cases run no member pairs: controls, expected 1.000) with
# 2 ms between replays (power cap), 3 rounds, each benchmark process cut at
# 60 s; then every GPU test of the SKV bundle on this card, and racecheck
# of the member pairs' test in what is left of 580 s. The bundle's
# kernels other than the member pairs' are byte for byte main's (cubin .text
# compared per kernel here), so its test run is also main's H200 test run
# that the last session could not get.
tar -xJf carry.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
timeout -s KILL 60 gpu_bundle/bin/attention_kernel_paged_attention_test --gtest_brief=1 \
  --gtest_filter='*MemberPairs*' 2>&1 | tail -5
echo "member pairs test rc=${PIPESTATUS[0]}"
AB_BENCH_LIMIT_S=60 AB_REPLAY_GAP_US=2000 GPU_SESSION_PACK=$OUT/c2.tar.xz timeout 520 \
  bash tools/gpu_session.sh $OUT/c2 \
  ab 3 'Verify/heads:32_8/hd:128/batch:(1|16|64)/q:64/|Prefill/|Softcap/heads:32_8/hd:128/batch:16/q:64' BASE SKVC SKV \
  tests
# What is left of the call: racecheck over the member pairs' test (part 7 of
# gpu_session.sh's racecheck, 240 s on the H200), cut at the call's end.
source tools/benchmarks/h200_2026-12-04_ovl2_capped/sanitize.sh  # sanitize()
left=$((580 - SECONDS))
((left > 30)) && sanitize racecheck $left gpu_bundle/bin/attention_kernel_paged_attention_test \
  'PagedAttentionGpuTest.MemberPairs*' member_pairs
grep -hE "Race reported|hazard" $OUT/racecheck_member_pairs.txt | sort | uniq -c | head
echo "call: $SECONDS s"
