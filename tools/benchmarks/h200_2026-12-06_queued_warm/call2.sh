#!/usr/bin/env bash
# Call 2 (device tool, carry: call 1's carry.tar.xz, bundle 51380c2): every GPU
# test on the bundle whose testing/random_fill.cu gained HoldStream.
set -u
tar -xJf carry.tar.xz
GPU_SESSION_PACK=$OUT/c2.tar.xz timeout 330 bash tools/gpu_session.sh $OUT/c2 tests
