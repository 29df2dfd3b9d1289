#!/usr/bin/env bash
# partition_diff with the working tree's partition on both sides (BUILD): 3000
# random batches must plan the same bit for bit, and every benchmark shape
# must plan (bench exits 1 if one does not).
set -euo pipefail
tool=tools/partition_diff/partition_diff
"$tool" 3000 7
"$tool" bench
