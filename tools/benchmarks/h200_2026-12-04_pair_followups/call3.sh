# Call 3 (carry.tar.xz: gpu_bundle of a537c41 and ab/probe_old_launcher_test,
# the kernel test built with a537c41's VariantFor check removed, i.e. the
# launcher before it): the member pairs' test must fail there (its
# caller-made offset of half the planner's leaves workers unrun), so the test
# can fail.
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
ab/probe_old_launcher_test --gtest_filter='*MemberPairs*' > $OUT/c3_old_launcher.txt 2>&1
echo "old launcher rc=$?"
grep -E "member_pair_offset [0-9]+, member_pair_unit|Failure|PASSED|FAILED" $OUT/c3_old_launcher.txt | sort | uniq -c | head -20
