//! KIR, the kernel-instance IR: what elaboration produces and code generation consumes.
//!
//! One `Kernel` per instance of a `.cute` kernel (a kernel is instantiated once per distinct set of
//! argument layouts and `const` values it is launched with, as CuTe DSL's JIT specializes). All layout
//! algebra has already been evaluated: tensors appear as views (a source tensor, an element offset and
//! a layout whose dynamic entries are symbolic), and index arithmetic is kept as symbolic [`Int`]
//! expressions over run-time values, so static parts are folded and dynamic parts are exact.
//!
//! Run-time scalar values are numbered ([`ValueId`]); an `i32` value also serves as a leaf
//! (`Int::var(id, div)`) of symbolic index expressions. Code generation materializes an `Int` where an
//! instruction uses it.

use crate::span::Span;
use crate::types::{MemSpace, Scalar};
use cute_abi::Feature;
use cute_layout::{Int, Layout, Swizzle};

// The atoms and the shared-memory placement rules live in the algebra crate, below both the front
// end and the passes (docs/architecture.md); the front end uses them through these names.
pub use cute_layout::atom::atomic::{AtomicOp, MemOrder, MemScope};
pub use cute_layout::atom::copy::CopyOp;
pub use cute_layout::atom::smem::{smem_align, smem_bytes, SMEM_ALIGN, SMEM_MAX_ALIGN};
use std::fmt;

pub type ValueId = u32;

/// A tensor's type: element, memory space, base alignment (bytes) and layout. Dynamic layout entries
/// are symbolic; as a type they print `?` (`?{div=N}` where divisibility is known).
#[derive(Clone, Debug, PartialEq)]
pub struct TensorTy {
    pub elem: Scalar,
    pub space: MemSpace,
    pub align: u32,
    pub layout: Layout,
    /// A swizzled shared-memory tensor (CuTe's `ComposedLayout<Swizzle, 0, Layout>`): element `c` is
    /// at `origin + swizzle(offset + layout(c))`, where `origin` is the start of the shared
    /// allocation the swizzled layout was attached to (by `make_smem_tensor` or `make_tensor` of the
    /// whole allocation) and `offset` is how far views of it have moved from there. The swizzle acts
    /// on offsets from the origin, never on absolute addresses, so
    /// a view's base stays an ordinary (unswizzled) element offset; `align` is then capped at the
    /// swizzle's unmoved 2^M-element runs.
    pub swizzle: Option<Swizzle>,
}

impl TensorTy {
    /// The layout as CuTe prints it: `S<B,M,S> o 0 o layout` when swizzled.
    pub fn layout_text(&self) -> String {
        match self.swizzle {
            Some(sw) => format!("{sw} o 0 o {}", self.layout),
            None => self.layout.to_string(),
        }
    }
}

impl fmt::Display for TensorTy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tensor<{}, {}, {}, align: {}>", self.elem.name(), self.space.name(), self.layout_text(), self.align)
    }
}

/// A register fragment (CuTe's TensorSSA): a static number of elements held in registers.
#[derive(Clone, Debug, PartialEq)]
pub struct FragTy {
    pub elem: Scalar,
    pub shape: cute_layout::IntTuple,
}

impl FragTy {
    pub fn len(&self) -> usize {
        self.shape.product().ok().and_then(|i| i.as_static()).unwrap_or(0) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// An index integer (i32): static, or symbolic over i32 values.
    Int(Int),
    /// Any other run-time value.
    Value(ValueId),
    /// A float constant, of the instruction's type.
    Float(f64),
    Bool(bool),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    ThreadIdx(u8),
    BlockIdx(u8),
    BlockDim(u8),
    GridDim(u8),
    /// Thread-block clusters (sm_90): `%clusterid`, `%nclusterid`, `%cluster_ctaid`,
    /// `%cluster_nctaid` per dimension, and `%cluster_ctarank` (the block's rank in its cluster).
    ClusterIdx(u8),
    ClusterDim(u8),
    BlockIdxInCluster(u8),
    BlockInClusterDim(u8),
    BlockRankInCluster,
}

impl Special {
    /// Whether it is one of the thread-block cluster registers (sm_90).
    pub fn is_cluster(self) -> bool {
        matches!(
            self,
            Special::ClusterIdx(_)
                | Special::ClusterDim(_)
                | Special::BlockIdxInCluster(_)
                | Special::BlockInClusterDim(_)
                | Special::BlockRankInCluster
        )
    }
}

/// Math functions of one float operand (CuTe DSL's `cute.math`), plus `abs` for any number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MathFn {
    Sqrt,
    Rsqrt,
    Exp,
    Exp2,
    Log,
    Log2,
    Log10,
    Sin,
    Cos,
    Tan,
    Tanh,
    Erf,
    Floor,
    Ceil,
    Round,
    Abs,
}

