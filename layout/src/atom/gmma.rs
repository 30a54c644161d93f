//! Shared-memory matrix descriptors of the sm_90a `wgmma` instructions (CuTe's `GmmaDescriptor`,
//! `make_gmma_desc<Major::K>`), computed from a layout rather than from constants.
//!
//! A `wgmma.mma_async` with operands in shared memory reads each operand tile, (64, 16) of A or
//! (N, 16) of B (rows, K) for 16-bit elements, through a 64-bit descriptor (PTX ISA, "Matrix
//! Descriptor Format"):
//!
//! | bits | field |
//! |---|---|
//! | 0-13 | start address >> 4 |
//! | 16-29 | leading dimension byte offset (LBO) >> 4 |
//! | 32-45 | stride dimension byte offset (SBO) >> 4 |
//! | 49-51 | matrix base offset (0 here: the tile starts in the first row of its swizzle pattern) |
//! | 62-63 | swizzle mode: 0 none (interleaved), 1 128-byte, 2 64-byte, 3 32-byte |
//!
//! The hardware model this module encodes (and [`Desc::address`] simulates), for a K-major tile:
//! rows come in groups of 8 ("core matrices"); group `r / 8` starts SBO bytes after the previous.
//! With a swizzle of W bytes (32, 64 or 128), row `r % 8` of a group is W bytes after the one
//! before and a row's K elements are contiguous; the address is then swizzled on its absolute bits:
//! bits [4, 4+B) XOR bits [7, 7+B) with B = log2(W / 16) (CuTe's `Swizzle<B,4,3>` on byte
//! addresses). Without a swizzle, a core matrix is 8 rows of 16 contiguous bytes (128 bytes), the
//! next core matrix along K is LBO bytes on and the next along the rows SBO bytes on.
//!
//! An MN-major tile (the instruction's `imm-trans` 1, 16-bit elements only) has its rows contiguous
//! instead: with a swizzle, a pattern row is W bytes of rows at one k, the 8 K-rows of an atom W
//! bytes apart, the next group of 8 K-rows SBO bytes on and the next W bytes of rows LBO bytes on
//! (then the same XOR); without one, a core matrix is 16 bytes of rows by 8 K-rows, the next along
//! the rows SBO bytes on and the next along K LBO bytes on (CuTe's `make_gmma_desc<Major::MN>`).
//!
//! A `.cute` shared tensor's swizzle acts on element offsets from its allocation, and swizzled
//! allocations start aligned to their swizzle period (1024 bytes for 128-byte rows), so the
//! element at offset `o` of the allocation at `base` is at byte `base + e * S(o)` = `Sb(base + e *
//! o)` with `Sb` the byte-level swizzle: exactly what the hardware computes when the tile's layout
//! is the canonical one. [`k_major`] and [`mn_major`] check that (every coordinate of the tile) and give
//! LBO/SBO; [`operand_desc`] takes whichever form a tile is.

use crate::error::{Error, Result};
use crate::int_tuple::IntTuple;
use crate::layout::Layout;
use crate::swizzle::Swizzle;

/// The swizzle mode of a descriptor (bits 62-63).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GmmaSwizzle {
    /// No swizzle: 8x16-byte core matrices, LBO apart along K, SBO apart along the rows.
    Interleave,
    B128,
    B64,
    B32,
}

impl GmmaSwizzle {
    /// The descriptor's 2-bit code.
    pub fn code(self) -> u64 {
        match self {
            GmmaSwizzle::Interleave => 0,
            GmmaSwizzle::B128 => 1,
            GmmaSwizzle::B64 => 2,
            GmmaSwizzle::B32 => 3,
        }
    }

    /// XOR bits B of the byte-level swizzle (0 for none).
    pub fn bits(self) -> u32 {
        match self {
            GmmaSwizzle::Interleave => 0,
            GmmaSwizzle::B32 => 1,
            GmmaSwizzle::B64 => 2,
            GmmaSwizzle::B128 => 3,
        }
    }

    /// Bytes of one row of the swizzle atom (W): 32 << (B - 1), 16 for the interleaved core matrix.
    pub fn row_bytes(self) -> i64 {
        16 << self.bits()
    }

    /// Bytes after which the swizzle pattern repeats: 8 rows (256, 512 or 1024; 128 without one).
    pub fn repeat_bytes(self) -> i64 {
        8 * self.row_bytes()
    }

