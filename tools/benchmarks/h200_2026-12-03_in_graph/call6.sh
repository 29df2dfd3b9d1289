#!/usr/bin/env bash
# MID (4d32578): A/B of ab/bench_HEAD (3f6b0d7's benchmark, the plans of
# 05439ad) and ab/bench_WU (the bundle's, MID's plans) on 32/32 decode and a
# few controls, three rounds; then the bundle's GPU tests and a peer run.
# Carry: gpu_bundle/ of 871e82a (4d32578's code) and the two benchmarks
# (carry6.tar.xz, 4.2 MB).
tar -xJf carry6.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/call6.tar.xz bash tools/gpu_session.sh $OUT/r \
  ab 3 '^BM_(DeviceCopy|PagedAttentionDecode/heads:32_32|PagedAttentionDecode/heads:32_8/hd:128/batch:(128|32)/|PagedAttentionVerify/heads:32_8/hd:128/batch:16/q:8/kv:8192)' HEAD WU \
  tests peers
