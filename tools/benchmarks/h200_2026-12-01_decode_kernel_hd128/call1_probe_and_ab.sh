#!/usr/bin/env bash
# Call 1: bulk-reader probe + cuDNN on the same shapes, then A/B F S DP SDP.
set -o pipefail
tar -xJf gpu_bundle.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
S=$SECONDS
timeout 150 gpu_bundle/bin/attention_kernel_kv_read_pattern_benchmark --benchmark_out=$OUT/kv_read_pattern.json \
  --benchmark_out_format=json 2>&1 | grep -E 'median|Copy' | sed 's/iterations:1\/repeats:3\/manual_time_median//' | cut -c1-140
echo "probe $((SECONDS - S)) s"
S=$SECONDS
PYTHONUNBUFFERED=1 timeout 150 python3 tools/peer_benchmark.py --ours gpu_bundle/bin/attention_kernel_paged_attention_benchmark \
  --out $OUT/peers_probe.json --no-flex --filter 'DeviceCopy|Decode/heads:32_8/hd:128/batch:(32/q:1/kv:16384|1/q:1/kv:131072|128/q:1/kv:1024)/' \
  --context git_revision=SDP-uncommitted > $OUT/peers_probe_table.txt 2>&1
echo "peers rc=$? $((SECONDS - S)) s"; grep -E '^(Decode|copy)' $OUT/peers_probe_table.txt | cut -c1-160
S=$SECONDS
F='^BM_(DeviceCopy|PagedAttention(Decode|DraftExtend|Verify|OneTile|Skewed|Uniform)/)'
mkdir -p /tmp/abj
timeout 240 bash ab/run_ab.sh /tmp/abj "$F" 3 F S DP SDP
echo "ab $((SECONDS - S)) s"
python3 ab/ab_table.py /tmp/abj F S DP SDP > $OUT/ab_table.txt
sed 's/page:16//; s/heads://; s/   */ /g' $OUT/ab_table.txt
tar -cJf $OUT/ab_json.tar.xz -C /tmp/abj .
