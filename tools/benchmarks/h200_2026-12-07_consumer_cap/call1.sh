# Call 1 (carry_call1.tar.xz: build_variants.sh 1): A/B of main's kernels (base)
# against L2, L3, L4 (page ids 2 / 3 / 4 tiles ahead), three rounds, order
# rotated, on the head_dim 64 and 128 verify cases, decode, draft-extend,
# the page sweep, one-tile calls and the skewed / uniform pair.
tar -xJf carry_call1.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
export GPU_SESSION_PACK=$OUT/call1.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
AB_BENCH_LIMIT_S=75 bash tools/gpu_session.sh $OUT/r ab 3 \
  'DeviceCopy|Verify/heads:32_8/hd:(64|128|256)/batch:16/q:8/kv:8192/page:16/(iter|dtype)|Verify/heads:64_8/hd:128/batch:(1|16)/q:8/kv:(131072|32768)/page:16/iter|Decode/heads:32_8/hd:(64|128)/batch:(1|32)/q:1/kv:(131072|16384)/page:16/iter|DraftExtend/heads:32_8/hd:64/|PageSweep|OneTile/|Skewed.*q:1|Uniform.*q:1' \
  base L2 L3 L4
