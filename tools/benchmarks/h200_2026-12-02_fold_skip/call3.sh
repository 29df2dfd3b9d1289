#!/usr/bin/env bash
# This session's third call: does the machine slow down over a full run of
# the benchmark binary? call2's A/B ran the head_dim 64 cases alone: verify
# b16 q8 8k 74.0-74.5 us (E 0.855-0.866), decode b32 16k 251.9 us; call1's
# peer run, where they come late in the full suite, 76.2 us (E 0.838) and
# 258.3 us. If the late cases of a run are slower than the same cases run
# alone, a run's E (over the copy rate measured at its start) and its ratios
# to peers timed after it are biased by position. Here, with 1d8a22c's
# benchmark (ab/bench_HEAD) and the bundle's libraries (carry3.tar.xz):
#   1. GPU state (clocks, temperatures, throttle reasons);
#   2. "cold": our cases at head_dim 64 and two 32/8 decode shapes with
#      their SDPA peers (peer_benchmark.py --filter, no flex), the copy rate first;
#   3. the full benchmark binary, as the peer run starts (full.json);
#   4. GPU state; "hot": step 2 again right after it;
#   5. 60 s idle, then "rested": step 2 again.
set -o pipefail
tar -xJf carry3.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
bench=ab/bench_HEAD
mkdir -p $OUT/r
state() {
  nvidia-smi --query-gpu=timestamp,temperature.gpu,temperature.memory,clocks.sm,clocks.mem,power.draw,clocks_throttle_reasons.active --format=csv,noheader
}
subset() {  # name
  PYTHONUNBUFFERED=1 timeout 120 python3 tools/peer_benchmark.py --ours $bench --no-flex \
    --filter 'hd:64/|Decode/heads:32_8/hd:128/batch:(1|32)/q:1/kv:(32768|16384)/' \
    --out $OUT/r/$1.json > $OUT/r/$1_table.txt 2>&1
  echo "$1 rc=$?"
}
{
  state; subset cold; state
  start=$SECONDS
  $bench --benchmark_out=$OUT/r/full.json --benchmark_out_format=json > /dev/null 2>&1
  echo "full run rc=$? $((SECONDS - start)) s"
  state; subset hot; state
  sleep 60
  state; subset rested; state
} 2>&1 | tee $OUT/r/drift.txt
cd $OUT && tar -cJf call3.tar.xz r
