//! The `cute` MLIR dialect: its IRDL definition, loaded into a context at start-up, and helpers to
//! build and read its types. The layout algebra itself lives in the MLIR-free `cute-layout` crate.

pub mod context;
pub mod tensor_type;

pub use context::{new_context, DialectError};
pub use tensor_type::TensorTypeInfo;

/// The IRDL source of the dialect (also shipped for `mlir-opt --irdl-file`).
pub const IRDL_SOURCE: &str = include_str!("cute.irdl.mlir");
