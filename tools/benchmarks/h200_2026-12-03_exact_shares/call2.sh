# Call 2 (carry2.tar.xz: bundle of 834ee10, ab/bench_HEAD, ab/bench_EXB, ab/bench_EX0):
# A/B of the exact-shares candidate on every decode / draft-extend / verify /
# skewed shape of batch 8-128, three rounds, order rotated.
tar -xJf carry2.tar.xz && GPU_SESSION_PACK=$OUT/call2.tar.xz timeout 560 bash tools/gpu_session.sh $OUT/r ab 3 '^BM_PagedAttention(Decode|DraftExtend|Verify|Skewed|Uniform)/heads:[0-9_]+/hd:(128|256)/batch:(8|16|32|64|128)/' HEAD EX0
