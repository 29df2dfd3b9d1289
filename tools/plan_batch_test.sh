#!/usr/bin/env bash
# End-to-end checks of the plan CLI: documented output fields and values for
# skewed batches, graph replay of a batch sequence, tree batches (their printed
# tree, and their dumps through tools/check_dump.py, eager and replayed), and
# one-line errors with nothing on stdout for bad input.
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

# Tree speculation: the tree and each query row's key count, eager and replayed alike.
for tree in tree_verify tree_draft_decode; do
  eager=$($plan --batch=$data/$tree.json) || { echo "FAIL $tree: exit $?"; exit 1; }
  graph=$($plan --batch=$data/$tree.json --graph_max_batch=4) || { echo "FAIL $tree graph: exit $?"; exit 1; }
  if [[ "$eager" != "$graph" ]]; then
    echo "FAIL $tree: replay output differs from eager"; failures=$((failures + 1))
  fi
done
out=$($plan --batch=$data/tree_verify.json)
expect_contains tree_verify "$out" '"cache_seqlens":[45,108,13,258]'
# A chain, a wide tree (4 children of the root), a mixed tree, a node with 4 children.
expect_contains tree_verify "$out" '"tree":{"draft_keys":8,"parents":[[-1,0,1,2,3,4,5,6],[-1,-1,-1,-1,0,0,1,2],'
expect_contains tree_verify "$out" '"query_keys":[[38,39,40,41,42,43,44,45],[101,101,101,101,102,102,102,102],[6,6,7,7,7,8,8,8],[251,252,252,252,252,253,254,255]],"topk":4}'
out=$($plan --batch=$data/tree_draft_decode.json)
# Step 2 of 4 branches: 12 draft keys; each query sees the committed keys and its branch's 3.
expect_contains tree_draft_decode "$out" '"cache_seqlens":[49,24,112]'
expect_contains tree_draft_decode "$out" '"cu_seqlens_q":[0,4,8,12]'
expect_contains tree_draft_decode "$out" '"draft_keys":12,'
expect_contains tree_draft_decode "$out" '"query_keys":[[40,40,40,40],[15,15,15,15],[103,103,103,103]],"topk":4}'

# Their dumps pass the numpy-only check (tree_mask.npy against tree_parents.npy,
# and attention through the mask), and replay dumps the same outputs as eager.
python=/usr/bin/python3; [[ -x $python ]] || python=python3
dumps=${TEST_TMPDIR:-$(mktemp -d)}/tree_dumps
mkdir -p "$dumps"
for tree in tree_verify tree_draft_decode; do
  for how in eager graph; do
    flags=(); [[ $how == graph ]] && flags=(--graph_max_batch=4)
    if ! $plan --batch=$data/$tree.json --num_q_heads=8 --num_kv_heads=2 --head_dim=64 \
        --dump_dir="$dumps/${tree}_$how" "${flags[@]}" > /dev/null; then
      echo "FAIL $tree $how: --dump_dir run failed"; failures=$((failures + 1)); continue
    fi
    if ! $python tools/check_dump.py "$dumps/${tree}_$how"; then
      echo "FAIL $tree $how: check_dump.py"; failures=$((failures + 1))
    fi
  done
  for array in out lse tree_mask tree_parents; do
    if ! cmp -s "$dumps/${tree}_eager/$array.npy" "$dumps/${tree}_graph/$array.npy"; then
      echo "FAIL $tree: $array.npy differs between eager and replay"; failures=$((failures + 1))
    fi
  done
done

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
echo '{"mode": "TARGET_VERIFY", "page_size": 16, "seq_lens_convention": "prefix_only",
       "seq_lens": [9], "num_draft_tokens": 2, "topk": 2, "tree_parents": [[-1, 1]]}' \
  > "$dumps/bad_tree.json"
check_error tree_shape 'batch 0: request 0: tree_parents node 1 has parent 1; a parent is -1' \
  --batch="$dumps/bad_tree.json"
check_error missing_file 'cannot open "/nonexistent.json": No such file or directory' --batch=/nonexistent.json
check_error no_batch '--batch=FILE.json is required'

if ((failures)); then echo "$failures failure(s)"; exit 1; fi
echo "plan_batch: all checks passed"
