//! `recast(tensor, T)`: the memory of a tensor seen as elements of another type (CuTe's
//! `recast<T>(tensor)`, CuTe DSL's `cute.recast_tensor(tensor, dtype)`), e.g. a register fragment of
//! f16 as u32 pairs. The layout is CuTe's `recast_layout` of the tensor's; the view has the same
//! base, so it must be aligned for the new type, and it must cover exactly the same memory.

use super::builtins::args::{arity, named, positional, Arg};
use super::value::{Origin, TensorVal, Value};
use super::{Frame, R};
use crate::diag::{article, Diagnostic};
use crate::kir::ViewHow;
use crate::span::Span;
use crate::types::Scalar;
use cute_layout::Int;

pub(super) fn recast(f: &mut Frame, name: &str, args: &[Arg], span: Span) -> R<Value> {
    arity(name, args, 2, 2, span, &format!("{name}(tensor, element_type)"))?;
    named(name, args, "", &[])?;
    let p = positional(args);
    let t: TensorVal = match &p[0].value {
        Value::Tensor(t) => t.clone(),
        Value::Frag(..) => {
            return Err(Diagnostic::error(format!("`{name}` takes a tensor, not a fragment"), p[0].span, "a fragment (a value, not memory)")
                .with_help("recast the register tensor the fragment was loaded from, or store it into one (`make_fragment_like`) first"))
        }
        Value::Layout(_) => {
            return Err(Diagnostic::error(format!("`{name}` takes a tensor, not a layout"), p[0].span, "a layout")
                .with_help("recast a layout with `recast_layout(new_type, old_type, layout)`"))
        }
        other => return Err(Diagnostic::error(format!("`{name}` takes a tensor, found {}", article(&other.kind())), p[0].span, "not a tensor")),
    };
    let Value::Type(to) = p[1].value else {
        return Err(Diagnostic::error(
            format!("the new element type must be a type, found {}", article(&p[1].value.kind())),
            p[1].span,
            "not a type",
        ));
    };
    f.need_kernel("recasting a tensor", span)?;
    let from = t.ty.elem;
    if from == Scalar::Bool || to == Scalar::Bool {
        return Err(Diagnostic::error(
            format!("a tensor of {} cannot be recast to {}", from.name(), to.name()),
            span,
            "bool elements",
        )
        .with_help("bool elements are stored as bytes but only 0 and 1 are values: recast u8 or i8 tensors instead"));
    }
    if t.ty.swizzle.is_some() {
        return Err(Diagnostic::error(format!("a swizzled tensor cannot be recast ({})", t.ty.layout_text()), p[0].span, "swizzled")
            .with_help("the swizzle permutes elements of the old width; recast the layout with `recast_layout` and make a new shared tensor instead"));
    }
    let (old_bits, new_bits) = (8 * i64::from(from.size_bytes()), 8 * i64::from(to.size_bytes()));
    if to.size_bytes() > t.ty.align {
        return Err(Diagnostic::error(
            format!("recasting to {} needs a {}-byte aligned tensor, but this one is only known to be {}-byte aligned", to.name(), to.size_bytes(), t.ty.align),
            p[0].span,
            format!("align {}", t.ty.align),
        )
        .with_help("declare the parameter's alignment (`align: 16`), or recast a view that starts at a multiple of the new element size"));
    }
    let old = &t.ty.layout;
    let bad = |why: String| {
        Diagnostic::error(
            format!("cannot recast the layout {old} from {} to {}: {why}", from.name(), to.name()),
            p[0].span,
            format!("{} elements", from.name()),
        )
        .with_secondary(p[1].span, format!("{new_bits}-bit elements"))
    };
    let layout = cute_layout::recast_layout(new_bits, old_bits, old).map_err(|e| bad(e.reason))?;
    if !cute_layout::recast_is_exact(new_bits, old_bits, old, &layout).unwrap_or(false) {
        return Err(bad(format!("recast_layout gives {layout}, which does not cover the same memory")).with_help(
            format!("every contiguous run of the tensor must be whole {} elements ({new_bits} bits)", to.name()),
        ));
    }
    if !matches!(t.origin, Origin::Kernel(_)) {
        return Err(Diagnostic::error("internal error: a kernel tensor without a kernel origin", span, "here"));
    }
    let view = f.view_as(&t, to, layout, Int::ZERO, ViewHow::Recast { from }, None, span)?;
    Ok(Value::Tensor(view))
}
