# Call 6 (carry_call6.tar.xz: build_variants.sh 6): A/B of main's benchmark
# against F (the hd64_verify folder's general-kernel-only softmax form) and X
# (skip_attend.patch: the single-tile loop's math skipped, wrong results),
# balanced (F, X) and on whole units (W1F, W1X, beside W1), three rounds,
# order rotated.
tar -xJf carry_call6.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
export GPU_SESSION_PACK=$OUT/call6.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
AB_BENCH_LIMIT_S=75 bash tools/gpu_session.sh $OUT/r ab 3 \
  'DeviceCopy|Verify/heads:32_8/hd:(64|128)/batch:16/q:8/kv:8192/page:16/(iter|dtype)|Verify/heads:64_8/hd:128/batch:16/q:8/kv:8192/page:16/iter|Decode/heads:32_8/hd:64/batch:32/q:1/kv:16384/page:16/iter' \
  base W1 W1X W1F X F
