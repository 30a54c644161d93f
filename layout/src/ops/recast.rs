//! Reinterpreting a layout for another element width (CuTe's `upcast<N>`, `downcast<N>` and
//! `recast_layout<OldType, NewType>`), and `dice` (the modes a coordinate fixes; the complement of
//! `slice`).

use crate::error::{Error, Result};
use crate::int::Int;
use crate::int_tuple::IntTuple;
use crate::layout::Layout;
use crate::ops::coalesce::coalesce;
use crate::ops::partition::Crd;

/// CuTe's `shape_div` on integers, with pycute's precondition (one divides the other): `a / b`
/// when `b` divides `a`, else `signum(a * b)` (when `a` divides `b`).
fn shape_div(op: &str, a: i64, b: i64) -> Result<i64> {
    if b == 0 || (a % b != 0 && (a == 0 || b % a != 0)) {
        return Err(Error::new(op, format!("neither of {a} and {b} divides the other")));
    }
    Ok(if a % b == 0 { a / b } else { (a * b).signum() })
}

/// A function of a leaf's index, shape and stride, giving its new shape and stride.
type LeafMap<'a> = dyn Fn(usize, &Int, &Int) -> Result<(Int, Int)> + 'a;

fn map_leaves(l: &Layout, f: &LeafMap<'_>) -> Result<Layout> {
    let (mut shapes, mut strides) = (Vec::new(), Vec::new());
    for (k, (s, d)) in l.leaves().into_iter().enumerate() {
        let (s, d) = f(k, &s, &d)?;
        shapes.push(s);
        strides.push(d);
    }
    Layout::new(l.shape.unflatten_like(&mut shapes.into_iter())?, l.stride.unflatten_like(&mut strides.into_iter())?)
}

fn no_basis(op: &str, l: &Layout) -> Result<()> {
    l.no_basis(op)
}

/// CuTe's `upcast<N>(layout)`: the layout seen in elements `N` times wider. A stride-1 mode's
/// extent is divided by `N`; every other stride is divided by `N` (stride-0 modes stay). A dynamic
/// stride or extent must be provably divisible.
pub fn upcast(l: &Layout, n: i64) -> Result<Layout> {
    const OP: &str = "upcast";
    if n <= 0 {
        return Err(Error::new(OP, format!("the factor {n} must be positive")));
    }
    no_basis(OP, l)?;
    map_leaves(l, &|k, s, d| {
        let at = |reason: String| Error::at(OP, format!("{k} of the flattened layout"), reason);
        match d.as_static() {
            Some(0) => Ok((s.clone(), d.clone())),
            Some(dv) => {
                let by = shape_div(OP, n, dv.abs()).map_err(|e| at(e.reason))?;
                let s2 = match s.as_static() {
                    Some(sv) => Int::S(shape_div(OP, sv, by).map_err(|e| at(format!("extent {sv}: {}", e.reason)))?),
                    None => s
                        .exact_div(&Int::S(by))
                        .ok_or_else(|| at(format!("the extent {s} is not known to be a multiple of {by}")))?,
                };
                Ok((s2, Int::S(shape_div(OP, dv, n).map_err(|e| at(e.reason))?)))
            }
            None => {
                let d2 = d
                    .exact_div(&Int::S(n))
                    .ok_or_else(|| at(format!("the stride {d} is not known to be a multiple of {n}")))?;
                Ok((s.clone(), d2))
            }
        }
    })
}

/// CuTe's `downcast<N>(layout)`: the layout seen in elements `N` times narrower. A stride-1 mode's
/// extent is multiplied by `N`, every other stride by `N`. The layout needs a stride-1 mode (CuTe's
/// "Downcast requires adjacent elements").
pub fn downcast(l: &Layout, n: i64) -> Result<Layout> {
    const OP: &str = "downcast";
    if n <= 0 {
        return Err(Error::new(OP, format!("the factor {n} must be positive")));
    }
    no_basis(OP, l)?;
    if !l.leaves().iter().any(|(_, d)| d.is(1) || d.is(-1)) {
        return Err(Error::new(
            OP,
            format!("{l} has no stride-1 mode: the narrower elements of one element would not be adjacent"),
        ));
    }
    let n = Int::S(n);
    map_leaves(l, &|_, s, d| {
        if d.is(1) || d.is(-1) {
            Ok((s.mul(&n)?, d.clone()))
        } else {
            Ok((s.clone(), d.mul(&n)?))
        }
    })
}

