//! MMA atoms and tiled MMAs: which thread holds which element of a tensor-core instruction's
//! operands, as TV layouts, and how a tiled MMA partitions a tensor among its threads.
//!
//! An atom is one warp-wide `mma.sync` (CuTe's `MMA_Atom<SM80_16x8x16_F32BF16BF16F32_TN>`): its
//! shape (M,N,K), element types, and three TV layouts `(thread, value) -> coordinate` into the
//! column-major A (M,K), B (N,K) and C (M,N) tiles of the instruction, copied from the PTX ISA's
//! fragment tables (the same layouts CuTe's `mma_traits_sm80.hpp` gives; `tests` below checks each
//! against the PTX formulas). A tiled MMA repeats the atom over a grid of warps
//! (`atom_layout`, CuTe's `AtomLayoutMNK`), optionally over a larger tile (`permutation` sizes,
//! CuTe's `PermutationMNK` given as integers), and `partition` gives one thread's share of a tensor
//! as CuTe's `partition_A/B/C` does: `(FrgV, RestM, RestK)` for A.

use crate::error::{Error, Result};
use crate::int::Int;
use crate::int_tuple::IntTuple;
use crate::layout::Layout;
use crate::ops::{composition, tv_partition};
use std::fmt;
use std::str::FromStr;

/// One warp-wide tensor-core instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct MmaAtom {
    /// CuTe's name for the operation, also its name in the IR.
    pub name: &'static str,
    /// The PTX instruction, without operands.
    pub ptx: &'static str,
    pub shape_mnk: [i64; 3],
    /// Element types of A, B and C/D, by their `.cute` names.
    pub a: &'static str,
    pub b: &'static str,
    pub c: &'static str,
    tv: [&'static str; 3],
    /// What executes one instruction: a warp (`mma.sync`) or a warpgroup of 128 threads (`wgmma`).
    pub kind: MmaKind,
}

/// How an atom's instruction runs and where its operands live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmaKind {
    /// `mma.sync`: one warp, A, B and C in registers.
    Warp,
    /// `wgmma.mma_async` with A and B from shared memory through matrix descriptors (CuTe's `_SS`
    /// atoms), both K-major, and C in registers: one warpgroup (4 warps, 128 threads), asynchronous.
    WarpgroupSS,
    /// `wgmma.mma_async` with A from registers (CuTe's `_RS` atoms: 8 16-bit values, four 32-bit
    /// registers, per thread in CuTe's `ALayout_64x16`), B from shared memory through a descriptor
    /// (K-major), C in registers. The A registers are read asynchronously too: they must be written
    /// before the `wgmma.fence` and stay unchanged until the `wgmma.wait_group` that covers the
    /// instruction.
    WarpgroupRS,
}

/// The operand of an MMA a layout or partition is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmaOperand {
    A,
    B,
    C,
}

impl MmaOperand {
    pub fn name(self) -> &'static str {
        match self {
            MmaOperand::A => "A",
            MmaOperand::B => "B",
            MmaOperand::C => "C",
        }
    }

    pub fn parse(s: &str) -> Option<MmaOperand> {
        match s {
            "A" => Some(MmaOperand::A),
            "B" => Some(MmaOperand::B),
            "C" => Some(MmaOperand::C),
            _ => None,
        }
    }

    /// The two of (M, N, K) this operand's tile spans, in order: A (M,K), B (N,K), C (M,N).
    fn dims(self) -> [usize; 2] {
        match self {
            MmaOperand::A => [0, 2],
            MmaOperand::B => [1, 2],
            MmaOperand::C => [0, 1],
        }
    }
}

// The SM80 fragment layouts (valid on sm_80 and later, the H100 included). Thread t = t0 + 4*t1 is
// lane (t0 = threadID_in_group, t1 = groupID in the PTX tables); coordinates are column-major in the
// operand's tile.
const A_16X16: &str = "((4,8),(2,2,2)):((32,1),(16,8,128))";
const B_8X16: &str = "((4,8),(2,2)):((16,1),(8,64))";
const C_16X8: &str = "((4,8),(2,2)):((32,1),(16,8))";
const A_16X8_TF32: &str = "((4,8),(2,2)):((16,1),(8,64))";
const B_8X8_TF32: &str = "((4,8),2):((8,1),32)";

/// CuTe's `SM90::GMMA::ALayout_64x16`: A of a wgmma RS atom (16-bit types), 8 values per thread.
const A_64X16_RS: &str = "((4,8,4),(2,2,2)):((128,1,16),(64,8,512))";

/// CuTe's `SM90::GMMA::ALayout_64x32`: A of an FP8 wgmma RS atom, 16 values per thread. The same
/// bytes as the 16-bit layout's: each 32-bit register holds four consecutive K values where the
/// 16-bit one holds two.
const A_64X32_RS: &str = "((4,8,4),(4,2,2)):((256,1,16),(64,8,1024))";

const ATOMS: &[MmaAtom] = &[
    MmaAtom {
        name: "SM80_16x8x16_F32F16F16F32_TN",
        ptx: "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
        shape_mnk: [16, 8, 16],
        a: "f16",
        b: "f16",
        c: "f32",
        tv: [A_16X16, B_8X16, C_16X8],
        kind: MmaKind::Warp,
    },
    MmaAtom {
        name: "SM80_16x8x16_F16F16F16F16_TN",
        ptx: "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
        shape_mnk: [16, 8, 16],
        a: "f16",
        b: "f16",
        c: "f16",
        tv: [A_16X16, B_8X16, C_16X8],
        kind: MmaKind::Warp,
    },
    MmaAtom {
        name: "SM80_16x8x16_F32BF16BF16F32_TN",
        ptx: "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
        shape_mnk: [16, 8, 16],
        a: "bf16",
        b: "bf16",
        c: "f32",
        tv: [A_16X16, B_8X16, C_16X8],
        kind: MmaKind::Warp,
    },
    MmaAtom {
        name: "SM80_16x8x8_F32TF32TF32F32_TN",
        ptx: "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
        shape_mnk: [16, 8, 8],
        a: "tf32",
        b: "tf32",
        c: "f32",
        tv: [A_16X8_TF32, B_8X8_TF32, C_16X8],
        kind: MmaKind::Warp,
    },
];

