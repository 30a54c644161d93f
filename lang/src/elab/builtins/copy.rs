//! Copies: element-wise copies between tensors, copy atoms and tiled copies (universal, `cp.async`,
//! `ldmatrix`, `stmatrix`), `cp.async` groups, and the thread-slice methods of a tiled copy.

use super::alloc::register_budget;
use super::args::{arity, int_tuple, layout_of, named, positional, static_usize, Arg};
use super::layout::rewrap;
use crate::diag::Diagnostic;
use crate::elab::value::{Origin, TensorVal, Value};
use crate::elab::{layout_err, Frame, R};
use crate::kir::{CopyOp, Inst, Operand, ViewHow};
use crate::span::Span;
use cute_layout::{Int, Layout, Tiler};
use std::str::FromStr;

pub(super) fn copy_call(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    if name == "copy" && args.iter().any(|a| a.name.as_deref() == Some("pred")) {
        return crate::elab::copy_if::copy_pred(f, &args, span);
    }
    arity(name, &args, 2, 3, span, &format!("{name}(src, dst)"))?;
    let p = positional(&args);
    let (atom_bits, src, dst) = if p.len() == 3 {
        let (bits, op) = match p[0].value {
            Value::TiledCopy { bits, op, .. } | Value::CopyAtom { bits, op, .. } => (bits, op),
            _ => {
                return Err(Diagnostic::error(
                    format!("with three arguments, `{name}` takes a tiled copy first"),
                    p[0].span,
                    "not a tiled copy",
                ))
            }
        };
        (Some((bits, op, p[0].span)), p[1], p[2])
    } else {
        (None, p[0], p[1])
    };
    copy(f, atom_bits, src, dst, span)
}

pub(super) fn make_tiled_copy(_f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
    arity(
        name,
        &args,
        3,
        3,
        span,
        &format!(
            "{name}(copy_atom, {})",
            if name == "make_tiled_copy" { "tv_layout, tile" } else { "thr_layout, val_layout" }
        ),
    )?;
    let p = positional(&args);
    let Value::CopyAtom { elem, bits, op } = p[0].value else {
        return Err(Diagnostic::error(
            format!("`{name}` takes a copy atom first, found {}", crate::diag::article(&p[0].value.kind())),
            p[0].span,
            "not a copy atom",
        ));
    };
    let (tile, tv) = if name == "make_tiled_copy_tv" {
        cute_layout::make_layout_tv(&layout_of(p[1])?, &layout_of(p[2])?).map_err(lerr)?
    } else {
        (int_tuple(p[2], "a tile shape")?, layout_of(p[1])?)
    };
    // The TV layout is the copy's static structure (its type in the IR), as in CuTe.
    if !(tv.shape.is_static() && tv.stride.is_static() && tile.is_static()) {
        return Err(Diagnostic::error(
            format!("a tiled copy needs a static TV layout and tile, found TV {tv} over tile {tile}"),
            span,
            "run-time layout",
        )
        .with_help("build the thread and value layouts from compile-time extents"));
    }
    // Every (thread, value) must name an element of the tile (the `cute` dialect's verifier says
    // the same of the op; found there by the pipeline fuzz target, a front-end error here).
    let size = tile.product().ok().and_then(|s| s.as_static()).unwrap_or(0);
    let reach = tv.cosize().ok().and_then(|s| s.as_static()).unwrap_or(i64::MAX);
    if reach > size {
        return Err(Diagnostic::error(
            format!("the TV layout {tv} reaches element {} but the tile {tile} has {size}", reach - 1),
            p[1].span,
            "reaches past the tile",
        )
        .with_help("the TV layout maps (thread, value) to an element of the tile: its strides must keep every index below the tile's size"));
    }
    Ok(Value::TiledCopy { elem, bits, op, tv, tile })
}

