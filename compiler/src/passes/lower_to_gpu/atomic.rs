//! `cute.atomic` and `cute.atomic_add_frag` on the element's address (global or shared, through
//! the tensor's swizzle like any access).
//!
//! LLVM's NVPTX back end (LLVM 22) writes `atomicrmw` as `atom` without its `syncscope` or ordering
//! (a `syncscope("block") acquire` add comes out as a plain relaxed, gpu-scoped `atom.global.add`),
//! and never as `red`; it writes `cmpxchg` with both. So: `cas` is an `llvm.cmpxchg`; an atomic whose
//! result is used, relaxed at gpu scope (what a bare `atom` means), is an `llvm.atomicrmw`; every
//! other one is inline PTX spelled by `cute_layout::atom::atomic::ptx_instruction` (`red` where the
//! result is unused and `red` has the ordering), as is the vector `red.global.add.v4.f32`.

use super::memory::{gep, static_offset};
use super::{Int, Lowered, NAME};
use crate::ir::{self, Builder, Op, Val};
use crate::passes::common::{fail, tensor_info, Reported};
use crate::passes::ptx_asm::{output, PtxAsm, Reg};
use cute_abi::DType;
use cute_layout::atom::atomic::{ptx_instruction, red_fragment_for, AtomicOp, MemOrder, MemScope};

/// The op's qualifiers, read back from its attributes.
fn qualifiers(op: Op) -> Result<(MemScope, MemOrder), Reported> {
    let scope = ir::string_attr(op, "scope").and_then(|s| MemScope::from_name(&s));
    let order = ir::string_attr(op, "order").and_then(|s| MemOrder::from_name(&s));
    match (scope, order) {
        (Some(s), Some(o)) => Ok((s, o)),
        _ => Err(fail(op, &format!("{NAME}: `{}` needs a known `scope` and `order`", ir::op_name(op)))),
    }
}

/// LLVM's `atomicrmw` operation (its enum's value) for a PTX operation and type.
fn llvm_bin_op(op: AtomicOp, ty: &str) -> i64 {
    let float = ty.contains('f');
    let unsigned = ty.starts_with('u');
    match op {
        AtomicOp::Exch => 0,
        AtomicOp::Add if float => 11,
        AtomicOp::Add => 1,
        AtomicOp::And => 3,
        AtomicOp::Or => 5,
        AtomicOp::Xor => 6,
        AtomicOp::Max if unsigned => 9,
        AtomicOp::Max => 7,
        AtomicOp::Min if unsigned => 10,
        AtomicOp::Min | AtomicOp::Cas => 8,
    }
}

/// LLVM's `AtomicOrdering` enum value of an ordering name.
fn llvm_ordering(name: &str) -> i64 {
    match name {
        "monotonic" => 2,
        "acquire" => 4,
        "release" => 5,
        _ => 6,
    }
}

/// The PTX register class of an element of MLIR type `elem`, and the MLIR type it travels in.
fn register(elem: &str) -> (Reg, &'static str) {
    match elem {
        // A packed 16-bit pair, the lower-indexed element in the low half.
        "vector<2xf16>" | "vector<2xbf16>" => (Reg::B32, "i32"),
        "f32" => (Reg::F32, "f32"),
        "f64" => (Reg::F64, "f64"),
        "f16" | "bf16" => (Reg::B16, "i16"),
        "i64" => (Reg::B64, "i64"),
        _ => (Reg::B32, "i32"),
    }
}

/// The element's address as inline PTX takes it, and the state space it names.
fn asm_address(b: &Builder, ptr: Val) -> (Val, Reg, &'static str) {
    if ir::type_to_string(ir::value_type(ptr)) == "!llvm.ptr<3>" {
        // A shared-window address fits 32 bits (CUTLASS's `cast_smem_ptr_to_uint`).
        (b.cast("llvm.ptrtoint", ptr, "i32"), Reg::B32, "shared")
    } else {
        (b.cast("llvm.ptrtoint", ptr, "i64"), Reg::B64, "global")
    }
}

/// `cute.atomic`.
pub(super) fn atomic(b: &Builder, op: Op, t: &Lowered) -> Result<(), Reported> {
    let kind = ir::string_attr(op, "kind").and_then(|k| AtomicOp::from_name(&k));
    let (Some(kind), Some(ty)) = (kind, ir::string_attr(op, "type")) else {
        return Err(fail(op, &format!("{NAME}: `cute.atomic` needs a known `kind` and a `type`")));
    };
    let (scope, order) = qualifiers(op)?;
    let ptr = gep(b, t, Int::Dyn(ir::operand(op, 1)));
    let args: Vec<Val> = (2..ir::operand_count(op)).map(|i| ir::operand(op, i)).collect();
    let returns = ir::result_count(op) == 1;
    let elem = ir::type_to_string(ir::value_type(args[0]));
    let old = if kind == AtomicOp::Cas {
        Some(cmpxchg(b, ptr, &args, &elem, scope, order))
    } else if returns && scope == MemScope::Gpu && order == MemOrder::Relaxed && !elem.starts_with("vector") {
        let attrs = [
            ("bin_op", b.attr(&format!("{} : i64", llvm_bin_op(kind, &ty)))),
            ("ordering", b.attr("2 : i64")),
            ("syncscope", b.attr("\"device\"")),
        ];
        Some(ir::result(b.create("llvm.atomicrmw", &[ptr, args[0]], &[b.ty(&elem)], &attrs), 0))
    } else {
        let (addr, addr_reg, space) = asm_address(b, ptr);
        let (reg, reg_ty) = register(&elem);
        let text = ptx_instruction(returns, kind, &ty, scope, order, space);
        let mut asm = PtxAsm::default();
        // An `atom` gives a result even when it is unused (an acquiring atomic has no `red`).
        let has_result = text.starts_with("atom");
        let out = has_result.then(|| asm.outputs(reg, 1).start);
        let a = asm.input(addr, addr_reg);
        let value = if reg_ty == elem { args[0] } else { b.cast("llvm.bitcast", args[0], reg_ty) };
        let x = asm.input(value, reg);
        asm.clobbers_memory();
        asm.has_side_effects();
        let line = match out {
            Some(d) => format!("{text} ${d}, [${a}], ${x};"),
            None => format!("{text} [${a}], ${x};"),
        };
        let result = asm.build(b, &line);
        match (returns, result) {
            (true, Some(r)) => {
                let bits = output(b, r, 0, reg_ty);
                Some(if reg_ty == elem { bits } else { b.cast("llvm.bitcast", bits, &elem) })
            }
            _ => None,
        }
    };
    if let (true, Some(old)) = (returns, old) {
        ir::replace_uses(op, &[old]);
    }
    Ok(())
}

