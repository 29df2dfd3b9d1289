#!/usr/bin/env bash
# This session's second call. carry2.tar.xz: ab/bench_BASE (1450ea5),
# ab/bench_NF (1450ea5 + NF alone: the spread merge's waiting pieces without
# their second fence; call1 measured it only on top of SG, which was dropped),
# and SG's bundle from call1 (only its ncu step's binary is used here).
# 1. A/B of BASE and NF, five rounds, on the shapes NF can move (one-request
#    decode and draft-extend, b16 32k decode: spread merges) and the one-tile
#    calls, with verify and b32 decode rows as controls;
# 2. ncu (one pass, L2 flushed, three launches) of the tree and the chain
#    kernel at b64 q64, one filter each (call1's single filter matched both
#    and ncu's three launches all went to the first case, the chain).
set -o pipefail
tar -xJf carry2.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call2.tar.xz
bash tools/gpu_session.sh $OUT/r ab 5 \
  '^BM_PagedAttention(Decode|DraftExtend|Verify|OneTile)/heads:(32_8|64_8|32_32)/hd:128/batch:(1|16|32)/q:(1|4|8)/kv:(64|4096|16384|32768|131072)/' \
  BASE NF \
  ncu bundle '^BM_PagedAttentionTreeVerify/heads:32_8/hd:128/batch:64/q:64/kv:4096/page:16/tree:balanced_topk4/' \
  '^BM_PagedAttentionVerify/heads:32_8/hd:128/batch:64/q:64/'
