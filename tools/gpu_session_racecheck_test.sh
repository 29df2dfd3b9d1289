#!/usr/bin/env bash
# gpu_session.sh's racecheck accounting, without a GPU: its run_racecheck
# function over fake test binaries and a fake compute-sanitizer. A part whose
# filter matches no case, or with a failed case, must count as unclean; a
# hazard must reach the total; RACECHECK_PARTS must pick parts by number.
set -uo pipefail
script=tools/gpu_session.sh
[[ -f $script ]] || { echo "FAIL: $script not found"; exit 1; }
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/racecheck.XXXXXX")
mkdir -p "$work/bin" "$work/path" "$work/out"

# compute-sanitizer --tool racecheck --print-limit N BINARY ARGS...: runs the
# binary and prints the summary line the real tool prints, with the hazard
# count the fake binary left in $work/hazards.
cat > "$work/path/compute-sanitizer" << EOF
#!/usr/bin/env bash
shift 4
rm -f "$work/hazards"
"\$@"; rc=\$?
echo "========= RACECHECK SUMMARY: \$(cat "$work/hazards" 2> /dev/null || echo 0) hazards displayed (0 errors, 0 warnings)"
exit \$rc
EOF
# A fake test binary: FAKE_MODE says how the parts whose filter names
# KvHeadPairs / UnevenGqa / MemberPairs behave; every other part passes.
cat > "$work/bin/fake_test" << EOF
#!/usr/bin/env bash
filter="\$*"
case "\$FAKE_MODE:\$filter" in
  unclean:*=PagedAttentionGpuTest.KvHeadPairs\\*) echo "[  PASSED  ] 0 tests."; exit 0 ;;
  unclean:*=PagedAttentionGpuTest.UnevenGqa\\*)
    echo "[ RUN      ] PagedAttentionGpuTest.UnevenGqaRatiosMatchReference"
    echo "[  PASSED  ] 0 tests."; echo "[  FAILED  ] 1 test, listed below:"; exit 1 ;;
  hazard:*=PagedAttentionGpuTest.MemberPairs\\*) echo 3 > "$work/hazards" ;;
esac
echo "[ RUN      ] Fake.Case"
echo "[  PASSED  ] 2 tests."
EOF
chmod +x "$work/path/compute-sanitizer" "$work/bin/fake_test"
ln -s fake_test "$work/bin/attention_kernel_paged_attention_test"
ln -s fake_test "$work/bin/attention_kernel_paged_attention_modes_test"

# run_racecheck alone: the script itself runs steps when executed.
function_text=$(sed -n '/^run_racecheck() {/,/^}/p' "$script")
[[ -n $function_text ]] || { echo "FAIL: run_racecheck not found in $script"; exit 1; }
run() {  # FAKE_MODE, RACECHECK_PARTS -> the total line
  FAKE_MODE=$1 RACECHECK_PARTS=$2 PATH="$work/path:$PATH" \
    bash -c "bin='$work/bin'; out='$work/out'; $function_text
run_racecheck" | grep '^racecheck total'
}

failures=0
expect() {  # name, got, want
  if [[ $2 == "$3"* ]]; then
    echo "ok   $1: $2"
  else
    echo "FAIL $1: got '$2', want '$3...'"; failures=$((failures + 1))
  fi
}
expect "all clean" "$(run clean '')" \
  "racecheck total: 0 hazards, 0 of 8 parts cut at the limit, 0 unclean"
expect "no case run, a failed case" "$(run unclean '')" \
  "racecheck total: 0 hazards, 0 of 8 parts cut at the limit, 2 unclean"
expect "hazards counted" "$(run hazard '')" \
  "racecheck total: 3 hazards, 0 of 8 parts cut at the limit, 0 unclean"
expect "parts picked" "$(run unclean '2 8')" \
  "racecheck total: 0 hazards, 0 of 2 parts cut at the limit, 0 unclean"
expect "picked part unclean" "$(run unclean '5')" \
  "racecheck total: 0 hazards, 0 of 1 parts cut at the limit, 1 unclean"
echo "$failures failed"
((failures == 0))
