# Call 6 (2026-12-05, the forty-fourth session), on call 4's carry: call 4's
# racecheck part 1 reached its 120 s limit on an H100 after four cases
# (117 s) and never ran the kernel test's later targeted cases. The part now
# has 180 s and those cases are part 8 of their own (gpu_session.sh).
[[ -d gpu_bundle ]] || tar -xJf carry.tar.xz || exit 1
RACECHECK_PARTS="1 8" GPU_SESSION_PACK=$OUT/c6.tar.xz timeout 560 \
  bash tools/gpu_session.sh $OUT/c6 racecheck