/// `make_copy_atom(T, bits: N, op: "...")`: a copy atom of a universal or `cp.async` copy.
pub(super) fn make_copy_atom(_f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let args = &args[..];
    arity(name, args, 1, 1, span, "make_copy_atom(element_type, bits: N, op: \"universal\" | \"cp.async.ca\" | \"cp.async.cg\" | \"ldmatrix.x4\" | ...)")?;
    let Value::Type(elem) = positional(args)[0].value else {
        return Err(Diagnostic::error(
            "`make_copy_atom` takes the element type",
            positional(args)[0].span,
            "not a type",
        ));
    };
    let keys = &["bits", "op"];
    let op_arg = named(name, args, "op", keys)?;
    let is_matrix = matches!(&op_arg.map(|a| &a.value), Some(Value::Str(s)) if s.starts_with("ldmatrix") || s.starts_with("stmatrix"));
    let bits = match named(name, args, "bits", keys)? {
        Some(b) => static_usize(b, "`bits`")? as u32,
        // An ldmatrix or stmatrix lane moves one 16-byte row.
        None if is_matrix => 128,
        None => elem.size_bytes() * 8,
    };
    if bits == 0 || bits % (elem.size_bytes() * 8) != 0 || bits > 128 {
        return Err(Diagnostic::error(
            format!("a copy of {bits} bits does not move whole {} elements (at most 128 bits)", elem.name()),
            span,
            "invalid copy width",
        ));
    }
    let op = match op_arg {
        None => CopyOp::Universal,
        Some(a) => match &a.value {
            Value::Str(s) => CopyOp::from_name(s).ok_or_else(|| {
                Diagnostic::error(format!("unknown copy operation \"{s}\""), a.span, "unknown copy operation")
                    .with_help(format!("the copy operations are {}", CopyOp::names(true)))
            })?,
            other => {
                return Err(Diagnostic::error(
                    format!("`op` names the copy operation as a string, found {}", crate::diag::article(&other.kind())),
                    a.span,
                    "not a string",
                ))
            }
        },
    };
    // cp.async moves 4, 8 or 16 bytes (.ca) or exactly 16 bytes (.cg), as the PTX ISA says.
    let allowed = op.bits();
    if op.lane_elements().is_some() && elem.size_bytes() != 2 {
        let e = Diagnostic::error(
            format!("{} moves 16-bit elements, not {}", op.name(), elem.name()),
            span,
            "not a 16-bit type",
        );
        // An FP8 RS wgmma's A fragment is four K values a register: each thread loads its own.
        return Err(if elem.size_bytes() == 1 {
            e.with_help(format!(
                "move 8-bit register fragments (an FP8 RS wgmma's A, four K values a register) with the universal copy: `make_copy_atom({}, bits: 32)`",
                elem.name()
            ))
        } else {
            e
        });
    }
    if !allowed.is_empty() && !allowed.contains(&bits) {
        let sizes: Vec<String> = allowed.iter().map(|b| b.to_string()).collect();
        return Err(Diagnostic::error(
            format!("{} moves {} bits, not {bits}", op.name(), sizes.join(", ")),
            span,
            "invalid copy width",
        ));
    }
    Ok(Value::CopyAtom { elem, bits, op })
}

/// `cp_async_commit_group()` and `cp_async_wait_group(n)`.
pub(super) fn async_copy_group(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let args = &args[..];
    let wait = if name == "cp_async_wait_group" {
        arity(name, args, 1, 1, span, "cp_async_wait_group(n)")?;
        let n = static_usize(positional(args)[0], "the number of groups left in flight")?;
        Some(u32::try_from(n).map_err(|_| Diagnostic::error("too many groups", span, "too large"))?)
    } else {
        arity(name, args, 0, 0, span, "cp_async_commit_group()")?;
        None
    };
    f.need_kernel(&format!("`{name}`"), span)?;
    f.emit(Inst::AsyncCopyGroup { wait, span });
    Ok(Value::Unit)
}

/// Element-wise copy of one tensor into another of the same size (CuTe's `copy`, `basic_copy`,
/// `autovec_copy`): through a register fragment, which `cute-vectorize` moves in the widest chunks
/// both layouts allow.
pub(super) fn copy(f: &mut Frame, atom: Option<(u32, CopyOp, Span)>, src: &Arg, dst: &Arg, span: Span) -> R<Value> {
    copy_with(f, atom, src, dst, None, span)
}

