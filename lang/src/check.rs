//! Name resolution and type checking.
//!
//! Checking runs before any IR is built, so every error the language can catch statically is reported
//! here with a source span; lowering may then assume a well-typed program.

use crate::ast::*;
use crate::diag::{did_you_mean, Diagnostic};
use crate::span::Span;
use crate::types::*;
use std::collections::HashMap;

/// Built-in values that are always in scope, with their types.
pub const BUILTIN_VALUES: [&str; 4] = ["thread_idx", "block_idx", "block_dim", "grid_dim"];
/// Built-in functions.
pub const BUILTIN_FUNCTIONS: [&str; 1] = ["size"];

/// Turns a written type into a checked type.
pub fn resolve_type(ty: &TypeExpr) -> Result<Ty, Diagnostic> {
    match ty {
        TypeExpr::Named(id) => match Scalar::from_name(&id.name) {
            Some(s) => Ok(Ty::Scalar(s)),
            None => {
                let names = Scalar::ALL.map(Scalar::name);
                let mut d = Diagnostic::error(format!("unknown type `{}`", id.name), id.span, "not a type");
                d = match did_you_mean(&id.name, names) {
                    Some(s) => d.with_help(format!("did you mean `{s}`?")),
                    None => d.with_help(format!("the scalar types are {}; tensors are written `tensor<T, space, layout>`", names.join(" "))),
                };
                Err(d)
            }
        },
        TypeExpr::Fn { span, .. } => Err(Diagnostic::error("function types are not supported yet", *span, "function type")),
        TypeExpr::Tensor { elem, space, layout, align, span } => {
            let Ty::Scalar(elem_ty) = resolve_type(&TypeExpr::Named(elem.clone()))? else { unreachable!("named types are scalars") };
            let space_ty = MemSpace::from_name(&space.name).ok_or_else(|| {
                Diagnostic::error(format!("unknown memory space `{}`", space.name), space.span, "not a memory space")
                    .with_help("the memory spaces are `gmem`, `smem` and `rmem`")
            })?;
            let Some(layout) = layout else {
                return Err(Diagnostic::error("this tensor type needs a layout here", *span, "no layout").with_help("write `tensor<T, space, shape:stride>`"));
            };
            let layout_ty = resolve_layout(layout)?;
            let align_bytes = match align {
                None => elem_ty.size_bytes(),
                Some((v, s)) => {
                    if *v <= 0 || (*v & (*v - 1)) != 0 || *v > 256 {
                        return Err(Diagnostic::error("alignment must be a power of two between 1 and 256 bytes", *s, "invalid alignment"));
                    }
                    if (*v as u32) < elem_ty.size_bytes() {
                        return Err(Diagnostic::error(
                            format!("alignment {v} is smaller than the element size of {} ({} bytes)", elem_ty.name(), elem_ty.size_bytes()),
                            *s,
                            "too small",
                        ));
                    }
                    *v as u32
                }
            };
            Ok(Ty::Tensor(TensorType { elem: elem_ty, space: space_ty, align: align_bytes, layout: layout_ty }))
        }
    }
}

fn tuple_of(lit: &IntTupleLit) -> Result<Tuple, Diagnostic> {
    Ok(match lit {
        IntTupleLit::Int(v, s) => {
            if *v < 0 {
                return Err(Diagnostic::error("layout entries must not be negative", *s, "negative"));
            }
            Tuple::Leaf(Extent::Static(*v))
        }
        IntTupleLit::Dynamic(_) => Tuple::Leaf(Extent::Dynamic),
        // `(x)` is the same as `x`, as CuTe prints rank-1 tuples.
        IntTupleLit::Tuple(items, _) if items.len() == 1 => tuple_of(&items[0])?,
        IntTupleLit::Tuple(items, s) => {
            if items.is_empty() {
                return Err(Diagnostic::error("empty tuple in a layout", *s, "empty"));
            }
            Tuple::Node(items.iter().map(tuple_of).collect::<Result<_, _>>()?)
        }
    })
}

/// Column-major compact strides (CuTe's default); a stride after a dynamic extent is dynamic.
fn column_major(shape: &Tuple, running: &mut Extent) -> Tuple {
    match shape {
        Tuple::Leaf(e) => {
            let stride = *running;
            *running = match (*running, *e) {
                (Extent::Static(a), Extent::Static(b)) => a.checked_mul(b).map_or(Extent::Dynamic, Extent::Static),
                _ => Extent::Dynamic,
            };
            Tuple::Leaf(stride)
        }
        Tuple::Node(items) => Tuple::Node(items.iter().map(|t| column_major(t, running)).collect()),
    }
}

