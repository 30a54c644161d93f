//! Products: A x B = (A, complement(A, size(A)*cosize(B)) o B), and its
//! re-groupings; blocked and raked products interleave the modes of A and B.

use crate::error::Result;
use crate::layout::Layout;
use crate::ops::complement::complement;
use crate::ops::composition::composition;
use crate::ops::divide::{flat_both, hier_unzip, tile_rest};
use crate::tiler::Tiler;

/// A x B for one layout.
pub fn logical_product_layout(a: &Layout, b: &Layout) -> Result<Layout> {
    const OP: &str = "logical_product";
    let cot = a.size().and_then(|s| s.mul(&b.cosize()?)).map_err(|e| e.within(OP))?;
    let c = complement(a, &cot).map_err(|e| e.within(OP))?;
    Ok(Layout::concat(vec![a.clone(), composition(&c, b).map_err(|e| e.within(OP))?]))
}

pub fn logical_product(a: &Layout, t: &Tiler) -> Result<Layout> {
    t.by_mode(a, "logical_product", &logical_product_layout)
}

pub fn zipped_product(a: &Layout, t: &Tiler) -> Result<Layout> {
    hier_unzip("zipped_product", &logical_product_layout, a, t)
}

pub fn tiled_product(a: &Layout, t: &Tiler) -> Result<Layout> {
    tile_rest(&zipped_product(a, t)?)
}

pub fn flat_product(a: &Layout, t: &Tiler) -> Result<Layout> {
    flat_both(&zipped_product(a, t)?)
}

/// Mode i of the result is (x_i, y_i).
fn zip2(x: &Layout, y: &Layout) -> Result<Layout> {
    if !x.shape.is_tuple() && !y.shape.is_tuple() {
        return Ok(Layout::concat(vec![x.clone(), y.clone()]));
    }
    let (xm, ym) = (x.modes(), y.modes());
    Ok(Layout::concat(xm.into_iter().zip(ym).map(|(a, b)| Layout::concat(vec![a, b])).collect()))
}

fn padded_product(a: &Layout, b: &Layout) -> Result<Layout> {
    let r = a.rank().max(b.rank());
    logical_product_layout(&a.append_to_rank(r), &b.append_to_rank(r))
}

/// Each mode i: (A_i, B_i): A repeated as blocks, arranged by B.
pub fn blocked_product(a: &Layout, b: &Layout) -> Result<Layout> {
    let p = padded_product(a, b).map_err(|e| e.within("blocked_product"))?;
    zip2(&p.mode(0)?, &p.mode(1)?)
}

/// Each mode i: (B_i, A_i): A's elements interleaved across B's repetitions.
pub fn raked_product(a: &Layout, b: &Layout) -> Result<Layout> {
    let p = padded_product(a, b).map_err(|e| e.within("raked_product"))?;
    zip2(&p.mode(1)?, &p.mode(0)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(s: &str) -> Layout {
        s.parse().unwrap()
    }

    #[test]
    fn seed_examples() {
        let t = Tiler::Layout(l("6:1"));
        assert_eq!(logical_product(&l("(2,2):(4,1)"), &t).unwrap().to_string(), "((2,2),(2,3)):((4,1),(2,8))");
        let (a, b) = (l("(2,5):(5,1)"), l("(3,4):(1,3)"));
        assert_eq!(blocked_product(&a, &b).unwrap().to_string(), "((2,3),(5,4)):((5,10),(1,30))");
        assert_eq!(raked_product(&a, &b).unwrap().to_string(), "((3,2),(4,5)):((10,5),(30,1))");
        let t = Tiler::Layout(b.clone());
        assert_eq!(zipped_product(&a, &t).unwrap().to_string(), "((2,5),(3,4)):((5,1),(10,30))");
        assert_eq!(tiled_product(&a, &t).unwrap().to_string(), "((2,5),3,4):((5,1),10,30)");
        assert_eq!(flat_product(&a, &t).unwrap().to_string(), "(2,5,3,4):(5,1,10,30)");
    }
}
