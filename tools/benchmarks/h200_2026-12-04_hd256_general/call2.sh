# Call 2 (carry.tar.xz: the bundle of 784ca74, `RS`; ab/bench_RS = its
# benchmark, ab/bench_PR48 = ProducerRegisters 48): A/B, peer run, dumps.
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
b=gpu_bundle/bin; mkdir -p $OUT/r
GPU_SESSION_PACK=$OUT/s.tar.xz bash tools/gpu_session.sh $OUT/s ab 3 'hd:256' RS PR48 2>&1 | tail -12
GPU_SESSION_PACK=$OUT/p.tar.xz bash tools/gpu_session.sh $OUT/p peers 2>&1 | tail -6
dumps=$(mktemp -d)
echo '{"mode": "TARGET_VERIFY", "page_size": 16, "seq_lens_convention": "prefix_only", "seq_lens": [20000, 5, 3000], "num_draft_tokens": 8, "seed": 5}' > $dumps/verify.json
$b/tools_plan_batch --batch=$dumps/verify.json --run --head_dim=256 --num_q_heads=32 --num_kv_heads=8 --dump_dir="$dumps/verify" > $OUT/r/plan_batch_verify.log 2>&1 && python3 tools/check_dump.py "$dumps/verify"; echo "hd256 32/8 verify q8 dump rc=$?"
$b/tools_plan_batch --batch=tools/fuzz_corpus/batch_json/tree_verify.json --run --head_dim=256 --num_q_heads=32 --num_kv_heads=8 --dump_dir="$dumps/tree" > $OUT/r/plan_batch_tree.log 2>&1 && python3 tools/check_dump.py "$dumps/tree"; echo "hd256 32/8 tree verify dump rc=$?"
echo '{"mode": "DRAFT_EXTEND_V2", "page_size": 16, "seq_lens_convention": "prefix_only", "seq_lens": [20000, 5, 3000], "new_tokens": [4, 4, 4], "num_draft_tokens": 4, "seed": 7}' > $dumps/extend.json
$b/tools_plan_batch --batch=$dumps/extend.json --run --head_dim=256 --num_q_heads=32 --num_kv_heads=8 --dump_dir="$dumps/extend" > $OUT/r/plan_batch_extend.log 2>&1 && python3 tools/check_dump.py "$dumps/extend"; echo "hd256 32/8 DRAFT_EXTEND_V2 q4 dump rc=$?"
cd $OUT && tar -cJf call2.tar.xz r
