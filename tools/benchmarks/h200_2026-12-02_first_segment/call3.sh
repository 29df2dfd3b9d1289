#!/usr/bin/env bash
# This session's third call. carry3.tar.xz: gpu_bundle/ = NF's bundle
# (1450ea5 + NF, the spread merge's waiting pieces without their second
# fence, + ConfiguredVariant's [[fallthrough]] and LaunchKvRead's chunk count
# written as / 2 / 16). What NF needs before it lands: every GPU test, the
# sanitizer and dump checks, and a peer run (the bars at this HEAD).
set -o pipefail
tar -xJf carry3.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call3.tar.xz
bash tools/gpu_session.sh $OUT/r tests checks peers