impl MmaAtom {
    /// The atom CuTe calls `name`.
    pub fn by_name(name: &str) -> Option<&'static MmaAtom> {
        ATOMS.iter().chain(wgmma_atoms()).find(|a| a.name == name)
    }

    /// The atom for inputs `ab`, accumulator `acc` and shape (M,N,K), as CuTe DSL's
    /// `MmaF16BF16Op(ab, acc, shape)` / `MmaTF32Op` pick it.
    pub fn find(ab: &str, acc: &str, shape: [i64; 3]) -> Result<&'static MmaAtom> {
        MmaAtom::find_mixed(ab, ab, acc, shape)
    }

    /// [`MmaAtom::find`] with different A and B input types: the FP8 wgmma atoms take any pair of
    /// `f8e4m3` and `f8e5m2` (CuTe's `SM90_64xNx32_F32E4M3E5M2_SS_TN`, ...).
    pub fn find_mixed(a_ty: &str, b_ty: &str, acc: &str, shape: [i64; 3]) -> Result<&'static MmaAtom> {
        if let Some(a) = ATOMS.iter().chain(wgmma_atoms()).find(|x| {
            x.a == a_ty && x.b == b_ty && x.c == acc && x.shape_mnk == shape && x.kind != MmaKind::WarpgroupRS
        }) {
            return Ok(a);
        }
        let inputs = if a_ty == b_ty { format!("{a_ty} inputs") } else { format!("{a_ty} x {b_ty} inputs") };
        if shape[0] == 64 && (shape[2] == 16 || shape[2] == 32) {
            let types: Vec<String> =
                WGMMA_TYPES.iter().filter(|t| t.k == shape[2]).map(|t| format!("{}x{}->{}", t.a, t.b, t.c)).collect();
            let why = if shape[1] % 8 != 0 || !(8..=256).contains(&shape[1]) {
                format!("N = {} is not a multiple of 8 from 8 to 256", shape[1])
            } else if WGMMA_TYPES.iter().any(|t| t.a == a_ty && t.b == b_ty && t.c == acc) {
                let k = if shape[2] == 16 { 32 } else { 16 };
                format!("{inputs} take K = {k} (one wgmma reads 32 bytes of K)")
            } else {
                format!("the K = {} wgmma atoms take {}", shape[2], types.join(", "))
            };
            return Err(Error::new(
                "make_mma_atom",
                format!(
                    "no wgmma atom for {inputs}, {acc} accumulator and shape ({},{},{}): {why}",
                    shape[0], shape[1], shape[2]
                ),
            ));
        }
        let offered: Vec<String> = ATOMS
            .iter()
            .map(|a| format!("{}x{}->{} ({},{},{})", a.a, a.b, a.c, a.shape_mnk[0], a.shape_mnk[1], a.shape_mnk[2]))
            .collect();
        Err(Error::new(
            "make_mma_atom",
            format!(
                "no mma.sync atom for {inputs}, {acc} accumulator and shape ({},{},{}); the atoms are {}, and the sm_90a wgmma atoms (64,N,16) (N a multiple of 8 up to 256) for bf16xbf16->f32, f16xf16->f32 and f16xf16->f16, and (64,N,32) for f8e4m3/f8e5m2 inputs with f32 or f16 accumulators",
                shape[0],
                shape[1],
                shape[2],
                offered.join(", ")
            ),
        ))
    }

    /// The wgmma atom with A from registers (CuTe DSL's `MmaF16BF16Op(ab, acc, shape,
    /// a_src=OperandSource.RMEM)`, C++'s `SM90_64xNx16_..._RS`) for the same inputs, accumulator and
    /// shape as [`MmaAtom::find`]'s SS atom: only wgmma shapes have one.
    pub fn find_rs(ab: &str, acc: &str, shape: [i64; 3]) -> Result<&'static MmaAtom> {
        MmaAtom::find_rs_mixed(ab, ab, acc, shape)
    }

    /// [`MmaAtom::find_rs`] with different A and B input types (the FP8 pairs).
    pub fn find_rs_mixed(ab: &str, b_ty: &str, acc: &str, shape: [i64; 3]) -> Result<&'static MmaAtom> {
        let ss = MmaAtom::find_mixed(ab, b_ty, acc, shape)?;
        if !ss.is_wgmma() {
            return Err(Error::new("make_mma_atom", format!("A from registers is a wgmma option; ({},{},{}) is an mma.sync atom ({}), which reads A from registers always", shape[0], shape[1], shape[2], ss.name)));
        }
        wgmma_atoms()
            .iter()
            .find(|a| a.kind == MmaKind::WarpgroupRS && a.a == ab && a.b == b_ty && a.c == acc && a.shape_mnk == shape)
            .ok_or_else(|| Error::new("make_mma_atom", format!("no RS atom for {}", ss.name)))
    }

    /// The SM80 `mma.sync` atoms (the wgmma atoms are many: [`MmaAtom::find`] them).
    pub fn all() -> &'static [MmaAtom] {
        ATOMS
    }

    /// `(thread, value) -> coordinate` in the operand's column-major instruction tile.
    pub fn layout_tv(&self, op: MmaOperand) -> Layout {
        let text = self.tv[op as usize];
        // The table is constant and parsed by the tests: a failure here is a bug in the table.
        Layout::from_str(text).unwrap_or_else(|_| Layout::leaf(1, 0))
    }

    /// The operand's instruction tile, e.g. (16,16) for A of m16n8k16.
    pub fn tile(&self, op: MmaOperand) -> [i64; 2] {
        let [p, q] = op.dims();
        [self.shape_mnk[p], self.shape_mnk[q]]
    }

    /// Values each thread holds of the operand (8 for A of m16n8k16; the whole shared-memory tile
    /// for A and B of a wgmma SS atom, which every thread of the warpgroup addresses).
    pub fn values(&self, op: MmaOperand) -> i64 {
        let [p, q] = self.tile(op);
        match (self.kind, op) {
            (MmaKind::WarpgroupSS, MmaOperand::A | MmaOperand::B) | (MmaKind::WarpgroupRS, MmaOperand::B) => p * q,
            _ => p * q / self.threads(),
        }
    }

    /// Threads that execute one instruction: 32 for `mma.sync`, 128 (a warpgroup) for `wgmma`.
    pub fn threads(&self) -> i64 {
        match self.kind {
            MmaKind::Warp => 32,
            MmaKind::WarpgroupSS | MmaKind::WarpgroupRS => 128,
        }
    }

    /// Whether this is a warpgroup (`wgmma`, sm_90a) atom.
    pub fn is_wgmma(&self) -> bool {
        matches!(self.kind, MmaKind::WarpgroupSS | MmaKind::WarpgroupRS)
    }

    /// Whether the wgmma instruction has the `imm-trans-a/b` immediates: only 16-bit inputs may be
    /// MN-major (transposed); the FP8 forms read both operands K-major and have no such operands.
    pub fn transposable(&self) -> bool {
        self.is_wgmma() && self.shape_mnk[2] == 16
    }

    /// Whether the instruction reads `op` from shared memory (a descriptor) rather than from
    /// registers: A and B of an SS atom, B of an RS atom.
    pub fn reads_smem(&self, op: MmaOperand) -> bool {
        match self.kind {
            MmaKind::Warp => false,
            MmaKind::WarpgroupSS => op != MmaOperand::C,
            MmaKind::WarpgroupRS => op == MmaOperand::B,
        }
    }

    /// The element type of an operand.
    pub fn elem(&self, op: MmaOperand) -> &'static str {
        match op {
            MmaOperand::A => self.a,
            MmaOperand::B => self.b,
            MmaOperand::C => self.c,
        }
    }
}

