# Call 4 (carry.tar.xz as call 1): the peer run of every Verify, DraftExtend
# and Prefill case (ours re-run, filtered) with flex compiled by
# mode=max-autotune-no-cudagraphs, so the bars against the best peer are
# judged against an autotuned flex too. The progress log keeps each case's
# peer times if the run is cut at its limit.
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
mkdir -p $OUT/c4
PYTHONUNBUFFERED=1 timeout 560 python3 tools/peer_benchmark.py \
  --ours gpu_bundle/bin/attention_kernel_paged_attention_benchmark \
  --filter '^BM_PagedAttention(Verify|DraftExtend|Prefill)/' \
  --flex-mode max-autotune-no-cudagraphs --out $OUT/c4/peers_autotuned.json \
  > $OUT/c4/peers_autotuned_table.txt 2> $OUT/c4/peers_autotuned_log.txt
echo "peers rc=$?"
grep -E '^\[' $OUT/c4/peers_autotuned_log.txt | tail -3 | cut -c1-200
grep -E 'MISS|bars:|copy rate' $OUT/c4/peers_autotuned_table.txt | cut -c1-170
xz -9 $OUT/c4/peers_autotuned_log.txt
