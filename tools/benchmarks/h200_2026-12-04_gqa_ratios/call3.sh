# Call 3 (carry.tar.xz: the bundle of f1c6126): UnevenGqaRatiosMatchReference
# plain (timed), then under racecheck (every hazard printed).
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
mkdir -p $OUT/c3
test=gpu_bundle/bin/attention_kernel_paged_attention_test
$test --gtest_filter='*UnevenGqa*' 2>&1 | grep -E "OK|FAILED|PASSED" | tail -3
timeout 420 compute-sanitizer --tool racecheck --print-limit 100000 \
  $test --gtest_filter='*UnevenGqa*' > $OUT/c3/racecheck.log 2>&1
echo "racecheck rc=$?"
grep -E 'OK|FAILED|PASSED|RACECHECK SUMMARY' $OUT/c3/racecheck.log | tail -5
grep -c ERRSTAT $OUT/c3/racecheck.log
xz -9 $OUT/c3/racecheck.log
