# Call 4 (carry3.tar.xz): the bundle's benchmark alone, six processes in a row,
# over q16 / q64 chain and tree verify at b16 / b64 and decode b32 16k (a
# control): how far a case's median moves between processes
# (call4_spread_table.txt: the spread column is the slowest process over the fastest).
tar -xJf carry3.tar.xz && GPU_SESSION_PACK=$OUT/call4.tar.xz timeout 300 bash tools/gpu_session.sh $OUT/r ab 6 '^BM_PagedAttention(Verify|TreeVerify)/heads:32_8/hd:128/batch:(16|64)/q:(64|16)/|Decode/heads:32_8/hd:128/batch:32/q:1/kv:16384/page:16/iter' HEAD
