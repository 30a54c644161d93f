//! Our passes, one per file, and the table that names them for `cutec opt` and the pipeline.

pub(crate) mod algebra;
pub mod canonicalize;
pub(crate) mod common;
pub mod hoist_arith;
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

/// A panic caught in a pass: the pass's name and the panic's message.
#[derive(Debug)]
pub struct PassPanic {
    pub pass: &'static str,
    pub message: String,
}

thread_local! {
    /// The panic the last pass run on this thread caught, for the pass manager's caller to report
    /// (our passes anchor on `builtin.module`, so they run on the thread that runs the manager).
    static CAUGHT: std::cell::RefCell<Option<PassPanic>> = const { std::cell::RefCell::new(None) };
}

/// The panic a pass on this thread caught since the last call, if any.
pub(crate) fn take_panic() -> Option<PassPanic> {
    CAUGHT.with(|c| c.borrow_mut().take())
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    match (payload.downcast_ref::<&str>(), payload.downcast_ref::<String>()) {
        (Some(s), _) => s.to_string(),
        (_, Some(s)) => s.clone(),
        _ => "a panic without a message".into(),
    }
}

/// Wraps a pass body (run on the whole `builtin.module`) as an MLIR pass; a body that returns
/// `Err` has reported its errors and makes the pass manager fail. MLIR calls the body from C++,
/// which a panic cannot unwind through (the process would abort): a panic fails the pass instead,
/// with an error at the module and the panic kept for [`take_panic`].
pub(crate) fn external(
    id: &'static PassId,
    name: &'static str,
    summary: &'static str,
    run: fn(Op) -> Result<(), Reported>,
) -> Pass {
    create_external(
        move |op: melior::ir::OperationRef<'_, '_>, pass: ExternalPass<'_>| {
            let op = op.to_raw();
            match std::panic::catch_unwind(|| crate::ir::memo::scope(|| run(op))) {
                Ok(Ok(())) => {}
                Ok(Err(Reported)) => pass.signal_failure(),
                Err(payload) => {
                    let message = panic_message(payload.as_ref());
                    crate::ir::emit_error(
                        crate::ir::location(op),
                        &format!("internal compiler error in the pass `{name}`: {message}"),
                    );
                    CAUGHT.with(|c| *c.borrow_mut() = Some(PassPanic { pass: name, message }));
                    pass.signal_failure();
                }
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
    PassInfo { name: hoist_arith::NAME, summary: hoist_arith::SUMMARY, create: hoist_arith::create },
];

pub fn find(name: &str) -> Option<&'static PassInfo> {
    PASSES.iter().find(|p| p.name == name)
}
