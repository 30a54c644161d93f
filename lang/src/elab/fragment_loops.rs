//! Static kernel loops over register fragments. A register tensor lives in registers only when
//! every access to it has a static offset: one indexed by a run-time loop variable goes to local
//! memory (the backend cannot address registers), which is what CuTe's `CUTE_UNROLL` on such loops
//! avoids. So a kernel loop with static bounds is unrolled past the usual 64 trips, up to
//! [`FRAGMENT_UNROLL_LIMIT`], when its body subscripts a register tensor with an index that
//! mentions the loop variable (`for i in 0..size(tCpC) { tCpC[i] = ...; }`, a 128-element
//! predicate fragment in samples/gemm_sm80.cute). The limit is the register file's: a thread has at
//! most 255 registers, so no fragment a kernel keeps in registers has more elements.

use crate::ast::{Arg, Block, Expr, ExprKind, Stmt};

/// The most trips a static loop over a register fragment is unrolled to.
pub(super) const FRAGMENT_UNROLL_LIMIT: i64 = 256;

/// Whether `body` subscripts a name for which `is_fragment` holds with an index that mentions
/// `var` (also in nested blocks, loops and branches; a `let` that shadows `var` is not tracked,
/// which can only unroll a loop that did not need it).
pub(super) fn indexes_fragment(body: &Block, var: &str, is_fragment: &dyn Fn(&str) -> bool) -> bool {
    body.stmts.iter().any(|s| stmt(s, var, is_fragment))
}

fn stmt(s: &Stmt, var: &str, f: &dyn Fn(&str) -> bool) -> bool {
    match s {
        Stmt::Let { value, .. } => expr(value, var, f),
        Stmt::Assign { target, value, .. } => expr(target, var, f) || expr(value, var, f),
        Stmt::Expr(e) => expr(e, var, f),
        Stmt::If { cond, then, els, .. } => {
            expr(cond, var, f) || indexes_fragment(then, var, f) || els.as_deref().is_some_and(|e| stmt(e, var, f))
        }
        Stmt::Block(b) => indexes_fragment(b, var, f),
        Stmt::For { start, end, step, body, .. } => {
            expr(start, var, f)
                || expr(end, var, f)
                || step.as_ref().is_some_and(|(_, e)| expr(e, var, f))
                || indexes_fragment(body, var, f)
        }
        Stmt::While { cond, body, .. } => expr(cond, var, f) || indexes_fragment(body, var, f),
        Stmt::Return { value, .. } => value.as_ref().is_some_and(|e| expr(e, var, f)),
        Stmt::Break(_) | Stmt::Continue(_) | Stmt::Launch { .. } => false,
    }
}

fn expr(e: &Expr, var: &str, f: &dyn Fn(&str) -> bool) -> bool {
    match &e.kind {
        ExprKind::Index { base, index } => {
            let fragment = matches!(&base.kind, ExprKind::Name(n) if f(n));
            (fragment && index.iter().any(|i| mentions(i, var)))
                || expr(base, var, f)
                || index.iter().any(|i| expr(i, var, f))
        }
        ExprKind::Tuple(items) => items.iter().any(|i| expr(i, var, f)),
        ExprKind::Unary(_, a) => expr(a, var, f),
        ExprKind::Binary(_, a, b) => expr(a, var, f) || expr(b, var, f),
        ExprKind::Call { args, .. } => args_any(args, var, f),
        ExprKind::Method { receiver, args, .. } => expr(receiver, var, f) || args_any(args, var, f),
        ExprKind::Field { base, .. } => expr(base, var, f),
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Bool(_)
        | ExprKind::Str(_)
        | ExprKind::Name(_)
        | ExprKind::Wildcard => false,
    }
}

fn args_any(args: &[Arg], var: &str, f: &dyn Fn(&str) -> bool) -> bool {
    args.iter().any(|a| expr(&a.value, var, f))
}

/// Whether `e` reads the name `var`.
fn mentions(e: &Expr, var: &str) -> bool {
    match &e.kind {
        ExprKind::Name(n) => n == var,
        ExprKind::Tuple(items) => items.iter().any(|i| mentions(i, var)),
        ExprKind::Unary(_, a) | ExprKind::Field { base: a, .. } => mentions(a, var),
        ExprKind::Binary(_, a, b) => mentions(a, var) || mentions(b, var),
        ExprKind::Call { args, .. } => args.iter().any(|a| mentions(&a.value, var)),
        ExprKind::Method { receiver, args, .. } => {
            mentions(receiver, var) || args.iter().any(|a| mentions(&a.value, var))
        }
        ExprKind::Index { base, index } => mentions(base, var) || index.iter().any(|i| mentions(i, var)),
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Str(_) | ExprKind::Wildcard => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body_of(src: &str) -> Block {
        let program = crate::parse(src).expect("parses");
        match &program.items[0] {
            crate::ast::Item::Function(f) => match &f.body.stmts[0] {
                Stmt::For { body, .. } => body.clone(),
                s => panic!("not a loop: {s:?}"),
            },
            i => panic!("not a function: {i:?}"),
        }
    }

    #[test]
    fn finds_fragment_subscripts_by_the_loop_variable() {
        let frag = |n: &str| n == "p";
        let yes = [
            "kernel k() { for i in 0..128 { p[i] = 1; } }",
            "kernel k() { for i in 0..128 { x[0] = p[(i, 0)] + 1; } }",
            "kernel k() { for i in 0..128 { if c { g(p[i * 2]); } } }",
        ];
        for src in yes {
            assert!(indexes_fragment(&body_of(src), "i", &frag), "{src}");
        }
        let no = [
            "kernel k() { for i in 0..128 { x[i] = 1; } }",
            "kernel k() { for i in 0..128 { p[0] = x[i]; } }",
            "kernel k() { for i in 0..128 { p[j] = 1; } }",
        ];
        for src in no {
            assert!(!indexes_fragment(&body_of(src), "i", &frag), "{src}");
        }
    }
}
