//! Copy operations: the instruction a copy atom moves its chunks with (CuTe's `Copy_Atom<Op, T>`
//! ops: `UniversalCopy`, `SM80_CP_ASYNC_CACHE*`, `SM75_U32x*_LDSM_N`, `SM75_U16x*_LDSM_T`,
//! `SM90_U32x*_STSM_N`, `SM90_U16x*_STSM_T`).

use cute_abi::MemSpace;

/// The instruction a copy atom moves its chunks with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CopyOp {
    /// Loads and stores through registers (CuTe's UniversalCopy), any memory spaces.
    Universal,
    /// `cp.async` from global to shared memory without registers (CuTe's SM80_CP_ASYNC_CACHE*):
    /// `.ca` (cache at all levels; 4, 8 or 16 bytes) or `.cg` (L2 only; 16 bytes).
    CpAsync { cache_global: bool },
    /// `ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].b16` from shared memory into registers (CuTe's
    /// SM75_U32x{1,2,4}_LDSM_N and SM75_U16x{2,4,8}_LDSM_T): a warp-wide load of 1, 2 or 4 8x8
    /// matrices of 16-bit elements, each of the first 8*`matrices` lanes giving one 16-byte row
    /// address and every lane receiving 2*`matrices` of its MMA operand values (made by
    /// `make_tiled_copy_A/B`). `trans`: for an M- or N-major tile, each row 8 consecutive elements
    /// along M or N, transposed on the way into registers.
    Ldmatrix { matrices: u8, trans: bool },
    /// `stmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16` from registers into shared memory
    /// (sm_90; CuTe's SM90_U32x{1,2,4}_STSM_N and SM90_U16x{2,4,8}_STSM_T): ldmatrix's mirror. Every
    /// lane gives 2*`matrices` of its MMA accumulator values (register j: values 2j, 2j+1 of matrix
    /// j) and each of the first 8*`matrices` lanes the 16-byte shared-memory row of one matrix the
    /// warp writes (made by `make_tiled_copy_C`). `trans`: the matrices are written transposed
    /// (rows along M of an M-major tile).
    Stmatrix { matrices: u8, trans: bool },
}

/// Every copy operation, in the order messages list them.
pub const COPY_OPS: [CopyOp; 15] = [
    CopyOp::Universal,
    CopyOp::CpAsync { cache_global: false },
    CopyOp::CpAsync { cache_global: true },
    CopyOp::Ldmatrix { matrices: 1, trans: false },
    CopyOp::Ldmatrix { matrices: 2, trans: false },
    CopyOp::Ldmatrix { matrices: 4, trans: false },
    CopyOp::Ldmatrix { matrices: 1, trans: true },
    CopyOp::Ldmatrix { matrices: 2, trans: true },
    CopyOp::Ldmatrix { matrices: 4, trans: true },
    CopyOp::Stmatrix { matrices: 1, trans: false },
    CopyOp::Stmatrix { matrices: 2, trans: false },
    CopyOp::Stmatrix { matrices: 4, trans: false },
    CopyOp::Stmatrix { matrices: 1, trans: true },
    CopyOp::Stmatrix { matrices: 2, trans: true },
    CopyOp::Stmatrix { matrices: 4, trans: true },
];

impl CopyOp {
    /// Whether this is one of the `ldmatrix` forms (shared memory to MMA registers, warp-wide).
    pub fn is_ldmatrix(self) -> bool {
        matches!(self, CopyOp::Ldmatrix { .. })
    }

    /// The values one `ldmatrix` gives each lane (2 per matrix); `None` for other copies.
    pub fn ldmatrix_values(self) -> Option<u32> {
        match self {
            CopyOp::Ldmatrix { matrices, .. } => Some(2 * u32::from(matrices)),
            _ => None,
        }
    }

    /// Whether this is one of the `stmatrix` forms (MMA registers to shared memory, warp-wide).
    pub fn is_stmatrix(self) -> bool {
        matches!(self, CopyOp::Stmatrix { .. })
    }

