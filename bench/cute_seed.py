"""CuTe DSL kernels copied from the seed documents, for bench.py.

Each block below is the seed's code as written; every change is marked
"ADAPTATION" in a comment and listed in ADAPTATIONS at the end of this file.

Sources:
  003_a396051a857640fe.txt  "Tutorial: Elementwise Add Kernel in CuTe DSL"
      - "Naive Elementwise Add Kernel"      naive_elementwise_add_kernel / naive_elementwise_add
      - "Vectorized Load and Store"         vectorized_elementwise_add_kernel / vectorized_elementwise_add
      - "TV Layout"                         elementwise_add_kernel / elementwise_add
  004_7f17ed09e2589fe0.txt  "Cute-DSL: I Wrote a CUDA Kernel in Python ..."
      - "Anatomy of the Naive Elementwise Add Kernel"  naive_elementwise_add_kernel (-> *_004)
      - "Graduating to Vectorized Execution"            vectorized_add / vectorized_add_kernel
  000_38e0b424ecab2413.txt  "CuTe DSL Intro" (torch.sum running example)
      - first simple kernel                 _reduce_sum_kernel / reduce_sum
      - "TiledCopy based kernels"           ReduceSumTiledCopy
"""

import math  # noqa: F401  (seed 000 imports it for the N-d version)

import torch  # noqa: F401

import cutlass
import cutlass.cute as cute
from cutlass import Float32
from cutlass.cute.runtime import from_dlpack  # noqa: F401

# ADAPTATION (seed 000): the seed writes `cuda.CUstream` without showing the
# import; cuda-bindings 13 has no `from cuda import cuda`, so use the module
# the CuTe DSL itself uses.
import cuda.bindings.driver as cuda


# =============================================================================
# Seed 003: "Naive Elementwise Add Kernel"
# =============================================================================
@cute.kernel
def naive_elementwise_add_kernel(
    gA: cute.Tensor,
    gB: cute.Tensor,
    gC: cute.Tensor,
):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    bdim, _, _ = cute.arch.block_dim()

    thread_idx = bidx * bdim + tidx

    # Map thread index to logical index of input tensor
    m, n = gA.shape
    ni = thread_idx % n
    mi = thread_idx // n

    # Map logical index to physical address via tensor layout
    a_val = gA[mi, ni]
    b_val = gB[mi, ni]

    # Perform element-wise addition
    gC[mi, ni] = a_val + b_val


