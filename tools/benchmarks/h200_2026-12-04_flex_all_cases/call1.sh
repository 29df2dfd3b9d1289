# Call 1 (carry.tar.xz: the bundle of this commit, kernels as fd3e3f2): the
# peer run with flex on every case (the main flex kernel where its decoding
# kernel fails to compile).
tar -xJf carry.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/c1.tar.xz bash tools/gpu_session.sh $OUT/c1 peers 2>&1 | tail -60
grep -E 'copy rate|bars:' $OUT/c1/peers_table.txt
