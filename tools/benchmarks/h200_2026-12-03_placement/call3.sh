# Call 3 (carry3.tar.xz: the bundle of a2acdeb, ab/bench_OLD = 4edcea8's
# benchmark, ab/bench_NEW = a2acdeb's, ab/bench_GAP = NEW --replay_gap_us=2000):
# gpu_clocks_test; A/B of the three over q64 chain / tree verify, decode,
# verify q8 and one-tile, three rounds; the peer run of a2acdeb.
tar -xJf carry3.tar.xz || exit 1
mkdir -p $OUT/r && LD_LIBRARY_PATH=$PWD/gpu_bundle/lib gpu_bundle/bin/testing_gpu_clocks_test > $OUT/r/gpu_clocks_test.log 2>&1; echo "gpu_clocks_test rc=$?"; grep -E 'OK|FAIL|PASSED' $OUT/r/gpu_clocks_test.log
GPU_SESSION_PACK=$OUT/call3.tar.xz timeout 520 bash tools/gpu_session.sh $OUT/r ab 3 '^BM_PagedAttention(Verify|TreeVerify)/heads:32_8/hd:128/batch:(16|64)/q:64/|^BM_PagedAttentionDecode/heads:32_8/hd:128/batch:(1|32)/q:1/kv:(16384|32768)/page:16/iter|^BM_PagedAttentionOneTile/|^BM_PagedAttentionVerify/heads:32_8/hd:128/batch:16/q:8/kv:8192/page:16/iter' OLD NEW GAP peers
