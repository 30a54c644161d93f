//! `stmatrix` (sm_90) over a tiled MMA's accumulators: CuTe's `make_tiled_copy_C` with an
//! SM90_U32x{1,2,4}_STSM_N or SM90_U16x{2,4,8}_STSM_T atom. The instruction is ldmatrix's mirror
//! (CuTe defines its source layout as LDSM's destination and the other way round), so the
//! destination TV layout, the shared-memory row each lane addresses, is the exchange
//! `ldmatrix_tv` composes with an operand's fragment, composed here with the C fragment.

use super::mma::{matrix_chunks, matrix_exchange, MmaOperand, TiledMma};
use crate::error::Result;
use crate::layout::Layout;
use crate::ops::composition;

impl TiledMma {
    /// The destination TV layout of `make_tiled_copy_C(stmatrix.x{matrices}[.trans] atom, self)`:
    /// `(thread, w) -> coordinate` in the C tile of element `w` of the 8-element shared-memory row
    /// the thread addresses, for 16-bit C values (the accumulators converted). Lane `8j + r` gives
    /// row `r` of matrix `j`, which every lane fills with register `j` (its C values `2j, 2j+1`).
    /// A thread holding more than `2 * matrices` values per tile (a wgmma's 64xN accumulators) has
    /// them stored by several instructions: `w` is then `(8, chunks)`, chunk `c` storing values
    /// `2 * matrices * c ..` (CuTe's rest of the values, which its `copy` loops over).
    pub fn stmatrix_tv(&self, matrices: u32, transposed: bool) -> Result<Layout> {
        let tv = self.layout_tv(MmaOperand::C)?;
        let chunks = matrix_chunks("stmatrix", MmaOperand::C, matrices, &tv, true)?;
        let exchange = matrix_exchange(self.threads(), i64::from(matrices), transposed, chunks)?;
        composition(&tv, &exchange).map_err(|e| e.within("make_tiled_copy_C"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atom::mma::MmaAtom;
    use crate::int_tuple::IntTuple;
    use std::str::FromStr;

    fn at(l: &Layout, t: i64, v: i64) -> i64 {
        l.eval(&IntTuple::Tuple(vec![t.into(), v.into()])).unwrap().as_static().unwrap()
    }

    /// CuTe's Copy_Traits of SM90_U32x{m}_STSM_N / SM90_U16x{2m}_STSM_T, in bits: the source
    /// (register) layout is LDSM's destination, the destination (row) layout LDSM's source.
    fn cute_stsm(m: i64, trans: bool) -> (Layout, Layout) {
        let src = if trans {
            format!("((4,8),(16,2,{m})):((256,16),(1,128,1024))")
        } else {
            format!("(32,(32,{m})):(32,(1,1024))")
        };
        let dst = format!("(({},{}),128):((128,0),1)", 8 * m, 4 / m);
        (Layout::from_str(&src).unwrap(), Layout::from_str(&dst).unwrap())
    }

    /// For every stmatrix form and tiled MMA (SM80 atoms one or two per warp along N; wgmma
    /// accumulators of 64 and 128 values per thread, over one and two warpgroups): the bit that
    /// CuTe's source layout gives register value `v` of lane `t` lands, by its destination layout,
    /// in element `e` of the row lane `u` addresses. That row element's coordinate in our TV
    /// layout must be the coordinate of C value `v` (of the same chunk) of lane `t`.
    #[test]
    fn stmatrix_rows_are_cutes() {
        let sm80 = MmaAtom::find("bf16", "f32", [16, 8, 16]).unwrap();
        let gmma = MmaAtom::find("bf16", "f32", [64, 128, 16]).unwrap();
        let cases = [
            (TiledMma::new(sm80, [2, 2, 1], None).unwrap(), 4), // 4 values: .x2 once
            (TiledMma::new(sm80, [2, 4, 1], Some([32, 64, 16])).unwrap(), 8), // 8 values: .x4
            (TiledMma::new(gmma, [1, 1, 1], None).unwrap(), 64),
            (TiledMma::new(gmma, [2, 1, 1], None).unwrap(), 64),
        ];
        for (tm, values) in cases {
            let c = tm.layout_tv(MmaOperand::C).unwrap();
            for m in [1, 2, 4] {
                for trans in [false, true] {
                    let Ok(dst) = tm.stmatrix_tv(m as u32, trans) else {
                        assert!(values % (2 * m) != 0, "{tm:?} x{m}");
                        continue;
                    };
                    let (src_bits, dst_bits) = cute_stsm(m, trans);
                    let chunks = values / (2 * m);
                    for t in 0..tm.threads() {
                        let (warp, lane) = (t / 32, t % 32);
                        for v in 0..2 * m {
                            let bit = at(&src_bits, lane, 16 * v);
                            let (u, e) = (bit / 128, bit % 128 / 16);
                            assert_eq!(at(&dst_bits, u, 16 * e), bit);
                            for k in 0..chunks {
                                let row = at(&dst, 32 * warp + u, e + 8 * k);
                                assert_eq!(
                                    row,
                                    at(&c, t, v + 2 * m * k),
                                    "x{m} trans {trans} lane {t} value {v} chunk {k}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// A non-transposed row is 8 consecutive elements along N of one C row (16 contiguous bytes of a
    /// row-major tile); a transposed one 8 consecutive elements along M.
    #[test]
    fn rows_run_along_n_or_m() {
        let atom = MmaAtom::find("f16", "f32", [16, 8, 16]).unwrap();
        let tm = TiledMma::new(atom, [2, 4, 1], Some([32, 64, 16])).unwrap();
        let [m, _] = tm.tile_of(MmaOperand::C);
        let (rows, cols) = (tm.stmatrix_tv(4, false).unwrap(), tm.stmatrix_tv(4, true).unwrap());
        for t in 0..tm.threads() {
            for w in 0..8 {
                assert_eq!(at(&rows, t, w), at(&rows, t, 0) + m * w);
                assert_eq!(at(&cols, t, w), at(&cols, t, 0) + w);
            }
        }
    }

    #[test]
    fn widths_that_do_not_fit_are_refused() {
        let atom = MmaAtom::find("bf16", "f32", [16, 8, 16]).unwrap();
        let tm = TiledMma::new(atom, [2, 2, 1], None).unwrap();
        let e = tm.stmatrix_tv(4, false).unwrap_err().to_string();
        assert!(e.contains("stmatrix.x4 stores 8 values per thread, but each thread holds 4 values of the C tile, not a multiple of them (use stmatrix.x2); or double the tiled MMA's N tile"), "{e}");
        assert!(tm.stmatrix_tv(3, false).unwrap_err().to_string().contains("1, 2 or 4 matrices"));
    }
}
