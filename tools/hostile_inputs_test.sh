#!/usr/bin/env bash
# Hostile and careless inputs through the real plan_batch binary: a table of
# files and flags, each run under a memory limit and a timeout, asserting the
# exit code, exactly one line on stderr (naming what is wrong), nothing on
# stdout for an error, and bounded time and memory. See README.md, "Limits".
#
# Memory: `ulimit -v` (virtual memory) for plain and UBSan builds; an ASan
# build reserves terabytes of address space for its shadow, so there the
# limit is ASan's own hard_rss_limit_mb instead. PLAN_BATCH=/path/to/binary
# runs the table against another build (e.g. an older one, to see it fail).
set -uo pipefail
plan=${PLAN_BATCH:-tools/plan_batch}
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/hostile.XXXXXX")
failures=0
checks=0

memory_mb=${HOSTILE_MEMORY_MB:-1024}
if grep -aq __asan_init "$plan"; then
  sanitizer=asan
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=0"
else
  sanitizer=none
fi

fail() {
  echo "FAIL $*"
  failures=$((failures + 1))
}

# run_plan NAME SECONDS ARGS...: runs plan_batch with the limits; sets
# status, elapsed, out (stdout file; $stdout_to if set), err (stderr file).
run_plan() {
  local name=$1 seconds=$2
  shift 2
  out="${stdout_to:-$tmp/$name.out}" err="$tmp/$name.err"
  local start end
  start=$(date +%s%N)
  local limit_mb=${case_memory_mb:-$memory_mb}
  if [[ $sanitizer == asan ]]; then
    ASAN_OPTIONS="$ASAN_OPTIONS:hard_rss_limit_mb=$((limit_mb * 3))" \
      timeout "$seconds" "$plan" "$@" >"$out" 2>"$err"
  else
    (ulimit -v $((limit_mb * 1024)) && exec timeout "$seconds" "$plan" "$@") >"$out" 2>"$err"
  fi
  status=$?
  end=$(date +%s%N)
  elapsed=$(((end - start) / 1000000))
  if ((status == 124)); then fail "$name: timed out after ${seconds} s"; fi
}

# expect_error NAME SECONDS EXPECTED_STDERR ARGS...: exit 1, one stderr line
# "plan_batch: ..." holding EXPECTED_STDERR, empty stdout.
expect_error() {
  local name=$1 seconds=$2 expected=$3
  shift 3
  checks=$((checks + 1))
  run_plan "$name" "$seconds" "$@"
  local lines
  lines=$(wc -l <"$err")
  if ((status != 1)); then fail "$name: exit $status, want 1; stderr: $(head -c 300 "$err")"; return; fi
  if ((lines != 1)) || [[ $(tail -c 1 "$err" | od -An -c) != *'\n'* ]]; then
    fail "$name: stderr has $lines lines, want 1:"; head -c 600 "$err"; return
  fi
  if [[ $(cat "$err") != "plan_batch: "*"$expected"* ]]; then
    fail "$name: stderr lacks \"$expected\": $(cat "$err")"
  fi
  if [[ -s $out ]]; then fail "$name: stdout not empty: $(head -c 200 "$out")"; fi
  echo "ok $name (${elapsed} ms): $(cat "$err")"
}

batch() {  # a one-batch file's JSON body fields after "mode"
  echo "{\"mode\": \"$1\", \"page_size\": $2, \"seq_lens_convention\": \"prefix_only\", $3}"
}

