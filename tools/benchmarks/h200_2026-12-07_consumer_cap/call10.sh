# Call 10 (carry_call7.tar.xz, on call 9's machine): racecheck parts 2, 3, 5,
# 6, 7 and 8 of F2's bundle; with call 8's part 1 and call 9's part 4, every
# part.
[[ -d gpu_bundle ]] || tar -xJf carry_call7.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib GPU_SESSION_PACK=$OUT/call10.tar.xz
RACECHECK_PARTS="2 3 5 6 7 8" bash tools/gpu_session.sh $OUT/r racecheck 2>&1 | tee $OUT/call10_stdout.log
