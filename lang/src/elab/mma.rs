//! Tensor-core builtins: MMA atoms, tiled MMAs, their thread slices' partitions and fragments, and
//! `gemm`, with CuTe DSL's names and semantics.
//!
//! The TV layouts and partitions come from `cute_layout::mma`, the one definition the verifier also
//! uses. `gemm` unrolls CuTe's loop over the fragments' (M, N, K) modes into one `Inst::Mma` per atom
//! call, on register fragments sliced from the register tensors.

use super::builtins::alloc;
use super::builtins::args::{arity, named, positional, Arg};
use super::value::{Origin, TensorVal, Value};
use super::{layout_err, Frame, R};
use crate::diag::Diagnostic;
use crate::kir::{CopyOp, FragTy, Inst, ValueTy, ViewHow};
use crate::span::Span;
use crate::types::{MemSpace, Scalar};
use cute_layout::{Crd, Int, Layout, MmaAtom, MmaOperand, TiledMma};

fn article(v: &Value) -> String {
    crate::diag::article(&v.kind())
}

/// Three static positive integers: an (M,N,K) shape, an atom layout or a permutation's sizes. A
/// rank-2 tuple gets K = 1, as CuTe pads atom layouts.
fn mnk(a: &Arg, what: &str) -> R<[i64; 3]> {
    let items: Vec<Value> = match &a.value {
        Value::Tuple(items) => items.clone(),
        Value::Layout(l) => {
            if Layout::col_major(l.shape.clone()).ok().as_ref() != Some(l) {
                return Err(Diagnostic::error(
                    format!("{what} must be a column-major layout, found {l}"),
                    a.span,
                    "not column-major",
                )
                .with_help("write the extents only, e.g. `(2, 2, 1)`: other thread orders are not supported yet"));
            }
            l.shape.modes().into_iter().map(|m| m.as_int().cloned().map(Value::Int).unwrap_or(Value::Unit)).collect()
        }
        other => {
            return Err(Diagnostic::error(
                format!("{what} is a tuple (M, N, K), found {}", article(other)),
                a.span,
                "not a tuple",
            ))
        }
    };
    let mut out = [1i64; 3];
    if !(2..=3).contains(&items.len()) {
        return Err(Diagnostic::error(
            format!("{what} has {} modes; it takes (M, N, K)", items.len()),
            a.span,
            "wrong rank",
        ));
    }
    for (slot, v) in out.iter_mut().zip(&items) {
        match v {
            Value::Int(i) if i.as_static().is_some_and(|x| x > 0) => *slot = i.as_static().unwrap_or(1),
            other => {
                return Err(Diagnostic::error(
                    format!("{what} needs positive compile-time integers, found {}", article(other)),
                    a.span,
                    "not static",
                ))
            }
        }
    }
    Ok(out)
}

fn type_arg(a: &Arg, what: &str) -> R<Scalar> {
    match a.value {
        Value::Type(t) => Ok(t),
        ref other => {
            Err(Diagnostic::error(format!("{what} is an element type, found {}", article(other)), a.span, "not a type"))
        }
    }
}

