# Call 8 (carry.tar.xz: the bundle of 9d13c8d = c5cb2eb's code): the head_dim
# 256 decode dumps of call 7 again with a batch under plan_batch's 2 GiB host
# limit (call 7's 30000-key request needed 3 GB and was refused).
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
b=gpu_bundle/bin; mkdir -p $OUT/r
cat gpu_bundle/REVISION
dumps=$(mktemp -d)
echo '{"mode": "DECODE", "page_size": 16, "seq_lens_convention": "includes_new_tokens", "seq_lens": [16000, 17, 4000], "seed": 9}' > $dumps/decode.json
for heads in 64 32; do
  $b/tools_plan_batch --batch=$dumps/decode.json --run --head_dim=256 --num_q_heads=$heads --num_kv_heads=8 --dump_dir="$dumps/hd256_$heads" > $OUT/r/plan_batch_hd256_$heads.log 2>&1 && python3 tools/check_dump.py "$dumps/hd256_$heads"; echo "hd256 $heads/8 decode dump rc=$?"
done