impl MathFn {
    pub const ALL: [MathFn; 16] = [
        MathFn::Sqrt,
        MathFn::Rsqrt,
        MathFn::Exp,
        MathFn::Exp2,
        MathFn::Log,
        MathFn::Log2,
        MathFn::Log10,
        MathFn::Sin,
        MathFn::Cos,
        MathFn::Tan,
        MathFn::Tanh,
        MathFn::Erf,
        MathFn::Floor,
        MathFn::Ceil,
        MathFn::Round,
        MathFn::Abs,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MathFn::Sqrt => "sqrt",
            MathFn::Rsqrt => "rsqrt",
            MathFn::Exp => "exp",
            MathFn::Exp2 => "exp2",
            MathFn::Log => "log",
            MathFn::Log2 => "log2",
            MathFn::Log10 => "log10",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Tan => "tan",
            MathFn::Tanh => "tanh",
            MathFn::Erf => "erf",
            MathFn::Floor => "floor",
            MathFn::Ceil => "ceil",
            MathFn::Round => "round",
            MathFn::Abs => "abs",
        }
    }

    pub fn from_name(name: &str) -> Option<MathFn> {
        MathFn::ALL.into_iter().find(|f| f.name() == name)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShuffleKind {
    Xor,
    Down,
    Up,
    Idx,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Min,
    Max,
}

/// A comparison of integers: the manifest's (host `assert`s and conditions are written into it).
pub use cute_abi::manifest::CmpOp;

#[derive(Clone, Debug, PartialEq)]
pub enum Inst {
    Special {
        dst: ValueId,
        which: Special,
        span: Span,
    },
    /// `dst = a op b` on scalars of type `ty`, or element-wise on fragments when `frag` is set.
    Binary {
        dst: ValueId,
        op: BinaryOp,
        ty: Scalar,
        frag: Option<usize>,
        a: Operand,
        b: Operand,
        span: Span,
    },
    Neg {
        dst: ValueId,
        ty: Scalar,
        frag: Option<usize>,
        a: Operand,
        span: Span,
    },
    Not {
        dst: ValueId,
        ty: Scalar,
        frag: Option<usize>,
        a: Operand,
        span: Span,
    },
    Cmp {
        dst: ValueId,
        op: CmpOp,
        ty: Scalar,
        frag: Option<usize>,
        a: Operand,
        b: Operand,
        span: Span,
    },
    Convert {
        dst: ValueId,
        from: Scalar,
        to: Scalar,
        frag: Option<usize>,
        a: Operand,
        span: Span,
    },
    /// A math function of one operand (`sqrt`, `sin`, `exp2`, ...), element-wise on fragments.
    Math {
        dst: ValueId,
        fun: MathFn,
        ty: Scalar,
        frag: Option<usize>,
        a: Operand,
        span: Span,
    },
    /// `dst = a * b + c` rounded once, on floats; element-wise on fragments.
    Fma {
        dst: ValueId,
        ty: Scalar,
        frag: Option<usize>,
        a: Operand,
        b: Operand,
        c: Operand,
        span: Span,
    },
    /// `dst = c ? a : b`.
    Select {
        dst: ValueId,
        ty: Scalar,
        frag: Option<usize>,
        c: Operand,
        a: Operand,
        b: Operand,
        span: Span,
    },
    /// A view of `src` with the layout of `ty`, made by the CuTe operation `how`. The front end has
    /// computed `ty` with the algebra; code generation keeps `how` as a `cute` op, and
    /// `cute-canonicalize` folds it (and checks that the algebra gives `ty`).
    View {
        dst: ValueId,
        src: ValueId,
        how: ViewHow,
        ty: TensorTy,
        span: Span,
    },
    /// One element, at `at`.
    Load {
        dst: ValueId,
        tensor: ValueId,
        ty: TensorTy,
        at: At,
        span: Span,
    },
    Store {
        value: Operand,
        tensor: ValueId,
        ty: TensorTy,
        at: At,
        span: Span,
    },
    /// An atomic read-modify-write (`atom`) of the element `offset` elements into `tensor` (global
    /// or shared memory), giving the element's old value in `dst`; with `dst` `None` the result is
    /// unused and it is PTX's `red` where `red` has the ordering. `compare` is `Cas`'s expected value.
    Atomic {
        dst: Option<ValueId>,
        op: AtomicOp,
        tensor: ValueId,
        ty: TensorTy,
        offset: Int,
        value: Operand,
        compare: Option<Operand>,
        /// `value` (and the result) a fragment of two 16-bit floats added as one packed pair
        /// (`atom.add.noftz.f16x2`/`.bf16x2`) at the 4-byte-aligned `offset`.
        pair: bool,
        scope: MemScope,
        order: MemOrder,
        span: Span,
    },
    /// The fragment `value` added element-wise into the global f32 `tensor` (the same static size,
    /// contiguous and 16-byte aligned by fours) with `red.global.add.v4.f32` (sm_90).
    AtomicAddFrag {
        value: ValueId,
        tensor: ValueId,
        ty: TensorTy,
        scope: MemScope,
        order: MemOrder,
        span: Span,
    },
    /// The whole (static-size) tensor into a fragment, element i from coordinate i.
    LoadFrag {
        dst: ValueId,
        tensor: ValueId,
        ty: TensorTy,
        span: Span,
    },
    StoreFrag {
        value: ValueId,
        tensor: ValueId,
        ty: TensorTy,
        span: Span,
    },
    /// CuTe's `copy(src, dst)`: every element of `src` to the same coordinate of `dst` (both of the
    /// same static size). `width`: the elements one access may move at most (a copy atom's width);
    /// `None` lets `cute-vectorize` take the widest both layouts prove.
    /// `pred` (`cp.async` only): when false nothing is read and `dst` is zero-filled (CuTe's
    /// `copy_if` of a zero-filling atom); other predicated copies are `If`s around a `Copy`.
    Copy {
        src: ValueId,
        src_ty: TensorTy,
        dst: ValueId,
        dst_ty: TensorTy,
        width: Option<u32>,
        op: CopyOp,
        pred: Option<Operand>,
        span: Span,
    },
    /// `cp.async.commit_group` (`wait: None`) or `cp.async.wait_group N`: groups of asynchronous
    /// copies issued so far, and waiting until at most N groups are still in flight.
    AsyncCopyGroup {
        wait: Option<u32>,
        span: Span,
    },
    /// Memory for a tensor of this type: registers (rmem, promoted to registers by the backend when
    /// every access is at a static offset) or shared memory (smem, one block-wide buffer).
    Alloc {
        dst: ValueId,
        ty: TensorTy,
        span: Span,
    },
    /// A shared tensor of this type `offset` bytes into the launch's own dynamic shared memory
    /// (`smem(BYTES)` of the launch, after what the compiler places there; CuTe DSL's
    /// `SmemAllocator.allocate_tensor`). `offset` is a multiple of [`SMEM_ALIGN`].
    LaunchSmem {
        dst: ValueId,
        ty: TensorTy,
        offset: u64,
        span: Span,
    },
    /// Element `index` of a fragment.
    Extract {
        dst: ValueId,
        ty: Scalar,
        frag: ValueId,
        index: usize,
        span: Span,
    },
    /// A whole fragment folded by `op` (`Add`, `Mul`, `Min` or `Max`) into one scalar, in element
    /// order from `init` when given (from element 0 otherwise): `((init op x0) op x1) ...`.
    Reduce {
        dst: ValueId,
        op: BinaryOp,
        ty: Scalar,
        frag: ValueId,
        init: Option<Operand>,
        span: Span,
    },
    /// A fragment from scalars.
    FromElements {
        dst: ValueId,
        ty: Scalar,
        elems: Vec<Operand>,
        span: Span,
    },
    /// A warp shuffle (`shfl.sync`): the value of lane `lane ^ offset` (xor), `lane + offset` (down)
    /// or lane `offset` (idx).
    Shuffle {
        dst: ValueId,
        kind: ShuffleKind,
        ty: Scalar,
        value: Operand,
        offset: Operand,
        span: Span,
    },
    If {
        cond: Operand,
        then: Vec<Inst>,
        els: Vec<Inst>,
        span: Span,
    },
    /// `iv` from `lb` while `< ub` (signed) by `step`. With `exit`, the loop also ends before a
    /// trip when `exit` is true (a `break` or `return` in the body set one of its flags).
    For {
        iv: ValueId,
        lb: Int,
        ub: Int,
        step: Int,
        body: Vec<Inst>,
        exit: Option<Cond>,
        span: Span,
    },
    /// A `while` loop: `cond` is computed before each trip, and the loop ends when it is false.
    While {
        cond: Cond,
        body: Vec<Inst>,
        span: Span,
    },
    /// Prints text and run-time values (`printf`); segments are concatenated.
    Printf {
        segments: Vec<FmtSeg>,
        span: Span,
    },
    /// A kernel's run-time `assert`: `cond` computed by its own instructions; where it is false,
    /// the thread prints `message` with where it failed (file:line, kernel, block and thread) and
    /// traps, which fails the launch. Code generation leaves the whole instruction out, `cond`'s
    /// instructions included, when asserts are off (`cutec build --release-asserts=off`).
    Assert {
        cond: Cond,
        message: String,
        span: Span,
    },
    /// Inline PTX (`asm`), unchecked: `ptx` with `$0`, `$1`, ... naming the outputs, then the
    /// inputs, each in a register of its type's class ([`asm_constraint`]). It has side effects
    /// and clobbers memory: it stays where it is, in order with memory accesses, even unused.
    Asm {
        outputs: Vec<(ValueId, Scalar)>,
        ptx: String,
        inputs: Vec<(Operand, Scalar)>,
        span: Span,
    },
    Barrier {
        span: Span,
    },
    /// A named barrier (`bar.sync id, threads` or, with `arrive`, `bar.arrive id, threads`): the
    /// block's barrier `id` (0 to 15) completes when `threads` threads (a multiple of 32) have
    /// arrived; only the syncing threads wait. Lets the warps of one role (the consumer
    /// warpgroups of a warp-specialized kernel) synchronize without the others.
    NamedBarrier {
        id: Operand,
        threads: Operand,
        arrive: bool,
        span: Span,
    },
    /// One warp-wide tensor-core instruction (`mma.sync`): `dst = a * b + c` on the fragments of
    /// one atom (`a`, `b`, `c` hold the thread's values in the atom's TV-layout order).
    Mma {
        dst: ValueId,
        atom: &'static cute_layout::MmaAtom,
        a: ValueId,
        b: ValueId,
        c: ValueId,
        span: Span,
    },
    /// One warpgroup-wide, asynchronous tensor-core instruction (`wgmma.mma_async`, sm_90a):
    /// `dst = a * b + c` with `a` (`a_ty`) and `b` (`b_ty`) one atom's tiles in shared memory (read
    /// through matrix descriptors) and `c`/`dst` the thread's accumulator fragment. The result is
    /// valid only after a `Warpgroup(WaitGroup)` that covers its group.
    /// With an RS atom `a_ty` is `None` and `a` is the thread's A fragment (8 16-bit values), a
    /// register value like `Mma`'s.
    /// `scale_d`: when given and false, `dst = a * b` (the accumulators are not read: PTX's
    /// scale-d 0), else `dst = a * b + c`.
    Wgmma {
        dst: ValueId,
        atom: &'static cute_layout::MmaAtom,
        a: ValueId,
        a_ty: Option<TensorTy>,
        b: ValueId,
        b_ty: TensorTy,
        c: ValueId,
        scale_d: Option<Operand>,
        span: Span,
    },
    /// A warpgroup or proxy synchronization: `wgmma.fence`, `wgmma.commit_group`,
    /// `wgmma.wait_group N`, or `fence.proxy.async.shared::cta`.
    Warpgroup {
        op: WarpgroupOp,
        span: Span,
    },
    /// An mbarrier operation (sm_90) on the 64-bit shared-memory barrier `offset` elements into
    /// `tensor` (an `i64` shared tensor): init with an arrival count, arrive, arrive with an
    /// expected transaction byte count, wait (or test once, into the `bool` `dst`) for a phase
    /// parity, or arrive on the barrier of another block of the cluster. `arg` is the count, the
    /// bytes, the parity or the block's rank in the cluster (none for `Arrive`).
    Mbarrier {
        op: MbarrierOp,
        /// The result of `TryWait`; `None` for the other ops.
        dst: Option<ValueId>,
        tensor: ValueId,
        ty: TensorTy,
        offset: Int,
        arg: Option<Operand>,
        span: Span,
    },
    /// A TMA load (sm_90): `cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes`
    /// of the box of tensor map `tma` (an index into [`Kernel::tmas`]) at element coordinates
    /// `coords` (in the map's dimension order, innermost first) into the shared tensor `smem`
    /// (a whole allocation), completing on the mbarrier `offset` elements into `bar`. With
    /// `multicast` (an `i32` bit mask of cluster ranks, `.multicast::cluster`), the box lands at the
    /// same offset in the shared memory of every block of the mask, completing on each one's barrier.
    TmaLoad {
        tma: usize,
        smem: ValueId,
        smem_ty: TensorTy,
        bar: ValueId,
        bar_ty: TensorTy,
        offset: Int,
        coords: Vec<Int>,
        multicast: Option<Operand>,
        span: Span,
    },
    /// A cluster barrier step (sm_90): `barrier.cluster.arrive` (release), its `.relaxed` form, or
    /// `barrier.cluster.wait` (acquire).
    ClusterBarrier {
        op: ClusterBarrierOp,
        span: Span,
    },
    /// Distributed shared memory (sm_90): the element `offset` elements into the shared tensor
    /// `tensor`, in the shared memory of the block of rank `rank` in this block's cluster
    /// (`mapa.shared::cluster`), read into `dst` (`ld.shared::cluster`)...
    DsmemLoad {
        dst: ValueId,
        tensor: ValueId,
        ty: TensorTy,
        offset: Int,
        rank: Operand,
        span: Span,
    },
    /// ... or written with `value` (`st.shared::cluster`).
    DsmemStore {
        value: Operand,
        tensor: ValueId,
        ty: TensorTy,
        offset: Int,
        rank: Operand,
        span: Span,
    },
    /// A TMA store (sm_90): `cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group` of the shared
    /// tensor `smem` (the box of tensor map `tma`) to element coordinates `coords` (the map's
    /// dimension order) of the global tensor. Asynchronous: it joins the thread's next bulk group.
    TmaStore {
        tma: usize,
        smem: ValueId,
        smem_ty: TensorTy,
        coords: Vec<Int>,
        span: Span,
    },
    /// A bulk async-group operation (sm_90), for TMA stores: commit or wait.
    BulkGroup {
        op: BulkGroupOp,
        span: Span,
    },
}

/// The inline-asm constraint of the PTX register that holds a `ty` operand of [`Inst::Asm`]
/// (CUDA's): `h` (.b16: 16-bit integers and floats), `r` (.b32), `l` (.b64), `f` (.f32), `d`
/// (.f64), `b` (.pred). `None` for types no PTX register holds alone (8-bit ones) and tf32.
pub fn asm_constraint(ty: Scalar) -> Option<&'static str> {
    Some(match ty {
        Scalar::I16 | Scalar::U16 | Scalar::F16 | Scalar::BF16 => "h",
        Scalar::I32 | Scalar::U32 => "r",
        Scalar::I64 | Scalar::U64 => "l",
        Scalar::F32 => "f",
        Scalar::F64 => "d",
        Scalar::Bool => "b",
        Scalar::I8 | Scalar::U8 | Scalar::F8E4M3 | Scalar::F8E5M2 | Scalar::TF32 => return None,
    })
}