/// `make_mma_atom(ab_type, acc_type, (M, N, K))` (CuTe DSL's `make_mma_atom(MmaF16BF16Op(ab, acc,
/// shape))` for SM80): the `mma.sync` instruction for those types and shape (tf32 inputs too).
/// `a_src: "rmem"` (CuTe DSL's `a_src=OperandSource.RMEM`) picks a wgmma shape's RS atom, A from
/// registers; `"smem"` (the default) the SS atom. `b_type:` gives B another input type than A (the
/// FP8 wgmma atoms mix `f8e4m3` and `f8e5m2`, CuTe's `SM90_64xNx32_F32E4M3E5M2_SS_TN`).
pub fn make_mma_atom(args: &[Arg], span: Span) -> R<Value> {
    let usage = "make_mma_atom(ab_type, acc_type, shape: (M, N, K)[, op: \"mma.sync\" | \"wgmma\"][, a_src: \"smem\" | \"rmem\"][, b_type: type])";
    const NAMES: &[&str] = &["shape", "op", "a_src", "b_type"];
    arity("make_mma_atom", args, 2, 6, span, usage)?;
    let b_ty = named("make_mma_atom", args, "b_type", NAMES)?.map(|a| type_arg(a, "`b_type`")).transpose()?;
    let a_src = match named("make_mma_atom", args, "a_src", NAMES)? {
        None => None,
        Some(a) => match &a.value {
            Value::Str(s) if s == "rmem" || s == "smem" => Some((s == "rmem", a.span)),
            other => {
                let found = if let Value::Str(s) = other { format!("\"{s}\"") } else { article(other) };
                return Err(Diagnostic::error(format!("`a_src` says where a wgmma reads A from: \"smem\" (a matrix descriptor, the default) or \"rmem\" (registers); found {found}"), a.span, "unknown operand source")
                    .with_help("CuTe DSL's `a_src=OperandSource.RMEM` is `a_src: \"rmem\"`"));
            }
        },
    };
    let want_op = match named("make_mma_atom", args, "op", NAMES)? {
        None => None,
        Some(a) => match &a.value {
            Value::Str(s) if s == "wgmma" || s == "mma.sync" => Some((s.clone(), a.span)),
            other => {
                return Err(Diagnostic::error(
                    format!(
                    "`op` picks the instruction: \"mma.sync\" (a warp) or \"wgmma\" (a warpgroup, sm_90a); found {}",
                    article(other)
                ),
                    a.span,
                    "unknown MMA instruction",
                ))
            }
        },
    };
    let p = positional(args);
    let ab = type_arg(p[0], "the input type")?;
    let acc = type_arg(
        p.get(1)
            .copied()
            .ok_or_else(|| Diagnostic::error(format!("usage: {usage}"), span, "missing accumulator type"))?,
        "the accumulator type",
    )?;
    let shape = match (p.get(2).copied(), named("make_mma_atom", args, "shape", NAMES)?) {
        (Some(s), _) | (None, Some(s)) => mnk(s, "the MMA shape")?,
        (None, None) => {
            return Err(Diagnostic::error("`make_mma_atom` needs the instruction shape", span, "no shape")
                .with_help("e.g. `make_mma_atom(bf16, f32, shape: (16, 8, 16))`"))
        }
    };
    let b_name = b_ty.map_or(ab.name(), |t| t.name());
    let atom = MmaAtom::find_mixed(ab.name(), b_name, acc.name(), shape)
        .map_err(|e| Diagnostic::error(e.reason.clone(), span, "no such MMA atom"))?;
    if let Some((op, op_span)) = want_op {
        let is = if atom.is_wgmma() { "wgmma" } else { "mma.sync" };
        if op != is {
            return Err(Diagnostic::error(format!("the shape ({},{},{}) is an {is} atom ({}), not {op}", shape[0], shape[1], shape[2], atom.name), op_span, "instruction and shape disagree")
                .with_help("wgmma atoms are (64, N, 16) (64, N, 32 for FP8) with N a multiple of 8 up to 256; mma.sync atoms are (16, 8, 16) and (16, 8, 8)"));
        }
    }
    if let Some((true, src_span)) = a_src {
        // Only wgmma has an A-from-registers variant (mma.sync reads every operand from registers).
        let rs = MmaAtom::find_rs_mixed(ab.name(), b_name, acc.name(), shape).map_err(|e| {
            Diagnostic::error(e.reason.clone(), src_span, "not a wgmma atom").with_help(
                "`a_src: \"rmem\"` is for wgmma shapes (64, N, 16) (64, N, 32 for FP8); leave it out for mma.sync",
            )
        })?;
        return Ok(Value::MmaAtom(rs));
    }
    Ok(Value::MmaAtom(atom))
}

/// `make_tiled_mma(atom, atom_layout[, permutation: (M, N, K)])`.
pub fn make_tiled_mma(args: &[Arg], span: Span) -> R<Value> {
    arity("make_tiled_mma", args, 2, 3, span, "make_tiled_mma(mma_atom, atom_layout, permutation: (M, N, K))")?;
    let p = positional(args);
    let Value::MmaAtom(atom) = &p[0].value else {
        return Err(Diagnostic::error(
            format!("`make_tiled_mma` takes an MMA atom first, found {}", article(&p[0].value)),
            p[0].span,
            "not an MMA atom",
        )
        .with_help("make one with `make_mma_atom(bf16, f32, shape: (16, 8, 16))`"));
    };
    let layout = mnk(p[1], "the atom layout")?;
    let perm = match (p.get(2).copied(), named("make_tiled_mma", args, "permutation", &["permutation"])?) {
        (Some(s), _) | (None, Some(s)) => Some(mnk(s, "the permutation")?),
        (None, None) => None,
    };
    TiledMma::new(atom, layout, perm).map(Value::TiledMma).map_err(|e| layout_err(e, span))
}

fn operand_of(method: &str) -> Option<MmaOperand> {
    MmaOperand::parse(method.strip_prefix("partition_fragment_").or_else(|| method.strip_prefix("partition_"))?)
}

/// The methods of a tiled MMA's thread slice.
pub const THR_MMA_METHODS: &[&str] = &[
    "partition_A",
    "partition_B",
    "partition_C",
    "partition_fragment_A",
    "partition_fragment_B",
    "partition_fragment_C",
];

