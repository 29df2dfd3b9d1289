#!/usr/bin/env bash
# ALIAS probe (timing only): ab/bench_ALIAS is the benchmark of b323ca3 with
# alias_probe.patch: AliasN cases where request i reads the pages of request
# i - i % N, so N requests of 16 packed rows read the same K/V, as 16-row
# halves (quarters at 64/8) of one verify unit would, beside the Verify cases
# of the same distinct bytes. Carry: gpu_bundle/lib, gpu_bundle/REVISION,
# ab/bench_ALIAS (carry2.tar.xz, 2.4 MB). Three rounds in one process each.
tar -xJf carry2.tar.xz && export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib && mkdir -p $OUT/r &&
  for r in 1 2 3; do
    ab/bench_ALIAS --benchmark_filter='^BM_(DeviceCopy|PagedAttentionAlias|PagedAttentionVerify/heads:(32_8/hd:64/batch:16|32_8/hd:128/batch:(16|64|1)/q:8|64_8/hd:128/batch:(16|64|1)/q:8))' \
      --benchmark_out=$OUT/r/alias_$r.json --benchmark_out_format=json 2>$OUT/r/alias_$r.err |
      grep -E "median|Copy" | awk '{print $1, $2, $3}'
  done
