//! `cute-lower-to-gpu`: lowers `cute` ops inside `gpu.func` kernels to `arith`, `vector` and `llvm`.
//!
//! A `!cute.tensor` kernel argument becomes the kernel ABI: its base pointer (`!llvm.ptr<1>`, tagged
//! with the tensor's alignment), then one integer per dynamic shape entry, then one per dynamic
//! stride entry, in flattened mode order (static entries are compiled in). The integers are `i32`,
//! or `i64` in a kernel marked `cute.index_bits = 64` (an `index(i64)` kernel, whose manifest says
//! `index 64`, so the runtime passes `i64`s). Every tensor value is then
//! a pointer plus the values of its `?` entries:
//! - `cute.dyn` is one of those values;
//! - `cute.view` moves the pointer by an element offset and takes its own `?` values as operands;
//! - `cute.load`/`cute.store` access one element at an offset;
//! - `cute.load_frag`/`cute.store_frag` move a whole static-size tensor to or from a vector, in
//!   chunks of the width `cute-vectorize` recorded (`vector = N`, 1 if absent), each chunk's offset
//!   the layout's crd2idx at a static coordinate (static parts folded).
//!
//! Index arithmetic is i32, as in CuTe, or i64 in a 64-bit kernel; i32 offsets are sign-extended to
//! i64 for addressing. Shared-memory offsets are i32 in any kernel: one that meets a 64-bit offset
//! is sign-extended to it, and a 64-bit offset into swizzled shared memory is truncated (shared
//! memory is far below 2^31 elements).
//!
//! One file per family of ops (Triton's `*OpToLLVM` layout): this file holds the pass, the kernel
//! ABI and [`Kernel::lower_op`], which sends each `cute` op to its family's file.

mod async_copy;
mod atomic;
mod mbarrier;
mod memory;
mod smem;
mod swizzle;
mod tma;
mod wgmma;

use super::common::{fail, tensor_info, Reported};
use crate::ir::{self, Builder, Op, Val};
use cute_layout::{IntTuple, Layout, Swizzle};
use melior::pass::Pass;
use memory::memory_elem;

pub const NAME: &str = "cute-lower-to-gpu";
pub const SUMMARY: &str =
    "Lower cute tensor ops in gpu.func kernels to arith/vector/llvm, expanding tensor arguments into the kernel ABI";

static PASS_ID: super::PassId = super::PassId(4);

pub fn create() -> Pass {
    super::external(&PASS_ID, NAME, SUMMARY, run)
}

/// An integer known at compile time or held in an SSA value.
#[derive(Clone, Copy)]
enum Int {
    Const(i64),
    Dyn(Val),
}

/// A tensor value after lowering: its pointer, element type and layout with `?` entries bound.
struct Lowered {
    value: Val,
    /// Its first element; for a swizzled tensor, the start of its allocation (see `swizzled`).
    ptr: Val,
    /// A swizzled shared-memory tensor: the swizzle and the (unswizzled) element offset of the
    /// tensor's base from its allocation; an access at offset `o` goes to `ptr + swizzle(rel + o)`.
    swizzled: Option<(Swizzle, Int)>,
    /// The element type in memory: bools are stored as bytes (`i8`), as C++ and NumPy store them.
    elem: String,
    elem_bytes: u32,
    /// (shape, stride) per leaf, in flattened order.
    leaves: Vec<(Int, Int)>,
    /// The `?` values in ABI order (for `cute.dyn`).
    dyn_values: Vec<Val>,
    /// The layout and proven base alignment (bytes), to check recorded vector widths.
    layout: Layout,
    align: u32,
}

fn run(module: Op) -> Result<(), Reported> {
    let funcs: Vec<Op> = ir::nested_ops(module).into_iter().filter(|o| ir::op_name(*o) == "gpu.func").collect();
    for f in funcs {
        lower_func(f)?;
    }
    Ok(())
}

/// Binds a layout's leaves: static entries stay constants, `?` entries take `dyn_values` in ABI order.
fn bind_leaves(layout: &Layout, dyn_values: &[Val]) -> Option<Vec<(Int, Int)>> {
    let mut it = dyn_values.iter();
    let mut bind = |t: &IntTuple| -> Option<Vec<Int>> {
        t.leaves()
            .into_iter()
            .map(|l| match l.as_static() {
                Some(c) => Some(Int::Const(c)),
                None => it.next().map(|v| Int::Dyn(*v)),
            })
            .collect()
    };
    let shapes = bind(&layout.shape)?;
    let strides = bind(&layout.stride)?;
    Some(shapes.into_iter().zip(strides).collect())
}

/// A kernel's tensor arguments as the kernel ABI: each one's pointer and `?` values inserted as
/// block arguments after it.
struct KernelAbi {
    /// The tensor arguments, lowered.
    tensors: Vec<Lowered>,
    /// Each argument's attributes in the new signature (pointers carry their alignment).
    arg_attrs: Vec<String>,
    /// The `!cute.tensor` arguments, dropped once nothing uses them.
    old_args: Vec<Val>,
}

