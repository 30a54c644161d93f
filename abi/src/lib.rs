//! The vocabulary that crosses cutec's boundaries, defined once.
//!
//! Everything a compiled cubin and the programs that run it must agree on lives here: the element
//! types ([`DType`]), the memory spaces ([`MemSpace`]), the targets ([`Arch`], with the
//! [`Feature`]s each one has) and the [`manifest`] format. The compiler writes through these types and the runtime, the Python
//! extension and the C header read through them, so no two crates keep their own copy in step by
//! hand. std only: no MLIR, no CUDA (docs/architecture.md).

mod arch;
mod dtype;
pub mod manifest;
mod mem_space;
pub mod process;

pub use arch::{Arch, Feature, UnknownArch};
pub use dtype::DType;
pub use mem_space::MemSpace;
