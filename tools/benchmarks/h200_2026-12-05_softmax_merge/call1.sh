# Call 1 (carry.tar.xz from `tools/ab_carry.sh --prune --bundle softmax-merge
# BASE=main NEW=bundle`: gpu_bundle at softmax-merge 99ef7bf, ab/bench_BASE
# built at main 34d1479): every GPU test of the bundle, then an A/B of 24
# cases (each kernel family: decode at head_dim 64 / 128 / 256 and 32/32,
# draft extend, verify q8 at each head_dim and 64/8, q64 verify and trees,
# prefill, capped q64), 3 rounds. (The first try of this call, over every
# case, lost its machine and ~800 s of the session's device time with it: the
# call is cut down to what the rest of the budget holds.)
tar -xJf carry.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/c1.tar.xz timeout 480 bash tools/gpu_session.sh $OUT/c1 \
  tests ab 3 '^BM_PagedAttentionDecode/heads:(32_8|32_32)/hd:128/batch:(1|32|128)/q:1/kv:(32768|16384|1024)/page:16/iter|Decode/heads:32_8/hd:(64|256)/batch:32/q:1/kv:16384/page:16/iter|Verify/heads:(32_8|64_8)/hd:128/batch:16/q:8/kv:8192/page:16/iter|Verify/heads:32_8/hd:(64|256)/batch:16/q:8/kv:8192/page:16/iter|Verify/heads:32_8/hd:128/batch:(1|64)/q:64/|TreeVerify/heads:32_8/hd:128/batch:16/q:(8|64)/kv:8192/page:16/tree:balanced|Prefill/|DraftExtend/heads:32_8/hd:128/batch:16/q:4/kv:16384/page:16/iter|Softcap/heads:32_8/hd:128/batch:16/q:64' BASE NEW
