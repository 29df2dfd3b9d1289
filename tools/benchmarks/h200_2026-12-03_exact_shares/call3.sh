# Call 3 (carry3.tar.xz: bundle of 34956dd, ab/bench_HEAD its benchmark,
# ab/bench_EXB / EX0 as call 2): the exact-shares candidate on prefill and
# q64 verify (compute-bound, co-read groups), then the peer run.
tar -xJf carry3.tar.xz && GPU_SESSION_PACK=$OUT/call3.tar.xz timeout 560 bash tools/gpu_session.sh $OUT/r ab 3 '^BM_PagedAttention(Prefill|Verify|TreeVerify)/.*q:(64|512|2048)/' HEAD EX0 peers
