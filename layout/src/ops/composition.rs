//! Composition: R = A o B, R(c) = A(B(c)) for every coordinate c of B, and
//! R has B's shape (up to static size-1 modes).

use crate::error::{Error, Result};
use crate::int::Int;
use crate::int_tuple::IntTuple;
use crate::layout::Layout;
use crate::ops::coalesce::{coalesce_modes, from_modes};
use crate::tiler::Tiler;

const OP: &str = "composition";

/// `A o B` for layouts.
///
/// `A` may have basis strides (an identity layout: the result maps B's
/// coordinates to A's coordinates, as CuTe's counting tensors do); `B` must
/// have integer strides, since its strides are divided through A's shape.
pub fn composition(a: &Layout, b: &Layout) -> Result<Layout> {
    if b.has_basis_strides() {
        let e = b.no_basis(OP).err().unwrap_or_else(|| Error::new(OP, "rhs has basis strides"));
        return Err(Error { reason: format!("rhs {b}: {}", e.reason), ..e });
    }
    let mut flat = coalesce_modes(a).map_err(|e| e.within(OP))?;
    if flat.is_empty() {
        flat.push((Int::ONE, Int::ZERO));
    }
    compose_rhs(&flat, &b.shape, &b.stride, &mut Vec::new())
}

/// By-mode composition with a tiler (`<3:4,8:2>`, a shape `(3,8)`, ...).
pub fn composition_tiler(a: &Layout, t: &Tiler) -> Result<Layout> {
    t.by_mode(a, OP, &composition)
}

/// Right-distributivity: a tuple rhs composes each of its modes with the
/// whole lhs, keeping the rhs's nesting.
fn compose_rhs(flat: &[(Int, Int)], shape: &IntTuple, stride: &IntTuple, path: &mut Vec<usize>) -> Result<Layout> {
    match (shape, stride) {
        (IntTuple::Tuple(s), IntTuple::Tuple(d)) => {
            let mut out = Vec::with_capacity(s.len());
            for (k, (s, d)) in s.iter().zip(d).enumerate() {
                path.push(k);
                out.push(compose_rhs(flat, s, d, path)?);
                path.pop();
            }
            Ok(Layout::concat(out))
        }
        (IntTuple::Int(s), IntTuple::Int(d)) => compose_leaf(flat, s, d).map_err(|reason| {
            if path.is_empty() {
                Error::new(OP, reason)
            } else {
                Error::at(OP, path.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("."), reason)
            }
        }),
        _ => Err(Error::new(OP, "rhs shape and stride are not congruent")),
    }
}

