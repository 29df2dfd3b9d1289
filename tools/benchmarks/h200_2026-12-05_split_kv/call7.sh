# Call 7 (2026-12-05, the forty-fourth session), on call 4's carry (bundle
# of main, c227295's kernels): the GPU test binaries and the graph-replay
# memcheck with the plan_batch dumps through check_dump.py (gpu_session.sh's
# new `dumps` step), asked of an H200: main's kernel test last ran on an
# H100 (the forty-second session), its dumps not since SMERGE.
[[ -d gpu_bundle ]] || tar -xJf carry.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/c7.tar.xz timeout 560 bash tools/gpu_session.sh $OUT/c7 tests dumps
