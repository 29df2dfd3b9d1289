#!/usr/bin/env bash
# gpu_session.sh's OUT at start, without a GPU: files older than one device
# call (another call's, left on the machine) are removed before any step,
# this call's own (a call script may run the script several times into one
# OUT) are kept.
set -uo pipefail
[[ -f tools/gpu_session.sh ]] || { echo "FAIL: tools/gpu_session.sh not found"; exit 1; }
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/stale_out.XXXXXX")
mkdir -p "$work/tree/tools" "$work/tree/gpu_bundle" "$work/path" "$work/out/sub"
cp tools/gpu_session.sh "$work/tree/tools/"
echo test-revision > "$work/tree/gpu_bundle/REVISION"
printf '#!/bin/sh\necho fake GPU\n' > "$work/path/nvidia-smi"
chmod +x "$work/path/nvidia-smi"
touch -d '20 minutes ago' "$work/out/ab_OLD_1.json"
touch -d '2 hours ago' "$work/out/sub/gpu_tests.log"
touch -d '5 minutes ago' "$work/out/ab_THIS_1.json"
touch "$work/out/gpu_checks.txt"

log=$(PATH="$work/path:$PATH" bash "$work/tree/tools/gpu_session.sh" "$work/out" 2>&1)
left=$(cd "$work/out" && find . -type f | sort | tr '\n' ' ')
failures=0
[[ $log == *"removing 2 files of an earlier call"* ]] ||
  { echo "FAIL: no removal line in: $log"; failures=$((failures + 1)); }
[[ $left == "./ab_THIS_1.json ./gpu_checks.txt " ]] ||
  { echo "FAIL: left in OUT: '$left'"; failures=$((failures + 1)); }
log=$(PATH="$work/path:$PATH" bash "$work/tree/tools/gpu_session.sh" "$work/out" 2>&1)
[[ $log != *removing* ]] || { echo "FAIL: removed this call's files: $log"; failures=$((failures + 1)); }
echo "$failures failed"
((failures == 0))
