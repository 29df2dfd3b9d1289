#!/usr/bin/env bash
# Call 4 (the H100 call 3 kept warm; carry carry_qr.tar.xz, already unpacked
# there): racecheck parts 2-3 (both sweeps, which run the head_dim 64 general
# kernel) and the graph-replay memcheck and plan_batch dumps. As run, on one
# line; here one command a line.
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
[ -d gpu_bundle ] || tar -xJf carry_qr.tar.xz
RACECHECK_PARTS="2 3" GPU_SESSION_PACK=$OUT/r.tar.xz timeout 260 bash tools/gpu_session.sh $OUT/r racecheck
GPU_SESSION_PACK=$OUT/d.tar.xz timeout 40 bash tools/gpu_session.sh $OUT/d dumps
echo "call: $SECONDS s"
