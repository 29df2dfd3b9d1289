# Call 1c (same carry): memcheck of the kernel test's cases that call 1b's
# memcheck did not reach before its 110 s cut (36 of them passed with 0
# errors): the fp16 sweeps at head_dim 128 pages 16-256 and 256, and the
# long prefills.
[[ -d gpu_bundle ]] || tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
source tools/benchmarks/h200_2026-12-04_ovl2_capped/sanitize.sh  # sanitize()
sanitize memcheck 200 gpu_bundle/bin/attention_kernel_paged_attention_test \
  '*/float16_hd128_page16:*/float16_hd128_page64:*/float16_hd128_page256:*/float16_hd256_*:*PagedAttentionPrefillTest*' rest
