#!/usr/bin/env bash
# The review commit's bundle (2816222): the full GPU test suite.
set -o pipefail
tar -xJf gpu_bundle.tar.xz || exit 1
cat gpu_bundle/REVISION
S=$SECONDS
timeout 200 bash gpu_bundle/run_tests.sh > $OUT/gpu_tests_review.log 2>&1; echo "tests rc=$? $((SECONDS - S)) s"
grep -hE "^\[  (PASSED|FAILED) |replays matched|Failure|SEED|passed, " $OUT/gpu_tests_review.log | sort | uniq -c | head -20
grep -hE "ERRSTAT" $OUT/gpu_tests_review.log | awk '{print $NF}' | sort -n | tail -1 | sed 's/^/worst error ratio /'
