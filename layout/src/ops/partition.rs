//! Partitioning helpers built on the divides: slicing, local_tile,
//! local_partition, tile_to_shape, make_layout_tv, max_common_vector.

use crate::error::{Error, Result};
use crate::int::Int;
use crate::int_tuple::IntTuple;
use crate::layout::{crd2idx, idx2crd_strided, Layout};
use crate::ops::coalesce::{coalesce, coalesce_by};
use crate::ops::composition::composition;
use crate::ops::divide::zipped_divide;
use crate::ops::inverse::right_inverse;
use crate::ops::product::{blocked_product, raked_product};
use crate::tiler::Tiler;

/// A coordinate that may hold `_` (keep this mode) at any level.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Crd {
    Int(Int),
    Under,
    Tuple(Vec<Crd>),
}

impl Crd {
    pub fn from_tuple(t: &IntTuple) -> Crd {
        match t {
            IntTuple::Int(i) => Crd::Int(i.clone()),
            IntTuple::Tuple(v) => Crd::Tuple(v.iter().map(Crd::from_tuple).collect()),
        }
    }
}

impl std::fmt::Display for Crd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Crd::Int(i) => write!(f, "{i}"),
            Crd::Under => write!(f, "_"),
            Crd::Tuple(v) => {
                write!(f, "(")?;
                for (k, x) in v.iter().enumerate() {
                    if k > 0 {
                        write!(f, ",")?;
                    }
                    write!(f, "{x}")?;
                }
                write!(f, ")")
            }
        }
    }
}

/// CuTe's slice_and_offset: the modes at `_` are kept (as the modes of the
/// result, in order), the others are fixed and summed into the offset.
pub fn slice_and_offset(crd: &Crd, l: &Layout) -> Result<(Layout, Int)> {
    let mut kept = Vec::new();
    let mut off = Int::ZERO;
    slice_rec(crd, &l.shape, &l.stride, &mut kept, &mut off)?;
    Ok((Layout::concat(kept), off))
}

fn slice_rec(crd: &Crd, s: &IntTuple, d: &IntTuple, kept: &mut Vec<Layout>, off: &mut Int) -> Result<()> {
    match crd {
        Crd::Under => kept.push(Layout { shape: s.clone(), stride: d.clone() }),
        Crd::Int(i) => *off = off.add(&crd2idx(&IntTuple::Int(i.clone()), s, d)?)?,
        Crd::Tuple(c) => match (s, d) {
            (IntTuple::Tuple(sv), IntTuple::Tuple(dv)) if c.len() == sv.len() => {
                for (k, ((c, s), d)) in c.iter().zip(sv).zip(dv).enumerate() {
                    slice_rec(c, s, d, kept, off).map_err(|e| e.in_mode("slice", k))?;
                }
            }
            _ => return Err(Error::new("slice", format!("coordinate {crd} does not match shape {s}"))),
        },
    }
    Ok(())
}

/// The tile of `l` at tile coordinate `coord` (CuTe's local_tile /
/// inner_partition): ((Tile...),(Rest...)) sliced at ((_...), coord).
pub fn local_tile(l: &Layout, tiler: &Tiler, coord: &Crd) -> Result<(Layout, Int)> {
    let z = zipped_divide(l, tiler).map_err(|e| e.within("local_tile"))?;
    let r0 = z.mode(0)?.rank();
    let r1 = z.mode(1)?.rank();
    let c1 = pad(coord, r1);
    slice_and_offset(&Crd::Tuple(vec![under_like(&z.mode(0)?, r0), c1]), &z).map_err(|e| e.within("local_tile"))
}

/// `_` for every mode of a mode: a tuple of `_` for a tuple mode, a single `_` for a leaf mode.
fn under_like(mode: &Layout, rank: usize) -> Crd {
    if mode.shape.is_tuple() {
        Crd::Tuple(vec![Crd::Under; rank])
    } else {
        Crd::Under
    }
}

fn pad(coord: &Crd, r: usize) -> Crd {
    match coord {
        Crd::Tuple(v) if v.len() < r => {
            let mut v = v.clone();
            v.resize(r, Crd::Under);
            Crd::Tuple(v)
        }
        c => c.clone(),
    }
}