/// CuTe's `recast_layout<OldType, NewType>(layout)` by the types' widths in bits (CuTe DSL's
/// `recast_layout(new_type_bits, old_type_bits, layout)`): the same memory counted in elements of
/// `new_bits` instead of `old_bits`. Equal widths give the layout back, a wider type `upcast`s, a
/// narrower one `downcast`s.
pub fn recast_layout(new_bits: i64, old_bits: i64, l: &Layout) -> Result<Layout> {
    const OP: &str = "recast_layout";
    if new_bits <= 0 || old_bits <= 0 {
        return Err(Error::new(OP, format!("element widths must be positive, found {new_bits} and {old_bits} bits")));
    }
    let g = gcd(new_bits, old_bits);
    let (num, den) = (new_bits / g, old_bits / g);
    match (num, den) {
        (1, 1) => Ok(l.clone()),
        (1, d) => downcast(l, d).map_err(|e| e.within(OP)),
        (n, 1) => upcast(l, n).map_err(|e| e.within(OP)),
        _ => Err(Error::new(OP, format!("{old_bits}-bit elements cannot be recast to {new_bits}-bit ones: neither width is a multiple of the other"))),
    }
}

/// Whether the memory `l` reaches in `old_bits` elements is exactly what `recast_layout(new_bits,
/// old_bits, l)` reaches: the same number of bits and, recast back, the same function (after
/// coalescing both). CuTe's `upcast` rounds a contiguous run shorter than one wide element up to one;
/// a tensor recast must refuse that, as the view would reach past the memory.
pub fn recast_is_exact(new_bits: i64, old_bits: i64, l: &Layout, recast: &Layout) -> Result<bool> {
    let old = l.size()?.mul(&Int::S(old_bits))?;
    let new = recast.size()?.mul(&Int::S(new_bits))?;
    // Symbolic sizes may not be decidable (`?{div=8} / 2 * 2`): only a proven difference refuses;
    // dynamic extents and strides are divided exactly by construction, so what can be short is a
    // static run, which the sizes and the round trip catch.
    if old.known_eq(&new) == Some(false) {
        return Ok(false);
    }
    // Coalesced first: a size-1 mode's stride (CuTe's upcast leaves 1 there) says nothing.
    let back = match recast_layout(old_bits, new_bits, &coalesce(recast)?) {
        Ok(b) => b,
        Err(_) => return Ok(false),
    };
    Ok(coalesce(&back)?.to_string() == coalesce(l)?.to_string())
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// CuTe's `dice(coord, layout)`: the modes paired with an integer in `coord` (a whole mode where the
/// integer stands for a tuple), in order; those at `_` are dropped. The complement of `slice`,
/// which keeps the `_` modes.
pub fn dice(crd: &Crd, l: &Layout) -> Result<Layout> {
    let mut kept = Vec::new();
    dice_rec(crd, &l.shape, &l.stride, &mut kept)?;
    Ok(Layout::concat(kept))
}

/// `dice` on an integer tuple (CuTe's `dice(coord, tuple)`).
pub fn dice_tuple(crd: &Crd, t: &IntTuple) -> Result<IntTuple> {
    Ok(dice(crd, &Layout { shape: t.clone(), stride: t.repeat_like(&Int::ZERO) })?.shape)
}

fn dice_rec(crd: &Crd, s: &IntTuple, d: &IntTuple, kept: &mut Vec<Layout>) -> Result<()> {
    match crd {
        Crd::Under => {}
        Crd::Int(_) => kept.push(Layout { shape: s.clone(), stride: d.clone() }),
        Crd::Tuple(c) => match (s, d) {
            (IntTuple::Tuple(sv), IntTuple::Tuple(dv)) if c.len() == sv.len() => {
                for (k, ((c, s), d)) in c.iter().zip(sv).zip(dv).enumerate() {
                    dice_rec(c, s, d, kept).map_err(|e| e.in_mode("dice", k))?;
                }
            }
            _ => return Err(Error::new("dice", format!("coordinate {crd} does not match shape {s}"))),
        },
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::partition::slice_and_offset;

    fn l(s: &str) -> Layout {
        s.parse().unwrap()
    }

    fn crd(s: &str) -> Crd {
        crate::expr::eval_str(s).unwrap().to_crd().unwrap()
    }

    #[test]
    fn upcast_examples() {
        // 8 contiguous f16 per row of 64 = 4 u32 per row of 32.
        assert_eq!(upcast(&l("(8,64):(64,1)"), 2).unwrap().to_string(), "(8,32):(32,1)");
        assert_eq!(upcast(&l("(4,8):(1,4)"), 4).unwrap().to_string(), "(1,8):(1,1)");
        // CuTe's GMMA atom in bits, as 16-bit elements.
        assert_eq!(upcast(&l("(1024,8):(1,1024)"), 16).unwrap().to_string(), "(64,8):(1,64)");
        assert_eq!(upcast(&l("(2,4):(0,1)"), 2).unwrap().to_string(), "(2,2):(0,1)");
        assert_eq!(upcast(&l("(2,4):(1,2)"), 4).unwrap().to_string(), "(1,2):(1,1)");
        assert!(upcast(&l("(6):(3)"), 2).is_err());
        assert_eq!(upcast(&l("(?{div=8},4):(1,?{div=16})"), 2).unwrap().to_string(), "(?{div=4},4):(1,?{div=8})");
        let e = upcast(&l("(8,4):(1,?)"), 2).unwrap_err();
        assert!(e.to_string().contains("not known to be a multiple of 2"), "{e}");
    }

    #[test]
    fn downcast_examples() {
        assert_eq!(downcast(&l("(4,8):(8,1)"), 2).unwrap().to_string(), "(4,16):(16,1)");
        assert_eq!(downcast(&l("(4,8):(1,4)"), 4).unwrap().to_string(), "(16,8):(1,16)");
        assert!(downcast(&l("(4,8):(2,8)"), 2).is_err());
    }

    #[test]
    fn recast_layout_by_bits() {
        assert_eq!(recast_layout(32, 16, &l("(8,64):(64,1)")).unwrap().to_string(), "(8,32):(32,1)");
        assert_eq!(recast_layout(8, 32, &l("(4,8):(8,1)")).unwrap().to_string(), "(4,32):(32,1)");
        assert_eq!(recast_layout(16, 16, &l("(3,5):(7,1)")).unwrap().to_string(), "(3,5):(7,1)");
        assert!(recast_layout(24, 16, &l("8:1")).is_err());
    }

    #[test]
    fn recast_round_trips_only_when_exact() {
        let a = l("(2,4):(1,2)");
        let r = recast_layout(64, 16, &a).unwrap();
        assert!(recast_is_exact(64, 16, &a, &r).unwrap());
        // 2 contiguous f16 are not one u64: CuTe's upcast rounds up, a tensor recast must not.
        let b = l("(2,3):(1,8)");
        let r = recast_layout(64, 16, &b).unwrap();
        assert!(!recast_is_exact(64, 16, &b, &r).unwrap());
        let c = l("(4,8):(8,1)");
        let r = recast_layout(16, 32, &c).unwrap();
        assert!(recast_is_exact(16, 32, &c, &r).unwrap());
        let d = l("(?,?{div=8}):(?{div=8},1)");
        let r = recast_layout(32, 16, &d).unwrap();
        assert_eq!(r.to_string(), "(?,?{div=4}):(?{div=4},1)");
        assert!(recast_is_exact(32, 16, &d, &r).unwrap());
        let e = l("(2,?):(1,?{div=8})");
        let r = recast_layout(64, 16, &e).unwrap();
        assert!(!recast_is_exact(64, 16, &e, &r).unwrap());
    }

    #[test]
    fn dice_is_the_complement_of_slice() {
        let a = l("((2,3),5):((3,6),18)");
        assert_eq!(dice(&crd("((2,_),0)"), &a).unwrap().to_string(), "(2,5):(3,18)");
        assert_eq!(dice(&crd("(1,_)"), &a).unwrap().to_string(), "((2,3)):((3,6))");
        assert_eq!(dice(&crd("(_,_)"), &a).unwrap().to_string(), "():()");
        assert_eq!(slice_and_offset(&crd("(1,_)"), &a).unwrap().0.to_string(), "(5):(18)");
        assert_eq!(dice_tuple(&crd("(1,_,2)"), &"(4,8,16)".parse().unwrap()).unwrap().to_string(), "(4,16)");
        assert!(dice(&crd("(1,_,2)"), &a).is_err());
    }
}