/// `thr_mma.partition_A(t)` (a view of `t`) and `thr_mma.partition_fragment_A(t)` (a register tensor
/// shaped like that view, of the atom's element type), and B, C alike.
pub fn thr_mma_method(f: &mut Frame, tiled: &TiledMma, tid: &Int, method: &str, args: &[Arg], span: Span) -> R<Value> {
    let op = operand_of(method).ok_or_else(|| {
        Diagnostic::error(format!("no method `{method}` on a thread slice of a tiled MMA"), span, "unknown method")
    })?;
    arity(method, args, 1, 1, span, &format!("thr_mma.{method}(tensor)"))?;
    let a = positional(args)[0];
    let fragment = method.starts_with("partition_fragment_");
    let (layout, tensor) = match &a.value {
        Value::Tensor(t) => (t.ty.layout.clone(), Some(t.clone())),
        Value::Counting { layout, .. } => (layout.clone(), None),
        // A fragment only needs the shape: a layout will do, as CuTe's partition_fragment_C(shape).
        Value::Layout(l) if fragment => (l.clone(), None),
        other => {
            return Err(Diagnostic::error(
                format!(
                    "`{method}` takes a tensor{}, found {}",
                    if fragment { " or a layout" } else { "" },
                    article(other)
                ),
                a.span,
                "not a tensor",
            ))
        }
    };
    if layout.rank() < 2 {
        return Err(Diagnostic::error(
            format!(
                "`{method}` takes a tensor whose first two modes are {} of the MMA, found layout {layout}",
                op_modes(op)
            ),
            a.span,
            "rank below 2",
        ));
    }
    if tensor.is_some() {
        let [tp, tq] = tiled.tile_of(op);
        f.require_tiles_divide(
            &layout,
            &cute_layout::Tiler::Shape(cute_layout::IntTuple::Tuple(vec![tp.into(), tq.into()])),
            span,
        )?;
    }
    let (part, offset) = tiled.partition(op, &layout, tid).map_err(|e| layout_err(e, span))?;
    // A wgmma SS atom reads A and B from shared memory (an RS atom B only): their "fragment" is
    // the shared-memory partition itself (CuTe's make_fragment_A gives matrix descriptors over it;
    // here the descriptors are made where the wgmma is lowered). An RS atom's A fragment is
    // registers, as for mma.sync.
    let smem_operand = tiled.atom.reads_smem(op);
    if fragment && smem_operand {
        match &tensor {
            Some(t) if t.ty.space == MemSpace::Smem => {}
            _ => {
                let found = tensor
                    .as_ref()
                    .map(|t| format!("a tensor in {}", t.ty.space.name()))
                    .unwrap_or_else(|| article(&a.value));
                let help = if op == MmaOperand::A {
                    "partition the shared-memory tile, or take A from registers with an RS atom: `make_mma_atom(..., op: \"wgmma\", a_src: \"rmem\")`"
                } else {
                    "partition the shared-memory tile: wgmma reads B from shared memory always"
                };
                return Err(Diagnostic::error(
                    format!(
                        "{} reads {} from shared memory (matrix descriptors), but `{method}` got {found}",
                        tiled.atom.name,
                        op.name()
                    ),
                    a.span,
                    "not shared memory",
                )
                .with_help(help));
            }
        }
    }
    if fragment && !smem_operand {
        let elem = Scalar::from_name(tiled.atom.elem(op)).unwrap_or(Scalar::F32);
        // tf32 operands live in 32-bit registers as f32 values, as in CuTe.
        let elem = if elem == Scalar::TF32 { Scalar::F32 } else { elem };
        let compact = Layout::col_major(part.shape.clone()).map_err(|e| layout_err(e, span))?;
        return alloc(f, elem, MemSpace::Rmem, compact, span);
    }
    let how = ViewHow::MmaPartition { operand: op, tiled: tiled.clone(), tid: tid.clone() };
    let _ = fragment;
    match (tensor, &a.value) {
        (Some(t), _) => Ok(Value::Tensor(f.view(&t, part, offset, how, span)?)),
        (None, Value::Counting { origin, .. }) => {
            Ok(Value::Counting { layout: part, origin: origin.add(&offset).map_err(|e| layout_err(e, span))? })
        }
        _ => Err(Diagnostic::error("internal error: partition of a non-tensor", span, "here")),
    }
}

fn op_modes(op: MmaOperand) -> &'static str {
    match op {
        MmaOperand::A => "(M, K)",
        MmaOperand::B => "(N, K)",
        MmaOperand::C => "(M, N)",
    }
}

/// A register tensor argument of `gemm`, with its static mode sizes.
struct Frag<'a> {
    t: &'a TensorVal,
    sizes: [i64; 3],
    /// A one-k-block operand `(V, M)`: sliced by `(_, m)`.
    rank2: bool,
    span: Span,
}

