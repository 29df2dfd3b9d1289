#!/usr/bin/env bash
# This session's second call. carry2.tar.xz: gpu_bundle/ = e671d34 (HL: head
# lanes in the partition; kernels as 49e8e74's), ab/bench_MPI (244a661's
# benchmark: the kernels and partition of 49e8e74) and ab/bench_HL (the
# bundle's benchmark). A/B of every case, three rounds, every GPU test with
# the new plans, then the peer run of the bundle.
set -o pipefail
tar -xJf carry2.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call2.tar.xz
bash tools/gpu_session.sh $OUT/r ab 3 . MPI HL tests peers
