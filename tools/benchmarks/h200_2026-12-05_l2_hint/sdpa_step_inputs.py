"""cuDNN SDPA decode with the query in L2 (call 2 of this folder).

tools/peer_benchmark.py times each peer as the median of 31 calls with L2
flushed before each (a 256 MiB read). An engine's query comes from the
kernel just before attention, so it sits in L2. This times cuDNN both ways on
the one-request decode shapes: `flushed` as the peer script does, `query in
L2` with the query copied back over itself (from a copy) after the flush,
untimed, as our benchmark's STEP probe does for its own step inputs.
"""
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

REPLAYS = 31
flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")


def median_ms(call, before):
    call()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(REPLAYS):
        flush.sum(dtype=torch.int64)
        before()
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return sorted(times)[len(times) // 2]


print(torch.cuda.get_device_name(), torch.__version__)
for hq, hkv, hd, kv in ((32, 8, 128, 32768), (32, 8, 128, 131072), (64, 8, 128, 32768),
                        (64, 8, 128, 131072), (32, 8, 64, 131072)):
    q = torch.randn(1, hq, 1, hd, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(1, hkv, kv, hd, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(1, hkv, kv, hd, device="cuda", dtype=torch.bfloat16)
    q_copy = q.clone()
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        call = lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        for round_ in range(3):
            flushed = median_ms(call, lambda: None)
            warm_q = median_ms(call, lambda: q.copy_(q_copy))
            print(f"sdpa_cudnn {hq}/{hkv} hd{hd} b1 kv{kv} round {round_ + 1}: flushed {flushed * 1e3:.1f} us, "
                  f"query in L2 {warm_q * 1e3:.1f} us ({warm_q / flushed:.3f})")
    del q, k, v, q_copy
    torch.cuda.empty_cache()
