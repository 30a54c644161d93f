//! Calls: `fn` helpers are inlined where they are called; builtins and methods go to
//! [`builtins`](super::builtins).

use super::budget::Multiplier;
use super::flow::FnCtx;
use super::value::Value;
use super::{builtins, cluster, mbarrier, Frame, R};
use crate::ast::{Arg, FnKind, Function, Ident};
use crate::check::resolve_type;
use crate::diag::Diagnostic;
use crate::kir;
use crate::span::Span;
use crate::types::{Scalar, Ty};
use std::collections::HashMap;

/// Nested inlining of `fn` helpers deeper than this is an error (it can only be runaway recursion).
const INLINE_DEPTH: usize = 64;

impl Frame<'_, '_> {
    pub(super) fn call(&mut self, callee: &Ident, args: &[Arg], span: Span) -> R<Value> {
        // A `const` function parameter or a local bound to a function calls what it names.
        let name = match self.lookup(&callee.name) {
            Some(Value::Func(target)) => target,
            Some(other) => {
                return Err(Diagnostic::error(
                    format!("`{}` is a {}, not a function", callee.name, other.kind()),
                    callee.span,
                    "not callable",
                ))
            }
            None => callee.name.clone(),
        };
        if let Some(&f) = self.prog.functions.get(&name) {
            return self.inline(f, args, span);
        }
        if name == "assert" {
            return self.assert_call(args, span);
        }
        if let Some(op) = mbarrier::op_of(&name) {
            // The barrier is an element's place (`bars[i]`), not its value.
            return self.mbarrier_call(op, args, span);
        }
        if let Some(op) = kir::AtomicOp::from_builtin(&name) {
            // The element is a place (`out[i]`), as a store names it.
            return self.atomic_call(op, args, span, true);
        }
        if name == "tma_load" {
            return self.tma_load_call(args, span);
        }
        if cluster::BUILTINS.contains(&name.as_str()) {
            // `dsmem_load(sA[i], rank)` takes the element's place, not its value.
            return self.cluster_call(&name, args, span);
        }
        match name.as_str() {
            "tma_store" => return self.tma_store_call(args, span),
            // Same instruction as `fence_proxy_async()`, under CuTe's TMA-store name.
            "tma_store_fence" => return self.tma_store_fence_call(args, span),
            "tma_store_arrive" | "tma_store_wait" | "cp_async_bulk_commit_group" | "cp_async_bulk_wait_group" => {
                return self.bulk_group_call(&name, args, span)
            }
            _ => {}
        }
        if builtins::is_operator(&name) {
            let vals = args.iter().map(|a| self.expr(&a.value)).collect::<R<Vec<_>>>()?;
            return self.call_value(&name, vals, span);
        }
        if let Some(ty) = Scalar::from_name(&name) {
            // `f32(3.14)`, `i32(5)`: a run-time value of that type (CuTe DSL's `cutlass.Float32(3.14)`),
            // which compile-time `print` shows as `?`.
            if args.len() != 1 || args[0].name.is_some() {
                return Err(Diagnostic::error(
                    format!("`{name}(x)` takes one value"),
                    span,
                    "wrong number of arguments",
                ));
            }
            let v = self.expr(&args[0].value)?;
            return self.dynamic_scalar(ty, v, args[0].value.span);
        }
        // `where` on a compile-time condition picks its value before the other is elaborated (as
        // an `if` on one would): `where(batched, s[0, _, _], s)` where `s` has no batch mode.
        let lazy_where = name == "where" && args.len() == 3 && args.iter().all(|a| a.name.is_none());
        let mut vals = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let arg = self.builtin_arg(a)?;
            if let (true, 0, Value::Bool(c)) = (lazy_where, i, &arg.value) {
                return self.expr(&args[if *c { 1 } else { 2 }].value);
            }
            vals.push(arg);
        }
        builtins::call(self, &name, callee.span, vals, span)
    }

    /// An argument of a builtin or method, elaborated, with its name.
    fn builtin_arg(&mut self, a: &Arg) -> R<builtins::Arg> {
        Ok(builtins::Arg {
            name: a.name.as_ref().map(|n| n.name.clone()),
            name_span: a.name.as_ref().map(|n| n.span),
            value: self.expr(&a.value)?,
            span: a.value.span,
        })
    }

    pub(crate) fn call_value(&mut self, func: &str, args: Vec<Value>, span: Span) -> R<Value> {
        if builtins::is_operator(func) {
            let mut it = args.into_iter();
            let (Some(a), Some(b)) = (it.next(), it.next()) else {
                return Err(Diagnostic::error(
                    format!("`{func}` takes two operands"),
                    span,
                    "wrong number of arguments",
                ));
            };
            return builtins::operator(self, func, a, b, span);
        }
        let Some(&f) = self.prog.functions.get(func) else {
            return Err(Diagnostic::error(format!("cannot find function `{func}`"), span, "not found"));
        };
        self.inline_values(f, args, span)
    }

    fn inline(&mut self, f: &Function, args: &[Arg], span: Span) -> R<Value> {
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.expr(&a.value)?);
        }
        self.inline_values(f, vals, span)
    }

    /// Calls a `fn` helper by elaborating its body in place (helpers are always inlined).
    fn inline_values(&mut self, f: &Function, args: Vec<Value>, span: Span) -> R<Value> {
        if f.kind != FnKind::Device {
            return Err(Diagnostic::error(
                format!(
                    "`{}` is a {} and cannot be called",
                    f.name.name,
                    if f.kind == FnKind::Kernel { "kernel" } else { "host function" }
                ),
                span,
                "not callable",
            )
            .with_help(if f.kind == FnKind::Kernel {
                "kernels are started with `launch` from a host function"
            } else {
                "host functions are called from the host program"
            }));
        }
        if args.len() != f.params.len() {
            return Err(Diagnostic::error(
                format!(
                    "`{}` takes {} but {} given",
                    f.name.name,
                    crate::diag::count(f.params.len(), "argument"),
                    if args.len() == 1 { "1 was".to_string() } else { format!("{} were", args.len()) }
                ),
                span,
                "wrong number of arguments",
            )
            .with_secondary(f.name.span, "defined here"));
        }
        if self.inline_depth >= INLINE_DEPTH {
            return Err(Diagnostic::error(
                format!("`{}` is inlined more than {INLINE_DEPTH} levels deep", f.name.name),
                span,
                "runaway recursion?",
            ));
        }
        let mut scope = HashMap::new();
        for (p, v) in f.params.iter().zip(args) {
            let v = match resolve_type(&p.ty) {
                Ok(Ty::Scalar(s)) => self.coerce(v, s, span)?,
                _ => v,
            };
            self.prog.observer.binding(p.name.span, &v);
            scope.insert(p.name.name.clone(), v);
        }
        // A helper sees its parameters, the file's consts and builtins: not its caller's locals.
        let saved = std::mem::replace(&mut self.scopes, vec![scope]);
        // A helper's `break` cannot leave its caller's loop.
        let saved_loops = std::mem::take(&mut self.loops);
        let ret_ty = match f.ret.as_ref().map(resolve_type) {
            Some(Ok(Ty::Scalar(s))) => Some(s),
            _ => None,
        };
        self.fns.push(FnCtx::new(self.depth, true, ret_ty));
        self.inline_depth += 1;
        self.prog.work.enter(Multiplier::Inlined { span, callee: f.name.name.clone() });
        let flow = self.prog.work.step(span).and_then(|()| self.stmts(&f.body.stmts));
        self.prog.work.leave();
        self.inline_depth -= 1;
        let ctx = self.fns.pop();
        self.loops = saved_loops;
        self.scopes = saved;
        let end = Span::new(f.body.span.end.saturating_sub(1), f.body.span.end);
        let v = match (flow, ctx) {
            (Ok(flow), Some(ctx)) => self.finish_call(ctx, &flow, &f.name.name, end)?,
            (Err(d), _) => return Err(d),
            (Ok(_), None) => unreachable!("the call's context was pushed above"),
        };
        match (&f.ret, v) {
            (Some(t), v) => match resolve_type(t)? {
                Ty::Scalar(s) => self.coerce(v, s, span),
                _ => Ok(v),
            },
            (None, v) => Ok(v),
        }
    }

    pub(super) fn method(&mut self, recv: Value, name: &Ident, args: &[Arg], span: Span) -> R<Value> {
        let vals = args.iter().map(|a| self.builtin_arg(a)).collect::<R<Vec<_>>>()?;
        builtins::method(self, recv, name, vals, span)
    }
}