/// Inserts the ABI arguments of each `!cute.tensor` argument (which must be in global memory and
/// not swizzled) after it.
fn kernel_abi(func: Op) -> Result<KernelAbi, Reported> {
    let ctx = ir::context(func);
    let block = ir::entry_block(func);
    let original = ir::block_args(block);
    let mut tensors: Vec<Lowered> = Vec::new();
    let mut arg_attrs: Vec<String> = Vec::new();
    let mut old_args: Vec<Val> = Vec::new();
    let mut pos = 0usize;
    let ptr_ty = ir::parse_type(ctx, "!llvm.ptr<1>").ok_or_else(|| fail(func, "internal error: no llvm dialect"))?;
    // Read and dropped here: what it says is now in the types of the ABI values.
    let index_type = if ir::int_attr(func, "cute.index_bits") == Some(64) { "i64" } else { "i32" };
    ir::remove_attr(func, "cute.index_bits");
    let index_ty = ir::parse_type(ctx, index_type).ok_or_else(|| fail(func, "internal error: no index type"))?;
    for old in original {
        let printed = ir::type_to_string(ir::value_type(old));
        if !printed.starts_with("!cute.tensor<") {
            arg_attrs.push("{}".into());
            pos += 1;
            continue;
        }
        let (info, layout, elem_bytes) = tensor_info(func, &printed)?;
        if info.space != "gmem" {
            return Err(fail(func, &format!("kernel argument of type {printed} must be in gmem")));
        }
        let loc = unsafe { mlir_sys::mlirValueGetLocation(old) };
        let n = layout.dynamic_leaves().len();
        let ptr = ir::insert_block_arg(block, pos + 1, ptr_ty, loc);
        let dyn_values: Vec<Val> = (0..n).map(|i| ir::insert_block_arg(block, pos + 2 + i, index_ty, loc)).collect();
        arg_attrs.push(format!("{{llvm.align = {} : i64}}", info.align));
        arg_attrs.extend((0..n).map(|_| "{}".to_string()));
        let leaves = bind_leaves(&layout, &dyn_values).ok_or_else(|| fail(func, "internal error: dynamic count"))?;
        if info.swizzle.is_some() {
            return Err(fail(
                func,
                &format!("kernel argument of type {printed} cannot be swizzled (only shared memory is)"),
            ));
        }
        tensors.push(Lowered {
            value: old,
            ptr,
            swizzled: None,
            elem: memory_elem(&info.elem),
            elem_bytes,
            leaves,
            dyn_values,
            layout,
            align: info.align,
        });
        old_args.push(old);
        pos += 2 + n;
    }
    Ok(KernelAbi { tensors, arg_attrs, old_args })
}

/// A kernel while its `cute` ops are lowered.
struct Kernel {
    func: Op,
    /// The tensor values lowered so far (arguments, allocations, views).
    tensors: Vec<Lowered>,
    smem: smem::Placement,
    /// The register tensors wgmma instructions accumulate in or read A from (RS atoms): fenced
    /// around wgmma.fence and wgmma.wait_group (see `register_fence`).
    acc_allocs: Vec<Op>,
    /// Their registers as allocated: pointer, element count and element type.
    acc_roots: Vec<(Val, i64, String)>,
}

fn lower_func(func: Op) -> Result<(), Reported> {
    let abi = kernel_abi(func)?;
    let smem = smem::Placement::take(func);
    let acc_allocs = wgmma::wgmma_accumulators(func);
    let mut kernel = Kernel { func, tensors: abi.tensors, smem, acc_allocs, acc_roots: Vec::new() };
    let mut dead: Vec<Op> = Vec::new();
    for op in ir::nested_ops(func) {
        let name = ir::op_name(op);
        if !name.starts_with("cute.") {
            continue;
        }
        kernel.lower_op(op, &name)?;
        dead.push(op);
    }
    // Uses come after definitions, so erasing in reverse order never leaves a dangling use.
    for op in dead.into_iter().rev() {
        ir::erase(op);
    }
    restate_signature(func, &abi.old_args, &abi.arg_attrs)
}

