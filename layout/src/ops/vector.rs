//! How wide the accesses moving a whole tensor to or from registers can be: the contiguous run its
//! layout has in fragment order, capped by its alignment and the widest access (128 bits).
//! `cute-vectorize` gives each copy and fragment access this width; the compile budget counts the
//! accesses it makes.

use crate::int::Int;
use crate::layout::Layout;
use crate::ops::{coalesce, max_common_vector};
use crate::Result;

/// The widest global or shared access, in bytes (`ld.global.v4.b32`).
pub const MAX_ACCESS_BYTES: u32 = 16;

/// The vector width (in elements) for moving a whole tensor of this layout to or from registers:
/// the widest power of two that divides its size and its contiguous run from element 0, keeps
/// every chunk's start aligned past the first mode, and fits `align_bytes` and 128 bits.
pub fn vector_width(layout: &Layout, align_bytes: u32, elem_bytes: u32) -> Result<u32> {
    let n = layout.size()?.as_static().unwrap_or(1).max(1);
    let compact = Layout::col_major(layout.shape.clone())?;
    let run = max_common_vector(layout, &compact)?.as_static().unwrap_or(1).max(1);
    let coalesced = coalesce(layout)?;
    let mut w = (MAX_ACCESS_BYTES / elem_bytes.max(1)).max(1).min(align_bytes / elem_bytes.max(1)).max(1);
    while w > 1 {
        let chunks_fit = n % w as i64 == 0 && run % w as i64 == 0;
        // Past the contiguous first mode, every stride must keep chunk starts aligned.
        let starts_aligned = coalesced.leaves().iter().skip(1).all(|(s, d)| {
            s.is(1)
                || match d {
                    Int::S(v) => v % w as i64 == 0,
                    dynamic => dynamic.divisibility() % w as i64 == 0,
                }
        });
        if chunks_fit && starts_aligned {
            break;
        }
        w /= 2;
    }
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn w(layout: &str, align: u32, bytes: u32) -> u32 {
        vector_width(&Layout::from_str(layout).unwrap(), align, bytes).unwrap()
    }

    #[test]
    fn widths() {
        // Eight contiguous f16 with 16-byte alignment: one 128-bit access.
        assert_eq!(w("(1,8):(0,1)", 16, 2), 8);
        // Fragment elements run along the first mode: a row-major (4,8) tile is not contiguous in
        // that order, whatever its row stride; its transpose, columns of 8 at a stride that keeps
        // 16-byte alignment, is.
        assert_eq!(w("(4,8):(2048,1)", 16, 2), 1);
        assert_eq!(w("(8,4):(1,2048)", 16, 2), 8);
        // A dynamic column stride of unknown divisibility breaks chunk alignment; a multiple of 8
        // keeps it.
        assert_eq!(w("(8,4):(1,?)", 16, 2), 1);
        assert_eq!(w("(8,4):(1,?{div=8})", 16, 2), 8);
        assert_eq!(w("(8,4):(1,?{div=4})", 16, 2), 4);
        // Less alignment, narrower access.
        assert_eq!(w("8:1", 4, 2), 2);
        // Strided elements: scalar accesses.
        assert_eq!(w("8:2", 16, 4), 1);
        // f32: four per 128-bit access.
        assert_eq!(w("(4,4):(1,4)", 16, 4), 4);
    }
}
