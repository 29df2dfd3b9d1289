#!/usr/bin/env bash
# This session's first call. carry1.tar.xz: gpu_bundle/ = f44a18f + AFS
# (fold slots in the decode kernel's scratch, the barrier fold's one helper,
# IssueQueryTile whole again), ab/bench_EV (aac7011), ab/bench_EVP (aac7011
# with AF's 17 KB of fold slots added, unused), ab/bench_AFQ (f44a18f's
# kernel code) and ab/bench_AFS (the bundle's). An A/B over every case, five
# rounds, then every GPU test of the AFS bundle.
set -o pipefail
tar -xJf carry1.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call1.tar.xz
bash tools/gpu_session.sh $OUT/r ab 5 '.' EV EVP AFQ AFS tests
