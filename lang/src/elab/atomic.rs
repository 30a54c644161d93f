//! Atomics on global and shared tensor elements: `atomic_add(out[i], v)`, `atomic_cas(flag[0],
//! expected, desired)`, ..., with `scope:` and `order:` named arguments. The element is written
//! as a store names it (its place, not its value) and gets a store's bound checks. A call whose
//! result is unused (an expression statement) becomes PTX's `red`; `atomic_add(tile, fragment)`
//! adds a whole f32, f16 or bf16 fragment with `red.global.add.v4.f32` and the packed
//! `red.global.add.noftz.{v4.}f16x2`/`bf16x2` (`cute_layout::atom::atomic::red_fragment`). What PTX lacks (the table in
//! `cute_layout::atom::atomic`) is refused here, at the call.

use super::value::{Origin, TensorVal, Value};
use super::view::{check_rank, crd_has_under, element_offset};
use super::{Frame, R};
use crate::ast::{Arg, Expr, ExprKind};
use crate::diag::Diagnostic;
use crate::kir::{self, AtomicOp, Inst, MemOrder, MemScope, ValueTy};
use crate::span::Span;
use crate::types::{MemSpace, Scalar};
use cute_layout::atom::atomic::{add_pair_ptx_type, red_fragment_for};
use cute_layout::int::offset_alignment;
use cute_layout::Int;

fn usage(op: AtomicOp) -> String {
    let args = if op == AtomicOp::Cas { "t[i], expected, desired" } else { "t[i], value" };
    format!("{}({args}, scope: \"gpu\", order: \"relaxed\")", op.builtin())
}