/// One family of wgmma atoms: input types A and B, accumulator C (by their `.cute` names), CuTe's
/// type part of the atom names, and K (32 bytes of input elements).
struct WgmmaTypes {
    a: &'static str,
    b: &'static str,
    c: &'static str,
    tag: &'static str,
    k: i64,
}

const fn wt(a: &'static str, b: &'static str, c: &'static str, tag: &'static str, k: i64) -> WgmmaTypes {
    WgmmaTypes { a, b, c, tag, k }
}

/// The wgmma input and accumulator types (PTX ISA, `wgmma.mma_async`): 16-bit inputs with K = 16,
/// and the FP8 ones, every pair of `.e4m3` and `.e5m2` into `.f32` or `.f16`, with K = 32.
const WGMMA_TYPES: [WgmmaTypes; 11] = [
    wt("bf16", "bf16", "f32", "F32BF16BF16", 16),
    wt("f16", "f16", "f32", "F32F16F16", 16),
    wt("f16", "f16", "f16", "F16F16F16", 16),
    wt("f8e4m3", "f8e4m3", "f32", "F32E4M3E4M3", 32),
    wt("f8e4m3", "f8e5m2", "f32", "F32E4M3E5M2", 32),
    wt("f8e5m2", "f8e4m3", "f32", "F32E5M2E4M3", 32),
    wt("f8e5m2", "f8e5m2", "f32", "F32E5M2E5M2", 32),
    wt("f8e4m3", "f8e4m3", "f16", "F16E4M3E4M3", 32),
    wt("f8e4m3", "f8e5m2", "f16", "F16E4M3E5M2", 32),
    wt("f8e5m2", "f8e4m3", "f16", "F16E5M2E4M3", 32),
    wt("f8e5m2", "f8e5m2", "f16", "F16E5M2E5M2", 32),
];

/// A `.cute` element type's name in a wgmma instruction's type suffix.
fn ptx_type(ty: &str) -> &str {
    ty.strip_prefix("f8").unwrap_or(ty)
}

/// The sm_90a warpgroup atoms with both operands in shared memory (CuTe's
/// `SM90_64xNx16_F32BF16BF16_SS<Major::K, Major::K>`, `SM90_64xNx32_F32E4M3E4M3_SS_TN`, ...): M = 64,
/// K = 16 (32 for FP8), N = 8, 16, ..., 256. A and B are read whole by every thread of the
/// warpgroup (thread stride 0, CuTe's `ABLayout` of an SS atom); C is CuTe's `CLayout_64xN`: thread
/// `t0 + 4 t1 + 32 t2` (t2 the warp) holds rows `t1 + 16 t2 (+ 8)` and columns `2 t0 (+ 1) + 8 j`,
/// the PTX ISA's wgmma D fragment, whatever the input type. Then the 16-bit shapes with A from
/// registers (`..._RS`): A is CuTe's `ALayout_64x16`, the C layout of a 64x16 tile (rows `t1 + 16
/// t2 (+ 8)`, K columns `2 t0 (+ 1) (+ 8)`: the PTX ISA's wgmma A register fragment for 16-bit
/// types, each warp's 16 rows as an m16n8k16 A fragment). Built once; the names and layouts are
/// leaked so atoms stay `&'static` like the SM80 table's.
fn wgmma_atoms() -> &'static [MmaAtom] {
    static TABLE: std::sync::OnceLock<Vec<MmaAtom>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        let mut out = Vec::new();
        for (kind, src) in [(MmaKind::WarpgroupSS, "SS"), (MmaKind::WarpgroupRS, "RS")] {
            for t in &WGMMA_TYPES {
                let k = t.k;
                for n in (8..=256).step_by(8) {
                    let a_tv = if kind == MmaKind::WarpgroupRS {
                        if k == 16 {
                            A_64X16_RS
                        } else {
                            A_64X32_RS
                        }
                    } else {
                        leak(format!("(128,(64,{k})):(0,(1,64))"))
                    };
                    let (pa, pb) = (ptx_type(t.a), ptx_type(t.b));
                    out.push(MmaAtom {
                        name: leak(format!("SM90_64x{n}x{k}_{}_{src}", t.tag)),
                        ptx: leak(format!("wgmma.mma_async.sync.aligned.m64n{n}k{k}.{}.{pa}.{pb}", t.c)),
                        shape_mnk: [64, n, k],
                        a: t.a,
                        b: t.b,
                        c: t.c,
                        tv: [
                            a_tv,
                            leak(format!("(128,({n},{k})):(0,(1,{n}))")),
                            leak(format!("((4,8,4),(2,2,{})):((128,1,16),(64,8,512))", n / 8)),
                        ],
                        kind,
                    });
                }
            }
        }
        out
    })
}

impl fmt::Display for MmaAtom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [m, n, k] = self.shape_mnk;
        write!(
            f,
            "MMA_Atom({}, shape ({m},{n},{k}), TV A {}, B {}, C {})",
            self.name, self.tv[0], self.tv[1], self.tv[2]
        )
    }
}

/// An atom repeated over `atom_layout` warps (column-major, CuTe's `AtomLayoutMNK`) and over the
/// tile `tile` (M,N,K), a multiple of the atom shape times `atom_layout` in each mode. (The atom is a
/// reference into the static table: values holding a tiled MMA stay small.)
#[derive(Clone, Debug, PartialEq)]
pub struct TiledMma {
    pub atom: &'static MmaAtom,
    pub atom_layout: [i64; 3],
    pub tile: [i64; 3],
}

impl TiledMma {
    /// CuTe's `make_tiled_mma(atom, atom_layout, permutation)`, with the permutation given as tile
    /// sizes (CuTe DSL's integer `permutation_mnk`); `None` is the atom shape times the layout.
    pub fn new(atom: &'static MmaAtom, atom_layout: [i64; 3], permutation: Option<[i64; 3]>) -> Result<TiledMma> {
        const OP: &str = "make_tiled_mma";
        if atom_layout.iter().any(|&x| x <= 0) {
            return Err(Error::new(
                OP,
                format!(
                    "the atom layout ({},{},{}) needs positive extents",
                    atom_layout[0], atom_layout[1], atom_layout[2]
                ),
            ));
        }
        let threads = atom.threads() * atom_layout.iter().product::<i64>();
        if threads > 1024 {
            return Err(Error::new(
                OP,
                format!(
                    "the atom layout ({},{},{}) needs {threads} threads; a block has at most 1024",
                    atom_layout[0], atom_layout[1], atom_layout[2]
                ),
            ));
        }
        if atom.is_wgmma() && atom_layout[2] != 1 {
            return Err(Error::new(
                OP,
                format!(
                    "the atom layout ({},{},{}) splits K over warpgroups; wgmma atoms tile M and N only (K = 1)",
                    atom_layout[0], atom_layout[1], atom_layout[2]
                ),
            ));
        }
        let base = [0, 1, 2].map(|i| atom.shape_mnk[i] * atom_layout[i]);
        let tile = permutation.unwrap_or(base);
        for i in 0..3 {
            if tile[i] <= 0 || tile[i] % base[i] != 0 {
                return Err(Error::at(
                    OP,
                    i,
                    format!(
                        "the permutation size {} is not a multiple of atom {} x layout {} = {}",
                        tile[i], atom.shape_mnk[i], atom_layout[i], base[i]
                    ),
                ));
            }
        }
        Ok(TiledMma { atom, atom_layout, tile })
    }