    pub fn name(self) -> &'static str {
        match self {
            GmmaSwizzle::Interleave => "no swizzle (interleaved)",
            GmmaSwizzle::B128 => "128-byte swizzle",
            GmmaSwizzle::B64 => "64-byte swizzle",
            GmmaSwizzle::B32 => "32-byte swizzle",
        }
    }
}

/// The static part of a descriptor: what the layout fixes (the start address is the tensor's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Desc {
    pub swizzle: GmmaSwizzle,
    /// Leading dimension byte offset (between core matrices along K; unused, 16, for swizzled K-major).
    pub lbo: i64,
    /// Stride dimension byte offset (between groups of 8 rows).
    pub sbo: i64,
}

impl Desc {
    /// The 64-bit descriptor for a tile starting at shared-memory byte address `start` (16-byte
    /// aligned, in the first row of its swizzle pattern: base offset 0).
    pub fn encode(&self, start: u32) -> u64 {
        self.encode_fields() | self.start_field(start)
    }

    /// Every field but the start address.
    pub fn encode_fields(&self) -> u64 {
        (((self.lbo as u64 >> 4) & 0x3FFF) << 16)
            | (((self.sbo as u64 >> 4) & 0x3FFF) << 32)
            | (self.swizzle.code() << 62)
    }

    /// The start-address field of `start`.
    pub fn start_field(&self, start: u32) -> u64 {
        u64::from((start >> 4) & 0x3FFF)
    }

    /// The hardware's byte address of element (row, k) of a `major` tile whose descriptor is
    /// `desc` (the model of the module docs), for elements of `elem_bytes` bytes: decodes the
    /// descriptor fields rather than using `self`'s, so tests check the encoding too.
    pub fn address(desc: u64, major: Major, row: i64, k: i64, elem_bytes: i64) -> i64 {
        let start = ((desc & 0x3FFF) << 4) as i64;
        let lbo = (((desc >> 16) & 0x3FFF) << 4) as i64;
        let sbo = (((desc >> 32) & 0x3FFF) << 4) as i64;
        let (rb, kb) = (row * elem_bytes, k * elem_bytes);
        match (desc >> 62, major) {
            (0, Major::K) => start + (row / 8) * sbo + (row % 8) * 16 + (kb / 16) * lbo + kb % 16,
            // MN-major core matrices: 16 bytes of rows by 8 K-rows, SBO apart along the rows.
            (0, Major::MN) => start + (rb / 16) * sbo + rb % 16 + (k % 8) * 16 + (k / 8) * lbo,
            (code, _) => {
                let b = 4 - code as u32; // 1 -> 3 (128B), 2 -> 2 (64B), 3 -> 1 (32B)
                let w = 16i64 << b;
                let plain = match major {
                    Major::K => start + (row / 8) * sbo + (row % 8) * w + kb,
                    // A pattern row holds W bytes of rows; atoms along the rows LBO apart, groups
                    // of 8 K-rows SBO apart.
                    Major::MN => start + (rb / w) * lbo + rb % w + (k % 8) * w + (k / 8) * sbo,
                };
                plain ^ (((plain >> 7) & ((1 << b) - 1)) << 4)
            }
        }
    }
}

/// The element-level swizzle for a GMMA swizzle mode and element size: `Swizzle<B, 4 - log2(e), 3>`
/// (`S<3,3,3>` for 128-byte rows of 16-bit elements).
pub fn element_swizzle(mode: GmmaSwizzle, elem_bytes: u32) -> Option<Swizzle> {
    if mode == GmmaSwizzle::Interleave {
        return None;
    }
    Swizzle::new(i64::from(mode.bits()), 4 - i64::from(elem_bytes.trailing_zeros()), 3).ok()
}

fn static_eval(l: &Layout, r: i64, k: i64) -> Result<i64> {
    l.eval(&IntTuple::Tuple(vec![r.into(), k.into()]))?
        .as_static()
        .ok_or_else(|| Error::new("wgmma", format!("the operand layout {l} is not static")))
}

/// Which dimension of a wgmma shared-memory operand is contiguous: K (the instruction's
/// `imm-trans` 0) or M for A / N for B (`imm-trans` 1, "transposed"; 16-bit elements only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Major {
    K,
    MN,
}

impl Major {
    /// The instruction's `imm-trans-a` / `imm-trans-b` immediate.
    pub fn trans(self) -> u32 {
        match self {
            Major::K => 0,
            Major::MN => 1,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Major::K => "K-major",
            Major::MN => "MN-major",
        }
    }
}