/// The steps of the cluster barrier (CuTe DSL's `cute.arch.cluster_arrive`, `cluster_wait`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClusterBarrierOp {
    /// `barrier.cluster.arrive`: release semantics (this thread's earlier writes, shared memory
    /// of other blocks included, are visible to the threads that wait for the phase).
    Arrive,
    /// `barrier.cluster.arrive.relaxed`: an arrival that orders no memory.
    ArriveRelaxed,
    /// `barrier.cluster.wait`: waits until every non-exited thread of the cluster has arrived
    /// (acquire semantics).
    Wait,
}

impl ClusterBarrierOp {
    /// The builtin that makes it.
    pub fn builtin(self) -> &'static str {
        match self {
            ClusterBarrierOp::Arrive => "cluster_arrive",
            ClusterBarrierOp::ArriveRelaxed => "cluster_arrive_relaxed",
            ClusterBarrierOp::Wait => "cluster_wait",
        }
    }
}

/// A kernel's thread-block cluster shape (`launch ... cluster(X, Y, Z)`): compiled into the kernel
/// (PTX `.reqnctapercluster`), so every launch of it runs in clusters of this shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cluster {
    pub dims: [u32; 3],
    /// The first launch clause that gave it.
    pub span: Span,
}

/// `cp.async.bulk` group operations (`tma_store_arrive`, `tma_store_wait`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BulkGroupOp {
    /// `cp.async.bulk.commit_group`: the bulk copies this thread issued since the last commit
    /// form a group.
    Commit,
    /// `cp.async.bulk.wait_group[.read] n`: waits until at most `n` of this thread's committed
    /// groups are pending; with `read`, until the others have finished reading their source
    /// (shared memory may be written again), else until their writes are done too.
    Wait { n: u32, read: bool },
}

