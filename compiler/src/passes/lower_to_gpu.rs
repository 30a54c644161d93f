//! `cute-lower-to-gpu`: lowers `cute` ops inside `gpu.func` kernels to `arith`, `vector` and `llvm`.
//!
//! A `!cute.tensor` kernel argument becomes the kernel ABI: its base pointer (`!llvm.ptr<1>`, tagged
//! with the tensor's alignment), then one `i32` per dynamic shape entry, then one `i32` per dynamic
//! stride entry, in flattened mode order (static entries are compiled in). Every tensor value is then
//! a pointer plus the values of its `?` entries:
//! - `cute.dyn` is one of those values;
//! - `cute.view` moves the pointer by an element offset and takes its own `?` values as operands;
//! - `cute.load`/`cute.store` access one element at an offset;
//! - `cute.load_frag`/`cute.store_frag` move a whole static-size tensor to or from a vector, in
//!   chunks of the width `cute-vectorize` recorded (`vector = N`, 1 if absent), each chunk's offset
//!   the layout's crd2idx at a static coordinate (static parts folded).
//! Index arithmetic is i32, as in CuTe; offsets are sign-extended to i64 for addressing.

use super::common::{fail, tensor_info, vector_width, Reported};
use super::known_bits::{self, Bits, KnownBits};
use crate::ir::{self, Builder, Op, Val};
use cute_layout::{IntTuple, Layout, Swizzle};
use melior::pass::Pass;

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

/// The type an element has in memory: `i1` values are stored one per byte, and 8-bit floats as
/// bytes (LLVM has no such types: their values are bit-cast at loads and stores).
fn memory_elem(elem: &str) -> String {
    if matches!(elem, "i1" | "f8E4M3FN" | "f8E5M2") {
        "i8".to_string()
    } else {
        elem.to_string()
    }
}

/// A value (scalar or vector) in its memory type `ty` before a store: bools widened to bytes,
/// 8-bit floats bit-cast to bytes.
fn to_memory(b: &Builder, v: Val, ty: &str) -> Val {
    let printed = ir::type_to_string(ir::value_type(v));
    if printed == "i1" || printed.ends_with("xi1>") {
        return b.cast("arith.extui", v, ty);
    }
    if printed.contains("f8E") {
        return b.cast("arith.bitcast", v, ty);
    }
    v
}

