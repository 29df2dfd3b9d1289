# Call 2b (2026-12-05): call 1's three graph-replay failures were the test
# harness's (9e5093d: eager plans' grids ending at the capture batch's last
# busy worker). gpu_bundle_fix/test_MAIN is the kernel test at main with the replays
# planned as a CUDA-graph capacity (eager_plan false), carried beside
# carry.tar.xz: the three failed cases and the other graph replays (the full
# sweep would not fit one call beside call 2), then call 2 as written.
[[ -d gpu_bundle ]] || tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
timeout 120 gpu_bundle_fix/test_MAIN \
  --gtest_filter='*GraphReplay*:*KvHeadPairs*:*UnevenGqa*' > "$OUT/main_kernel_test.txt" 2>&1
echo "MAIN kernel test (graph replays, head pairs, GQA ratios) rc=$?"
grep -hE "^\[  (PASSED|FAILED) |Failure|worst error" "$OUT/main_kernel_test.txt" | sort | uniq -c | head -20
bash tools/benchmarks/h200_2026-12-04_ovl2_capped/call2.sh
