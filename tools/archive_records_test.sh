#!/usr/bin/env bash
# archive_records.py on a small record folder: JSON becomes compacted
# .json.xz, logs and large text become .xz, a peer table keeps only its bars
# table, READMEs / predictions / scripts / small text / dashboard pages stay,
# the README says what was archived, a second run changes nothing (--check
# passes), and what it cannot archive is refused with the file's name.
set -euo pipefail
tool=tools/archive_records.py
dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/archive.XXXXXX")
run="$dir/h200_run"
mkdir -p "$run/dashboard"
cat > "$run/peers.json" <<'JSON'
{"context": {"git_revision": "abc1234"}, "benchmarks": [
 {"name": "BM_X/a:1", "run_name": "BM_X/a:1", "run_type": "iteration", "repetition_index": 0, "real_time": 10.0},
 {"name": "BM_X/a:1_median", "run_name": "BM_X/a:1", "run_type": "aggregate", "aggregate_name": "median", "real_time": 10.0},
 {"name": "BM_X/a:1_mean", "run_name": "BM_X/a:1", "run_type": "aggregate", "aggregate_name": "mean", "real_time": 10.0}]}
JSON
echo '{"plan": [1, 2, 3]}' > "$run/plan.json"
printf 'line %d of a GPU test log\n' $(seq 1 50) > "$run/gpu_tests.log"
{
  echo "Running gpu_bundle/bin/attention_kernel_paged_attention_benchmark"
  printf 'BM_X/a:1/manual_time_median   10.0 us   %d\n' $(seq 1 20)
  echo "case                      us   TB/s     E     best peer  ratio  bars"
  echo "X/a:1                   10.0   4.00  0.95   sdpa 11.0   1.10  ok"
  echo "bars: 1 met, 0 missed"
} > "$run/peers_table_abc1234.txt"
head -c 40000 /dev/zero | tr '\0' 'x' > "$run/timeline.txt"
echo "small table" > "$run/call1_ab_table.txt"
echo "prediction" > "$run/predictions.txt"
echo "echo run" > "$run/call1.sh"
echo '{"benchmarks": []}' > "$run/dashboard/kept.json"
printf '# A run\n\nThe files.\n' > "$run/README.md"

fail() { echo "FAIL: $*" >&2; exit 1; }
if python3 "$tool" --check "$run" > /dev/null; then fail "--check passed before archiving"; fi
python3 "$tool" "$run" > /dev/null

for gone in peers.json plan.json gpu_tests.log timeline.txt; do
  [[ ! -e "$run/$gone" ]] || fail "$gone is still there"
  [[ -s "$run/$gone.xz" ]] || fail "no $gone.xz"
done
for kept in call1_ab_table.txt predictions.txt call1.sh dashboard/kept.json; do
  [[ -e "$run/$kept" ]] || fail "$kept was not kept"
done
python3 - "$run" <<'PY'
import json, lzma, sys
run = sys.argv[1]
peers = json.loads(lzma.open(f"{run}/peers.json.xz").read())
names = [b["name"] for b in peers["benchmarks"]]
assert names == ["BM_X/a:1_median"], names  # compacted: no repetition, no mean
assert peers["context"] == {"git_revision": "abc1234"}, peers["context"]
assert json.loads(lzma.open(f"{run}/plan.json.xz").read()) == {"plan": [1, 2, 3]}
assert lzma.open(f"{run}/gpu_tests.log.xz").read().decode().count("GPU test log") == 50
table = open(f"{run}/peers_table_abc1234.txt").read().splitlines()
assert table[0].startswith("# Archived"), table[0]
assert table[1].startswith("case ") and table[-1] == "bars: 1 met, 0 missed", table
assert not any("manual_time_median" in line for line in table), table
readme = open(f"{run}/README.md").read()
assert readme.startswith("# A run\n\nThe files.\n\nArchived by"), readme
PY
python3 "$tool" --check "$run" || fail "--check after archiving"
before=$(cd "$run" && find . -type f -exec md5sum {} + | sort)
python3 "$tool" "$run" > /dev/null
after=$(cd "$run" && find . -type f -exec md5sum {} + | sort)
[[ "$before" == "$after" ]] || fail "a second run changed the folder"

bad="$dir/bad"
mkdir -p "$bad"
echo "no table here" > "$bad/peers_table.txt"
if python3 "$tool" "$bad" 2> "$dir/err.txt"; then fail "accepted a peer table without bars"; fi
grep -q "$bad/peers_table.txt: no bars table" "$dir/err.txt" || fail "$(cat "$dir/err.txt")"
echo '{"truncated": ' > "$bad/peers_table.txt"; mv "$bad/peers_table.txt" "$bad/broken.json"
if python3 "$tool" "$bad" 2> "$dir/err.txt"; then fail "accepted broken JSON"; fi
grep -q "$bad/broken.json: not JSON" "$dir/err.txt" || fail "$(cat "$dir/err.txt")"
[[ -e "$bad/broken.json" && ! -e "$bad/README.md" ]] || fail "a refused folder was changed"
echo "archive_records_test: OK"
