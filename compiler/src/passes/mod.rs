//! Our passes, one per file, and the table that names them for `cutec opt` and the pipeline.

pub mod canonicalize;
pub mod lower_to_gpu;
pub mod verify;
pub mod vectorize;

use melior::pass::Pass;

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
    PassInfo { name: lower_to_gpu::NAME, summary: lower_to_gpu::SUMMARY, create: lower_to_gpu::create },
];

pub fn find(name: &str) -> Option<&'static PassInfo> {
    PASSES.iter().find(|p| p.name == name)
}
