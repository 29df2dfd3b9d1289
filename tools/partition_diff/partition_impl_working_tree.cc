// partition_impl.inc over the working tree's work_partition.cc, for the Bazel
// test of partition_diff (BUILD): one source, compiled twice with IMPL_NS and
// IMPL_FN from each target's local_defines. tools/partition_diff.sh compiles
// the .inc itself, with a revision of work_partition.cc as the base.
#define IMPL_SRC "attention/planner/work_partition.cc"
#include "tools/partition_diff/partition_impl.inc"
