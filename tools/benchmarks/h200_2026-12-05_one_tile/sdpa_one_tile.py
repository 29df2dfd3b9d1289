#!/usr/bin/env python3
"""PyTorch SDPA on the one-tile call, timed as our benchmark times its case.

BM_PagedAttentionOneTile (batch 1, q 1 and 8, 32/8 heads, head_dim 128, 64
keys, bf16, L2 warm): a CUDA graph of the call, events around each replay,
the median of 101. Here SDPA's flash and cuDNN backends on contiguous K/V
([1, 8, 64, 128], enable_gqa=True; q 8 bottom-right causal where the backend
takes it, else unmasked). Run on the GPU machine: python3 sdpa_one_tile.py
"""
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.bias import causal_lower_right
import torch.nn.functional as F


def time_graph(fn, replays=101):
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    for _ in range(5):
        graph.replay()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    us = []
    for _ in range(replays):
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        us.append(start.elapsed_time(stop) * 1000)
    us.sort()
    return us[len(us) // 2], us[len(us) // 10], us[len(us) * 9 // 10]


def main():
    torch.manual_seed(0)
    for q_len in (1, 8):
        q = torch.randn(1, 32, q_len, 128, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(1, 8, 64, 128, device="cuda", dtype=torch.bfloat16)
        v = torch.randn_like(k)
        for name, backend in (("sdpa_flash", SDPBackend.FLASH_ATTENTION),
                              ("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION)):
            for masked in ((False, True) if q_len > 1 else (False,)):
                mask = causal_lower_right(q_len, 64) if masked else None

                def call():
                    with sdpa_kernel(backend):
                        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                              enable_gqa=True)
                label = f"{name} q{q_len}{' causal_lower_right' if masked else ''}"
                try:
                    median, p10, p90 = time_graph(call)
                    print(f"{label:40s} warm graph replay median {median:.2f} us "
                          f"(p10 {p10:.2f}, p90 {p90:.2f})")
                except Exception as error:  # a backend that refuses the shape or mask
                    print(f"{label:40s} failed: {str(error).splitlines()[0][:120]}")


if __name__ == "__main__":
    main()
