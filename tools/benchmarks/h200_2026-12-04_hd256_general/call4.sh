# Call 4 (carry.tar.xz: the bundle of 588c7db, which adds the head_dim 256
# tree verify case; ab/bench_RS = its benchmark, ab/bench_BASE = the same
# benchmark over 1c3d263's kernels): A/B on the head_dim 256 b16 q8 chain
# and tree, then the peer run.
tar -xJf carry.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/s.tar.xz bash tools/gpu_session.sh $OUT/s ab 3 'hd:256/batch:16/q:8' BASE RS 2>&1 | tail -6
GPU_SESSION_PACK=$OUT/p.tar.xz bash tools/gpu_session.sh $OUT/p peers 2>&1 | tail -6
grep -E "hd:256.*tree/chain" $OUT/p/peers_table.txt