# ----- Files of every kind.
mkfifo "$tmp/fifo"
head -c 2000000 /dev/zero >"$tmp/two_mb.json"
truncate -s 100M "$tmp/sparse.json"
printf '\xef\xbb\xbf[%s,%s]' "$(batch DECODE 1 '"seq_lens": [3]')" \
  "$(batch DECODE 1 '"seq_lens": [5]')" >"$tmp/bom_array.json"
{ batch DECODE 1 '"seq_lens": [3]'; printf '\0'; batch DECODE 1 '"seq_lens": [999]'; } >"$tmp/nul.json"
batch DECODE 1 '"seq_lens": [3], "seq_lens": [7]' >"$tmp/duplicate_key.json"
printf '%s' "$(printf '[%.0s' {1..20})" >"$tmp/deep.json"
batch DRAFT_EXTEND 1 '"seq_lens": [4], "new_tokens": [6], "accept_lengths": [5], "num_draft_tokens": 4' \
  >"$tmp/accept_beyond.json"
batch DRAFT_EXTEND 1 '"seq_lens": [4], "new_tokens": [2]' >"$tmp/draft_extend_no_drafts.json"
batch DECODE 1 '"seq_lens": [4], "draft_step": 3, "num_draft_tokens": 3' >"$tmp/draft_step_beyond.json"
batch TARGET_VERIFY 1 '"seq_lens": [4], "new_tokens": [3], "num_draft_tokens": 4' \
  >"$tmp/verify_count.json"
printf '[%s,%s,%s]' "$(batch DECODE 4 '"seq_lens": [3]')" "$(batch DECODE 4 '"seq_lens": [5]')" \
  "$(batch DECODE 4 '"seq_lens": [1, 2, 3]')" >"$tmp/late_error.json"
batch DECODE 4 '"seq_lens": [3, 9]' >"$tmp/ok.json"
batch DECODE 65536 '"seq_lens": [1]' >"$tmp/huge_page.json"
batch DECODE 16 '"seq_lens": [16777215]' >"$tmp/huge_length.json"
batch DECODE 1 '"seq_lens": [1000000]' >"$tmp/long_row.json"
batch EXTEND 16 '"seq_lens": [4096], "new_tokens": [4096]' >"$tmp/big_prefill.json"

expect_error dev_zero 20 '--batch: "/dev/zero" holds more than the limit of 1048576 bytes' \
  --batch=/dev/zero
expect_error dev_null 20 '--batch: "/dev/null" is empty' --batch=/dev/null
expect_error directory 20 "--batch: \"$tmp\" is a directory, not a file" --batch="$tmp"
expect_error missing 20 'cannot open' --batch="$tmp/missing.json"
expect_error two_mb 20 'has 2000000 bytes, more than the limit of 1048576' --batch="$tmp/two_mb.json"
expect_error sparse_100mb 20 'has 104857600 bytes, more than the limit' --batch="$tmp/sparse.json"
# An endless FIFO: the writer gets SIGPIPE once plan_batch stops reading.
cat /dev/zero >"$tmp/fifo" 2>/dev/null &
writer=$!
expect_error endless_fifo 20 'holds more than the limit of 1048576 bytes' --batch="$tmp/fifo"
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
expect_error bom_array 20 'starts with a UTF-8 byte order mark' --batch="$tmp/bom_array.json"
expect_error nul_byte 20 'batch file has a NUL byte at byte' --batch="$tmp/nul.json"
expect_error duplicate_key 20 'batch 0: field "seq_lens" appears twice' \
  --batch="$tmp/duplicate_key.json"
expect_error deep 20 'nests arrays/objects more than 8 deep' --batch="$tmp/deep.json"
expect_error accept_beyond 20 'accept_lengths[0] = 5 exceeds num_draft_tokens = 4' \
  --batch="$tmp/accept_beyond.json"
expect_error draft_extend_no_drafts 20 'num_draft_tokens is required for mode DRAFT_EXTEND' \
  --batch="$tmp/draft_extend_no_drafts.json"
expect_error draft_step_beyond 20 'draft_step = 3 must be < num_draft_tokens = 3' \
  --batch="$tmp/draft_step_beyond.json"
expect_error verify_count 20 'new_tokens[0] = 3 but TARGET_VERIFY verifies num_draft_tokens = 4' \
  --batch="$tmp/verify_count.json"
