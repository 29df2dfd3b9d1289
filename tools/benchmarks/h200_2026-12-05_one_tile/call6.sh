# Call 6 (2026-12-05, the forty-fifth session): `direct` with its S step's
# shared-memory reads as broadcasts (call 5: K through shared memory changed
# nothing; the query's float4 reads took 8 wavefronts each), twice, beside our
# OneTile cases on the same machine. Carry: carry_probe.tar.xz, carry.tar.xz.
tar -xJf carry_probe.tar.xz && tar -xJf carry.tar.xz --exclude=ab/one_tile_floor || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c6_gpu.txt
for i in 1 2; do ab/one_tile_floor 2>&1 | tee $OUT/c6_one_tile_floor_$i.txt; done
GPU_SESSION_PACK=$OUT/c6.tar.xz timeout 200 bash tools/gpu_session.sh $OUT/c6 ab 3 OneTile MAIN
cp $OUT/c6/ab_table.txt $OUT/c6_ab_table.txt
