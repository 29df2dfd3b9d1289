#!/usr/bin/env bash
# gpu_session.sh's `sass` table, without a GPU: its run_sass function over a
# fake cuobjdump whose listing has a kernel of 5000 instructions (addresses
# past 0xffff take five hex digits: the count once stopped at 4096) and one
# of 3 with a spill, and a merge kernel the default regex also keeps.
set -uo pipefail
script=tools/gpu_session.sh
[[ -f $script ]] || { echo "FAIL: $script not found"; exit 1; }
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/sass.XXXXXX")
mkdir -p "$work/path" "$work/out" "$work/ab"
touch "$work/ab/bench_X"

cat > "$work/path/cuobjdump" << 'EOF2'
#!/usr/bin/env bash
# cuobjdump -sass FILE: two kernels in cuobjdump's layout, each instruction
# an address comment, the instruction and its encoding, then a second
# encoding line.
kernel() {  # mangled template arguments, instruction count, extra lines
  echo "		Function : _ZN15paged_attention16attention_kernel20PagedAttentionKernelI$1EEEvNS_20PagedAttentionParamsE"
  echo '	.headerflags	@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"'
  local i
  for ((i = 0; i < $2; i++)); do
    printf '        /*%04x*/                   %s ;  /* 0x000fe40000000f00 */\n' $((i * 16)) "${3:-NOP}"
    echo '                                                                                 /* 0x000fe40000000800 */'
  done
}
echo "	code for sm_90a"
kernel 13__nv_bfloat16Li64ELb0 5000
kernel 6__halfLi64ELb1 2 "STL [R1], R2"
printf '        /*0020*/                   LDL R2, [R1] ;  /* 0x000fe40000000f00 */\n'
echo "		Function : _ZN15paged_attention16attention_kernel11MergeKernelI13__nv_bfloat16EEvNS_11MergeParamsE"
printf '        /*0000*/                   BAR.SYNC 0x0 ;  /* 0x000fe40000000f00 */\n'
echo "		Function : _ZN15paged_attention5other6UnrelatedEv"
printf '        /*0000*/                   NOP ;  /* 0x000fe40000000f00 */\n'
EOF2
chmod +x "$work/path/cuobjdump"

function_text=$(sed -n '/^run_sass() {/,/^}/p' "$script")
[[ -n $function_text ]] || { echo "FAIL: run_sass not found in $script"; exit 1; }
table=$(cd "$work" && PATH="$work/path:$PATH" \
  bash -c "bin='$work/bin'; out='$work/out'; $function_text
run_sass X" | tr -s ' ')
echo "$table"
failures=0
expect() {  # name, wanted line
  if grep -qxF "$2" <<< "$table"; then
    echo "ok   $1"
  else
    echo "FAIL $1: no line '$2'"; failures=$((failures + 1))
  fi
}
expect "header" "kernel instructions LDL STL BAR LDG"
expect "past 64 KB of code" "13__nv_bfloat16Li64ELb0 5000 0 0 0 0"
expect "spills" "6__halfLi64ELb1 3 1 2 0 0"
expect "merge kernel" "13__nv_bfloat16EEvNS_11MergeParamsE 1 0 0 1 0"
[[ $(wc -l <<< "$table") == 4 ]] || { echo "FAIL: other kernels listed"; failures=$((failures + 1)); }
[[ -f $work/out/sass_X.txt.xz ]] || { echo "FAIL: the listing not kept"; failures=$((failures + 1)); }
echo "$failures failed"
((failures == 0))