fn gemm_operand<'a>(a: &'a Arg, op: MmaOperand, atom: &MmaAtom, what: &str) -> R<Frag<'a>> {
    let Value::Tensor(t) = &a.value else {
        return Err(Diagnostic::error(
            format!("`gemm` takes register tensors, found {} for {what}", article(&a.value)),
            a.span,
            "not a tensor",
        ));
    };
    if t.ty.space != MemSpace::Rmem {
        let with = if atom.is_wgmma() { atom.name.to_string() } else { "an mma.sync atom".to_string() };
        return Err(Diagnostic::error(
            format!("`gemm` with {with} reads {what} from registers, but this tensor is in {}", t.ty.space.name()),
            a.span,
            "not in registers",
        )
        .with_help(format!("copy it into `thr_mma.partition_fragment_{}(...)` first", op.name())));
    }
    let want = Scalar::from_name(atom.elem(op)).unwrap_or(Scalar::F32);
    let ok = t.ty.elem == want || (want == Scalar::TF32 && t.ty.elem == Scalar::F32);
    if !ok {
        return Err(Diagnostic::error(
            format!("{what} holds {} but {} takes {}", t.ty.elem.name(), atom.name, want.name()),
            a.span,
            "wrong element type",
        )
        .with_help(format!("convert with `.to({})` or pick an atom for {}", want.name(), t.ty.elem.name())));
    }
    let modes = t.ty.layout.modes();
    let mut sizes: Vec<i64> = modes.iter().map(|m| m.size().ok().and_then(|s| s.as_static()).unwrap_or(-1)).collect();
    // A and B may be one k-block, (V, M) and (V, N), as CuTe's gemm takes them: K = 1.
    let rank2 = sizes.len() == 2 && op != MmaOperand::C;
    if rank2 {
        sizes.push(1);
    }
    if sizes.len() != 3 || sizes.iter().any(|&s| s <= 0) {
        return Err(Diagnostic::error(
            format!(
                "{what} must be a static fragment (V, {}) (A and B may leave out K), found layout {}",
                &op_modes(op)[1..op_modes(op).len() - 1],
                t.ty.layout
            ),
            a.span,
            "not (V, _, _)",
        ));
    }
    if sizes[0] != atom.values(op) {
        return Err(Diagnostic::error(
            format!(
                "{what}'s first mode holds {} values, but one {} {} fragment is {}",
                sizes[0],
                atom.name,
                op.name(),
                atom.values(op)
            ),
            a.span,
            "wrong fragment size",
        )
        .with_help(format!("partition with the tiled MMA: `thr_mma.partition_fragment_{}(...)`", op.name())));
    }
    Ok(Frag { t, sizes: [sizes[0], sizes[1], sizes[2]], rank2, span: a.span })
}

/// `gemm(tiled_mma, d, a, b, c)` (D = A·B + C) or `gemm(tiled_mma, acc, a, b)` (acc += A·B): one atom
/// call per (m, n, k) of the fragments' modes, k outermost, as CuTe's `gemm` on register fragments.
pub fn gemm(f: &mut Frame, args: &[Arg], span: Span) -> R<Value> {
    arity("gemm", args, 4, 5, span, "gemm(tiled_mma, d, a, b, c) or gemm(tiled_mma, acc, a, b)")?;
    f.need_kernel("`gemm`", span)?;
    let p = positional(args);
    let Value::TiledMma(tiled) = &p[0].value else {
        return Err(Diagnostic::error(
            format!("`gemm` takes a tiled MMA first, found {}", article(&p[0].value)),
            p[0].span,
            "not a tiled MMA",
        ));
    };
    let atom = &tiled.atom;
    let accumulate = named("gemm", args, "accumulate", &["accumulate"])?;
    if atom.is_wgmma() {
        return wgmma_gemm(f, tiled, p, accumulate, span);
    }
    if let Some(a) = accumulate {
        return Err(Diagnostic::error(
            format!("`accumulate:` is a wgmma option (scale-d); {} always adds to C", atom.name),
            a.span,
            "not a wgmma atom",
        )
        .with_help("clear the accumulators with `fill(0.0)` instead"));
    }
    let (d, a, b, c) = if p.len() == 5 { (p[1], p[2], p[3], p[4]) } else { (p[1], p[2], p[3], p[1]) };
    let d = gemm_operand(d, MmaOperand::C, atom, "D")?;
    let a = gemm_operand(a, MmaOperand::A, atom, "A")?;
    let b = gemm_operand(b, MmaOperand::B, atom, "B")?;
    let c = gemm_operand(c, MmaOperand::C, atom, "C")?;
    let (m, n, k) = (a.sizes[1], b.sizes[1], a.sizes[2]);
    let checks = [
        (b.sizes[2], k, &b, "B's K mode", "A's"),
        (c.sizes[1], m, &c, "C's M mode", "A's"),
        (c.sizes[2], n, &c, "C's N mode", "B's"),
        (d.sizes[1], m, &d, "D's M mode", "A's"),
        (d.sizes[2], n, &d, "D's N mode", "B's"),
    ];
    for (got, want, frag, what, other) in checks {
        if got != want {
            return Err(Diagnostic::error(
                format!("{what} has {} but {other} has {want}", crate::diag::count(got as usize, "atom")),
                frag.span,
                "shapes do not match",
            )
            .with_secondary(span, "in this gemm"));
        }
    }
    let slice = |f: &mut Frame, fr: &Frag, i: i64, j: i64| -> R<(TensorVal, FragTy)> {
        let crd = if fr.rank2 {
            Crd::Tuple(vec![Crd::Under, Crd::Int(Int::S(i))])
        } else {
            Crd::Tuple(vec![Crd::Under, Crd::Int(Int::S(i)), Crd::Int(Int::S(j))])
        };
        let view = f.slice(fr.t, &crd, span)?;
        let ft = FragTy { elem: view.ty.elem, shape: view.ty.layout.shape.clone() };
        Ok((view, ft))
    };
    let load = |f: &mut Frame, fr: &Frag, i: i64, j: i64| -> R<u32> {
        let (view, ft) = slice(f, fr, i, j)?;
        let Origin::Kernel(vid) = view.origin else {
            return Err(Diagnostic::error("internal error: host tensor in gemm", span, "here"));
        };
        let dst = f.fresh(ValueTy::Frag(ft));
        f.emit(Inst::LoadFrag { dst, tensor: vid, ty: view.ty, span });
        Ok(dst)
    };
    for kk in 0..k {
        let a_frags: Vec<u32> = (0..m).map(|mm| load(f, &a, mm, kk)).collect::<R<_>>()?;
        let b_frags: Vec<u32> = (0..n).map(|nn| load(f, &b, nn, kk)).collect::<R<_>>()?;
        for (mm, a_frag) in a_frags.iter().enumerate() {
            // Serpentine over N, as CuTe does, so consecutive atoms share an operand register.
            let order: Vec<i64> = if mm % 2 == 0 { (0..n).collect() } else { (0..n).rev().collect() };
            for nn in order {
                // The first k-block adds to C; later ones accumulate into D.
                let src = if kk == 0 { &c } else { &d };
                let c_frag = load(f, src, mm as i64, nn)?;
                let (view, ft) = slice(f, &d, mm as i64, nn)?;
                let dst = f.fresh(ValueTy::Frag(ft.clone()));
                f.emit(Inst::Mma { dst, atom, a: *a_frag, b: b_frags[nn as usize], c: c_frag, span });
                f.store_frag(&view, &ft, dst, span)?;
            }
        }
    }
    Ok(Value::Unit)
}

