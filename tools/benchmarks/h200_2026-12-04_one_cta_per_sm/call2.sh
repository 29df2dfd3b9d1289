# Call 2 (carry.tar.xz: the bundle of 588c7db; ab/bench_BASE = its benchmark,
# ab/bench_PTP = the same with page_table_prefetch_PTP.patch): A/B of every
# case, 5 rounds.
tar -xJf carry.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/s.tar.xz bash tools/gpu_session.sh $OUT/s ab 5 '.' BASE PTP 2>&1 | tail -3
