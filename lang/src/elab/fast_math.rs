//! A kernel's fast-math controls: `kernel k(...) math(ftz, approx, contract) { ... }` lets the
//! kernel's float code give up some precision for speed, each control one kind of it (docs/
//! language.md §2, "Fast math"). Without the clause a kernel's float math is IEEE, as CUDA's is
//! without `--use_fast_math`: the controls are per kernel, in the source, because they change the
//! numbers a kernel computes, so that the same source always gives the same results. Like
//! `index(i64)`, the clause is checked here rather than in the grammar so that a misspelled control
//! gets an error naming the allowed ones.

use super::R;
use crate::ast::Function;
use crate::diag::Diagnostic;
use crate::kir::FastMath;
use crate::span::Span;

/// The clause's name.
pub(super) const CLAUSE: &str = "math";

/// The controls, with what each gives up (for the help of an unknown one).
const CONTROLS: &str = "`ftz` (flush f32 denormals to zero), `approx` (approximate division, square root, \
                        `exp2`, `exp`, `log`, `sin`, ...), `contract` (fuse `a * b + c` into one fma) and `fast` \
                        (all three)";

/// The kernel's `math(...)` clause: which controls it gives, once each. (`index_width::of` has
/// already refused clauses on functions that are not kernels, and unknown clause names.)
pub(super) fn of(f: &Function) -> R<FastMath> {
    let mut math = FastMath::default();
    let mut seen: Option<Span> = None;
    for c in f.clauses.iter().filter(|c| c.name.name == CLAUSE) {
        if let Some(prev) = seen.replace(c.span) {
            return Err(Diagnostic::error("`math(...)` is given twice", c.span, "second clause")
                .with_secondary(prev, "first given here")
                .with_help("list every control in one clause: `math(ftz, approx, contract)`"));
        }
        if c.values.is_empty() {
            return Err(Diagnostic::error("`math()` names no control", c.span, "empty clause")
                .with_help(format!("name one or more of {CONTROLS}, or leave the clause out")));
        }
        let mut named: Vec<(&str, Span)> = Vec::new();
        for v in &c.values {
            if let Some((_, prev)) = named.iter().find(|(n, _)| *n == v.name) {
                return Err(Diagnostic::error(
                    format!("the math control `{}` is given twice", v.name),
                    v.span,
                    "again",
                )
                .with_secondary(*prev, "first given here")
                .with_help("name it once"));
            }
            named.push((&v.name, v.span));
            match v.name.as_str() {
                "ftz" => math.ftz = true,
                "approx" => math.approx = true,
                "contract" => math.contract = true,
                "fast" => {
                    math.ftz = true;
                    math.approx = true;
                    math.contract = true;
                }
                other => {
                    return Err(Diagnostic::error(format!("unknown math control `{other}`"), v.span, "unknown")
                        .with_help(format!("the controls are {CONTROLS}")))
                }
            }
        }
        math.clause = Some(c.span);
    }
    Ok(math)
}
