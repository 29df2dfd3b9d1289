#!/usr/bin/env bash
# carry.tar.xz from build_variants.sh. A/B of HEAD, FM2 and FM2NT over every
# case (three rounds), then Nsight Compute on one-request verify q8 32k
# (33-piece units, which neither variant merges in the attention kernel) for
# HEAD and FM2: which kernel carries FM2's 1.02-1.06 there (~3 min in all).
set -o pipefail
tar -xJf carry.tar.xz || exit 1
export GPU_SESSION_PACK=$OUT/call1.tar.xz
f='^BM_PagedAttentionVerify/heads:32_8/hd:128/batch:1/q:8/kv:32768/'
bash tools/gpu_session.sh $OUT/r ab 3 . HEAD FM2 FM2NT ncu HEAD "$f" ncu FM2 "$f"