/// A shared-memory operand of a wgmma `gemm`: `(MMA, MMA_M, MMA_K)` (or one k-block `(MMA,
/// MMA_M)`), its first mode one atom's whole (rows, K) tile.
fn wgmma_smem_operand<'a>(a: &'a Arg, op: MmaOperand, atom: &MmaAtom, what: &str) -> R<Frag<'a>> {
    let Value::Tensor(t) = &a.value else {
        return Err(Diagnostic::error(
            format!("`gemm` takes tensors, found {} for {what}", article(&a.value)),
            a.span,
            "not a tensor",
        ));
    };
    if t.ty.space != MemSpace::Smem {
        let help = if op == MmaOperand::A {
            "pass `thr_mma.partition_A(sA)` (or `partition_fragment_A`) of a shared tile, or take A from registers with an RS atom (`a_src: \"rmem\"`)".to_string()
        } else {
            format!(
                "pass `thr_mma.partition_{}(s{})` (or `partition_fragment_{}`) of a shared tile",
                op.name(),
                op.name(),
                op.name()
            )
        };
        return Err(Diagnostic::error(
            format!("{} reads {what} from shared memory, but this tensor is in {}", atom.name, t.ty.space.name()),
            a.span,
            "not in shared memory",
        )
        .with_help(help));
    }
    let want = Scalar::from_name(atom.elem(op)).unwrap_or(Scalar::F32);
    if t.ty.elem != want {
        return Err(Diagnostic::error(
            format!("{what} holds {} but {} takes {}", t.ty.elem.name(), atom.name, want.name()),
            a.span,
            "wrong element type",
        ));
    }
    let modes = t.ty.layout.modes();
    let mut sizes: Vec<i64> = modes.iter().map(|m| m.size().ok().and_then(|s| s.as_static()).unwrap_or(-1)).collect();
    let rank2 = sizes.len() == 2;
    if rank2 {
        sizes.push(1);
    }
    if sizes.len() != 3 || sizes.iter().any(|&s| s <= 0) {
        return Err(Diagnostic::error(
            format!(
                "{what} must be a static partition (MMA, {}) (or one k-block), found layout {}",
                &op_modes(op)[1..op_modes(op).len() - 1],
                t.ty.layout
            ),
            a.span,
            "not (MMA, _, _)",
        )
        .with_help("slice the pipeline stage first: `tCsA[_, _, _, stage]`"));
    }
    if sizes[0] != atom.values(op) {
        return Err(Diagnostic::error(
            format!(
                "{what}'s first mode holds {} elements, but one {} {} tile is {}",
                sizes[0],
                atom.name,
                op.name(),
                atom.values(op)
            ),
            a.span,
            "wrong tile size",
        )
        .with_help(format!("partition with the tiled MMA: `thr_mma.partition_{}(...)`", op.name())));
    }
    Ok(Frag { t, sizes: [sizes[0], sizes[1], sizes[2]], rank2, span: a.span })
}

