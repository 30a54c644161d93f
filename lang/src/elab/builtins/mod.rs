//! The builtin functions and methods: the layout algebra, tensor views, fragments, copies, warps,
//! math and printing, each declared once in [`BUILTINS`] (methods in [`METHODS`]).
//!
//! Layout operations accept a layout or a tensor; on a tensor they act on its layout and give a view
//! of the same memory (CuTe's `zipped_divide(mA, tiler)` and friends).
//!
//! Adding a builtin: one row in [`BUILTINS`] and its handler in the family's file (`layout.rs`,
//! `tensor.rs`, `copy.rs`, `warp.rs`, `math.rs`, `print.rs`, or the feature files `mma.rs`,
//! `swizzle.rs`, `copy_if.rs`, ... of `elab/`), and its row in docs/language.md §8 (the LSP's hover
//! and completion read it there; a test checks the two agree). An operation of the layout algebra
//! is one entry in `cute_layout::expr::OPERATIONS` (which the passes re-run) and here a row made by
//! `algebra(name, usage, readers)`: no handler of its own.

mod alloc;
pub(crate) mod args;
mod copy;
mod layout;
mod math;
mod print;
mod tensor;
mod warp;

use super::value::{TensorVal, Value};
use super::{Frame, R};
use crate::diag::{did_you_mean, Diagnostic};
use crate::span::Span;
use args::{arity, named};
use cute_abi::Feature;
use layout::read;

pub(crate) use alloc::{alloc, alloc_ty, alloc_with};
pub use args::Arg;
pub(crate) use copy::copy_with;
pub use math::{is_operator, operator};

/// Where a builtin may be called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Allowed {
    /// Kernels, host functions and `const` initializers (run-time values still need a kernel).
    Anywhere,
    /// Kernels only, checked from the table right after the argument count.
    Kernel,
    /// Kernels only, checked by the handler once it has read its arguments (their errors come first).
    KernelAfterArgs,
}

/// A builtin's handler: the name it was called by, the evaluated arguments, the call's span.
pub(crate) type Handler = fn(&mut Frame, &str, Vec<Arg>, Span) -> R<Value>;

/// How a builtin runs.
#[derive(Clone, Copy)]
pub(crate) enum Run {
    /// A handler of evaluated arguments, called by [`call`].
    Values(Handler),
    /// An operation of `cute_layout::expr`'s table (`expr::OPERATIONS`) of the same name, nothing
    /// more: its positional arguments read by these readers (their diagnostics), then the
    /// operation, a view of a tensor where `expr` says it is one ([`layout::algebra`]).
    Algebra(&'static [layout::Reader]),
    /// Dispatched by `Frame::call` before its arguments are evaluated: they are places (`bars[i]`,
    /// `sA[i, j]`) or a condition with its text (`assert`), not values.
    Places,
}

/// One builtin function. Its documentation is its row in docs/language.md §8.
#[derive(Clone, Copy)]
pub(crate) struct Builtin {
    pub name: &'static str,
    /// The signature, as the help of an argument-count error writes it.
    pub usage: &'static str,
    /// The positional argument count, checked before the handler runs; `None` where the handler
    /// checks it (its checks come in another order, or the count depends on the arguments).
    pub arity: Option<(usize, usize)>,
    /// The named arguments, checked right after the count; `None` where the handler reads them.
    pub named: Option<&'static [&'static str]>,
    pub allowed: Allowed,
    /// The target feature its instructions need, for readers of the table (docs, the editor). The
    /// check itself runs on the kernel IR, where the instructions are (`lang/src/target.rs`,
    /// `kir::Inst::required_feature`), since a builtin's arguments decide some of them.
    #[allow(dead_code)]
    pub needs: Option<Feature>,
    pub run: Run,
}

const fn f(name: &'static str, usage: &'static str, run: Handler) -> Builtin {
    Builtin { name, usage, arity: None, named: None, allowed: Allowed::Anywhere, needs: None, run: Run::Values(run) }
}

const fn algebra(name: &'static str, usage: &'static str, readers: &'static [layout::Reader]) -> Builtin {
    // One reader an argument; a row with optional trailing arguments says its arity.
    let arity = Some((readers.len(), readers.len()));
    Builtin { name, usage, arity, named: None, allowed: Allowed::Anywhere, needs: None, run: Run::Algebra(readers) }
}

