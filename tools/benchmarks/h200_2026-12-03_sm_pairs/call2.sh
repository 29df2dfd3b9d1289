#!/usr/bin/env bash
# This session's second call. carry2.tar.xz: gpu_bundle/ = 05439ad + fm.patch
# (FM: few-piece units of more than 8 rows merged by the attention kernel),
# ab/bench_HEAD (05439ad's benchmark), ab/bench_FM (the bundle's) and
# ab/bench_PROBE (05439ad + merge_and_page_order_probe.patch, timing only)
# run as NOMERGE (PA_PROBE_MERGE=none: no merge kernel launched; wrong
# results, the upper bound of what merging 9-64-row units in the attention
# kernel could save), EMPTYMERGE (=empty: the merge kernel launched with
# nothing to do, what a graph still pays) and SEQ (PA_PROBE_SEQ_PAGES=1:
# every request's pages in pool order instead of shuffled). A/B of every
# case, three rounds; the GPU tests of the FM bundle.
set -o pipefail
tar -xJf carry2.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call2.tar.xz
bash tools/gpu_session.sh $OUT/r ab 3 . HEAD FM NOMERGE EMPTYMERGE SEQ tests