@cute.jit
def naive_elementwise_add(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    num_threads_per_block = 256

    m, n = mA.shape
    kernel = naive_elementwise_add_kernel(mA, mB, mC)
    kernel.launch(grid=((m * n) // num_threads_per_block, 1, 1), block=(num_threads_per_block, 1, 1))


# =============================================================================
# Seed 003: "Vectorized Load and Store"
# =============================================================================
@cute.kernel
def vectorized_elementwise_add_kernel(
    gA: cute.Tensor,
    gB: cute.Tensor,
    gC: cute.Tensor,
):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    bdim, _, _ = cute.arch.block_dim()

    thread_idx = bidx * bdim + tidx

    # Map thread index to logical index of input tensor
    m, n = gA.shape[1]  # thread-domain
    ni = thread_idx % n
    mi = thread_idx // n

    # Map logical index to physical address via tensor layout
    a_val = gA[(None, (mi, ni))].load()
    b_val = gB[(None, (mi, ni))].load()
    print(f"[DSL INFO] sliced gA = {gA[(None, (mi, ni))]}")
    print(f"[DSL INFO] sliced gB = {gB[(None, (mi, ni))]}")

    # Perform element-wise addition
    gC[(None, (mi, ni))] = a_val + b_val


@cute.jit
def vectorized_elementwise_add(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    threads_per_block = 256

    gA = cute.zipped_divide(mA, (1, 4))
    gB = cute.zipped_divide(mB, (1, 4))
    gC = cute.zipped_divide(mC, (1, 4))

    print("[DSL INFO] Tiled Tensors:")
    print(f"[DSL INFO]   gA = {gA}")
    print(f"[DSL INFO]   gB = {gB}")
    print(f"[DSL INFO]   gC = {gC}")

    vectorized_elementwise_add_kernel(gA, gB, gC).launch(
        grid=(cute.size(gC, mode=[1]) // threads_per_block, 1, 1),
        block=(threads_per_block, 1, 1),
    )


# =============================================================================
# Seed 003: "TV Layout"
# =============================================================================
@cute.kernel
def elementwise_add_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor, tv_layout: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()

    # --------------------------------
    # slice for thread-block level view
    # --------------------------------
    blk_coord = ((None, None), bidx)

    # logical coord -> address
    blkA = gA[blk_coord]  # (TileM, TileN) -> physical address
    blkB = gB[blk_coord]  # (TileM, TileN) -> physical address
    blkC = gC[blk_coord]  # (TileM, TileN) -> physical address

    # --------------------------------
    # compose for thread-index & value-index to physical mapping
    # --------------------------------
    # blockA:    (TileM, TileN) -> physical address
    # tv_layout: (tid, vid)     -> (TileM, TileN)
    # tidfrgA = blkA o tv_layout
    # tidfrgA:   (tid, vid) -> physical address
    tidfrgA = cute.composition(blkA, tv_layout)
    tidfrgB = cute.composition(blkB, tv_layout)
    tidfrgC = cute.composition(blkC, tv_layout)

    print("Composed with TV layout:")
    print(f"  tidfrgA: {tidfrgA.type}")

    # --------------------------------
    # slice for thread-level view
    # --------------------------------
    # `None` represent slice of the entire per-thread data
    thr_coord = (tidx, None)

    # slice for threads: vid -> address
    thrA = tidfrgA[thr_coord]  # (V) -> physical address
    thrB = tidfrgB[thr_coord]  # (V) -> physical address
    thrC = tidfrgC[thr_coord]  # (V) -> physical address

    thrC[None] = thrA.load() + thrB.load()


@cute.jit
def elementwise_add(
    mA: cute.Tensor,
    mB: cute.Tensor,
    mC: cute.Tensor,
):
    # mA layout: (M, N):(N, 1)
    # TV layout map thread & value index to (16, 256) logical tile
    #  - contiguous thread index maps to mode-1 because input layout is contiguous on
    #     mode-1 for coalesced load-store
    #  - each thread load 8 contiguous element each row and load 4 rows
    thr_layout = cute.make_layout((4, 32), stride=(32, 1))
    val_layout = cute.make_layout((4, 8), stride=(8, 1))
    tiler_mn, tv_layout = cute.make_layout_tv(thr_layout, val_layout)
    print(f"Tiler: {tiler_mn}")
    print(f"TV Layout: {tv_layout}")

    gA = cute.zipped_divide(mA, tiler_mn)  # ((TileM, TileN), (RestM, RestN))
    gB = cute.zipped_divide(mB, tiler_mn)  # ((TileM, TileN), (RestM, RestN))
    gC = cute.zipped_divide(mC, tiler_mn)  # ((TileM, TileN), (RestM, RestN))

    print("Tiled Input Tensors:")
    print(f"  gA: {gA.type}")
    print(f"  gB: {gB.type}")
    print(f"  gC: {gC.type}")

    # Launch the kernel asynchronously
    # Async token(s) can also be specified as dependencies
    elementwise_add_kernel(gA, gB, gC, tv_layout).launch(
        grid=[cute.size(gC, mode=[1]), 1, 1],
        block=[cute.size(tv_layout, mode=[0]), 1, 1],
    )


# =============================================================================
# Seed 004: "Anatomy of the Naive Elementwise Add Kernel"
# ADAPTATION: renamed naive_elementwise_add_kernel -> naive_elementwise_add_kernel_004
# (the name clashes with seed 003's kernel in one module). Seed 004 shows no
# host launcher for it, so naive_elementwise_add_004 is seed 003's launcher.
# =============================================================================
@cute.kernel
def naive_elementwise_add_kernel_004(A: cute.Tensor, B: cute.Tensor, C: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    bdim, _, _ = cute.arch.block_dim()

    idx = bidx * bdim + tidx

    m, n = A.shape
    ni = idx % n
    mi = idx // n

    C[mi, ni] = A[mi, ni] + B[mi, ni]


@cute.jit
def naive_elementwise_add_004(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    # ADAPTATION: launcher taken from seed 003 (seed 004 shows none)
    num_threads_per_block = 256

    m, n = mA.shape
    kernel = naive_elementwise_add_kernel_004(mA, mB, mC)
    kernel.launch(grid=((m * n) // num_threads_per_block, 1, 1), block=(num_threads_per_block, 1, 1))


# =============================================================================
# Seed 004: "Graduating to Vectorized Execution"
# The seed's host function ends in "..." after dividing A and B; the rest
# (divide C, launch 256-thread blocks over mode 1) is completed from seed 003's
# vectorized_elementwise_add (ADAPTATION).
# =============================================================================
@cute.jit
def vectorized_add(A: cute.Tensor, B: cute.Tensor, C: cute.Tensor):
    # Defining a tile of 4 elements wide
    tiler = (1, 4)
    # Zipping it chunks our layout!
    A = cute.zipped_divide(A, tiler)
    B = cute.zipped_divide(B, tiler)
    # --- ADAPTATION: completion of the seed's "..." (from seed 003) ---
    C = cute.zipped_divide(C, tiler)
    threads_per_block = 256
    vectorized_add_kernel(A, B, C).launch(
        grid=(cute.size(C, mode=[1]) // threads_per_block, 1, 1),
        block=(threads_per_block, 1, 1),
    )


@cute.kernel
def vectorized_add_kernel(A, B, C):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    bdim, _, _ = cute.arch.block_dim()

    idx = bidx * bdim + tidx

    # Retrieve boundaries from Mode 1 (the grid)
    m, n = A.shape[1]
    ni = idx % n
    mi = idx // n

    # MAGIC HAPPENS HERE
    a_val = A[(None, (mi, ni))].load()
    b_val = B[(None, (mi, ni))].load()

    C[(None, (mi, ni))] = a_val + b_val


# =============================================================================
# Seed 000: first simple kernel (one block per row)
# =============================================================================
@cute.kernel
def _reduce_sum_kernel(gA: cute.Tensor, output: cute.Tensor):
    smem_alloc = cutlass.utils.SmemAllocator()
    shmem = smem_alloc.allocate_tensor(cute.Float32, cute.make_layout((32,)))  # warp size

    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    bdimx, _, _ = cute.arch.block_dim()
    lane = cute.arch.lane_idx()
    warp = cute.arch.warp_idx()

    M, N = gA.shape
    ntiles = cute.ceil_div(N, bdimx)
    acc = 0.0
    for tile_idx in range(ntiles):
        idx = tile_idx * bdimx + tidx
        if idx < N:
            acc += gA[bidx, idx]

    acc = cute.arch.warp_reduction_sum(acc)
    if lane == 0:
        shmem[warp] = acc
    cute.arch.sync_threads()

    if warp == 0:
        block_warps = bdimx // 32
        acc2 = shmem[lane] if lane < block_warps else 0.0
        acc2 = cute.arch.warp_reduction_sum(acc2)
        if lane == 0:
            output[bidx] = acc2


@cute.jit
def reduce_sum(x: cute.Tensor, output: cute.Tensor, dim=-1):
    num_warps = 4
    threads_per_block = num_warps * 32
    M, N = x.shape

    _reduce_sum_kernel(x, output).launch(
        grid=(M, 1, 1),
        block=(threads_per_block, 1, 1),
    )


def _invoke_reduce_sum(gInput, dim=-1):
    # Seed 000's invoker (compiles on every call; the bench compiles once per
    # shape instead, as the seed's own _invoke_reduce_sum_with_cache does).
    a_ = from_dlpack(gInput)

    sz = gInput.size(0) if dim == -1 else gInput.size(1)
    gOutput = torch.empty((sz,), dtype=gInput.dtype, device=gInput.device)
    b_ = from_dlpack(gOutput)

    kernel_fn = cute.compile(
        reduce_sum,
        a_,
        b_,
    )
    kernel_fn(a_, b_)
    return gOutput


# =============================================================================
# Seed 000: "TiledCopy based kernels"
# =============================================================================
class ReduceSumTiledCopy:
    def __init__(self, shape, dtype, dim=-1):
        self.shape = shape
        self.dtype = dtype
        self.num_warps = 4
        self.warp_size = 32
        self.threads_per_block = self.num_warps * self.warp_size
        self.NEG_INF = Float32(float("-inf"))
        self.dim = dim
        self.reduce_size = self.shape[self.dim]
        self.blocks = self.shape[0] if dim != 0 else self.shape[-1]

        self.order_shape = (self.num_warps, self.warp_size) if self.dim == -1 else (self.warp_size, self.num_warps)
        self.order = (1, 0) if self.dim == -1 else (0, 1)

    @cute.jit
    def __call__(self, gInput: cute.Tensor, gOutput: cute.Tensor, stream: cuda.CUstream = None):
        blocks_over_reduce_dim = cute.ceil_div(self.reduce_size, self.warp_size)

        # construct a "super tile" that spans the entire portion of the reduction
        # dimension handled by this thread block
        tiler_mn = (
            (self.num_warps, blocks_over_reduce_dim * self.warp_size)
            if self.dim == -1
            else (blocks_over_reduce_dim * self.warp_size, self.num_warps)
        )

        # copy atom answers how should a single thread load its data
        # need to ensure our copy atom and val layout are compatible
        copy_op = cute.nvgpu.CopyUniversalOp()
        copy_atom = cute.make_copy_atom(copy_op, self.dtype, num_bits_per_copy=self.dtype.width)
        val_layout = cute.make_layout((1, 1))

        # define how threads are organized within a tile
        thr_layout = cute.make_ordered_layout(self.order_shape, self.order)
        tiled_copy = cute.make_tiled_copy_tv(copy_atom, thr_layout, val_layout)

        blocks = cute.ceil_div(self.blocks, self.num_warps)
        self.kernel(gInput, gOutput, tiler_mn, tiled_copy).launch(
            grid=(blocks, 1, 1), block=(self.threads_per_block, 1, 1), stream=stream
        )

    @cute.kernel
    def kernel(self, gInput: cute.Tensor, gOutput: cute.Tensor, tiler_mn: cute.Shape, tiled_copy: cute.TiledCopy):
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        warp_idx = tidx // self.warp_size
        lane_idx = tidx % self.warp_size

        # gX is now a "super" tile over all subtiles that our thread group will work on
        gX = cute.local_tile(gInput, tiler_mn, (bidx, 0) if self.dim == -1 else (0, bidx))
        # where will this thread load its data from relative to our thread layout
        tidxSlice = tiled_copy.get_slice(tidx)
        # get me all the addresses that our thread is responsible for across our "super" tile
        tidxIndices = tidxSlice.partition_S(gX)
        # create registers, load our data, reduce, and write
        tidxRegs = cute.make_rmem_tensor_like(tidxIndices)
        cute.autovec_copy(tidxIndices, tidxRegs)
        tidxValues = tidxRegs.load()
        tidLocalSum = tidxValues.reduce(cute.ReductionOp.ADD, init_val=0.0, reduction_profile=0)
        rowSum = cute.arch.warp_reduction_sum(tidLocalSum)
        if lane_idx == 0:
            gOutput[bidx * self.num_warps + warp_idx] = rowSum


ADAPTATIONS = [
    "all: seeds' module-level demo/driver code (torch.randn on cuda, assert_close, benchmark()) is "
    "not copied; bench_peers.py makes the inputs, compiles once per (kernel, dtype, shape) with "
    "from_dlpack(t, assumed_align=16) as seed 003 does, and checks against torch.",
    "seed 003 vectorized + TV layout: the compile-time print() calls are kept; bench_peers.py "
    "captures that output and stores the first one in the JSON instead of printing it.",
    "seed 004 naive: kernel renamed naive_elementwise_add_kernel_004 (name clash with seed 003); "
    "seed 004 shows no launcher, so seed 003's naive launcher is used (naive_elementwise_add_004).",
    "seed 004 vectorized: the host function vectorized_add ends in '...' in the seed; completed "
    "with seed 003's code (divide C by (1,4), grid = size(C, mode=[1]) // 256, block = 256).",
    "seed 000: `cuda.CUstream` comes from `import cuda.bindings.driver as cuda` (import not shown "
    "in the seed; cuda-bindings 13 has no `from cuda import cuda`).",
    "seed 000 simple reduce_sum: the seed's _invoke_reduce_sum compiles on every call; the bench "
    "compiles once per shape and reuses the compiled function (the seed's own "
    "_invoke_reduce_sum_with_cache pattern); from_dlpack without assumed_align, as in the seed.",
    "seed 000 ReduceSumTiledCopy: constructed as ReduceSumTiledCopy((M, N), cutlass.Float32, dim=-1) "
    "and compiled as cute.compile(obj, a_, b_) (stream left at its default None = default stream).",
]