const fn places(name: &'static str, usage: &'static str, needs: Option<Feature>) -> Builtin {
    Builtin { name, usage, arity: None, named: None, allowed: Allowed::KernelAfterArgs, needs, run: Run::Places }
}

impl Builtin {
    const fn arity(self, min: usize, max: usize) -> Builtin {
        Builtin { arity: Some((min, max)), ..self }
    }
    const fn no_named(self) -> Builtin {
        Builtin { named: Some(&[]), ..self }
    }
    const fn kernel(self) -> Builtin {
        Builtin { allowed: Allowed::Kernel, ..self }
    }
    const fn kernel_after_args(self) -> Builtin {
        Builtin { allowed: Allowed::KernelAfterArgs, ..self }
    }
    const fn needs(self, feature: Feature) -> Builtin {
        Builtin { needs: Some(feature), ..self }
    }
}

use Feature::{Clusters, MbarrierTx, Setmaxnreg, Tma, Wgmma};

/// Every builtin function.
#[rustfmt::skip]
pub(crate) const BUILTINS: &[Builtin] = &[
    f("size", "size(x)", layout::size_like).arity(1, 1),
    f("cosize", "cosize(x)", layout::size_like).arity(1, 1),
    f("rank", "rank(x)", layout::size_like).arity(1, 1),
    f("depth", "depth(x)", layout::size_like).arity(1, 1),
    f("make_layout", "make_layout(shape, stride: stride)", layout::make_layout).arity(1, 1),
    f("make_ordered_layout", "make_ordered_layout(shape, order: order)", layout::make_ordered_layout).arity(1, 1),
    algebra("make_layout_tv", "make_layout_tv(thr_layout, val_layout)", &[read::layout, read::layout]).no_named(),
    f("make_tensor", "make_tensor(tensor, layout)", tensor::make_tensor).arity(2, 2),
    f("composition", "composition(a, b)", layout::composition).arity(2, 2),
    algebra("complement", "complement(layout, cotarget)", &[read::layout, read::cotarget]).arity(1, 2),
    algebra("right_inverse", "right_inverse(layout)", &[read::layout]),
    algebra("left_inverse", "left_inverse(layout)", &[read::layout]),
    algebra("coalesce", "coalesce(layout[, profile])", &[read::layout, read::profile]).arity(1, 2),
    algebra("filter", "filter(layout)", &[read::layout]),
    algebra("logical_divide", "logical_divide(x, tiler)", &[read::layout, read::tiler]),
    algebra("zipped_divide", "zipped_divide(x, tiler)", &[read::layout, read::tiler]),
    algebra("tiled_divide", "tiled_divide(x, tiler)", &[read::layout, read::tiler]),
    algebra("flat_divide", "flat_divide(x, tiler)", &[read::layout, read::tiler]),
    algebra("logical_product", "logical_product(x, tiler)", &[read::layout, read::tiler]),
    algebra("zipped_product", "zipped_product(x, tiler)", &[read::layout, read::tiler]),
    algebra("tiled_product", "tiled_product(x, tiler)", &[read::layout, read::tiler]),
    algebra("flat_product", "flat_product(x, tiler)", &[read::layout, read::tiler]),
    algebra("blocked_product", "blocked_product(a, b)", &[read::layout, read::layout]),
    algebra("raked_product", "raked_product(a, b)", &[read::layout, read::layout]),
    f("select", "select(x, modes)", layout::select).arity(2, 2),
    f("group_modes", "group_modes(x, begin, end)", layout::group_modes).arity(3, 3),
    algebra("flatten", "flatten(layout)", &[read::layout]),
    f("get", "get(x, mode)", layout::get).arity(2, 2),
    f("local_tile", "local_tile(tensor, tiler, coord)", layout::local_tile).arity(3, 3),
    f("local_partition", "local_partition(tensor, thread_layout, thread_index)", layout::local_partition).arity(3, 3),
    f("print", "print(\"x = {}\", x)", print::print),
    f("printf", "printf(\"x = {}\\n\", x)", print::printf),
    f("sync_threads", "sync_threads()", warp::sync_threads).arity(0, 0).kernel(),
    f("min", "min(a, b)", math::min_max_call).arity(2, 2),
    f("max", "max(a, b)", math::min_max_call).arity(2, 2),
    algebra("make_identity_tensor", "make_identity_tensor(shape)", &[read::shape]),
    f("where", "where(condition, a, b)", math::where_call).arity(3, 3),
    f("make_rmem_tensor", "make_rmem_tensor(shape, element_type)", tensor::make_rmem_tensor).arity(2, 2).kernel_after_args(),
    f("make_rmem_tensor_like", "make_rmem_tensor_like(tensor[, element_type])", tensor::make_rmem_tensor_like).arity(1, 2).kernel_after_args(),
    f("make_fragment", "make_fragment(shape, element_type)", tensor::make_rmem_tensor).arity(2, 2).kernel_after_args(),
    f("make_fragment_like", "make_fragment_like(tensor[, element_type])", tensor::make_rmem_tensor_like).arity(1, 2).kernel_after_args(),
    f("make_smem_tensor", "make_smem_tensor(element_type, layout)", tensor::make_smem_tensor).arity(2, 2).kernel_after_args(),
    f("smem_allocator", "smem_allocator()", |f, _, a, s| super::smem::smem_allocator(f, &a, s)).kernel_after_args(),
    f("basic_copy", "basic_copy(src, dst)", copy::copy_call).kernel_after_args(),
    f("autovec_copy", "autovec_copy(src, dst)", copy::copy_call).kernel_after_args(),
    f("copy", "copy(src, dst)", copy::copy_call).kernel_after_args(),
    f("make_copy_atom", "make_copy_atom(element_type, bits: N, op: ...)", copy::make_copy_atom),
    f("make_tiled_copy", "make_tiled_copy(copy_atom, tv_layout, tile)", copy::make_tiled_copy).arity(3, 3),
    f("make_tiled_copy_tv", "make_tiled_copy_tv(copy_atom, thr_layout, val_layout)", copy::make_tiled_copy).arity(3, 3),
    f("print_tensor", "print_tensor(tensor, verbose: false)", print::print_tensor_call).arity(1, 1).kernel_after_args(),
    f("ceil_div", "ceil_div(a, b)", math::ceil_div).arity(2, 2),
    f("lane_idx", "lane_idx()", warp::lane_or_warp_idx).arity(0, 0),
    f("warp_idx", "warp_idx()", warp::lane_or_warp_idx).arity(0, 0),
    f("shuffle_xor", "shuffle_xor(value, offset)", warp::shuffle_call).arity(2, 2).kernel_after_args(),
    f("shuffle_down", "shuffle_down(value, offset)", warp::shuffle_call).arity(2, 2).kernel_after_args(),
    f("shuffle_up", "shuffle_up(value, offset)", warp::shuffle_call).arity(2, 2).kernel_after_args(),
    f("shuffle_idx", "shuffle_idx(value, offset)", warp::shuffle_call).arity(2, 2).kernel_after_args(),
    f("warp_reduce", "warp_reduce(op, value)", warp::warp_reduce).kernel_after_args(),
    f("warp_reduction_sum", "warp_reduction_sum(value)", warp::warp_reduce).kernel_after_args(),
    f("warp_reduction_max", "warp_reduction_max(value)", warp::warp_reduce).kernel_after_args(),
    f("full_like", "full_like(fragment, value)", tensor::full_like).kernel_after_args(),
    f("zeros_like", "zeros_like(fragment)", tensor::full_like).kernel_after_args(),
    f("sqrt", "sqrt(x)", math::math_call).arity(1, 1),
    f("rsqrt", "rsqrt(x)", math::math_call).arity(1, 1),
    f("exp", "exp(x)", math::math_call).arity(1, 1),
    f("exp2", "exp2(x)", math::math_call).arity(1, 1),
    f("log", "log(x)", math::math_call).arity(1, 1),
    f("log2", "log2(x)", math::math_call).arity(1, 1),
    f("log10", "log10(x)", math::math_call).arity(1, 1),
    f("sin", "sin(x)", math::math_call).arity(1, 1),
    f("cos", "cos(x)", math::math_call).arity(1, 1),
    f("tan", "tan(x)", math::math_call).arity(1, 1),
    f("tanh", "tanh(x)", math::math_call).arity(1, 1),
    f("erf", "erf(x)", math::math_call).arity(1, 1),
    f("floor", "floor(x)", math::math_call).arity(1, 1),
    f("ceil", "ceil(x)", math::math_call).arity(1, 1),
    f("round", "round(x)", math::math_call).arity(1, 1),
    f("abs", "abs(x)", math::math_call).arity(1, 1),
    f("fma", "fma(a, b, c)", math::fma_call).arity(3, 3).no_named(),
    f("make_mma_atom", "make_mma_atom(ab_type, acc_type, (M, N, K))", |_, _, a, s| super::mma::make_mma_atom(&a, s)),
    f("make_tiled_mma", "make_tiled_mma(atom, atom_layout)", |_, _, a, s| super::mma::make_tiled_mma(&a, s)),
    f("gemm", "gemm(tiled_mma, d, a, b, c)", |f, _, a, s| super::mma::gemm(f, &a, s)).kernel_after_args(),
    f("cp_async_commit_group", "cp_async_commit_group()", copy::async_copy_group).kernel_after_args(),
    f("cp_async_wait_group", "cp_async_wait_group(n)", copy::async_copy_group).kernel_after_args(),
    f("make_tiled_copy_A", "make_tiled_copy_A(copy_atom, tiled_mma)", |_, n, a, s| super::mma::make_tiled_copy_ab(n, &a, s)),
    f("make_tiled_copy_B", "make_tiled_copy_B(copy_atom, tiled_mma)", |_, n, a, s| super::mma::make_tiled_copy_ab(n, &a, s)),
    f("make_tiled_copy_C", "make_tiled_copy_C(copy_atom, tiled_mma)", |_, _, a, s| super::mma::make_tiled_copy_c(&a, s)),
    places("assert", "assert(condition, \"message\")", None),
    f("asm", "asm(\"ptx\", outputs: types, inputs: values)", |f, _, a, s| super::asm::asm_call(f, &a, s)).arity(1, 1).kernel_after_args(),
    f("make_swizzle", "make_swizzle(b, m, s)", |_, _, a, s| super::swizzle::make_swizzle(&a, s)),
    f("make_composed_layout", "make_composed_layout(swizzle, offset, layout)", |_, _, a, s| super::swizzle::make_composed_layout(&a, s)),
    f("tile_to_shape", "tile_to_shape(atom, shape[, order])", |_, _, a, s| super::swizzle::tile_to_shape(&a, s)),
    f("copy_if", "copy_if(tiled_copy, pred, src, dst)", |f, _, a, s| super::copy_if::copy_if(f, &a, s)).kernel_after_args(),
    f("elem_less", "elem_less(a, b)", |f, _, a, s| super::copy_if::elem_less(f, &a, s)),
    f("crd2idx", "crd2idx(coord, shape[, stride]) or crd2idx(coord, layout)", layout::crd2idx).arity(2, 3).no_named(),
    algebra("idx2crd", "idx2crd(index, shape[, stride])", &[read::index, read::shape, read::stride]).arity(2, 3).no_named(),
    f("take", "take(x, begin, end)", layout::take).arity(3, 3),
    f("dice", "dice(x, coord)", layout::dice).arity(2, 2),
    f("filter_zeros", "filter_zeros(x)", layout::filter_zeros).arity(1, 1),
    algebra("max_common_vector", "max_common_vector(a, b)", &[read::layout, read::layout]),
    algebra("max_common_layout", "max_common_layout(a, b)", &[read::layout, read::layout]),
    algebra("recast_layout", "recast_layout(new_type, old_type, layout)", &[read::bits, read::bits, read::layout]),
    f("recast", "recast(T, tensor)", |f, n, a, s| super::recast::recast(f, n, &a, s)),
    f("recast_tensor", "recast_tensor(tensor, T)", |f, n, a, s| super::recast::recast(f, n, &a, s)),
    f("sizeof", "sizeof(T)", tensor::sizeof).arity(1, 1).no_named(),
    f("warpgroup_fence", "warpgroup_fence()", warp::warpgroup_sync).kernel_after_args().needs(Wgmma),
    f("warpgroup_commit_group", "warpgroup_commit_group()", warp::warpgroup_sync).kernel_after_args().needs(Wgmma),
    f("warpgroup_wait_group", "warpgroup_wait_group(n)", warp::warpgroup_sync).kernel_after_args().needs(Wgmma),
    f("fence_proxy_async", "fence_proxy_async()", warp::warpgroup_sync).kernel_after_args(),
    places("mbarrier_init", "mbarrier_init(bars[i], count)", Some(MbarrierTx)),
    f("mbarrier_init_fence", "mbarrier_init_fence()", warp::warpgroup_sync).kernel_after_args().needs(MbarrierTx),
    places("mbarrier_arrive", "mbarrier_arrive(bars[i][, cta: rank])", Some(MbarrierTx)),
    places("mbarrier_arrive_and_expect_tx", "mbarrier_arrive_and_expect_tx(bars[i], bytes)", Some(MbarrierTx)),
    places("mbarrier_wait", "mbarrier_wait(bars[i], phase)", Some(MbarrierTx)),
    places("mbarrier_try_wait", "mbarrier_try_wait(bars[i], phase)", Some(MbarrierTx)),
    f("make_pipeline_async", "make_pipeline_async(smem, stages: S, producers: P, consumers: C)", super::pipeline::make_pipeline).kernel_after_args().needs(MbarrierTx),
    f("make_pipeline_tma_async", "make_pipeline_tma_async(smem, stages: S, producers: P, consumers: C, tx_bytes: B)", super::pipeline::make_pipeline).kernel_after_args().needs(MbarrierTx),
    places("tma_load", "tma_load(tma, dst, coord, bars[i])", Some(Tma)),
    places("tma_store", "tma_store(tma, src, coord)", Some(Tma)),
    places("tma_store_fence", "tma_store_fence()", Some(Tma)),
    places("tma_store_arrive", "tma_store_arrive()", Some(Tma)),
    places("tma_store_wait", "tma_store_wait(n)", Some(Tma)),
    places("cp_async_bulk_commit_group", "cp_async_bulk_commit_group()", Some(Tma)),
    places("cp_async_bulk_wait_group", "cp_async_bulk_wait_group(n, read: r)", Some(Tma)),
    f("warpgroup_reg_alloc", "warpgroup_reg_alloc(registers)", warp::warpgroup_sync).kernel_after_args().needs(Setmaxnreg),
    f("warpgroup_reg_dealloc", "warpgroup_reg_dealloc(registers)", warp::warpgroup_sync).kernel_after_args().needs(Setmaxnreg),
    f("barrier", "barrier(barrier_id: 1, number_of_threads: 256)", warp::named_barrier).kernel_after_args(),
    f("barrier_arrive", "barrier_arrive(barrier_id: 1, number_of_threads: 256)", warp::named_barrier).kernel_after_args(),
    places("cluster_idx", "let (cx, cy, cz) = cluster_idx();", Some(Clusters)),
    places("cluster_dim", "let (nx, ny, nz) = cluster_dim();", Some(Clusters)),
    places("block_idx_in_cluster", "let (bx, by, bz) = block_idx_in_cluster();", Some(Clusters)),
    places("block_in_cluster_dim", "let (cx, cy, cz) = block_in_cluster_dim();", Some(Clusters)),
    places("block_rank_in_cluster", "block_rank_in_cluster()", Some(Clusters)),
    places("cluster_arrive", "cluster_arrive();", Some(Clusters)),
    places("cluster_arrive_relaxed", "cluster_arrive_relaxed();", Some(Clusters)),
    places("cluster_wait", "cluster_wait();", Some(Clusters)),
    places("cluster_sync", "cluster_sync();", Some(Clusters)),
    places("dsmem_load", "dsmem_load(sA[i, j], rank)", Some(Clusters)),
    places("dsmem_store", "dsmem_store(sA[i, j], rank, value)", Some(Clusters)),
    places("atomic_add", "atomic_add(t[i], value, scope: \"gpu\", order: \"relaxed\")", None),
    places("atomic_min", "atomic_min(t[i], value, scope: \"gpu\", order: \"relaxed\")", None),
    places("atomic_max", "atomic_max(t[i], value, scope: \"gpu\", order: \"relaxed\")", None),
    places("atomic_exch", "atomic_exch(t[i], value, scope: \"gpu\", order: \"relaxed\")", None),
    places("atomic_cas", "atomic_cas(t[i], expected, desired, scope: \"gpu\", order: \"relaxed\")", None),
    places("atomic_and", "atomic_and(t[i], value, scope: \"gpu\", order: \"relaxed\")", None),
    places("atomic_or", "atomic_or(t[i], value, scope: \"gpu\", order: \"relaxed\")", None),
    places("atomic_xor", "atomic_xor(t[i], value, scope: \"gpu\", order: \"relaxed\")", None),
];

