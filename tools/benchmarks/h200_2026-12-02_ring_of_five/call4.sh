#!/usr/bin/env bash
# This session's last call: the committed tree's bundle (DRWG with
# max_request_rows after `cooperative`, and the bit-for-bit tests sharing one
# helper): every GPU test, and memcheck over the kernel test. From the
# repository root with carry4.tar.xz (gpu_bundle/).
set -o pipefail
tar -xJf carry4.tar.xz || exit 1
mkdir -p $OUT/r
bash tools/gpu_session.sh $OUT/r tests
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 \
  gpu_bundle/bin/attention_kernel_paged_attention_test --gtest_brief=1 2>&1 | tail -3 |
  tee $OUT/r/memcheck.txt
