//! The launch's own dynamic shared memory as tensors: `smem_allocator()` and its
//! `allocate_tensor(T, layout)` (CuTe DSL's `cutlass.utils.SmemAllocator`).
//!
//! A launch reserves dynamic shared memory with `smem(BYTES)`. An allocator hands it out front to
//! back, each tensor aligned to `kir::SMEM_ALIGN` (or more, `byte_alignment:`), as `LaunchSmem`
//! instructions at fixed byte offsets. The offsets are decided while the kernel is elaborated, like
//! every layout, so they are the same for every thread and every launch; the kernel records how far
//! they reach, and every launch must give at least that (checked when the host function is
//! compiled if `BYTES` is static, by the runtime otherwise). Each allocator starts at the region's
//! start, as CuTe DSL's do: two allocators in one kernel hand out the same memory.

use super::builtins::alloc_ty;
use super::builtins::args::Arg;
use super::builtins::args::{arity, named, positional};
use super::value::{Origin, TensorVal, Value};
use super::{Frame, R};
use crate::diag::Diagnostic;
use crate::kir::{self, Inst, ValueTy};
use crate::span::Span;
use crate::types::{MemSpace, Scalar};
use cute_layout::Layout;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The next free byte of the launch's region, shared by the copies of one allocator value.
#[derive(Clone, Debug, Default)]
pub struct SmemAllocator(Arc<AtomicU64>);

impl SmemAllocator {
    /// The offset (bytes) after the last tensor handed out.
    pub fn next(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

impl PartialEq for SmemAllocator {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// `smem_allocator()`.
pub(super) fn smem_allocator(f: &mut Frame, args: &[Arg], span: Span) -> R<Value> {
    arity("smem_allocator", args, 0, 0, span, "smem_allocator()")?;
    named("smem_allocator", args, "", &[])?;
    f.need_kernel("`smem_allocator`", span)?;
    Ok(Value::SmemAllocator(SmemAllocator::default()))
}

/// `allocator.allocate_tensor(T, layout[, byte_alignment: N])`: the next `cosize(layout)` elements
/// of the launch's region (whole periods for a swizzled layout), as a shared tensor.
pub(super) fn allocate_tensor(f: &mut Frame, a: &SmemAllocator, args: &[Arg], span: Span) -> R<Value> {
    let usage = "allocator.allocate_tensor(element_type, layout[, byte_alignment: N])";
    arity("allocate_tensor", args, 2, 2, span, usage)?;
    let align = match named("allocate_tensor", args, "byte_alignment", &["byte_alignment"])? {
        None => kir::SMEM_ALIGN,
        Some(arg) => match &arg.value {
            Value::Int(i) => match i.as_static() {
                Some(n) if n > 0 && (n as u64).is_power_of_two() && n as u64 <= 1024 => (n as u64).max(kir::SMEM_ALIGN),
                _ => {
                    return Err(Diagnostic::error(format!("`byte_alignment` must be a power of two from 1 to 1024, found {i}"), arg.span, "bad alignment")
                        .with_help("shared tensors start 128-byte aligned anyway; ask for more (up to 1024) only where an instruction needs it"))
                }
            },
            other => return Err(Diagnostic::error(format!("`byte_alignment` must be an integer, found {}", crate::diag::article(&other.kind())), arg.span, "not an integer")),
        },
    };
    let p = positional(args);
    let Value::Type(elem) = p[0].value else {
        return Err(Diagnostic::error(
            format!("the element type must be a type, found {}", crate::diag::article(&p[0].value.kind())),
            p[0].span,
            "not a type",
        ));
    };
    let (layout, swizzle) =
        match &p[1].value {
            Value::Composed(c) => {
                let (sw, off, layout) = super::swizzle::split_at_zero(c, p[1].span)?;
                debug_assert_eq!(off, 0);
                (layout, Some(sw))
            }
            Value::Layout(l) => (l.clone(), None),
            other => return Err(Diagnostic::error(
                format!(
                    "`allocate_tensor` lays the memory out with a layout, found {}",
                    crate::diag::article(&other.kind())
                ),
                p[1].span,
                "not a layout",
            )
            .with_help(
                "pass a layout (`make_layout(...)`) or a swizzled layout (`composition(make_swizzle(...), layout)`)",
            )),
        };
    let ty = alloc_ty(f, elem, MemSpace::Smem, layout, swizzle, span)?;
    place(f, a, ty, align, span)
}

/// The next `cosize(layout)` elements of the launch's region as an unswizzled shared tensor
/// (a pipeline's barriers).
pub(super) fn allocate_layout(f: &mut Frame, a: &SmemAllocator, elem: Scalar, layout: Layout, span: Span) -> R<Value> {
    let ty = alloc_ty(f, elem, MemSpace::Smem, layout, None, span)?;
    place(f, a, ty, kir::SMEM_ALIGN, span)
}

/// Hands out the next bytes of the region, aligned to `align` (and the tensor's swizzle period), for `ty`.
fn place(f: &mut Frame, a: &SmemAllocator, ty: kir::TensorTy, align: u64, span: Span) -> R<Value> {
    let bytes = kir::smem_alloc_bytes(&ty);
    // A swizzled tensor starts at a multiple of its swizzle's period (kir::smem_alloc_align).
    let align = align.max(kir::smem_alloc_align(&ty));
    let offset = a.next().div_ceil(align) * align;
    let end = offset + bytes;
    if end > kir::MAX_SMEM {
        return Err(Diagnostic::error(
            format!(
                "this tensor would end {end} bytes into the launch's shared memory; a block has at most {}",
                kir::MAX_SMEM
            ),
            span,
            "too much shared memory",
        )
        .with_help("use fewer pipeline stages or smaller tiles"));
    }
    a.0.store(end, Ordering::Relaxed);
    let dst = f.fresh(ValueTy::Tensor(ty.clone()));
    f.specials.push(Inst::LaunchSmem { dst, ty: ty.clone(), offset, span });
    Ok(Value::Tensor(TensorVal { ty, origin: Origin::Kernel(dst) }))
}