# Batch 2 fails only when replayed: still nothing on stdout for batches 0, 1.
expect_error late_error 20 'batch 2: batch of 3 requests exceeds the plan capacity of 2' \
  --batch="$tmp/late_error.json" --graph_max_batch=2

# ----- Flags, checked before anything is built.
ok="--batch=$tmp/ok.json"
expect_error softcap_inf 20 '--softcap = inf must be' "$ok" --run --softcap=inf
expect_error softcap_nan 20 '--softcap = nan must be' "$ok" --run --softcap=nan
expect_error softcap_past_float 20 '--softcap = 1e+39 must be' "$ok" --run --softcap=1e39
expect_error head_dim_96 20 '--head_dim = 96 is not supported' "$ok" --run --head_dim=96
expect_error head_dim_1e9 20 '--head_dim = 1000000000 is not supported' "$ok" --run \
  --head_dim=1000000000
expect_error q_heads_1e9 20 '--num_q_heads = 1000000000 must be in [1, 256]' "$ok" --run \
  --num_q_heads=1000000000
expect_error kv_heads_1e9 20 '--num_kv_heads = 1000000000 must be in [1, 256]' "$ok" --run \
  --num_kv_heads=1000000000
expect_error window_left 20 '--window_left = -5 must be in [-1, 2147483647]' "$ok" --run \
  --window_left=-5
for capacity in 100000000 1000000000 5000000000; do
  expect_error "graph_max_batch_$capacity" 20 "--graph_max_batch = $capacity must be in [0, 4096]" \
    "$ok" --graph_max_batch=$capacity
done
expect_error graph_page_table 20 'graph page table entries' --batch="$tmp/long_row.json" \
  --graph_max_batch=100
expect_error graph_key_rows 20 'key rows exceed int32' --batch="$tmp/long_row.json" \
  --graph_max_batch=4096
expect_error run_huge_page 20 'batch 0: --run would take about' --batch="$tmp/huge_page.json" --run
expect_error run_huge_length 30 'batch 0: --run would take about' --batch="$tmp/huge_length.json" \
  --run
expect_error run_work 20 'batch 0: --run attention work' --batch="$tmp/big_prefill.json" --run

# ----- Lost writes: every write and the final close are checked.
checks=$((checks + 1))
stdout_to=/dev/full run_plan stdout_full 20 "$ok"
if ((status != 1)) || [[ $(wc -l <"$err") -ne 1 ]] ||
  ! grep -q '^plan_batch: writing stdout failed: No space left on device$' "$err"; then
  fail "stdout_full: exit $status, stderr: $(cat "$err")"
else
  echo "ok stdout_full: $(cat "$err")"
fi
for file in meta.json q.npy lse.npy; do
  dump="$tmp/dump_$file"
  mkdir -p "$dump"
  ln -sf /dev/full "$dump/$file"
  expect_error "dump_full_$file" 30 "writing \"$dump/$file\" failed: No space left on device" \
    "$ok" --dump_dir="$dump" --num_q_heads=2 --num_kv_heads=1 --head_dim=64
done
# A write failing after output began (batch 1's dump): still exit 1 and one
# line naming the batch and the file; stdout then holds batch 0, cut off.
mkdir -p "$tmp/dump_late/batch_1"
ln -sf /dev/full "$tmp/dump_late/batch_1/meta.json"
printf '[%s,%s]' "$(batch DECODE 4 '"seq_lens": [3]')" "$(batch DECODE 4 '"seq_lens": [5]')" \
  >"$tmp/two.json"
checks=$((checks + 1))
run_plan late_write 30 --batch="$tmp/two.json" --dump_dir="$tmp/dump_late" --num_q_heads=2 \
  --num_kv_heads=1 --head_dim=64
