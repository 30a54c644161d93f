//! Our passes, one per file, and the table that names them for `cutec opt` and the pipeline.

pub(crate) mod algebra;
pub mod canonicalize;
pub(crate) mod common;
pub(crate) mod known_bits;
pub mod lower_mma;
pub mod lower_to_gpu;
pub(crate) mod ptx_asm;
pub mod slice_vectors;
pub mod vectorize;
pub mod verify;

use crate::ir::Op;
pub(crate) use common::Reported;
use melior::ir::r#type::TypeId;
use melior::pass::{create_external, ExternalPass, Pass};

/// A pass's identity for MLIR: the address of a static of this type (8-byte aligned, as MLIR's
/// TypeID requires). Each pass has its own static; the byte keeps the type from being zero-sized,
/// since zero-sized statics may share an address.
#[repr(align(8))]
pub(crate) struct PassId(#[allow(dead_code)] pub u8);

/// Wraps a pass body (run on the whole `builtin.module`) as an MLIR pass; a body that returns
/// `Err` has reported its errors and makes the pass manager fail.
pub(crate) fn external(
    id: &'static PassId,
    name: &'static str,
    summary: &'static str,
    run: fn(Op) -> Result<(), Reported>,
) -> Pass {
    create_external(
        move |op: melior::ir::OperationRef<'_, '_>, pass: ExternalPass<'_>| {
            if crate::ir::memo::scope(|| run(op.to_raw())).is_err() {
                pass.signal_failure();
            }
        },
        TypeId::create(id),
        name,
        name,
        summary,
        "builtin.module",
        &[],
    )
}

/// A pass of ours that runs inside the MLIR pass manager.
pub struct PassInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub create: fn() -> Pass,
}

pub const PASSES: &[PassInfo] = &[
    PassInfo { name: verify::NAME, summary: verify::SUMMARY, create: verify::create },
    PassInfo { name: canonicalize::NAME, summary: canonicalize::SUMMARY, create: canonicalize::create },
    PassInfo { name: vectorize::NAME, summary: vectorize::SUMMARY, create: vectorize::create },
    PassInfo { name: lower_mma::NAME, summary: lower_mma::SUMMARY, create: lower_mma::create },
    PassInfo { name: lower_to_gpu::NAME, summary: lower_to_gpu::SUMMARY, create: lower_to_gpu::create },
    PassInfo { name: slice_vectors::NAME, summary: slice_vectors::SUMMARY, create: slice_vectors::create },
];

pub fn find(name: &str) -> Option<&'static PassInfo> {
    PASSES.iter().find(|p| p.name == name)
}
