# Call 1 (carry1.tar.xz: the bundle of HEAD, ab/bench_PLB = the benchmark with
# placement_probe.patch, ab/bench_SHIFT = PLB with PA_PROBE_SHIFTS set): three
# processes timing verify q64 b64 4k, tree q64 b16 balanced and decode b32 16k
# (control) at eight placements each; then ncu of verify q64 b64 4k at each.
tar -xJf carry1.tar.xz && GPU_SESSION_PACK=$OUT/call1.tar.xz timeout 560 bash tools/gpu_session.sh $OUT/r ab 3 '^BM_PagedAttention(Verify/heads:32_8/hd:128/batch:64/q:64/kv:4096/|TreeVerify/heads:32_8/hd:128/batch:16/q:64/kv:8192/page:16/tree:balanced|Decode/heads:32_8/hd:128/batch:32/q:1/kv:16384/page:16/iter)' SHIFT ncu SHIFT $(for i in 0 1 2 3 4 5 6 7; do printf "Verify/heads:32_8/hd:128/batch:64/q:64/kv:4096/page:16/shift:${i}_ "; done)