/// Checks that an operand tile of one wgmma, `layout` (rows, K) over `elem_bytes`-byte elements,
/// with the element-level `swizzle` of its shared allocation, is a canonical K-major GMMA layout,
/// and gives its descriptor fields. `what` names the operand in errors ("A", "B").
///
/// Canonical, with W the swizzle's row bytes (W / e elements) and 32 bytes of K per instruction:
/// element (r, k) at offset `(r % 8) * W/e + (r / 8) * SBO/e + k` (swizzled), or
/// `(r % 8) * 16/e + (r / 8) * SBO/e + (k % (16/e)) + (k / (16/e)) * LBO/e` (no swizzle). SBO and
/// LBO are read off the layout (its offsets of rows 8 and of K element 16/e), then every
/// coordinate is compared.
pub fn k_major(layout: &Layout, swizzle: Option<Swizzle>, elem_bytes: u32, what: &str) -> Result<Desc> {
    canonical(layout, swizzle, elem_bytes, what, Major::K)
}

/// Checks that an operand tile of one wgmma, `layout` (rows, K), is a canonical MN-major GMMA
/// layout (the rows contiguous: M-major A, N-major B; CuTe's `GMMA::Layout_MN_*_Atom`), and gives
/// its descriptor fields. Only 16-bit elements have MN-major wgmma operands.
///
/// Canonical, with R = W/e elements in one row of the swizzle atom (64 for 128 bytes of 16-bit
/// elements) and 8 K-rows per atom: element (r, k) at offset `r % R + (r / R) * LBO/e + (k % 8) *
/// R + (k / 8) * SBO/e` (swizzled: LBO steps between atoms along the rows, SBO between groups of
/// 8 K-rows), or `r % (16/e) + (r / (16/e)) * SBO/e + (k % 8) * 16/e + (k / 8) * LBO/e` (no
/// swizzle: 8x16-byte core matrices, SBO apart along the rows and LBO apart along K; CuTe's
/// `make_gmma_desc<Major::MN>`).
pub fn mn_major(layout: &Layout, swizzle: Option<Swizzle>, elem_bytes: u32, what: &str) -> Result<Desc> {
    if elem_bytes != 2 {
        return Err(Error::new(
            "wgmma",
            format!(
                "the {what} operand has {}-bit elements; wgmma reads those K-major only (MN-major, transposed, operands are for 16-bit f16/bf16)",
                8 * elem_bytes
            ),
        ));
    }
    canonical(layout, swizzle, elem_bytes, what, Major::MN)
}

/// The descriptor of an operand tile in whichever canonical form its layout is (K-major first),
/// and which: the error, when it is neither, names both forms.
pub fn operand_desc(layout: &Layout, swizzle: Option<Swizzle>, elem_bytes: u32, what: &str) -> Result<(Major, Desc)> {
    let k_err = match k_major(layout, swizzle, elem_bytes, what) {
        Ok(d) => return Ok((Major::K, d)),
        Err(e) => e,
    };
    // A K-major shape error (not (rows, 32 bytes)) or swizzle error holds for both forms.
    if elem_bytes != 2 || !k_err.reason.contains("is not a canonical") {
        return Err(k_err);
    }
    match mn_major(layout, swizzle, elem_bytes, what) {
        Ok(d) => Ok((Major::MN, d)),
        Err(mn_err) => {
            // The MN-major error's detail without its repeated preamble (the layout, the swizzle).
            let detail = mn_err.reason.split_once(" wgmma layout (").and_then(|(_, r)| r.split_once("): "));
            let detail = detail.map_or(mn_err.reason.as_str(), |(_, d)| d);
            Err(Error::new("wgmma", format!("{}; nor is it MN-major: {detail}", k_err.reason)))
        }
    }
}

