"""The fixed set of Triton kernels the jit-workload compiles.

Each entry is compiled ahead of time for one named GPU target
(GPUTarget("cuda", 90, 32), an H100/H200), so no GPU is needed: Triton's
front end, its MLIR passes and the ptxas that ships in the wheel all run on
the CPU, and the result lands in TRITON_CACHE_DIR like a real first call's.
"""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)


@triton.jit
def softmax_kernel(out, inp, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(inp + row * in_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out + row * out_stride + cols, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def layernorm_kernel(x, y, w, b, stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    v = tl.load(x + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(v, axis=0) / n
    d = tl.where(mask, v - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / n + eps)
    out = d * rstd * tl.load(w + cols, mask=mask) + tl.load(b + cols, mask=mask)
    tl.store(y + row * stride + cols, out, mask=mask)


@triton.jit
def matmul_kernel(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        av = tl.load(a + rm[:, None] * sam + (k + rk)[None, :] * sak)
        bv = tl.load(b + (k + rk)[:, None] * sbk + rn[None, :] * sbn)
        acc += tl.dot(av, bv)
    tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(c.dtype.element_ty))


_MM_SIG = {"a": "*fp16", "b": "*fp16", "c": "*fp16", "M": "i32", "N": "i32", "K": "i32",
           "sam": "i32", "sak": "i32", "sbk": "i32", "sbn": "i32", "scm": "i32", "scn": "i32",
           "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
_SM_SIG = {"out": "*fp32", "inp": "*fp32", "in_stride": "i32", "out_stride": "i32",
           "n_cols": "i32", "BLOCK": "constexpr"}
_LN_SIG = {"x": "*fp16", "y": "*fp16", "w": "*fp16", "b": "*fp16", "stride": "i32", "n": "i32",
           "eps": "fp32", "BLOCK": "constexpr"}

# (name, kernel, signature, constexprs): the workload's "model".
KERNELS = [
    ("add_1024", add_kernel, {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32",
                              "BLOCK": "constexpr"}, {"BLOCK": 1024}),
    ("softmax_1024", softmax_kernel, _SM_SIG, {"BLOCK": 1024}),
    ("softmax_4096", softmax_kernel, _SM_SIG, {"BLOCK": 4096}),
    ("layernorm_1024", layernorm_kernel, _LN_SIG, {"BLOCK": 1024}),
    ("layernorm_4096", layernorm_kernel, _LN_SIG, {"BLOCK": 4096}),
    ("matmul_64x64x32", matmul_kernel, _MM_SIG, {"BM": 64, "BN": 64, "BK": 32}),
    ("matmul_128x128x32", matmul_kernel, _MM_SIG, {"BM": 128, "BN": 128, "BK": 32}),
    ("matmul_128x64x64", matmul_kernel, _MM_SIG, {"BM": 128, "BN": 64, "BK": 64}),
]


@triton.jit
def rank_add_kernel(x, y, out, n, BLOCK: tl.constexpr, RANK: tl.constexpr):
    # One binary per tensor-parallel rank, as a sharded server compiles.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK) + RANK
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)


RANK_ADD_SIG = {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32", "BLOCK": "constexpr",
                "RANK": "constexpr"}


@triton.jit
def late_kernel(x, out, n, BLOCK: tl.constexpr):
    # A kernel a server builds lazily: with JIT_LATE_KERNEL=1 the warmup
    # compiles it only on its second run in a container (workload.py).
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) * 2.0, mask=mask)


LATE = ("late_1024", late_kernel, {"x": "*fp32", "out": "*fp32", "n": "i32",
                                   "BLOCK": "constexpr"}, {"BLOCK": 1024})
# The num_warps an autotuner that never settles picks, run after run
# (JIT_NOISY_AUTOTUNE=1): a new configuration of add_kernel every run.
NOISY_WARPS = [1, 2, 8, 16, 32]  # not 4: KERNELS[0] has it
