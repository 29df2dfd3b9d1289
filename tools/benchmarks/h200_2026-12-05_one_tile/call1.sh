# Call 1 (2026-12-05, the forty-fifth session): the one-tile floor probe, our
# OneTile cases (three rounds of the bundle's benchmark, `8729798`), SDPA's
# graphs of the same call, then racecheck part 8 alone (its accounting on a
# real log). Carry: carry.tar.xz from `tools/ab_carry.sh --bundle 8729798
# MAIN=bundle` with ab/one_tile_floor (probe built by the nvcc line in its header).
[[ -d gpu_bundle ]] || tar -xJf carry.tar.xz || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c1_gpu.txt
ab/one_tile_floor 2>&1 | tee $OUT/c1_one_tile_floor.txt
python3 tools/benchmarks/h200_2026-12-05_one_tile/sdpa_one_tile.py 2>&1 | tee $OUT/c1_sdpa_one_tile.txt
GPU_SESSION_PACK=$OUT/c1.tar.xz timeout 200 bash tools/gpu_session.sh $OUT/c1 ab 3 OneTile MAIN
RACECHECK_PARTS="8" timeout 240 bash tools/gpu_session.sh $OUT/c1r racecheck 2>&1 | tail -8 | tee $OUT/c1_racecheck.txt
