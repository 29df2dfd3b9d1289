# Call 4 (carry4.tar.xz: the bundle of the modes-test fix): the modes test
# (its eager / replay comparison now with the capture's KV head pairing),
# memcheck of the kernel test, racecheck of the KV head pairs test (the new
# part of gpu_session.sh's racecheck) and the plan_batch dumps.
tar -xJf carry4.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
b=gpu_bundle/bin; mkdir -p $OUT/r
cat gpu_bundle/REVISION
$b/attention_kernel_paged_attention_modes_test --gtest_brief=1 > $OUT/r/modes_test.log 2>&1; echo "modes rc=$?"; tail -3 $OUT/r/modes_test.log
echo "== memcheck paged_attention_test"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 $b/attention_kernel_paged_attention_test --gtest_brief=1 > $OUT/r/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -4 $OUT/r/memcheck.log
echo "== racecheck KvHeadPairs"
timeout 200 compute-sanitizer --tool racecheck --print-limit 100000 $b/attention_kernel_paged_attention_test --gtest_filter='PagedAttentionGpuTest.KvHeadPairs*' > $OUT/r/racecheck.log 2>&1; echo "racecheck rc=$?"; grep -E 'PASSED|FAILED|RACECHECK SUMMARY' $OUT/r/racecheck.log
echo "== check_dump"
dumps=$(mktemp -d)
$b/tools_plan_batch --batch=tools/testdata/skewed_draft_extend_v2.json --run --dump_dir="$dumps/eager" > /dev/null 2>&1 &&
  $b/tools_plan_batch --batch=tools/testdata/graph_sequence.json --graph_max_batch=4 --run --dump_dir="$dumps/graph" > /dev/null 2>&1 &&
  python3 tools/check_dump.py "$dumps/eager" && for d in "$dumps"/graph/batch_*; do python3 tools/check_dump.py "$d"; done
echo "dumps rc=$?"
# A head_dim 64 decode batch (eager: KV head pairs), its dump checked too.
echo '{"mode": "DECODE", "page_size": 16, "seq_lens_convention": "includes_new_tokens", "seq_lens": [30000, 17, 4000], "seed": 9}' > $dumps/decode.json
$b/tools_plan_batch --batch=$dumps/decode.json --run --head_dim=64 --num_q_heads=32 --num_kv_heads=8 --dump_dir="$dumps/hd64" > $OUT/r/plan_batch_hd64.log 2>&1 && python3 tools/check_dump.py "$dumps/hd64"; echo "hd64 decode dump rc=$?"
cd $OUT && tar -cJf call4.tar.xz r