    /// Threads of the tiled MMA (a block of at least this many).
    pub fn threads(&self) -> i64 {
        self.atom.threads() * self.atom_layout.iter().product::<i64>()
    }

    /// The operand's tile: A (M,K), B (N,K), C (M,N).
    pub fn tile_of(&self, op: MmaOperand) -> [i64; 2] {
        let [p, q] = op.dims();
        [self.tile[p], self.tile[q]]
    }

    /// CuTe's `get_layoutA_TV` (and B, C): `(thread index, value) -> coordinate` in the operand's
    /// column-major tile. Thread index t is (lane, m, n, k) column-major over (32, atom_layout); a
    /// thread's values are its atom's values, then its repeats over the tile along the operand's
    /// first and second mode (when the tile is larger than atom x layout).
    pub fn layout_tv(&self, op: MmaOperand) -> Result<Layout> {
        let [p, q] = op.dims();
        let [tp, tq] = self.tile_of(op);
        let [ap, aq] = self.atom.tile(op);
        // The atom's TV layout, re-embedded from its own (ap,aq) tile into the (tp,tq) tile.
        let embed =
            Layout::new(IntTuple::Tuple(vec![ap.into(), aq.into()]), IntTuple::Tuple(vec![1.into(), tp.into()]))?;
        let atom = composition(&embed, &self.atom.layout_tv(op))?;
        let (thr_v, frg_v) = (atom.mode(0)?, atom.mode(1)?);
        let mut thr = vec![thr_v];
        for (d, &n) in self.atom_layout.iter().enumerate() {
            let stride = if d == p {
                self.atom.shape_mnk[p]
            } else if d == q {
                self.atom.shape_mnk[q] * tp
            } else {
                0
            };
            thr.push(Layout::leaf(n, stride));
        }
        let mut val = vec![frg_v];
        let (rp, rq) = (tp / (ap * self.atom_layout[p]), tq / (aq * self.atom_layout[q]));
        if rp > 1 {
            val.push(Layout::leaf(rp, ap * self.atom_layout[p]));
        }
        if rq > 1 {
            val.push(Layout::leaf(rq, aq * self.atom_layout[q] * tp));
        }
        let val = if val.len() == 1 { val.remove(0) } else { Layout::concat(val) };
        Ok(Layout::concat(vec![Layout::concat(thr), val]))
    }

    /// The source TV layout of CuTe's `make_tiled_copy_A/B/C(ldmatrix.x4 atom, tiled_mma)` (16-bit
    /// elements, not transposed): `(thread, w) -> coordinate` in the operand's tile of element `w` of
    /// the 8-element row whose address the thread gives the instruction. An `ldmatrix.x4` loads four
    /// 8x8 matrices: lane `8j + r` addresses row `r` of matrix `j`, and every lane receives, in
    /// register `j`, its two elements of matrix `j` (row lane/4, columns 2*(lane%4) + {0,1}). The
    /// registers are the thread's MMA values `2j, 2j+1`, so the source layout is the MMA's TV layout
    /// composed with that exchange: lane `i = i0 + 8*i1`, element `w = w0 + 2*w1` reads the MMA
    /// value of lane `4*i0 + w1`, number `2*i1 + w0`. Needs exactly 8 values per thread and tile.
    ///
    /// With `transposed` (`ldmatrix.x4.trans`, for an M- or N-major tile), the rows are 8
    /// consecutive elements along M (N) and lane L's register j holds elements (row 2*(L%4) + e,
    /// column L/4) of matrix j: lane `i = a + 2*b + 8*i1` (a < 2, b < 4), element `w` reads the MMA
    /// value of lane `4*w + b`, number `2*i1 + a`.
    ///
    /// `ldmatrix.x2` and `.x1` (`matrices` 2 or 1) load two or one 8x8 matrices: lanes 0-15 (0-7)
    /// give the row addresses, the others' are ignored (in the layout they repeat the first lanes'
    /// rows, stride 0, as CuTe's SM75_U32x2_LDSM_N source layout does), and every lane receives 4
    /// (2) values: the operand must have exactly `2 * matrices` values per thread and tile.
    pub fn ldmatrix_tv(&self, op: MmaOperand, matrices: u32, transposed: bool) -> Result<Layout> {
        const OP: &str = "make_tiled_copy";
        if self.atom.reads_smem(op) {
            let which = if self.atom.kind == MmaKind::WarpgroupRS { "B" } else { "A and B" };
            return Err(Error::new(OP, format!("{} reads {which} from shared memory itself (matrix descriptors): there is no register fragment for ldmatrix to fill", self.atom.name)));
        }
        let tv = self.layout_tv(op)?;
        matrix_chunks("ldmatrix", op, matrices, &tv, false)?;
        let exchange = matrix_exchange(self.threads(), i64::from(matrices), transposed, 1)?;
        composition(&tv, &exchange).map_err(|e| e.within(OP))
    }

    /// Thread `tid`'s share of tensor layout `l` (the operand's two modes), as CuTe's
    /// `thr_mma.partition_A(t)`: `(FrgV, RestM, RestK)` for A, where a tile larger than atom x
    /// layout adds its repeats in front of the rest modes (`(FrgV, (RepM, RestM), ...)`). Returns the
    /// layout and the offset of the thread's first element.
    pub fn partition(&self, op: MmaOperand, l: &Layout, tid: &Int) -> Result<(Layout, Int)> {
        let tv = self.layout_tv(op)?;
        let [tp, tq] = self.tile_of(op);
        let tile = IntTuple::Tuple(vec![tp.into(), tq.into()]);
        let (part, offset) =
            tv_partition(l, &tv, &tile, tid).map_err(|e| e.within(&format!("partition_{}", op.name())))?;
        // part is (V, RestP, RestQ, Extra...) with V = FrgV or (FrgV, RepP[, RepQ]): move the repeats
        // out. Modes past the operand's two (pipeline stages, k-tiles) stay as they are.
        let modes = part.modes();
        if modes.len() < 3 {
            return Err(Error::new(
                "partition",
                format!("the {} operand needs a tensor of rank 2 or more, found {l}", op.name()),
            ));
        }
        let frg = self.atom.layout_tv(op).mode(1)?.size()?;
        let v = &modes[0];
        if v.size()?.as_static() == frg.as_static() {
            return Ok((part, offset));
        }
        let vm = v.modes();
        let [ap, aq] = self.atom.tile(op);
        let [p, q] = op.dims();
        let (rp, rq) = (tp / (ap * self.atom_layout[p]), tq / (aq * self.atom_layout[q]));
        let mut it = vm.into_iter();
        let frg_mode = it.next().ok_or_else(|| Error::new("partition", "empty value mode"))?;
        let rep_p = if rp > 1 { it.next() } else { None };
        let rep_q = if rq > 1 { it.next() } else { None };
        let join = |rep: Option<Layout>, rest: &Layout| match rep {
            Some(r) => Layout::concat(vec![r, rest.clone()]),
            None => rest.clone(),
        };
        let mut out = vec![frg_mode, join(rep_p, &modes[1]), join(rep_q, &modes[2])];
        out.extend(modes[3..].iter().cloned());
        Ok((Layout::concat(out), offset))
    }
}

