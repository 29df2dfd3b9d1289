#!/usr/bin/env bash
# Call 1b (device tool, the H100 that call 1 got, still warm; carry:
# carry.tar.xz = gpu_bundle.tar.xz of 815b0ac): the peer script's live path
# with tools/issue_bars.py on the GPU machine's python3, over a few cases
# (cold and L2-warm decode b64 4k, the skewed and uniform pairs), without
# flex. Not a bar run (an H100): it shows the script runs there and judges
# the warm case by no bar. (Run as one command line; the first try lacked
# LD_LIBRARY_PATH, which gpu_session.sh sets.)
set -u
tar -xJf carry.tar.xz && export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib &&
  timeout 300 python3 tools/peer_benchmark.py \
    --ours gpu_bundle/bin/attention_kernel_paged_attention_benchmark \
    --filter 'Decode/heads:32_8/hd:128/batch:(1|64)/q:1/kv:4096/page:16|Skewed|Uniform' \
    --no-flex --out $OUT/peers_probe.json > $OUT/peers_probe_table.txt 2> $OUT/peers_probe_log.txt
echo rc=$?
