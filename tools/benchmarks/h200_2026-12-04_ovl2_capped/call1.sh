# Call 1 (carry.tar.xz: gpu_bundle of ovl2-capped's head (OVL2 for capped
# requests only, on main (ac2ce56: the kernel test's bit comparisons through
# FirstDifference, every eager test plan's grid ending at its last busy worker,
# the partition's faster walks, same plans)),
# ab/bench_BASE built at main (kernels PTX-identical to
# c872c9e), ab/bench_NEW running the bundle's benchmark, ab/bench_HOLD built
# at hold-probe's head (main's member pairs releasing each step's stages one
# step late, without the overlap)): A/B over the compute-bound cases, 5
# rounds, then every GPU test.
tar -xJf carry.tar.xz || exit 1
GPU_SESSION_PACK=$OUT/c1.tar.xz AB_REPLAY_GAP_US=2000 bash tools/gpu_session.sh $OUT/c1 \
  ab 5 '/q:(64|512|2048)/' BASE NEW HOLD tests