impl Frame<'_, '_> {
    /// The call's statement form: a builtin `atomic_*` call whose value is dropped, which needs no
    /// result (`red`). `None` for any other expression, and where a `fn` or a local of that name
    /// hides the builtin.
    pub(crate) fn discarded_atomic<'e>(&self, e: &'e Expr) -> Option<(AtomicOp, &'e [Arg])> {
        let ExprKind::Call { callee, args } = &e.kind else { return None };
        let op = AtomicOp::from_builtin(&callee.name)?;
        let hidden = self.lookup(&callee.name).is_some() || self.prog.functions.contains_key(&callee.name);
        (!hidden).then_some((op, args.as_slice()))
    }

    /// `atomic_<op>(place, value[, desired], scope: "...", order: "...")`. With `used` false the
    /// result is dropped: the instruction is `red` where PTX has it, and the call is `()`.
    pub(crate) fn atomic_call(&mut self, op: AtomicOp, args: &[Arg], span: Span, used: bool) -> R<Value> {
        let want = if op == AtomicOp::Cas { 3 } else { 2 };
        let positional: Vec<&Arg> = args.iter().filter(|a| a.name.is_none()).collect();
        if positional.len() != want || args.iter().take(want).any(|a| a.name.is_some()) {
            return Err(Diagnostic::error(
                format!("`{}` takes {want} positional arguments, then `scope:` and `order:` if any", op.builtin()),
                span,
                "wrong arguments",
            )
            .with_help(format!("write `{}`", usage(op))));
        }
        let (scope, order) = self.atomic_qualifiers(op, &args[want..])?;
        let place = &positional[0].value;
        if let Some(t) = self.whole_tensor(place)? {
            return self.atomic_add_fragment(op, t, positional[1], scope, order, span, used);
        }
        let (t, crd) = self.atomic_element(place)?;
        let elem = t.ty.elem;
        let first = self.expr(&positional[1].value)?;
        if let Value::Frag(ft, fid) = &first {
            return self.atomic_add_pair(op, (t, crd), (ft.clone(), *fid), (scope, order), place.span, span);
        }
        op.ptx_type(elem).map_err(|why| refused(op, elem, why, span))?;
        let mut operands = Vec::new();
        for (k, a) in positional[1..].iter().enumerate() {
            let v = if k == 0 { first.clone() } else { self.expr(&a.value)? };
            let v = self.coerce(v, elem, a.value.span).map_err(|d| {
                d.with_secondary(place.span, format!("expected `{}` because of this element", elem.name()))
            })?;
            operands.push(self.operand(&v, elem, a.value.span)?);
        }
        self.need_kernel(&format!("`{}`", op.builtin()), span)?;
        let (_, offset) = element_offset(&crd, &t.ty.layout, self.index_bits, place.span)?;
        let at = kir::At::Coord(cute_layout::expr::crd_value(&crd));
        if !self.predicated {
            self.require_access_in_bounds(&t.ty, &at, place.span);
        }
        let Origin::Kernel(tensor) = t.origin else { unreachable!("kernel tensors have kernel origins") };
        let dst = used.then(|| self.fresh(ValueTy::Scalar(elem)));
        let value = operands.pop().expect("the count was checked");
        let compare = operands.pop();
        self.emit(Inst::Atomic { dst, op, tensor, ty: t.ty, offset, value, compare, pair: false, scope, order, span });
        Ok(match dst {
            Some(d) if elem == Scalar::I32 => Value::Int(Int::var(d, 1)),
            Some(d) => Value::Scalar(elem, d),
            None => Value::Unit,
        })
    }

    /// `scope: "cta" | "cluster" | "gpu" | "sys"` (default gpu) and `order: "relaxed" | "acquire"
    /// | "release" | "acq_rel"` (default relaxed), as compile-time strings.
    fn atomic_qualifiers(&mut self, op: AtomicOp, named: &[Arg]) -> R<(MemScope, MemOrder)> {
        let (mut scope, mut order) = (MemScope::Gpu, MemOrder::Relaxed);
        for a in named {
            let Some(key) = &a.name else { continue };
            let v = self.expr(&a.value)?;
            let text = match &v {
                Value::Str(s) => s.clone(),
                other => {
                    return Err(Diagnostic::error(
                        format!("`{}:` is a string, found {}", key.name, crate::diag::article(&other.kind())),
                        a.value.span,
                        "not a string",
                    )
                    .with_help(format!("write `{}`", usage(op))))
                }
            };
            let bad = |what: &str, choices: &str| {
                Diagnostic::error(format!("`{text}` is not {what}"), a.value.span, format!("unknown {}", key.name))
                    .with_help(format!("`{}:` is one of {choices}", key.name))
            };
            match key.name.as_str() {
                "scope" => {
                    scope = MemScope::from_name(&text)
                        .ok_or_else(|| bad("an atomic scope", "\"cta\", \"cluster\", \"gpu\" (the default), \"sys\""))?
                }
                "order" => {
                    order = MemOrder::from_name(&text).ok_or_else(|| {
                        bad("a memory ordering", "\"relaxed\" (the default), \"acquire\", \"release\", \"acq_rel\"")
                    })?
                }
                other => {
                    return Err(Diagnostic::error(
                        format!("`{}` has no argument `{other}`", op.builtin()),
                        key.span,
                        "unknown argument",
                    )
                    .with_help(format!("write `{}`", usage(op))))
                }
            }
        }
        Ok((scope, order))
    }

    /// The atomic's element: `t[crd]` with a full coordinate of a global or shared tensor.
    fn atomic_element(&mut self, e: &Expr) -> R<(TensorVal, cute_layout::Crd)> {
        let not_element = |what: String| {
            Diagnostic::error(
                format!("an atomic acts on one tensor element, as in `out[i]`; found {what}"),
                e.span,
                "not an element",
            )
            .with_help("name the element the way a store does: `atomic_add(out[i], v)`")
        };
        let ExprKind::Index { base, index } = &e.kind else {
            let v = self.expr(e)?;
            return Err(not_element(crate::diag::article(&v.kind())));
        };
        let t = match self.expr(base)? {
            Value::Tensor(t) => t,
            other => return Err(not_element(crate::diag::article(&other.kind()))),
        };
        let crd = self.coordinate(index)?;
        check_rank(&crd, &t.ty.layout, e.span)?;
        if crd_has_under(&crd) {
            return Err(Diagnostic::error(
                "an atomic acts on one element: the coordinate cannot contain `_`",
                e.span,
                "a slice, not an element",
            )
            .with_help("give a full coordinate, as in `out[i, j]`; to add a whole f32 fragment, pass the tile itself: `atomic_add(tile, fragment)`"));
        }
        self.atomic_space(&t, e.span)?;
        Ok((t, crd))
    }

    /// Atomics act on memory other threads see: global or shared, not registers.
    fn atomic_space(&self, t: &TensorVal, span: Span) -> R<()> {
        if t.ty.space == MemSpace::Rmem {
            return Err(Diagnostic::error(
                "atomics act on global or shared memory; this is a register tensor",
                span,
                "rmem tensor",
            )
            .with_help("a register tensor belongs to one thread, so no atomic is needed: write `t[i] = t[i] + v`; to combine threads' values, use a shared tensor (`make_smem_tensor`) or global memory"));
        }
        Ok(())
    }

    /// The place when it is a whole tensor (not `t[crd]`) of more than one element: the vector form.
    fn whole_tensor(&mut self, e: &Expr) -> R<Option<TensorVal>> {
        if matches!(e.kind, ExprKind::Index { .. }) {
            return Ok(None);
        }
        match self.expr(e)? {
            Value::Tensor(t) => Ok(Some(t)),
            _ => Ok(None),
        }
    }

    /// `atomic_add(tile, fragment)`: the fragment added element-wise into a global tile of its
    /// element type and static size, one `red` per run of contiguous aligned elements: 4 f32
    /// (`red.global.add.v4.f32`), 8 f16/bf16 (`.noftz.v4.f16x2`) or a pair (`.noftz.f16x2`).
    #[allow(clippy::too_many_arguments)]
    fn atomic_add_fragment(
        &mut self,
        op: AtomicOp,
        t: TensorVal,
        value: &Arg,
        scope: MemScope,
        order: MemOrder,
        span: Span,
        used: bool,
    ) -> R<Value> {
        let help = "`atomic_add(tile, fragment)` adds a fragment of f32, f16 or bf16 values into a global tile of the same type and size: 4 contiguous f32 per `red.global.add.v4.f32`, 8 (or a pair) of f16/bf16 per `red.global.add.noftz.v4.f16x2` (`.f16x2`); for one element write `atomic_add(out[i], v)`";
        let fail = |msg: String, label: &str| Err(Diagnostic::error(msg, span, label).with_help(help));
        if op != AtomicOp::Add {
            return fail(
                format!(
                    "`{}` acts on one element, as in `out[i]`; only `atomic_add` takes a tile and a fragment",
                    op.builtin()
                ),
                "a tile, not an element",
            );
        }
        if used {
            return fail(
                "`atomic_add` of a fragment gives no result (it is a `red`): call it as a statement".into(),
                "result used",
            );
        }
        if !order.allows_red() {
            return fail(
                format!("`red` has no `{}` ordering: a fragment `atomic_add` is relaxed or release", order.name()),
                "ordering",
            );
        }
        let v = self.expr(&value.value)?;
        let Value::Frag(ft, fid) = v else {
            return fail(
                format!("a tile takes a fragment (from `.load()`), found {}", crate::diag::article(&v.kind())),
                "not a fragment",
            );
        };
        let n = t.ty.layout.size().ok().and_then(|s| s.as_static());
        if t.ty.space != MemSpace::Gmem
            || t.ty.elem != ft.elem
            || !matches!(ft.elem, Scalar::F32 | Scalar::F16 | Scalar::BF16)
        {
            return fail(
                format!("the fragment `red` adds f32, f16 or bf16 fragments into global tensors of the same type; this is a fragment of {} into {}", ft.elem.name(), t.ty),
                "not f32, f16 or bf16 into global memory of its type",
            );
        }
        let form = match red_fragment_for(t.ty.elem, &t.ty.layout, t.ty.align) {
            Ok(form) => form,
            Err(why) => {
                return fail(
                    format!(
                        "the tile's layout {} with {}-byte alignment cannot take a fragment `red`: {why}",
                        t.ty.layout, t.ty.align
                    ),
                    "not vectorizable",
                )
            }
        };
        if n != Some(ft.len() as i64) || ft.len() % form.elems != 0 {
            return fail(
                format!("a fragment of {} elements into a tile of layout {}: both must have the same size, a multiple of {} (the elements of one `red.global.add.{}`)", ft.len(), t.ty.layout, form.elems, form.ty),
                "sizes",
            );
        }
        self.need_kernel("`atomic_add`", span)?;
        let Origin::Kernel(tensor) = t.origin else { unreachable!("kernel tensors have kernel origins") };
        self.emit(Inst::AtomicAddFrag { value: fid, tensor, ty: t.ty, scope, order, span });
        Ok(Value::Unit)
    }
}

