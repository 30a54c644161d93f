//! The operations of the expression language, one function each; [`super::OPERATIONS`] names them.

use super::*;

/// CuTe's get_layoutA_TV: (thread, value) -> column-major coordinate in the operand's tile.
pub(super) fn op_layout_tv(a: &Args) -> Result<Value> {
    let v = a.v;
    let Some(op) = tv_operand(a.op) else { return Err(unknown(a.op)) };
    a.count(1, 1)?;
    match &v[0] {
        Value::MmaAtom(atom) => Ok(Value::Layout(atom.layout_tv(op))),
        _ => lay(a.tiled_mma(0)?.layout_tv(op)),
    }
}
pub(super) fn op_make_mma_atom(a: &Args) -> Result<Value> {
    let name = a.op;
    let v = a.v;
    // make_mma_atom(ab_type, acc_type, (M,N,K)[, a_src: "rmem" | "smem"]), or
    // make_mma_atom(CuTe name).
    a.count(1, 4)?;
    match v.len() {
        1 => match &v[0] {
            Value::Name(n) => MmaAtom::by_name(n).map(Value::MmaAtom).ok_or_else(|| {
                let names: Vec<&str> = MmaAtom::all().iter().map(|x| x.name).collect();
                Error::new(name, format!("no MMA atom is named '{n}'; the atoms are {}", names.join(", ")))
            }),
            _ => Err(a.bad(0, "an atom's CuTe name")),
        },
        3 => Ok(Value::MmaAtom(MmaAtom::find(a.elem(0)?, a.elem(1)?, a.mnk(2)?)?)),
        // CuTe DSL's `a_src=OperandSource.RMEM`: the wgmma atom with A from registers.
        4 => match &v[3] {
            Value::Name(s) if s == "rmem" => Ok(Value::MmaAtom(MmaAtom::find_rs(a.elem(0)?, a.elem(1)?, a.mnk(2)?)?)),
            Value::Name(s) if s == "smem" => Ok(Value::MmaAtom(MmaAtom::find(a.elem(0)?, a.elem(1)?, a.mnk(2)?)?)),
            _ => Err(a.bad(3, "a_src: \"rmem\" (A from registers, wgmma RS atoms) or \"smem\"")),
        },
        _ => Err(Error::new(name, "takes (ab_type, acc_type, (M,N,K)[, a_src: \"rmem\"]) or an atom's CuTe name")),
    }
}
pub(super) fn op_make_tiled_mma(a: &Args) -> Result<Value> {
    let v = a.v;
    // make_tiled_mma(atom, atom_layout (M,N,K) [, permutation (M,N,K) tile sizes]).
    a.count(2, 3)?;
    let Value::MmaAtom(atom) = &v[0] else { return Err(a.bad(0, "an MMA atom (make_mma_atom)")) };
    let perm = if v.len() == 3 { Some(a.mnk(2)?) } else { None };
    Ok(Value::TiledMma(TiledMma::new(atom, a.mnk(1)?, perm)?))
}
pub(super) fn op_tile_shape(a: &Args) -> Result<Value> {
    // CuTe's tile_shape(tiled_mma): the (M,N,K) tile one step of the tiled MMA covers.
    a.count(1, 1)?;
    Ok(Value::Tuple(a.tiled_mma(0)?.tile.iter().map(|&x| Value::Int(Int::S(x))).collect()))
}
pub(super) fn op_size(a: &Args) -> Result<Value> {
    let v = a.v;
    if matches!(v.first(), Some(Value::MmaAtom(_) | Value::TiledMma(_))) {
        // CuTe's size(tiled_mma): its threads.
        a.count(1, 1)?;
        return Ok(Value::Int(Int::S(a.tiled_mma(0)?.threads())));
    }
    a.count(1, 8)?;
    let x = if v.len() > 1 { get_path(&v[0], &a.indices(1)?)? } else { v[0].clone() };
    match &x {
        Value::Composed(c) => c.size().map(Value::Int),
        Value::Tiler(_) => Err(a.bad(0, "a layout or a shape")),
        other => {
            if let Some(t) = other.to_int_tuple() {
                t.product().map(Value::Int)
            } else {
                other.to_layout().ok_or_else(|| a.bad(0, "a layout or a shape"))?.size().map(Value::Int)
            }
        }
    }
}
pub(super) fn op_cosize(a: &Args) -> Result<Value> {
    let v = a.v;
    a.count(1, 1)?;
    match &v[0] {
        Value::Composed(c) => c.cosize().map(Value::Int),
        _ => a.layout(0)?.cosize().map(Value::Int),
    }
}
pub(super) fn op_rank(a: &Args) -> Result<Value> {
    let name = a.op;
    let v = a.v;
    a.count(1, 8)?;
    let x = if v.len() > 1 { get_path(&v[0], &a.indices(1)?)? } else { v[0].clone() };
    let t = match &x {
        Value::Layout(l) => l.shape.clone(),
        Value::Composed(c) => c.layout.shape.clone(),
        other => other.to_int_tuple().ok_or_else(|| a.bad(0, "a layout or an IntTuple"))?,
    };
    Ok(Value::Int(Int::S(if name == "rank" { t.rank() } else { t.depth() } as i64)))
}
pub(super) fn op_shape(a: &Args) -> Result<Value> {
    let name = a.op;
    let v = a.v;
    a.count(1, 8)?;
    let l = if v.len() > 1 { get_path(&v[0], &a.indices(1)?)? } else { v[0].clone() };
    let l = match l {
        Value::Composed(c) => c.layout,
        other => other.to_layout().ok_or_else(|| a.bad(0, "a layout"))?,
    };
    Ok(int_tuple_value(if name == "shape" { &l.shape } else { &l.stride }))
}
pub(super) fn op_get(a: &Args) -> Result<Value> {
    let v = a.v;
    a.count(2, 9)?;
    get_path(&v[0], &a.indices(1)?)
}
pub(super) fn op_select(a: &Args) -> Result<Value> {
    let v = a.v;
    a.count(2, 64)?;
    let idx = a.indices(1)?;
    right_action(&v[0], a, &|l| l.select(&idx))
}
pub(super) fn op_take(a: &Args) -> Result<Value> {
    let v = a.v;
    a.count(3, 3)?;
    let (b, e) = (a.index(1)?, a.index(2)?);
    right_action(&v[0], a, &|l| l.take(b, e))
}
pub(super) fn op_group_modes(a: &Args) -> Result<Value> {
    let v = a.v;
    a.count(3, 3)?;
    let (b, e) = (a.index(1)?, a.index(2)?);
    right_action(&v[0], a, &|l| l.group_modes(b, e))
}
pub(super) fn op_flatten(a: &Args) -> Result<Value> {
    let v = a.v;
    a.count(1, 1)?;
    match &v[0] {
        Value::Layout(_) | Value::Composed(_) => right_action(&v[0], a, &|l| Ok(l.flatten())),
        other => {
            Ok(int_tuple_value(&other.to_int_tuple().ok_or_else(|| a.bad(0, "a layout or an IntTuple"))?.flatten()))
        }
    }
}
pub(super) fn op_append(a: &Args) -> Result<Value> {
    let name = a.op;
    a.count(2, 2)?;
    let (l, x) = (a.layout(0)?, a.layout(1)?);
    lay(Ok(if name == "append" { l.append(&x) } else { l.prepend(&x) }))
}
pub(super) fn op_make_layout(a: &Args) -> Result<Value> {
    let name = a.op;
    let v = a.v;
    a.count(1, 64)?;
    if v.iter().any(|x| matches!(x, Value::Layout(_))) {
        return lay(Ok(Layout::concat((0..v.len()).map(|i| a.layout(i)).collect::<Result<_>>()?)));
    }
    match v.len() {
        1 => lay(Layout::col_major(a.tuple(0)?)),
        2 => lay(Layout::new(a.tuple(0)?, a.tuple(1)?)),
        _ => Err(Error::new(name, "takes a shape and an optional stride, or layouts to concatenate")),
    }
}
pub(super) fn op_make_layout_left(a: &Args) -> Result<Value> {
    a.count(1, 1)?;
    lay(Layout::col_major(a.tuple(0)?))
}
pub(super) fn op_make_layout_right(a: &Args) -> Result<Value> {
    a.count(1, 1)?;
    lay(Layout::row_major(a.tuple(0)?))
}
pub(super) fn op_make_ordered_layout(a: &Args) -> Result<Value> {
    a.count(2, 2)?;
    lay(Layout::ordered(a.tuple(0)?, &a.tuple(1)?))
}
pub(super) fn op_make_identity_layout(a: &Args) -> Result<Value> {
    a.count(1, 1)?;
    lay(Layout::identity(a.tuple(0)?))
}
pub(super) fn op_make_identity_tensor(a: &Args) -> Result<Value> {
    // CuTe's counting tensor: origin ArithTuple(0,...) and the
    // identity layout; slicing and tiling move the origin.
    a.count(1, 1)?;
    Ok(Value::Sliced(Layout::identity(a.tuple(0)?)?, Int::ZERO))
}
pub(super) fn op_crd2idx(a: &Args) -> Result<Value> {
    let v = a.v;
    a.count(2, 3)?;
    let crd = a.tuple(0)?;
    let s = a.tuple(1)?;
    let d = if v.len() == 3 { a.tuple(2)? } else { Layout::col_major(s.clone())?.stride };
    crd2idx(&crd, &s, &d).map(Value::Int)
}
pub(super) fn op_idx2crd(a: &Args) -> Result<Value> {
    let v = a.v;
    a.count(2, 3)?;
    let idx = a.tuple(0)?;
    let s = a.tuple(1)?;
    let r = if v.len() == 3 { idx2crd_strided(&idx, &s, &a.tuple(2)?)? } else { idx2crd(&idx, &s)? };
    Ok(int_tuple_value(&r))
}
pub(super) fn op_eval(a: &Args) -> Result<Value> {
    let name = a.op;
    let v = a.v;
    a.count(2, 2)?;
    let crd = a.tuple(1)?;
    match &v[0] {
        Value::Composed(c) => c.eval(&crd).map(Value::Int),
        Value::Swizzle(s) => match a.int(1)? {
            Int::S(x) => Ok(Value::Int(Int::S(s.apply(x)))),
            _ => Err(Error::new(name, "a swizzle of a dynamic index cannot be folded")),
        },
        Value::Sliced(l, off) => Ok(int_tuple_value(&l.eval_coord(&crd, Some(off))?)),
        _ => Ok(int_tuple_value(&a.layout(0)?.eval_coord(&crd, None)?)),
    }
}
pub(super) fn op_coalesce(a: &Args) -> Result<Value> {
    let name = a.op;
    let v = a.v;
    a.count(1, 2)?;
    let f: fn(&Layout) -> Result<Layout> = if name == "coalesce" { coalesce } else { filter };
    match v.len() {
        1 => right_action(&v[0], a, &f),
        _ => {
            let p = a.tuple(1)?;
            right_action(&v[0], a, &|l| if name == "coalesce" { coalesce_by(l, &p) } else { filter_by(l, &p) })
        }
    }
}
pub(super) fn op_filter_zeros(a: &Args) -> Result<Value> {
    a.count(1, 1)?;
    lay(filter_zeros(&a.layout(0)?))
}
pub(super) fn op_composition(a: &Args) -> Result<Value> {
    let name = a.op;
    let v = a.v;
    a.count(2, 2)?;
    match (&v[0], &v[1]) {
        // CuTe's composition(Swizzle, Layout) = S o 0 o L; a sliced
        // layout brings its origin in as the offset.
        (Value::Swizzle(s), Value::Sliced(l, off)) => composed(name, *s, off.clone(), l.clone()),
        (Value::Swizzle(s), b) => {
            let b = b.to_layout().ok_or_else(|| a.bad(1, "a layout"))?;
            composed(name, *s, Int::ZERO, b)
        }
        (x, Value::Layout(b)) => right_action(x, a, &|l| composition(l, b)),
        (x, _) => {
            let t = a.tiler(1)?;
            right_action(x, a, &|l| composition_tiler(l, &t))
        }
    }
}
pub(super) fn op_complement(a: &Args) -> Result<Value> {
    let v = a.v;
    a.count(1, 2)?;
    let l = a.layout(0)?;
    if v.len() == 1 {
        return lay(complement_default(&l));
    }
    let cot = a.tuple(1)?.product()?;
    lay(complement(&l, &cot))
}
pub(super) fn op_right_inverse(a: &Args) -> Result<Value> {
    a.count(1, 1)?;
    lay(right_inverse(&a.layout(0)?))
}
pub(super) fn op_left_inverse(a: &Args) -> Result<Value> {
    a.count(1, 1)?;
    lay(left_inverse(&a.layout(0)?))
}
pub(super) fn op_logical_divide(a: &Args) -> Result<Value> {
    let name = a.op;
    let v = a.v;
    a.count(2, 2)?;
    let t = a.tiler(1)?;
    let f: fn(&Layout, &Tiler) -> Result<Layout> = match name {
        "logical_divide" => logical_divide,
        "zipped_divide" => zipped_divide,
        "tiled_divide" => tiled_divide,
        _ => flat_divide,
    };
    right_action(&v[0], a, &|l| f(l, &t))
}
/// Products and tile_to_shape of a composed layout act on its inner
/// layout (CuTe's overloads for ComposedLayout): a swizzle atom tiled
/// over a tile keeps its swizzle.
pub(super) fn op_logical_product(a: &Args) -> Result<Value> {
    let name = a.op;
    let v = a.v;
    a.count(2, 2)?;
    let t = a.tiler(1)?;
    let f: fn(&Layout, &Tiler) -> Result<Layout> = match name {
        "logical_product" => logical_product,
        "zipped_product" => zipped_product,
        "tiled_product" => tiled_product,
        _ => flat_product,
    };
    layout_or_composed(&v[0], a, &|l| f(l, &t))
}
pub(super) fn op_blocked_product(a: &Args) -> Result<Value> {
    let name = a.op;
    let v = a.v;
    a.count(2, 2)?;
    let y = a.layout(1)?;
    layout_or_composed(&v[0], a, &|x| {
        if name == "blocked_product" {
            blocked_product(x, &y)
        } else {
            raked_product(x, &y)
        }
    })
}
pub(super) fn op_tile_to_shape(a: &Args) -> Result<Value> {
    let v = a.v;
    a.count(2, 3)?;
    let ord = if v.len() == 3 { Some(a.tuple(2)?) } else { None };
    let shape = a.tuple(1)?;
    layout_or_composed(&v[0], a, &|l| tile_to_shape(l, &shape, ord.as_ref()))
}
pub(super) fn op_make_swizzle(a: &Args) -> Result<Value> {
    a.count(3, 3)?;
    Ok(Value::Swizzle(Swizzle::new(a.static_int(0)?, a.static_int(1)?, a.static_int(2)?)?))
}
pub(super) fn op_make_composed_layout(a: &Args) -> Result<Value> {
    let name = a.op;
    // CuTe's argument order: the outer function (the swizzle, applied
    // last), the offset, the inner layout (applied first).
    a.count(3, 3)?;
    let off = a.int(1)?;
    composed(name, a.swizzle(0)?, off, a.layout(2)?)
}
pub(super) fn op_local_tile(a: &Args) -> Result<Value> {
    let v = a.v;
    a.count(3, 3)?;
    let (l, off) = local_tile(&a.layout(0)?, &a.tiler(1)?, &a.crd(2)?)?;
    Ok(Value::Sliced(l, base_offset(&v[0]).add(&off)?))
}
pub(super) fn op_local_partition(a: &Args) -> Result<Value> {
    let v = a.v;
    a.count(3, 3)?;
    let (l, off) = local_partition(&a.layout(0)?, &a.layout(1)?, &a.int(2)?)?;
    Ok(Value::Sliced(l, base_offset(&v[0]).add(&off)?))
}
pub(super) fn op_slice(a: &Args) -> Result<Value> {
    let v = a.v;
    a.count(2, 2)?;
    let (l, off) = slice_and_offset(&a.crd(1)?, &a.layout(0)?)?;
    Ok(Value::Sliced(l, base_offset(&v[0]).add(&off)?))
}
pub(super) fn op_make_layout_tv(a: &Args) -> Result<Value> {
    a.count(2, 2)?;
    let (tiler, tv) = make_layout_tv(&a.layout(0)?, &a.layout(1)?)?;
    Ok(Value::Tuple(vec![int_tuple_value(&tiler), Value::Layout(tv)]))
}
pub(super) fn op_dice(a: &Args) -> Result<Value> {
    let v = a.v;
    // CuTe DSL's dice(src, dicer): the modes of src paired with an integer in dicer.
    a.count(2, 2)?;
    let crd = a.crd(1)?;
    match &v[0] {
        Value::Tuple(_) | Value::Int(_) => Ok(int_tuple_value(&dice_tuple(&crd, &a.tuple(0)?)?)),
        _ => lay(dice(&crd, &a.layout(0)?)),
    }
}
pub(super) fn op_upcast(a: &Args) -> Result<Value> {
    let name = a.op;
    let v = a.v;
    a.count(2, 2)?;
    let n = a.static_int(1)?;
    let f: fn(&Layout, i64) -> Result<Layout> = if name == "upcast" { upcast } else { downcast };
    right_action(&v[0], a, &|l| f(l, n))
}
pub(super) fn op_recast_layout(a: &Args) -> Result<Value> {
    // CuTe DSL's recast_layout(new_type_bits, old_type_bits, layout).
    a.count(3, 3)?;
    let (new_bits, old_bits) = (a.static_int(0)?, a.static_int(1)?);
    lay(recast_layout(new_bits, old_bits, &a.layout(2)?))
}
pub(super) fn op_max_common_vector(a: &Args) -> Result<Value> {
    a.count(2, 2)?;
    max_common_vector(&a.layout(0)?, &a.layout(1)?).map(Value::Int)
}
pub(super) fn op_max_common_layout(a: &Args) -> Result<Value> {
    a.count(2, 2)?;
    lay(max_common_layout(&a.layout(0)?, &a.layout(1)?))
}
pub(super) fn op_with_shape(a: &Args) -> Result<Value> {
    let v = a.v;
    a.count(2, 2)?;
    let s = Layout::col_major(a.tuple(1)?)?;
    right_action(&v[0], a, &|l| composition(l, &s))
}
pub(super) fn op_product(a: &Args) -> Result<Value> {
    a.count(1, 1)?;
    a.tuple(0)?.product().map(Value::Int)
}
pub(super) fn op_product_each(a: &Args) -> Result<Value> {
    a.count(1, 1)?;
    Ok(int_tuple_value(&a.tuple(0)?.product_each()?))
}
pub(super) fn op_leaves(a: &Args) -> Result<Value> {
    a.count(1, 1)?;
    let l = a.layout(0)?;
    Ok(Value::Tuple(l.leaves().into_iter().map(|(s, d)| Value::Layout(Layout::leaf(s, d))).collect()))
}
