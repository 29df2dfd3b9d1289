# Call 2 (the carry of call 1, which also holds ab/test_TURNS: the kernel
# test built at ovl2-turns' head, OVL2T): whether the turns give the
# one-group bits and never hang (rc 124 would be a hang: every case here
# takes seconds), then memcheck and racecheck of the member pairs' test for
# TURNS and memcheck of it for NEW (the bundle).
[[ -d gpu_bundle ]] || tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
source tools/benchmarks/h200_2026-12-04_ovl2_capped/sanitize.sh
timeout 120 ab/test_TURNS \
  --gtest_filter='*MemberPairs*:*FewWorkers*:*Skewed*:*RepeatedRuns*:*GraphReplay*:*PairedKernels*' \
  > "$OUT/turns_kernel_test.txt" 2>&1
echo "TURNS kernel tests rc=$?"
grep -hE "^\[  (PASSED|FAILED) |Failure" "$OUT/turns_kernel_test.txt" | sort | uniq -c | head
sanitize memcheck 60 ab/test_TURNS '*MemberPairs*' TURNS
sanitize racecheck 200 ab/test_TURNS '*MemberPairs*' TURNS
sanitize memcheck 60 gpu_bundle/bin/attention_kernel_paged_attention_test '*MemberPairs*' NEW
