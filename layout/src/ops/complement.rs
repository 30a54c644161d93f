//! complement(L, M): the layout that fills the gaps of L's image up to M.
//! Its image is disjoint from L's (except 0), its strides are ordered, and
//! (L, complement(L, M)) covers [0, M) when L is injective.

use crate::error::{Error, Result};
use crate::int::Int;
use crate::layout::Layout;
use crate::ops::coalesce::{coalesce, from_modes};

const OP: &str = "complement";

/// complement with an explicit cotarget (an integer, or the size of a shape).
pub fn complement(l: &Layout, cotarget: &Int) -> Result<Layout> {
    l.no_basis(OP)?;
    if cotarget.has_basis() {
        return Err(Error::new(OP, format!("the cotarget {cotarget} is an arithmetic tuple, not an integer")));
    }
    // Size-1 and stride-0 modes do not take part (CuTe's filter).
    let mut modes: Vec<(usize, Int, Int)> = Vec::new();
    for (k, (s, d)) in l.leaves().into_iter().enumerate() {
        if s.is(1) || d.is(0) {
            continue;
        }
        if d.signum() < 0 {
            return Err(Error::at(OP, k, format!("stride {d} is negative")));
        }
        // An empty mode leaves no span for the modes above it to be measured against.
        if s.is(0) {
            return Err(Error::at(OP, k, "its extent is 0: a layout with an empty mode has no complement"));
        }
        modes.push((k, s, d));
    }
    // Sort by stride; every pair must be comparable.
    for i in 1..modes.len() {
        let mut j = i;
        while j > 0 {
            let ord = modes[j - 1].2.known_cmp(&modes[j].2).ok_or_else(|| {
                Error::new(
                    OP,
                    format!(
                        "the strides {} (leaf {}) and {} (leaf {}) cannot be ordered",
                        modes[j - 1].2,
                        modes[j - 1].0,
                        modes[j].2,
                        modes[j].0
                    ),
                )
            })?;
            if ord.is_gt() {
                modes.swap(j - 1, j);
                j -= 1;
            } else {
                break;
            }
        }
    }
    let mut current = Int::ONE;
    let mut out: Vec<(Int, Int)> = Vec::new();
    for (k, s, d) in modes {
        let new_shape = match (&d, &current) {
            (Int::S(dv), Int::S(cv)) => {
                if dv < cv {
                    return Err(Error::at(
                        OP,
                        format!("{k} of the flattened layout"),
                        format!("the layout {l} is not injective: stride {dv} falls inside the span {cv} of the modes with smaller strides"),
                    ));
                }
                // Rounded down, as CuTe does: the gap below this mode.
                Int::S(dv / cv)
            }
            _ => d.exact_div(&current).ok_or_else(|| {
                Error::at(
                    OP,
                    format!("{k} of the flattened layout"),
                    format!("cannot decide whether {current} divides the stride {d}"),
                )
            })?,
        };
        out.push((new_shape, current.clone()));
        current = s.mul(&d)?;
    }
    let last = cotarget.ceil_div(&current)?;
    out.push((last, current));
    coalesce(&from_modes(out)).map_err(|e| e.within(OP))
}

/// complement(L) = complement(L, cosize(L)).
pub fn complement_default(l: &Layout) -> Result<Layout> {
    l.no_basis(OP)?;
    complement(l, &l.cosize()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(s: &str) -> Layout {
        s.parse().unwrap()
    }

    #[test]
    fn examples() {
        assert_eq!(complement(&l("4:1"), &Int::S(24)).unwrap().to_string(), "6:4");
        // The seed's typo says 6:4; (6,4):(4,1) covers 24, so the answer is 4:1.
        assert_eq!(complement(&l("6:4"), &Int::S(24)).unwrap().to_string(), "4:1");
        assert_eq!(complement(&l("(2,2):(1,6)"), &Int::S(24)).unwrap().to_string(), "(3,2):(2,12)");
        assert_eq!(complement(&l("4:2"), &Int::S(24)).unwrap().to_string(), "(2,3):(1,8)");
    }

    #[test]
    fn non_injective_is_an_error() {
        let e = complement(&l("(2,2):(1,1)"), &Int::S(8)).unwrap_err();
        assert!(e.to_string().contains("not injective"), "{e}");
    }
}