/// `gemm` with a wgmma atom: one `wgmma.mma_async` per (m, n, k) of the partitions, k outermost,
/// A and B read from shared memory (an RS atom: A from a register fragment), the accumulators in
/// registers. Asynchronous: the caller brackets it with `warpgroup_fence()` before and
/// `warpgroup_commit_group()` / `warpgroup_wait_group(n)` after, as in CuTe; an RS atom's A
/// registers, like the accumulators, are written before that fence and kept until that wait.
fn wgmma_gemm(f: &mut Frame, tiled: &TiledMma, p: Vec<&Arg>, accumulate: Option<&Arg>, span: Span) -> R<Value> {
    let atom = tiled.atom;
    // `accumulate: false` (CuTe DSL's `tiled_mma.set(Field.ACCUMULATE, False)`, C++'s
    // `accumulate_ = GMMA::ScaleOut::Zero`): the first k-block overwrites the accumulators.
    let scale_d = match accumulate {
        None => None,
        Some(a) => {
            let v = f.coerce(a.value.clone(), Scalar::Bool, a.span)?;
            match f.operand(&v, Scalar::Bool, a.span)? {
                crate::kir::Operand::Bool(true) => None,
                other => Some(other),
            }
        }
    };
    if p.len() == 5 {
        let same = matches!((&p[1].value, &p[4].value), (Value::Tensor(d), Value::Tensor(c)) if d == c);
        if !same {
            return Err(Diagnostic::error(
                "a wgmma accumulates in place: `gemm(tiled_mma, d, a, b, c)` needs `c` to be `d`",
                p[4].span,
                "not the accumulator",
            )
            .with_help("write `gemm(tiled_mma, acc, a, b)`"));
        }
    }
    let d = gemm_operand(p[1], MmaOperand::C, atom, "the accumulator")?;
    let a_regs = !atom.reads_smem(MmaOperand::A);
    let a = if a_regs {
        gemm_operand(p[2], MmaOperand::A, atom, "A")?
    } else {
        wgmma_smem_operand(p[2], MmaOperand::A, atom, "A")?
    };
    let b = wgmma_smem_operand(p[3], MmaOperand::B, atom, "B")?;
    let (m, n, k) = (a.sizes[1], b.sizes[1], a.sizes[2]);
    let checks = [
        (b.sizes[2], k, &b, "B's K mode", "A's"),
        (d.sizes[1], m, &d, "the accumulator's M mode", "A's"),
        (d.sizes[2], n, &d, "the accumulator's N mode", "B's"),
    ];
    for (got, want, frag, what, other) in checks {
        if got != want {
            return Err(Diagnostic::error(
                format!("{what} has {} but {other} has {want}", crate::diag::count(got as usize, "atom")),
                frag.span,
                "shapes do not match",
            )
            .with_secondary(span, "in this gemm"));
        }
    }
    let crd = |fr: &Frag, i: i64, j: i64| {
        if fr.rank2 {
            Crd::Tuple(vec![Crd::Under, Crd::Int(Int::S(i))])
        } else {
            Crd::Tuple(vec![Crd::Under, Crd::Int(Int::S(i)), Crd::Int(Int::S(j))])
        }
    };
    let kernel_id = |t: &TensorVal| match t.origin {
        Origin::Kernel(vid) => Ok(vid),
        _ => Err(Diagnostic::error("internal error: host tensor in gemm", span, "here")),
    };
    // The tiles must be in a layout the matrix descriptors can express, K- or MN-major (every tile of a partition
    // has the same layout; where each starts is checked when the descriptors are made).
    let smem_operands: &[(&Frag, MmaOperand)] =
        if a_regs { &[(&b, MmaOperand::B)] } else { &[(&a, MmaOperand::A), (&b, MmaOperand::B)] };
    for &(fr, op) in smem_operands {
        let tile = f.slice(fr.t, &crd(fr, 0, 0), span)?;
        let l = &tile.ty.layout;
        let l = if l.rank() == 1 { l.mode(0).map_err(|e| layout_err(e, span))? } else { l.clone() };
        if let Err(e) = cute_layout::gmma::operand_desc(&l, tile.ty.swizzle, tile.ty.elem.size_bytes(), op.name()) {
            return Err(Diagnostic::error(format!("{}: {}", atom.name, e.reason), fr.span, "not a wgmma shared-memory layout")
                .with_help("lay the tile out with CuTe's K-major GMMA atom, e.g. `tile_to_shape(composition(make_swizzle(3, 3, 3), make_layout((8, 64), stride: (64, 1))), (ROWS, 64))` for 16-bit elements (128-byte rows; `make_swizzle(2, 3, 3)` with (8, 32) and `make_swizzle(1, 3, 3)` with (8, 16) for 64 and 32 bytes), or, for 16-bit elements, its MN-major one (M-major A, N-major B): `tile_to_shape(composition(make_swizzle(3, 3, 3), make_layout((64, 8), stride: (1, 64))), (ROWS, 64), order: (1, 0))` ((32, 8) and (16, 8) for 64 and 32 bytes)"));
        }
    }
    for kk in 0..k {
        for mm in 0..m {
            // An RS atom's A fragment: loaded once, shared by the N atoms of this (m, k).
            let a_frag = if a_regs {
                let av = f.slice(a.t, &crd(&a, mm, kk), span)?;
                let ft = FragTy { elem: av.ty.elem, shape: av.ty.layout.shape.clone() };
                let dst = f.fresh(ValueTy::Frag(ft));
                f.emit(Inst::LoadFrag { dst, tensor: kernel_id(&av)?, ty: av.ty.clone(), span });
                Some(dst)
            } else {
                None
            };
            for nn in 0..n {
                let (a_id, a_ty) = match a_frag {
                    Some(id) => (id, None),
                    None => {
                        let av = f.slice(a.t, &crd(&a, mm, kk), span)?;
                        (kernel_id(&av)?, Some(av.ty.clone()))
                    }
                };
                let bv = f.slice(b.t, &crd(&b, nn, kk), span)?;
                let cv =
                    f.slice(d.t, &Crd::Tuple(vec![Crd::Under, Crd::Int(Int::S(mm)), Crd::Int(Int::S(nn))]), span)?;
                let ft = FragTy { elem: cv.ty.elem, shape: cv.ty.layout.shape.clone() };
                let c = f.fresh(ValueTy::Frag(ft.clone()));
                f.emit(Inst::LoadFrag { dst: c, tensor: kernel_id(&cv)?, ty: cv.ty.clone(), span });
                let dst = f.fresh(ValueTy::Frag(ft.clone()));
                // Only the first k-block may overwrite; the later ones add to it.
                let scale_d = if kk == 0 { scale_d.clone() } else { None };
                f.emit(Inst::Wgmma {
                    dst,
                    atom,
                    a: a_id,
                    a_ty,
                    b: kernel_id(&bv)?,
                    b_ty: bv.ty.clone(),
                    c,
                    scale_d,
                    span,
                });
                f.store_frag(&cv, &ft, dst, span)?;
            }
        }
    }
    Ok(Value::Unit)
}

