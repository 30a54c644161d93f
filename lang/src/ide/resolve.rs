//! Name resolution for the editor: what each name written in a file refers to.
//!
//! The scoping rules are elaboration's (`crate::elab`), walked once over the whole AST rather than
//! once per instance: a function sees its parameters and the file's `const`s and functions; a
//! helper does not see its caller's locals; a block, a branch and a loop body open a scope; a `let`
//! is visible after its statement and shadows earlier bindings of the name; a `const` item sees
//! the `const`s above it. Names elaboration looks up elsewhere (builtins, scalar types, methods,
//! fields, named arguments) are recorded too, so an editor can document them.

use crate::ast::*;
use crate::elab::builtins;
use crate::pretty::print_type;
use crate::span::Span;
use crate::types::Scalar;
use std::collections::HashMap;

/// The CUDA built-in index values (`thread_idx.x`, ...).
pub const DIM3_NAMES: [&str; 4] = ["thread_idx", "block_idx", "block_dim", "grid_dim"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefKind {
    Kernel,
    Host,
    /// A `fn` helper.
    Helper,
    /// A `const` item.
    Const,
    Param,
    /// A `const` parameter.
    ConstParam,
    Let,
    LetMut,
    LoopVar,
}

impl DefKind {
    pub fn is_item(self) -> bool {
        matches!(self, DefKind::Kernel | DefKind::Host | DefKind::Helper | DefKind::Const)
    }
}

/// A name the file defines.
#[derive(Clone, Debug, PartialEq)]
pub struct Definition {
    pub name: String,
    /// The name where it is defined.
    pub span: Span,
    pub kind: DefKind,
    /// What is written for it: a function's signature, a parameter's or `let`'s type, in canonical form.
    pub declared: Option<String>,
    /// The whole item, parameter or statement.
    pub extent: Span,
    /// The function a parameter or local belongs to (an index into [`Index::defs`]).
    pub owner: Option<usize>,
    /// The name can be used up to here (the end of its block; the whole file for items).
    pub scope_end: usize,
    /// How many times the name is used.
    pub uses: usize,
}

/// What a name refers to.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// A name the file defines (an index into [`Index::defs`]).
    Def(usize),
    /// A builtin function, operator or CUDA index value.
    Builtin(String),
    Method(String),
    Field(String),
    Type(Scalar),
    /// `name:` in a call of `callee` (a builtin function or method).
    NamedArg {
        callee: String,
        name: String,
    },
}

/// One name written in the file and what it refers to.
#[derive(Clone, Debug, PartialEq)]
pub struct Occurrence {
    pub span: Span,
    pub target: Target,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Index {
    pub defs: Vec<Definition>,
    /// Sorted by position; names do not overlap.
    pub occurrences: Vec<Occurrence>,
}

impl Index {
    /// The name at `offset` (a cursor just after a name is on it).
    pub fn occurrence_at(&self, offset: usize) -> Option<&Occurrence> {
        let after = self.occurrences.partition_point(|o| o.span.start <= offset);
        self.occurrences[..after].last().filter(|o| offset <= o.span.end)
    }
}

/// Resolves every name of a parsed file.
pub fn resolve(file: &File, source_len: usize) -> Index {
    let mut r = Resolver {
        index: Index::default(),
        functions: HashMap::new(),
        consts: Vec::new(),
        scopes: Vec::new(),
        owner: None,
    };
    for item in file.all_items() {
        if let Item::Function(f) = item {
            let kind = match f.kind {
                FnKind::Kernel => DefKind::Kernel,
                FnKind::Host => DefKind::Host,
                FnKind::Device => DefKind::Helper,
            };
            let id = r.define(&f.name, kind, Some(signature(f)), f.span, source_len);
            r.functions.insert(f.name.name.clone(), id);
        }
    }
    // `const` items are evaluated in order: each sees those above it.
    for item in file.all_items() {
        if let Item::Const(c) = item {
            r.expr(&c.value);
            if let Some(t) = &c.ty {
                r.ty(t);
            }
            let id = r.define(&c.name, DefKind::Const, c.ty.as_ref().map(print_type), c.span, source_len);
            r.consts.push((c.name.name.clone(), id));
        }
    }
    for item in file.all_items() {
        if let Item::Function(f) = item {
            r.function(f);
        }
    }
    r.index.occurrences.sort_by_key(|o| o.span.start);
    r.index
}

/// `kernel k(a: tensor<f32, gmem>, const N)`, `fn f(x, y) -> f32`: a function's first line.
pub fn signature(f: &Function) -> String {
    let keyword = match f.kind {
        FnKind::Kernel => "kernel",
        FnKind::Host => "host",
        FnKind::Device => "fn",
    };
    let params: Vec<String> = f
        .params
        .iter()
        .map(|p| {
            let name = if p.is_const { format!("const {}", p.name.name) } else { p.name.name.clone() };
            match &p.ty {
                TypeExpr::Infer(_) => name,
                ty => format!("{name}: {}", print_type(ty)),
            }
        })
        .collect();
    let ret = f.ret.as_ref().map(|t| format!(" -> {}", print_type(t))).unwrap_or_default();
    format!("{keyword} {}({}){ret}", f.name.name, params.join(", "))
}

struct Resolver {
    index: Index,
    functions: HashMap<String, usize>,
    /// The `const` items visible now, latest last.
    consts: Vec<(String, usize)>,
    /// Local scopes, innermost last, each with the offset where it ends.
    scopes: Vec<(Vec<(String, usize)>, usize)>,
    /// The function being walked.
    owner: Option<usize>,
}

impl Resolver {
    fn define(
        &mut self,
        name: &Ident,
        kind: DefKind,
        declared: Option<String>,
        extent: Span,
        scope_end: usize,
    ) -> usize {
        let id = self.index.defs.len();
        self.index.defs.push(Definition {
            name: name.name.clone(),
            span: name.span,
            kind,
            declared,
            extent,
            owner: self.owner,
            scope_end,
            uses: 0,
        });
        self.index.occurrences.push(Occurrence { span: name.span, target: Target::Def(id) });
        id
    }