if ((status != 1)) || [[ $(wc -l <"$err") -ne 1 ]] ||
  ! grep -q "^plan_batch: batch 1: writing \"$tmp/dump_late/batch_1/meta.json\" failed" "$err"; then
  fail "late_write: exit $status, stderr: $(cat "$err")"
elif [[ $(head -c 2 "$out") != '[{' ]] || [[ $(grep -o '"mode"' "$out" | wc -l) -ne 1 ]]; then
  fail "late_write: stdout should hold batch 0 only: $(head -c 200 "$out")"
else
  echo "ok late_write (${elapsed} ms): $(cat "$err")"
fi
touch "$tmp/a_file"
expect_error dump_dir_under_file 20 "--dump_dir: cannot create \"$tmp/a_file/dump\"" "$ok" \
  --dump_dir="$tmp/a_file/dump"

# ----- Bounded memory for large output: eight batches of a 4M-token request
# print ~270 MB, but only one batch is held at a time, so 256 MiB of address
# space is enough (holding them all took ~800 MB here, 6.9 GB with 16M-token
# requests), and the peak does not grow with the number of batches.
large_batches() {
  local n=$1 body
  body=$(batch DECODE 16 '"seq_lens": [4194303]')
  printf '['
  for ((i = 0; i < n; ++i)); do printf '%s%s' "$([[ $i -gt 0 ]] && echo ,)" "$body"; done
  printf ']'
}
large_batches 1 >"$tmp/one_large.json"
large_batches 8 >"$tmp/eight_large.json"
checks=$((checks + 1))
case_memory_mb=256 run_plan eight_large 300 --batch="$tmp/eight_large.json"
if ((status != 0)); then
  fail "eight_large: exit $status: $(head -c 300 "$err")"
elif [[ -s $err ]]; then
  fail "eight_large: stderr not empty: $(head -c 300 "$err")"
elif [[ $(head -c 1 "$out") != "[" || $(tail -c 2 "$out" | od -An -c | tr -d ' ') != ']\n' ]] ||
  [[ $(grep -o '"mode":"DECODE"' "$out" | wc -l) -ne 8 ]]; then
  fail "eight_large: stdout is not an array of 8 batches"
else
  echo "ok eight_large (${elapsed} ms, $(wc -c <"$out") bytes of output within 256 MiB)"
fi
rm -f "$out"
if /usr/bin/time -f %M true >/dev/null 2>&1; then
  checks=$((checks + 1))
  peak() {  # peak RSS in KiB of plan_batch on file $1
    # ASan's quarantine holds freed memory back (256 MB by default), which
    # would look like held output: measure without it.
    ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=0" \
      /usr/bin/time -f %M -o "$tmp/rss" timeout 300 "$plan" --batch="$1" >/dev/null 2>&1
    cat "$tmp/rss"
  }
  one=$(peak "$tmp/one_large.json") eight=$(peak "$tmp/eight_large.json")
  if ((eight > one * 3 / 2 + 32768)); then
    fail "peak_rss: 8 batches peak at ${eight} KiB, 1 batch at ${one} KiB: output is held"
  else
    echo "ok peak_rss: 1 batch ${one} KiB, 8 batches ${eight} KiB"
  fi
fi

# ----- A run near the size the limits allow succeeds within the same memory.
checks=$((checks + 1))
run_plan run_big_page 120 --batch="$tmp/huge_page.json" --run --num_q_heads=1 --num_kv_heads=1 \
  --head_dim=64 --dump_dir="$tmp/dump_ok"
if ((status != 0)) || [[ -s $err ]] || ! grep -q '"run":{"backend"' "$out" ||
  [[ ! -s "$tmp/dump_ok/meta.json" ]]; then
  fail "run_big_page: exit $status: $(head -c 300 "$err")"
else
  echo "ok run_big_page (${elapsed} ms)"
fi

rm -rf "$tmp"
echo "hostile_inputs: $checks cases, $failures failure(s) (sanitizer: $sanitizer, memory ${memory_mb} MiB)"
((failures == 0))
