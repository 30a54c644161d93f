//! The hardware atoms, in one home (CuTe's `arch/` + `atom/` headers): what each instruction
//! computes or moves, per thread, as layouts, and the rules for the memory it reads.
//!
//! - [`mma`]: the `mma.sync` atoms (one table row each: instruction, shapes, TV layouts) and tiled
//!   MMAs; [`gmma`]: the `wgmma` atoms, generated per N, and their shared-memory descriptors.
//! - [`copy`]: the copy operations a copy atom moves its chunks with (universal, `cp.async`,
//!   `ldmatrix`, `stmatrix`); [`stmatrix`]: the TV layout of `stmatrix` over a tiled MMA's accumulators.
//! - [`atomic`]: which PTX `atom`/`red` exists for which operation and element type, and its
//!   scope and ordering qualifiers.
//! - [`smem`]: how shared-memory allocations are aligned and sized, a rule the front end (which
//!   places them) and the lowering (which addresses them) must share.
//!
//! The front end builds atoms from these and the passes check and lower them from the same
//! definitions; neither keeps its own copy (docs/architecture.md).

pub mod atomic;
pub mod copy;
pub mod gmma;
pub mod mma;
pub mod smem;
pub mod stmatrix;

pub use copy::CopyOp;
