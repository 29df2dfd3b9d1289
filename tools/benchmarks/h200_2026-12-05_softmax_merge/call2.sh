# Call 2 (the same carry as call 1: gpu_bundle at softmax-merge 99ef7bf, whose
# kernels are those that land if call 1 keeps them): the peer script over
# every case (the bar table; the first peer run since a6ed86f, with OVL2C and
# the merged softmax), then memcheck over the whole kernel test.
[[ -d gpu_bundle ]] || tar -xJf carry.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/c2.tar.xz timeout 470 bash tools/gpu_session.sh $OUT/c2 peers
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
source tools/benchmarks/h200_2026-12-04_ovl2_capped/sanitize.sh  # sanitize()
sanitize memcheck 110 gpu_bundle/bin/attention_kernel_paged_attention_test '*' all
