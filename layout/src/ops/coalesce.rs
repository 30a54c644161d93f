//! coalesce and filter: simplify a layout without changing it as a function
//! on the integers.

use crate::error::{Error, Result};
use crate::int::Int;
use crate::int_tuple::IntTuple;
use crate::layout::Layout;

/// Builds a layout from flat (shape, stride) modes: `1:0` when empty, a leaf
/// when one mode, a flat tuple otherwise.
pub(crate) fn from_modes(modes: Vec<(Int, Int)>) -> Layout {
    match modes.len() {
        0 => Layout::leaf(1, 0),
        1 => {
            let (s, d) = modes.into_iter().next().unwrap_or((Int::ONE, Int::ZERO));
            Layout::leaf(s, d)
        }
        _ => {
            let (s, d): (Vec<_>, Vec<_>) = modes.into_iter().map(|(s, d)| (IntTuple::Int(s), IntTuple::Int(d))).unzip();
            Layout { shape: IntTuple::Tuple(s), stride: IntTuple::Tuple(d) }
        }
    }
}

/// Flat modes of the coalesced layout: static size-1 modes dropped, and a
/// mode merged into its predecessor when `s0*d0 == d1` is provable (for
/// dynamic values too, by symbolic equality).
pub(crate) fn coalesce_modes(l: &Layout) -> Result<Vec<(Int, Int)>> {
    let mut out: Vec<(Int, Int)> = Vec::new();
    for (s, d) in l.leaves() {
        if s.is(1) {
            continue;
        }
        if let Some(last) = out.last_mut() {
            if last.0.mul(&last.1)?.known_eq(&d) == Some(true) {
                last.0 = last.0.mul(&s)?;
                continue;
            }
        }
        out.push((s, d));
    }
    Ok(out)
}

/// CuTe's `coalesce(layout)`: same size, same function, depth <= 1.
pub fn coalesce(l: &Layout) -> Result<Layout> {
    Ok(from_modes(coalesce_modes(l).map_err(|e| e.within("coalesce"))?))
}

/// By-mode coalesce: a tuple profile coalesces mode i by `profile[i]`;
/// modes past the profile stay as they are; an integer profile coalesces the
/// whole (sub)layout.
pub fn coalesce_by(l: &Layout, profile: &IntTuple) -> Result<Layout> {
    by_profile(l, profile, "coalesce", &coalesce)
}

/// CuTe's `filter`: stride-0 modes become size 1, then coalesce.
pub fn filter(l: &Layout) -> Result<Layout> {
    coalesce(&filter_zeros(l)?).map_err(|e| e.within("filter"))
}

pub fn filter_by(l: &Layout, profile: &IntTuple) -> Result<Layout> {
    by_profile(l, profile, "filter", &filter)
}

/// CuTe's `filter_zeros`: every static stride-0 mode gets shape 1.
pub fn filter_zeros(l: &Layout) -> Result<Layout> {
    let leaves: Vec<Int> = l.leaves().into_iter().map(|(s, d)| if d.is(0) { Int::ONE } else { s }).collect();
    let shape = l.shape.unflatten_like(&mut leaves.into_iter())?;
    Layout::new(shape, l.stride.clone())
}

fn by_profile(l: &Layout, profile: &IntTuple, op: &str, f: &dyn Fn(&Layout) -> Result<Layout>) -> Result<Layout> {
    match profile {
        IntTuple::Int(_) => f(l),
        IntTuple::Tuple(p) => {
            if p.len() > l.rank() {
                return Err(Error::new(op, format!("profile {profile} has more modes than {l}")));
            }
            let modes = l.modes();
            let mut out = Vec::with_capacity(modes.len());
            for (i, m) in modes.into_iter().enumerate() {
                out.push(if i < p.len() { by_profile(&m, &p[i], op, f).map_err(|e| e.in_mode(op, i))? } else { m });
            }
            Ok(Layout::concat(out))
        }
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
    fn coalesce_examples() {
        assert_eq!(coalesce(&l("(2,(1,6)):(1,(6,2))")).unwrap().to_string(), "12:1");
        assert_eq!(coalesce(&l("((2,(3,4)),(3,2),1):((4,(8,24)),(2,6),12)")).unwrap().to_string(), "(24,6):(4,2)");
        assert_eq!(coalesce(&l("(1,1):(3,4)")).unwrap().to_string(), "1:0");
        assert_eq!(coalesce_by(&l("(2,(1,6)):(1,(6,2))"), &tup![1, 1]).unwrap().to_string(), "(2,6):(1,2)");
    }

    #[test]
    fn coalesce_dynamic_merges_when_provable() {
        assert_eq!(coalesce(&l("(192,?):(1,192)")).unwrap().to_string(), "?{div=192}:1");
        assert_eq!(coalesce(&l("(2,(1,6)):(1,(?,2))")).unwrap().to_string(), "12:1");
        assert_eq!(coalesce(&l("(?,4):(1,8)")).unwrap().to_string(), "(?,4):(1,8)");
    }

    #[test]
    fn filter_examples() {
        assert_eq!(filter(&l("(2,3,4):(0,1,3)")).unwrap().to_string(), "12:1");
        assert_eq!(filter(&l("(2,3):(0,0)")).unwrap().to_string(), "1:0");
    }
}