impl BulkGroupOp {
    /// The builtin that makes it.
    pub fn builtin(self) -> &'static str {
        match self {
            BulkGroupOp::Commit => "tma_store_arrive",
            BulkGroupOp::Wait { .. } => "tma_store_wait",
        }
    }
}

/// A TMA tensor map (`CUtensorMap`) the kernel takes as a hidden parameter, after its declared
/// parameters and its fast divisors: the runtime encodes it at launch from the tensor parameter
/// `param` (its pointer, extents and strides) with the box `box_dims` and the swizzle.
#[derive(Clone, Debug, PartialEq)]
pub struct TmaDesc {
    /// Index of the tensor parameter in [`Kernel::params`].
    pub param: usize,
    pub elem: Scalar,
    /// The tensor's modes, innermost (stride-1) first: the map's dimensions.
    pub order: Vec<usize>,
    /// The box (the shared tile), in the tensor's mode order.
    pub box_dims: Vec<i64>,
    /// 0 (none), 32, 64 or 128 bytes.
    pub swizzle_bytes: u32,
    /// Whether a `tma_store` writes through the map. TMA stores write whole 16-byte chunks of a
    /// row, so the runtime refuses such a map when the tensor's inner extent is not a multiple
    /// of 16 bytes (the chunk would reach past the row's end).
    pub store: bool,
}

impl TmaDesc {
    /// The same encoding: a load and a store of one tensor with one box and swizzle share a map.
    pub fn same_map(&self, other: &TmaDesc) -> bool {
        (self.param, self.elem, &self.order, &self.box_dims, self.swizzle_bytes)
            == (other.param, other.elem, &other.order, &other.box_dims, other.swizzle_bytes)
    }
}

