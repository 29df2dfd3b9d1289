#!/usr/bin/env bash
# This session's first call. carry1.tar.xz: gpu_bundle/ = 05439ad (HL3, the
# kept partition), ab/bench_HEAD (the bundle's benchmark) and ab/bench_HLS
# (the probe /tmp/hls_probe.patch, in this folder as hls_probe.patch: head
# lanes at every head_dim, lane workers 2k and 2k + 1 placed on workers k
# and k + n / 2, the two CTAs of one SM). A/B of every case, three rounds
# (the LargeGraph cases beside Verify of the same shape in each build); the
# merge kernels' SASS counts; the peer run of HEAD.
set -o pipefail
tar -xJf carry1.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call1.tar.xz
bash tools/gpu_session.sh $OUT/r ab 3 . HEAD HLS sass HEAD MergeKernel peers
