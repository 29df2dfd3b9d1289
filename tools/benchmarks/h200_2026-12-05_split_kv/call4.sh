# Call 4 (prepared, not run: no device time left). Carry from
#   bash tools/ab_carry.sh --bundle main BASE=607ec27 LAG0=59c1326
# (gpu_bundle at main: SMERGE's kernels). Why the split barriers cost ~10%
# (LAG0): first the member pairs' SASS of BASE and LAG0 (counts per kernel,
# seconds), then Nsight Compute of q64 verify b16 8k under each with the
# warps' stall reasons per issue (no_instruction would say the larger code
# misses the instruction cache; wait / long_scoreboard / barrier the
# barriers), then racecheck parts 1-3 of main's kernels (SMERGE has had
# memcheck only). Call 5 (call5.sh) runs racecheck parts 4-7.
tar -xJf carry.tar.xz || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
stalls=gpu__time_duration.sum,smsp__inst_executed.sum
for reason in no_instruction wait long_scoreboard barrier sleeping math_pipe_throttle \
  mio_throttle short_scoreboard dispatch_stall; do
  stalls+=,smsp__average_warps_issue_stalled_${reason}_per_issue_active.ratio
done
GPU_SESSION_PACK=$OUT/c4.tar.xz timeout 200 bash tools/gpu_session.sh $OUT/c4 \
  sass BASE 'Li2EE' sass LAG0 'Li2EE'
NCU_METRICS=$stalls GPU_SESSION_PACK=$OUT/c4.tar.xz timeout 200 bash tools/gpu_session.sh $OUT/c4 \
  ncu BASE 'Verify/heads:32_8/hd:128/batch:16/q:64/kv:8192/page:16/iter' \
  ncu LAG0 'Verify/heads:32_8/hd:128/batch:16/q:64/kv:8192/page:16/iter'
RACECHECK_PARTS="1 2 3" GPU_SESSION_PACK=$OUT/c4.tar.xz timeout $((580 - SECONDS)) \
  bash tools/gpu_session.sh $OUT/c4 racecheck
echo "call: $SECONDS s"
