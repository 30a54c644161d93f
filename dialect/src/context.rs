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

/// The upstream dialects whose ops cutec's lowering and passes create. Other registered dialects
/// load when the parser or a pass first needs them: every loaded dialect costs each printed type
/// and each canonicalization, and there are about fifty.
const USED_DIALECTS: [&str; 8] = ["arith", "cf", "gpu", "llvm", "math", "nvvm", "scf", "vector"];

/// A context with all upstream dialects, passes and LLVM translations registered, the dialects
/// cutec uses and `cute` loaded.
pub fn new_context() -> Result<Context, DialectError> {
    let registry = DialectRegistry::new();
    register_all_dialects(&registry);
    let context = Context::new();
    context.append_dialect_registry(&registry);
    for name in USED_DIALECTS {
        context.get_or_load_dialect(name);
    }
    // The pass registry is process-wide and not synchronized: register once, even when contexts
    // are created on several threads at the same time (the pipeline compiles kernels in parallel).
    static PASSES: std::sync::Once = std::sync::Once::new();
    PASSES.call_once(register_all_passes);
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
