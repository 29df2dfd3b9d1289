#!/usr/bin/env bash
# The final commit's bundle (89ee930): GPU tests, plan_batch dumps, and a peer-script subset
# that takes git_revision from gpu_bundle/REVISION.
set -o pipefail
tar -xJf gpu_bundle.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
B=gpu_bundle/bin
S=$SECONDS
timeout 200 bash gpu_bundle/run_tests.sh > $OUT/gpu_tests_final.log 2>&1; echo "tests rc=$? $((SECONDS - S)) s"
grep -hE "^\[  (PASSED|FAILED) |replays matched|Failure|SEED|passed, " $OUT/gpu_tests_final.log | sort | uniq -c | head -20
{ $B/tools_plan_batch --batch=tools/testdata/skewed_draft_extend_v2.json --run --dump_dir=/tmp/dump_eager > /dev/null 2>&1 &&
  $B/tools_plan_batch --batch=tools/testdata/graph_sequence.json --graph_max_batch=4 --run --dump_dir=/tmp/dump_graph > /dev/null 2>&1 &&
  python3 tools/check_dump.py /tmp/dump_eager && for d in /tmp/dump_graph/batch_*; do python3 tools/check_dump.py $d; done; } > $OUT/check_dump_final.txt 2>&1
cat $OUT/check_dump_final.txt
S=$SECONDS
timeout 120 python3 tools/peer_benchmark.py --ours $B/attention_kernel_paged_attention_benchmark --out $OUT/peers_subset.json \
  --filter '^BM_PagedAttention(OneTile|Verify/heads:64_8/hd:128/batch:1/)' --no-flex > $OUT/peers_subset_table.txt 2>&1
echo "peers subset rc=$? $((SECONDS - S)) s"; grep -E "git_revision|^(OneTile|Verify)" $OUT/peers_subset_table.txt | cut -c1-170
python3 -c "import json; print('json git_revision:', json.load(open('$OUT/peers_subset.json'))['context'].get('git_revision'))"
