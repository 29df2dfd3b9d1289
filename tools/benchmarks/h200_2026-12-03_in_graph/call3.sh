#!/usr/bin/env bash
# The OneTileInGraph cases (16 one-tile calls captured in one graph, time per
# call) beside OneTile (a one-node graph per replay), five rounds, then every
# GPU test of the bundle (testing/gpu_attention.cc's Capture now takes a call
# count). Carry: gpu_bundle/ of b323ca3 + the benchmark change, and
# ab/bench_IG, its benchmark (carry3.tar.xz, 4.1 MB).
tar -xJf carry3.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/call3.tar.xz bash tools/gpu_session.sh $OUT/r \
  ab 5 '^BM_(DeviceCopy|PagedAttention(OneTile|OneTileInGraph)/|PagedAttentionDecode/heads:32_8/hd:128/batch:1/q:1/kv:4096/page:16/l2:warm)' IG \
  tests