/// `make_tiled_copy_A(ldmatrix_atom, tiled_mma)` (and B): the tiled copy whose `partition_S` gives each
/// thread the shared-memory row it addresses and whose destination is the tiled MMA's fragment of
/// that operand (CuTe's make_tiled_copy_A/B with SM75_U32x4_LDSM_N). With a universal atom, the
/// tiled copy's TV layout is the MMA's own for that operand (CuTe's make_tiled_copy_A with
/// UniversalCopy): each thread loads exactly its fragment values, in runs of the atom's width.
/// Operands the MMA reads from shared memory itself (wgmma's B, and A of an SS atom) have no
/// register fragment to fill.
pub fn make_tiled_copy_ab(name: &str, args: &[Arg], span: Span) -> R<Value> {
    arity(name, args, 2, 2, span, &format!("{name}(copy_atom, tiled_mma)"))?;
    let p = positional(args);
    let Value::CopyAtom { elem, bits, op } = p[0].value else {
        return Err(Diagnostic::error(
            format!("`{name}` takes a copy atom first, found {}", article(&p[0].value)),
            p[0].span,
            "not a copy atom",
        ));
    };
    let Value::TiledMma(tiled) = &p[1].value else {
        return Err(Diagnostic::error(
            format!("`{name}` takes a tiled MMA second, found {}", article(&p[1].value)),
            p[1].span,
            "not a tiled MMA",
        ));
    };
    if !op.is_ldmatrix() && op != CopyOp::Universal {
        return Err(Diagnostic::error(format!("`{name}` builds an ldmatrix or universal copy of the MMA's fragments; this atom is {}", op.name()), p[0].span, "not an ldmatrix or universal atom")
            .with_help("make the atom with `make_copy_atom(bf16, op: \"ldmatrix.x4\")` (K-major tiles) or `op: \"ldmatrix.x4.trans\"` (M- or N-major); .x2 and .x1 for 4 and 2 values per thread; or `make_copy_atom(bf16, bits: 32)`"));
    }
    let operand = if name.ends_with('A') { MmaOperand::A } else { MmaOperand::B };
    let want = Scalar::from_name(tiled.atom.elem(operand)).unwrap_or(Scalar::F32);
    if elem != want {
        return Err(Diagnostic::error(
            format!(
                "the copy atom moves {} but {}'s {} operand is {}",
                elem.name(),
                tiled.atom.name,
                operand.name(),
                want.name()
            ),
            p[0].span,
            "element types differ",
        ));
    }
    let tv = match op {
        CopyOp::Ldmatrix { matrices, trans } => {
            tiled.ldmatrix_tv(operand, u32::from(matrices), trans).map_err(|e| layout_err(e, span))?
        }
        _ => {
            if tiled.atom.reads_smem(operand) {
                return Err(Diagnostic::error(format!("{} reads {} from shared memory itself (a matrix descriptor): there is no register fragment to copy into", tiled.atom.name, operand.name()), p[1].span, "no register fragment")
                    .with_help(format!("pass the shared-memory partition `thr_mma.partition_{0}(s{0})` to `gemm` directly", operand.name())));
            }
            tiled.layout_tv(operand).map_err(|e| layout_err(e, span))?
        }
    };
    let [tp, tq] = tiled.tile_of(operand);
    let tile = cute_layout::IntTuple::Tuple(vec![tp.into(), tq.into()]);
    Ok(Value::TiledCopy { elem, bits, op, tv, tile })
}

