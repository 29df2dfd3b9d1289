# Call 5 (prepared, not run): racecheck parts 4-7 of main's kernels (the tree
# cases, KV head pairs, GQA ratios, member pairs; ~10 min at most), on call
# 4's carry.
[[ -d gpu_bundle ]] || tar -xJf carry.tar.xz || exit 1
RACECHECK_PARTS="4 5 6 7" GPU_SESSION_PACK=$OUT/c5.tar.xz timeout 590 \
  bash tools/gpu_session.sh $OUT/c5 racecheck