    /// Defines a local in the innermost scope.
    fn define_local(&mut self, name: &Ident, kind: DefKind, declared: Option<String>, extent: Span) {
        let scope_end = self.scopes.last().map_or(extent.end, |s| s.1);
        let id = self.define(name, kind, declared, extent, scope_end);
        if let Some((scope, _)) = self.scopes.last_mut() {
            scope.push((name.name.clone(), id));
        }
    }

    fn refer(&mut self, span: Span, target: Target) {
        if let Target::Def(id) = target {
            self.index.defs[id].uses += 1;
        }
        self.index.occurrences.push(Occurrence { span, target });
    }

    /// A local or a `const` item, as elaboration's `lookup` finds it.
    fn lookup(&self, name: &str) -> Option<usize> {
        let local = self.scopes.iter().rev().flat_map(|(s, _)| s.iter().rev()).find(|(n, _)| n == name);
        local.or_else(|| self.consts.iter().rev().find(|(n, _)| n == name)).map(|(_, id)| *id)
    }

    fn in_scope(&mut self, end: usize, walk: impl FnOnce(&mut Self)) {
        self.scopes.push((Vec::new(), end));
        walk(self);
        self.scopes.pop();
    }

    fn function(&mut self, f: &Function) {
        self.owner = self.functions.get(&f.name.name).copied();
        self.in_scope(f.span.end, |r| {
            for p in &f.params {
                r.ty(&p.ty);
                let declared = match &p.ty {
                    TypeExpr::Infer(_) => None,
                    ty => Some(print_type(ty)),
                };
                r.define_local(
                    &p.name,
                    if p.is_const { DefKind::ConstParam } else { DefKind::Param },
                    declared,
                    p.span,
                );
            }
            if let Some(t) = &f.ret {
                r.ty(t);
            }
            // The body's statements share the parameters' scope, as in elaboration.
            for s in &f.body.stmts {
                r.stmt(s);
            }
        });
        self.owner = None;
    }

    fn block(&mut self, b: &Block) {
        self.in_scope(b.span.end, |r| b.stmts.iter().for_each(|s| r.stmt(s)));
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let { pattern, ty, value, span } => {
                self.expr(value);
                if let Some(t) = ty {
                    self.ty(t);
                }
                self.pattern(pattern, ty.as_ref().map(print_type), *span);
            }
            Stmt::Assign { target, value, .. } => {
                self.expr(target);
                self.expr(value);
            }
            Stmt::Expr(e) => self.expr(e),
            Stmt::If { cond, then, els, span } => {
                self.expr(cond);
                self.block(then);
                if let Some(e) = els {
                    self.in_scope(span.end, |r| r.stmt(e));
                }
            }
            Stmt::Block(b) => self.block(b),
            Stmt::For { var, start, end, step, body, span } => {
                self.expr(start);
                self.expr(end);
                if let Some((_, e)) = step {
                    self.expr(e);
                }
                self.in_scope(body.span.end, |r| {
                    r.define_local(var, DefKind::LoopVar, None, *span);
                    r.block(body);
                });
            }
            Stmt::Return { value, .. } => {
                if let Some(v) = value {
                    self.expr(v);
                }
            }
            Stmt::While { cond, body, .. } => {
                self.expr(cond);
                self.block(body);
            }
            Stmt::Break(_) | Stmt::Continue(_) => {}
            Stmt::Launch { kernel, args, clauses, .. } => {
                if let Some(&id) = self.functions.get(&kernel.name) {
                    self.refer(kernel.span, Target::Def(id));
                }
                args.iter().for_each(|a| self.expr(&a.value));
                clauses.iter().flat_map(|c| &c.args).for_each(|e| self.expr(e));
            }
        }
    }

