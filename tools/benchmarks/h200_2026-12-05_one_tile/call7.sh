# Call 7 (2026-12-05, the forty-fifth session): the probe as committed (call 6's
# kernels; the host's fill and reference share one pool_row, fresh data from a
# printed seed), once, beside our OneTile cases. Carry: carry_probe.tar.xz,
# carry.tar.xz.
tar -xJf carry_probe.tar.xz && tar -xJf carry.tar.xz --exclude=ab/one_tile_floor || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c7_gpu.txt
ab/one_tile_floor 2>&1 | tee $OUT/c7_one_tile_floor.txt
GPU_SESSION_PACK=$OUT/c7.tar.xz timeout 200 bash tools/gpu_session.sh $OUT/c7 ab 3 OneTile MAIN
cp $OUT/c7/ab_table.txt $OUT/c7_ab_table.txt
