#!/usr/bin/env bash
# This session's first call. carry1.tar.xz: gpu_bundle/ = cab8396 (AL: every
# consumer lane releases its own reads), ab/bench_AFS (2a916a2, the landed
# kernel), ab/bench_AL (the bundle's), ab/bench_GS (AL with one query tile in
# the general kernels: a probe of their shared memory), ab/bench_MW and
# ab/test_MW (AL with the merge kernel's rows over one, two or four warps).
# An A/B over every case, five rounds; every GPU test of the AL bundle; MW's
# kernel test.
set -o pipefail
tar -xJf carry1.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call1.tar.xz
bash tools/gpu_session.sh $OUT/r ab 5 '.' AFS AL GS MW tests
LD_LIBRARY_PATH=$PWD/gpu_bundle/lib timeout 150 ab/test_MW > $OUT/r/test_MW.log 2>&1
echo "test_MW rc=$?"
grep -E '^\[  (PASSED|FAILED) |Failure|ERRSTAT' $OUT/r/test_MW.log | awk '{print $1, $2, $3, $NF}' | sort | uniq -c | head
tar -cJf $OUT/call1.tar.xz -C $OUT r
