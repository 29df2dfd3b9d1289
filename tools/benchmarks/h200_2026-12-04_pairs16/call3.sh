# Call 3 (carry.tar.xz: the bundle of 970053e): memcheck of the kernel test,
# racecheck of the KV head pairs test (now with 16-row pair units: 32/8 q2,
# 64/8 q1, 16/8 q4, 8/8 q8; one request and graph replays at 64/8 too), and
# the plan_batch dumps, with two head_dim 64 batches that pair in 16-row
# units (64/8 decode; 32/8 DRAFT_EXTEND_V2 of 2 new tokens).
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
b=gpu_bundle/bin; mkdir -p $OUT/r
cat gpu_bundle/REVISION
echo "== memcheck paged_attention_test"
timeout 170 compute-sanitizer --tool memcheck --error-exitcode 1 $b/attention_kernel_paged_attention_test --gtest_brief=1 > $OUT/r/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -3 $OUT/r/memcheck.log
echo "== racecheck KvHeadPairs"
timeout 300 compute-sanitizer --tool racecheck --print-limit 100000 $b/attention_kernel_paged_attention_test --gtest_filter='PagedAttentionGpuTest.KvHeadPairs*' > $OUT/r/racecheck.log 2>&1; echo "racecheck rc=$?"; grep -E 'PASSED|FAILED|RACECHECK SUMMARY' $OUT/r/racecheck.log
echo "== check_dump"
dumps=$(mktemp -d)
$b/tools_plan_batch --batch=tools/testdata/skewed_draft_extend_v2.json --run --dump_dir="$dumps/eager" > /dev/null 2>&1 &&
  $b/tools_plan_batch --batch=tools/testdata/graph_sequence.json --graph_max_batch=4 --run --dump_dir="$dumps/graph" > /dev/null 2>&1 &&
  python3 tools/check_dump.py "$dumps/eager" && for d in "$dumps"/graph/batch_*; do python3 tools/check_dump.py "$d"; done
echo "dumps rc=$?"
echo '{"mode": "DECODE", "page_size": 16, "seq_lens_convention": "includes_new_tokens", "seq_lens": [30000, 17, 4000], "seed": 9}' > $dumps/decode.json
$b/tools_plan_batch --batch=$dumps/decode.json --run --head_dim=64 --num_q_heads=64 --num_kv_heads=8 --dump_dir="$dumps/hd64_decode" > $OUT/r/plan_batch_hd64_decode.log 2>&1 && python3 tools/check_dump.py "$dumps/hd64_decode"; echo "hd64 64/8 decode dump rc=$?"
echo '{"mode": "DRAFT_EXTEND_V2", "page_size": 16, "seq_lens_convention": "prefix_only", "seq_lens": [20000, 5, 3000], "new_tokens": [2, 2, 2], "num_draft_tokens": 2, "seed": 3}' > $dumps/extend.json
$b/tools_plan_batch --batch=$dumps/extend.json --run --head_dim=64 --num_q_heads=32 --num_kv_heads=8 --dump_dir="$dumps/hd64_extend" > $OUT/r/plan_batch_hd64_extend.log 2>&1 && python3 tools/check_dump.py "$dumps/hd64_extend"; echo "hd64 32/8 draft extend q2 dump rc=$?"
# Segments are [worker, request, kv_head, ...]: pairs name KV heads 0..3 of 8.
for f in $OUT/r/plan_batch_hd64_*.log; do
  python3 -c "import json,sys; d=json.loads(open(sys.argv[1]).readline()); print(sys.argv[1].split('/')[-1], 'max kv_head', max(s[2] for s in d['work_plan']['segments']))" "$f"
done
cd $OUT && tar -cJf call3.tar.xz r
