# Call 3 (carry.tar.xz as call 1; ours from call 1's JSON, not re-run): flex
# compiled with mode=max-autotune-no-cudagraphs (each shape autotunes its
# block sizes) beside the default compile, on the cases where flex came
# closest to ours in call 1 and on prefill, one peer_benchmark.py run per
# case, closest first, so a run cut by the time limit keeps the ones before.
tar -xJf carry.tar.xz || exit 1
d=tools/benchmarks/h200_2026-12-04_flex_all_cases
mkdir -p $OUT/c3
i=0
started=$SECONDS
for f in 'Verify/heads:32_32/hd:128/batch:16/q:8/kv:8192/page:16/iter' \
         'DraftExtend/heads:32_8/hd:128/batch:64/q:4/kv:4096/page:16/iter' \
         'Verify/heads:32_8/hd:128/batch:64/q:8/kv:4096/page:16/iter' \
         'Prefill/heads:32_8/hd:128/batch:4/q:512/kv:4096/page:16/iter' \
         'DraftExtend/heads:64_8/hd:128/batch:32/q:4/kv:4096/page:16/iter' \
         'Verify/heads:32_8/hd:128/batch:16/q:8/kv:8192/page:16/iter' \
         'Prefill/heads:32_8/hd:128/batch:1/q:2048/kv:16384/page:16/iter'; do
  i=$((i + 1))
  left=$((540 - (SECONDS - started)))
  [ $left -lt 30 ] && { echo "case $i: no time left"; break; }
  PYTHONUNBUFFERED=1 timeout $left python3 tools/peer_benchmark.py --ours $d/peers_a6ed86f.json \
    --filter "$f" --flex-mode max-autotune-no-cudagraphs --out $OUT/c3/autotune_$i.json \
    > $OUT/c3/autotune_$i.txt 2> $OUT/c3/autotune_$i.log
  echo "case $i rc=$? at $((SECONDS - started)) s"
  grep -E '^\[' $OUT/c3/autotune_$i.log | cut -c1-200
done
