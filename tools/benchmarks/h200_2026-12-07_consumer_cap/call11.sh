# Call 11 (prepared, not run: no H200 came; carry_call7.tar.xz from
# `build_variants.sh 7` at d4dff79 or later, whose gpu_bundle/ is F2's): the
# peer script over every case, on an H200 only (an H100 judges no bar of the
# issue), the run issue 10's "Done when" needs. Run it after call7.sh's A/B
# on the same machine; then `checks` (tests, memcheck, racecheck) in a call
# of its own, as ../h200_2026-12-07_peer_run_eee7528/call2.sh and call3.sh.
set -u
[[ -d gpu_bundle ]] || tar -xJf carry_call7.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c11_gpu.txt
grep -q H200 $OUT/c11_gpu.txt || { echo "not an H200: no peer run"; exit 0; }
cat gpu_bundle/REVISION
GPU_SESSION_PACK=$OUT/c11.tar.xz timeout 560 bash tools/gpu_session.sh $OUT/c11 peers
echo "call: $SECONDS s"