/// Every builtin function's name, for "did you mean" help and the IDE.
pub(crate) fn function_names() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().map(|b| b.name)
}

/// The builtin called `name`.
pub(crate) fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

pub fn call(f: &mut Frame, name: &str, name_span: Span, args: Vec<Arg>, span: Span) -> R<Value> {
    let Some(Builtin { usage, arity: count, named: keys, allowed, run, .. }) =
        builtin(name).filter(|b| !matches!(b.run, Run::Places))
    else {
        return Err(not_found(f, name, name_span));
    };
    if let Some((min, max)) = count {
        arity(name, &args, *min, *max, span, usage)?;
    }
    if let Some(keys) = keys {
        named(name, &args, "", keys)?;
    }
    if *allowed == Allowed::Kernel {
        f.need_kernel(&format!("`{name}`"), span)?;
    }
    match run {
        Run::Values(run) => run(f, name, args, span),
        Run::Algebra(readers) => layout::algebra(f, name, readers, args, span),
        Run::Places => unreachable!("`Frame::call` dispatches the builtins of places"),
    }
}

fn not_found(f: &Frame, name: &str, name_span: Span) -> Diagnostic {
    let mut d = Diagnostic::error(format!("cannot find function `{name}`"), name_span, "not found");
    let mut candidates: Vec<&str> = function_names().collect();
    let fns: Vec<String> = f.prog.functions.keys().cloned().collect();
    candidates.extend(fns.iter().map(String::as_str));
    if let Some(s) = did_you_mean(name, candidates) {
        d = d.with_help(format!("did you mean `{s}`?"));
    }
    d
}

