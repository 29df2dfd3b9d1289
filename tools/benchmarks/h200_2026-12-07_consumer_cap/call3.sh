# Call 3 (carry_call3.tar.xz: build_variants.sh 3): A/B of main's benchmark
# (base) against plans of whole units (W1), two pieces per unit (W2) and the
# patched binary balancing as main does (W0), three rounds, order rotated.
tar -xJf carry_call3.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
export GPU_SESSION_PACK=$OUT/call1.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
AB_BENCH_LIMIT_S=75 bash tools/gpu_session.sh $OUT/r ab 3 \
  'DeviceCopy|Verify/heads:32_8/hd:(64|128)/batch:16/q:8/kv:8192/page:16/(iter|dtype)|Verify/heads:64_8/hd:128/batch:16/q:8/kv:8192/page:16/iter|Decode/heads:32_8/hd:64/batch:32/q:1/kv:16384/page:16/iter|DraftExtend/heads:32_8/hd:64/batch:32/q:2/kv:4096' \
  base W0 W1 W2
