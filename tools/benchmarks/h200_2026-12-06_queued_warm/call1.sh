#!/usr/bin/env bash
# Call 1 (device tool, carry: carry.tar.xz from
#   bash tools/ab_carry.sh --bundle 51380c2 MAIN=0c9fcf2 QW=bundle):
# the warm timing before (MAIN) and after (QW) the stream hold, five rounds,
# over every l2:warm case and two flushed controls.
set -u
tar -xJf carry.tar.xz
GPU_SESSION_PACK=$OUT/c1.tar.xz timeout 420 bash tools/gpu_session.sh $OUT/c1 ab 5 \
  'l2:warm|Decode/heads:32_8/hd:128/batch:(1|32)/q:1/kv:(32768|16384)/page:16/' MAIN QW