    fn pattern(&mut self, p: &Pattern, declared: Option<String>, stmt: Span) {
        match p {
            Pattern::Name(id) => self.define_local(id, DefKind::Let, declared, stmt),
            Pattern::Mut(id) => self.define_local(id, DefKind::LetMut, declared, stmt),
            Pattern::Wildcard(_) => {}
            Pattern::Tuple(items, _) => items.iter().for_each(|i| self.pattern(i, None, stmt)),
        }
    }

    fn ty(&mut self, t: &TypeExpr) {
        match t {
            TypeExpr::Named(id) => self.type_name(id),
            TypeExpr::Tensor { elem, .. } => self.type_name(elem),
            TypeExpr::Fn { params, ret, .. } => {
                params.iter().for_each(|p| self.ty(p));
                self.ty(ret);
            }
            TypeExpr::Infer(_) => {}
        }
    }

    fn type_name(&mut self, id: &Ident) {
        if let Some(s) = Scalar::from_name(&id.name) {
            self.refer(id.span, Target::Type(s));
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Str(_) | ExprKind::Wildcard => {}
            ExprKind::Tuple(items) => items.iter().for_each(|i| self.expr(i)),
            ExprKind::Name(n) => {
                if let Some(target) = self.value_name(n) {
                    self.refer(e.span, target);
                }
            }
            ExprKind::Unary(_, x) => self.expr(x),
            ExprKind::Binary(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Call { callee, args } => {
                if let Some(target) = self.callee(&callee.name) {
                    self.refer(callee.span, target);
                }
                self.args(&callee.name, args);
            }
            ExprKind::Method { receiver, name, args } => {
                self.expr(receiver);
                self.refer(name.span, Target::Method(name.name.clone()));
                self.args(&name.name, args);
            }
            ExprKind::Field { base, name } => {
                self.expr(base);
                self.refer(name.span, Target::Field(name.name.clone()));
            }
            ExprKind::Index { base, index } => {
                self.expr(base);
                index.iter().for_each(|i| self.expr(i));
            }
        }
    }

    fn args(&mut self, callee: &str, args: &[Arg]) {
        for a in args {
            if let Some(n) = &a.name {
                self.refer(n.span, Target::NamedArg { callee: callee.to_string(), name: n.name.clone() });
            }
            self.expr(&a.value);
        }
    }

    /// A name used as a value, in elaboration's order: locals and `const`s, scalar types, the CUDA
    /// index values, helpers and operators passed as functions.
    fn value_name(&self, n: &str) -> Option<Target> {
        if let Some(id) = self.lookup(n) {
            return Some(Target::Def(id));
        }
        if let Some(s) = Scalar::from_name(n) {
            return Some(Target::Type(s));
        }
        if DIM3_NAMES.contains(&n) {
            return Some(Target::Builtin(n.to_string()));
        }
        match self.functions.get(n) {
            Some(&id) if self.index.defs[id].kind == DefKind::Helper => Some(Target::Def(id)),
            _ if builtins::is_operator(n) => Some(Target::Builtin(n.to_string())),
            _ => None,
        }
    }

    /// A called name, in elaboration's order: a local or `const` (a function passed by name), a
    /// function item, a builtin, a scalar type (`f32(x)`).
    fn callee(&self, n: &str) -> Option<Target> {
        if let Some(id) = self.lookup(n).or_else(|| self.functions.get(n).copied()) {
            return Some(Target::Def(id));
        }
        if is_builtin_function(n) {
            return Some(Target::Builtin(n.to_string()));
        }
        Scalar::from_name(n).map(Target::Type)
    }
}

/// Whether `name` is a builtin function (`size`, `assert`, the operators `add`, ...).
pub fn is_builtin_function(name: &str) -> bool {
    builtins::builtin(name).is_some() || builtins::is_operator(name)
}

/// Every builtin function name (the operators included).
pub fn builtin_functions() -> impl Iterator<Item = &'static str> {
    let operators = ["add", "sub", "mul", "div"];
    builtins::function_names().chain(operators.into_iter().filter(|o| builtins::is_operator(o)))
}