/// `A o s:d` for the flat coalesced modes of A. Errors are reasons; the
/// caller adds which rhs mode they belong to.
fn compose_leaf(flat: &[(Int, Int)], s: &Int, d: &Int) -> std::result::Result<Layout, String> {
    let e = |x: Error| x.to_string();
    if d.is(0) {
        return Ok(Layout::leaf(s.clone(), 0));
    }
    let n = flat.len();
    if n == 1 {
        // CuTe gives every static size-1 result the stride 0.
        return Ok(if s.is(1) { Layout::leaf(1, 0) } else { Layout::leaf(s.clone(), d.mul(&flat[0].1).map_err(e)?) });
    }
    let sign = Int::S(if d.signum() < 0 { -1 } else { 1 });
    let mut rest_s = s.clone();
    let mut rest_d = d.abs().map_err(e)?;
    let mut out: Vec<(Int, Int)> = Vec::new();
    for (i, (si, di)) in flat[..n - 1].iter().enumerate() {
        // Divide the rhs stride out of this lhs mode. As in CuTe, the stride
        // condition is checked on every mode but the last, even once the
        // shape is used up.
        let (new_shape, new_stride);
        if rest_d.is(1) {
            new_shape = si.clone();
            new_stride = di.clone();
        } else if si.divides(&rest_d) == Some(true) {
            // The stride jumps over this whole mode.
            rest_d = rest_d.exact_div(si).ok_or("internal: exact division failed")?;
            continue;
        } else if rest_d.divides(si) == Some(true) {
            new_shape = si.exact_div(&rest_d).ok_or("internal: exact division failed")?;
            new_stride = di.mul(&rest_d).map_err(e)?;
            rest_d = Int::ONE;
        } else if si.is_static() && rest_d.is_static() {
            return Err(format!(
                "the stride divisibility condition fails at mode {i} of the coalesced lhs: stride {rest_d} and shape {si} do not divide one another"
            ));
        } else {
            // Run-time values: CuTe's shape_div, i.e. rounded-up quotients.
            new_shape = si.ceil_div(&rest_d).map_err(e)?;
            new_stride = di.mul(&rest_d).map_err(e)?;
            rest_d = rest_d.ceil_div(si).map_err(e)?;
        }
        if new_shape.is(1) || rest_s.is(1) {
            continue;
        }
        // Mod the rhs shape out of what is left of this mode.
        let m;
        if new_shape.divides(&rest_s) == Some(true) {
            m = new_shape.clone();
            rest_s = rest_s.exact_div(&new_shape).ok_or("internal: exact division failed")?;
        } else if rest_s.known_cmp(&new_shape).is_some_and(|o| o.is_le()) || rest_s.divides(&new_shape) == Some(true) {
            m = rest_s.clone();
            rest_s = Int::ONE;
        } else if new_shape.is_static() && rest_s.is_static() {
            return Err(format!(
                "the shape divisibility condition fails at mode {i} of the coalesced lhs: shape {rest_s} is neither a multiple of {new_shape} nor fits in it"
            ));
        } else {
            m = new_shape.minimum(&rest_s);
            rest_s = rest_s.ceil_div(&new_shape).map_err(e)?;
        }
        out.push((m, new_stride.mul(&sign).map_err(e)?));
    }
    if !rest_s.is(1) || out.is_empty() {
        let last = rest_d.mul(&flat[n - 1].1).and_then(|x| x.mul(&sign)).map_err(e)?;
        out.push(if rest_s.is(1) { (Int::ONE, Int::ZERO) } else { (rest_s, last) });
    }
    Ok(from_modes(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(s: &str) -> Layout {
        s.parse().unwrap()
    }
    fn c(a: &str, b: &str) -> String {
        composition(&l(a), &l(b)).map(|x| x.to_string()).unwrap_or_else(|e| format!("error: {e}"))
    }

    #[test]
    fn seed_examples() {
        assert_eq!(c("(6,2):(8,2)", "(4,3):(3,1)"), "((2,2),3):((24,2),8)");
        assert_eq!(c("(10,2):(16,4)", "(5,4):(1,5)"), "(5,(2,2)):(16,(80,4))");
        assert_eq!(c("(6,2):(?,2)", "(4,3):(3,1)"), "((2,2),3):((?{div=3},2),?)");
        assert_eq!(c("(16,256):(2048,1)", "((32,4),(8,4)):((128,4),(16,1))"), "((32,4),(8,4)):((8,8192),(1,2048))");
    }

    #[test]
    fn by_mode() {
        let t = Tiler::Tuple(vec![Tiler::Layout(l("3:4")), Tiler::Layout(l("8:2"))]);
        assert_eq!(composition_tiler(&l("(12,(4,8)):(59,(13,1))"), &t).unwrap().to_string(), "(3,(2,4)):(236,(26,1))");
        let t = Tiler::Shape(crate::tup![3, 8]);
        assert_eq!(composition_tiler(&l("(12,(4,8)):(59,(13,1))"), &t).unwrap().to_string(), "(3,(4,2)):(59,(13,1))");
        assert_eq!(composition_tiler(&l("(?,(?,?)):(?,(?,?))"), &t).unwrap().to_string(), "(3,(?,?)):(?,(?,?))");
    }

    #[test]
    fn errors_name_the_mode() {
        let e = c("(4,3):(1,10)", "6:1");
        assert!(e.starts_with("error: composition:") && e.contains("shape divisibility"), "{e}");
        let e = c("(3,5):(1,10)", "(2,2):(1,2)");
        assert!(e.contains("mode 1") && e.contains("stride divisibility"), "{e}");
    }

    #[test]
    fn dynamic_rhs_and_lhs() {
        assert_eq!(c("?{div=192}:1", "(256,192):(1,256)"), "(256,192):(1,256)");
        assert_eq!(c("(4096,8192):(1,4096)", "?{div=4096}:1"), "?{div=4096}:1");
        assert_eq!(c("(4096,8192):(1,8192)", "?{div=4096}:1"), "(4096,?):(1,8192)");
        // Divisibility unknown: CuTe's run-time formula, kept symbolic.
        assert_eq!(c("(4,8):(1,8)", "?:1"), "(?,?):(1,8)");
    }
}