/// Parses a layout in CuTe notation (`(?,8):(8,1)`), as `cute.tensor` types carry it.
pub fn parse_layout(text: &str) -> Result<LayoutType, Diagnostic> {
    let lit = crate::grammar::LayoutLitParser::new()
        .parse(crate::lexer::Lexer::new(text))
        .map_err(|_| Diagnostic::error(format!("`{text}` is not a layout"), Span::new(0, text.len()), "expected `shape:stride`"))?;
    resolve_layout(&lit)
}

pub fn resolve_layout(lit: &LayoutLit) -> Result<LayoutType, Diagnostic> {
    let shape = tuple_of(&lit.shape)?;
    for (leaf, s) in shape.leaves().iter().zip(std::iter::repeat(lit.shape.span())) {
        if *leaf == Extent::Static(0) {
            return Err(Diagnostic::error("a shape extent of 0 is not allowed", s, "zero extent"));
        }
    }
    let stride = match &lit.stride {
        None => column_major(&shape, &mut Extent::Static(1)),
        Some(s) => tuple_of(s)?,
    };
    if !shape.congruent(&stride) {
        let sspan = lit.stride.as_ref().map_or(lit.span, IntTupleLit::span);
        return Err(Diagnostic::error(format!("shape {shape} and stride {stride} do not have the same structure"), sspan, "stride here")
            .with_secondary(lit.shape.span(), "shape here")
            .with_help("give one stride for every shape entry, nested the same way"));
    }
    Ok(LayoutType { shape, stride })
}

#[derive(Clone)]
struct Local {
    ty: Ty,
}

struct Checker {
    diagnostics: Vec<Diagnostic>,
    scopes: Vec<HashMap<String, Local>>,
}

/// Checks a whole file; returns every error found.
pub fn check(file: &File) -> Result<(), Vec<Diagnostic>> {
    let mut c = Checker { diagnostics: Vec::new(), scopes: Vec::new() };
    let mut seen: HashMap<&str, Span> = HashMap::new();
    for f in file.functions() {
        if let Some(prev) = seen.insert(&f.name.name, f.name.span) {
            c.diagnostics.push(
                Diagnostic::error(format!("`{}` is defined twice", f.name.name), f.name.span, "second definition")
                    .with_secondary(prev, "first defined here")
                    .with_help("rename one of them"),
            );
        }
        c.function(f);
    }
    if c.diagnostics.is_empty() {
        Ok(())
    } else {
        Err(c.diagnostics)
    }
}

impl Checker {
    fn function(&mut self, f: &Function) {
        if f.kind != FnKind::Kernel {
            let what = if f.kind == FnKind::Host { "host functions" } else { "device functions (`fn`)" };
            self.diagnostics.push(
                Diagnostic::error(format!("{what} are not supported yet"), f.span.to(f.name.span), "only `kernel` functions compile today")
                    .with_help("write the computation as a `kernel`"),
            );
            return;
        }
        if let Some(ret) = &f.ret {
            self.diagnostics.push(Diagnostic::error("a kernel cannot return a value", ret.span(), "return type here").with_help("write results into a tensor parameter"));
        }
        let mut scope = HashMap::new();
        for p in &f.params {
            if p.is_const {
                self.diagnostics.push(Diagnostic::error("`const` parameters are not supported yet", p.span, "const parameter"));
                continue;
            }
            match resolve_type(&p.ty) {
                Ok(ty) => {
                    if let Ty::Tensor(t) = &ty {
                        if t.space != MemSpace::Gmem {
                            self.diagnostics.push(Diagnostic::error("kernel tensor parameters must be in global memory", p.ty.span(), format!("{} tensor", t.space.name())).with_help("use `gmem`"));
                        }
                    }
                    if let Some(prev) = scope.insert(p.name.name.clone(), Local { ty }) {
                        let _ = prev;
                        self.diagnostics.push(Diagnostic::error(format!("parameter `{}` is declared twice", p.name.name), p.name.span, "duplicate parameter"));
                    }
                }
                Err(d) => self.diagnostics.push(d),
            }
        }
        self.scopes.push(scope);
        self.block(&f.body);
        self.scopes.pop();
    }

