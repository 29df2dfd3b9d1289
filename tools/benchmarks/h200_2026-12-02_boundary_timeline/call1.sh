#!/usr/bin/env bash
# This session's first call. carry1.tar.xz: gpu_bundle/ = 49e8e74 (MPI, the
# merge kernel's two-row instantiation; attention kernels as 797b2d2's) and
# ab/bench_TL (49e8e74 + pa_timeline_49e8e74.patch: per-tile stamps of the
# head_dim 128 decode kernel). First the timelines of the boundary shapes
# (b128 1k against b32 4k: the same tiles per worker, three segment
# boundaries against none; 32/32 b128 1k against b8 16k), then every GPU test,
# the checks (memcheck, racecheck, graph-replay memcheck, plan_batch dumps)
# and the peer run of the bundle.
set -o pipefail
tar -xJf carry1.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
mkdir -p $OUT/tl
PA_TIMELINE_DIR=$OUT/tl ab/bench_TL \
  --benchmark_filter='Decode/heads:(32_8|32_32)/hd:128/batch:(128/q:1/kv:1024|32/q:1/kv:4096|8/q:1/kv:16384)/page:16/iter' \
  --benchmark_format=json > $OUT/tl/tl_bench.json 2> $OUT/tl/tl_bench.err
echo "timeline rc=$? files $(ls $OUT/tl | wc -l)"
tar -cJf $OUT/tl.tar.xz -C $OUT tl && rm -rf $OUT/tl
export GPU_SESSION_PACK=$OUT/call1.tar.xz
bash tools/gpu_session.sh $OUT/r tests checks peers