/// `llvm.cmpxchg` (integers only: floats compare and swap their bits), giving the old value.
fn cmpxchg(b: &Builder, ptr: Val, args: &[Val], elem: &str, scope: MemScope, order: MemOrder) -> Val {
    let int = match elem {
        "f32" => "i32",
        "f64" => "i64",
        other => other,
    };
    let bits = |v: Val| if int == elem { v } else { b.cast("llvm.bitcast", v, int) };
    let (success, failure) = order.llvm_cmpxchg();
    let attrs = [
        ("success_ordering", b.attr(&format!("{} : i64", llvm_ordering(success)))),
        ("failure_ordering", b.attr(&format!("{} : i64", llvm_ordering(failure)))),
        ("syncscope", b.attr(&format!("\"{}\"", scope.llvm_syncscope()))),
    ];
    let pair = b.ty(&format!("!llvm.struct<({int}, i1)>"));
    let x = b.create("llvm.cmpxchg", &[ptr, bits(args[0]), bits(args[1])], &[pair], &attrs);
    let old = output(b, ir::result(x, 0), 0, int);
    if int == elem {
        old
    } else {
        b.cast("llvm.bitcast", old, elem)
    }
}

/// `cute.atomic_add_frag`: one `red` per run of the form the tensor's element type and layout
/// allow (`red_fragment`: 4 f32 per `red.global.add.v4.f32`, 8 f16/bf16 per
/// `.noftz.v4.f16x2`/`.bf16x2`, a pair per `.noftz.f16x2`/`.bf16x2`), each at its run's static
/// offset; 16-bit pairs travel in one `.b32` register, the lower-indexed element in the low half.
pub(super) fn atomic_add_frag(b: &Builder, op: Op, t: &Lowered) -> Result<(), Reported> {
    let (scope, order) = qualifiers(op)?;
    let value = ir::operand(op, 0);
    let (info, layout, _) = tensor_info(op, &ir::type_to_string(ir::value_type(ir::operand(op, 1))))?;
    let elem = DType::from_name(&info.elem).ok_or_else(|| fail(op, &format!("no `red` on {}", info.elem)))?;
    let form = red_fragment_for(elem, &layout, info.align).map_err(|e| fail(op, &e))?;
    let n = ir::vector_shape(ir::value_type(value)).map_or(0, |(n, _)| n as usize);
    let text = format!("red.{}.{}.global.add.{}", order.name(), scope.name(), form.ty);
    let mlir_elem = elem.mlir_name();
    for chunk in 0..n / form.elems {
        let first = chunk * form.elems;
        let off = static_offset(b, first as i64, &t.leaves)
            .map_err(|_| fail(op, "`cute.atomic_add_frag` needs a tensor of static shape"))?;
        let (addr, addr_reg, _) = asm_address(b, gep(b, t, off));
        let mut asm = PtxAsm::default();
        let a = asm.input(addr, addr_reg);
        let regs = form.elems / form.per_reg;
        let xs: Vec<usize> = (0..regs)
            .map(|r| {
                let at = first + r * form.per_reg;
                if form.per_reg == 1 {
                    let pos = [("static_position", b.attr(&format!("array<i64: {at}>")))];
                    return asm.input(
                        ir::result(b.create("vector.extract", &[value], &[b.ty(mlir_elem)], &pos), 0),
                        Reg::F32,
                    );
                }
                let pair_ty = b.ty(&format!("vector<{}x{mlir_elem}>", form.per_reg));
                let slice = [
                    ("offsets", b.attr(&format!("[{at}]"))),
                    ("sizes", b.attr(&format!("[{}]", form.per_reg))),
                    ("strides", b.attr("[1]")),
                ];
                let pair = ir::result(b.create("vector.extract_strided_slice", &[value], &[pair_ty], &slice), 0);
                asm.input(b.cast("llvm.bitcast", pair, "i32"), Reg::B32)
            })
            .collect();
        asm.clobbers_memory();
        asm.has_side_effects();
        let list = crate::passes::ptx_asm::operand_list(xs);
        // A vector form takes a brace list; a single pair, one register.
        let operand = if regs == 1 { list } else { format!("{{{list}}}") };
        asm.build(b, &format!("{text} [${a}], {operand};"));
    }
    Ok(())
}
