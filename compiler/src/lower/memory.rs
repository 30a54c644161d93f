//! Tensors and memory: allocations, views (the CuTe algebra op that made each), element and
//! fragment loads and stores, copies and `cp.async` groups.

use super::{escape, mlir_layout, mlir_scalar, mlir_tensor, mlir_tiled_mma, v, KernelWriter};
use cute_lang::kir::{self, At, Inst, TensorTy, ValueId, ViewHow};
use cute_lang::span::Span;
use cute_lang::types::Scalar;
use cute_layout::expr::Value as XValue;

impl KernelWriter<'_> {
    /// How an element access is written: `cute.load_at`/`store_at` with the coordinate in CuTe
    /// notation (its `?`s the index-integer operands), or `cute.load`/`store` at an element offset. Returns
    /// the load op's name, the operands and their types after the tensor, and the attribute.
    pub(super) fn element_at(&mut self, at: &At, span: Span) -> (&'static str, String, String, String) {
        match at {
            At::Offset(offset) => {
                ("load", format!(", {}", self.int(offset, span)), format!(", {}", self.ix), String::new())
            }
            At::Coord(c) => {
                let ints: Vec<String> = c.dyn_leaves().iter().map(|i| self.int(i, span)).collect();
                let operands: String = ints.iter().map(|i| format!(", {i}")).collect();
                (
                    "load_at",
                    operands,
                    format!(", {}", self.ix).repeat(ints.len()),
                    format!(" {{coord = \"{}\"}}", escape(&c.to_string())),
                )
            }
        }
    }

    /// A layout as a `!cute.layout` value: `cute.make_layout` with its `?` entries as operands.
    pub(super) fn make_layout(&mut self, l: &cute_layout::Layout, span: Span) -> (String, String) {
        let leaves: Vec<String> = l.dynamic_leaves().iter().map(|i| self.int(i, span)).collect();
        let ty = mlir_layout(l);
        let types = vec![self.ix; leaves.len()].join(", ");
        (self.op(&format!("\"cute.make_layout\"({}) : ({types}) -> {ty}", leaves.join(", ")), span), ty)
    }

    /// A view as the CuTe op that made it: the algebra's arguments as the `args` strings (a `?` in
    /// them is the next operand of the `i32` group, `@` the next of the `!cute.layout` group), for
    /// `cute-canonicalize` to fold; or a tiled copy's `partition_S`/`partition_D` with the copy built from its atom.
    pub(super) fn view(&mut self, dst: ValueId, src: ValueId, how: &ViewHow, ty: &TensorTy, span: Span) {
        let mut operands = vec![v(src)];
        let mut types = vec![self.ty(src)];
        match how {
            ViewHow::Algebra { op, args } => {
                // Layout arguments and run-time integers are two operand groups (IRDL gives each
                // variadic group one type), each in argument order.
                let (mut layouts, mut layout_types, mut ints) = (Vec::new(), Vec::new(), Vec::new());
                let mut texts = Vec::new();
                for a in args {
                    if let XValue::Layout(l) = a {
                        let (name, t) = self.make_layout(l, span);
                        layouts.push(name);
                        layout_types.push(t);
                        texts.push("\"@\"".to_string());
                    } else {
                        for leaf in a.dyn_leaves() {
                            ints.push(self.int(&leaf, span));
                        }
                        texts.push(format!("\"{}\"", escape(&a.to_string())));
                    }
                }
                let segments = format!("array<i32: 1, {}, {}>", layouts.len(), ints.len());
                types.extend(layout_types);
                types.extend(ints.iter().map(|_| self.ix.to_string()));
                operands.extend(layouts);
                operands.extend(ints);
                let text = format!(
                    "\"cute.{op}\"({}) {{args = [{}], operandSegmentSizes = {segments}}} : ({}) -> {}",
                    operands.join(", "),
                    texts.join(", "),
                    types.join(", "),
                    mlir_tensor(ty)
                );
                self.define(dst, &text, span);
            }
            ViewHow::Partition { dst: to_dst, elem, bits, tv, tile, tid } => {
                let atom_ty = format!("!cute.copy_atom<{}, {bits}>", mlir_scalar(*elem));
                let atom = self.op(&format!("\"cute.make_copy_atom\"() : () -> {atom_ty}"), span);
                let (tv_value, tv_ty) = self.make_layout(tv, span);
                let copy_ty = format!("!cute.tiled_copy<{}, {bits}, \"{tile}\", \"{tv}\">", mlir_scalar(*elem));
                let copy = self.op(
                    &format!("\"cute.make_tiled_copy\"({atom}, {tv_value}) : ({atom_ty}, {tv_ty}) -> {copy_ty}"),
                    span,
                );
                let t = self.int(tid, span);
                operands.extend([copy, t]);
                types.extend([copy_ty, self.ix.into()]);
                let op = if *to_dst { "partition_d" } else { "partition_s" };
                self.define(
                    dst,
                    &format!("\"cute.{op}\"({}) : ({}) -> {}", operands.join(", "), types.join(", "), mlir_tensor(ty)),
                    span,
                );
            }
            ViewHow::Recast { .. } => {
                // The result's `?` entries are operands: as a new root, its `cute.dyn`s read them.
                for leaf in ty.layout.dynamic_leaves() {
                    operands.push(self.int(&leaf, span));
                    types.push(self.ix.into());
                }
                self.define(
                    dst,
                    &format!(
                        "\"cute.recast\"({}) : ({}) -> {}",
                        operands.join(", "),
                        types.join(", "),
                        mlir_tensor(ty)
                    ),
                    span,
                );
            }
            ViewHow::MmaPartition { operand, tiled, tid } => {
                let atom_ty = format!("!cute.mma_atom<\"{}\">", tiled.atom.name);
                let atom = self.op(&format!("\"cute.make_mma_atom\"() : () -> {atom_ty}"), span);
                let mma_ty = mlir_tiled_mma(tiled);
                let mma = self.op(&format!("\"cute.make_tiled_mma\"({atom}) : ({atom_ty}) -> {mma_ty}"), span);
                let t = self.int(tid, span);
                operands.extend([mma, t]);
                types.extend([mma_ty, self.ix.into()]);
                let op = format!("partition_{}", operand.name().to_ascii_lowercase());
                self.define(
                    dst,
                    &format!("\"cute.{op}\"({}) : ({}) -> {}", operands.join(", "), types.join(", "), mlir_tensor(ty)),
                    span,
                );
            }
        }
    }

    /// Allocations, element and fragment accesses, and copies.
    pub(super) fn memory(&mut self, inst: &Inst) {
        match inst {
            Inst::Alloc { dst, ty, span } => {
                self.define(*dst, &format!("\"cute.alloc\"() : () -> {}", mlir_tensor(ty)), *span);
            }
            Inst::LaunchSmem { dst, ty, offset, span } => {
                self.define(
                    *dst,
                    &format!("\"cute.launch_smem\"() {{offset = {offset} : i64}} : () -> {}", mlir_tensor(ty)),
                    *span,
                );
            }
            Inst::Load { dst, tensor, ty, at, span } => {
                let (name, at, at_types, attr) = self.element_at(at, *span);
                let text = format!(
                    "\"cute.{name}\"({}{at}){attr} : ({}{at_types}) -> {}",
                    v(*tensor),
                    mlir_tensor(ty),
                    mlir_scalar(ty.elem)
                );
                self.define(*dst, &text, *span);
            }
            Inst::Store { value, tensor, ty, at, span } => {
                let x = self.operand(value, ty.elem, None, *span);
                let (name, at, at_types, attr) = self.element_at(at, *span);
                let loc = self.loc(*span);
                let et = mlir_scalar(ty.elem);
                let store = if name == "load" { "store" } else { "store_at" };
                self.line(&format!(
                    "\"cute.{store}\"({x}, {}{at}){attr} : ({et}, {}{at_types}) -> () {loc}",
                    v(*tensor),
                    mlir_tensor(ty)
                ));
            }
            Inst::LoadFrag { dst, tensor, ty, span } => {
                let t = self.ty(*dst);
                self.define(*dst, &format!("\"cute.load_frag\"({}) : ({}) -> {t}", v(*tensor), mlir_tensor(ty)), *span);
            }
            Inst::StoreFrag { value, tensor, ty, span } => {
                let loc = self.loc(*span);
                let t = self.ty(*value);
                self.line(&format!(
                    "\"cute.store_frag\"({}, {}) : ({t}, {}) -> () {loc}",
                    v(*value),
                    v(*tensor),
                    mlir_tensor(ty)
                ));
            }
            Inst::Copy { src, src_ty, dst, dst_ty, width, op, pred, span } => {
                let pred = pred.as_ref().map(|p| self.operand(p, Scalar::Bool, None, *span));
                let loc = self.loc(*span);
                let mut attrs: Vec<String> = width.iter().map(|w| format!("max_vector = {w} : i32")).collect();
                if *op != kir::CopyOp::Universal {
                    attrs.push(format!("op = \"{}\"", op.name()));
                }
                let attr = if attrs.is_empty() { String::new() } else { format!(" {{{}}}", attrs.join(", ")) };
                let (pred_operand, pred_ty) = match &pred {
                    Some(p) => (format!(", {p}"), ", i1"),
                    None => (String::new(), ""),
                };
                self.line(&format!(
                    "\"cute.copy\"({}, {}{pred_operand}){attr} : ({}, {}{pred_ty}) -> () {loc}",
                    v(*src),
                    v(*dst),
                    mlir_tensor(src_ty),
                    mlir_tensor(dst_ty)
                ));
            }
            Inst::AsyncCopyGroup { wait, span } => {
                let loc = self.loc(*span);
                match wait {
                    None => self.line(&format!("nvvm.cp.async.commit.group {loc}")),
                    Some(n) => self.line(&format!("nvvm.cp.async.wait.group {n} {loc}")),
                }
            }
            _ => unreachable!("`inst` sends only memory ops here"),
        }
    }
}
