# Call 2 (carry.tar.xz: the bundle of f1c6126): memcheck over the whole kernel
# test (timed, for the checks step's limit), then the peer script over the
# Gqa cases only, flex for their q8 cases.
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
mkdir -p $OUT/c2
start=$SECONDS
timeout 400 compute-sanitizer --tool memcheck --error-exitcode 1 \
  gpu_bundle/bin/attention_kernel_paged_attention_test --gtest_brief=1 > $OUT/c2/memcheck.log 2>&1
echo "memcheck rc=$? in $((SECONDS - start)) s"; tail -4 $OUT/c2/memcheck.log
grep -E "^\[       OK \].*Uneven" $OUT/c2/memcheck.log
PYTHONUNBUFFERED=1 timeout 150 python3 tools/peer_benchmark.py \
  --ours gpu_bundle/bin/attention_kernel_paged_attention_benchmark --filter 'Gqa/' \
  --out $OUT/c2/peers_gqa.json --flex-filter 'Gqa/.*/q:8/' > $OUT/c2/peers_gqa_table.txt 2>&1
echo "peers rc=$?"; grep -E "^Gqa|copy rate" $OUT/c2/peers_gqa_table.txt
