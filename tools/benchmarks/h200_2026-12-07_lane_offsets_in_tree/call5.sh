#!/usr/bin/env bash
# Call 5 (the same warm H100, the session's last 255 s of device time):
# memcheck of HEAD's kernel test (LO moves shared-memory addresses), then
# QR's kernel test in what was left. As run, on one line; here one command a
# line.
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
mkdir -p $OUT/m
(timeout 120 compute-sanitizer --tool memcheck gpu_bundle/bin/attention_kernel_paged_attention_test \
  > $OUT/m/memcheck.log 2>&1; echo "memcheck rc=$?")
grep -E "tests? ran|PASSED|FAILED|ERROR SUMMARY" $OUT/m/memcheck.log
(timeout $((250 - SECONDS)) ab/test_QR > $OUT/m/test_QR.log 2>&1; echo "test_QR rc=$?")
grep -E "tests? ran|PASSED|FAILED" $OUT/m/test_QR.log | head -5
echo "call: $SECONDS s"
