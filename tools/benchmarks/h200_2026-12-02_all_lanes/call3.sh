#!/usr/bin/env bash
# This session's third call. carry3.tar.xz: gpu_bundle/ = AL2 + MW3 (the
# merge kernel's warps per row a template constant; the candidate to land),
# ab/bench_AFS (2a916a2), ab/bench_MW2 (call 2's AL2 + MW, warps per row a
# variable), ab/bench_MW3 (the bundle's). An A/B over every case, five
# rounds; every GPU test of the bundle; the peer run.
set -o pipefail
tar -xJf carry3.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call3.tar.xz
bash tools/gpu_session.sh $OUT/r ab 5 '.' AFS MW2 MW3 tests peers
