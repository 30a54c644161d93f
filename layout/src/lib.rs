//! CuTe's layout algebra, exact, in pure Rust (no MLIR).
//!
//! - [`Int`]: a static `i64` or a dynamic value (a symbolic expression over
//!   opaque leaves `Var { id, div }`), printing `?` / `?{div=N}` as CuTe does.
//! - [`IntTuple`], [`Layout`] (shape + stride), [`Tiler`], [`Swizzle`],
//!   [`ComposedLayout`]: all print and parse CuTe's notation
//!   (`(4,8):(8,1)`, `<3:3,(2,4):(1,8)>`, `S<3,4,3> o 0 o 8:1`).
//! - [`ops`]: every operation CuTe offers on layouts, returning [`Error`]s
//!   that name the mode and the reason instead of panicking; arithmetic is
//!   checked against the 64-bit index type.
//! - [`atom`]: the hardware atoms (MMA, wgmma, copy) and shared-memory placement.
//! - [`expr`]: the `eval` expression language; [`cli`]: `layout eval|show`.

pub mod atom;
pub mod cli;
pub mod error;
pub mod expr;
pub mod int;
pub mod int_tuple;
pub mod layout;
pub mod ops;
pub mod show;
pub mod swizzle;
pub mod tiler;

// The atoms moved under `atom/`; their old paths stay, as the crate's users name them.
pub use atom::{gmma, mma};
pub use error::{Error, Result};
pub use int::Int;
pub use int_tuple::IntTuple;
pub use layout::{crd2idx, idx2crd, idx2crd_strided, Layout};
pub use mma::{MmaAtom, MmaKind, MmaOperand, TiledMma};
pub use ops::*;
pub use swizzle::{ComposedLayout, Swizzle};
pub use tiler::Tiler;
