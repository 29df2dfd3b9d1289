# Call 7 (carry.tar.xz: the bundle of 7cb77ff; ab/modes_tanhf, ab/modes_te):
# the softcap test on the three caps with BOUNDSTAT, then the whole modes test
# on the bundle (TA).
tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
mkdir -p $OUT/c7
for b in gpu_bundle/bin/attention_kernel_paged_attention_modes_test ab/modes_tanhf ab/modes_te; do
  n=$(basename $b)
  timeout 100 $b --gtest_filter='*SoftcapWhereTanhSaturates*' > $OUT/c7/saturates_$n.log 2>&1
  echo "== $b rc=$?"
  awk '/^CASE/ {c = $3 " " $4 " cap " $6 " q " $10} /^BOUNDSTAT/ {print c, "use", $NF}' \
    $OUT/c7/saturates_$n.log | sort -k8 -n | tail -4
  awk '/^CASE/ {c = $6} /^BOUNDSTAT/ {if ($NF > m[c]) m[c] = $NF} END {for (k in m) print "  cap " k " largest use " m[k]}' \
    $OUT/c7/saturates_$n.log | sort
done
start=$SECONDS
timeout 200 gpu_bundle/bin/attention_kernel_paged_attention_modes_test --gtest_brief=1 > $OUT/c7/modes.log 2>&1
echo "modes test rc=$? in $((SECONDS - start)) s"; grep -E '^\[  (PASSED|FAILED)' $OUT/c7/modes.log
grep -h BOUNDSTAT $OUT/c7/modes.log | awk '{print $NF}' | sort -n |
  awk '{v[NR] = $1} END {print "checks " NR ", median use " v[int(NR / 2) + 1] ", p90 " v[int(NR * 0.9)] ", largest " v[NR]}'
grep -h BOUNDSTAT $OUT/c7/modes.log | sort -k10 -n | tail -3 | cut -c1-160