impl Frame<'_, '_> {
    /// `let old = atomic_add(t[i], pair)`: a fragment of two f16 or bf16 values added into the
    /// element `t[i]` and the next one as one packed `atom.add.noftz.f16x2`/`.bf16x2`, giving the
    /// old pair. The two elements must be contiguous and 4-byte aligned, as proven statically.
    fn atomic_add_pair(
        &mut self,
        op: AtomicOp,
        (t, crd): (TensorVal, cute_layout::Crd),
        (ft, fid): (kir::FragTy, kir::ValueId),
        (scope, order): (MemScope, MemOrder),
        place: Span,
        span: Span,
    ) -> R<Value> {
        let elem = t.ty.elem;
        let fail = |msg: String, label: &str| {
            Err(Diagnostic::error(msg, span, label).with_help(
                "`let old = atomic_add(t[i], pair)` adds a 2-element f16 or bf16 fragment (`make_fragment(2, f16)`) into `t[i]` and `t[i + 1]`, which must be contiguous and 4-byte aligned (an even `i` of a unit-stride tensor); for one element pass a scalar",
            ))
        };
        let Some(ptx_type) = add_pair_ptx_type(elem).filter(|_| op == AtomicOp::Add) else {
            return fail(
                format!(
                    "`{}` of a fragment into one element: only `atomic_add` adds a packed f16 or bf16 pair",
                    op.builtin()
                ),
                "not a packed pair",
            );
        };
        if ft.elem != elem || ft.len() != 2 {
            return fail(
                format!(
                    "a packed `atomic_add` adds a fragment of 2 `{}` values; this is a fragment of {} `{}`",
                    elem.name(),
                    ft.len(),
                    ft.elem.name()
                ),
                "not a pair",
            );
        }
        let (_, offset) = element_offset(&crd, &t.ty.layout, self.index_bits, place)?;
        // The layout holds aligned runs of at least 2 and the element's offset starts one.
        let runs = cute_layout::vector_width(&t.ty.layout, t.ty.align, elem.size_bytes()).unwrap_or(1);
        let aligned = offset_alignment(t.ty.align, &offset, elem.size_bytes()) >= 4;
        if runs < 2 || !aligned {
            return fail(
                format!("`atom.global.add.{ptx_type}` adds 2 contiguous, 4-byte-aligned elements; in layout {} with {}-byte alignment the tensor is proven to hold {runs} contiguous, aligned element(s) per access and the element's offset `{offset}` is {}", t.ty.layout, t.ty.align, if aligned { "4-byte aligned" } else { "not proven even" }),
                "not a 4-byte-aligned pair",
            );
        }
        self.need_kernel("`atomic_add`", span)?;
        let at = kir::At::Coord(cute_layout::expr::crd_value(&crd));
        if !self.predicated {
            self.require_access_in_bounds(&t.ty, &at, place);
        }
        let Origin::Kernel(tensor) = t.origin else { unreachable!("kernel tensors have kernel origins") };
        let dst = self.fresh(ValueTy::Frag(ft.clone()));
        let value = kir::Operand::Value(fid);
        self.emit(Inst::Atomic {
            dst: Some(dst),
            op,
            tensor,
            ty: t.ty,
            offset,
            value,
            compare: None,
            pair: true,
            scope,
            order,
            span,
        });
        Ok(Value::Frag(ft, dst))
    }
}

fn refused(op: AtomicOp, elem: Scalar, why: String, span: Span) -> Diagnostic {
    let help = match (op, elem.is_float()) {
        (AtomicOp::Min | AtomicOp::Max, true) => format!(
            "loop on `atomic_cas` of the element: read it, compute the {} and swap it in until no other thread changed it first",
            op.name()
        ),
        (AtomicOp::And | AtomicOp::Or | AtomicOp::Xor, true) => "use an integer tensor (`recast(u32, t)` views f32 bits as u32)".to_string(),
        _ => "atomics act on i32, u32, i64, u64, f32 and f64 elements (`atomic_add` also on f16 and bf16): store the values in one of those types".to_string(),
    };
    Diagnostic::error(format!("`{}` on `{}` elements: {why}", op.builtin(), elem.name()), span, "no such atomic")
        .with_help(help)
}
