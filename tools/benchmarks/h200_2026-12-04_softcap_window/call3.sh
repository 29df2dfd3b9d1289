# Call 3 (carry.tar.xz: the bundle of fd3e3f2, TA): every GPU test, then the
# peer run (flex for Verify, Gqa q8, Window and Softcap cases).
tar -xJf carry.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/c3.tar.xz bash tools/gpu_session.sh $OUT/c3 tests peers 2>&1 | tail -60
grep -E 'twin time|copy rate' $OUT/c3/peers_table.txt
