#!/usr/bin/env bash
# Writes ab/bench_NAME, an A/B variant that is another benchmark run as is
# or under environment settings (a probe's switch, e.g. PA_BENCH_PINNED_SPLITS),
# for tools/gpu_session.sh's `ab` step. Run from the repository root:
#
#   bash tools/ab_wrapper.sh NAME TARGET [VAR=VALUE]...
#
#   TARGET bundle   the bundle's benchmark (gpu_bundle/bin/..._paged_attention_benchmark)
#   TARGET OTHER    ab/bench_OTHER
#
# The wrapper finds its target relative to itself, so the carry unpacks anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
(($# >= 2)) || { sed -n 2,11p "$0"; exit 2; }
name=$1 target=$2; shift 2
if [[ $target == bundle ]]; then
  path='../gpu_bundle/bin/attention_kernel_paged_attention_benchmark'
else
  path="bench_$target"
fi
for setting in "$@"; do
  [[ $setting =~ ^[A-Z_][A-Z0-9_]*=[^\'\ ]*$ ]] ||
    { echo "ab_wrapper.sh: want VAR=VALUE without spaces or quotes, got '$setting'" >&2; exit 2; }
done
mkdir -p ab
printf '#!/bin/sh\n%sexec "$(dirname "$0")/%s" "$@"\n' "${*:+$* }" "$path" > "ab/bench_$name"
chmod +x "ab/bench_$name"
