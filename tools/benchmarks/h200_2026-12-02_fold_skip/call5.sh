#!/usr/bin/env bash
# This session's fifth call: is head_dim 64's lower decode rate the pool
# layout's or the kernel's? Our head_dim 64 decode reads 4.15 TB/s at b32 16k
# where head_dim 128 reads 4.40 (call1, call3), and its three near-miss bars
# (decode vs cuDNN 0.92-0.94, verify E 0.834-0.866, b1 128k E 0.84-0.87)
# follow from that. The reader probe (kv_read_pattern_benchmark, now with
# /hd:64 cases: 128-byte pieces of 1 KB token rows) reads the same pool in
# each order with no math; beside it, our decode at both head_dims on the
# same machine. From the repository root with carry5.tar.xz (ab/kv_read_probe
# built from this session's tree, ab/bench_HEAD = 1d8a22c's benchmark, the
# bundle's libraries).
set -o pipefail
tar -xJf carry5.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
mkdir -p $OUT/r
ab/kv_read_probe --benchmark_filter='KvReadDeviceCopy|copy:loads/batch:32/kv:16384/' \
  --benchmark_out=$OUT/r/kv_read_pattern_hd64.json --benchmark_out_format=json 2>&1 |
  grep -E 'median|rror' | cut -c1-150 | tee $OUT/r/kv_read_pattern_hd64_table.txt
ab/bench_HEAD --benchmark_filter='Decode/heads:32_8/hd:(64|128)/batch:32/q:1/kv:16384/' \
  --benchmark_out=$OUT/r/decode_b32_16k.json --benchmark_out_format=json 2>&1 |
  grep -E 'median|rror' | cut -c1-150 | tee -a $OUT/r/kv_read_pattern_hd64_table.txt
