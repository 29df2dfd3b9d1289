#!/usr/bin/env bash
# End-to-end checks of the plan CLI: documented output fields and values for
# skewed batches, graph replay of a batch sequence, and one-line errors with
# nothing on stdout for bad input.
set -uo pipefail
plan=tools/plan_batch
data=tools/testdata
failures=0

expect_contains() {  # name, haystack, needle
  if [[ "$2" != *"$3"* ]]; then
    echo "FAIL $1: output lacks $3"; echo "$2" | head -c 600; echo; failures=$((failures + 1))
  fi
}

out=$($plan --batch=$data/skewed_draft_extend.json) || { echo "FAIL: exit $?"; exit 1; }
expect_contains skewed_de "$out" '"cache_seqlens":[101,13]'
expect_contains skewed_de "$out" '"cu_seqlens_k":[0,101,114]'
expect_contains skewed_de "$out" '"cu_seqlens_q":[0,1,9]'
expect_contains skewed_de "$out" '"max_seq_len_k":101'
expect_contains skewed_de "$out" '"mode":"DRAFT_EXTEND"'
expect_contains skewed_de "$out" '"token_slots":[['

out=$($plan --batch=$data/skewed_draft_extend_v2.json) || { echo "FAIL: exit $?"; exit 1; }
expect_contains skewed_de2 "$out" '"cache_seqlens":[104,9]'
expect_contains skewed_de2 "$out" '"cu_seqlens_k":[0,104,113]'
expect_contains skewed_de2 "$out" '"max_seq_len_k":104'

eager=$($plan --batch=$data/graph_sequence.json) || { echo "FAIL: exit $?"; exit 1; }
graph=$($plan --batch=$data/graph_sequence.json --graph_max_batch=4) || { echo "FAIL: exit $?"; exit 1; }
expect_contains graph "$graph" '"cache_seqlens":[1004,11,68]'
expect_contains graph "$graph" '"cache_seqlens":[7]'
expect_contains graph "$graph" '"cache_seqlens":[2000,17]'
# The live rows of a graph replay and their work plan equal the eager plan's.
if [[ "$eager" != "$graph" ]]; then
  echo "FAIL graph: replay metadata differs from eager"; failures=$((failures + 1))
fi
expect_contains plan "$graph" '"work_plan":{"active_workers":'
# The plan follows the heads it is made for: 4x the KV heads, 4x the units.
heads8=$($plan --batch=$data/skewed_draft_extend_v2.json --num_sms=4 --ctas_per_sm=1) || exit 1
heads32=$($plan --batch=$data/skewed_draft_extend_v2.json --num_q_heads=64 --num_kv_heads=32 \
  --num_sms=4 --ctas_per_sm=1) || exit 1
expect_contains heads8 "$heads8" '"workers":4}'
# Segments of the printed work plan.
segment_count() { sed -E 's/.*"segments":\[(.*)\],"workers".*/\1/' <<< "$1" | grep -o '\[' | wc -l; }
if (($(segment_count "$heads32") != 4 * $(segment_count "$heads8"))); then
  echo "FAIL heads: $(segment_count "$heads32") segments for 32 KV heads, $(segment_count "$heads8") for 8"
  failures=$((failures + 1))
fi

check_error() {  # name, expected stderr text, args...
  local name=$1 expected=$2; shift 2
  local stdout stderr status
  stderr=$( { stdout=$($plan "$@"); } 2>&1 ); status=$?
  stdout=$($plan "$@" 2>/dev/null)
  if ((status == 0)); then echo "FAIL $name: exit 0"; failures=$((failures + 1)); fi
  if [[ -n "$stdout" ]]; then echo "FAIL $name: stdout not empty"; failures=$((failures + 1)); fi
  if [[ $(echo "$stderr" | wc -l) -ne 1 ]]; then echo "FAIL $name: stderr not one line: $stderr"; failures=$((failures + 1)); fi
  expect_contains "$name" "$stderr" "$expected"
}
check_error bad_request 'batch 0: request 1: seq_lens[1] = 3 is smaller than new_tokens[1] = 4' \
  --batch=$data/bad_request.json
check_error over_capacity 'batch of 3 requests exceeds the plan capacity of 2' \
  --batch=$data/graph_sequence.json --graph_max_batch=2
check_error missing_file 'cannot open "/nonexistent.json": No such file or directory' --batch=/nonexistent.json
check_error no_batch '--batch=FILE.json is required'

if ((failures)); then echo "$failures failure(s)"; exit 1; fi
echo "plan_batch: all checks passed"
