# Call 1 (carry.tar.xz: the bundle of f52d093, with ab/bench_base = its benchmark,
# ab/bench_ta, ab/test_ta, ab/modes_ta = the same with `TA`, softcap by
# tanh.approx.f32): A/B of base and TA on the Window / Softcap cases and their
# twins, the peer run of those cases on base (flex for Window / Softcap), and
# the TA build's kernel and modes tests.
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
F='(Window|Softcap)/|(Decode|Verify|Prefill)/heads:32_8/hd:(128|256)/batch:(32/q:1/kv:(4096|16384)|64/q:8/kv:4096|16/q:(8|64)/kv:8192|4/q:512/kv:4096)/page:16/iterations'
GPU_SESSION_PACK=$OUT/c1.tar.xz bash tools/gpu_session.sh $OUT/c1 ab 3 "$F" base ta 2>&1 | tail -25
PYTHONUNBUFFERED=1 timeout 240 python3 tools/peer_benchmark.py \
  --ours gpu_bundle/bin/attention_kernel_paged_attention_benchmark --filter "$F" \
  --out $OUT/c1/peers_options.json --flex-filter 'Window|Softcap' > $OUT/c1/peers_options_table.txt 2>&1
echo "peers rc=$?"; grep -vE '^flex failed' $OUT/c1/peers_options_table.txt | cut -c1-175 | tail -22
for t in test_ta modes_ta; do
  start=$SECONDS
  timeout 200 ab/$t --gtest_brief=1 > $OUT/c1/$t.log 2>&1
  echo "$t rc=$? in $((SECONDS - start)) s"; grep -E "^\[  (PASSED|FAILED) |Failure" $OUT/c1/$t.log | head -8
  grep -hE "ERRSTAT" $OUT/c1/$t.log | awk '{print $NF}' | sort -n | tail -1 | sed 's/^/worst error ratio /'
done
cd $OUT && tar -cJf c1.tar.xz c1