impl fmt::Display for TiledMma {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [m, n, k] = self.tile;
        let [lm, ln, lk] = self.atom_layout;
        write!(
            f,
            "TiledMMA({}, atom layout ({lm},{ln},{lk}), tile ({m},{n},{k}), {} threads",
            self.atom.name,
            self.threads()
        )?;
        for op in [MmaOperand::A, MmaOperand::B, MmaOperand::C] {
            match self.layout_tv(op) {
                Ok(l) => write!(f, ", TV {} {l}", op.name())?,
                Err(e) => write!(f, ", TV {} <{e}>", op.name())?,
            }
        }
        write!(f, ")")
    }
}

/// How many instructions' worth of values (`2 * matrices` each) the fragment TV layout `tv` of
/// `op` gives each thread, for `instr` (`ldmatrix`, `stmatrix`) `.x{matrices}`: exactly one, or with
/// `several`, a whole number of them. Otherwise an error that says which width fits.
pub(crate) fn matrix_chunks(instr: &str, op: MmaOperand, matrices: u32, tv: &Layout, several: bool) -> Result<i64> {
    const OP: &str = "make_tiled_copy";
    if !matches!(matrices, 1 | 2 | 4) {
        let verb = if several { "stores" } else { "loads" };
        return Err(Error::new(OP, format!("{instr} {verb} 1, 2 or 4 matrices, not {matrices}")));
    }
    let values = tv.mode(1)?.size()?.as_static().unwrap_or(0);
    let want = 2 * i64::from(matrices);
    if values == want || (several && values > 0 && values % want == 0) {
        return Ok(values / want);
    }
    let fits = match values {
        2 => format!(" (use {instr}.x1)"),
        4 => format!(" (use {instr}.x2)"),
        8 => format!(" (use {instr}.x4)"),
        _ => String::new(),
    };
    let hint = if values == want / 2 {
        format!(
            "; or double the tiled MMA's {} tile (its permutation) so each warp covers two atoms",
            if op == MmaOperand::A { "M" } else { "N" }
        )
    } else {
        String::new()
    };
    let (verb, multiple) = if several { ("stores", ", not a multiple of them") } else { ("fills", "") };
    Err(Error::new(OP, format!("{instr}.x{matrices} {verb} {want} values per thread, but each thread holds {values} values of the {} tile{multiple}{fits}{hint}", op.name())))
}