    /// For the warp-wide matrix copies (`ldmatrix`, `stmatrix`), the elements one instruction moves
    /// per lane on its (source, destination) side: the 8-element shared-memory row on one side and
    /// 2 register values per matrix on the other; `None` for other copies.
    pub fn lane_elements(self) -> Option<(u32, u32)> {
        match self {
            CopyOp::Ldmatrix { matrices, .. } => Some((8, 2 * u32::from(matrices))),
            CopyOp::Stmatrix { matrices, .. } => Some((2 * u32::from(matrices), 8)),
            _ => None,
        }
    }

    /// The bits one copy may move (the PTX ISA's `cp-size` for `cp.async`: 4, 8 or 16 bytes with
    /// `.ca`, 16 with `.cg`; one 16-byte row per lane for `ldmatrix` and `stmatrix`); empty for the universal copy,
    /// which moves whole elements up to 128 bits.
    pub fn bits(self) -> &'static [u32] {
        match self {
            CopyOp::Universal => &[],
            CopyOp::CpAsync { cache_global: false } => &[32, 64, 128],
            CopyOp::CpAsync { cache_global: true } | CopyOp::Ldmatrix { .. } | CopyOp::Stmatrix { .. } => &[128],
        }
    }

    /// The memory spaces the copy goes from and to, and how a message says it; `None` for the
    /// universal copy (any spaces).
    pub fn spaces(self) -> Option<(MemSpace, MemSpace, &'static str)> {
        match self {
            CopyOp::Universal => None,
            CopyOp::CpAsync { .. } => Some((MemSpace::Gmem, MemSpace::Smem, "global to shared memory")),
            CopyOp::Ldmatrix { .. } => Some((MemSpace::Smem, MemSpace::Rmem, "shared memory to registers")),
            CopyOp::Stmatrix { .. } => Some((MemSpace::Rmem, MemSpace::Smem, "registers to shared memory")),
        }
    }

    /// The name `make_copy_atom(..., op: NAME)` takes and the IR's `cute.copy` carries.
    pub fn name(self) -> &'static str {
        match self {
            CopyOp::Universal => "universal",
            CopyOp::CpAsync { cache_global: false } => "cp.async.ca",
            CopyOp::CpAsync { cache_global: true } => "cp.async.cg",
            CopyOp::Ldmatrix { matrices: 1, trans: false } => "ldmatrix.x1",
            CopyOp::Ldmatrix { matrices: 2, trans: false } => "ldmatrix.x2",
            CopyOp::Ldmatrix { trans: false, .. } => "ldmatrix.x4",
            CopyOp::Ldmatrix { matrices: 1, trans: true } => "ldmatrix.x1.trans",
            CopyOp::Ldmatrix { matrices: 2, trans: true } => "ldmatrix.x2.trans",
            CopyOp::Ldmatrix { trans: true, .. } => "ldmatrix.x4.trans",
            CopyOp::Stmatrix { matrices: 1, trans: false } => "stmatrix.x1",
            CopyOp::Stmatrix { matrices: 2, trans: false } => "stmatrix.x2",
            CopyOp::Stmatrix { trans: false, .. } => "stmatrix.x4",
            CopyOp::Stmatrix { matrices: 1, trans: true } => "stmatrix.x1.trans",
            CopyOp::Stmatrix { matrices: 2, trans: true } => "stmatrix.x2.trans",
            CopyOp::Stmatrix { trans: true, .. } => "stmatrix.x4.trans",
        }
    }

    pub fn from_name(s: &str) -> Option<CopyOp> {
        COPY_OPS.into_iter().find(|o| o.name() == s)
    }

    /// Every name, quoted, for messages: `"universal", "cp.async.ca", ...`; without "universal" for
    /// the IR, where a universal copy has no `op`.
    pub fn names(with_universal: bool) -> String {
        COPY_OPS
            .iter()
            .filter(|o| with_universal || **o != CopyOp::Universal)
            .map(|o| format!("\"{}\"", o.name()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