/// `copy`, with the zero-fill predicate of a `cp.async` chunk (`copy_if`).
pub(crate) fn copy_with(
    f: &mut Frame,
    atom: Option<(u32, CopyOp, Span)>,
    src: &Arg,
    dst: &Arg,
    pred: Option<Operand>,
    span: Span,
) -> R<Value> {
    let (Value::Tensor(s), Value::Tensor(d)) = (&src.value, &dst.value) else {
        return Err(Diagnostic::error("`copy` moves a tensor into a tensor", span, "not tensors"));
    };
    let (ns, nd) =
        (s.ty.layout.size().ok().and_then(|x| x.as_static()), d.ty.layout.size().ok().and_then(|x| x.as_static()));
    // An ldmatrix lane gives an 8-element row and receives 2 values per matrix; a stmatrix lane
    // the other way round.
    let lane_elements = atom.and_then(|(_, op, _)| op.lane_elements()).map(|(s, d)| (i64::from(s), i64::from(d)));
    let sizes_match = match (ns, nd, lane_elements) {
        (Some(a), Some(b), Some((ls, ld))) => a * ld == b * ls,
        (a, b, _) => a == b,
    };
    if !sizes_match || ns.is_none() {
        return Err(Diagnostic::error(
            format!("cannot copy a tensor of layout {} into one of layout {}", s.ty.layout, d.ty.layout),
            span,
            "sizes differ",
        )
        .with_secondary(src.span, format!("{} elements", ns.map_or("?".into(), |n| n.to_string())))
        .with_secondary(dst.span, format!("{} elements", nd.map_or("?".into(), |n| n.to_string()))));
    }
    if s.ty.elem != d.ty.elem {
        return Err(Diagnostic::error(
            format!("cannot copy {} elements into a tensor of {}", s.ty.elem.name(), d.ty.elem.name()),
            span,
            "element types differ",
        ));
    }
    // A copy atom moves `bits` at once: that many bits must be contiguous and aligned on both sides.
    let width = match atom {
        None => None,
        Some((bits, _, atom_span)) => {
            let elem_bits = s.ty.elem.size_bytes() * 8;
            let w = (bits / elem_bits).max(1);
            // An ldmatrix (stmatrix) moves 16-byte rows out of (into) shared memory; its registers
            // are what it gives (takes).
            let both = [(s, src, "source"), (d, dst, "destination")];
            let sides: &[(&TensorVal, &Arg, &str)] = match atom.map(|(_, op, _)| op) {
                Some(CopyOp::Ldmatrix { .. }) => &both[..1],
                Some(CopyOp::Stmatrix { .. }) => &both[1..],
                _ => &both,
            };
            for &(t, arg, side) in sides {
                let compact = Layout::col_major(t.ty.layout.shape.clone()).map_err(|e| layout_err(e, arg.span))?;
                let run = cute_layout::max_common_vector(&t.ty.layout, &compact)
                    .ok()
                    .and_then(|r| r.as_static())
                    .unwrap_or(1);
                if run % i64::from(w) != 0 {
                    return Err(Diagnostic::error(
                        format!(
                            "a {bits}-bit copy atom moves {w} {} at once, but the {side}'s contiguous extent is {run}",
                            s.ty.elem.name()
                        ),
                        arg.span,
                        format!("layout {}", t.ty.layout),
                    )
                    .with_secondary(atom_span, format!("{bits}-bit copies"))
                    .with_help(format!(
                        "use a copy atom of at most {} bits that divides it",
                        u32::try_from(run).unwrap_or(1).max(1) * elem_bits
                    )));
                }
                if t.ty.align * 8 < bits {
                    return Err(Diagnostic::error(
                        format!("a {bits}-bit copy atom needs {}-byte alignment, but the {side} is only known to be {}-byte aligned", bits / 8, t.ty.align),
                        arg.span,
                        format!("align {}", t.ty.align),
                    )
                    .with_secondary(atom_span, format!("{bits}-bit copies"))
                    .with_help("declare the tensor's alignment (`align: 16`) or use a narrower copy atom"));
                }
            }
            Some(w)
        }
    };
    f.need_kernel("`copy`", span)?;
    let n = ns.unwrap_or(0);
    register_budget("a copy", n, s.ty.elem, span)?;
    let op = atom.map_or(CopyOp::Universal, |(_, op, _)| op);
    if let Some((from, to, direction)) = op.spaces().filter(|(from, to, _)| s.ty.space != *from || d.ty.space != *to) {
        let atom_span = atom.map_or(span, |(_, _, s)| s);
        return Err(Diagnostic::error(
            format!("{} copies from {direction}, not from {} to {}", op.name(), s.ty.space.name(), d.ty.space.name()),
            span,
            "wrong memory spaces",
        )
        .with_secondary(atom_span, format!("a {} copy ({} to {})", op.name(), from.name(), to.name()))
        .with_help("use a universal copy atom (`make_copy_atom(T, bits: N)`) for other copies"));
    }
    if lane_elements.is_some_and(|(ls, ld)| (ns, nd) != (Some(ls), Some(ld))) {
        return matrix_instances(f, op, s, d, span);
    }
    let (Origin::Kernel(sid), Origin::Kernel(did)) = (&s.origin, &d.origin) else {
        unreachable!("kernel tensors have kernel origins")
    };
    f.emit(Inst::Copy { src: *sid, src_ty: s.ty.clone(), dst: *did, dst_ty: d.ty.clone(), width, op, pred, span });
    Ok(Value::Unit)
}

