//! `cute-lower-to-gpu`: lowers `cute` ops inside `gpu.func` kernels to `arith` and `llvm` ops.
//!
//! A `!cute.tensor` kernel argument becomes the kernel ABI: its base pointer (`!llvm.ptr<1>`, tagged
//! with the tensor's alignment), then one `i32` per dynamic shape entry, then one `i32` per dynamic
//! stride entry, in flattened mode order (static entries are compiled in). Element accesses become
//! the layout's crd2idx (static parts folded), a `getelementptr` and a load or store with the
//! element's alignment. Index arithmetic is i32, as in CuTe; the byte offset is formed in i64.

use crate::ir::{self, Builder, Op, Val};
use cute_dialect::TensorTypeInfo;
use cute_lang::check::parse_layout;
use cute_lang::types::{Extent, Tuple};
use melior::ir::r#type::TypeId;
use melior::pass::{create_external, ExternalPass, Pass};

pub const NAME: &str = "cute-lower-to-gpu";
pub const SUMMARY: &str = "Lower cute tensor ops in gpu.func kernels to arith/llvm, expanding tensor arguments into the kernel ABI";

#[repr(align(8))]
struct PassId;
static PASS_ID: PassId = PassId;

pub fn create() -> Pass {
    create_external(
        |op: melior::ir::OperationRef<'_, '_>, pass: ExternalPass<'_>| {
            if run(op.to_raw()).is_err() {
                pass.signal_failure();
            }
        },
        TypeId::create(&PASS_ID),
        NAME,
        NAME,
        SUMMARY,
        "builtin.module",
        &[],
    )
}

/// An integer known at compile time or held in an SSA value.
#[derive(Clone, Copy)]
enum Int {
    Const(i64),
    Dyn(Val),
}

/// A tensor argument after expansion: its pointer and the layout with dynamic entries bound.
struct Lowered {
    ptr: Val,
    elem: String,
    elem_bytes: u32,
    layout: Tree,
}

enum Tree {
    Leaf { shape: Int, stride: Int },
    Node(Vec<Tree>),
}

impl Tree {
    fn leaves(&self) -> Vec<(Int, Int)> {
        match self {
            Tree::Leaf { shape, stride } => vec![(*shape, *stride)],
            Tree::Node(items) => items.iter().flat_map(Tree::leaves).collect(),
        }
    }

    fn modes(&self) -> Vec<&Tree> {
        match self {
            Tree::Leaf { .. } => vec![self],
            Tree::Node(items) => items.iter().collect(),
        }
    }
}

/// Marks a failure that has already been reported through the context's diagnostics.
struct Reported;

fn fail(op: Op, message: &str) -> Reported {
    ir::emit_error(ir::location(op), message);
    Reported
}

fn run(module: Op) -> Result<(), Reported> {
    let funcs: Vec<Op> = ir::nested_ops(module).into_iter().filter(|o| ir::op_name(*o) == "gpu.func").collect();
    for f in funcs {
        lower_func(f)?;
    }
    Ok(())
}

fn element_bytes(elem: &str) -> Option<u32> {
    Some(match elem {
        "i1" | "i8" | "f8E4M3FN" | "f8E5M2" => 1,
        "i16" | "f16" | "bf16" => 2,
        "i32" | "f32" => 4,
        "i64" | "f64" => 8,
        _ => return None,
    })
}

fn bind(t: &Tuple, values: &mut impl Iterator<Item = Val>) -> Option<Vec<Int>> {
    t.leaves()
        .into_iter()
        .map(|e| match e {
            Extent::Static(v) => Some(Int::Const(v)),
            Extent::Dynamic => values.next().map(Int::Dyn),
        })
        .collect()
}

fn build_tree(shape: &Tuple, shapes: &mut std::vec::IntoIter<Int>, strides: &mut std::vec::IntoIter<Int>) -> Tree {
    match shape {
        Tuple::Leaf(_) => Tree::Leaf { shape: shapes.next().unwrap_or(Int::Const(1)), stride: strides.next().unwrap_or(Int::Const(0)) },
        Tuple::Node(items) => Tree::Node(items.iter().map(|t| build_tree(t, shapes, strides)).collect()),
    }
}

