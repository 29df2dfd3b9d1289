# Call 7 (carry.tar.xz: the bundle of c5cb2eb, `D8`): the peer run, memcheck
# of the kernel test, racecheck of the head_dim 256 decode kernel's cases
# (the bits test, the few-workers test, the head_dim 256 sweep at page 16),
# and plan_batch dumps of head_dim 256 decode batches (8-row units: 64/8;
# 4-row: 32/8) through check_dump.py.
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
b=gpu_bundle/bin; mkdir -p $OUT/r
cat gpu_bundle/REVISION
GPU_SESSION_PACK=$OUT/peers.tar.xz bash tools/gpu_session.sh $OUT/p peers 2>&1 | tail -8
echo "== memcheck paged_attention_test"
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 $b/attention_kernel_paged_attention_test --gtest_brief=1 > $OUT/r/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -3 $OUT/r/memcheck.log
echo "== racecheck head_dim 256 decode"
timeout 200 compute-sanitizer --tool racecheck --print-limit 100000 $b/attention_kernel_paged_attention_test --gtest_filter='*DecodeKernelMatchesGeneralKernelBitForBit*:*FewWorkersRunManySegmentsEach*:*Sweep*hd256_page16*' > $OUT/r/racecheck.log 2>&1; echo "racecheck rc=$?"; grep -E 'PASSED|FAILED|RACECHECK SUMMARY' $OUT/r/racecheck.log
echo "== check_dump head_dim 256"
dumps=$(mktemp -d)
echo '{"mode": "DECODE", "page_size": 16, "seq_lens_convention": "includes_new_tokens", "seq_lens": [30000, 17, 4000], "seed": 9}' > $dumps/decode.json
for heads in 64 32; do
  $b/tools_plan_batch --batch=$dumps/decode.json --run --head_dim=256 --num_q_heads=$heads --num_kv_heads=8 --dump_dir="$dumps/hd256_$heads" > $OUT/r/plan_batch_hd256_$heads.log 2>&1 && python3 tools/check_dump.py "$dumps/hd256_$heads"; echo "hd256 $heads/8 decode dump rc=$?"
done
echo '{"mode": "DRAFT_EXTEND_V2", "page_size": 16, "seq_lens_convention": "prefix_only", "seq_lens": [20000, 5, 3000], "new_tokens": [2, 2, 2], "num_draft_tokens": 2, "seed": 3}' > $dumps/extend.json
$b/tools_plan_batch --batch=$dumps/extend.json --run --head_dim=256 --num_q_heads=32 --num_kv_heads=8 --dump_dir="$dumps/hd256_extend" > $OUT/r/plan_batch_hd256_extend.log 2>&1 && python3 tools/check_dump.py "$dumps/hd256_extend"; echo "hd256 32/8 DRAFT_EXTEND_V2 q2 dump rc=$?"
cd $OUT && tar -cJf call7.tar.xz r
