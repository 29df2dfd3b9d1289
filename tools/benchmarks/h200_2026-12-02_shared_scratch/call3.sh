#!/usr/bin/env bash
# This session's third call. carry3.tar.xz: gpu_bundle/ = d77b40d (AFS
# landed; MC dropped after call 2). The peer run, then racecheck again with
# every hazard printed (call 2's stopped at 100 of 332-560 per part).
set -o pipefail
tar -xJf carry3.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call3.tar.xz
bash tools/gpu_session.sh $OUT/r peers racecheck
