#!/usr/bin/env bash
# compact_benchmark_json.py on a small Google Benchmark document: it keeps the
# context, the median and stddev aggregates and the rows of benchmarks without
# aggregates, drops repetitions and mean/cv aggregates, is idempotent (--check
# passes on its output), and refuses what is not benchmark JSON.
set -euo pipefail
tool=tools/compact_benchmark_json.py
dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/compact.XXXXXX")
cat > "$dir/run.json" <<'JSON'
{
  "context": {"date": "2026-12-02T04:00:00+00:00", "git_revision": "abc1234", "copy_tbps": "4.2"},
  "benchmarks": [
    {"name": "BM_DeviceCopy/manual_time", "run_name": "BM_DeviceCopy/manual_time", "run_type": "iteration", "real_time": 1.0},
    {"name": "BM_X/a:1", "run_name": "BM_X/a:1", "run_type": "iteration", "repetition_index": 0, "real_time": 10.0},
    {"name": "BM_X/a:1", "run_name": "BM_X/a:1", "run_type": "iteration", "repetition_index": 1, "real_time": 12.0},
    {"name": "BM_X/a:1_mean", "run_name": "BM_X/a:1", "run_type": "aggregate", "aggregate_name": "mean", "real_time": 11.0},
    {"name": "BM_X/a:1_median", "run_name": "BM_X/a:1", "run_type": "aggregate", "aggregate_name": "median", "real_time": 11.0},
    {"name": "BM_X/a:1_stddev", "run_name": "BM_X/a:1", "run_type": "aggregate", "aggregate_name": "stddev", "real_time": 1.4},
    {"name": "BM_X/a:1_cv", "run_name": "BM_X/a:1", "run_type": "aggregate", "aggregate_name": "cv", "real_time": 0.1},
    {"name": "Peer_sdpa/a:1", "run_name": "Peer_sdpa/a:1", "run_type": "iteration", "real_time": 20.0}
  ]
}
JSON
cp "$dir/run.json" "$dir/original.json"
if python3 "$tool" --check "$dir/run.json" > /dev/null; then
  echo "FAIL: --check passed on a document with repetitions" >&2; exit 1
fi
python3 "$tool" "$dir/run.json" > /dev/null
python3 "$tool" --check "$dir/run.json" || { echo "FAIL: not idempotent" >&2; exit 1; }
python3 - "$dir/original.json" "$dir/run.json" <<'PY'
import json, sys
original, compact = (json.load(open(p)) for p in sys.argv[1:])
assert compact["context"] == original["context"], compact["context"]
names = [(b["name"], b.get("repetition_index")) for b in compact["benchmarks"]]
assert names == [("BM_DeviceCopy/manual_time", None), ("BM_X/a:1_median", None),
                 ("BM_X/a:1_stddev", None), ("Peer_sdpa/a:1", None)], names
PY
echo '{"not": "a benchmark document"}' > "$dir/bad.json"
if python3 "$tool" "$dir/bad.json" 2> "$dir/err.txt"; then
  echo "FAIL: accepted a document without benchmarks" >&2; exit 1
fi
grep -q "not a Google Benchmark JSON document" "$dir/err.txt"
echo "compact_benchmark_json_test: OK"
