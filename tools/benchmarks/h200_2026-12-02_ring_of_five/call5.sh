#!/usr/bin/env bash
# This session's last device minutes: a per-CTA timeline (globaltimer and
# clock64 stamps, pa_timeline_4f70709.patch on the committed kernel, built
# here into ab/bench_timeline) of the one-tile calls and the one-request 32k
# decode and verify, three replays each, summarised by timeline_analysis.py
# (replay 1). From the repository root with carry5.tar.xz (the binary and
# the bundle's libraries).
set -o pipefail
tar -xJf carry5.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib PA_TIMELINE_DIR=$OUT/tl
mkdir -p $OUT/tl
timeout 200 ab/bench_timeline --benchmark_filter='OneTile/|Decode/heads:32_8/hd:128/batch:1/q:1/kv:32768/|Verify/heads:32_8/hd:128/batch:1/q:8/kv:32768/' \
  --benchmark_repetitions=1 > /dev/null 2>&1; echo "bench rc=$?"
python3 tools/benchmarks/h200_2026-12-02_ring_of_five/timeline_analysis.py $OUT/tl | tee $OUT/timeline_summary.txt
tar -cJf $OUT/tl.tar.xz -C $OUT tl && rm -rf $OUT/tl
