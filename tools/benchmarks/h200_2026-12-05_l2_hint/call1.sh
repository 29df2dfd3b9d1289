# Call 1 (2026-12-05, the forty-sixth session). Carry: carry.tar.xz from
# `bash tools/ab_carry.sh --bundle 8729798 MAIN=bundle P128=d389744 P256=507d74a`
# (MAIN: main's kernels, `ab890cd`'s) with ab/one_tile_floor built by the nvcc
# line in tools/benchmarks/probes/one_tile_floor.cu.
# 1) A/B of the L2 prefetch-size hints (predictions.txt), 3 rounds over 21 cases.
# 2) The one-tile probe and our OneTile cases on this machine (the forty-fifth
#    session's call 6 ran on an H100; this asks for the bar's card).
tar -xJf carry.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c1_gpu.txt
AB_BENCH_LIMIT_S=90 GPU_SESSION_PACK=$OUT/c1.tar.xz timeout 420 bash tools/gpu_session.sh $OUT/c1 \
  ab 3 'Decode/heads:32_8/hd:128/batch:(1/q:1/kv:(32768|131072)|32/q:1/kv:16384|128/q:1/kv:(1024|4096))/page:16/iter|Decode/heads:32_8/hd:64/batch:(1/q:1/kv:131072|32/q:1/kv:16384)/page:16/iter|Decode/heads:32_8/hd:256/batch:32/q:1/kv:16384/page:16/iter|Decode/heads:32_32/hd:128/batch:16/q:1/kv:32768/page:16/iter|Verify/heads:(32|64)_8/hd:128/batch:(16|1)/q:8/kv:(8192|32768)/page:16/iter|Verify/heads:32_8/hd:128/batch:16/q:64/kv:8192/page:16/iter|DraftExtend/heads:32_8/hd:128/batch:(1|8)/q:4/kv:32768/page:16/iter|PageSweep/heads:32_8/hd:128/batch:32/q:1/kv:16384/page:1/|OneTile/heads:32_8/hd:128/batch:1/q:(1|8)/kv:64/page:16/l2:warm/iter' MAIN P128 P256
cp $OUT/c1/ab_table.txt $OUT/c1_ab_table.txt
for i in 1 2; do timeout 60 ab/one_tile_floor 2>&1 | tee $OUT/c1_one_tile_floor_$i.txt; done
echo "call: $SECONDS s"
