//! right_inverse and left_inverse.
//!
//! right_inverse(L) = R with L(R(i)) == i for i < size(R), R as large as the
//! contiguous prefix of L's image allows. left_inverse(L) = R with
//! R(L(i)) == i for i < size(L) (L injective).

use crate::error::Result;
use crate::int::Int;
use crate::layout::Layout;
use crate::ops::coalesce::{coalesce_modes, from_modes};
use crate::ops::complement::complement_default;

pub fn right_inverse(l: &Layout) -> Result<Layout> {
    l.no_basis("right_inverse")?;
    let flat = coalesce_modes(l).map_err(|e| e.within("right_inverse"))?;
    // Compact column-major strides of the coalesced shape: the index of a mode
    // in the domain.
    let mut rstride = Vec::with_capacity(flat.len());
    let mut acc = Int::ONE;
    for (s, _) in &flat {
        rstride.push(acc.clone());
        acc = acc.mul(s)?;
    }
    // Follow the image from 1: the mode whose |stride| is the current extent
    // continues it. Equality is decided symbolically for dynamic values, so
    // (16,?):(1,16) inverts to ?{div=16}:1.
    let mut used = vec![false; flat.len()];
    let mut current = Int::ONE;
    let mut out = Vec::new();
    loop {
        let mut found = None;
        for (j, (_, d)) in flat.iter().enumerate() {
            if !used[j] && d.abs()?.known_eq(&current) == Some(true) {
                found = Some(j);
                break;
            }
        }
        let Some(j) = found else { break };
        used[j] = true;
        let (s, d) = &flat[j];
        out.push((s.clone(), rstride[j].mul(&Int::S(d.signum()))?));
        current = s.mul(&d.abs()?)?;
    }
    Ok(from_modes(out))
}

pub fn left_inverse(l: &Layout) -> Result<Layout> {
    l.no_basis("left_inverse")?;
    let c = complement_default(l).map_err(|e| e.within("left_inverse"))?;
    right_inverse(&Layout::concat(vec![l.clone(), c]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(s: &str) -> Layout {
        s.parse().unwrap()
    }

    #[test]
    fn examples() {
        assert_eq!(right_inverse(&l("(4,32,32):(1024,32,1)")).unwrap().to_string(), "(32,32,4):(128,4,1)");
        assert_eq!(right_inverse(&l("(2,3):(3,1)")).unwrap().to_string(), "(3,2):(2,1)");
        assert_eq!(right_inverse(&l("(16,?):(1,16)")).unwrap().to_string(), "?{div=16}:1");
        assert_eq!(right_inverse(&l("4:2")).unwrap().to_string(), "1:0");
        assert_eq!(left_inverse(&l("4:2")).unwrap().to_string(), "(2,4):(4,1)");
    }
}