impl Kernel {
    /// Lowers one `cute` op (erased by the caller).
    fn lower_op(&mut self, op: Op, name: &str) -> Result<(), Reported> {
        match name {
            "cute.launch_smem" => self.launch_smem(op),
            "cute.alloc" => self.alloc(op),
            "cute.warpgroup_fence" => {
                self.warpgroup_fence(op);
                Ok(())
            }
            "cute.warpgroup_wait_group" => self.warpgroup_wait_group(op),
            "cute.mbarrier" => {
                let Some(t) = operand_view(&self.tensors, op, 0) else {
                    return Err(fail(
                        op,
                        &format!("{NAME}: the barrier tensor of `cute.mbarrier` is not a view or an allocation"),
                    ));
                };
                mbarrier::mbarrier(&Builder::before(op), op, t)
            }
            "cute.atomic" | "cute.atomic_add_frag" => {
                let i = if name == "cute.atomic" { 0 } else { 1 };
                let Some(t) = operand_view(&self.tensors, op, i) else {
                    return Err(fail(op, &format!("{NAME}: the tensor of `{name}` is not a view or an allocation")));
                };
                let b = Builder::before(op);
                if name == "cute.atomic" {
                    atomic::atomic(&b, op, t)
                } else {
                    atomic::atomic_add_frag(&b, op, t)
                }
            }
            "cute.dsmem_load" | "cute.dsmem_store" => {
                let Some(t) = operand_view(&self.tensors, op, 0) else {
                    return Err(fail(op, &format!("{NAME}: the tensor of `{name}` is not a view or an allocation")));
                };
                memory::dsmem(&Builder::before(op), op, t);
                Ok(())
            }
            "cute.tma_load" => {
                let (Some(sm), Some(bar)) = (operand_view(&self.tensors, op, 0), operand_view(&self.tensors, op, 1))
                else {
                    return Err(fail(
                        op,
                        &format!("{NAME}: the tensors of `cute.tma_load` are not views or allocations"),
                    ));
                };
                tma::tma_load(&Builder::before(op), op, sm, bar);
                Ok(())
            }
            "cute.tma_store" => {
                let Some(sm) = operand_view(&self.tensors, op, 0) else {
                    return Err(fail(
                        op,
                        &format!("{NAME}: the source of `cute.tma_store` is not a view or an allocation"),
                    ));
                };
                tma::tma_store(&Builder::before(op), op, sm);
                Ok(())
            }
            "cute.wgmma" => self.wgmma(op),
            "cute.copy" => self.copy(op),
            _ => self.tensor_op(op, name),
        }
    }
}

/// The tensor arguments are now unused: drops them, then restates the function type and the
/// arguments' attributes.
fn restate_signature(func: Op, old_args: &[Val], arg_attrs: &[String]) -> Result<(), Reported> {
    let ctx = ir::context(func);
    let block = ir::entry_block(func);
    for old in old_args.iter().rev() {
        let args = ir::block_args(block);
        if let Some(i) = args.iter().position(|a| ir::same_value(*a, *old)) {
            ir::erase_block_arg(block, i);
        }
    }
    let inputs: Vec<_> = ir::block_args(block).into_iter().map(ir::value_type).collect();
    ir::set_attr(func, "function_type", ir::function_type_attr(ctx, &inputs));
    let attrs = format!("[{}]", arg_attrs.join(", "));
    let attr = ir::parse_attr(ctx, &attrs).ok_or_else(|| fail(func, "internal error: bad argument attributes"))?;
    ir::set_attr(func, "arg_attrs", attr);
    Ok(())
}

fn materialize(b: &Builder, v: Int) -> Val {
    match v {
        Int::Const(c) => b.const_int(c, "i32"),
        Int::Dyn(v) => v,
    }
}

/// The integer type of an SSA value (`i32` or `i64`).
fn type_of(v: Val) -> String {
    ir::type_to_string(ir::value_type(v))
}

/// A value as an `i32`: a 64-bit kernel's offset into shared memory truncated.
fn materialize_i32(b: &Builder, v: Int) -> Val {
    let x = materialize(b, v);
    if type_of(x) == "i64" {
        b.cast("arith.trunci", x, "i32")
    } else {
        x
    }
}

/// Two index integers as operands of one op, in one type: `i64` if either is (a 64-bit kernel's
/// offset meeting a shared-memory offset, which is sign-extended), else `i32`; a constant takes
/// the other operand's type.
fn same_type(b: &Builder, x: Int, y: Int) -> (Val, Val) {
    let wide = [x, y].iter().any(|i| matches!(i, Int::Dyn(v) if type_of(*v) == "i64"));
    let ty = if wide { "i64" } else { "i32" };
    let cast = |i: Int| match i {
        Int::Const(c) => b.const_int(c, ty),
        Int::Dyn(v) if wide && type_of(v) != "i64" => b.cast("arith.extsi", v, "i64"),
        Int::Dyn(v) => v,
    };
    (cast(x), cast(y))
}

fn mul(b: &Builder, x: Int, y: Int) -> Int {
    match (x, y) {
        (Int::Const(p), Int::Const(q)) => Int::Const(p.wrapping_mul(q)),
        (Int::Const(1), v) | (v, Int::Const(1)) => v,
        (Int::Const(0), _) | (_, Int::Const(0)) => Int::Const(0),
        _ => {
            let (x, y) = same_type(b, x, y);
            Int::Dyn(b.binary("arith.muli", x, y))
        }
    }
}

fn add(b: &Builder, x: Int, y: Int) -> Int {
    match (x, y) {
        (Int::Const(p), Int::Const(q)) => Int::Const(p.wrapping_add(q)),
        (Int::Const(0), v) | (v, Int::Const(0)) => v,
        _ => {
            let (x, y) = same_type(b, x, y);
            Int::Dyn(b.binary("arith.addi", x, y))
        }
    }
}

/// The lowered view or allocation that operand `i` of `op` is, if it is one.
fn operand_view(tensors: &[Lowered], op: Op, i: usize) -> Option<&Lowered> {
    tensors.iter().find(|t| ir::same_value(t.value, ir::operand(op, i)))
}
