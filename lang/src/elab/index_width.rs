//! A kernel's index width: `kernel k(...) index(i64) { ... }` asks for 64-bit index math (tensor
//! extents, strides and element offsets past 2^31 - 1); without the clause, or with `index(i32)`,
//! the kernel indexes in 32 bits as CuTe does. The clause is written between the signature and the
//! body, like a launch's `grid(...)` after its arguments: it is a property of the whole kernel that
//! every launch shares, so it is not a parameter, and it is checked here rather than in the grammar
//! so that a misspelled clause gets an error naming the allowed ones.

use super::R;
use crate::ast::{FnKind, Function};
use crate::diag::Diagnostic;
use crate::span::Span;

/// The bits a kernel computes its index math in, and the clause that asked for 64 (its span).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct IndexWidth {
    pub(crate) clause: Option<Span>,
}

impl IndexWidth {
    pub(crate) fn bits(self) -> u32 {
        if self.clause.is_some() {
            64
        } else {
            32
        }
    }
}

/// Checks a function's clauses: only kernels take them; `index` once, with `i32` or `i64` (`math`
/// is checked by `fast_math`).
pub(super) fn of(f: &Function) -> R<IndexWidth> {
    let mut width = IndexWidth::default();
    let mut seen: Option<Span> = None;
    for c in &f.clauses {
        if f.kind != FnKind::Kernel {
            return Err(Diagnostic::error(
                format!("`{}(...)` is a kernel clause; a `fn` or `host` function takes none", c.name.name),
                c.span,
                "clause here",
            )
            .with_help("remove it, or put it on the kernel this function is inlined into"));
        }
        if c.name.name == super::fast_math::CLAUSE {
            continue;
        }
        if c.name.name != "index" {
            return Err(Diagnostic::error(format!("unknown kernel clause `{}`", c.name.name), c.name.span, "unknown")
                .with_help("the kernel clauses are `index(i64)` (64-bit index math) and `math(ftz, approx, contract)` (fast float math)"));
        }
        let [value] = c.values.as_slice() else {
            return Err(Diagnostic::error("`index(...)` takes one type, `i32` or `i64`", c.span, "clause here")
                .with_help("write `index(i64)` for tensors past 2^31 - 1 elements, or leave the clause out"));
        };
        if let Some(prev) = seen.replace(c.span) {
            return Err(Diagnostic::error("`index(...)` is given twice", c.span, "second clause")
                .with_secondary(prev, "first given here")
                .with_help("keep one"));
        }
        width.clause = match value.name.as_str() {
            "i64" => Some(c.span),
            "i32" => None,
            other => {
                return Err(Diagnostic::error(
                    format!("a kernel indexes in `i32` or `i64`, not `{other}`"),
                    value.span,
                    "index type here",
                )
                .with_help("write `index(i64)` for tensors past 2^31 - 1 elements, or leave the clause out"))
            }
        };
    }
    Ok(width)
}