    fn lookup(&self, name: &str) -> Option<&Local> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    fn visible_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.scopes.iter().flat_map(|s| s.keys().cloned()).collect();
        names.extend(BUILTIN_VALUES.iter().map(|s| s.to_string()));
        names
    }

    fn block(&mut self, b: &Block) {
        self.scopes.push(HashMap::new());
        for s in &b.stmts {
            self.stmt(s);
        }
        self.scopes.pop();
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let { pattern, ty, value, span } => {
                let Pattern::Name(name) = pattern else {
                    self.diagnostics.push(Diagnostic::error("tuple patterns are not supported yet", *span, "pattern"));
                    return;
                };
                let vt = self.expr(value);
                let ty = match (ty, vt) {
                    (Some(t), Some(vt)) => match resolve_type(t) {
                        Ok(t) => {
                            self.expect_assignable(&vt, &t, value.span, value.span);
                            Some(t)
                        }
                        Err(d) => {
                            self.diagnostics.push(d);
                            None
                        }
                    },
                    (None, Some(vt)) => Some(default_literal(vt)),
                    _ => None,
                };
                // An ill-typed initializer still binds the name, so later uses do not cascade into
                // "unknown name" errors.
                let ty = ty.unwrap_or(Ty::Unit);
                if let Some(scope) = self.scopes.last_mut() {
                    scope.insert(name.name.clone(), Local { ty });
                }
            }
            Stmt::Assign { target, value, .. } => {
                let ExprKind::Index { base, .. } = &target.kind else {
                    self.diagnostics.push(
                        Diagnostic::error("only tensor elements can be assigned", target.span, "not a tensor element")
                            .with_help("`let` bindings are immutable; write `let x = ...` again to shadow, or assign to `t[i]`"),
                    );
                    return;
                };
                let Some(tt) = self.expr(target) else { return };
                if let Some(Ty::Tensor(t)) = self.expr_quiet(base) {
                    if t.space == MemSpace::Gmem || t.space == MemSpace::Smem || t.space == MemSpace::Rmem {
                        if let Some(vt) = self.expr(value) {
                            self.expect_assignable(&vt, &tt, value.span, target.span);
                        }
                    }
                }
            }
            Stmt::Expr(e) => {
                self.expr(e);
            }
            Stmt::If { cond, then, els, .. } => {
                if let Some(ct) = self.expr(cond) {
                    if ct != Ty::Scalar(Scalar::Bool) {
                        self.diagnostics.push(Diagnostic::error(format!("`if` condition must be `bool`, found `{ct}`"), cond.span, "not a bool").with_help("compare explicitly, e.g. `x != 0`"));
                    }
                }
                self.block(then);
                if let Some(e) = els {
                    self.stmt(e);
                }
            }
            Stmt::Block(b) => self.block(b),
            Stmt::Launch { span, .. } => {
                self.diagnostics.push(Diagnostic::error("`launch` is only allowed in host functions", *span, "launch here"));
            }
            Stmt::For { var, start, end, body, step, .. } => {
                if let Some((kw, e)) = step {
                    self.diagnostics.push(Diagnostic::error("`step` in ranges is not supported yet", kw.span.to(e.span), "step here"));
                }
                let a = self.expr(start);
                let b = self.expr(end);
                let mut var_ty = Ty::Scalar(Scalar::I32);
                for (t, e) in [(a, start), (b, end)] {
                    match t {
                        Some(Ty::IntLit) | None => {}
                        Some(Ty::Scalar(s)) if s.is_int() => var_ty = Ty::Scalar(s),
                        Some(t) => self.diagnostics.push(Diagnostic::error(format!("range bounds must be integers, found `{t}`"), e.span, "not an integer")),
                    }
                }
                let mut scope = HashMap::new();
                scope.insert(var.name.clone(), Local { ty: var_ty });
                self.scopes.push(scope);
                self.block(body);
                self.scopes.pop();
            }
            Stmt::Return { value, span } => {
                if let Some(v) = value {
                    self.diagnostics.push(Diagnostic::error("a kernel cannot return a value", v.span, "value here").with_secondary(*span, "in this return").with_help("write `return;`"));
                }
            }
        }
    }

    fn expect_assignable(&mut self, value: &Ty, target: &Ty, vspan: Span, tspan: Span) {
        if unify(value, target).as_ref() != Some(target) {
            self.diagnostics.push(
                Diagnostic::error(format!("mismatched types: expected `{target}`, found `{value}`"), vspan, format!("this is `{value}`"))
                    .with_secondary(tspan, format!("expected `{target}` because of this"))
                    .with_help(format!("convert with `.to({target})`")),
            );
        }
    }

    /// Type of an expression without recording errors (used to re-inspect already checked parts).
    fn expr_quiet(&mut self, e: &Expr) -> Option<Ty> {
        let n = self.diagnostics.len();
        let t = self.expr(e);
        self.diagnostics.truncate(n);
        t
    }

    fn expr(&mut self, e: &Expr) -> Option<Ty> {
        match &e.kind {
            ExprKind::Int(_) => Some(Ty::IntLit),
            ExprKind::Float(_) => Some(Ty::FloatLit),
            ExprKind::Bool(_) => Some(Ty::Scalar(Scalar::Bool)),
            ExprKind::Str(_) => {
                self.diagnostics.push(Diagnostic::error("string literals are only allowed in `printf`", e.span, "string here"));
                None
            }
            ExprKind::Wildcard => {
                self.diagnostics.push(Diagnostic::error("`_` is only allowed inside a tensor slice", e.span, "not in a slice"));
                None
            }
            ExprKind::Name(name) => {
                if let Some(l) = self.lookup(name) {
                    return Some(l.ty.clone());
                }
                if BUILTIN_VALUES.contains(&name.as_str()) {
                    return Some(Ty::Dim3);
                }
                let names = self.visible_names();
                let mut d = Diagnostic::error(format!("cannot find value `{name}` in this scope"), e.span, "not found in this scope");
                if let Some(s) = did_you_mean(name, names.iter().map(String::as_str)) {
                    d = d.with_help(format!("did you mean `{s}`?"));
                }
                self.diagnostics.push(d);
                None
            }
            ExprKind::Tuple(_) => {
                self.diagnostics.push(Diagnostic::error("tuples are only allowed as coordinates", e.span, "tuple here"));
                None
            }
            ExprKind::Unary(op, inner) => {
                let t = self.expr(inner)?;
                match (op, &t) {
                    (UnOp::Neg, Ty::IntLit | Ty::FloatLit) => Some(t),
                    (UnOp::Neg, Ty::Scalar(s)) if s.is_float() || s.is_signed() => Some(t),
                    (UnOp::Not, Ty::Scalar(s)) if s.is_int() || *s == Scalar::Bool => Some(t),
                    _ => {
                        let sym = if *op == UnOp::Neg { "-" } else { "!" };
                        self.diagnostics.push(Diagnostic::error(format!("cannot apply `{sym}` to `{t}`"), e.span, format!("`{t}` here")));
                        None
                    }
                }
            }
            ExprKind::Binary(op, a, b) => {
                let ta = self.expr(a);
                let tb = self.expr(b);
                let (ta, tb) = (ta?, tb?);
                self.binary(*op, &ta, &tb, e, a.span, b.span)
            }
            ExprKind::Field { base, name } => {
                let t = self.expr(base)?;
                if t == Ty::Dim3 {
                    if ["x", "y", "z"].contains(&name.name.as_str()) {
                        return Some(Ty::Scalar(Scalar::I32));
                    }
                    self.diagnostics.push(Diagnostic::error(format!("no field `{}` on `dim3`", name.name), name.span, "unknown field").with_help("the fields are `x`, `y` and `z`"));
                    return None;
                }
                self.diagnostics.push(Diagnostic::error(format!("`{t}` has no fields"), name.span, "unknown field"));
                None
            }
            ExprKind::Method { name, .. } => {
                self.diagnostics.push(Diagnostic::error(format!("unknown method `{}`", name.name), name.span, "no such method"));
                None
            }
            ExprKind::Call { callee, args } => self.call(callee, args, e.span),
            ExprKind::Index { base, index } => {
                let bt = self.expr(base)?;
                let Ty::Tensor(t) = bt else {
                    self.diagnostics.push(Diagnostic::error(format!("cannot index into a value of type `{bt}`"), base.span, "not a tensor"));
                    return None;
                };
                let rank = t.layout.rank();
                if index.len() != 1 && index.len() != rank {
                    self.diagnostics.push(
                        Diagnostic::error(format!("this tensor has rank {rank} but the coordinate has {} entries", index.len()), e.span, format!("{} coordinates", index.len()))
                            .with_secondary(base.span, format!("layout {}", t.layout))
                            .with_help(format!("give {rank} coordinates, or one linear index")),
                    );
                }
                for i in index {
                    match self.expr(i) {
                        Some(Ty::IntLit) | None => {}
                        Some(Ty::Scalar(s)) if s.is_int() => {}
                        Some(other) => self.diagnostics.push(Diagnostic::error(format!("coordinates must be integers, found `{other}`"), i.span, "not an integer")),
                    }
                }
                Some(Ty::Scalar(t.elem))
            }
        }
    }

    fn binary(&mut self, op: BinOp, ta: &Ty, tb: &Ty, e: &Expr, sa: Span, sb: Span) -> Option<Ty> {
        let Some(t) = unify(ta, tb) else {
            self.diagnostics.push(
                Diagnostic::error(format!("mismatched types in `{}`: `{ta}` and `{tb}`", op.symbol()), e.span, "operands differ")
                    .with_secondary(sa, format!("`{ta}`"))
                    .with_secondary(sb, format!("`{tb}`"))
                    .with_help("convert one side with `.to(T)`"),
            );
            return None;
        };
        let ok = match (&t, op) {
            (Ty::Scalar(Scalar::Bool), BinOp::And | BinOp::Or | BinOp::Eq | BinOp::Ne | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor) => true,
            (_, BinOp::And | BinOp::Or) => false,
            (Ty::IntLit, _) => true,
            (Ty::Scalar(s), _) if s.is_int() => true,
            (Ty::FloatLit, op) | (Ty::Scalar(_), op) => !matches!(op, BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr | BinOp::Rem) || matches!(t, Ty::Scalar(s) if !s.is_float()),
            _ => false,
        };
        if !ok {
            self.diagnostics.push(Diagnostic::error(format!("cannot apply `{}` to `{t}`", op.symbol()), e.span, "unsupported operation"));
            return None;
        }
        if op.is_comparison() || matches!(op, BinOp::And | BinOp::Or) {
            Some(Ty::Scalar(Scalar::Bool))
        } else {
            Some(t)
        }
    }

    fn call(&mut self, callee: &Ident, args: &[Arg], span: Span) -> Option<Ty> {
        match callee.name.as_str() {
            "size" => {
                if args.len() != 1 || args[0].name.is_some() {
                    self.diagnostics.push(Diagnostic::error(format!("`size` takes 1 argument, found {}", args.len()), span, "wrong number of arguments").with_help("write `size(tensor)`"));
                    return None;
                }
                match self.expr(&args[0].value)? {
                    Ty::Tensor(_) => Some(Ty::Scalar(Scalar::I32)),
                    t => {
                        self.diagnostics.push(Diagnostic::error(format!("`size` expects a tensor, found `{t}`"), args[0].value.span, "not a tensor"));
                        None
                    }
                }
            }
            name => {
                for a in args {
                    self.expr_quiet(&a.value);
                }
                let mut d = Diagnostic::error(format!("cannot find function `{name}`"), callee.span, "not found");
                if let Some(s) = did_you_mean(name, BUILTIN_FUNCTIONS) {
                    d = d.with_help(format!("did you mean `{s}`?"));
                }
                self.diagnostics.push(d);
                None
            }
        }
    }
}

/// The type a literal takes when nothing else constrains it.
pub fn default_literal(t: Ty) -> Ty {
    match t {
        Ty::IntLit => Ty::Scalar(Scalar::I32),
        Ty::FloatLit => Ty::Scalar(Scalar::F32),
        t => t,
    }
}

/// The common type of two operands, with literals adapting to the other side.
pub fn unify(a: &Ty, b: &Ty) -> Option<Ty> {
    match (a, b) {
        _ if a == b => Some(a.clone()),
        (Ty::IntLit, Ty::Scalar(s)) | (Ty::Scalar(s), Ty::IntLit) if *s != Scalar::Bool => Some(Ty::Scalar(*s)),
        (Ty::FloatLit, Ty::Scalar(s)) | (Ty::Scalar(s), Ty::FloatLit) if s.is_float() => Some(Ty::Scalar(*s)),
        (Ty::IntLit, Ty::FloatLit) | (Ty::FloatLit, Ty::IntLit) => Some(Ty::FloatLit),
        _ => None,
    }
}