/// A loaded value (scalar or vector) in the type `want` the op gives: bytes narrowed back to bool
/// or bit-cast to 8-bit floats.
fn from_memory(b: &Builder, v: Val, want: &str) -> Val {
    let printed = ir::type_to_string(ir::value_type(v));
    if printed == want {
        return v;
    }
    let op = if want == "i1" || want.ends_with("xi1>") { "arith.trunci" } else { "arith.bitcast" };
    b.cast(op, v, want)
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

fn lower_func(func: Op) -> Result<(), Reported> {
    let ctx = ir::context(func);
    let block = ir::entry_block(func);
    let original = ir::block_args(block);
    let mut tensors: Vec<Lowered> = Vec::new();
    let mut arg_attrs: Vec<String> = Vec::new();
    let mut old_args: Vec<Val> = Vec::new();
    let mut pos = 0usize;
    let ptr_ty = ir::parse_type(ctx, "!llvm.ptr<1>").ok_or_else(|| fail(func, "internal error: no llvm dialect"))?;
    let i32_ty = ir::parse_type(ctx, "i32").ok_or_else(|| fail(func, "internal error: no i32"))?;
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
        let dyn_values: Vec<Val> = (0..n).map(|i| ir::insert_block_arg(block, pos + 2 + i, i32_ty, loc)).collect();
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

    let mut dead: Vec<Op> = Vec::new();
    let mut smem_count = 0usize;
    // With `cute.dynamic_smem = N`, shared allocations are placed one after another (each
    // `kir::SMEM_ALIGN`-aligned) in the launch's dynamic shared memory, which the front end sized as
    // N bytes.
    let dynamic_smem = ir::int_attr(func, "cute.dynamic_smem");
    ir::remove_attr(func, "cute.dynamic_smem");
    let mut smem_offset = 0i64;
    // The register tensors wgmma instructions accumulate in or read A from (RS atoms): fenced
    // around wgmma.fence and wgmma.wait_group (see `register_fence`).
    let acc_allocs = wgmma_accumulators(func);
    let mut acc_roots: Vec<(Val, i64, String)> = Vec::new();
    for op in ir::nested_ops(func) {
        let name = ir::op_name(op);
        if !name.starts_with("cute.") {
            continue;
        }
        if name == "cute.launch_smem" {
            // The launch's own region starts after what the compiler placed in dynamic shared memory.
            let result = ir::result(op, 0);
            let (info, layout, elem_bytes) = tensor_info(op, &ir::type_to_string(ir::value_type(result)))?;
            let leaves =
                bind_leaves(&layout, &[]).ok_or_else(|| fail(op, "`cute.launch_smem` needs a static layout"))?;
            let offset =
                ir::int_attr(op, "offset").ok_or_else(|| fail(op, "`cute.launch_smem` needs an `offset` attribute"))?;
            let ptr = dynamic_shared(func, op, dynamic_smem.unwrap_or(0) + offset);
            let swizzled = info.swizzle.map(|sw| (sw, Int::Const(0)));
            tensors.push(Lowered {
                value: result,
                ptr,
                swizzled,
                elem: memory_elem(&info.elem),
                elem_bytes,
                leaves,
                dyn_values: Vec::new(),
                layout,
                align: info.align,
            });
            dead.push(op);
            continue;
        }
        if name == "cute.alloc" {
            let result = ir::result(op, 0);
            let (info, layout, elem_bytes) = tensor_info(op, &ir::type_to_string(ir::value_type(result)))?;
            let cosize = layout
                .cosize()
                .ok()
                .and_then(|c| c.as_static())
                .ok_or_else(|| fail(op, "`cute.alloc` needs a static layout"))?;
            let leaves = bind_leaves(&layout, &[]).ok_or_else(|| fail(op, "`cute.alloc` needs a static layout"))?;
            if info.swizzle.is_some() && info.space != "smem" {
                return Err(fail(op, &format!("only shared memory can be swizzled, not {}", info.space)));
            }
            // The bytes the allocation takes (whole swizzle periods), in elements.
            let bytes = cute_layout::atom::smem::smem_bytes(cosize, elem_bytes, info.swizzle) as i64;
            // Swizzled allocations start at a multiple of their swizzle's period (up to 1024 bytes).
            let align = cute_layout::atom::smem::smem_align(info.swizzle, elem_bytes) as i64;
            let ptr = match info.space.as_str() {
                "rmem" => alloca(op, &memory_elem(&info.elem), cosize),
                "smem" => match dynamic_smem {
                    Some(total) => {
                        let at = (smem_offset + align - 1) / align * align;
                        smem_offset = at + bytes;
                        if smem_offset > total {
                            return Err(fail(op, &format!("shared allocations need {smem_offset} bytes but the kernel's dynamic shared memory is {total}")));
                        }
                        dynamic_shared(func, op, at)
                    }
                    None => {
                        smem_count += 1;
                        shared_global(func, op, &memory_elem(&info.elem), bytes / elem_bytes as i64, smem_count, align)
                    }
                },
                other => return Err(fail(op, &format!("cannot allocate {other} memory in a kernel"))),
            };
            if acc_allocs.iter().any(|a| a.ptr == op.ptr) {
                acc_roots.push((ptr, cosize, info.elem.clone()));
            }
            let swizzled = info.swizzle.map(|sw| (sw, Int::Const(0)));
            tensors.push(Lowered {
                value: result,
                ptr,
                swizzled,
                elem: memory_elem(&info.elem),
                elem_bytes,
                leaves,
                dyn_values: Vec::new(),
                layout,
                align: info.align,
            });
            dead.push(op);
            continue;
        }
        if name == "cute.warpgroup_fence" || name == "cute.warpgroup_wait_group" {
            let b = Builder::before(op);
            if name == "cute.warpgroup_fence" {
                // The accumulators' (and register A fragments') values are in their registers
                // before the fence.
                for root in &acc_roots {
                    register_fence(&b, root);
                }
                b.create("nvvm.wgmma.fence.aligned", &[], &[], &[]);
            } else {
                let n = ir::int_attr(op, "n")
                    .ok_or_else(|| fail(op, "`cute.warpgroup_wait_group` needs an integer `n`"))?;
                b.create("nvvm.wgmma.wait.group.sync.aligned", &[], &[], &[("group", b.attr(&format!("{n} : i64")))]);
                // No read of an accumulator, nor a write of an A fragment, moves above the wait.
                for root in &acc_roots {
                    register_fence(&b, root);
                }
            }
            dead.push(op);
            continue;
        }
        if name == "cute.mbarrier" {
            let Some(t) = operand_view(&tensors, op, 0) else {
                return Err(fail(
                    op,
                    &format!("{NAME}: the barrier tensor of `cute.mbarrier` is not a view or an allocation"),
                ));
            };
            mbarrier(&Builder::before(op), op, t)?;
            dead.push(op);
            continue;
        }
        if name == "cute.dsmem_load" || name == "cute.dsmem_store" {
            let Some(t) = operand_view(&tensors, op, 0) else {
                return Err(fail(op, &format!("{NAME}: the tensor of `{name}` is not a view or an allocation")));
            };
            dsmem(&Builder::before(op), op, t);
            dead.push(op);
            continue;
        }
        if name == "cute.tma_load" {
            let (Some(sm), Some(bar)) = (operand_view(&tensors, op, 0), operand_view(&tensors, op, 1)) else {
                return Err(fail(op, &format!("{NAME}: the tensors of `cute.tma_load` are not views or allocations")));
            };
            tma_load(&Builder::before(op), op, sm, bar);
            dead.push(op);
            continue;
        }
        if name == "cute.tma_store" {
            let Some(sm) = operand_view(&tensors, op, 0) else {
                return Err(fail(
                    op,
                    &format!("{NAME}: the source of `cute.tma_store` is not a view or an allocation"),
                ));
            };
            tma_store(&Builder::before(op), op, sm);
            dead.push(op);
            continue;
        }
        if name == "cute.wgmma" {
            let find = |v: Val| tensors.iter().position(|t| ir::same_value(t.value, v));
            // An RS atom's A is a register vector, not a tensor.
            let a_regs = ir::type_to_string(ir::value_type(ir::operand(op, 0))).starts_with("vector<");
            let a = find(ir::operand(op, 0));
            let (Some(bt), true) = (find(ir::operand(op, 1)), a_regs || a.is_some()) else {
                return Err(fail(
                    op,
                    &format!("{NAME}: the tensor operands of `cute.wgmma` are not views or allocations"),
                ));
            };
            let b = Builder::before(op);
            wgmma(&b, op, a.map(|i| &tensors[i]), &tensors[bt])?;
            dead.push(op);
            continue;
        }
        if name == "cute.copy" {
            let find = |v: Val| tensors.iter().position(|t| ir::same_value(t.value, v));
            let (Some(s), Some(d)) = (find(ir::operand(op, 0)), find(ir::operand(op, 1))) else {
                return Err(fail(
                    op,
                    &format!(
                        "{NAME}: the tensor operands of `cute.copy` are not kernel arguments, views or allocations"
                    ),
                ));
            };
            let b = Builder::before(op);
            let (n_src, w_src) = frag_shape(op, &tensors[s], "src_vector")?;
            let (n_dst, w_dst) = frag_shape(op, &tensors[d], "dst_vector")?;
            let ldmatrix_values =
                ir::string_attr(op, "op").and_then(|n| super::common::copy_op(&n)).and_then(|c| c.ldmatrix_values());
            if n_src != n_dst && ldmatrix_values != Some(n_dst as u32) {
                return Err(fail(op, &format!("`cute.copy` of {n_src} elements into {n_dst}")));
            }
            let pred = (ir::operand_count(op) > 2).then(|| ir::operand(op, 2));
            if pred.is_some() && !ir::string_attr(op, "op").is_some_and(|n| n.starts_with("cp.async")) {
                return Err(fail(
                    op,
                    "only a `cp.async` copy takes a predicate (it zero-fills); predicate other copies with `scf.if`",
                ));
            }
            if let Some(name) = ir::string_attr(op, "op").filter(|n| n.starts_with("ldmatrix")) {
                ldmatrix(&b, op, &name, &tensors[s], &tensors[d], n_src, w_src)?;
                dead.push(op);
                continue;
            }
            if let Some(name) = ir::string_attr(op, "op") {
                cp_async(&b, op, &name, &tensors[s], &tensors[d], n_src, w_src.min(w_dst), pred)?;
                dead.push(op);
                continue;
            }
            // Through registers, in chunks of the recorded width on both sides.
            let v = load_frag_memory(&b, op, &tensors[s], "src_vector")?;
            store_frag(&b, op, &tensors[d], v, "dst_vector")?;
            dead.push(op);
            continue;
        }
        let tensor_index = match name.as_str() {
            "cute.dyn" | "cute.view" | "cute.recast" | "cute.load" | "cute.load_frag" => 0,
            "cute.store" | "cute.store_frag" => 1,
            other if super::algebra::is_foldable(other) || super::algebra::is_element_access(other) => {
                return Err(fail(
                    op,
                    &format!(
                        "{NAME}: `{other}` is a CuTe operation; run cute-canonicalize first to fold it into memory ops"
                    ),
                ))
            }
            other => return Err(fail(op, &format!("{NAME}: no lowering for `{other}`"))),
        };
        let operand = ir::operand(op, tensor_index);
        let Some(t) = tensors.iter().position(|t| ir::same_value(t.value, operand)) else {
            return Err(fail(
                op,
                &format!("{NAME}: the tensor operand of `{name}` is not a kernel argument or a view"),
            ));
        };
        let b = Builder::before(op);
        match name.as_str() {
            "cute.dyn" => {
                let index = ir::int_attr(op, "index")
                    .ok_or_else(|| fail(op, "`cute.dyn` needs an integer `index` attribute"))?;
                let v = *tensors[t]
                    .dyn_values
                    .get(index as usize)
                    .ok_or_else(|| fail(op, &format!("`cute.dyn` index {index} is out of range")))?;
                ir::replace_uses(op, &[v]);
            }
            "cute.view" => {
                let result = ir::result(op, 0);
                let (info, layout, elem_bytes) = tensor_info(op, &ir::type_to_string(ir::value_type(result)))?;
                let dyn_values: Vec<Val> = (2..ir::operand_count(op)).map(|i| ir::operand(op, i)).collect();
                if dyn_values.len() != layout.dynamic_leaves().len() {
                    return Err(fail(
                        op,
                        &format!(
                            "`cute.view` has {} dynamic values but its layout has {} `?` entries",
                            dyn_values.len(),
                            layout.dynamic_leaves().len()
                        ),
                    ));
                }
                let leaves =
                    bind_leaves(&layout, &dyn_values).ok_or_else(|| fail(op, "internal error: dynamic count"))?;
                let src = &tensors[t];
                let offset = Int::Dyn(ir::operand(op, 1));
                let (ptr, swizzled) = match (src.swizzled, info.swizzle) {
                    // A view of a swizzled tensor moves its unswizzled base within the allocation.
                    // (Or the allocation laid out again with another swizzle, `make_tensor`.)
                    (Some((_, rel)), Some(want)) => (src.ptr, Some((want, add(&b, rel, offset)))),
                    // The swizzled memory laid out again without a swizzle (`make_tensor`).
                    (Some((_, rel)), None) => (plain_gep(&b, src, add(&b, rel, offset)), None),
                    // A swizzle attached to an allocation (the front end allows no other base; after
                    // cute-canonicalize merged views, the offset is the view's from the allocation).
                    (None, Some(sw)) => (src.ptr, Some((sw, offset))),
                    (None, None) => (gep(&b, src, offset), None),
                };
                let elem = src.elem.clone();
                tensors.push(Lowered {
                    value: result,
                    ptr,
                    swizzled,
                    elem,
                    elem_bytes,
                    leaves,
                    dyn_values,
                    layout,
                    align: info.align,
                });
            }
            "cute.recast" => {
                // The same base, another element type: its `?` values are its own operands.
                let result = ir::result(op, 0);
                let (info, layout, elem_bytes) = tensor_info(op, &ir::type_to_string(ir::value_type(result)))?;
                let dyn_values: Vec<Val> = (1..ir::operand_count(op)).map(|i| ir::operand(op, i)).collect();
                let leaves = bind_leaves(&layout, &dyn_values)
                    .ok_or_else(|| fail(op, "`cute.recast`: its dynamic values do not match its layout"))?;
                let src = &tensors[t];
                if src.swizzled.is_some() || info.swizzle.is_some() {
                    return Err(fail(op, "`cute.recast` of a swizzled tensor"));
                }
                let ptr = src.ptr;
                tensors.push(Lowered {
                    value: result,
                    ptr,
                    swizzled: None,
                    elem: memory_elem(&info.elem),
                    elem_bytes,
                    leaves,
                    dyn_values,
                    layout,
                    align: info.align,
                });
            }
            "cute.load" => {
                let src = &tensors[t];
                let p = gep(&b, src, Int::Dyn(ir::operand(op, 1)));
                let elem_ty = b.ty(&src.elem);
                let load = b.create(
                    "llvm.load",
                    &[p],
                    &[elem_ty],
                    &[("alignment", b.attr(&format!("{} : i64", src.elem_bytes))), ("ordering", b.attr("0 : i64"))],
                );
                let v = from_memory(&b, ir::result(load, 0), &ir::type_to_string(ir::value_type(ir::result(op, 0))));
                ir::replace_uses(op, &[v]);
            }
            "cute.store" => {
                let src = &tensors[t];
                let p = gep(&b, src, Int::Dyn(ir::operand(op, 2)));
                let value = to_memory(&b, ir::operand(op, 0), &src.elem);
                b.create(
                    "llvm.store",
                    &[value, p],
                    &[],
                    &[("alignment", b.attr(&format!("{} : i64", src.elem_bytes))), ("ordering", b.attr("0 : i64"))],
                );
            }
            "cute.load_frag" => {
                let v = load_frag(&b, op, &tensors[t])?;
                ir::replace_uses(op, &[v]);
            }
            _ => store_frag(&b, op, &tensors[t], ir::operand(op, 0), "vector")?,
        }
        dead.push(op);
    }
    // Uses come after definitions, so erasing in reverse order never leaves a dangling use.
    for op in dead.into_iter().rev() {
        ir::erase(op);
    }

    // The tensor arguments are now unused: drop them, then restate the function type.
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

fn mul(b: &Builder, x: Int, y: Int) -> Int {
    match (x, y) {
        (Int::Const(p), Int::Const(q)) => Int::Const(p.wrapping_mul(q)),
        (Int::Const(1), v) | (v, Int::Const(1)) => v,
        (Int::Const(0), _) | (_, Int::Const(0)) => Int::Const(0),
        _ => Int::Dyn(b.binary("arith.muli", materialize(b, x), materialize(b, y))),
    }
}

fn add(b: &Builder, x: Int, y: Int) -> Int {
    match (x, y) {
        (Int::Const(p), Int::Const(q)) => Int::Const(p.wrapping_add(q)),
        (Int::Const(0), v) | (v, Int::Const(0)) => v,
        _ => Int::Dyn(b.binary("arith.addi", materialize(b, x), materialize(b, y))),
    }
}

/// crd2idx of a static linear coordinate: colexicographic over the leaves (CuTe's order). The
/// coordinate is static, so only the multiplications by dynamic strides remain.
fn static_offset(b: &Builder, index: i64, leaves: &[(Int, Int)]) -> Result<Int, ()> {
    let mut offset = Int::Const(0);
    let mut rest = index;
    for (i, (shape, stride)) in leaves.iter().enumerate() {
        let c = if i + 1 == leaves.len() {
            rest
        } else {
            match shape {
                Int::Const(s) if *s > 0 => {
                    let c = rest % s;
                    rest /= s;
                    c
                }
                // A fragment has a static size, so its shape entries are static.
                _ => return Err(()),
            }
        };
        offset = add(b, offset, mul(b, Int::Const(c), *stride));
    }
    Ok(offset)
}

/// The address of the element `offset` elements from the tensor's base, through its swizzle.
fn gep(b: &Builder, t: &Lowered, offset: Int) -> Val {
    match t.swizzled {
        Some((sw, rel)) => {
            let at = add(b, rel, offset);
            let physical = apply_swizzle(b, sw, at);
            plain_gep(b, t, physical)
        }
        None => plain_gep(b, t, offset),
    }
}

/// CuTe's `Swizzle::apply` on an i32 offset: `o ^ ((o & yyy_mask) >> S)`, with the work that is
/// the same for many accesses kept apart so the backend computes it once.
///
/// An access's offset is a sum: a per-thread part, loop-dependent parts (a pipeline stage, a
/// k-tile) and a constant (the element's position in its fragment). The swizzle maps every
/// aligned block of its period onto itself, so terms that are multiples of the period pass
/// through it unchanged: `swizzle(x + h) = swizzle(x) + h`. And it is linear over XOR, so when the
/// constant has no bit the remaining terms can set (known bits), `x + c = x ^ c` and
/// `swizzle(x + c) = swizzle(x) ^ swizzle(c)`. Every access of a thread then shares `swizzle(x)`
/// and differs by one XOR with a constant and an add (often folded into the address).
fn apply_swizzle(b: &Builder, sw: Swizzle, offset: Int) -> Int {
    let v = match offset {
        Int::Const(o) => return Int::Const(sw.apply(o)),
        Int::Dyn(v) => v,
    };
    let period = sw.size();
    let (terms, constant) = known_bits::sum_terms(v);
    let mut known = KnownBits::default();
    let (high, low): (Vec<Val>, Vec<Val>) =
        terms.into_iter().partition(|t| known.of(*t).multiple_of_pow2(period.trailing_zeros()));
    let c_lo = constant.rem_euclid(period);
    // Index arithmetic is i32 and wraps: the period divides 2^32, so wrapping keeps the split.
    let c_hi = i64::from((constant - c_lo) as i32);
    let low_bits = low.iter().fold(Bits::constant(0), |acc, t| acc.add(&known.of(*t)));
    let no_carry = low_bits.disjoint(&Bits::constant(c_lo));
    if high.is_empty() && c_hi == 0 && (c_lo == 0 || !no_carry) {
        // Nothing to keep apart.
        return swizzle_value(b, sw, offset);
    }
    let low_sum = low.iter().fold(Int::Const(0), |acc, t| add(b, acc, Int::Dyn(*t)));
    let swizzled_low = if no_carry {
        xor(b, swizzle_value(b, sw, low_sum), sw.apply(c_lo))
    } else {
        swizzle_value(b, sw, add(b, low_sum, Int::Const(c_lo)))
    };
    let high_sum = high.iter().fold(Int::Const(0), |acc, t| add(b, acc, Int::Dyn(*t)));
    add(b, add(b, swizzled_low, high_sum), Int::Const(c_hi))
}

/// The swizzle itself on a value: `o ^ ((o & yyy_mask) >> S)`.
fn swizzle_value(b: &Builder, sw: Swizzle, offset: Int) -> Int {
    match offset {
        Int::Const(o) => Int::Const(sw.apply(o)),
        Int::Dyn(v) => {
            let mask = b.const_int(sw.yyy_mask(), "i32");
            let picked = b.binary("arith.andi", v, mask);
            let by = b.const_int(i64::from(sw.shift.unsigned_abs()), "i32");
            let moved = b.binary(if sw.shift >= 0 { "arith.shrui" } else { "arith.shli" }, picked, by);
            Int::Dyn(b.binary("arith.xori", v, moved))
        }
    }
}

fn xor(b: &Builder, x: Int, k: i64) -> Int {
    match x {
        _ if k == 0 => x,
        Int::Const(c) => Int::Const(c ^ k),
        Int::Dyn(v) => Int::Dyn(b.binary("arith.xori", v, b.const_int(k, "i32"))),
    }
}

/// `ptr + offset` elements, with no swizzle.
fn plain_gep(b: &Builder, t: &Lowered, offset: Int) -> Val {
    if let Int::Const(0) = offset {
        return t.ptr;
    }
    let off32 = materialize(b, offset);
    let off64 = b.cast("arith.extsi", off32, "i64");
    let ptr_ty = ir::value_type(t.ptr);
    let gep = b.create(
        "llvm.getelementptr",
        &[t.ptr, off64],
        &[ptr_ty],
        &[("elem_type", b.attr(&t.elem)), ("rawConstantIndices", b.attr("array<i32: -2147483648>"))],
    );
    ir::result(gep, 0)
}

/// The fragment length and the chunk width recorded by `cute-vectorize` (1 when absent).
fn frag_shape(op: Op, t: &Lowered, width_attr: &str) -> Result<(usize, usize), Reported> {
    let mut n = 1i64;
    for (s, _) in &t.leaves {
        match s {
            Int::Const(c) => n *= c,
            Int::Dyn(_) => return Err(fail(op, "a fragment needs a tensor of static size")),
        }
    }
    let width = ir::int_attr(op, width_attr).unwrap_or(1).max(1) as usize;
    if n as usize % width != 0 {
        return Err(fail(op, &format!("vector width {width} does not divide the fragment's {n} elements")));
    }
    // A recorded width is a claim about contiguity and alignment: never trust more than is proven.
    let proven =
        vector_width(&t.layout, t.align, t.elem_bytes).map_err(|e| fail(op, &format!("{NAME}: {e}")))? as usize;
    if width > proven {
        return Err(fail(
            op,
            &format!(
                "vector width {width} is not proven for layout {} with {}-byte alignment (at most {proven})",
                t.layout, t.align
            ),
        ));
    }
    Ok((n as usize, width))
}

fn load_frag(b: &Builder, op: Op, t: &Lowered) -> Result<Val, Reported> {
    let v = load_frag_memory(b, op, t, "vector")?;
    Ok(from_memory(b, v, &ir::type_to_string(ir::value_type(ir::result(op, 0)))))
}

fn load_frag_memory(b: &Builder, op: Op, t: &Lowered, width_attr: &str) -> Result<Val, Reported> {
    let (n, w) = frag_shape(op, t, width_attr)?;
    let vec_ty = format!("vector<{n}x{}>", t.elem);
    let chunk_ty = format!("vector<{w}x{}>", t.elem);
    let zero = if t.elem.starts_with('f') || t.elem == "bf16" { "0.000000e+00" } else { "0" };
    let mut acc = ir::result(
        b.create("arith.constant", &[], &[b.ty(&vec_ty)], &[("value", b.attr(&format!("dense<{zero}> : {vec_ty}")))]),
        0,
    );
    let align = (w as u32 * t.elem_bytes).max(t.elem_bytes);
    for chunk in 0..n / w {
        let off = static_offset(b, (chunk * w) as i64, &t.leaves)
            .map_err(|_| fail(op, "a fragment needs a tensor of static shape"))?;
        let p = gep(b, t, off);
        let v = b.create(
            "llvm.load",
            &[p],
            &[b.ty(&chunk_ty)],
            &[("alignment", b.attr(&format!("{align} : i64"))), ("ordering", b.attr("0 : i64"))],
        );
        if w == n {
            return Ok(ir::result(v, 0));
        }
        let ins = b.create(
            "vector.insert_strided_slice",
            &[ir::result(v, 0), acc],
            &[b.ty(&vec_ty)],
            &[("offsets", b.attr(&format!("[{}]", chunk * w))), ("strides", b.attr("[1]"))],
        );
        acc = ir::result(ins, 0);
    }
    Ok(acc)
}

fn store_frag(b: &Builder, op: Op, t: &Lowered, value: Val, width_attr: &str) -> Result<(), Reported> {
    let (n, w) = frag_shape(op, t, width_attr)?;
    let value = to_memory(b, value, &format!("vector<{n}x{}>", t.elem));
    let chunk_ty = format!("vector<{w}x{}>", t.elem);
    let align = (w as u32 * t.elem_bytes).max(t.elem_bytes);
    for chunk in 0..n / w {
        let off = static_offset(b, (chunk * w) as i64, &t.leaves)
            .map_err(|_| fail(op, "a fragment needs a tensor of static shape"))?;
        let p = gep(b, t, off);
        let part = if w == n {
            value
        } else {
            let ex = b.create(
                "vector.extract_strided_slice",
                &[value],
                &[b.ty(&chunk_ty)],
                &[
                    ("offsets", b.attr(&format!("[{}]", chunk * w))),
                    ("sizes", b.attr(&format!("[{w}]"))),
                    ("strides", b.attr("[1]")),
                ],
            );
            ir::result(ex, 0)
        };
        b.create(
            "llvm.store",
            &[part, p],
            &[],
            &[("alignment", b.attr(&format!("{align} : i64"))), ("ordering", b.attr("0 : i64"))],
        );
    }
    Ok(())
}

/// `cp.async` of a whole tensor from global to shared memory: one instruction per chunk of `w`
/// elements, which must be the atom's width exactly (a narrower proven width is an error, never a
/// silently different instruction). Unpredicated, NVVM's op. With a predicate, inline PTX with the
/// `ignore-src` predicate operand (PTX 7.5) set where the predicate is false: nothing is read and
/// the chunk is zero-filled. NVVM's op has only the `src-size` form of that, a `selp` of 16 or 0
/// bytes which ptxas turns back into a predicate (a SEL and an ISETP per chunk: 24 of the 280
/// instructions of gemm_sm80's k-tile loop); the predicate goes to the LDGSTS as it is.
#[allow(clippy::too_many_arguments)]
fn cp_async(
    b: &Builder,
    op: Op,
    name: &str,
    src: &Lowered,
    dst: &Lowered,
    n: usize,
    w: usize,
    pred: Option<Val>,
) -> Result<(), Reported> {
    let copy = super::common::copy_op(name)
        .filter(|c| !c.is_ldmatrix())
        .ok_or_else(|| fail(op, &format!("{NAME}: unknown copy operation \"{name}\"")))?;
    let want = ir::int_attr(op, "max_vector").unwrap_or(0) as usize;
    let bytes = (w as u32) * src.elem_bytes;
    if w != want || !copy.bits().contains(&(bytes * 8)) {
        return Err(fail(op, &format!("{name} of {} bytes needs {want}-element chunks contiguous and aligned on both sides, but the layouts prove only {w} ({} with {}-byte alignment, {} with {}-byte alignment)", want as u32 * src.elem_bytes, src.layout, src.align, dst.layout, dst.align)));
    }
    let cache = if name == "cp.async.cg" { "cg" } else { "ca" };
    let ignore_src = pred.map(|p| b.binary("arith.xori", p, b.const_int(1, "i1")));
    for chunk in 0..n / w {
        let so = static_offset(b, (chunk * w) as i64, &src.leaves)
            .map_err(|_| fail(op, "a copy needs tensors of static shape"))?;
        let dof = static_offset(b, (chunk * w) as i64, &dst.leaves)
            .map_err(|_| fail(op, "a copy needs tensors of static shape"))?;
        let (sp, dp) = (gep(b, src, so), gep(b, dst, dof));
        match ignore_src {
            None => {
                b.create(
                    "nvvm.cp.async.shared.global",
                    &[dp, sp],
                    &[],
                    &[
                        ("size", b.attr(&format!("{bytes} : i32"))),
                        ("modifier", b.attr(&format!("#nvvm<load_cache_modifier {cache}>"))),
                    ],
                );
            }
            Some(ignore) => {
                // The destination as a 32-bit shared-window address; `b`: a predicate register.
                let dst32 = b.cast("llvm.ptrtoint", dp, "i32");
                let asm = format!("cp.async.{cache}.shared.global [$0], [$1], {bytes}, $2;");
                b.create(
                    "llvm.inline_asm",
                    &[dst32, sp, ignore],
                    &[],
                    &[
                        ("asm_string", b.attr(&format!("\"{asm}\""))),
                        ("constraints", b.attr("\"r,l,b,~{memory}\"")),
                        ("has_side_effects", b.attr("unit")),
                    ],
                );
            }
        }
    }
    Ok(())
}

/// `ldmatrix.x{1,2,4}`: this lane gives the shared-memory address of its 8-element row (`src`,
/// which must be 16 contiguous, aligned bytes; only the first 8 per matrix lanes' are used) and
/// receives one register per matrix, its MMA values in `dst` order (register j = values 2j, 2j+1).
fn ldmatrix(b: &Builder, op: Op, name: &str, src: &Lowered, dst: &Lowered, n: usize, w: usize) -> Result<(), Reported> {
    let Some(cute_layout::atom::CopyOp::Ldmatrix { matrices, trans }) = super::common::copy_op(name) else {
        return Err(fail(op, &format!("{NAME}: unknown copy operation \"{name}\"")));
    };
    // `.trans` delivers the transposed 8x8 matrices: the MMA fragment of an M- or N-major tile.
    let layout = if trans { "col" } else { "row" };
    if n != 8 || w != 8 {
        return Err(fail(op, &format!("{name} reads one row of 8 contiguous, 16-byte aligned elements per lane, but the source has {n} elements proven contiguous in runs of {w} (layout {}, {}-byte alignment)", src.layout, src.align)));
    }
    let i32_ty = b.ty("i32");
    let row = gep(b, src, Int::Const(0));
    let m = usize::from(matrices);
    // One matrix comes back as an i32, more as a struct of them.
    let result_ty = if m == 1 { i32_ty } else { b.ty(&format!("!llvm.struct<({})>", vec!["i32"; m].join(", "))) };
    let ld = b.create(
        "nvvm.ldmatrix",
        &[row],
        &[result_ty],
        &[
            ("num", b.attr(&format!("{m} : i32"))),
            ("layout", b.attr(&format!("#nvvm.mma_layout<{layout}>"))),
            ("shape", b.attr("#nvvm.ld_st_matrix_shape<m = 8, n = 8>")),
            ("eltType", b.attr("#nvvm.ld_st_matrix_elt_type<b16>")),
        ],
    );
    let regs: Vec<Val> = if m == 1 {
        vec![ir::result(ld, 0)]
    } else {
        (0..m)
            .map(|i| {
                ir::result(
                    b.create(
                        "llvm.extractvalue",
                        &[ir::result(ld, 0)],
                        &[i32_ty],
                        &[("position", b.attr(&format!("array<i64: {i}>")))],
                    ),
                    0,
                )
            })
            .collect()
    };
    let packed = ir::result(b.create("vector.from_elements", &regs, &[b.ty(&format!("vector<{m}xi32>"))], &[]), 0);
    let values = b.cast("vector.bitcast", packed, &format!("vector<{}x{}>", 2 * m, dst.elem));
    store_frag(b, op, dst, values, "dst_vector")
}

/// The `cute.alloc`s (register tensors) whose views the function's `cute.wgmma` ops accumulate in,
/// and those an RS atom's A fragments are loaded from: the wgmma reads both asynchronously, so
/// both are fenced at `wgmma.fence` and `wgmma.wait_group`.
fn wgmma_accumulators(func: Op) -> Vec<Op> {
    let mut out: Vec<Op> = Vec::new();
    for w in ir::nested_ops(func).into_iter().filter(|o| ir::op_name(*o) == "cute.wgmma") {
        for operand in [2, 0] {
            let Some(load) = ir::defining_op(ir::operand(w, operand)).filter(|d| ir::op_name(*d) == "cute.load_frag")
            else {
                continue;
            };
            let mut t = ir::operand(load, 0);
            while let Some(d) = ir::defining_op(t) {
                match ir::op_name(d).as_str() {
                    "cute.view" => t = ir::operand(d, 0),
                    "cute.alloc" => {
                        if !out.iter().any(|o| o.ptr == d.ptr) {
                            out.push(d);
                        }
                        break;
                    }
                    _ => break,
                }
            }
        }
    }
    out
}

/// CuTe's `warpgroup_fence_operand` on a whole accumulator tensor: its values pass through an
/// empty `asm volatile` that claims to rewrite them (each register tied to itself). Ordered with the
/// wgmma fence/wait (all have side effects), it keeps the backend from moving register writes of
/// the accumulators below a `wgmma.fence` or reads of them above a `wgmma.wait_group`, which the
/// PTX ISA leaves undefined. It costs no instruction.
///
/// The registers are loaded and stored one at a time: loaded as one vector, each fence gave LLVM's
/// InstCombine an insertelement chain as long as the fragment, quadratic in its length (0.1 s per
/// kernel of samples/gemm_sm90.cute, whose accumulators are 128 floats).
fn register_fence(b: &Builder, root: &(Val, i64, String)) {
    let (ptr, n, elem) = root;
    let n = *n as usize;
    let f32_regs = elem == "f32";
    if !(f32_regs || n % 2 == 0) {
        return;
    }
    let nr = if f32_regs { n } else { n / 2 };
    // A register's memory: an f32, or a pair of 16-bit elements (element 2i in the low half).
    let chunk_ty = if f32_regs { "f32".to_string() } else { format!("vector<2x{elem}>") };
    let align = b.attr(if f32_regs { "4 : i64" } else { "2 : i64" });
    let slots: Vec<Val> = (0..nr).map(|i| byte_gep(b, *ptr, 4 * i as i64)).collect();
    let regs: Vec<Val> = slots
        .iter()
        .map(|slot| {
            let v = ir::result(
                b.create(
                    "llvm.load",
                    &[*slot],
                    &[b.ty(&chunk_ty)],
                    &[("alignment", align), ("ordering", b.attr("0 : i64"))],
                ),
                0,
            );
            if f32_regs {
                v
            } else {
                registers32(b, v, 1, false)[0]
            }
        })
        .collect();
    let reg_ty = if f32_regs { "f32" } else { "i32" };
    let c = if f32_regs { "f" } else { "r" };
    let mut constraints: Vec<String> = (0..nr).map(|_| format!("={c}")).collect();
    constraints.extend((0..nr).map(|i| i.to_string()));
    let asm = b.create(
        "llvm.inline_asm",
        &regs,
        &[b.ty(&format!("!llvm.struct<({})>", vec![reg_ty; nr].join(", ")))],
        &[
            ("asm_string", b.attr("\"\"")),
            ("constraints", b.attr(&format!("\"{}\"", constraints.join(",")))),
            ("has_side_effects", b.attr("unit")),
        ],
    );
    for (i, slot) in slots.iter().enumerate() {
        let r = ir::result(
            b.create(
                "llvm.extractvalue",
                &[ir::result(asm, 0)],
                &[b.ty(reg_ty)],
                &[("position", b.attr(&format!("array<i64: {i}>")))],
            ),
            0,
        );
        let v = if f32_regs {
            r
        } else {
            let one = ir::result(b.create("vector.from_elements", &[r], &[b.ty("vector<1xi32>")], &[]), 0);
            b.cast("vector.bitcast", one, &chunk_ty)
        };
        b.create("llvm.store", &[v, *slot], &[], &[("alignment", align), ("ordering", b.attr("0 : i64"))]);
    }
}

/// A vector as `n` 32-bit registers: f32 values, or 16-bit pairs packed into i32 (element 2i in the
/// low half of register i, as PTX expects).
fn registers32(b: &Builder, v: Val, n: usize, as_f32: bool) -> Vec<Val> {
    let elem_ty = if as_f32 { "f32" } else { "i32" };
    let packed = if as_f32 { v } else { b.cast("vector.bitcast", v, &format!("vector<{n}xi32>")) };
    (0..n)
        .map(|i| {
            ir::result(
                b.create(
                    "vector.extract",
                    &[packed],
                    &[b.ty(elem_ty)],
                    &[("static_position", b.attr(&format!("array<i64: {i}>")))],
                ),
                0,
            )
        })
        .collect()
}

/// The registers of an inline-asm result struct back as a vector of type `vec_ty`.
fn from_struct(b: &Builder, st: Val, n: usize, reg_ty: &str, vec_ty: &str, as_f32: bool) -> Val {
    let regs: Vec<Val> = (0..n)
        .map(|i| {
            ir::result(
                b.create(
                    "llvm.extractvalue",
                    &[st],
                    &[b.ty(reg_ty)],
                    &[("position", b.attr(&format!("array<i64: {i}>")))],
                ),
                0,
            )
        })
        .collect();
    if as_f32 {
        return ir::result(b.create("vector.from_elements", &regs, &[b.ty(vec_ty)], &[]), 0);
    }
    let packed = ir::result(b.create("vector.from_elements", &regs, &[b.ty(&format!("vector<{n}xi32>"))], &[]), 0);
    b.cast("vector.bitcast", packed, vec_ty)
}

/// The 64-bit matrix descriptor of one wgmma operand tile (`cute_layout::gmma`): LBO, SBO and the
/// swizzle mode from its layout (checked canonical), the start address from its allocation's
/// address plus its (unswizzled) offset in it, which must be provably in the first row of the
/// swizzle pattern (base offset 0): its run-time terms multiples of the pattern's repeat.
fn descriptor(b: &Builder, op: Op, index: usize, t: &Lowered, what: &str) -> Result<Val, Reported> {
    let (info, layout, bytes) = super::verify::wgmma_tile(op, index)?;
    let desc = cute_layout::gmma::k_major(&layout, info.swizzle, bytes, what)
        .map_err(|e| fail(op, &format!("{NAME}: {}", e.reason)))?;
    let mode = desc.swizzle;
    let rel = match t.swizzled {
        Some((_, rel)) => rel,
        None => {
            if t.align < 16 {
                return Err(fail(
                    op,
                    &format!(
                        "{NAME}: the wgmma {what} tile must start 16-byte aligned; its alignment is only {} bytes",
                        t.align
                    ),
                ));
            }
            Int::Const(0)
        }
    };
    let e = i64::from(bytes);
    let ok = match rel {
        Int::Const(c) => cute_layout::gmma::start_ok(mode, c * e),
        Int::Dyn(v) => {
            let (terms, c) = known_bits::sum_terms(v);
            let mut known = KnownBits::default();
            let repeat_elems = (mode.repeat_bytes() / e) as u64;
            terms.iter().all(|t| known.of(*t).multiple_of_pow2(repeat_elems.trailing_zeros()))
                && cute_layout::gmma::start_ok(mode, c * e)
        }
    };
    if !ok {
        return Err(fail(
            op,
            &format!(
                "{NAME}: cannot prove that the wgmma {what} tile ({}{layout}) starts in the first row of its swizzle pattern, 16-byte aligned (a descriptor with base offset 0): its offset in the allocation must be a multiple of {} bytes plus 0 to {} bytes in steps of 16",
                info.swizzle.map(|s| format!("{s} o ")).unwrap_or_default(),
                mode.repeat_bytes(),
                mode.row_bytes() - 32
            ),
        ));
    }
    let addr = b.cast("llvm.ptrtoint", t.ptr, "i32");
    let rel_bytes = mul(b, rel, Int::Const(e));
    let start = match rel_bytes {
        Int::Const(0) => addr,
        other => b.binary("arith.addi", addr, materialize(b, other)),
    };
    let field = b.binary("arith.shrui", start, b.const_int(4, "i32"));
    let field = b.binary("arith.andi", field, b.const_int(0x3FFF, "i32"));
    let field = b.cast("arith.extui", field, "i64");
    Ok(b.binary("arith.ori", field, b.const_int(desc.encode_fields() as i64, "i64")))
}

/// `cute.wgmma`: `wgmma.mma_async.sync.aligned.m64nNk16` as inline PTX on the two descriptors and
/// the accumulator registers (tied to the results, scale-d 1: D = A*B + D). Inline PTX rather
/// than `nvvm.wgmma.mma_async`: docs/design.md (o). An RS atom (`a` is `None`: operand 0 is the
/// thread's A vector) gives A as four 32-bit registers instead of a descriptor, in the PTX form
/// `d, {a0, a1, a2, a3}, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b` (no imm-trans-a:
/// a register A is K-major).
fn wgmma(b: &Builder, op: Op, a: Option<&Lowered>, bt: &Lowered) -> Result<(), Reported> {
    let name = ir::string_attr(op, "atom").ok_or_else(|| fail(op, "`cute.wgmma` needs an `atom` attribute"))?;
    let atom = cute_layout::MmaAtom::by_name(&name)
        .filter(|x| x.is_wgmma())
        .ok_or_else(|| fail(op, &format!("{NAME}: \"{name}\" is not a wgmma atom")))?;
    // A: one descriptor operand ("l"), or the fragment's 16-bit pairs as 32-bit registers ("r").
    let a_operands: Vec<Val> = match a {
        Some(a) => vec![descriptor(b, op, 0, a, "A")?],
        None => {
            if atom.reads_smem(cute_layout::MmaOperand::A) {
                return Err(fail(
                    op,
                    &format!("{NAME}: {} reads A from shared memory, but A is a register vector", atom.name),
                ));
            }
            let na = atom.values(cute_layout::MmaOperand::A) as usize / 2;
            registers32(b, ir::operand(op, 0), na, false)
        }
    };
    let na = a_operands.len();
    let desc_b = descriptor(b, op, 1, bt, "B")?;
    let values = atom.values(cute_layout::MmaOperand::C) as usize;
    let f32_regs = atom.c == "f32";
    let nc = if f32_regs { values } else { values / 2 };
    let c = registers32(b, ir::operand(op, 2), nc, f32_regs);
    let list = (0..nc).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ");
    // Operands after the nc results: A (1 or 4), B's descriptor, scale-d, then the tied accumulators.
    let (a_text, tail) = if a.is_some() {
        (format!("${nc}"), "1, 1, 0, 0")
    } else {
        (format!("{{{}}}", (nc..nc + na).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ")), "1, 1, 0")
    };
    let (b_at, scale_at) = (nc + na, nc + na + 1);
    // One line: the PTX joiner (ptx_join.rs) takes a `}` alone on a line for the end of a function.
    let asm = format!(
        "{{ .reg .pred p; setp.ne.b32 p, ${scale_at}, 0; {} {{{list}}}, {a_text}, ${b_at}, p, {tail}; }}",
        atom.ptx
    );
    let reg = if f32_regs { "f" } else { "r" };
    let mut constraints: Vec<String> = (0..nc).map(|_| format!("={reg}")).collect();
    constraints.extend((0..na).map(|_| if a.is_some() { "l".to_string() } else { "r".to_string() }));
    constraints.extend(["l".to_string(), "r".to_string()]);
    constraints.extend((0..nc).map(|i| i.to_string()));
    // scale-d: 1 (D = A*B + D) unless the op's optional i1 says otherwise.
    let scale = if ir::operand_count(op) > 3 {
        b.cast("arith.extui", ir::operand(op, 3), "i32")
    } else {
        b.const_int(1, "i32")
    };
    let mut operands = a_operands;
    operands.extend([desc_b, scale]);
    operands.extend(c);
    let reg_ty = if f32_regs { "f32" } else { "i32" };
    let inline = b.create(
        "llvm.inline_asm",
        &operands,
        &[b.ty(&format!("!llvm.struct<({})>", vec![reg_ty; nc].join(", ")))],
        &[
            ("asm_string", b.attr(&format!("\"{asm}\""))),
            ("constraints", b.attr(&format!("\"{}\"", constraints.join(",")))),
            ("has_side_effects", b.attr("unit")),
        ],
    );
    let d_ty = ir::type_to_string(ir::value_type(ir::result(op, 0)));
    let d = from_struct(b, ir::result(inline, 0), nc, reg_ty, &d_ty, f32_regs);
    ir::replace_uses(op, &[d]);
    Ok(())
}

/// `cute.tma_load`: one `cp.async.bulk.tensor.Nd` in inline PTX (docs/design.md (q)): the shared
/// destination's and the barrier's 32-bit shared-window addresses, the tensor map's generic address
/// (the `byval` kernel parameter, `cvta.param` by NVPTX) and the element coordinates.
fn tma_load(b: &Builder, op: Op, smem: &Lowered, bar: &Lowered) {
    let dst = gep(b, smem, Int::Const(0));
    let dst = b.cast("llvm.ptrtoint", dst, "i32");
    let mbar = gep(b, bar, Int::Dyn(ir::operand(op, 2)));
    let mbar = b.cast("llvm.ptrtoint", mbar, "i32");
    let n = ir::operand_count(op) - 4;
    let crds: Vec<String> = (0..n).map(|i| format!("${}", 3 + i)).collect();
    let asm = format!(
        "cp.async.bulk.tensor.{n}d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {{{}}}], [$2];",
        crds.join(", ")
    );
    let mut operands = vec![dst, ir::operand(op, 3), mbar];
    operands.extend((0..n).map(|i| ir::operand(op, 4 + i)));
    let constraints = format!("r,l,r{},~{{memory}}", ",r".repeat(n));
    b.create(
        "llvm.inline_asm",
        &operands,
        &[],
        &[
            ("asm_string", b.attr(&format!("\"{asm}\""))),
            ("constraints", b.attr(&format!("\"{constraints}\""))),
            ("has_side_effects", b.attr("unit")),
        ],
    );
}

/// `cute.tma_store`: NVVM's `nvvm.cp.async.bulk.tensor.global.shared.cta` (tile mode, no L2 cache
/// hint), which translates to `llvm.nvvm.cp.async.bulk.tensor.s2g.tile.Nd`: the map's generic
/// address, the source's shared address and the element coordinates (docs/design.md (q)).
fn tma_store(b: &Builder, op: Op, smem: &Lowered) {
    let src = gep(b, smem, Int::Const(0));
    let n = ir::operand_count(op) - 2;
    let mut operands = vec![ir::operand(op, 1), src];
    operands.extend((0..n).map(|i| ir::operand(op, 2 + i)));
    b.create(
        "nvvm.cp.async.bulk.tensor.global.shared.cta",
        &operands,
        &[],
        &[("operandSegmentSizes", b.attr(&format!("array<i32: 1, 1, {n}, 0, 0>")))],
    );
}

/// `cute.mbarrier` on the barrier's shared-memory address: `nvvm.mbarrier.init`,
/// `nvvm.mbarrier.arrive` and `nvvm.mbarrier.arrive.expect_tx` (LLVM intrinsics), and the wait as a
/// `mbarrier.try_wait.parity` loop in inline PTX. Inline PTX for the wait rather than
/// `nvvm.mbarrier.try_wait.parity`: that op is lowered (to the same loop) only by
/// `convert-nvvm-to-llvm`, which our pipeline does not run; docs/design.md (p).
/// The lowered view or allocation that operand `i` of `op` is, if it is one.
fn operand_view<'a>(tensors: &'a [Lowered], op: Op, i: usize) -> Option<&'a Lowered> {
    tensors.iter().find(|t| ir::same_value(t.value, ir::operand(op, i)))
}

fn mbarrier(b: &Builder, op: Op, t: &Lowered) -> Result<(), Reported> {
    let kind = ir::string_attr(op, "kind").unwrap_or_default();
    let bar = gep(b, t, Int::Dyn(ir::operand(op, 1)));
    match kind.as_str() {
        "init" => {
            b.create("nvvm.mbarrier.init", &[bar, ir::operand(op, 2)], &[], &[]);
        }
        "arrive" => {
            b.create("nvvm.mbarrier.arrive", &[bar], &[b.ty("i64")], &[]);
        }
        "arrive_expect_tx" => {
            b.create("nvvm.mbarrier.arrive.expect_tx", &[bar, ir::operand(op, 2)], &[b.ty("i64")], &[]);
        }
        "wait" => {
            // The PTX ISA's try_wait with a suspend-time hint, as CUTLASS's `ClusterBarrier::wait`.
            // One line: the PTX joiner (ptx_join.rs) takes a `}` alone on a line for the end of a function.
            let asm = "{ .reg .pred p; LAB_WAIT: mbarrier.try_wait.parity.shared::cta.b64 p, [$0], $1, 10000000; @p bra.uni DONE; bra.uni LAB_WAIT; DONE: }";
            // A shared-window address fits 32 bits (CUTLASS's `cast_smem_ptr_to_uint`).
            let addr = b.cast("llvm.ptrtoint", bar, "i32");
            b.create(
                "llvm.inline_asm",
                &[addr, ir::operand(op, 2)],
                &[],
                &[
                    ("asm_string", b.attr(&format!("\"{asm}\""))),
                    ("constraints", b.attr("\"r,r,~{memory}\"")),
                    ("has_side_effects", b.attr("unit")),
                ],
            );
        }
        other => return Err(fail(op, &format!("{NAME}: `cute.mbarrier` kind \"{other}\" is unknown"))),
    }
    Ok(())
}

/// Registers for a tensor: an `alloca` that the backend promotes to registers when every access is at
/// a static offset (as CuTe C++'s register arrays).
fn alloca(op: Op, elem: &str, cosize: i64) -> Val {
    let b = Builder::before(op);
    let n = b.const_int(cosize.max(1), "i32");
    let ptr_ty = b.ty("!llvm.ptr");
    let a = b.create("llvm.alloca", &[n], &[ptr_ty], &[("elem_type", b.attr(elem)), ("alignment", b.attr("16 : i64"))]);
    ir::result(a, 0)
}

/// The symbol of the launch's dynamic shared memory (CUDA's `extern __shared__`), shared by every
/// kernel of the module.
const DYNAMIC_SMEM: &str = "__cute_dynamic_smem";

/// Shared memory for a tensor at byte `offset` of the launch's dynamic shared memory.
fn dynamic_shared(func: Op, op: Op, offset: i64) -> Val {
    let module = unsafe { mlir_sys::mlirOperationGetParentOperation(func) };
    let exists = ir::nested_ops(module)
        .into_iter()
        .any(|o| ir::op_name(o) == "llvm.mlir.global" && ir::symbol_name(o).as_deref() == Some(DYNAMIC_SMEM));
    if !exists {
        let g = Builder::before(func);
        g.create_with_regions(
            "llvm.mlir.global",
            &[],
            &[
                ("sym_name", g.attr(&format!("\"{DYNAMIC_SMEM}\""))),
                ("global_type", g.attr("!llvm.array<0 x i8>")),
                ("linkage", g.attr("#llvm.linkage<external>")),
                ("addr_space", g.attr("3 : i32")),
                // The base of every dynamic allocation: aligned as the most any of them asks.
                ("alignment", g.attr(&format!("{} : i64", cute_layout::atom::smem::SMEM_MAX_ALIGN))),
            ],
            1,
        );
    }
    let b = Builder::before(op);
    let ptr_ty = b.ty("!llvm.ptr<3>");
    let base = ir::result(
        b.create("llvm.mlir.addressof", &[], &[ptr_ty], &[("global_name", b.attr(&format!("@{DYNAMIC_SMEM}")))]),
        0,
    );
    if offset == 0 {
        return base;
    }
    byte_gep(&b, base, offset)
}

/// The address `bytes` bytes past `base` (a constant offset, in `base`'s address space).
fn byte_gep(b: &Builder, base: Val, bytes: i64) -> Val {
    let off = b.const_int(bytes, "i64");
    let gep = b.create(
        "llvm.getelementptr",
        &[base, off],
        &[ir::value_type(base)],
        &[("elem_type", b.attr("i8")), ("rawConstantIndices", b.attr("array<i32: -2147483648>"))],
    );
    ir::result(gep, 0)
}

/// Shared memory for a tensor: a block-wide global in address space 3 beside the kernel.
fn shared_global(func: Op, op: Op, elem: &str, elements: i64, index: usize, align: i64) -> Val {
    let fname = ir::symbol_name(func).unwrap_or_default();
    let sym = format!("__smem_{fname}_{index}");
    let g = Builder::before(func);
    g.create_with_regions(
        "llvm.mlir.global",
        &[],
        &[
            ("sym_name", g.attr(&format!("\"{sym}\""))),
            ("global_type", g.attr(&format!("!llvm.array<{} x {elem}>", elements.max(1)))),
            ("linkage", g.attr("#llvm.linkage<internal>")),
            ("addr_space", g.attr("3 : i32")),
            ("alignment", g.attr(&format!("{align} : i64"))),
        ],
        1,
    );
    let b = Builder::before(op);
    let ptr_ty = b.ty("!llvm.ptr<3>");
    ir::result(b.create("llvm.mlir.addressof", &[], &[ptr_ty], &[("global_name", b.attr(&format!("@{sym}")))]), 0)
}

/// `cute.dsmem_load`/`cute.dsmem_store`: this block's address of the element (swizzled like any
/// access of the tensor), `nvvm.mapa` to the same element of the block of the given rank in the
/// cluster (`mapa.shared::cluster`, an address in LLVM's shared-cluster space 7), then an ordinary
/// `llvm.load`/`llvm.store` there, which NVPTX emits as `ld/st.shared::cluster`.
fn dsmem(b: &Builder, op: Op, t: &Lowered) {
    let local = gep(b, t, Int::Dyn(ir::operand(op, 1)));
    let remote = b.create("nvvm.mapa", &[local, ir::operand(op, 2)], &[b.ty("!llvm.ptr<7>")], &[]);
    let remote = ir::result(remote, 0);
    let attrs = [("alignment", b.attr(&format!("{} : i64", t.elem_bytes))), ("ordering", b.attr("0 : i64"))];
    if ir::op_name(op) == "cute.dsmem_load" {
        let load = b.create("llvm.load", &[remote], &[ir::value_type(ir::result(op, 0))], &attrs);
        ir::replace_uses(op, &[ir::result(load, 0)]);
    } else {
        b.create("llvm.store", &[ir::operand(op, 3), remote], &[], &attrs);
    }
}