/// The mbarrier builtins (CuTe DSL's `cute.arch.mbarrier_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MbarrierOp {
    /// `mbarrier.init.shared::cta.b64 [bar], count`.
    Init,
    /// `mbarrier.arrive.shared::cta.b64`: one arrival.
    Arrive,
    /// `mbarrier.arrive.expect_tx.shared::cta.b64 [bar], bytes`: one arrival, and the phase also
    /// waits for `bytes` of asynchronous transactions (TMA loads) to complete.
    ArriveExpectTx,
    /// A `mbarrier.try_wait.parity.shared::cta.b64` loop: returns once the phase with the given
    /// parity has completed.
    Wait,
    /// One `mbarrier.try_wait.parity.shared::cta.b64`: whether the phase with the given parity
    /// has completed (a `bool`), after waiting at most a system-dependent time for it.
    TryWait,
    /// `mapa.shared::cluster` to the same barrier in the block of the given rank of the cluster,
    /// then `mbarrier.arrive.shared::cluster.b64` there (CUTLASS's `ClusterBarrier::arrive(cta_id)`): one arrival.
    ArriveCluster,
}

impl MbarrierOp {
    /// The builtin that makes it, which is also the `kind` of its `cute.mbarrier` op (less the prefix).
    pub fn builtin(self) -> &'static str {
        match self {
            MbarrierOp::Init => "mbarrier_init",
            MbarrierOp::Arrive => "mbarrier_arrive",
            MbarrierOp::ArriveExpectTx => "mbarrier_arrive_and_expect_tx",
            MbarrierOp::Wait => "mbarrier_wait",
            MbarrierOp::TryWait => "mbarrier_try_wait",
            MbarrierOp::ArriveCluster => "mbarrier_arrive",
        }
    }

    /// The `kind` attribute of `cute.mbarrier`.
    pub fn kind(self) -> &'static str {
        match self {
            MbarrierOp::Init => "init",
            MbarrierOp::Arrive => "arrive",
            MbarrierOp::ArriveExpectTx => "arrive_expect_tx",
            MbarrierOp::Wait => "wait",
            MbarrierOp::TryWait => "try_wait",
            MbarrierOp::ArriveCluster => "arrive_cluster",
        }
    }
}

/// The synchronizations around `wgmma` (CuTe DSL's `cute.nvgpu.warpgroup.fence/commit_group/
/// wait_group` and `cute.arch.fence_proxy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpgroupOp {
    /// `wgmma.fence.sync.aligned`: orders earlier register (accumulator) and shared-memory accesses
    /// before the wgmma instructions that follow.
    Fence,
    /// `wgmma.commit_group.sync.aligned`: the wgmma instructions issued since the last commit form a group.
    CommitGroup,
    /// `wgmma.wait_group.sync.aligned N`: waits until at most N groups are in flight.
    WaitGroup(u32),
    /// `fence.proxy.async.shared::cta`: makes this thread's earlier shared-memory writes (stores,
    /// `cp.async`) visible to the async proxy that wgmma reads through.
    FenceProxyAsync,
    /// `fence.mbarrier_init.release.cluster`: makes this thread's `mbarrier_init`s visible to the
    /// other threads (and the async proxy) before they use the barriers.
    FenceMbarrierInit,
    /// `setmaxnreg.inc.sync.aligned.u32 N`: the warpgroup's threads get N registers each (24 to
    /// 256, a multiple of 8), taken from the block's pool the decreasing warpgroups gave back.
    RegAlloc(u32),
    /// `setmaxnreg.dec.sync.aligned.u32 N`: the warpgroup's threads keep N registers each and give
    /// the rest back (a producer warpgroup that only issues TMA copies).
    RegDealloc(u32),
}

impl WarpgroupOp {
    /// The builtin that makes it.
    pub fn builtin(self) -> &'static str {
        match self {
            WarpgroupOp::Fence => "warpgroup_fence",
            WarpgroupOp::CommitGroup => "warpgroup_commit_group",
            WarpgroupOp::WaitGroup(_) => "warpgroup_wait_group",
            WarpgroupOp::FenceProxyAsync => "fence_proxy_async",
            WarpgroupOp::FenceMbarrierInit => "mbarrier_init_fence",
            WarpgroupOp::RegAlloc(_) => "warpgroup_reg_alloc",
            WarpgroupOp::RegDealloc(_) => "warpgroup_reg_dealloc",
        }
    }
}

/// A `bool` computed by instructions of its own region (a loop's test, run before each trip).
#[derive(Clone, Debug, PartialEq)]
pub struct Cond {
    pub insts: Vec<Inst>,
    pub value: Operand,
}

impl Inst {
    /// The nested instruction lists of a structured instruction (`If`, `For`, `While`, `Assert`),
    /// in order: loop tests, then bodies and branches. Empty for the others.
    pub fn regions(&self) -> Vec<&[Inst]> {
        match self {
            Inst::If { then, els, .. } => vec![then, els],
            Inst::For { body, exit, .. } => exit.iter().map(|c| c.insts.as_slice()).chain([body.as_slice()]).collect(),
            Inst::While { cond, body, .. } => vec![&cond.insts, body],
            Inst::Assert { cond, .. } => vec![&cond.insts],
            _ => Vec::new(),
        }
    }

