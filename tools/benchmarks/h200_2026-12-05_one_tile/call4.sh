# Call 4 (2026-12-05, the forty-fifth session): the record run, everything on
# one machine in one call: the probe (final form, with the S stamp) twice, our
# OneTile cases (three rounds, the bundle of `8729798`), SDPA's graphs.
# Carry: carry_probe.tar.xz (ab/one_tile_floor) and carry.tar.xz (call 1's).
tar -xJf carry_probe.tar.xz && tar -xJf carry.tar.xz --exclude=ab/one_tile_floor || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c4_gpu.txt
for i in 1 2; do ab/one_tile_floor 2>&1 | tee $OUT/c4_one_tile_floor_$i.txt; done
python3 tools/benchmarks/h200_2026-12-05_one_tile/sdpa_one_tile.py 2>&1 | tee $OUT/c4_sdpa_one_tile.txt
GPU_SESSION_PACK=$OUT/c4.tar.xz timeout 200 bash tools/gpu_session.sh $OUT/c4 ab 3 OneTile MAIN
cp $OUT/c4/ab_table.txt $OUT/c4_ab_table.txt