/// A warp-wide matrix copy (`ldmatrix`, `stmatrix`) of several instructions' worth: `(R, X, Y, ...)`
/// on the shared-memory side, R the 8 elements of the lane's row, and `(V, X, Y, ...)` on the
/// register side, V the values one instruction gives or takes (2 per matrix); one instruction per
/// coordinate of the other modes (CuTe's `copy` loops over them the same way). A first mode of
/// several instructions' worth, `(R, chunks)` and `(V, chunks)` (a wgmma's accumulators under
/// `make_tiled_copy_C`), is split into its chunks first.
pub(super) fn matrix_instances(f: &mut Frame, op: CopyOp, s: &TensorVal, d: &TensorVal, span: Span) -> R<Value> {
    let (ls, ld) = op.lane_elements().map_or((8, 8), |(a, b)| (i64::from(a), i64::from(b)));
    let (s, d) = (&split_chunks(f, s, ls, span)?, &split_chunks(f, d, ld, span)?);
    let sizes = |l: &Layout| -> Vec<i64> {
        l.modes().iter().map(|m| m.size().ok().and_then(|x| x.as_static()).unwrap_or(-1)).collect()
    };
    let (ss, ds) = (sizes(&s.ty.layout), sizes(&d.ty.layout));
    if ss[1..] != ds[1..] || ss.first() != Some(&ls) || ds.first() != Some(&ld) || ss.iter().any(|&x| x <= 0) {
        let help = if op.is_stmatrix() {
            "copy `thr_copy.retile_S(fragment)` into `thr_copy.partition_D(smem)` of the same tiled copy"
        } else {
            "copy `thr_copy.partition_S(smem)` into `thr_copy.retile_D(fragment)` of the same tiled copy"
        };
        return Err(Diagnostic::error(
            format!("{} {} copy moves ({ls}, ...) into ({ld}, ...) per lane, the other modes matching; found layouts {} and {}", if op.is_stmatrix() { "a" } else { "an" }, op.name(), s.ty.layout, d.ty.layout),
            span,
            "modes differ",
        )
        .with_help(help));
    }
    let total: i64 = ss[1..].iter().product();
    for linear in 0..total {
        let mut rest = linear;
        let mut crd = vec![cute_layout::Crd::Under];
        for &m in &ss[1..] {
            crd.push(cute_layout::Crd::Int(Int::S(rest % m)));
            rest /= m;
        }
        let crd = cute_layout::Crd::Tuple(crd);
        let (sv, dv) = (f.slice(s, &crd, span)?, f.slice(d, &crd, span)?);
        let (Origin::Kernel(sid), Origin::Kernel(did)) = (&sv.origin, &dv.origin) else {
            unreachable!("kernel tensors have kernel origins")
        };
        f.emit(Inst::Copy {
            src: *sid,
            src_ty: sv.ty.clone(),
            dst: *did,
            dst_ty: dv.ty.clone(),
            width: Some(8),
            op,
            pred: None,
            span,
        });
    }
    Ok(Value::Unit)
}

