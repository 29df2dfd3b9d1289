# Call 1b (2026-12-06), on call 1's warm H100 and carry: why RP is slower.
# Nsight Compute of one attention-kernel launch (b32 16k decode, 32/8,
# head_dim 128) with the probe off and at D = 2, and of one reader launch
# (head_interleaved b32 16k) without and with /l2_rows:2: DRAM bytes and the
# L2 read sectors that missed. Output: c1b_ncu.txt (copied from the call's
# output).
[ -d gpu_bundle ] || tar -xJf carry.tar.xz; export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib; M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_requests_srcunit_tex.sum; for v in OFF RP2; do echo "== $v"; timeout 50 ncu --clock-control none --cache-control none -k regex:PagedAttentionKernel --launch-skip 6 --launch-count 1 --metrics $M ab/bench_$v --benchmark_filter='Decode/heads:32_8/hd:128/batch:32/q:1/kv:16384/page:16/iter' 2>&1 | grep -E 'gpu__|dram__|lts__' ; done; for f in 'head_interleaved/copy:loads/batch:32/kv:16384/page:16/iter' 'head_interleaved/copy:loads/batch:32/kv:16384/page:16/l2_rows:2'; do echo "== reader $f"; timeout 50 ncu --clock-control none --cache-control none -k regex:KvReadKernel --launch-skip 2 --launch-count 1 --metrics $M gpu_bundle/bin/attention_kernel_kv_read_pattern_benchmark --benchmark_filter="$f" 2>&1 | grep -E 'gpu__|dram__|lts__'; done
