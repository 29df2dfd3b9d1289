#!/usr/bin/env bash
# This session's second call. carry2.tar.xz: gpu_bundle/ = d77b40d (AFS
# landed), ab/bench_AFS (the bundle's benchmark) and ab/bench_MC (d77b40d
# with the merge kernel set once per process to the largest shared-memory
# carve-out, the one the attention kernel runs at). An A/B of AFS and MC on
# every one-request case, the batch-16 q8/q16 verify cases and prefill (the
# plans that launch the merge kernel, and decode b1 beside them), five
# rounds; then the sanitizers (racecheck in its four parts) and the dumps.
set -o pipefail
tar -xJf carry2.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call2.tar.xz
bash tools/gpu_session.sh $OUT/r ab 5 'DeviceCopy|batch:1/|batch:16/q:(8|16)/|Prefill' AFS MC checks
