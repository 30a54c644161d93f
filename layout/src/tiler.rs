//! Tilers: the right-hand side of by-mode composition, divides and products.
//!
//! A tiler is a layout (applied to the whole layout), a shape (each integer
//! `n` means the layout `n:1` applied to the corresponding mode), a tuple
//! `<T0,T1,...>` (Ti applied to mode i; modes past the tuple are kept), or
//! `_` (keep the mode as it is).

use crate::error::{Error, Result};
use crate::int_tuple::IntTuple;
use crate::layout::Layout;
use std::fmt;

#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Tiler {
    Layout(Layout),
    Shape(IntTuple),
    Tuple(Vec<Tiler>),
    Skip,
}

/// What a tiler does at one level.
pub enum TilerView {
    Leaf(Layout),
    ByMode(Vec<Tiler>),
    Skip,
}

impl Tiler {
    pub fn view(&self) -> TilerView {
        match self {
            Tiler::Layout(l) => TilerView::Leaf(l.clone()),
            Tiler::Shape(IntTuple::Int(n)) => TilerView::Leaf(Layout::leaf(n.clone(), 1)),
            Tiler::Shape(IntTuple::Tuple(v)) => TilerView::ByMode(v.iter().cloned().map(Tiler::Shape).collect()),
            Tiler::Tuple(v) => TilerView::ByMode(v.clone()),
            Tiler::Skip => TilerView::Skip,
        }
    }

    /// Applies `leaf` by mode: the tuple levels of the tiler are walked
    /// against the modes of `a`; modes of `a` past the tiler are kept.
    pub fn by_mode(&self, a: &Layout, op: &str, leaf: &dyn Fn(&Layout, &Layout) -> Result<Layout>) -> Result<Layout> {
        match self.view() {
            TilerView::Leaf(b) => leaf(a, &b),
            TilerView::Skip => Ok(a.clone()),
            TilerView::ByMode(ts) => {
                let modes = a.modes();
                if ts.len() > modes.len() {
                    return Err(Error::new(
                        op,
                        format!("the tiler {self} has {} modes but {a} has only {}", ts.len(), modes.len()),
                    ));
                }
                let mut out = Vec::with_capacity(modes.len());
                for (i, m) in modes.into_iter().enumerate() {
                    out.push(match ts.get(i) {
                        Some(t) => t.by_mode(&m, op, leaf).map_err(|e| e.in_mode(op, i))?,
                        None => m,
                    });
                }
                Ok(Layout::concat(out))
            }
        }
    }
}

impl fmt::Display for Tiler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tiler::Layout(l) => write!(f, "{l}"),
            Tiler::Shape(s) => write!(f, "{s}"),
            Tiler::Skip => write!(f, "_"),
            Tiler::Tuple(v) => {
                write!(f, "<")?;
                for (k, t) in v.iter().enumerate() {
                    if k > 0 {
                        write!(f, ",")?;
                    }
                    write!(f, "{t}")?;
                }
                write!(f, ">")
            }
        }
    }
}

impl From<Layout> for Tiler {
    fn from(l: Layout) -> Tiler {
        Tiler::Layout(l)
    }
}

/// A static mode of `l` that `tiler` does not tile exactly (the last tile would reach past it): its
/// path in `l` (mode indices, outermost first; empty for `l` itself), the mode, its extent and the
/// tile's size, the first such mode found. Dynamic extents are not judged here (they become launch
/// conditions). Used by the front end and by `cute-verify`, so both refuse the same partitions.
pub fn partial_tile(l: &Layout, tiler: &Tiler) -> Option<(Vec<usize>, Layout, i64, i64)> {
    match tiler.view() {
        TilerView::Skip => None,
        TilerView::ByMode(tilers) => tilers.iter().enumerate().find_map(|(i, sub)| {
            let (mut path, mode, e, s) = partial_tile(&l.mode(i).ok()?, sub)?;
            path.insert(0, i);
            Some((path, mode, e, s))
        }),
        TilerView::Leaf(tile) => {
            let (extent, size) = (l.size().ok()?.as_static()?, tile.size().ok()?.as_static()?);
            (size > 0 && extent % size != 0).then(|| (Vec::new(), l.clone(), extent, size))
        }
    }
}

#[cfg(test)]
mod partial_tile_tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn finds_the_first_static_mode_a_tile_does_not_divide() {
        let l = Layout::from_str("(128,32,3):(40,1,5120)").unwrap();
        let shape = |s: &str| Tiler::Shape(IntTuple::from_str(s).unwrap());
        assert_eq!(partial_tile(&l, &shape("(32,32)")), None);
        let (path, mode, e, t) = partial_tile(&l, &shape("(32,64)")).unwrap();
        assert_eq!((path, mode.to_string(), e, t), (vec![1], "32:1".to_string(), 32, 64));
        // Dynamic extents are left to launch conditions.
        assert_eq!(partial_tile(&Layout::from_str("(?,32):(32,1)").unwrap(), &shape("(24,32)")), None);
    }
}
