#!/usr/bin/env bash
# plan_batch --run on the long batches of tools/testdata, each dump checked
# against numpy's float64 recomputation (tools/check_dump.py): the skewed
# DRAFT_EXTEND_V2 batch eager, the graph sequence replayed (one dump per
# batch), and two tree batches (tree verify, a tree draft step) eager and
# replayed, whose replay must equal eager byte for byte. Needs a GPU, the
# bundle's binaries and LD_LIBRARY_PATH as the bundle's runners set it.
# Usage: bash tools/check_dumps.sh BIN_DIR OUT_DIR
# Prints one line per check (a failed plan_batch run prints its log) and exits
# non-zero if any fails. Used by tools/gpu_validate.sh and tools/gpu_session.sh.
set -uo pipefail
bin=$1
out=$2
mkdir -p "$out"
failed=0

plan() {  # name, plan_batch flags...
  local name=$1; shift
  if ! "$bin/tools_plan_batch" "$@" --run --dump_dir="$out/$name" > "$out/$name.log" 2>&1; then
    echo "plan_batch $name FAILED:"; tail -n 30 "$out/$name.log"; failed=1
  fi
}
check() {  # dump folder
  python3 tools/check_dump.py "$1" || failed=1
}

plan eager --batch=tools/testdata/skewed_draft_extend_v2.json
plan graph --batch=tools/testdata/graph_sequence.json --graph_max_batch=4
for tree in tree_verify tree_draft_decode; do
  plan "$tree" --batch="tools/testdata/$tree.json"
  plan "${tree}_graph" --batch="tools/testdata/$tree.json" --graph_max_batch=8
done
check "$out/eager"
for d in "$out"/graph/batch_*; do check "$d"; done
for tree in tree_verify tree_draft_decode; do
  check "$out/$tree"
  check "$out/${tree}_graph"
  # The tree's mask is data the planner writes: replay must rebuild it, and
  # the output, exactly.
  for f in out lse tree_mask; do
    if cmp -s "$out/$tree/$f.npy" "$out/${tree}_graph/$f.npy"; then
      echo "$tree: graph replay's $f.npy equals eager's"
    else
      echo "$tree: graph replay's $f.npy differs from eager's: FAILED"; failed=1
    fi
  done
done
((failed == 0)) && echo "dumps: every one OK" || echo "dumps: FAILED"
exit $failed
