#!/usr/bin/env bash
# ncu_stalls.py over a made-up SASS source page (plain and .xz): the stall
# totals by reason with their shares, the instructions ranked by samples with
# their two main reasons, and --around's rows with their execution counts.
set -euo pipefail
tool=tools/ncu_stalls.py
dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/ncu_stalls.XXXXXX")
{
  echo '"Kernel Name","void Kernel(Params)",'
  echo '"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)","Instructions Executed","stall_long_sb","stall_wait","stall_long_sb (Not Issued)"'
  echo '"0x0","  LDG.E R2, desc[UR4][R4.64]","1","1","100","0","1","0"'
  echo '"0x10","  IMAD.MOV.U32 R3, RZ, RZ, R2","30","30","100","28","2","28"'
  echo '"0x20","  @!P0 BRA 0x0","9","9","400","0","9","0"'
} > "$dir/k.csv"
xz -k "$dir/k.csv"
for f in "$dir/k.csv" "$dir/k.csv.xz"; do
  out=$(python3 "$tool" "$f" --top 2 --around 1)
  grep -q "40 samples, 600 warp instructions executed" <<< "$out"
  grep -qE "stall_long_sb +28 +70.0%" <<< "$out"
  grep -qE "stall_wait +12 +30.0%" <<< "$out"
  # Ranked: row 1 (30 samples) before row 2 (9); row 0 (1) past --top 2.
  ranked=$(grep -E "^ +[0-9]+ +[0-9]+ +[0-9.]+% " <<< "$out")
  [[ $(sed -n 1p <<< "$ranked") == *"1     30  75.0% IMAD.MOV.U32 R3, RZ, RZ, R2"*"(28, 'stall_long_sb'), (2, 'stall_wait')"* ]]
  [[ $(sed -n 2p <<< "$ranked") == *"2      9  22.5% @!P0 BRA 0x0"* ]]
  [[ $(wc -l <<< "$ranked") == 2 ]]
  grep -qE "^ +0 +1 +100 LDG.E R2" <<< "$out"
done
echo "ncu_stalls_test: OK"
