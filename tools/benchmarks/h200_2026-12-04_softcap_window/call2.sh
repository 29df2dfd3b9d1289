# Call 2 (carry.tar.xz: the bundle of 9bdb4ec, base kernels with the new modes
# test SoftcapWhereTanhSaturates; ab/bench_base = f52d093's benchmark, ab/*_ta
# with TA, ab/*_te with TE): the new test on base, TA and TE; TE's kernel and
# modes tests; A/B of base, TA and TE on the Softcap cases and their twins.
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
mkdir -p $OUT/c2
for b in gpu_bundle/bin/attention_kernel_paged_attention_modes_test ab/modes_ta ab/modes_te; do
  n=$(basename $b); start=$SECONDS
  timeout 120 $b --gtest_filter='*SoftcapWhereTanhSaturates*' > $OUT/c2/saturates_$n.log 2>&1
  echo "$b saturates rc=$? in $((SECONDS - start)) s: $(grep -c 'Failure' $OUT/c2/saturates_$n.log) failures"
  grep -A6 -m2 'Failure' $OUT/c2/saturates_$n.log | cut -c1-200
  grep -hE "ERRSTAT" $OUT/c2/saturates_$n.log | awk '{print $NF}' | sort -n | tail -1 | sed 's/^/  worst error ratio /'
done
for t in test_te modes_te; do
  start=$SECONDS
  timeout 200 ab/$t --gtest_brief=1 > $OUT/c2/$t.log 2>&1
  echo "$t rc=$? in $((SECONDS - start)) s"; grep -E "^\[  (PASSED|FAILED) |Failure" $OUT/c2/$t.log | head -8
  grep -hE "ERRSTAT" $OUT/c2/$t.log | awk '{print $NF}' | sort -n | tail -1 | sed 's/^/worst error ratio /'
done
F='Softcap/|(Decode|Verify|Prefill)/heads:32_8/hd:(128|256)/batch:(32/q:1/kv:16384|16/q:(8|64)/kv:8192|4/q:512/kv:4096)/page:16/iterations'
bash tools/gpu_session.sh $OUT/c2 ab 3 "$F" base ta te 2>&1 | tail -14
cd $OUT && tar -cJf c2.tar.xz c2
