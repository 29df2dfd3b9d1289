# Call 4 (carry_call3.tar.xz: build_variants.sh 3): A/B of main's benchmark
# (base) against whole units (W1) with the general kernel's head_dim 64 ring
# at 4 (main), 5 and 6 stages (W1S5, W1S6), three rounds, order rotated.
tar -xJf carry_call3.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
export GPU_SESSION_PACK=$OUT/call2.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
AB_BENCH_LIMIT_S=75 bash tools/gpu_session.sh $OUT/r ab 3 \
  'DeviceCopy|Verify/heads:32_8/hd:(64|128)/batch:16/q:8/kv:8192/page:16/(iter|dtype)|Verify/heads:64_8/hd:128/batch:16/q:8/kv:8192/page:16/iter' \
  base W1 W1S5 W1S6
