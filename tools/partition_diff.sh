#!/usr/bin/env bash
# Checks that the working tree's work partition writes the same plans, bit for
# bit, as attention/planner/work_partition.cc at revision REV, on CASES random
# batches (default 20000; seed SEED). For changes to the partition that must
# not change plans (host-speed work): the planner tests pin chosen cases, this
# compares every field of every segment on many more. Host only: g++ and the
# system Abseil (tools/setup.sh), no Bazel.
#   bash tools/partition_diff.sh REV [CASES] [SEED]
#   PARTITION_DIFF_HEAD_DIM=64 bash tools/partition_diff.sh REV   # every case at one head_dim
#   bash tools/partition_diff.sh REV time   # host time of both on fixed shapes, calls interleaved
#   bash tools/partition_diff.sh REV bench  # the benchmark's shapes whose plan changes
# (//tools/partition_diff:partition_diff_test builds the same tool with the
# working tree on both sides, so `bazel test //...` keeps it compiling.)
set -euo pipefail
cd "$(dirname "$0")/.."
rev=$1 cases=${2:-20000} seed=${3:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git show "$rev:attention/planner/work_partition.cc" > "$work/base_partition.cc"
flags=(-std=c++17 -O2 -I"$PWD" -x c++)
impl=tools/partition_diff/partition_impl.inc
g++ "${flags[@]}" -DIMPL_NS=base_pa -DIMPL_SRC="\"$work/base_partition.cc\"" -DIMPL_FN=RunBase \
  -c "$impl" -o "$work/base.o" &
g++ "${flags[@]}" -DIMPL_NS=working_pa -DIMPL_SRC='"attention/planner/work_partition.cc"' \
  -DIMPL_FN=RunWorking -c "$impl" -o "$work/working.o" &
g++ -std=c++17 -O2 -I"$PWD" -c tools/partition_diff/partition_diff_main.cc -o "$work/main.o"
wait
g++ "$work/main.o" "$work/base.o" "$work/working.o" -o "$work/partition_diff" \
  -labsl_status -labsl_statusor -labsl_cord -labsl_cord_internal -labsl_cordz_info \
  -labsl_cordz_functions -labsl_cordz_handle -labsl_str_format_internal -labsl_strings \
  -labsl_strings_internal -labsl_int128 -labsl_raw_logging_internal -labsl_throw_delegate \
  -labsl_base -labsl_spinlock_wait -labsl_synchronization -labsl_time -labsl_time_zone \
  -labsl_stacktrace -labsl_symbolize -labsl_debugging_internal -labsl_demangle_internal \
  -labsl_malloc_internal -labsl_exponential_biased -labsl_strerror
echo "work_partition.cc at $(git rev-parse --short "$rev") vs the working tree:"
if [[ $cases == time || $cases == bench ]]; then exec "$work/partition_diff" "$cases"; fi
"$work/partition_diff" "$cases" "$seed"
