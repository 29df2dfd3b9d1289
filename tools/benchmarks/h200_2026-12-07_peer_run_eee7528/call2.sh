#!/usr/bin/env bash
# Call 2 (device tool, kind nvidia-h200, on the H200 that call 1 kept warm;
# carry: carry.tar.xz, the same bundle of eee7528): every GPU test, then
# memcheck of the kernel test and the first racecheck part (`checks`; the
# call's 200 s for it ended inside racecheck's first part).
tar -xJf carry.tar.xz || exit 1; nvidia-smi --query-gpu=name --format=csv,noheader; GPU_SESSION_PACK=$OUT/t.tar.xz timeout 330 bash tools/gpu_session.sh $OUT/t tests; GPU_SESSION_PACK=$OUT/k.tar.xz timeout 200 bash tools/gpu_session.sh $OUT/k checks; echo "call: $SECONDS s"
