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
//! - [`expr`]: the `eval` expression language; [`cli`]: `layout eval|show`.

pub mod cli;
pub mod error;
pub mod expr;
pub mod gmma;
pub mod int;
pub mod int_tuple;
pub mod layout;
pub mod mma;
pub mod ops;
pub mod show;
pub mod swizzle;
pub mod tiler;

pub use error::{Error, Result};
pub use int::Int;
pub use int_tuple::IntTuple;
pub use layout::{crd2idx, idx2crd, idx2crd_strided, Layout};
pub use mma::{MmaAtom, MmaKind, MmaOperand, TiledMma};
pub use ops::*;
pub use swizzle::{ComposedLayout, Swizzle};
pub use tiler::Tiler;
