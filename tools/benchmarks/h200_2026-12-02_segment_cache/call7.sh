#!/usr/bin/env bash
# This session's seventh call. carry7.tar.xz: gpu_bundle/ = MPI (244a661:
# MP's two-row merge path as an instantiation of its own), ab/bench_AL2
# (4ad12b8), ab/bench_MPI (the bundle's). An A/B of AL2 and MPI over every
# case, three rounds; every GPU test of the bundle; memcheck of the kernel
# test and of 200 graph replays (racecheck: the session's device time does
# not hold it; MP's bundle, whose two-row code MPI's is, ran it clean in
# call 4); the new `sass` step on MPI's merge kernels.
set -o pipefail
tar -xJf carry7.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call7.tar.xz
bash tools/gpu_session.sh $OUT/r ab 3 '.' AL2 MPI tests sass MPI MergeKernel
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
{
  echo "== memcheck paged_attention_test"
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 \
    gpu_bundle/bin/attention_kernel_paged_attention_test --gtest_brief=1 2>&1 | tail -3
  echo "== memcheck graph_replay_stress_test"
  STRESS_ITERATIONS=200 timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 \
    gpu_bundle/bin/attention_kernel_graph_replay_stress_test --gtest_brief=1 2>&1 | tail -4
} > $OUT/r/gpu_memcheck.txt 2>&1
cat $OUT/r/gpu_memcheck.txt
tar -cJf $OUT/call7.tar.xz -C $OUT r
