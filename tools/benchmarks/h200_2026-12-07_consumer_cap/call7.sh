# Call 7 (carry_call7.tar.xz: build_variants.sh 7 at this commit): A/B of
# main's benchmark (main) against this commit's (F2), and of whole units with
# main's kernels (W1) against whole units with F2's (W1F2), three rounds,
# order rotated; then every GPU test of this commit's bundle, the
# graph-replay memcheck and the plan_batch dumps.
tar -xJf carry_call7.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
export GPU_SESSION_PACK=$OUT/call7.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
AB_BENCH_LIMIT_S=90 bash tools/gpu_session.sh $OUT/r ab 3 \
  'DeviceCopy|hd:64/|Verify/heads:32_8/hd:(128|256)/batch:16/q:8/kv:8192/page:16/(iter|dtype)|Decode/heads:32_8/hd:128/batch:(1|32)/q:1/kv:(131072|16384)/page:16/iter|OneTile/' \
  main F2
AB_BENCH_LIMIT_S=60 bash tools/gpu_session.sh $OUT/r2 ab 3 \
  'Verify/heads:32_8/hd:(64|128)/batch:16/q:8/kv:8192/page:16/(iter|dtype)' W1 W1F2
bash tools/gpu_session.sh $OUT/r tests dumps
(cd $OUT && tar -cJf $OUT/call7.tar.xz r r2)