/// The exchange of a warp-wide matrix copy (`ldmatrix`, `stmatrix`) over `threads` threads of an MMA
/// fragment: `(row thread, element) -> (thread, value)` index into the fragment's TV domain (thread
/// `t`, value `v` at `t + threads * v`). Lane `i = i0 + 8*i1` addresses row `i0` of matrix `i1`,
/// whose 8 elements are register `i1` (values `2*i1`, `2*i1 + 1`) of lanes `4*i0 .. 4*i0 + 3`;
/// transposed, lane `i = a + 2*b + 8*i1` (a < 2, b < 4) addresses a row whose element `w` is value
/// `2*i1 + a` of lane `4*w + b`. Lanes past the `8 * matrices` that give addresses repeat the
/// first ones (stride 0). With `chunks` > 1 each thread's values are that many instructions'
/// worth, `2 * matrices` apiece: a second element mode of `chunks` (CuTe's rest of the values).
pub(crate) fn matrix_exchange(threads: i64, m: i64, transposed: bool, chunks: i64) -> Result<Layout> {
    let warps = threads / 32;
    let t = |v: Vec<IntTuple>| IntTuple::Tuple(v);
    let chunk = |shape: IntTuple, stride: IntTuple| {
        if chunks == 1 {
            (shape, stride)
        } else {
            (t(vec![shape, chunks.into()]), t(vec![stride, (2 * m * threads).into()]))
        }
    };
    if transposed {
        let (vs, vd) = chunk(8.into(), 4.into());
        Layout::new(
            t(vec![t(vec![t(vec![2.into(), 4.into(), m.into(), (4 / m).into()]), warps.into()]), vs]),
            t(vec![t(vec![t(vec![threads.into(), 1.into(), (2 * threads).into(), 0.into()]), 32.into()]), vd]),
        )
    } else {
        let (vs, vd) = chunk(t(vec![2.into(), 4.into()]), t(vec![threads.into(), 1.into()]));
        Layout::new(
            t(vec![t(vec![t(vec![8.into(), m.into(), (4 / m).into()]), warps.into()]), vs]),
            t(vec![t(vec![t(vec![4.into(), (2 * threads).into(), 0.into()]), 32.into()]), vd]),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(l: &Layout, t: i64, v: i64) -> i64 {
        let crd = IntTuple::Tuple(vec![t.into(), v.into()]);
        l.eval(&crd).unwrap().as_static().unwrap()
    }

    /// (row, col) of the PTX ISA's fragment tables ("Matrix Fragments for mma.m16n8k16"), with
    /// groupID = lane / 4 and threadID_in_group = lane % 4.
    fn ptx_a_16x16(lane: i64, i: i64) -> (i64, i64) {
        let (g, t) = (lane / 4, lane % 4);
        let row = if i % 4 < 2 { g } else { g + 8 };
        let col = if i < 4 { t * 2 + (i & 1) } else { t * 2 + (i & 1) + 8 };
        (row, col)
    }

    #[test]
    fn every_atom_layout_parses_and_is_a_bijection_onto_its_tile() {
        for atom in MmaAtom::all() {
            for op in [MmaOperand::A, MmaOperand::B, MmaOperand::C] {
                let l = Layout::from_str(atom.tv[op as usize]).unwrap();
                let [p, q] = atom.tile(op);
                assert_eq!(l.size().unwrap().as_static(), Some(p * q), "{} {}", atom.name, op.name());
                let mut seen = vec![false; (p * q) as usize];
                for t in 0..32 {
                    for v in 0..atom.values(op) {
                        let o = at(&l, t, v);
                        assert!(!seen[o as usize], "{} {}: ({t},{v}) repeats {o}", atom.name, op.name());
                        seen[o as usize] = true;
                    }
                }
            }
        }
    }

    #[test]
    fn m16n8k16_layouts_match_the_ptx_fragment_tables() {
        let atom = MmaAtom::find("bf16", "f32", [16, 8, 16]).unwrap();
        let (a, b, c) = (atom.layout_tv(MmaOperand::A), atom.layout_tv(MmaOperand::B), atom.layout_tv(MmaOperand::C));
        for lane in 0..32 {
            let (g, t) = (lane / 4, lane % 4);
            for i in 0..8 {
                let (row, col) = ptx_a_16x16(lane, i);
                assert_eq!(at(&a, lane, i), row + 16 * col, "A lane {lane} a{i}");
            }
            for i in 0..4 {
                // B (K x N): row k = t*2 + (i & 1) (+8 for b2, b3), col n = g; stored (N,K).
                let k = t * 2 + (i & 1) + if i >= 2 { 8 } else { 0 };
                assert_eq!(at(&b, lane, i), g + 8 * k, "B lane {lane} b{i}");
                // C (M x N): row g (+8 for c2, c3), col t*2 + (i & 1).
                let row = if i < 2 { g } else { g + 8 };
                assert_eq!(at(&c, lane, i), row + 16 * (t * 2 + (i & 1)), "C lane {lane} c{i}");
            }
        }
    }

    #[test]
    fn m16n8k8_tf32_layouts_match_the_ptx_fragment_tables() {
        let atom = MmaAtom::find("tf32", "f32", [16, 8, 8]).unwrap();
        let (a, b) = (atom.layout_tv(MmaOperand::A), atom.layout_tv(MmaOperand::B));
        for lane in 0..32 {
            let (g, t) = (lane / 4, lane % 4);
            for i in 0..4 {
                let row = if i % 2 == 0 { g } else { g + 8 };
                let col = if i < 2 { t } else { t + 4 };
                assert_eq!(at(&a, lane, i), row + 16 * col, "A lane {lane} a{i}");
            }
            for i in 0..2 {
                let k = if i == 0 { t } else { t + 4 };
                assert_eq!(at(&b, lane, i), g + 8 * k, "B lane {lane} b{i}");
            }
        }
    }

    #[test]
    fn unknown_atoms_name_the_ones_there_are() {
        let e = MmaAtom::find("f16", "f32", [16, 8, 32]).unwrap_err().to_string();
        assert!(e.contains("no mma.sync atom for f16 inputs, f32 accumulator and shape (16,8,32)"), "{e}");
        assert!(e.contains("bf16xbf16->f32 (16,8,16)"), "{e}");
    }

    /// Every element of the tiled MMA's tile is held by exactly the threads that should hold it: one
    /// thread per element for C, and for A (B) one per warp column (row) of the atom layout.
    #[test]
    fn tiled_layouts_cover_the_tile() {
        let atom = MmaAtom::find("f16", "f32", [16, 8, 16]).unwrap();
        for (layout, perm) in [([2, 2, 1], None), ([2, 2, 1], Some([32, 32, 16])), ([4, 1, 1], Some([64, 16, 32]))] {
            let tm = TiledMma::new(atom, layout, perm).unwrap();
            for op in [MmaOperand::A, MmaOperand::B, MmaOperand::C] {
                let tv = tm.layout_tv(op).unwrap();
                let [p, q] = tm.tile_of(op);
                let copies = match op {
                    MmaOperand::A => layout[1],
                    MmaOperand::B => layout[0],
                    MmaOperand::C => 1,
                };
                let mut count = vec![0i64; (p * q) as usize];
                let vals = tv.mode(1).unwrap().size().unwrap().as_static().unwrap();
                for t in 0..tm.threads() {
                    for v in 0..vals {
                        count[at(&tv, t, v) as usize] += 1;
                    }
                }
                assert!(count.iter().all(|&c| c == copies), "{layout:?} {perm:?} {}: {count:?}", op.name());
            }
        }
    }

    /// A thread's C value is the atom's C value of the warp at (m, n) of the atom layout.
    #[test]
    fn tiled_c_follows_the_atom_of_each_warp() {
        let atom = MmaAtom::find("bf16", "f32", [16, 8, 16]).unwrap();
        let tm = TiledMma::new(atom, [2, 2, 1], None).unwrap();
        let tv = tm.layout_tv(MmaOperand::C).unwrap();
        let c = atom.layout_tv(MmaOperand::C);
        for t in 0..128 {
            let (lane, wm, wn) = (t % 32, (t / 32) % 2, t / 64);
            for v in 0..4 {
                let o = at(&c, lane, v);
                let (m, n) = (o % 16 + 16 * wm, o / 16 + 8 * wn);
                assert_eq!(at(&tv, t, v), m + 32 * n, "thread {t} value {v}");
            }
        }
    }

    #[test]
    fn partition_gives_cute_shapes() {
        let atom = MmaAtom::find("bf16", "f32", [16, 8, 16]).unwrap();
        let tm = TiledMma::new(atom, [2, 2, 1], None).unwrap();
        let sa = Layout::from_str("(128,32):(32,1)").unwrap();
        let (p, _) = tm.partition(MmaOperand::A, &sa, &Int::S(5)).unwrap();
        assert_eq!(p.shape.to_string(), "((2,2,2),4,2)");
        let tm = TiledMma::new(atom, [2, 2, 1], Some([32, 32, 16])).unwrap();
        let sb = Layout::from_str("(128,32):(32,1)").unwrap();
        let (p, _) = tm.partition(MmaOperand::B, &sb, &Int::S(5)).unwrap();
        assert_eq!(p.shape.to_string(), "((2,2),(2,4),2)");
        // A pipeline mode past (N, K) is kept.
        let staged = Layout::from_str("(128,32,3):(40,1,5120)").unwrap();
        let (p, _) = tm.partition(MmaOperand::B, &staged, &Int::S(5)).unwrap();
        assert_eq!(p.to_string(), "((2,2),(2,4),2,3):((1,8),(640,1280),16,5120)");
    }

    /// Each lane's ldmatrix row holds 8 consecutive K elements (one 16-byte row of a K-major tile),
    /// and the 32 rows a warp addresses are the rows of its four 8x8 matrices: together they are
    /// exactly the elements the warp's MMA values cover.
    #[test]
    fn ldmatrix_rows_cover_the_warps_mma_values() {
        let atom = MmaAtom::find("bf16", "f32", [16, 8, 16]).unwrap();
        let tm = TiledMma::new(atom, [2, 2, 1], Some([32, 32, 16])).unwrap();
        for op in [MmaOperand::A, MmaOperand::B] {
            let src = tm.ldmatrix_tv(op, 4, false).unwrap();
            let dst = tm.layout_tv(op).unwrap();
            let [p, _] = tm.tile_of(op);
            for warp in 0..4 {
                let mut want: Vec<i64> = (0..32)
                    .flat_map(|l| (0..8).map(move |v| (32 * warp + l, v)))
                    .map(|(t, v)| at(&dst, t, v))
                    .collect();
                let mut got = Vec::new();
                for lane in 0..32 {
                    let t = 32 * warp + lane;
                    let first = at(&src, t, 0);
                    for w in 0..8 {
                        // Consecutive along K: one column (p elements) apart in the column-major tile.
                        assert_eq!(at(&src, t, w), first + p * w, "{} thread {t} element {w}", op.name());
                        got.push(at(&src, t, w));
                    }
                }
                want.sort();
                got.sort();
                assert_eq!(got, want, "{} warp {warp}", op.name());
                // What ldmatrix.x4 does: lane L's register j holds elements 2*(L%4) + {0,1} of the
                // row lane 8j + L/4 addressed; they must be L's MMA values 2j and 2j+1.
                for lane in 0..32 {
                    for j in 0..4 {
                        for e in 0..2 {
                            let row_lane = 32 * warp + 8 * j + lane / 4;
                            let loaded = at(&src, row_lane, 2 * (lane % 4) + e);
                            assert_eq!(
                                loaded,
                                at(&dst, 32 * warp + lane, 2 * j + e),
                                "{} lane {lane} register {j}.{e}",
                                op.name()
                            );
                        }
                    }
                }
            }
        }
        let no_perm = TiledMma::new(atom, [2, 2, 1], None).unwrap();
        assert!(no_perm
            .ldmatrix_tv(MmaOperand::B, 4, false)
            .unwrap_err()
            .to_string()
            .contains("double the tiled MMA's N tile"));
    }

    /// ldmatrix.x4.trans on an M- or N-major tile: each lane's row is 8 consecutive elements along
    /// the operand's first mode, and what every lane receives (simulated) is its MMA values.
    #[test]
    fn transposed_ldmatrix_delivers_the_mma_values() {
        let atom = MmaAtom::find("f16", "f32", [16, 8, 16]).unwrap();
        let tm = TiledMma::new(atom, [2, 2, 1], Some([32, 32, 16])).unwrap();
        for op in [MmaOperand::A, MmaOperand::B] {
            let src = tm.ldmatrix_tv(op, 4, true).unwrap();
            let dst = tm.layout_tv(op).unwrap();
            for warp in 0..4 {
                for lane in 0..32 {
                    let t = 32 * warp + lane;
                    let first = at(&src, t, 0);
                    for w in 0..8 {
                        assert_eq!(
                            at(&src, t, w),
                            first + w,
                            "{} thread {t} element {w}: rows run along the first mode",
                            op.name()
                        );
                    }
                    for j in 0..4 {
                        for e in 0..2 {
                            // Register j, half e of lane L: row 2*(L%4) + e, column L/4 of matrix j.
                            let loaded = at(&src, 32 * warp + 8 * j + 2 * (lane % 4) + e, lane / 4);
                            assert_eq!(loaded, at(&dst, t, 2 * j + e), "{} lane {lane} register {j}.{e}", op.name());
                        }
                    }
                }
            }
        }
    }

    /// ldmatrix.x2 (and .trans) for B of one m16n8k16 atom per warp (4 values per thread): lanes
    /// 0-15 address the rows of the two matrices (lanes 16-31 repeat them), and every lane's two
    /// registers (simulated) are its MMA values.
    #[test]
    fn ldmatrix_x2_delivers_the_b_values() {
        let atom = MmaAtom::find("bf16", "f32", [16, 8, 16]).unwrap();
        let tm = TiledMma::new(atom, [2, 2, 1], None).unwrap();
        let dst = tm.layout_tv(MmaOperand::B).unwrap();
        for transposed in [false, true] {
            let src = tm.ldmatrix_tv(MmaOperand::B, 2, transposed).unwrap();
            for warp in 0..4 {
                for lane in 0..32 {
                    let t = 32 * warp + lane;
                    for w in 0..8 {
                        assert_eq!(
                            at(&src, t, w),
                            at(&src, 32 * warp + lane % 16, w),
                            "lane {lane} repeats lane {}",
                            lane % 16
                        );
                    }
                    for j in 0..2 {
                        for e in 0..2 {
                            let loaded = if transposed {
                                at(&src, 32 * warp + 8 * j + 2 * (lane % 4) + e, lane / 4)
                            } else {
                                at(&src, 32 * warp + 8 * j + lane / 4, 2 * (lane % 4) + e)
                            };
                            assert_eq!(
                                loaded,
                                at(&dst, t, 2 * j + e),
                                "trans {transposed} lane {lane} register {j}.{e}"
                            );
                        }
                    }
                }
            }
        }
        let e = tm.ldmatrix_tv(MmaOperand::B, 4, false).unwrap_err().to_string();
        assert!(e.contains("use ldmatrix.x2"), "{e}");
        let e = tm.ldmatrix_tv(MmaOperand::A, 1, false).unwrap_err().to_string();
        assert!(e.contains("use ldmatrix.x4"), "{e}");
    }

    /// The RS atoms' A is CuTe's `ALayout_64x16` and the PTX ISA's wgmma A register fragment for
    /// 16-bit types: thread `lane + 32 warp`, value v holds row `16 warp + lane/4 (+8 for v%4 >= 2)`,
    /// column `2 (lane%4) + v%2 (+8 for v >= 4)`; every element of the 64x16 tile once. B stays a
    /// shared-memory tile, C the SS atom's.
    #[test]
    fn rs_atoms_take_a_from_registers() {
        let rs = MmaAtom::find_rs("bf16", "f32", [64, 256, 16]).unwrap();
        let ss = MmaAtom::find("bf16", "f32", [64, 256, 16]).unwrap();
        assert_eq!(rs.name, "SM90_64x256x16_F32BF16BF16_RS");
        assert_eq!(ss.name, "SM90_64x256x16_F32BF16BF16_SS");
        assert_eq!(rs.ptx, ss.ptx);
        assert_eq!(MmaAtom::by_name("SM90_64x64x16_F16F16F16_RS").map(|a| a.kind), Some(MmaKind::WarpgroupRS));
        assert_eq!(rs.layout_tv(MmaOperand::A).to_string(), "((4,8,4),(2,2,2)):((128,1,16),(64,8,512))");
        assert_eq!((rs.values(MmaOperand::A), rs.values(MmaOperand::B), rs.values(MmaOperand::C)), (8, 4096, 128));
        assert_eq!(rs.layout_tv(MmaOperand::B), ss.layout_tv(MmaOperand::B));
        assert_eq!(rs.layout_tv(MmaOperand::C), ss.layout_tv(MmaOperand::C));
        assert!(!rs.reads_smem(MmaOperand::A) && rs.reads_smem(MmaOperand::B) && ss.reads_smem(MmaOperand::A));
        let a = rs.layout_tv(MmaOperand::A);
        let mut seen = vec![false; 64 * 16];
        for t in 0..128 {
            let (warp, lane) = (t / 32, t % 32);
            for v in 0..8 {
                let row = 16 * warp + lane / 4 + if v % 4 >= 2 { 8 } else { 0 };
                let col = 2 * (lane % 4) + v % 2 + if v >= 4 { 8 } else { 0 };
                let o = at(&a, t, v);
                assert_eq!(o, row + 64 * col, "thread {t} value {v}");
                assert!(!seen[o as usize]);
                seen[o as usize] = true;
            }
        }
        // Each warp's share is an m16n8k16 A fragment of its 16 rows.
        let sm80 = MmaAtom::find("bf16", "f32", [16, 8, 16]).unwrap().layout_tv(MmaOperand::A);
        for lane in 0..32 {
            for v in 0..8 {
                let o = at(&sm80, lane, v);
                assert_eq!(at(&a, lane, v), o % 16 + 64 * (o / 16));
            }
        }
        let e = MmaAtom::find_rs("bf16", "f32", [16, 8, 16]).unwrap_err().to_string();
        assert!(e.contains("A from registers is a wgmma option"), "{e}");
        assert!(MmaAtom::find_rs("bf16", "bf16", [64, 64, 16]).is_err());
        // `find` keeps giving the SS atom.
        assert_eq!(MmaAtom::find("f16", "f16", [64, 8, 16]).unwrap().kind, MmaKind::WarpgroupSS);
    }

    /// The FP8 wgmma atoms: K = 32, every pair of e4m3/e5m2 into f32 or f16, the PTX type suffix
    /// without the `f8` prefix, the same C fragment as the 16-bit atoms, A and B whole (64x32 and
    /// Nx32) per thread, no transpose operands and no register-A form.
    #[test]
    fn fp8_wgmma_atoms() {
        let atom = MmaAtom::find("f8e4m3", "f32", [64, 256, 32]).unwrap();
        assert_eq!(atom.name, "SM90_64x256x32_F32E4M3E4M3_SS");
        assert_eq!(atom.ptx, "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3");
        assert_eq!(
            (atom.values(MmaOperand::A), atom.values(MmaOperand::B), atom.values(MmaOperand::C)),
            (2048, 8192, 128)
        );
        let bf16 = MmaAtom::find("bf16", "f32", [64, 256, 16]).unwrap();
        assert_eq!(atom.layout_tv(MmaOperand::C), bf16.layout_tv(MmaOperand::C));
        assert_eq!(atom.layout_tv(MmaOperand::A).to_string(), "(128,(64,32)):(0,(1,64))");
        assert!(!atom.transposable() && bf16.transposable());
        let mixed = MmaAtom::find_mixed("f8e4m3", "f8e5m2", "f16", [64, 64, 32]).unwrap();
        assert_eq!(mixed.name, "SM90_64x64x32_F16E4M3E5M2_SS");
        assert_eq!(mixed.ptx, "wgmma.mma_async.sync.aligned.m64n64k32.f16.e4m3.e5m2");
        assert_eq!((mixed.a, mixed.b), ("f8e4m3", "f8e5m2"));
        assert_eq!(
            MmaAtom::by_name("SM90_64x8x32_F32E5M2E5M2_SS").map(|a| a.ptx),
            Some("wgmma.mma_async.sync.aligned.m64n8k32.f32.e5m2.e5m2")
        );
        let e = MmaAtom::find("f8e4m3", "f32", [64, 256, 16]).unwrap_err().to_string();
        assert!(e.contains("f8e4m3 inputs take K = 32"), "{e}");
        let e = MmaAtom::find("bf16", "f32", [64, 256, 32]).unwrap_err().to_string();
        assert!(e.contains("bf16 inputs take K = 16"), "{e}");
        let e = MmaAtom::find("f8e4m3", "bf16", [64, 256, 32]).unwrap_err().to_string();
        assert!(e.contains("the K = 32 wgmma atoms take f8e4m3xf8e4m3->f32"), "{e}");
        // FP8 RS: A's 64x32 bytes in the 16-bit atom's places, four K values a register.
        let rs = MmaAtom::find_rs_mixed("f8e4m3", "f8e5m2", "f32", [64, 256, 32]).unwrap();
        assert_eq!(rs.name, "SM90_64x256x32_F32E4M3E5M2_RS");
        assert_eq!(rs.values(MmaOperand::A), 16);
        let tv = rs.layout_tv(MmaOperand::A);
        let tv16_layout = MmaAtom::find_rs("bf16", "f32", [64, 256, 16]).unwrap().layout_tv(MmaOperand::A);
        let tv16 = |t: i64, v: i64| tv16_layout.call(t + 128 * v).unwrap().as_static().unwrap();
        let mut seen = vec![false; 64 * 32];
        for t in 0..128 {
            for v in 0..16 {
                let at = tv.call(t + 128 * v).unwrap().as_static().unwrap() as usize;
                assert!(!seen[at], "thread {t} value {v} repeats {at}");
                seen[at] = true;
                let (m, k) = ((at % 64) as i64, (at / 64) as i64);
                let (m16, k16) = (tv16(t, v / 2) % 64, tv16(t, v / 2) / 64);
                assert_eq!((m, k / 2), (m16, k16), "byte of thread {t} value {v} is not the 16-bit atom's");
            }
        }
        assert!(seen.iter().all(|s| *s));
        let tm = TiledMma::new(atom, [2, 1, 1], None).unwrap();
        assert_eq!(tm.tile, [128, 256, 32]);
        let sa = Layout::from_str("(128,128):(128,1)").unwrap();
        let (p, _) = tm.partition(MmaOperand::A, &sa, &Int::S(0)).unwrap();
        assert_eq!(p.to_string(), "((64,32),1,4):((128,1),0,32)");
    }

    /// ldmatrix.x4 fills an RS atom's A fragment (two warpgroups along M): the simulated exchange
    /// gives every lane its MMA values; B of the same atom has no register fragment.
    #[test]
    fn ldmatrix_fills_the_rs_a_fragment() {
        let atom = MmaAtom::find_rs("f16", "f32", [64, 64, 16]).unwrap();
        let tm = TiledMma::new(atom, [2, 1, 1], None).unwrap();
        let src = tm.ldmatrix_tv(MmaOperand::A, 4, false).unwrap();
        let dst = tm.layout_tv(MmaOperand::A).unwrap();
        for t in 0..256 {
            let (warp, lane) = (t / 32, t % 32);
            let first = at(&src, t, 0);
            for w in 0..8 {
                assert_eq!(at(&src, t, w), first + 128 * w, "thread {t} element {w}: a row runs along K");
            }
            for j in 0..4 {
                for e in 0..2 {
                    let loaded = at(&src, 32 * warp + 8 * j + lane / 4, 2 * (lane % 4) + e);
                    assert_eq!(loaded, at(&dst, t, 2 * j + e), "lane {lane} of warp {warp} register {j}.{e}");
                }
            }
        }
        let e = tm.ldmatrix_tv(MmaOperand::B, 4, false).unwrap_err().to_string();
        assert!(e.contains("reads B from shared memory itself"), "{e}");
    }

    #[test]
    fn bad_tiled_mmas_are_refused() {
        let atom = MmaAtom::find("bf16", "f32", [16, 8, 16]).unwrap();
        assert!(TiledMma::new(atom, [2, 0, 1], None).unwrap_err().to_string().contains("positive"));
        assert!(TiledMma::new(atom, [8, 8, 1], None).unwrap_err().to_string().contains("1024"));
        assert!(TiledMma::new(atom, [2, 2, 1], Some([32, 24, 16])).unwrap_err().to_string().contains("not a multiple"));
    }
}
