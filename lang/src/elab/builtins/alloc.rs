//! New memory for tensors: registers and shared memory, within their budgets.

use crate::diag::Diagnostic;
use crate::elab::value::{Origin, TensorVal, Value};
use crate::elab::{Frame, R};
use crate::kir::{Inst, TensorTy, ValueTy};
use crate::span::Span;
use crate::types::{MemSpace, Scalar};
use cute_layout::Layout;

/// Refuses `n` elements of `elem` per thread in registers past the budget (counted in 32-bit
/// registers, [`crate::kir::REGISTER_BUDGET`]).
pub(crate) fn register_budget(what: &str, n: i64, elem: Scalar, span: Span) -> R<()> {
    let n = u64::try_from(n).unwrap_or(0);
    let regs = crate::kir::registers_for(n, elem);
    if regs <= crate::kir::REGISTER_BUDGET {
        return Ok(());
    }
    Err(Diagnostic::error(
        format!("{what} of {n} {} elements needs {regs} 32-bit registers per thread, more than the budget of {}", elem.name(), crate::kir::REGISTER_BUDGET),
        span,
        "too large for registers",
    )
    .with_help(format!(
        "a thread has at most 255 registers and one register tensor or fragment may take {} of them: at most {} {} elements; split the work into smaller tiles",
        crate::kir::REGISTER_BUDGET,
        crate::kir::max_register_elements(elem),
        elem.name()
    )))
}

/// A new tensor in registers or shared memory, with a static layout.
pub(crate) fn alloc(f: &mut Frame, elem: Scalar, space: MemSpace, layout: Layout, span: Span) -> R<Value> {
    alloc_with(f, elem, space, layout, None, span)
}

/// A new tensor, swizzled when `swizzle` is given (shared memory only).
pub(crate) fn alloc_with(
    f: &mut Frame,
    elem: Scalar,
    space: MemSpace,
    layout: Layout,
    swizzle: Option<cute_layout::Swizzle>,
    span: Span,
) -> R<Value> {
    let ty = alloc_ty(f, elem, space, layout, swizzle, span)?;
    let dst = f.fresh(ValueTy::Tensor(ty.clone()));
    // Allocations go to the top of the kernel, whatever region asked for them: the backend promotes
    // an `alloca` to registers only in the entry block, and shared memory is block-wide anyway.
    f.specials.push(Inst::Alloc { dst, ty: ty.clone(), span });
    Ok(Value::Tensor(TensorVal { ty, origin: Origin::Kernel(dst) }))
}

/// The type of new memory for a tensor (in a kernel, of a static layout that fits the space).
pub(crate) fn alloc_ty(
    f: &mut Frame,
    elem: Scalar,
    space: MemSpace,
    layout: Layout,
    swizzle: Option<cute_layout::Swizzle>,
    span: Span,
) -> R<TensorTy> {
    f.need_kernel(&format!("allocating {} memory", space.name()), span)?;
    let size = layout.cosize().ok().and_then(|s| s.as_static());
    let Some(size) = size else {
        return Err(Diagnostic::error(
            format!("{} tensors need a static layout, found {layout}", space.name()),
            span,
            "dynamic layout",
        ));
    };
    if space == MemSpace::Rmem {
        register_budget("a register tensor", size, elem, span)?;
    } else if size > crate::kir::MAX_SMEM as i64 / elem.size_bytes() as i64 {
        return Err(Diagnostic::error(
            format!("{size} elements of {} is too large for {}", elem.name(), space.name()),
            span,
            "too large",
        )
        .with_help("a block has at most 227 KiB of shared memory"));
    }
    // Registers and shared memory are aligned to the widest access, 16 bytes (a swizzle keeps
    // less together).
    Ok(TensorTy { elem, space, align: crate::elab::swizzle::alloc_align(swizzle, elem.size_bytes()), layout, swizzle })
}