/// The receivers of builtin methods, as the "no method" help groups them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Receiver {
    Tensor,
    TiledMma,
    ThrMma,
    Fragment,
    TiledCopy,
    ThrCopy,
    SmemAllocator,
    Pipeline,
    PipeState,
    /// Any value (`x.to(T)`).
    Any,
}

/// The methods of each receiver (the "no method" help lists them in this order). The methods of a
/// thread's MMA slice are [`super::mma::THR_MMA_METHODS`].
pub(crate) const METHODS: &[(Receiver, &[&str])] = &[
    (Receiver::Tensor, &["load", "store", "fill"]),
    (Receiver::TiledMma, &["get_slice"]),
    (Receiver::ThrMma, super::mma::THR_MMA_METHODS),
    (Receiver::Fragment, &["reduce", "to"]),
    (Receiver::TiledCopy, &["get_slice", "retile"]),
    (Receiver::ThrCopy, &["partition_S", "partition_D", "retile_D", "retile_S"]),
    (Receiver::SmemAllocator, &["allocate_tensor"]),
    (Receiver::Pipeline, super::pipeline::PIPELINE_METHODS),
    (Receiver::PipeState, super::pipeline_state::STATE_METHODS),
    (Receiver::Any, &["to"]),
];

impl Receiver {
    fn of(v: &Value) -> Receiver {
        match v {
            Value::Tensor(_) => Receiver::Tensor,
            Value::TiledMma(_) => Receiver::TiledMma,
            Value::ThrMma(..) => Receiver::ThrMma,
            Value::Frag(..) => Receiver::Fragment,
            Value::TiledCopy { .. } => Receiver::TiledCopy,
            Value::ThrCopy { .. } => Receiver::ThrCopy,
            Value::SmemAllocator(_) => Receiver::SmemAllocator,
            Value::Pipeline(_) => Receiver::Pipeline,
            Value::PipeState(_) => Receiver::PipeState,
            _ => Receiver::Any,
        }
    }

