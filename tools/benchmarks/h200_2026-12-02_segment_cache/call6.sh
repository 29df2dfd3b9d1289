#!/usr/bin/env bash
# This session's sixth call: the new `sass` step of tools/gpu_session.sh, on
# call 5's carry (ab/bench_AL2: 4ad12b8, the kernel of 797b2d2): every
# attention and merge kernel's SASS and its counts, kept for the next
# session's reading of the decode kernel's boundary and the merge kernel.
set -o pipefail
tar -xJf carry5.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call6.tar.xz
bash tools/gpu_session.sh $OUT/r sass AL2