/// `t` with a first mode of `lane * chunks` elements, `chunks` > 1, viewed as `(lane, chunks, ...)`
/// (the first mode's first `lane` elements, then the next, ...); any other tensor as it is.
fn split_chunks(f: &mut Frame, t: &TensorVal, lane: i64, span: Span) -> R<TensorVal> {
    let modes = t.ty.layout.modes();
    let first = modes.first().and_then(|m| m.size().ok()).and_then(|x| x.as_static()).unwrap_or(0);
    if first <= lane || first % lane != 0 {
        return Ok(t.clone());
    }
    let lerr = |e| layout_err(e, span);
    let chunked = Layout::from_str(&format!("({lane},{}):(1,{lane})", first / lane)).map_err(lerr)?;
    let split = cute_layout::composition(&modes[0], &chunked).map_err(lerr)?;
    let mut out = split.modes();
    out.extend(modes[1..].iter().cloned());
    let layout = Layout::concat(out);
    let how = ViewHow::algebra("make_view", vec![cute_layout::expr::Value::Layout(layout.clone())]);
    f.view(t, layout, Int::ZERO, how, span)
}

/// `tiled_copy.get_slice(thread_index)`: one thread's part of a tiled copy.
pub(super) fn get_slice(recv: &Value, args: &[Arg], span: Span) -> R<Value> {
    let Value::TiledCopy { elem, bits, op, tv, tile } = recv else { unreachable!("a tiled copy") };
    arity("get_slice", args, 1, 1, span, "tiled_copy.get_slice(thread_index)")?;
    let Value::Int(tid) = &args[0].value else {
        return Err(Diagnostic::error("`get_slice` takes the thread index", args[0].span, "not an integer"));
    };
    Ok(Value::ThrCopy { elem: *elem, bits: *bits, op: *op, tv: tv.clone(), tile: tile.clone(), tid: tid.clone() })
}

/// `thr_copy.retile_D(fragment)` and friends.
pub(super) fn retile(f: &mut Frame, recv: &Value, name: &str, args: &[Arg], span: Span) -> R<Value> {
    let (Value::ThrCopy { tv, .. } | Value::TiledCopy { tv, .. }) = recv else { unreachable!("a copy") };
    arity(name, args, 1, 1, span, &format!("thr_copy.{}(fragment)", name))?;
    // The register side's values per thread: an ldmatrix gives (a stmatrix takes) 2 per matrix
    // for each 8-element shared-memory row its TV layout describes; other copies move as many as
    // their TV layout has.
    let tv_values = tv.mode(1).ok().and_then(|m| m.size().ok()).and_then(|s| s.as_static()).unwrap_or(0);
    let values = match recv {
        Value::ThrCopy { op, .. } | Value::TiledCopy { op, .. } => match op.lane_elements() {
            Some((ls, ld)) => tv_values / 8 * i64::from(ls.min(ld)),
            None => tv_values,
        },
        _ => tv_values,
    };
    crate::elab::mma::retile(f, &args[0], values, span)
}

/// `thr_copy.partition_S(tensor)` and `partition_D`.
pub(super) fn partition(f: &mut Frame, recv: &Value, name: &str, args: &[Arg], span: Span) -> R<Value> {
    let Value::ThrCopy { elem, bits, tv, tile, tid, .. } = recv else { unreachable!("a thread's copy") };
    arity(name, args, 1, 1, span, &format!("thr_copy.{}(tensor)", name))?;
    let layout = match &args[0].value {
        Value::Tensor(t) => t.ty.layout.clone(),
        Value::Counting { layout, .. } => layout.clone(),
        other => {
            return Err(Diagnostic::error(
                format!("`{}` takes a tensor, found {}", name, crate::diag::article(&other.kind())),
                args[0].span,
                "not a tensor",
            ));
        }
    };
    let lerr = |e| layout_err(e, span);
    if matches!(args[0].value, Value::Tensor(_)) {
        f.require_tiles_divide(&layout, &Tiler::Shape(tile.clone()), span)?;
    }
    let (partitioned, offset) = cute_layout::tv_partition(&layout, tv, tile, tid).map_err(lerr)?;
    let first = Arg { name: None, name_span: None, value: args[0].value.clone(), span: args[0].span };
    let how = ViewHow::Partition {
        dst: name == "partition_D",
        elem: *elem,
        bits: *bits,
        tv: tv.clone(),
        tile: tile.clone(),
        tid: tid.clone(),
    };
    rewrap(f, &first, partitioned, offset, how, span)
}
