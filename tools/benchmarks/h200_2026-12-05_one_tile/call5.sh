# Call 5 (2026-12-05, the forty-fifth session): why `direct`'s S step takes
# ~2,850 cycles (call 4's stamps): the probe with `direct_k_shared` (K through
# shared memory, read back after the barrier), twice, and the SASS of `direct`
# (where its K loads sit against the barrier). Carry: carry_probe.tar.xz.
tar -xJf carry_probe.tar.xz || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv | tee $OUT/c5_gpu.txt
for i in 1 2; do ab/one_tile_floor 2>&1 | tee $OUT/c5_one_tile_floor_$i.txt; done
cuobjdump -sass ab/one_tile_floor > $OUT/c5_sass_all.txt 2>&1
awk '/Function : .*DirectILb0ELb0/{p=1} p&&/Function : /&&!/DirectILb0ELb0/{p=0} p' $OUT/c5_sass_all.txt \
  > $OUT/c5_sass_direct.txt
grep -n -E 'LDG|BAR|LDS|STS|CS2R|FFMA|SHFL|EXIT' $OUT/c5_sass_direct.txt | \
  awk '{print $1, $2, $3}' | head -150