fn lower_func(func: Op) -> Result<(), Reported> {
    let ctx = ir::context(func);
    let block = ir::entry_block(func);
    let original = ir::block_args(block);
    let mut lowered: Vec<(Val, Lowered)> = Vec::new();
    let mut arg_attrs: Vec<String> = Vec::new();
    let mut pos = 0usize;
    let ptr_ty = ir::parse_type(ctx, "!llvm.ptr<1>").ok_or_else(|| fail(func, "internal error: no llvm dialect"))?;
    let i32_ty = ir::parse_type(ctx, "i32").ok_or_else(|| fail(func, "internal error: no i32"))?;
    for old in original {
        let printed = ir::type_to_string(ir::value_type(old));
        let Some(info) = TensorTypeInfo::parse(&printed) else {
            arg_attrs.push("{}".into());
            pos += 1;
            continue;
        };
        if info.space != "gmem" {
            return Err(fail(func, &format!("kernel argument of type {printed} must be in gmem")));
        }
        let layout = parse_layout(&info.layout).map_err(|d| fail(func, &format!("invalid layout in {printed}: {}", d.message)))?;
        let elem_bytes = element_bytes(&info.elem).ok_or_else(|| fail(func, &format!("unsupported element type `{}`", info.elem)))?;
        let loc = unsafe { mlir_sys::mlirValueGetLocation(old) };
        let (n_shape, n_stride) = layout.dynamic_counts();
        let ptr = ir::insert_block_arg(block, pos + 1, ptr_ty, loc);
        let dyns: Vec<Val> = (0..n_shape + n_stride).map(|i| ir::insert_block_arg(block, pos + 2 + i, i32_ty, loc)).collect();
        arg_attrs.push(format!("{{llvm.align = {} : i64}}", info.align));
        arg_attrs.extend((0..dyns.len()).map(|_| "{}".to_string()));
        let mut it = dyns.into_iter();
        let shapes = bind(&layout.shape, &mut it).ok_or_else(|| fail(func, "internal error: dynamic count"))?;
        let strides = bind(&layout.stride, &mut it).ok_or_else(|| fail(func, "internal error: dynamic count"))?;
        let tree = build_tree(&layout.shape, &mut shapes.into_iter(), &mut strides.into_iter());
        lowered.push((old, Lowered { ptr, elem: info.elem.clone(), elem_bytes, layout: tree }));
        pos += 2 + n_shape + n_stride;
    }

    for op in ir::nested_ops(func) {
        let name = ir::op_name(op);
        if !name.starts_with("cute.") {
            continue;
        }
        let tensor_operand = match name.as_str() {
            "cute.size" | "cute.load" => ir::operand(op, 0),
            "cute.store" => ir::operand(op, 1),
            other => return Err(fail(op, &format!("{NAME}: no lowering for `{other}` yet"))),
        };
        let Some((_, t)) = lowered.iter().find(|(v, _)| ir::same_value(*v, tensor_operand)) else {
            return Err(fail(op, &format!("{NAME}: the tensor operand of `{name}` must be a kernel argument")));
        };
        let b = Builder::before(op);
        match name.as_str() {
            "cute.size" => {
                let mut size = Int::Const(1);
                for (s, _) in t.layout.leaves() {
                    size = mul(&b, size, s);
                }
                let v = materialize(&b, size);
                ir::replace_op(op, &[v]);
            }
            "cute.load" => {
                let coords: Vec<Val> = (1..ir::operand_count(op)).map(|i| ir::operand(op, i)).collect();
                let p = address(&b, op, t, &coords)?;
                let elem_ty = b.ty(&t.elem);
                let load = b.create(
                    "llvm.load",
                    &[p],
                    &[elem_ty],
                    &[("alignment", b.attr(&format!("{} : i64", t.elem_bytes))), ("ordering", b.attr("0 : i64"))],
                );
                ir::replace_op(op, &[ir::result(load, 0)]);
            }
            _ => {
                let value = ir::operand(op, 0);
                let coords: Vec<Val> = (2..ir::operand_count(op)).map(|i| ir::operand(op, i)).collect();
                let p = address(&b, op, t, &coords)?;
                b.create("llvm.store", &[value, p], &[], &[("alignment", b.attr(&format!("{} : i64", t.elem_bytes))), ("ordering", b.attr("0 : i64"))]);
                ir::replace_op(op, &[]);
            }
        }
    }

    // The tensor arguments are now unused: drop them, then restate the function type.
    for (old, _) in lowered.iter().rev() {
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

/// Coordinates are non-negative, so unsigned division is exact and cheaper than signed.
fn divmod(b: &Builder, x: Int, y: Int, op: &str) -> Int {
    match (x, y, op) {
        (Int::Const(p), Int::Const(q), "arith.divui") if q != 0 => Int::Const(p / q),
        (Int::Const(p), Int::Const(q), "arith.remui") if q != 0 => Int::Const(p % q),
        (v, Int::Const(1), "arith.divui") => v,
        (_, Int::Const(1), "arith.remui") => Int::Const(0),
        _ => Int::Dyn(b.binary(op, materialize(b, x), materialize(b, y))),
    }
}

/// crd2idx of one coordinate over the leaves of one mode, colexicographically (CuTe's order).
fn mode_offset(b: &Builder, coord: Int, leaves: &[(Int, Int)]) -> Int {
    let mut offset = Int::Const(0);
    let mut rest = coord;
    for (i, (shape, stride)) in leaves.iter().enumerate() {
        let c = if i + 1 == leaves.len() { rest } else { divmod(b, rest, *shape, "arith.remui") };
        offset = add(b, offset, mul(b, c, *stride));
        if i + 1 < leaves.len() {
            rest = divmod(b, rest, *shape, "arith.divui");
        }
    }
    offset
}

fn address(b: &Builder, op: Op, t: &Lowered, coords: &[Val]) -> Result<Val, Reported> {
    let modes = t.layout.modes();
    let offset = if coords.len() == 1 {
        // One integer coordinate indexes the whole tensor (CuTe's 1-D view of any layout).
        mode_offset(b, Int::Dyn(coords[0]), &t.layout.leaves())
    } else if coords.len() == modes.len() {
        let mut off = Int::Const(0);
        for (c, m) in coords.iter().zip(modes) {
            off = add(b, off, mode_offset(b, Int::Dyn(*c), &m.leaves()));
        }
        off
    } else {
        return Err(fail(op, &format!("coordinate has {} entries but the tensor has rank {}", coords.len(), modes.len())));
    };
    let off32 = materialize(b, offset);
    let off64 = b.cast("arith.extsi", off32, "i64");
    let ptr_ty = b.ty("!llvm.ptr<1>");
    let gep = b.create(
        "llvm.getelementptr",
        &[t.ptr, off64],
        &[ptr_ty],
        &[("elem_type", b.attr(&format!("{}", t.elem))), ("rawConstantIndices", b.attr("array<i32: -2147483648>"))],
    );
    Ok(ir::result(gep, 0))
}