    fn methods(self) -> &'static [&'static str] {
        METHODS.iter().find(|(r, _)| *r == self).map_or(&[], |(_, m)| m)
    }
}

pub fn method(f: &mut Frame, recv: Value, name: &crate::ast::Ident, args: Vec<Arg>, span: Span) -> R<Value> {
    match (name.name.as_str(), &recv) {
        ("load", Value::Tensor(t)) => tensor::load(f, t, &args, span),
        ("store", Value::Tensor(t)) => {
            let t: TensorVal = t.clone();
            tensor::store(f, &t, &args, span)
        }
        ("get_slice", Value::TiledCopy { .. }) => copy::get_slice(&recv, &args, span),
        ("get_slice", Value::TiledMma(tiled)) => {
            arity("get_slice", &args, 1, 1, span, "tiled_mma.get_slice(thread_index)")?;
            let Value::Int(tid) = &args[0].value else {
                return Err(Diagnostic::error("`get_slice` takes the thread index", args[0].span, "not an integer"));
            };
            Ok(Value::ThrMma(Box::new((tiled.clone(), tid.clone()))))
        }
        (m, Value::ThrMma(slice)) if super::mma::THR_MMA_METHODS.contains(&m) => {
            let (tiled, tid) = (slice.0.clone(), slice.1.clone());
            super::mma::thr_mma_method(f, &tiled, &tid, m, &args, span)
        }
        ("fill", Value::Tensor(t)) => {
            let t: TensorVal = t.clone();
            tensor::fill(f, &t, &args, span)
        }
        ("retile_D" | "retile_S" | "retile", Value::ThrCopy { .. } | Value::TiledCopy { .. }) => {
            copy::retile(f, &recv, &name.name, &args, span)
        }
        ("partition_S" | "partition_D", Value::ThrCopy { .. }) => copy::partition(f, &recv, &name.name, &args, span),
        ("reduce", Value::Frag(ft, fid)) => math::reduce_method(f, ft, *fid, &args, span),
        ("allocate_tensor", Value::SmemAllocator(a)) => super::smem::allocate_tensor(f, a, &args, span),
        (m, Value::Pipeline(p)) if super::pipeline::PIPELINE_METHODS.contains(&m) => {
            super::pipeline::pipeline_method(f, p, m, &args, span)
        }
        (m, Value::PipeState(st)) if super::pipeline_state::STATE_METHODS.contains(&m) => {
            super::pipeline_state::state_method(f, st, m, &args, span)
        }
        ("to", _) => math::to(f, recv, &args, span),
        (m, v) => {
            let methods = Receiver::of(v).methods();
            let d = Diagnostic::error(
                format!("no method `{m}` on {}", crate::diag::article(&v.kind())),
                name.span,
                "unknown method",
            );
            Err(match did_you_mean(m, methods.iter().copied()) {
                Some(s) => d.with_help(format!("did you mean `{s}`?")),
                None => d.with_help(format!(
                    "the methods here are {}",
                    methods.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
                )),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> = function_names().collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "a builtin is declared twice");
    }

    /// `Frame::call` dispatches these before evaluating the arguments: the table must say so.
    #[test]
    fn place_builtins_are_the_ones_the_elaborator_dispatches() {
        let places: Vec<&str> = BUILTINS.iter().filter(|b| matches!(b.run, Run::Places)).map(|b| b.name).collect();
        let mut dispatched: Vec<&str> = vec![
            "assert",
            "tma_load",
            "tma_store",
            "tma_store_fence",
            "tma_store_arrive",
            "tma_store_wait",
            "cp_async_bulk_commit_group",
            "cp_async_bulk_wait_group",
        ];
        dispatched.extend(function_names().filter(|n| super::super::mbarrier::op_of(n).is_some()));
        dispatched.extend(super::super::cluster::BUILTINS);
        dispatched.extend(crate::kir::AtomicOp::ALL.map(|op| op.builtin()));
        let (mut a, mut b) = (places.clone(), dispatched);
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }

    /// Every method has its row in docs/language.md §8, as `x.name(...)` or as a bare `name` after
    /// its row's first form (the LSP checks the functions both ways).
    #[test]
    fn every_method_is_documented() {
        let reference = include_str!("../../../../docs/language.md");
        let builtins = reference.split("\n## 8.").nth(1).and_then(|s| s.split("\n## 9.").next()).unwrap_or("");
        let missing: Vec<&str> = METHODS
            .iter()
            .flat_map(|(_, names)| names.iter().copied())
            .filter(|m| !builtins.contains(&format!(".{m}(")) && !builtins.contains(&format!("`{m}`")))
            .collect();
        assert!(missing.is_empty(), "methods without a row in docs/language.md §8: {missing:?}");
    }

    /// The generic rows run `expr`'s operation of their name, with one reader an argument.
    #[test]
    fn algebra_rows_are_expr_operations() {
        for b in BUILTINS {
            if let Run::Algebra(readers) = b.run {
                assert!(cute_layout::expr::operation(b.name).is_some(), "`{}` is no operation of expr", b.name);
                let (min, max) = b.arity.expect("an algebra row has an arity");
                assert!(min >= 1 && max == readers.len(), "`{}` reads {} arguments", b.name, readers.len());
            }
        }
    }

    #[test]
    fn math_builtins_are_the_math_functions() {
        for fun in crate::kir::MathFn::ALL {
            assert!(builtin(fun.name()).is_some(), "{} is not in the table", fun.name());
        }
    }
}
