#!/usr/bin/env bash
# Calls 4a-4c (the H100 that call 3 started, kept warm; same carry): what the
# session's last ~400 s of device time could still check on it: racecheck's
# parts 4-8, which call 2 did not run, of 66f206d's bundle, one command line
# each (as run, shown here together):
tar -xJf carry_f.tar.xz || exit 1
RACECHECK_PARTS="4 5" GPU_SESSION_PACK=$OUT/r.tar.xz timeout 330 bash tools/gpu_session.sh $OUT/r racecheck  # 4a, 98 s
RACECHECK_PARTS="7 8" GPU_SESSION_PACK=$OUT/r.tar.xz timeout 265 bash tools/gpu_session.sh $OUT/r racecheck  # 4b, 57 s
RACECHECK_PARTS="6" GPU_SESSION_PACK=$OUT/r.tar.xz timeout 210 bash tools/gpu_session.sh $OUT/r racecheck    # 4c, 111 s