/// The part of `l` owned by thread `idx` of the thread layout `thr` (CuTe's
/// local_partition / outer_partition): ((Tile...),(Rest...)) sliced at
/// (thread coordinate, (_...)).
pub fn local_partition(l: &Layout, thr: &Layout, idx: &Int) -> Result<(Layout, Int)> {
    const OP: &str = "local_partition";
    let tiler = Tiler::Shape(thr.shape.product_each()?);
    // The thread's coordinate in the thread layout, one index per top mode.
    let hier = idx2crd_strided(&IntTuple::Int(idx.clone()), &thr.shape, &thr.stride).map_err(|e| e.within(OP))?;
    let coord = if thr.shape.is_tuple() {
        let mut v = Vec::new();
        for (k, m) in thr.modes().iter().enumerate() {
            let hk = hier.mode(k).cloned().unwrap_or(IntTuple::from(0));
            let compact = Layout::col_major(m.shape.clone())?;
            v.push(Crd::Int(compact.eval(&hk)?));
        }
        Crd::Tuple(v)
    } else {
        Crd::Int(hier.as_int().cloned().unwrap_or(Int::ZERO))
    };
    let z = zipped_divide(l, &tiler).map_err(|e| e.within(OP))?;
    let r0 = z.mode(0)?.rank();
    let r1 = z.mode(1)?.rank();
    slice_and_offset(&Crd::Tuple(vec![pad(&coord, r0), under_like(&z.mode(1)?, r1)]), &z).map_err(|e| e.within(OP))
}

/// The values thread `tid` of a tiled copy owns in `l` (CuTe's `ThrCopy::partition_S/D`): `l` is
/// tiled by `tile`, each tile is mapped through the TV layout `tv` ((thread, value) -> tile
/// coordinate), and this thread's values are kept: a layout (V, RestM, RestN, ...) and the offset of
/// its origin.
pub fn tv_partition(l: &Layout, tv: &Layout, tile: &IntTuple, tid: &Int) -> Result<(Layout, Int)> {
    const OP: &str = "tv_partition";
    let z = zipped_divide(l, &Tiler::Shape(tile.clone())).map_err(|e| e.within(OP))?;
    let composed =
        crate::ops::composition::composition_tiler(&z, &Tiler::Tuple(vec![Tiler::Layout(tv.clone()), Tiler::Skip]))
            .map_err(|e| e.within(OP))?;
    let crd = Crd::Tuple(vec![Crd::Tuple(vec![Crd::Int(tid.clone()), Crd::Under]), Crd::Under]);
    let (sliced, offset) = slice_and_offset(&crd, &composed).map_err(|e| e.within(OP))?;
    let mut modes = vec![sliced.mode(0)?];
    modes.extend(sliced.mode(1)?.modes());
    Ok((Layout::concat(modes), offset))
}

/// Repeats `block` to fill `shape`, ordering the repetitions by `order`
/// (column-major when none).
pub fn tile_to_shape(block: &Layout, shape: &IntTuple, order: Option<&IntTuple>) -> Result<Layout> {
    const OP: &str = "tile_to_shape";
    let r = shape.rank();
    let padded = block.append_to_rank(r);
    let bs = padded.shape.product_each()?.modes();
    let ts = shape.product_each()?.modes();
    if bs.len() != ts.len() {
        return Err(Error::new(OP, format!("block {block} has more modes than the target shape {shape}")));
    }
    let mut reps = Vec::with_capacity(r);
    for (i, (b, t)) in bs.iter().zip(&ts).enumerate() {
        let (b, t) = (b.product()?, t.product()?);
        if b.divides(&t) == Some(false) {
            return Err(Error::at(OP, i, format!("block size {b} does not divide the target size {t}")));
        }
        reps.push(IntTuple::Int(t.ceil_div(&b)?));
    }
    let reps = IntTuple::Tuple(reps);
    let arrangement = match order {
        Some(o) => Layout::ordered(reps.clone(), o)?,
        None => Layout::col_major(reps.clone())?,
    };
    coalesce_by(&blocked_product(&padded, &arrangement)?, &reps)
}

