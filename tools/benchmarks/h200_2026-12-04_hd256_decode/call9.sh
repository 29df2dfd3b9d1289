# Call 9 (carry.tar.xz: the bundle of 1278184, `D8WG`; ab/bench_D8 =
# c5cb2eb's kernels, ab/bench_WG = 1278184's, both with boundary_probe.patch):
# GPU tests, A/B, racecheck of the head_dim 256 decode cases, then the peer
# run and the head_dim 256 dumps if D8WG's b128 4k decode gains.
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
b=gpu_bundle/bin; mkdir -p $OUT/r
GPU_SESSION_PACK=$OUT/s.tar.xz bash tools/gpu_session.sh $OUT/s tests ab 3 'hd:256|Bound/heads:32_8/hd:128' D8 WG 2>&1 | tail -30
echo "== racecheck head_dim 256 decode"
timeout 150 compute-sanitizer --tool racecheck --print-limit 100000 $b/attention_kernel_paged_attention_test --gtest_filter='*DecodeKernelMatchesGeneralKernelBitForBit*:*FewWorkersRunManySegmentsEach*:*Sweep*hd256_page16*' > $OUT/r/racecheck.log 2>&1; echo "racecheck rc=$?"; grep -E 'PASSED|FAILED|RACECHECK SUMMARY' $OUT/r/racecheck.log
ratio=$(grep -E '^Decode/heads:32_8/hd:256/batch:128/q:1/kv:4096/page:16 ' $OUT/s/ab_table.txt | awk '{print $3}')
echo "b128 4k WG/D8: $ratio"
if awk -v r="$ratio" 'BEGIN { exit !(r != "" && r < 0.995) }'; then
  GPU_SESSION_PACK=$OUT/p.tar.xz bash tools/gpu_session.sh $OUT/p peers 2>&1 | tail -4
  dumps=$(mktemp -d)
  echo '{"mode": "DECODE", "page_size": 16, "seq_lens_convention": "includes_new_tokens", "seq_lens": [16000, 17, 4000], "seed": 9}' > $dumps/decode.json
  for heads in 64 32; do
    $b/tools_plan_batch --batch=$dumps/decode.json --run --head_dim=256 --num_q_heads=$heads --num_kv_heads=8 --dump_dir="$dumps/hd256_$heads" > $OUT/r/plan_batch_hd256_$heads.log 2>&1 && python3 tools/check_dump.py "$dumps/hd256_$heads"; echo "hd256 $heads/8 decode dump rc=$?"
  done
fi
cd $OUT && tar -cJf call9.tar.xz r
