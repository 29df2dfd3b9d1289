#!/usr/bin/env bash
# Call 3 (same machine, same carry): the graph replay stress test under
# memcheck and plan_batch's dumps checked by tools/check_dump.py (`dumps`),
# then racecheck's parts in order until the call's 220 s ran out (in part 5).
tar -xJf carry.tar.xz || exit 1; nvidia-smi --query-gpu=name --format=csv,noheader; GPU_SESSION_PACK=$OUT/d.tar.xz timeout 120 bash tools/gpu_session.sh $OUT/d dumps; GPU_SESSION_PACK=$OUT/r.tar.xz timeout 220 bash tools/gpu_session.sh $OUT/r racecheck; echo "call: $SECONDS s"
