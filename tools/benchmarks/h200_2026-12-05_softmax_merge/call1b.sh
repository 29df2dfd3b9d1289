# Call 1b (the carry of call 1: gpu_bundle at softmax-merge ed44fca, i.e.
# 99ef7bf on main c2d3af7; ab/bench_BASE at c2d3af7): call 1 ran on an H100
# and left the compute-bound member-pair cases unsettled (tree verify b64 q64
# 1.023-1.031 with the clock moving 1845-1980 MHz; b1 q64 1.031-1.033 from
# one fast BASE round). Here the same cases with 2 ms of idle between replays
# (AB_REPLAY_GAP_US, so the board's power cap does not set their clock) and 5
# rounds; then call 2's peer run on the bundle (~290 s) and memcheck over the
# whole kernel test in what is left of 570 s (machines came seldom today:
# one call instead of two).
[[ -d gpu_bundle ]] || tar -xJf carry.tar.xz || exit 1
AB_REPLAY_GAP_US=2000 GPU_SESSION_PACK=$OUT/c1b.tar.xz timeout 150 bash tools/gpu_session.sh $OUT/c1b \
  ab 5 'Verify/heads:32_8/hd:128/batch:(1|16|64)/q:64/|Prefill/|Softcap/heads:32_8/hd:128/batch:16/q:64|Verify/heads:32_8/hd:128/batch:16/q:8/kv:8192/page:16/iter' BASE NEW
GPU_SESSION_PACK=$OUT/c2.tar.xz timeout 430 bash tools/gpu_session.sh $OUT/c2 peers
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
source tools/benchmarks/h200_2026-12-04_ovl2_capped/sanitize.sh  # sanitize()
left=$((570 - SECONDS)); ((left > 110)) && left=110
((left > 20)) && sanitize memcheck $left gpu_bundle/bin/attention_kernel_paged_attention_test '*' all
echo "call: $SECONDS s"
