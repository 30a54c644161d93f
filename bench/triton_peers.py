"""Triton peer kernels for bench.py (written for this benchmark, not from a seed).

Import this only after TRITON_CACHE_DIR (and, for the CPU self-test,
TRITON_INTERPRET) is set: Triton reads them when it first compiles.
"""

import triton
import triton.language as tl


@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n_elements, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    """C = A + B over a flat contiguous buffer; one program per BLOCK elements.

    EVEN=True (n_elements % BLOCK == 0) drops the mask so every load/store is
    a full 16-byte vector; the offsets are hinted contiguous and BLOCK-aligned.
    """
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    offs = tl.max_contiguous(tl.multiple_of(offs, BLOCK), BLOCK)
    if EVEN:
        a = tl.load(a_ptr + offs)
        b = tl.load(b_ptr + offs)
        tl.store(c_ptr + offs, a + b)
    else:
        mask = offs < n_elements
        a = tl.load(a_ptr + offs, mask=mask)
        b = tl.load(b_ptr + offs, mask=mask)
        tl.store(c_ptr + offs, a + b, mask=mask)


@triton.jit
def mul_kernel(a_ptr, b_ptr, c_ptr, n_elements, BLOCK: tl.constexpr, EVEN: tl.constexpr, RELU: tl.constexpr):
    """C = A * B (RELU: max(A * B, 0)) over a flat contiguous buffer, as add_kernel."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    offs = tl.max_contiguous(tl.multiple_of(offs, BLOCK), BLOCK)
    mask = None if EVEN else offs < n_elements
    c = tl.load(a_ptr + offs, mask=mask) * tl.load(b_ptr + offs, mask=mask)
    if RELU:
        c = tl.maximum(c, 0.0)
    tl.store(c_ptr + offs, c, mask=mask)


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, EVEN_N: tl.constexpr):
    """out[m] = sum_n x[m, n] (fp32 accumulate); one program per BLOCK_M rows,
    looping over N in BLOCK_N chunks with a [BLOCK_M, BLOCK_N] accumulator."""
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    row_ptr = x_ptr + rows.to(tl.int64)[:, None] * stride_m
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        cols = tl.max_contiguous(tl.multiple_of(cols, BLOCK_N), BLOCK_N)
        if EVEN_N:
            x = tl.load(row_ptr + cols[None, :], mask=row_mask[:, None], other=0.0)
        else:
            x = tl.load(row_ptr + cols[None, :], mask=row_mask[:, None] & (cols[None, :] < N), other=0.0)
        acc += x.to(tl.float32)
    s = tl.sum(acc, axis=1)
    tl.store(out_ptr + rows, s, mask=row_mask)


# (BLOCK, num_warps) configurations swept for add; the best per case is reported.
ADD_CONFIGS = [(1024, 4), (2048, 4), (2048, 8), (4096, 4), (4096, 8)]

# (BLOCK_M, BLOCK_N, num_warps) candidates swept for the row sum; a candidate
# is used only where BLOCK_N <= N and BLOCK_M <= M.
ROWSUM_CONFIGS = [
    (1, 1024, 4),
    (1, 2048, 8),
    (1, 4096, 8),
    (2, 1024, 4),
    (4, 1024, 8),
    (4, 512, 4),
    (8, 256, 4),
    (16, 256, 4),
    (32, 256, 8),
    (64, 256, 8),
]


def launch_add(a, b, c, block, num_warps):
    n = a.numel()
    grid = (triton.cdiv(n, block),)
    add_kernel[grid](a, b, c, n, BLOCK=block, EVEN=(n % block == 0), num_warps=num_warps)


def launch_mul(a, b, c, block, num_warps, relu):
    n = a.numel()
    grid = (triton.cdiv(n, block),)
    mul_kernel[grid](a, b, c, n, BLOCK=block, EVEN=(n % block == 0), RELU=relu, num_warps=num_warps)


def launch_row_sum(x, out, block_m, block_n, num_warps):
    M, N = x.shape
    grid = (triton.cdiv(M, block_m),)
    row_sum_kernel[grid](
        x, out, M, N, x.stride(0), BLOCK_M=block_m, BLOCK_N=block_n, EVEN_N=(N % block_n == 0), num_warps=num_warps
    )


def rowsum_configs_for(M, N):
    return [c for c in ROWSUM_CONFIGS if c[1] <= N and c[0] <= M]