/// CuTe's `make_tiled_copy_C(atom, tiled_mma)`: a tiled copy whose threads hold exactly their MMA
/// accumulator values (the tiled MMA's C TV layout over its C tile), for the epilogue: registers to
/// shared or global memory (`thr.retile_S(accumulators)` into `thr.partition_D(tile)`). With a
/// universal atom its width must fit the runs the C layout keeps contiguous (pairs of columns for
/// the SM80 atoms), which `copy` checks. With a `stmatrix` atom (sm_90; 16-bit values, the
/// accumulators converted) the TV layout is the shared-memory rows the lanes address
/// ([`cute_layout::atom::mma::TiledMma::stmatrix_tv`]), as `make_tiled_copy_A` with ldmatrix.
pub fn make_tiled_copy_c(args: &[Arg], span: Span) -> R<Value> {
    arity("make_tiled_copy_C", args, 2, 2, span, "make_tiled_copy_C(copy_atom, tiled_mma)")?;
    let p = positional(args);
    let Value::CopyAtom { elem, bits, op } = p[0].value else {
        return Err(Diagnostic::error(
            format!("`make_tiled_copy_C` takes a copy atom first, found {}", article(&p[0].value)),
            p[0].span,
            "not a copy atom",
        ));
    };
    let Value::TiledMma(tiled) = &p[1].value else {
        return Err(Diagnostic::error(
            format!("`make_tiled_copy_C` takes a tiled MMA second, found {}", article(&p[1].value)),
            p[1].span,
            "not a tiled MMA",
        ));
    };
    let tv = match op {
        CopyOp::Universal => tiled.layout_tv(MmaOperand::C),
        CopyOp::Stmatrix { matrices, trans } => tiled.stmatrix_tv(u32::from(matrices), trans),
        _ => {
            return Err(Diagnostic::error(
                format!(
                    "`make_tiled_copy_C` copies accumulators out of registers with a universal or stmatrix copy; this atom is {}",
                    op.name()
                ),
                p[0].span,
                "not a universal or stmatrix atom",
            )
            .with_help("make the atom with `make_copy_atom(T, bits: N)`, or `make_copy_atom(bf16, op: \"stmatrix.x4\")` for 16-bit values on sm_90"))
        }
    }
    .map_err(|e| layout_err(e, span))?;
    let [tp, tq] = tiled.tile_of(MmaOperand::C);
    let tile = cute_layout::IntTuple::Tuple(vec![tp.into(), tq.into()]);
    Ok(Value::TiledCopy { elem, bits, op, tv, tile })
}

/// CuTe's `retile_D`/`retile_S(fragment)`: an MMA fragment viewed with the tiled copy's `values`
/// per thread and tile in its first mode (8 for ldmatrix.x4). A fragment `(V, (R, X), ...)` whose V
/// values times the repeats R make `values` becomes `((V, R), X, ...)`; one that already has them
/// is returned as it is.
pub fn retile(f: &mut Frame, a: &Arg, values: i64, span: Span) -> R<Value> {
    let Value::Tensor(t) = &a.value else {
        return Err(Diagnostic::error(
            format!("`retile` takes a register tensor, found {}", article(&a.value)),
            a.span,
            "not a tensor",
        ));
    };
    let l = &t.ty.layout;
    let size = |l: &Layout| l.size().ok().and_then(|s| s.as_static()).unwrap_or(0);
    let modes = l.modes();
    let v = modes.first().map(size).unwrap_or(0);
    if v == values {
        return Ok(a.value.clone());
    }
    // The repeats sit in front of the rest mode of the operand's dimension that has them (M or N
    // for A and B; N, or M, for C), as `partition` put them.
    let regroup = (1..modes.len()).find_map(|i| {
        let m = &modes[i];
        let subs = m.modes();
        (m.rank() > 1 && v * size(&subs[0]) == values).then(|| (i, subs[0].clone(), Layout::concat(subs[1..].to_vec())))
    });
    let Some((at, rep, rest)) = regroup else {
        return Err(Diagnostic::error(
            format!("cannot retile a fragment of layout {l} to the tiled copy's {values} values per thread"),
            a.span,
            format!("no {values}-value grouping"),
        )
        .with_help("retile the fragment `thr_mma.partition_fragment_X(...)` of the same tiled MMA"));
    };
    let rest = if rest.rank() == 1 { rest.mode(0).map_err(|e| layout_err(e, span))? } else { rest };
    let mut out = vec![Layout::concat(vec![modes[0].clone(), rep])];
    out.extend(modes[1..at].iter().cloned());
    out.push(rest);
    out.extend(modes[at + 1..].iter().cloned());
    let retiled = Layout::concat(out);
    let how = ViewHow::algebra("make_view", vec![cute_layout::expr::Value::Layout(retiled.clone())]);
    Ok(Value::Tensor(f.view(t, retiled, Int::ZERO, how, span)?))
}
