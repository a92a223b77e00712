"""The transformer stack shared by workloads (b) and (c): 4 pre-norm blocks
(RMSNorm, attention through SDPA, SwiGLU MLP), d_model 1024, 16 heads, bf16."""
import torch
import torch.nn as nn
import torch.nn.functional as F

D_MODEL, HEADS, LAYERS = 1024, 16, 4


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))

    def forward(self, x):
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * self.w


class Block(nn.Module):
    def __init__(self, d=D_MODEL, h=HEADS):
        super().__init__()
        self.h = h
        self.n1, self.n2 = RMSNorm(d), RMSNorm(d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d, bias=False)
        self.up = nn.Linear(d, 2 * 4 * d, bias=False)
        self.down = nn.Linear(4 * d, d, bias=False)

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(self.n1(x)).view(B, T, 3, self.h, D // self.h).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                           v.transpose(1, 2), is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, D))
        gate, up = self.up(self.n2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


class Stack(nn.Module):
    def __init__(self, layers=LAYERS):
        super().__init__()
        self.blocks = nn.ModuleList(Block() for _ in range(layers))

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


def build(seed=0):
    torch.manual_seed(seed)
    return Stack().to(device="cuda", dtype=torch.bfloat16).eval()