    /// The target feature this instruction needs, with what it is for the diagnostic that refuses
    /// it on a target without the feature (crate::target). `None` for what every target has
    /// (`fence_proxy_async` among them).
    pub fn required_feature(&self) -> Option<FeatureUse> {
        // A conversion of a constant is folded by code generation (`KernelWriter::convert` in
        // compiler/src/lower.rs): no instruction, so no feature.
        fn folds(a: &Operand, from: Scalar, frag: Option<usize>) -> bool {
            frag.is_none()
                && match a {
                    Operand::Float(_) | Operand::Bool(_) => true,
                    Operand::Int(i) => i.is_static() && from != Scalar::I32,
                    Operand::Value(_) => false,
                }
        }
        let (feature, what, span) = match self {
            Inst::Wgmma { atom, span, .. } => {
                (Feature::Wgmma, format!("`gemm` with {} is a Hopper wgmma instruction", atom.name), span)
            }
            Inst::Warpgroup { op, span } => match op {
                WarpgroupOp::RegAlloc(_) | WarpgroupOp::RegDealloc(_) => (
                    Feature::Setmaxnreg,
                    format!("`{}` (setmaxnreg) is a Hopper register re-allocation instruction", op.builtin()),
                    span,
                ),
                WarpgroupOp::FenceProxyAsync => return None,
                WarpgroupOp::FenceMbarrierInit => {
                    (Feature::MbarrierTx, format!("`{}` is a Hopper mbarrier instruction", op.builtin()), span)
                }
                WarpgroupOp::Fence | WarpgroupOp::CommitGroup | WarpgroupOp::WaitGroup(_) => {
                    (Feature::Wgmma, format!("`{}` is a Hopper wgmma instruction", op.builtin()), span)
                }
            },
            // mbarrier waits (`try_wait`), transaction counts and the init fence are sm_90 instructions.
            Inst::Mbarrier { op, span, .. } => {
                (Feature::MbarrierTx, format!("`{}` is a Hopper mbarrier instruction", op.builtin()), span)
            }
            Inst::Atomic { op, ty, scope, pair, span, .. } if *scope == MemScope::Cluster || ty.elem == Scalar::BF16 => {
                let what = if *scope == MemScope::Cluster {
                    format!("`{}` with `scope: \"cluster\"` is a Hopper atomic", op.builtin())
                } else {
                    let x2 = if *pair { "x2" } else { "" };
                    format!("`{}` on bf16 (`atom.add.noftz.bf16{x2}`) is a Hopper atomic", op.builtin())
                };
                (if *scope == MemScope::Cluster { Feature::Clusters } else { Feature::AtomicsSm90 }, what, span)
            }
            Inst::AtomicAddFrag { ty, span, .. } => {
                let form = cute_layout::atom::atomic::red_fragment_for(ty.elem, &ty.layout, ty.align).ok()?;
                if !form.sm90 {
                    return None;
                }
                let what = format!("`atomic_add` of a fragment (`red.global.add.{}`) is a Hopper atomic", form.ty);
                (Feature::AtomicsSm90, what, span)
            }
            Inst::TmaLoad { span, .. } => (Feature::Tma, "`tma_load` is a Hopper TMA instruction".to_string(), span),
            Inst::TmaStore { span, .. } => (Feature::Tma, "`tma_store` is a Hopper TMA instruction".to_string(), span),
            Inst::BulkGroup { op, span } => {
                (Feature::Tma, format!("`{}` is a Hopper TMA instruction", op.builtin()), span)
            }
            Inst::ClusterBarrier { op, span } => {
                (Feature::Clusters, format!("`{}` is a Hopper thread-block cluster instruction", op.builtin()), span)
            }
            Inst::DsmemLoad { span, .. } | Inst::DsmemStore { span, .. } => (
                Feature::Clusters,
                "distributed shared memory (`dsmem_load`/`dsmem_store`) is a Hopper thread-block cluster feature"
                    .to_string(),
                span,
            ),
            Inst::Special { which, span, .. } if which.is_cluster() => (
                Feature::Clusters,
                "the cluster registers (`cluster_idx()`, `block_rank_in_cluster()`, ...) are a Hopper thread-block cluster feature"
                    .to_string(),
                span,
            ),
            Inst::Copy { op: op @ CopyOp::Stmatrix { .. }, span, .. } => {
                (Feature::Stmatrix, format!("`copy` with {} is a Hopper stmatrix instruction", op.name()), span)
            }
            Inst::Convert { from, to, frag, a, span, .. } if (from.is_fp8() || to.is_fp8()) && !folds(a, *from, *frag) => (
                Feature::Fp8Convert,
                format!("the conversion from `{}` to `{}` is an 8-bit float conversion instruction", from.name(), to.name()),
                span,
            ),
            _ => return None,
        };
        Some(FeatureUse { feature, what, span: *span })
    }
}

/// A use of a target [`Feature`]: what uses it ("`tma_load` is a Hopper TMA instruction") and where.
#[derive(Clone, Debug, PartialEq)]
pub struct FeatureUse {
    pub feature: Feature,
    pub what: String,
    pub span: Span,
}

/// Where an element access goes: CuTe's `tensor[coord]` (a coordinate without `_`, mapped through
/// the tensor's layout by `cute-canonicalize`), or an element offset from the base (a `let mut`
/// variable's one-element cell).
#[derive(Clone, Debug, PartialEq)]
pub enum At {
    Coord(cute_layout::expr::Value),
    Offset(Int),
}

/// The CuTe operation a tensor view comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum ViewHow {
    /// `op(layout of the source, args...)`: an operation of the layout algebra's expression
    /// language (`slice`, `local_tile`, `local_partition`, `composition`, `zipped_divide`, ...), or
    /// `make_view` (the same memory with the layout `args[0]`).
    Algebra { op: String, args: Vec<cute_layout::expr::Value> },
    /// One thread's part of a tiled copy (CuTe's `partition_S`, or `partition_D` when `dst`).
    Partition { dst: bool, elem: Scalar, bits: u32, tv: Layout, tile: cute_layout::IntTuple, tid: Int },
    /// One thread's part of an MMA operand (CuTe's `thr_mma.partition_A/B/C`).
    MmaPartition { operand: cute_layout::MmaOperand, tiled: cute_layout::TiledMma, tid: Int },
    /// The same memory as elements of another type (CuTe's `recast<T>(tensor)`): the view's
    /// layout is `recast_layout` of the source's, from elements of `from` to the view's; same
    /// base, no swizzle.
    Recast { from: Scalar },
}

impl ViewHow {
    pub fn algebra(op: &str, args: Vec<cute_layout::expr::Value>) -> ViewHow {
        ViewHow::Algebra { op: op.to_string(), args }
    }
}

/// A piece of printed output: text known now, an index integer, or another run-time scalar.
#[derive(Clone, Debug, PartialEq)]
pub enum FmtSeg {
    Text(String),
    Int(Int),
    Value(Scalar, ValueId),
}

