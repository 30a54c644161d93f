//! Tensor values and memory: views and recasts (a pointer and the view's `?` values), element and
//! fragment loads and stores (bools and 8-bit floats as bytes in memory), copies through registers,
//! and distributed shared memory.

use super::swizzle::apply_swizzle;
use super::{add, async_copy, bind_leaves, materialize, mul, Int, Kernel, Lowered, NAME};
use crate::ir::{self, Builder, Op, Val};
use crate::passes::common::{copy_op, fail, tensor_info, vector_width, Reported};
use cute_abi::DType;

/// The type an element of MLIR type `elem` has in memory ([`DType::mlir_memory_name`]): `i1`
/// values are stored one per byte, and 8-bit floats as bytes (LLVM has no such types: their values
/// are bit-cast at loads and stores).
pub(super) fn memory_elem(elem: &str) -> String {
    match DType::ALL.into_iter().find(|d| d.mlir_name() == elem) {
        Some(d) => d.mlir_memory_name().to_string(),
        None => elem.to_string(),
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
pub(super) fn from_memory(b: &Builder, v: Val, want: &str) -> Val {
    let printed = ir::type_to_string(ir::value_type(v));
    if printed == want {
        return v;
    }
    let op = if want == "i1" || want.ends_with("xi1>") { "arith.trunci" } else { "arith.bitcast" };
    b.cast(op, v, want)
}

/// crd2idx of a static linear coordinate: colexicographic over the leaves (CuTe's order). The
/// coordinate is static, so only the multiplications by dynamic strides remain.
pub(super) fn static_offset(b: &Builder, index: i64, leaves: &[(Int, Int)]) -> Result<Int, ()> {
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
pub(super) fn gep(b: &Builder, t: &Lowered, offset: Int) -> Val {
    match t.swizzled {
        Some((sw, rel)) => {
            let at = add(b, rel, offset);
            let physical = apply_swizzle(b, sw, at);
            plain_gep(b, t, physical)
        }
        None => plain_gep(b, t, offset),
    }
}

/// `ptr + offset` elements, with no swizzle.
pub(super) fn plain_gep(b: &Builder, t: &Lowered, offset: Int) -> Val {
    if let Int::Const(0) = offset {
        return t.ptr;
    }
    let off = materialize(b, offset);
    // A 64-bit kernel's offsets are `i64` already.
    let off64 = if super::type_of(off) == "i64" { off } else { b.cast("arith.extsi", off, "i64") };
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
pub(super) fn frag_shape(op: Op, t: &Lowered, width_attr: &str) -> Result<(usize, usize), Reported> {
    let mut n = 1i64;
    for (s, _) in &t.leaves {
        match s {
            Int::Const(c) => n *= c,
            Int::Dyn(_) => return Err(fail(op, "a fragment needs a tensor of static size")),
        }
    }
    let width = ir::int_attr(op, width_attr).unwrap_or(1).max(1) as usize;
    if !(n as usize).is_multiple_of(width) {
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

pub(super) fn load_frag_memory(b: &Builder, op: Op, t: &Lowered, width_attr: &str) -> Result<Val, Reported> {
    let (n, w) = frag_shape(op, t, width_attr)?;
    let vec_ty = format!("vector<{n}x{}>", t.elem);
    let chunk_ty = format!("vector<{w}x{}>", t.elem);
    let zero = if t.elem.starts_with('f') || t.elem == "bf16" { "0.000000e+00" } else { "0" };
    let mut acc = ir::result(
        b.create("arith.constant", &[], &[b.ty(&vec_ty)], &[("value", b.attr(&format!("dense<{zero}> : {vec_ty}")))]),
        0,
    );
    let align = (w as u32 * t.elem_bytes).max(t.elem_bytes);
    if w == 1 && n > 1 {
        // Element by element: one `vector.from_elements` of the scalar loads. A chain of one-element
        // `insert_strided_slice`s would become two whole-vector shuffles per element, quadratic in
        // the fragment's size for LLVM (a 240-element copy took LLVM and ptxas tenths of a second).
        let mut elems = Vec::with_capacity(n);
        for i in 0..n {
            let off = static_offset(b, i as i64, &t.leaves)
                .map_err(|_| fail(op, "a fragment needs a tensor of static shape"))?;
            let p = gep(b, t, off);
            let attrs = [("alignment", b.attr(&format!("{align} : i64"))), ("ordering", b.attr("0 : i64"))];
            elems.push(ir::result(b.create("llvm.load", &[p], &[b.ty(&t.elem)], &attrs), 0));
        }
        return Ok(ir::result(b.create("vector.from_elements", &elems, &[b.ty(&vec_ty)], &[]), 0));
    }
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

pub(super) fn store_frag(b: &Builder, op: Op, t: &Lowered, value: Val, width_attr: &str) -> Result<(), Reported> {
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
        } else if w == 1 {
            // One element: a scalar (`extractelement`), not a one-lane shuffle of the whole vector.
            let at = [("static_position", b.attr(&format!("array<i64: {chunk}>")))];
            ir::result(b.create("vector.extract", &[value], &[b.ty(&t.elem)], &at), 0)
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

impl Kernel {
    /// `cute.copy`: `ldmatrix`, `stmatrix`, `cp.async`, or through registers.
    pub(super) fn copy(&mut self, op: Op) -> Result<(), Reported> {
        let find = |v: Val| self.tensors.iter().position(|t| ir::same_value(t.value, v));
        let (Some(s), Some(d)) = (find(ir::operand(op, 0)), find(ir::operand(op, 1))) else {
            return Err(fail(
                op,
                &format!("{NAME}: the tensor operands of `cute.copy` are not kernel arguments, views or allocations"),
            ));
        };
        let b = Builder::before(op);
        let (n_src, w_src) = frag_shape(op, &self.tensors[s], "src_vector")?;
        let (n_dst, w_dst) = frag_shape(op, &self.tensors[d], "dst_vector")?;
        let lane = ir::string_attr(op, "op").and_then(|n| copy_op(&n)).and_then(|c| c.lane_elements());
        if n_src != n_dst && lane != Some((n_src as u32, n_dst as u32)) {
            return Err(fail(op, &format!("`cute.copy` of {n_src} elements into {n_dst}")));
        }
        let pred = (ir::operand_count(op) > 2).then(|| ir::operand(op, 2));
        if pred.is_some() && !ir::string_attr(op, "op").is_some_and(|n| n.starts_with("cp.async")) {
            return Err(fail(
                op,
                "only a `cp.async` copy takes a predicate (it zero-fills); predicate other copies with `scf.if`",
            ));
        }
        if let Some(name) = ir::string_attr(op, "op").filter(|_| lane.is_some()) {
            let (src, dst) = ((&self.tensors[s], n_src, w_src), (&self.tensors[d], n_dst, w_dst));
            return async_copy::matrix_copy(&b, op, &name, src, dst);
        }
        if let Some(name) = ir::string_attr(op, "op") {
            return async_copy::cp_async(
                &b,
                op,
                &name,
                &self.tensors[s],
                &self.tensors[d],
                n_src,
                w_src.min(w_dst),
                pred,
            );
        }
        // Through registers, in chunks of the recorded width on both sides.
        let v = load_frag_memory(&b, op, &self.tensors[s], "src_vector")?;
        store_frag(&b, op, &self.tensors[d], v, "dst_vector")
    }

    /// The ops on one tensor: `cute.dyn`, `cute.view`, `cute.recast`, element and fragment loads
    /// and stores; any other op has no lowering here.
    pub(super) fn tensor_op(&mut self, op: Op, name: &str) -> Result<(), Reported> {
        let tensor_index = match name {
            "cute.dyn" | "cute.view" | "cute.recast" | "cute.load" | "cute.load_frag" => 0,
            "cute.store" | "cute.store_frag" => 1,
            other if crate::passes::algebra::is_foldable(other) || crate::passes::algebra::is_element_access(other) => {
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
        let Some(t) = self.tensors.iter().position(|t| ir::same_value(t.value, operand)) else {
            return Err(fail(
                op,
                &format!("{NAME}: the tensor operand of `{name}` is not a kernel argument or a view"),
            ));
        };
        let b = Builder::before(op);
        match name {
            "cute.dyn" => {
                let index = ir::int_attr(op, "index")
                    .ok_or_else(|| fail(op, "`cute.dyn` needs an integer `index` attribute"))?;
                let v = *self.tensors[t]
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
                let src = &self.tensors[t];
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
                self.tensors.push(Lowered {
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
                let src = &self.tensors[t];
                if src.swizzled.is_some() || info.swizzle.is_some() {
                    return Err(fail(op, "`cute.recast` of a swizzled tensor"));
                }
                let ptr = src.ptr;
                self.tensors.push(Lowered {
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
                let src = &self.tensors[t];
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
                let src = &self.tensors[t];
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
                let v = load_frag(&b, op, &self.tensors[t])?;
                ir::replace_uses(op, &[v]);
            }
            _ => store_frag(&b, op, &self.tensors[t], ir::operand(op, 0), "vector")?,
        }
        Ok(())
    }
}

/// `cute.dsmem_load`/`cute.dsmem_store`: this block's address of the element (swizzled like any
/// access of the tensor), `nvvm.mapa` to the same element of the block of the given rank in the
/// cluster (`mapa.shared::cluster`, an address in LLVM's shared-cluster space 7), then an ordinary
/// `llvm.load`/`llvm.store` there, which NVPTX emits as `ld/st.shared::cluster`.
pub(super) fn dsmem(b: &Builder, op: Op, t: &Lowered) {
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