/// The checker of both forms: see [`k_major`] and [`mn_major`].
fn canonical(layout: &Layout, swizzle: Option<Swizzle>, elem_bytes: u32, what: &str, major: Major) -> Result<Desc> {
    const OP: &str = "wgmma";
    let e = i64::from(elem_bytes);
    let sw_text = swizzle.map(|s| format!("{s} o ")).unwrap_or_default();
    let shown = format!("{sw_text}{layout}");
    if layout.rank() != 2 {
        return Err(Error::new(
            OP,
            format!("the {what} operand of one wgmma is a (rows, K) tile; found layout {shown}"),
        ));
    }
    let size = |i: usize| -> Result<i64> {
        layout
            .mode(i)?
            .size()?
            .as_static()
            .ok_or_else(|| Error::new(OP, format!("the {what} operand layout {shown} is not static")))
    };
    let (rows, kk) = (size(0)?, size(1)?);
    if kk * e != 32 || rows % 8 != 0 {
        return Err(Error::new(
            OP,
            format!(
                "the {what} operand of one wgmma is (rows, {}) with rows a multiple of 8; found layout {shown}",
                32 / e
            ),
        ));
    }
    let mode = gmma_swizzle(swizzle, elem_bytes, what)?;
    let core = 16 / e; // elements in 16 bytes
    let row_elems = mode.row_bytes() / e;
    let sw_name = element_swizzle(mode, elem_bytes).map(|s| format!("{s} o ")).unwrap_or_default();
    // The strides read off the layout (elements), the canonical offset of (r, k), and its text.
    let (lbo_e, sbo_e, atom_text): (i64, i64, String);
    let canonical: Box<dyn Fn(i64, i64) -> i64>;
    match (major, mode) {
        (Major::K, GmmaSwizzle::Interleave) => {
            sbo_e = if rows > 8 { static_eval(layout, 8, 0)? } else { 8 * row_elems };
            lbo_e = static_eval(layout, 0, core)?;
            canonical = Box::new(move |r, k| (r % 8) * core + (r / 8) * sbo_e + k % core + (k / core) * lbo_e);
            atom_text = format!("((8,{}),({core},2)):(({core},SBO),(1,LBO))", rows / 8);
        }
        (Major::K, _) => {
            sbo_e = if rows > 8 { static_eval(layout, 8, 0)? } else { 8 * row_elems };
            // Swizzled K-major tiles have no core matrices along K to step over: LBO is unused
            // (CuTe sets 1; 16 bytes here).
            lbo_e = core;
            canonical = Box::new(move |r, k| (r % 8) * row_elems + (r / 8) * sbo_e + k);
            atom_text = format!("{sw_name}((8,{}),{kk}):(({row_elems},SBO),1)", rows / 8);
        }
        (Major::MN, GmmaSwizzle::Interleave) => {
            sbo_e = if rows > core { static_eval(layout, core, 0)? } else { 8 * core };
            lbo_e = static_eval(layout, 0, 8)?;
            canonical = Box::new(move |r, k| r % core + (r / core) * sbo_e + (k % 8) * core + (k / 8) * lbo_e);
            atom_text = format!("(({core},{}),(8,{})):((1,SBO),({core},LBO))", rows / core, kk / 8);
        }
        (Major::MN, _) => {
            if rows % row_elems != 0 {
                return Err(Error::new(
                    OP,
                    format!(
                        "the {what} operand layout {shown} has {rows} rows; an MN-major tile with a {} has a multiple of {row_elems}",
                        mode.name()
                    ),
                ));
            }
            // One atom along the rows: LBO is unused (the atom's size here).
            lbo_e = if rows > row_elems { static_eval(layout, row_elems, 0)? } else { 8 * row_elems };
            sbo_e = static_eval(layout, 0, 8)?;
            canonical =
                Box::new(move |r, k| r % row_elems + (r / row_elems) * lbo_e + (k % 8) * row_elems + (k / 8) * sbo_e);
            atom_text =
                format!("{sw_name}(({row_elems},{}),(8,{})):((1,LBO),({row_elems},SBO))", rows / row_elems, kk / 8);
        }
    }
    for r in 0..rows {
        for k in 0..kk {
            let got = static_eval(layout, r, k)?;
            if got != canonical(r, k) {
                return Err(Error::new(
                    OP,
                    format!(
                        "the {what} operand layout {shown} is not a canonical {} wgmma layout ({}): element ({r},{k}) is at offset {got}, the canonical layout {atom_text} has it at {}",
                        major.name(),
                        mode.name(),
                        canonical(r, k)
                    ),
                ));
            }
        }
    }
    let (sbo, lbo) = (sbo_e * e, lbo_e * e);
    for (name, v) in [("stride (SBO)", sbo), ("leading (LBO)", lbo)] {
        if v <= 0 || v % 16 != 0 || v >> 4 > 0x3FFF {
            return Err(Error::new(OP, format!("the {what} operand layout {shown} has a {name} byte offset of {v}; a descriptor needs a positive multiple of 16 below 256 KiB")));
        }
    }
    Ok(Desc { swizzle: mode, lbo, sbo })
}