#[derive(Clone, Debug, PartialEq)]
pub enum ParamKind {
    /// A tensor argument; `dyn_leaves` are the value ids of its dynamic shape entries then dynamic
    /// stride entries (flattened order), as the kernel ABI passes them.
    Tensor {
        ty: TensorTy,
        dyn_leaves: Vec<ValueId>,
    },
    Scalar(Scalar),
    /// A CUDA stream (host functions only): launches name it in `stream(s)`. It is no dynamic
    /// value of the plan (no `$k`) and is never passed to a kernel.
    Stream,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub value: ValueId,
    pub kind: ParamKind,
    pub span: Span,
}

/// A condition the launch must meet for the kernel to be correct: `value` (an expression over the
/// kernel's dynamic parameter values) is a multiple of a divisor — tiling a run-time extent by a
/// static tile leaves a partial tile otherwise, and the kernel has no tail handling — or at least a
/// minimum — a static coordinate in a run-time mode addresses memory outside the tensor otherwise.
#[derive(Clone, Debug, PartialEq)]
pub struct Require {
    pub value: Int,
    pub need: cute_abi::manifest::Need,
    pub what: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// The cubin symbol: the kernel's name, suffixed when it has several instances.
    pub symbol: String,
    pub source_name: String,
    pub params: Vec<Param>,
    pub body: Vec<Inst>,
    /// The type of every value id, for code generation.
    pub value_types: Vec<ValueTy>,
    /// What the runtime must check before launching (partial tiles).
    pub requires: Vec<Require>,
    /// The TMA tensor maps the kernel takes after its declared parameters (`tma_load`).
    pub tmas: Vec<TmaDesc>,
    /// The block shape every launch of the kernel uses, when the kernel needs it at compile time
    /// (PTX `.reqntid`): a kernel that re-allocates registers (`setmaxnreg`) must tell ptxas how
    /// many threads share the register file.
    pub reqntid: Option<[u32; 3]>,
    /// With `reqntid`: the blocks an SM holds by the registers the kernel's warpgroups ask for
    /// (`setmaxnreg`), PTX `.minnctapersm` (1 unless every warpgroup asks and the counts leave room
    /// for more).
    pub blocks_per_sm: u32,
    pub span: Span,
    /// The thread-block cluster shape its launches gave (`cluster(...)`), if any.
    pub cluster: Option<Cluster>,
    /// The `index(i64)` clause, when the kernel computes its index math in 64 bits (else 32).
    pub index64: Option<Span>,
    /// The `math(...)` clause: the precision the kernel's float code may give up for speed.
    pub math: FastMath,
}

/// A kernel's fast-math controls (`math(ftz, approx, contract)`), all off by default (IEEE float
/// math, as CUDA's without `--use_fast_math`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FastMath {
    /// f32 denormal inputs and results are flushed to zero (PTX `.ftz`).
    pub ftz: bool,
    /// Division, square root and the transcendental functions are the hardware's approximations.
    pub approx: bool,
    /// A multiply and an add may be fused into one `fma` (one rounding instead of two).
    pub contract: bool,
    /// The clause, when given.
    pub clause: Option<Span>,
}

/// The 32-bit registers one register tensor or fragment may take per thread: a thread has at most
/// 255, and the rest are left for addresses, indices and loop counters.
pub const REGISTER_BUDGET: u64 = 240;

/// The 32-bit registers `n` elements of `elem` take: elements are packed by their size (two f16
/// per register), except `bool`s, which take a register each.
pub fn registers_for(n: u64, elem: Scalar) -> u64 {
    n.saturating_mul(register_bytes(elem)).div_ceil(4)
}

/// The most elements of `elem` that fit [`REGISTER_BUDGET`].
pub fn max_register_elements(elem: Scalar) -> u64 {
    REGISTER_BUDGET * 4 / register_bytes(elem)
}

fn register_bytes(elem: Scalar) -> u64 {
    if elem == Scalar::Bool {
        4
    } else {
        u64::from(elem.size_bytes())
    }
}

/// The shared memory a kernel may declare statically; larger allocations go to dynamic shared
/// memory, which the launch provides and the runtime opts the kernel into.
pub const STATIC_SMEM_LIMIT: u64 = 48 * 1024;
/// The most shared memory one block can have (the H100's opt-in maximum, 227 KiB).
pub const MAX_SMEM: u64 = 227 * 1024;

/// Where an allocation of this type starts ([`smem_align`]).
pub fn smem_alloc_align(ty: &TensorTy) -> u64 {
    smem_align(ty.swizzle, ty.elem.size_bytes())
}

/// One allocation's bytes as placed in shared memory.
pub fn smem_alloc_bytes(ty: &TensorTy) -> u64 {
    smem_bytes(ty.layout.cosize().ok().and_then(|c| c.as_static()).unwrap_or(0), ty.elem.size_bytes(), ty.swizzle)
}

impl Kernel {
    /// The bytes of all the kernel's shared-memory allocations, placed one after another in
    /// program order, each at its alignment ([`smem_alloc_align`]; cute-lower-to-gpu places them
    /// by the same rule).
    pub fn smem_bytes(&self) -> u64 {
        fn walk(insts: &[Inst], at: &mut u64) {
            for i in insts {
                match i {
                    Inst::Alloc { ty, .. } if ty.space == MemSpace::Smem => {
                        *at = at.div_ceil(smem_alloc_align(ty)) * smem_alloc_align(ty) + smem_alloc_bytes(ty)
                    }
                    other => other.regions().into_iter().for_each(|r| walk(r, at)),
                }
            }
        }
        let mut at = 0;
        walk(&self.body, &mut at);
        at
    }

    /// The dynamic shared memory the compiler places the allocations in: all of them when they
    /// exceed what a kernel may declare statically, else none. A launch's `smem(BYTES)` comes on
    /// top of it.
    /// Rounded up to [`SMEM_MAX_ALIGN`], so the launch's own region after it starts as aligned as
    /// any allocation there may ask.
    pub fn dynamic_smem_bytes(&self) -> u64 {
        let b = self.smem_bytes();
        if b > STATIC_SMEM_LIMIT {
            b.div_ceil(SMEM_MAX_ALIGN) * SMEM_MAX_ALIGN
        } else {
            0
        }
    }

