#!/usr/bin/env bash
# Builds carry_qrt.tar.xz (git-ignored) from the repository root at a commit
# with 43279b4's kernel sources, after build_carry.sh: HEAD's bundle
# (carry_lo.tar.xz) with its four kernel-test binaries rebuilt with
# query_fragments_in_tree.patch (QR for the general kernel only), so that
# call6.sh runs the tests and racecheck of QR's form for the tree:
#   bash tools/benchmarks/h200_2026-12-07_lane_offsets_in_tree/build_qrt_carry.sh
set -euo pipefail
d=tools/benchmarks/h200_2026-12-07_lane_offsets_in_tree
tests=(paged_attention_test paged_attention_modes_test graph_replay_stress_test)
rm -rf gpu_bundle ab
tar -xJf carry_lo.tar.xz gpu_bundle
bash tools/ab_patch_build.sh QRT --patch $d/query_fragments_in_tree.patch "${tests[@]}"
cp -f ab/test_QRT gpu_bundle/bin/attention_kernel_paged_attention_test
cp -f ab/modes_test_QRT gpu_bundle/bin/attention_kernel_paged_attention_modes_test
cp -f ab/graph_replay_stress_test_QRT gpu_bundle/bin/attention_kernel_graph_replay_stress_test
echo "$(cat gpu_bundle/REVISION)+query_fragments_in_tree.patch" > gpu_bundle/REVISION
rm -rf ab
tar -cf - gpu_bundle | xz -9 -T2 > carry_qrt.tar.xz