/// make_layout_tv(thr, val): the tile (M,N) that `thr` threads each holding
/// `val` values cover, and the TV layout (thread, value) -> tile coordinate.
pub fn make_layout_tv(thr: &Layout, val: &Layout) -> Result<(IntTuple, Layout)> {
    const OP: &str = "make_layout_tv";
    let mn = raked_product(thr, val).map_err(|e| e.within(OP))?;
    let tiler = mn.shape.product_each()?;
    let inv = right_inverse(&mn).map_err(|e| e.within(OP))?;
    let tv_shape = IntTuple::Tuple(vec![IntTuple::Int(thr.size()?), IntTuple::Int(val.size()?)]);
    let tv = composition(&inv, &Layout::col_major(tv_shape)?).map_err(|e| e.within(OP))?;
    Ok((tiler, tv))
}

/// The number of elements that are contiguous in both `a` and `b` from index
/// 0 (CuTe's max_common_vector): `a(i)` and `b(i)` both step by 1 for
/// `i < n`. Static where CuTe's is; a dynamic count is returned as an
/// expression whose divisibility is a safe vector width.
pub fn max_common_vector(a: &Layout, b: &Layout) -> Result<Int> {
    let common = coalesce(&composition(a, &right_inverse(b)?)?)?;
    let first = common.modes().into_iter().next().unwrap_or(Layout::leaf(1, 0));
    match (&first.shape, &first.stride) {
        (IntTuple::Int(s), IntTuple::Int(d)) if d.is(1) => Ok(s.clone()),
        _ => Ok(Int::ONE),
    }
}

/// CuTe's max_common_layout: the layout of the common contiguous part, as a
/// function into `b`'s domain.
pub fn max_common_layout(a: &Layout, b: &Layout) -> Result<Layout> {
    let inv_b = right_inverse(b)?;
    let common = coalesce(&composition(a, &inv_b)?)?;
    let first = common.modes().into_iter().next().unwrap_or(Layout::leaf(1, 0));
    match (&first.shape, &first.stride) {
        (IntTuple::Int(_), IntTuple::Int(d)) if d.is(1) => composition(&inv_b, &first),
        _ => Ok(Layout::leaf(1, 0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tup;

    fn l(s: &str) -> Layout {
        s.parse().unwrap()
    }

    #[test]
    fn layout_tv_seed() {
        let (tiler, tv) = make_layout_tv(&l("(4,32):(32,1)"), &l("(4,8):(8,1)")).unwrap();
        assert_eq!(tiler.to_string(), "(16,256)");
        assert_eq!(tv.to_string(), "((32,4),(8,4)):((128,4),(16,1))");
    }

    #[test]
    fn tile_and_partition() {
        let (t, off) = local_tile(
            &l("(2048,2048):(2048,1)"),
            &Tiler::Shape(tup![16, 256]),
            &Crd::Tuple(vec![Crd::Int(Int::S(1)), Crd::Int(Int::S(2))]),
        )
        .unwrap();
        assert_eq!(t.to_string(), "(16,256):(2048,1)");
        assert_eq!(off, Int::S(16 * 2048 + 512));
        let (p, off) = local_partition(&l("(8,24):(1,8)"), &l("(4,8):(1,4)"), &Int::S(5)).unwrap();
        assert_eq!(p.to_string(), "(2,3):(4,64)");
        assert_eq!(off, Int::S(1 + 8));
    }

    #[test]
    fn tile_to_shape_example() {
        assert_eq!(
            tile_to_shape(&l("(2,2):(1,2)"), &tup![4, 6], None).unwrap().to_string(),
            "((2,2),(2,3)):((1,4),(2,8))"
        );
        assert!(tile_to_shape(&l("(2,4):(1,2)"), &tup![4, 6], None).is_err());
    }

    #[test]
    fn common_vector() {
        assert_eq!(max_common_vector(&l("(4,8):(8,1)"), &l("(4,8):(8,1)")).unwrap(), Int::S(32));
        assert_eq!(max_common_vector(&l("(4,8):(1,4)"), &l("(4,8):(8,1)")).unwrap(), Int::S(1));
        assert_eq!(max_common_vector(&l("(8,8):(1,8)"), &l("(8,8):(1,16)")).unwrap(), Int::S(8));
    }
}
