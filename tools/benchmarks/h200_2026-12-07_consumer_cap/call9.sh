# Call 9 (carry_call7.tar.xz): on an H200, call 7's A/B of main against F2
# (the case this folder is about, where it should matter); on any card,
# racecheck parts 4 (the modes test's tree cases: F2 changed the tree
# kernel's masked tiles at head_dim 64) and 2 (the float16 sweep) of F2's
# bundle.
tar -xJf carry_call7.tar.xz || exit 1
export LD_LIBRARY_PATH=$PWD/gpu_bundle/lib
export GPU_SESSION_PACK=$OUT/call9.tar.xz
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
echo "$gpu"
if [[ $gpu == *H200* ]]; then
  AB_BENCH_LIMIT_S=90 bash tools/gpu_session.sh $OUT/r ab 5 \
    'DeviceCopy|hd:64/|Verify/heads:32_8/hd:(128|256)/batch:16/q:8/kv:8192/page:16/(iter|dtype)|Decode/heads:32_8/hd:128/batch:(1|32)/q:1/kv:(131072|16384)/page:16/iter' \
    main F2
fi
RACECHECK_PARTS="4" bash tools/gpu_session.sh $OUT/r racecheck
