# Call 2 (the carry of call 1; the machine may still hold it): memcheck and
# racecheck of the member pairs' kernel test (its capped case runs the
# overlapped steps) and of the modes test's softcap cases.
[[ -d gpu_bundle ]] || tar -xJf carry.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
run() {  # tool limit binary filter
  timeout "$2" compute-sanitizer --tool "$1" --error-exitcode 3 "gpu_bundle/bin/$3" \
    --gtest_filter="$4" > "$OUT/c2_$1_$3.txt" 2>&1
  echo "$1 $3 $4 rc=$?"
  grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED) " "$OUT/c2_$1_$3.txt" | sort | uniq -c
}
run memcheck 60 attention_kernel_paged_attention_test '*MemberPairs*'
run memcheck 90 attention_kernel_paged_attention_modes_test '*Softcap*'
run racecheck 240 attention_kernel_paged_attention_test '*MemberPairs*'
run racecheck 150 attention_kernel_paged_attention_modes_test '*Softcap*'
