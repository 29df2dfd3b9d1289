#!/usr/bin/env bash
# The decode kernel skips the fold rounds of key ways that had no tile
# (FS, committed after this call): bit-exact by State::Merge's arithmetic; the other
# kernels' PTX unchanged (tools/ptx_diff.py). From the repository root with
# carry6.tar.xz, built here from the tree with fold_skip applied (ab/fs/test_FS: FS's kernel test; ab/bench_HEAD, ab/bench_FS;
# the bundle's libraries): the kernel test (DecodeKernelMatchesGeneralKernel-
# BitForBit compares the decode kernel's bits with the general kernel's, which
# folds every round), then the A/B on one-tile and decode shapes.
set -o pipefail
tar -xJf carry6.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
mkdir -p $OUT/r
timeout 90 ab/fs/test_FS --gtest_brief=1 2>&1 | tail -4 | tee $OUT/r/test_FS.txt
bash tools/gpu_session.sh $OUT/r ab 3 '^BM_PagedAttention(OneTile|Decode/heads:32_8/hd:128/batch:(1|128)/|Decode/heads:32_8/hd:64/)' HEAD FS
