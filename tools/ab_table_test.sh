#!/usr/bin/env bash
# ab_table.py over made-up A/B rounds: each variant's least median over the
# base's, n/a for a variant without the case, the widest spread of rounds
# and the `noisy` mark past 3%, .json.xz read as .json, and a round cut at
# its time limit (unfinished JSON) skipped with a note on stderr instead of
# ending the table; --prefix reads one call's rounds (callN_ab_...) only.
set -euo pipefail
tool=tools/ab_table.py
dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/ab_table.XXXXXX")
round() {  # file, then "case:us" pairs
  local file=$1; shift
  {
    echo '{"benchmarks": ['
    local first=1 pair
    for pair in "$@"; do
      ((first)) || echo ','
      first=0
      echo "{\"name\": \"BM_PagedAttention${pair%%:*}/iterations:1/repeats:3/manual_time_median\","
      echo " \"run_name\": \"BM_PagedAttention${pair%%:*}/iterations:1/repeats:3/manual_time\","
      echo " \"run_type\": \"aggregate\", \"aggregate_name\": \"median\","
      echo " \"real_time\": ${pair##*:}, \"time_unit\": \"us\"}"
    done
    echo ']}'
  } > "$file"
}
round "$dir/ab_BASE_1.json" Decode/b1:100 Verify/b2:50
round "$dir/ab_BASE_2.json" Decode/b1:101 Verify/b2:52
round "$dir/ab_NEW_1.json" Decode/b1:90 Verify/b2:55
round "$dir/ab_NEW_2.json" Decode/b1:95 Verify/b2:60
round "$dir/ab_OLD_1.json" Decode/b1:99
xz "$dir/ab_OLD_1.json"
printf '{"benchmarks": [{"name": ' > "$dir/ab_NEW_3.json"  # cut at its limit

python3 "$tool" "$dir" BASE NEW OLD > "$dir/table.txt" 2> "$dir/stderr.txt"
cat "$dir/table.txt"
decode=$(grep '^Decode/b1 ' "$dir/table.txt")
verify=$(grep '^Verify/b2 ' "$dir/table.txt")
# Decode: base min 100, NEW 90 / 100, OLD (from .xz) 99 / 100, widest spread
# NEW's 95 / 90 = 1.056: noisy.
[[ $decode =~ ^Decode/b1\ +100\.0\ +0\.900\ +0\.990\ +1\.056\ noisy$ ]] ||
  { echo "decode row wrong: $decode"; exit 1; }
# Verify: NEW 55 / 50, OLD has no such case, spread NEW's 60 / 55 = 1.091.
[[ $verify =~ ^Verify/b2\ +50\.0\ +1\.100\ +n/a\ +1\.091\ noisy$ ]] ||
  { echo "verify row wrong: $verify"; exit 1; }
grep -q "skipping $dir/ab_NEW_3.json" "$dir/stderr.txt" ||
  { echo "the cut round was not reported:"; cat "$dir/stderr.txt"; exit 1; }
# --prefix: one call's rounds among another call's (callN_ab_...).
round "$dir/call2_ab_BASE_1.json" Decode/b1:200
round "$dir/call2_ab_NEW_1.json" Decode/b1:150
prefixed=$(python3 "$tool" --prefix call2_ "$dir" BASE NEW 2> /dev/null | grep '^Decode/b1 ')
[[ $prefixed =~ ^Decode/b1\ +200\.0\ +0\.750\ +1\.000 ]] ||
  { echo "prefixed row wrong: $prefixed"; exit 1; }
unprefixed=$(python3 "$tool" "$dir" BASE NEW 2> /dev/null | grep '^Decode/b1 ')
[[ $unprefixed =~ ^Decode/b1\ +100\.0\ +0\.900 ]] ||
  { echo "the prefixed rounds leaked into the plain table: $unprefixed"; exit 1; }
echo "ab_table_test: ok"
