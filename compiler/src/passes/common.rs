//! What several passes share: failing with a reported diagnostic, reading `!cute.tensor` types, and
//! the widest vector access a layout proves. No pass imports another pass; they all import this.

use crate::ir::{self, Op};
use cute_abi::DType;
use cute_dialect::TensorTypeInfo;
use cute_layout::Layout;
use std::str::FromStr;

/// Marks a failure that has already been reported through the context's diagnostics.
pub(crate) struct Reported;

/// Reports `message` at `op`'s location.
pub(crate) fn fail(op: Op, message: &str) -> Reported {
    ir::emit_error(ir::location(op), message);
    Reported
}

/// The layout in a type: CuTe notation whose every `?` is its own run-time value (a `?name` shared
/// between entries would not match the one value per `?` that the ABI and the ops pass).
pub(crate) fn type_layout(text: &str) -> Result<Layout, String> {
    ir::memo::layout(text, || {
        if text.split('?').skip(1).any(|rest| rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')) {
            return Err("a `?` in a type cannot be named".into());
        }
        Layout::from_str(text).map_err(|e| e.to_string())
    })
}

/// The parameters of a `!cute.tensor` type and its layout, parsed with the layout library.
pub(crate) fn tensor_info(op: Op, printed: &str) -> Result<(TensorTypeInfo, Layout, u32), Reported> {
    let info =
        TensorTypeInfo::parse(printed).ok_or_else(|| fail(op, &format!("expected a !cute.tensor, found {printed}")))?;
    let layout = type_layout(&info.layout)
        .map_err(|e| fail(op, &format!("invalid layout \"{}\" in {printed}: {e}", info.layout)))?;
    let bytes = DType::mlir_size_bytes(&info.elem)
        .ok_or_else(|| fail(op, &format!("unsupported element type `{}`", info.elem)))?;
    Ok((info, layout, bytes))
}

/// The copy operation a `cute.copy`'s `op` attribute names (the front end's own definition, so the
/// verifier and the lowering follow the same rules); `None` for a name that is not one.
pub(crate) fn copy_op(name: &str) -> Option<cute_layout::atom::CopyOp> {
    cute_layout::atom::CopyOp::from_name(name).filter(|o| *o != cute_layout::atom::CopyOp::Universal)
}

pub use cute_layout::vector_width;
