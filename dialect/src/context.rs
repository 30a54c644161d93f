//! Creating an MLIR context with every dialect cutec uses, the `cute` dialect among them.

use melior::dialect::DialectRegistry;
use melior::ir::{Location, Module};
use melior::utility::{load_irdl_dialects, register_all_dialects, register_all_llvm_translations, register_all_passes};
use melior::Context;
use std::fmt;

#[derive(Debug)]
pub struct DialectError(pub String);

impl fmt::Display for DialectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DialectError {}

/// A context with all upstream dialects, passes and LLVM translations registered and `cute` loaded.
pub fn new_context() -> Result<Context, DialectError> {
    let registry = DialectRegistry::new();
    register_all_dialects(&registry);
    let context = Context::new();
    context.append_dialect_registry(&registry);
    context.load_all_available_dialects();
    register_all_passes();
    register_all_llvm_translations(&context);
    load_cute(&context)?;
    Ok(context)
}

fn load_cute(context: &Context) -> Result<(), DialectError> {
    let irdl = Module::parse(context, crate::IRDL_SOURCE)
        .ok_or_else(|| DialectError("internal error: the cute IRDL definition does not parse".into()))?;
    if !load_irdl_dialects(&irdl) {
        return Err(DialectError("internal error: the cute IRDL definition failed to load".into()));
    }
    // The IRDL module only defines the dialect; keep nothing of it around.
    let _ = Location::unknown(context);
    Ok(())
}
