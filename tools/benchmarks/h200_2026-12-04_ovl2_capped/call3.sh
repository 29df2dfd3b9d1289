# Call 3 (TURNS timed only if call 2 found it correct and never hanging;
# else drop TURNS from the ab line): A/B of BASE, NEW (OVL2 for capped
# requests) and TURNS (OVL2T: the overlap for every request, with FA3's
# turns across the two groups) over the compute-bound cases, 5 rounds; then
# racecheck of NEW's member pairs' test and both sanitizers over the modes
# test's softcap cases.
[[ -d gpu_bundle ]] || tar -xJf carry.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/c3.tar.xz AB_REPLAY_GAP_US=2000 bash tools/gpu_session.sh $OUT/c3 \
  ab 5 '/q:(64|512|2048)/' BASE NEW TURNS
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
source tools/benchmarks/h200_2026-12-04_ovl2_capped/sanitize.sh
sanitize racecheck 200 gpu_bundle/bin/attention_kernel_paged_attention_test '*MemberPairs*' NEW
modes_test=gpu_bundle/bin/attention_kernel_paged_attention_modes_test
sanitize memcheck 60 $modes_test '*Softcap*' NEW_softcap
sanitize racecheck 100 $modes_test '*Softcap*' NEW_softcap
