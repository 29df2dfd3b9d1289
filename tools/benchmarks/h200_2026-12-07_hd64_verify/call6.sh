# Call 6 (carry2.tar.xz, on call 5's machine): racecheck part 8 of main's
# bundle (the kernel test's later targeted cases), which call 5 left for a
# call of its own.
tar -xJf carry2.tar.xz && export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib GPU_SESSION_PACK=$OUT/call6.tar.xz && RACECHECK_PARTS="8" bash tools/gpu_session.sh $OUT/r racecheck 2>&1 | tee $OUT/call6_stdout.log
