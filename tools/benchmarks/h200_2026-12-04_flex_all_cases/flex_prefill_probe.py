"""Runs compiled flex_attention (its main kernel) on the prefill case
Prefill/heads:32_8/hd:128/batch:4/q:512/kv:4096 (bottom-right causal block
mask, GQA 4, bf16) as tools/peer_benchmark.py does, a few times, so that
Nsight Compute can profile its Triton kernel beside ours (call 2)."""
import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

batch, hq, hkv, q_len, kv_len, hd = 4, 32, 8, 512, 4096, 128
q = torch.randn(batch, hq, q_len, hd, device="cuda", dtype=torch.bfloat16)
k = torch.randn(batch, hkv, kv_len, hd, device="cuda", dtype=torch.bfloat16)
v = torch.randn(batch, hkv, kv_len, hd, device="cuda", dtype=torch.bfloat16)
offset = kv_len - q_len


def bottom_right(b, h, q_idx, kv_idx):
    return kv_idx <= q_idx + offset


mask = create_block_mask(bottom_right, B=None, H=None, Q_LEN=q_len, KV_LEN=kv_len, device="cuda")
flex = torch.compile(flex_attention, dynamic=False)
for _ in range(8):
    flex(q, k, v, block_mask=mask, enable_gqa=True)
torch.cuda.synchronize()
print("flex prefill probe done")