    /// The bytes of the launch's `smem(BYTES)` region the kernel's tensors there reach (0 without
    /// any): every launch must give at least this many.
    pub fn launch_smem_bytes(&self) -> u64 {
        fn walk(insts: &[Inst]) -> u64 {
            insts
                .iter()
                .map(|i| match i {
                    Inst::LaunchSmem { ty, offset, .. } => offset + smem_alloc_bytes(ty),
                    Inst::If { then, els, .. } => walk(then).max(walk(els)),
                    Inst::For { body, .. } => walk(body),
                    _ => 0,
                })
                .max()
                .unwrap_or(0)
        }
        walk(&self.body)
    }

    /// The least dynamic shared memory a launch must give: what the compiler places there and the
    /// part of the launch's own region the kernel uses (the manifest's `smem` line).
    pub fn min_dynamic_smem_bytes(&self) -> u64 {
        self.dynamic_smem_bytes() + self.launch_smem_bytes()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ValueTy {
    Scalar(Scalar),
    Frag(FragTy),
    Tensor(TensorTy),
}

/// One argument of a launch in a host function's plan, computed at call time from the host's
/// parameters: symbolic expressions over the host parameters' dynamic values.
#[derive(Clone, Debug, PartialEq)]
pub enum PlanArg {
    Tensor { host_param: usize, offset: Int, dyn_leaves: Vec<Int> },
    Scalar { ty: Scalar, value: Int },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    pub kernel: String,
    pub args: Vec<PlanArg>,
    pub grid: [Int; 3],
    pub block: [Int; 3],
    pub smem_bytes: Int,
    /// `stream(s)`: the index of the host's stream parameter the launch goes to; `None`: the
    /// stream the call is made on.
    pub stream: Option<usize>,
    pub span: Span,
}

/// One step of a host function, in program order.
#[derive(Clone, Debug, PartialEq)]
pub enum HostStep {
    Launch(Launch),
    /// `printf` on the host: printed by the runtime when the function is called.
    Print(Vec<FmtSeg>),
    /// A host `if` on run-time values: the runtime evaluates `cond` per call and carries out one
    /// branch, whose checks apply only when it is taken.
    If {
        cond: HostCond,
        then: HostBranch,
        els: HostBranch,
        span: Span,
    },
    /// A host `for` with run-time bounds or step: the runtime runs `body` once per value of `var`
    /// from `start` (inclusive) to `end` (exclusive) by `step` (refusing a call whose step is not
    /// positive); the body's checks apply per trip, with `var` bound.
    For {
        var: ValueId,
        start: Int,
        end: Int,
        step: Int,
        body: HostBranch,
        span: Span,
    },
    /// `break` of the innermost host run-time `for` (under a host `if` in its body, or not).
    Break,
    /// `continue` of the innermost host run-time `for`.
    Continue,
}

impl HostStep {
    /// Whether this step is, or contains, a run-time loop.
    pub fn has_loop(&self) -> bool {
        match self {
            HostStep::For { .. } => true,
            HostStep::If { then, els, .. } => then.steps.iter().chain(&els.steps).any(HostStep::has_loop),
            _ => false,
        }
    }
}

/// A condition a host function branches on at run time: comparisons of index integers joined by
/// `&&`, `||` and `!`.
#[derive(Clone, Debug, PartialEq)]
pub enum HostCond {
    Cmp { lhs: Int, op: CmpOp, rhs: Int },
    And(Box<HostCond>, Box<HostCond>),
    Or(Box<HostCond>, Box<HostCond>),
    Not(Box<HostCond>),
}

/// One branch of a host `if`: its checks (made only when the branch is taken) and its steps.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct HostBranch {
    pub requires: Vec<Require>,
    pub asserts: Vec<Assert>,
    pub steps: Vec<HostStep>,
}

impl HostBranch {
    pub fn is_empty(&self) -> bool {
        self.requires.is_empty() && self.asserts.is_empty() && self.steps.is_empty()
    }
}

/// A host function: its parameters and its steps (launches and prints), in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Host {
    /// The host function's name; an instance of a generic one is named `NAME<f16>` (`NAME<f16,f32>`).
    pub name: String,
    /// For an instance of a generic host function (`host f<T: f16 | f32>`): which one.
    pub instance: Option<HostInstance>,
    pub params: Vec<Param>,
    pub steps: Vec<HostStep>,
    /// What the runtime must check before the first step (partial tiles), over the host's `$k`.
    pub requires: Vec<Require>,
    /// Run-time `assert`s, checked by the runtime with the `require`s, before the first step.
    pub asserts: Vec<Assert>,
    /// The tuning table's lines for it (`M,N | NAME=VALUE; ...`; `cutec build --tuning`), which
    /// the manifest records; empty when not tuned.
    pub tuned: Vec<String>,
    pub span: Span,
}

/// What an instance of a generic host function was compiled for: the generic's name and each type
/// parameter's element type, with the parameters (indices) whose element type it is, from which the
/// runtime tells the instances apart by the arguments' dtypes.
#[derive(Clone, Debug, PartialEq)]
pub struct HostInstance {
    pub generic: String,
    pub type_args: Vec<TypeArg>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TypeArg {
    pub name: String,
    pub ty: Scalar,
    /// The tensor parameters declared with this element type.
    pub params: Vec<usize>,
}

/// A host `assert(lhs OP rhs, "message")` whose sides depend on run-time values: the runtime
/// refuses a call where `lhs OP rhs` does not hold. `lhs_text`/`rhs_text` are the source text of
/// the sides, for the refusal's message; `message` is the user's message, or the condition's text.
#[derive(Clone, Debug, PartialEq)]
pub struct Assert {
    pub lhs: Int,
    pub op: CmpOp,
    pub rhs: Int,
    pub message: String,
    pub lhs_text: String,
    pub rhs_text: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Module {
    pub kernels: Vec<Kernel>,
    pub hosts: Vec<Host>,
    /// What compile-time `print` calls printed, in order.
    pub prints: Vec<String>,
    /// What the compiler could not check (an mbarrier ring's count it cannot see): reported as
    /// warnings; the module is still built.
    pub warnings: Vec<crate::diag::Diagnostic>,
    /// The steps of the compile budget elaboration took (`cutec build --timings` reports them).
    pub compile_steps: u64,
}
