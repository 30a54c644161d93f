//! Divides: A / B = A o (B, complement(B, size(A))), and its re-groupings.
//!
//! logical_divide : ((TileM,RestM), (TileN,RestN), L, ...)
//! zipped_divide  : ((TileM,TileN), (RestM,RestN,L,...))
//! tiled_divide   : ((TileM,TileN), RestM, RestN, L, ...)
//! flat_divide    : (TileM, TileN, RestM, RestN, L, ...)

use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::ops::complement::complement;
use crate::ops::composition::composition;
use crate::tiler::{Tiler, TilerView};

/// A / B for one layout tiler.
pub fn logical_divide_layout(a: &Layout, b: &Layout) -> Result<Layout> {
    const OP: &str = "logical_divide";
    let size = a.size().map_err(|e| e.within(OP))?;
    let rest = complement(b, &size).map_err(|e| e.within(OP))?;
    composition(a, &Layout::concat(vec![b.clone(), rest])).map_err(|e| e.within(OP))
}

pub fn logical_divide(a: &Layout, t: &Tiler) -> Result<Layout> {
    t.by_mode(a, "logical_divide", &logical_divide_layout)
}

/// Applies a rank-2 `split` by mode and gathers the first modes into mode 0
/// and the second modes (then A's untouched modes) into mode 1.
pub(crate) fn hier_unzip(
    op: &str,
    split: &dyn Fn(&Layout, &Layout) -> Result<Layout>,
    a: &Layout,
    t: &Tiler,
) -> Result<Layout> {
    match t.view() {
        TilerView::Skip => Ok(Layout::concat(vec![Layout::leaf(1, 0), a.clone()])),
        TilerView::Leaf(b) => split(a, &b),
        TilerView::ByMode(ts) => {
            let modes = a.modes();
            if ts.len() > modes.len() {
                return Err(Error::new(
                    op,
                    format!("the tiler {t} has {} modes but {a} has only {}", ts.len(), modes.len()),
                ));
            }
            let mut first = Vec::new();
            let mut second = Vec::new();
            for (i, ti) in ts.iter().enumerate() {
                let r = hier_unzip(op, split, &modes[i], ti).map_err(|e| e.in_mode(op, i))?;
                first.push(r.mode(0)?);
                second.push(r.mode(1)?);
            }
            second.extend_from_slice(&modes[ts.len()..]);
            Ok(Layout::concat(vec![Layout::concat(first), Layout::concat(second)]))
        }
    }
}

pub fn zipped_divide(a: &Layout, t: &Tiler) -> Result<Layout> {
    hier_unzip("zipped_divide", &logical_divide_layout, a, t)
}

/// (tile, rest...) : the rest mode's modes become top-level modes.
pub(crate) fn tile_rest(z: &Layout) -> Result<Layout> {
    let mut out = vec![z.mode(0)?];
    out.extend(z.mode(1)?.modes());
    Ok(Layout::concat(out))
}

/// (tile..., rest...) : both modes' modes become top-level modes.
pub(crate) fn flat_both(z: &Layout) -> Result<Layout> {
    let mut out = z.mode(0)?.modes();
    out.extend(z.mode(1)?.modes());
    Ok(Layout::concat(out))
}

pub fn tiled_divide(a: &Layout, t: &Tiler) -> Result<Layout> {
    tile_rest(&zipped_divide(a, t).map_err(|e| e.within("tiled_divide"))?)
}

pub fn flat_divide(a: &Layout, t: &Tiler) -> Result<Layout> {
    flat_both(&zipped_divide(a, t).map_err(|e| e.within("flat_divide"))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(s: &str) -> Layout {
        s.parse().unwrap()
    }
    fn t(s: &str) -> Tiler {
        s.parse().unwrap()
    }

    #[test]
    fn seed_examples() {
        assert_eq!(
            logical_divide(&l("(4,2,3):(2,1,8)"), &t("4:2")).unwrap().to_string(),
            "((2,2),(2,3)):((4,1),(2,8))"
        );
        let a = l("(9,(4,8)):(59,(13,1))");
        let b = t("<3:3,(2,4):(1,8)>");
        assert_eq!(logical_divide(&a, &b).unwrap().to_string(), "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))");
        assert_eq!(zipped_divide(&a, &b).unwrap().to_string(), "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))");
        assert_eq!(tiled_divide(&a, &b).unwrap().to_string(), "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))");
        assert_eq!(flat_divide(&a, &b).unwrap().to_string(), "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))");
        assert_eq!(
            zipped_divide(&l("(2048,2048):(2048,1)"), &t("(1,4)")).unwrap().to_string(),
            "((1,4),(2048,512)):((0,1),(2048,4))"
        );
    }
}
