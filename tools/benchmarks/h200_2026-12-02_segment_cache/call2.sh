#!/usr/bin/env bash
# This session's second call. carry2.tar.xz: gpu_bundle/ (ef14085's, unused
# here), ab/bench_WU (603312a + whole_units_probe.patch: the benchmark plans
# whole units under PA_BENCH_WHOLE_UNITS), ab/bench_B, ab/bench_WF and
# ab/bench_WS (scripts: bench_WU with the variable unset, =first, =spread),
# ab/bench_AL2 and ab/bench_MW2 (call 1's). An A/B of B, WF and WS, three
# rounds, on the shapes of 128 to 1024 units (no q64: pinned plans drop
# co-read groups); then Nsight Compute of the merge kernel at AL2 and MW2
# (call 1's ncu printed nothing: its raw output is kept this time).
set -o pipefail
tar -xJf carry2.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call2.tar.xz
bash tools/gpu_session.sh $OUT/r ab 3 \
  '(Decode|Verify|DraftExtend|PageSweep|Uniform)/.*batch:(16|32|64|128)/q:(1|2|3|4|8|16)/' B WF WS
start=$SECONDS
for name in AL2 MW2; do
  for filter in 'Verify/heads:32_8/hd:64/batch:16/q:8/kv:8192/' \
                'Verify/heads:32_8/hd:128/batch:1/q:8/kv:32768/page:16/'; do
    echo "== $name $filter"
    timeout 100 ncu --clock-control none --cache-control all -k regex:MergeKernel \
      --launch-skip 2 --launch-count 3 \
      --metrics gpu__time_duration.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,dram__bytes_read.sum,lts__t_sector_hit_rate.pct \
      ab/bench_$name --benchmark_filter="$filter" 2>&1 | grep -v '^BM_\|^---\|^Benchmark\|^Run on\|^CPU\|^  L\|^Load' | head -60
  done
done > $OUT/r/ncu_merge.txt 2>&1
grep -E '^==|gpu__time|smsp__inst|warps_active|grid_size|registers|ERR' $OUT/r/ncu_merge.txt | cut -c1-140
echo "=== merge ncu: $((SECONDS - start)) s"
tar -cJf $OUT/call2.tar.xz -C $OUT r