/// The descriptor's swizzle mode of an allocation's element-level swizzle.
fn gmma_swizzle(swizzle: Option<Swizzle>, elem_bytes: u32, what: &str) -> Result<GmmaSwizzle> {
    let Some(sw) = swizzle else { return Ok(GmmaSwizzle::Interleave) };
    let modes = [GmmaSwizzle::B128, GmmaSwizzle::B64, GmmaSwizzle::B32];
    modes.into_iter().find(|m| element_swizzle(*m, elem_bytes) == Some(sw)).ok_or_else(|| {
        let offered: Vec<String> =
            modes.iter().filter_map(|m| element_swizzle(*m, elem_bytes)).map(|s| s.to_string()).collect();
        Error::new(
            "wgmma",
            format!(
                "the {what} operand's swizzle {sw} is not a wgmma swizzle; for {elem_bytes}-byte elements they are {}",
                offered.join(", ")
            ),
        )
    })
}

/// Whether a tile may start `rel_bytes` after its (swizzle-period-aligned) allocation: 16-byte
/// aligned, and with a swizzle, so that the descriptor's base offset is 0: a K-major tile's 32
/// bytes of K inside the first row of the pattern (a K-block of a 128-byte row starts at 0, 32,
/// 64 or 96); an MN-major tile, whose rows fill whole pattern rows, at the pattern's start.
pub fn start_ok(mode: GmmaSwizzle, major: Major, rel_bytes: i64) -> bool {
    if rel_bytes % 16 != 0 {
        return false;
    }
    match (mode, major) {
        (GmmaSwizzle::Interleave, _) => true,
        (_, Major::K) => rel_bytes.rem_euclid(mode.repeat_bytes()) + 32 <= mode.row_bytes(),
        (_, Major::MN) => rel_bytes.rem_euclid(mode.repeat_bytes()) == 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mma::{MmaAtom, MmaOperand, TiledMma};
    use crate::ops::{composition, tile_to_shape};
    use crate::Int;
    use std::str::FromStr;

    fn sw(b: i64) -> Swizzle {
        Swizzle::new(b, 3, 3).unwrap()
    }

    /// For every wgmma tile of a (rows, 128 bytes of K, 2 stages) smem ring of `ab` elements
    /// (`e` bytes: bf16, or an FP8 type) made like the samples make it (`tile_to_shape` of `atom` in
    /// `order`), partitioned by a tiled MMA (A for 64 rows, else B): the descriptor computed from
    /// the tile's layout and offset, decoded back to addresses by the hardware model, gives for
    /// every element the address the software `swizzle` stores it at.
    fn check_every_address(
        atom: &Layout,
        swizzle: Option<Swizzle>,
        order: Option<&str>,
        major: Major,
        ab: &str,
        e: i64,
    ) {
        let apply = |o: i64| swizzle.map_or(o, |s| s.apply(o));
        let order = order.map(|o| IntTuple::from_str(o).unwrap());
        let kk = 32 / e; // K elements of one wgmma
        for rows in [64, 128, 256] {
            let shape = IntTuple::from_str(&format!("({rows},{},2)", 128 / e)).unwrap();
            let full = tile_to_shape(atom, &shape, order.as_ref()).unwrap();
            let base = 3 * 1024i64; // a 1024-aligned allocation
            let wgmma = MmaAtom::find(ab, "f32", [64, rows.min(256), kk]).unwrap();
            let tm = TiledMma::new(wgmma, [1, 1, 1], None).unwrap();
            let op = if rows == 64 { MmaOperand::A } else { MmaOperand::B };
            let (part, off) = tm.partition(op, &full, &Int::S(0)).unwrap();
            assert_eq!(off.as_static(), Some(0));
            // part: ((rows,kk), 1, 4, 2): one wgmma tile per (k block, stage).
            let modes = part.modes();
            let tile = &modes[0];
            let (found, desc) = operand_desc(tile, swizzle, e as u32, "B").unwrap();
            assert_eq!(found, major, "{tile}");
            assert_eq!(desc.swizzle.bits(), swizzle.map_or(0, |s| s.bits));
            for kb in 0..4 {
                for stage in 0..2 {
                    let rel = modes[2].eval(&IntTuple::from(kb)).unwrap().as_static().unwrap()
                        + modes[3].eval(&IntTuple::from(stage)).unwrap().as_static().unwrap();
                    assert!(start_ok(desc.swizzle, major, rel * e), "rows {rows} k {kb} stage {stage}: {rel}");
                    let d = desc.encode((base + e * rel) as u32);
                    for r in 0..rows {
                        for k in 0..kk {
                            let o = tile.eval(&IntTuple::Tuple(vec![r.into(), k.into()])).unwrap().as_static().unwrap();
                            assert_eq!(
                                Desc::address(d, major, r, k, e),
                                base + e * apply(rel + o),
                                "{atom} rows {rows} k-block {kb} stage {stage} element ({r},{k})"
                            );
                        }
                    }
                }
            }
        }
    }

    /// K-major: CuTe's `GMMA::Layout_K_SW{128,64,32}_Atom<bf16>`, tiled down the rows, then along
    /// K, then the stages.
    #[test]
    fn descriptors_address_every_element_as_the_layout_does() {
        for (b, cols) in [(3, 64), (2, 32), (1, 16)] {
            let atom = Layout::from_str(&format!("(8,{cols}):({cols},1)")).unwrap();
            check_every_address(&atom, Some(sw(b)), None, Major::K, "bf16", 2);
        }
    }

    /// K-major FP8 tiles (one wgmma reads 32 one-byte K elements): CuTe's
    /// `GMMA::Layout_K_SW{128,64,32}_Atom<float_e4m3_t>`, 8 rows of 128, 64 or 32 elements with the
    /// element-level `Swizzle<B,4,3>` (the byte-level swizzle itself); both FP8 types.
    #[test]
    fn fp8_descriptors_address_every_element_as_the_layout_does() {
        for ab in ["f8e4m3", "f8e5m2"] {
            for (b, cols) in [(3, 128), (2, 64), (1, 32)] {
                let atom = Layout::from_str(&format!("(8,{cols}):({cols},1)")).unwrap();
                check_every_address(&atom, Some(Swizzle::new(b, 4, 3).unwrap()), None, Major::K, ab, 1);
            }
        }
        // The 128-byte atom: SBO 1024 (8 rows of 128 bytes), LBO 16 (unused), as for bf16.
        let l = Layout::from_str("((8,8),32):((128,1024),1)").unwrap();
        let d = k_major(&l, element_swizzle(GmmaSwizzle::B128, 1), 1, "A").unwrap();
        assert_eq!(d, Desc { swizzle: GmmaSwizzle::B128, lbo: 16, sbo: 1024 });
        assert_eq!(element_swizzle(GmmaSwizzle::B128, 1), Some(Swizzle::new(3, 4, 3).unwrap()));
        // A 16-bit element swizzle on FP8 elements is not a wgmma swizzle; nor is a K-block of 16.
        let e = k_major(&l, Some(sw(3)), 1, "A").unwrap_err().to_string();
        assert!(e.contains("for 1-byte elements they are S<3,4,3>, S<2,4,3>, S<1,4,3>"), "{e}");
        let half = Layout::from_str("((8,8),16):((128,1024),1)").unwrap();
        let e = k_major(&half, element_swizzle(GmmaSwizzle::B128, 1), 1, "B").unwrap_err().to_string();
        assert!(e.contains("is (rows, 32) with rows a multiple of 8"), "{e}");
        // FP8 operands are K-major only.
        let mn = Layout::from_str("(64,32):(1,64)").unwrap();
        let e = operand_desc(&mn, element_swizzle(GmmaSwizzle::B128, 1), 1, "B").unwrap_err().to_string();
        assert!(e.contains("not a canonical K-major"), "{e}");
        let e = mn_major(&mn, None, 1, "B").unwrap_err().to_string();
        assert!(e.contains("8-bit elements; wgmma reads those K-major only"), "{e}");
    }

    /// MN-major: CuTe's `GMMA::Layout_MN_*_Atom<bf16>` ((R, 8) with the rows contiguous: R = 64,
    /// 32, 16 elements for 128, 64, 32-byte swizzles, 8 without one), tiled along K first
    /// (CUTLASS's `Step<_2,_1,_3>` for MN-major operands). None of them is K-major.
    #[test]
    fn mn_major_descriptors_address_every_element_as_the_layout_does() {
        for (b, r) in [(3, 64), (2, 32), (1, 16), (0, 8)] {
            let atom = Layout::from_str(&format!("({r},8):(1,{r})")).unwrap();
            check_every_address(&atom, (b > 0).then(|| sw(b)), Some("(1,0,2)"), Major::MN, "bf16", 2);
        }
    }

    #[test]
    fn the_mn_major_128b_descriptor_is_cutes() {
        // A (256,16) N-major B tile of (256, 64) bf16 stages: four 64-row atoms 8 KiB apart (LBO),
        // the second 8 K-rows 1 KiB on (SBO); CuTe's make_gmma_desc<Major::MN> gives LBO 512,
        // SBO 64 (16-byte units).
        let l = Layout::from_str("((64,4),(8,2)):((1,4096),(64,512))").unwrap();
        let (major, d) = operand_desc(&l, Some(sw(3)), 2, "B").unwrap();
        assert_eq!(major, Major::MN);
        assert_eq!(d, Desc { swizzle: GmmaSwizzle::B128, lbo: 8192, sbo: 1024 });
        assert_eq!(d.encode(0), 0x4000_0040_0200_0000);
        assert_eq!((Major::K.trans(), Major::MN.trans()), (0, 1));
    }

    #[test]
    fn mn_major_refusals_name_both_forms() {
        // Row-major with padded rows: neither form.
        let l = Layout::from_str("(64,16):(1,72)").unwrap();
        let e = operand_desc(&l, Some(sw(3)), 2, "A").unwrap_err().to_string();
        assert!(
            e.contains("not a canonical K-major") && e.contains("nor is it MN-major") && e.contains("(1,LBO)"),
            "{e}"
        );
        // tf32 (4-byte) operands are K-major only.
        let l = Layout::from_str("(64,8):(1,64)").unwrap();
        let e = operand_desc(&l, Some(Swizzle::new(3, 2, 3).unwrap()), 4, "A").unwrap_err().to_string();
        assert!(e.contains("not a canonical K-major"), "{e}");
        let e = mn_major(&l, Some(Swizzle::new(3, 2, 3).unwrap()), 4, "A").unwrap_err().to_string();
        assert!(e.contains("32-bit elements; wgmma reads those K-major only"), "{e}");
        // A 128-byte MN-major swizzle needs rows in whole 64-element atoms.
        let l = Layout::from_str("(32,16):(1,64)").unwrap();
        let e = mn_major(&l, Some(sw(3)), 2, "B").unwrap_err().to_string();
        assert!(e.contains("a multiple of 64"), "{e}");
    }

    #[test]
    fn the_128b_descriptor_is_cutes() {
        // CuTe's Layout_K_SW128_Atom<bf16> tile: LBO 16 (unused), SBO 1024, mode 1.
        let l = Layout::from_str("((8,8),16):((64,512),1)").unwrap();
        let d = k_major(&l, Some(sw(3)), 2, "A").unwrap();
        assert_eq!(d, Desc { swizzle: GmmaSwizzle::B128, lbo: 16, sbo: 1024 });
        assert_eq!(d.encode(0x400), 0x4000_0040_0001_0040);
    }

    #[test]
    fn interleaved_core_matrices() {
        // 8x8 core matrices: rows 16 bytes apart, the two K halves 128 bytes apart (LBO), row groups 256.
        let l = Layout::from_str("((8,8),(8,2)):((8,128),(1,64))").unwrap();
        let d = k_major(&l, None, 2, "A").unwrap();
        assert_eq!(d, Desc { swizzle: GmmaSwizzle::Interleave, lbo: 128, sbo: 256 });
        let desc = d.encode(4096);
        for r in 0..64 {
            for k in 0..16 {
                let o = l.eval(&IntTuple::Tuple(vec![r.into(), k.into()])).unwrap().as_static().unwrap();
                assert_eq!(Desc::address(desc, Major::K, r, k, 2), 4096 + 2 * o);
            }
        }
    }

    #[test]
    fn non_canonical_layouts_are_named() {
        // M-major (transposed) is not K-major.
        let l = Layout::from_str("(64,16):(1,64)").unwrap();
        let e = k_major(&l, Some(sw(3)), 2, "A").unwrap_err().to_string();
        assert!(
            e.contains("not a canonical K-major wgmma layout (128-byte swizzle)") && e.contains("(64,16):(1,64)"),
            "{e}"
        );
        // Padded rows (the SM80 sample's unswizzled (_, 40) stride).
        let l = Layout::from_str("(64,16):(40,1)").unwrap();
        assert!(k_major(&l, Some(sw(3)), 2, "A").is_err());
        // A swizzle no descriptor has.
        let e = k_major(
            &Layout::from_str("((8,8),16):((64,512),1)").unwrap(),
            Some(Swizzle::new(3, 2, 3).unwrap()),
            2,
            "B",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("S<3,2,3> is not a wgmma swizzle") && e.contains("S<3,3,3>, S<2,3,3>, S<1,3,3>"), "{e}");
        let _ = composition;
    }

    #[test]
    fn starts_must_be_in_the_first_row() {
        assert!(
            start_ok(GmmaSwizzle::B128, Major::K, 0)
                && start_ok(GmmaSwizzle::B128, Major::K, 96)
                && start_ok(GmmaSwizzle::B128, Major::K, 1024 + 64)
        );
        assert!(
            !start_ok(GmmaSwizzle::B128, Major::K, 128)
                && !start_ok(GmmaSwizzle::B128, Major::K, 112)
                && !start_ok(GmmaSwizzle::B128, Major::K, 8)
        );
        assert!(start_ok(GmmaSwizzle::B32, Major::K, 256) && !start_ok(GmmaSwizzle::B32, Major::K, 16));
        assert!(start_ok(GmmaSwizzle::B128, Major::MN, 2048) && !start_ok(GmmaSwizzle::B128, Major::MN, 32));
    }

    #[test]
    fn wgmma_atoms_and_tiled_mmas() {
        let atom = MmaAtom::find("bf16", "f32", [64, 128, 16]).unwrap();
        assert_eq!(atom.name, "SM90_64x128x16_F32BF16BF16_SS");
        assert_eq!(atom.ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16");
        assert_eq!(atom.layout_tv(MmaOperand::C).to_string(), "((4,8,4),(2,2,16)):((128,1,16),(64,8,512))");
        assert_eq!(atom.values(MmaOperand::C), 64);
        assert_eq!(atom.values(MmaOperand::A), 1024);
        let e = MmaAtom::find("bf16", "f32", [64, 12, 16]).unwrap_err().to_string();
        assert!(e.contains("N = 12 is not a multiple of 8 from 8 to 256"), "{e}");
        let e = MmaAtom::find("bf16", "bf16", [64, 64, 16]).unwrap_err().to_string();
        assert!(e.contains("bf16xbf16->f32, f16xf16->f32, f16xf16->f16"), "{e}");
        let tm = TiledMma::new(atom, [2, 1, 1], None).unwrap();
        assert_eq!(tm.threads(), 256);
        assert_eq!(tm.tile, [128, 128, 16]);
        // C: every element of the (128,128) tile held by exactly one thread.
        let tv = tm.layout_tv(MmaOperand::C).unwrap();
        let mut seen = vec![0; 128 * 128];
        for t in 0..256 {
            for v in 0..64 {
                let o = tv.eval(&IntTuple::Tuple(vec![t.into(), v.into()])).unwrap().as_static().unwrap();
                seen[o as usize] += 1;
                // PTX's wgmma D fragment: row 16*warp + lane/4 (+8), column 8*(v/4) + 2*(lane%4) + v%2.
                let (wg, warp, lane) = (t / 128, (t / 32) % 4, t % 32);
                let row = 64 * wg + 16 * warp + lane / 4 + 8 * ((v / 2) % 2);
                let col = 8 * (v / 4) + 2 * (lane % 4) + v % 2;
                assert_eq!(o, row + 128 * col, "thread {t} value {v}");
            }
        }
        assert!(seen.iter().all(|&c| c == 1));
        // A: each warpgroup sees its own 64 rows whole.
        let sa = Layout::from_str("(128,64):(64,1)").unwrap();
        let (p, off) = tm.partition(MmaOperand::A, &sa, &Int::S(130)).unwrap();
        assert_eq!(p.to_string(), "((64,16),1,4):((64,1),0,16)");
        assert_eq!(off.as_static(), Some(64 * 64));
        assert!(TiledMma::new(atom, [1, 1, 2], None).unwrap_err().to_string().contains("K = 1"));
        assert!(tm.ldmatrix_tv(MmaOperand::A, 4, false).unwrap_err().to_string().contains("shared memory itself"));
    }
}
