#!/usr/bin/env bash
# Runs dashboard_test.py with Debian's Python (it sees python3-matplotlib; the
# python3 on PATH may not). Bazel runs this from the runfiles root, where
# tools/dashboard.py and tools/dashboard/testdata/ are.
set -euo pipefail
exec /usr/bin/python3 tools/dashboard/dashboard_test.py "$@"
