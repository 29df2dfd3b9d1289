# Call 5 (carry.tar.xz as call 1): the five head_dim 64 and 256 verify and
# draft-extend cases that call 4's limit cut off, ours re-run beside flex
# compiled by mode=max-autotune-no-cudagraphs.
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
mkdir -p $OUT/c5
PYTHONUNBUFFERED=1 timeout 240 python3 tools/peer_benchmark.py \
  --ours gpu_bundle/bin/attention_kernel_paged_attention_benchmark \
  --filter '^BM_PagedAttention(Verify|DraftExtend)/heads:32_8/hd:(64|256)/' \
  --flex-mode max-autotune-no-cudagraphs --out $OUT/c5/peers_autotuned_hd64_hd256.json \
  > $OUT/c5/peers_autotuned_hd64_hd256_table.txt 2> $OUT/c5/peers_autotuned_hd64_hd256_log.txt
echo "peers rc=$?"
grep -E '^\[' $OUT/c5/peers_autotuned_hd64_hd256_log.txt | cut -c1-200
grep -E '^(Verify|DraftExtend)|bars:|copy rate' $OUT/c5/peers_autotuned_hd64_hd256_table.txt | cut -c1-170
xz -9 $OUT/c5/peers_autotuned_hd64_hd256_log.txt
