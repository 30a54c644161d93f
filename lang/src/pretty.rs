//! The canonical pretty printer: one way to write every AST as `.cute` source.
//!
//! The contract is that printing then parsing gives back the same AST modulo spans
//! ([`strip_spans`] is that equality), so a formatter, a test generator or a tool that rewrites
//! programs can print without caring about layout. The canonical form: 4-space indentation, one
//! statement a line, a blank line between items, spaces around binary operators and `=`, none
//! inside brackets, layouts in CuTe's own notation (`(4,8):(8,1)`), and parentheses only where
//! precedence or associativity needs them. Comments are not in the AST, so they are not printed.
//!
//! Every AST the parser produces prints to source that parses back. A hand-built AST can hold what
//! no source produces (a negative literal, a non-finite float, an empty tuple, a keyword as an
//! identifier): those are still printed, without panicking, but need not round-trip.
//!
//! Printing recurses to the depth of the AST; [`crate::parse`] bounds that depth.

use crate::ast::*;
use crate::span::Span;

const INDENT: &str = "    ";

/// Prints a whole file in canonical form (ending in a newline unless the file is empty).
pub fn print_file(file: &File) -> String {
    let mut p = Printer { out: String::new(), level: 0 };
    for import in &file.imports {
        p.out.push_str("import ");
        p.string(&import.path);
        p.out.push_str(";\n");
    }
    for (i, item) in file.items.iter().enumerate() {
        if i > 0 || !file.imports.is_empty() {
            p.out.push('\n');
        }
        p.item(item);
    }
    p.out
}

/// Prints one expression in canonical form, with no surrounding parentheses.
pub fn print_expr(expr: &Expr) -> String {
    let mut p = Printer { out: String::new(), level: 0 };
    p.expr(expr, Prec::LOWEST);
    p.out
}

/// Prints one type in canonical form.
pub fn print_type(ty: &TypeExpr) -> String {
    let mut p = Printer { out: String::new(), level: 0 };
    p.ty(ty);
    p.out
}

/// Binding strength, lowest first: the grammar's tiers, then unary operators, then postfix
/// operators and atoms. Every binary tier is left-associative.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Prec(u8);

impl Prec {
    const LOWEST: Prec = Prec(0);
    const UNARY: Prec = Prec(10);
    const POSTFIX: Prec = Prec(11);

    fn of_binary(op: BinOp) -> Prec {
        Prec(match op {
            BinOp::Or => 1,
            BinOp::And => 2,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 3,
            BinOp::BitOr => 4,
            BinOp::BitXor => 5,
            BinOp::BitAnd => 6,
            BinOp::Shl | BinOp::Shr => 7,
            BinOp::Add | BinOp::Sub => 8,
            BinOp::Mul | BinOp::Div | BinOp::Rem => 9,
        })
    }

    /// How strongly an expression binds as printed (a negative literal is printed in parentheses,
    /// so it is an atom).
    fn of(e: &Expr) -> Prec {
        match &e.kind {
            ExprKind::Binary(op, _, _) => Prec::of_binary(*op),
            ExprKind::Unary(..) => Prec::UNARY,
            _ => Prec::POSTFIX,
        }
    }

    fn next(self) -> Prec {
        Prec(self.0 + 1)
    }
}

struct Printer {
    out: String,
    level: usize,
}

impl Printer {
    fn newline(&mut self) {
        self.out.push('\n');
        for _ in 0..self.level {
            self.out.push_str(INDENT);
        }
    }

    fn comma_list<T>(&mut self, items: &[T], sep: &str, mut each: impl FnMut(&mut Self, &T)) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push_str(sep);
            }
            each(self, item);
        }
    }

    fn ident(&mut self, id: &Ident) {
        self.out.push_str(&id.name);
    }

    fn item(&mut self, item: &Item) {
        match item {
            Item::Function(f) => {
                self.out.push_str(match f.kind {
                    FnKind::Kernel => "kernel ",
                    FnKind::Device => "fn ",
                    FnKind::Host => "host ",
                });
                self.ident(&f.name);
                if !f.type_params.is_empty() {
                    self.out.push('<');
                    self.comma_list(&f.type_params, ", ", |p, tp| {
                        p.ident(&tp.name);
                        if let Some(choices) = &tp.choices {
                            p.out.push_str(": ");
                            p.out.push_str(&choices.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(" | "));
                        }
                    });
                    self.out.push('>');
                }
                self.out.push('(');
                self.comma_list(&f.params, ", ", |p, param| {
                    if param.is_const {
                        p.out.push_str("const ");
                    }
                    p.ident(&param.name);
                    if !matches!(param.ty, TypeExpr::Infer(_)) {
                        p.out.push_str(": ");
                        p.ty(&param.ty);
                    }
                });
                self.out.push(')');
                if let Some(ret) = &f.ret {
                    self.out.push_str(" -> ");
                    self.ty(ret);
                }
                for c in &f.clauses {
                    let values: Vec<&str> = c.values.iter().map(|v| v.name.as_str()).collect();
                    self.out.push_str(&format!(" {}({})", c.name.name, values.join(", ")));
                }
                self.out.push(' ');
                self.block(&f.body);
            }
            Item::Const(c) => {
                self.out.push_str("const ");
                self.ident(&c.name);
                if let Some(ty) = &c.ty {
                    self.out.push_str(": ");
                    self.ty(ty);
                }
                self.out.push_str(" = ");
                self.expr(&c.value, Prec::LOWEST);
                self.out.push(';');
            }
        }
        self.out.push('\n');
    }

    fn ty(&mut self, ty: &TypeExpr) {
        match ty {
            TypeExpr::Named(id) => self.ident(id),
            TypeExpr::Infer(_) => {}
            // The grammar accepts any identifier before `<` and before `:` in the alignment and
            // keeps neither, so the canonical words are printed.
            TypeExpr::Tensor { elem, space, layout, align, .. } => {
                self.out.push_str("tensor<");
                self.ident(elem);
                self.out.push_str(", ");
                self.ident(space);
                if let Some(layout) = layout {
                    self.out.push_str(", ");
                    self.layout(layout);
                }
                if let Some((bytes, _)) = align {
                    self.out.push_str(&format!(", align: {bytes}"));
                }
                self.out.push('>');
            }
            TypeExpr::Fn { params, ret, .. } => {
                self.out.push_str("fn(");
                self.comma_list(params, ", ", |p, t| p.ty(t));
                self.out.push_str(") -> ");
                self.ty(ret);
            }
        }
    }

    fn layout(&mut self, layout: &LayoutLit) {
        self.int_tuple(&layout.shape);
        if let Some(stride) = &layout.stride {
            self.out.push(':');
            self.int_tuple(stride);
        }
    }

    /// CuTe's notation: no spaces, so `(4,8):(8,1)` reads as it does in CuTe and in the IR.
    fn int_tuple(&mut self, t: &IntTupleLit) {
        match t {
            IntTupleLit::Int(v, _) => self.out.push_str(&v.to_string()),
            IntTupleLit::Dynamic(_) => self.out.push('?'),
            // The parser records a key other than `div` as a negative divisor for checking to
            // report; any other key reads back as the same, and a negative number would not lex.
            IntTupleLit::DynamicDiv(d, _) if *d < 0 => self.out.push_str("?{key=0}"),
            IntTupleLit::DynamicDiv(d, _) => self.out.push_str(&format!("?{{div={d}}}")),
            IntTupleLit::DynamicDivExpr(e, _) => {
                self.out.push_str("?{div=");
                self.expr(e, Prec::LOWEST);
                self.out.push('}');
            }
            IntTupleLit::Tuple(items, _) => {
                self.out.push('(');
                self.comma_list(items, ",", |p, i| p.int_tuple(i));
                self.out.push(')');
            }
        }
    }

    fn block(&mut self, b: &Block) {
        if b.stmts.is_empty() {
            self.out.push_str("{}");
            return;
        }
        self.out.push('{');
        self.level += 1;
        for s in &b.stmts {
            self.newline();
            self.stmt(s);
        }
        self.level -= 1;
        self.newline();
        self.out.push('}');
    }

    fn pattern(&mut self, pat: &Pattern) {
        match pat {
            Pattern::Name(id) => self.ident(id),
            Pattern::Mut(id) => {
                self.out.push_str("mut ");
                self.ident(id);
            }
            Pattern::Wildcard(_) => self.out.push('_'),
            // A pattern in parentheses is always a tuple, even of one: `(a)` needs no comma.
            Pattern::Tuple(items, _) => {
                self.out.push('(');
                self.comma_list(items, ", ", |p, i| p.pattern(i));
                self.out.push(')');
            }
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let { pattern, ty, value, .. } => {
                self.out.push_str("let ");
                self.pattern(pattern);
                if let Some(ty) = ty {
                    // `T = v`, never `T=v`: `tensor<...>=` would lex as `>=`.
                    self.out.push_str(": ");
                    self.ty(ty);
                }
                self.out.push_str(" = ");
                self.expr(value, Prec::LOWEST);
                self.out.push(';');
            }
            Stmt::Assign { target, value, .. } => {
                self.expr(target, Prec::LOWEST);
                self.out.push_str(" = ");
                self.expr(value, Prec::LOWEST);
                self.out.push(';');
            }
            Stmt::Expr(e) => {
                self.expr(e, Prec::LOWEST);
                self.out.push(';');
            }
            Stmt::If { cond, then, els, .. } => {
                self.out.push_str("if ");
                self.expr(cond, Prec::LOWEST);
                self.out.push(' ');
                self.block(then);
                if let Some(els) = els {
                    self.out.push_str(" else ");
                    match &**els {
                        Stmt::If { .. } => self.stmt(els),
                        Stmt::Block(b) => self.block(b),
                        // The parser only puts an `if` or a block here; anything else is wrapped
                        // in a block so the output still parses.
                        other => {
                            let b = Block { stmts: vec![other.clone()], span: Span::default() };
                            self.block(&b);
                        }
                    }
                }
            }
            // Only an `else` branch holds a bare block; printed on its own it is a block.
            Stmt::Block(b) => self.block(b),
            Stmt::For { var, start, end, step, body, .. } => {
                self.out.push_str("for ");
                self.ident(var);
                self.out.push_str(" in ");
                self.expr(start, Prec::LOWEST);
                self.out.push_str("..");
                self.expr(end, Prec::LOWEST);
                if let Some((word, e)) = step {
                    self.out.push(' ');
                    self.ident(word);
                    self.out.push(' ');
                    self.expr(e, Prec::LOWEST);
                }
                self.out.push(' ');
                self.block(body);
            }
            Stmt::While { cond, body, .. } => {
                self.out.push_str("while ");
                self.expr(cond, Prec::LOWEST);
                self.out.push(' ');
                self.block(body);
            }
            Stmt::Break(_) => self.out.push_str("break;"),
            Stmt::Continue(_) => self.out.push_str("continue;"),
            Stmt::Return { value, .. } => {
                self.out.push_str("return");
                if let Some(v) = value {
                    self.out.push(' ');
                    self.expr(v, Prec::LOWEST);
                }
                self.out.push(';');
            }
            Stmt::Launch { kernel, args, clauses, .. } => {
                self.out.push_str("launch ");
                self.ident(kernel);
                self.args(args);
                for c in clauses {
                    self.out.push(' ');
                    self.ident(&c.name);
                    self.out.push('(');
                    self.comma_list(&c.args, ", ", |p, e| p.expr(e, Prec::LOWEST));
                    self.out.push(')');
                }
                self.out.push(';');
            }
        }
    }

    fn args(&mut self, args: &[Arg]) {
        self.out.push('(');
        self.comma_list(args, ", ", |p, a| {
            if let Some(name) = &a.name {
                p.ident(name);
                p.out.push_str(": ");
            }
            p.expr(&a.value, Prec::LOWEST);
        });
        self.out.push(')');
    }

    /// Prints `e` where the context needs at least binding strength `min`, parenthesizing if it
    /// binds less.
    fn expr(&mut self, e: &Expr, min: Prec) {
        if Prec::of(e) < min {
            self.out.push('(');
            self.expr(e, Prec::LOWEST);
            self.out.push(')');
            return;
        }
        match &e.kind {
            ExprKind::Int(v) if *v < 0 => self.out.push_str(&format!("({v})")),
            ExprKind::Int(v) => self.out.push_str(&v.to_string()),
            ExprKind::Float(v) => self.float(*v),
            ExprKind::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            ExprKind::Str(s) => self.string(s),
            ExprKind::Name(n) => self.out.push_str(n),
            ExprKind::Wildcard => self.out.push('_'),
            ExprKind::Tuple(items) => {
                self.out.push('(');
                self.comma_list(items, ", ", |p, i| p.expr(i, Prec::LOWEST));
                // `(a)` is just `a`: a one-element tuple needs its trailing comma.
                if items.len() == 1 {
                    self.out.push(',');
                }
                self.out.push(')');
            }
            ExprKind::Unary(op, inner) => {
                self.out.push(match op {
                    UnOp::Neg => '-',
                    UnOp::Not => '!',
                });
                self.expr(inner, Prec::UNARY);
            }
            ExprKind::Binary(op, a, b) => {
                // Left-associative: the left operand may be of the same tier, the right may not.
                let p = Prec::of_binary(*op);
                self.expr(a, p);
                self.out.push(' ');
                self.out.push_str(op.symbol());
                self.out.push(' ');
                self.expr(b, p.next());
            }
            ExprKind::Call { callee, args } => {
                self.ident(callee);
                self.args(args);
            }
            ExprKind::Method { receiver, name, args } => {
                self.expr(receiver, Prec::POSTFIX);
                self.out.push('.');
                self.ident(name);
                self.args(args);
            }
            ExprKind::Field { base, name } => {
                self.expr(base, Prec::POSTFIX);
                self.out.push('.');
                self.ident(name);
            }
            ExprKind::Index { base, index } => {
                self.expr(base, Prec::POSTFIX);
                self.out.push('[');
                self.comma_list(index, ", ", |p, i| p.expr(i, Prec::LOWEST));
                self.out.push(']');
            }
        }
    }

    /// The shortest digits that read back as the same `f64` (Rust's `Debug` form: `1.0`, `0.1`,
    /// `1e20`, `1e-7`), all of which the lexer reads as floats.
    fn float(&mut self, v: f64) {
        if v.is_sign_negative() {
            self.out.push_str(&format!("({v:?})"));
        } else {
            self.out.push_str(&format!("{v:?}"));
        }
    }

    /// A string literal with exactly the escapes the lexer reads; every other character is
    /// printed as itself (a raw newline would end the literal, so it is always escaped).
    fn string(&mut self, s: &str) {
        self.out.push('"');
        for c in s.chars() {
            match c {
                '\n' => self.out.push_str("\\n"),
                '\t' => self.out.push_str("\\t"),
                '\\' => self.out.push_str("\\\\"),
                '"' => self.out.push_str("\\\""),
                '\0' => self.out.push_str("\\0"),
                c => self.out.push(c),
            }
        }
        self.out.push('"');
    }
}

/// A copy of `file` with every span zeroed, so two parses of differently laid out source compare
/// equal exactly when they mean the same program.
pub fn strip_spans(file: &File) -> File {
    File {
        imports: file
            .imports
            .iter()
            .map(|i| Import { path: i.path.clone(), path_span: NO_SPAN, span: NO_SPAN })
            .collect(),
        items: file.items.iter().map(strip_item).collect(),
        imported: file.imported.iter().map(strip_item).collect(),
        tunes: Vec::new(),
    }
}

/// [`strip_spans`] for one expression.
pub fn strip_expr_spans(e: &Expr) -> Expr {
    strip_expr(e)
}

const NO_SPAN: Span = Span::new(0, 0);

fn strip_ident(id: &Ident) -> Ident {
    Ident { name: id.name.clone(), span: NO_SPAN }
}

fn strip_item(item: &Item) -> Item {
    match item {
        Item::Function(f) => Item::Function(Function {
            kind: f.kind,
            name: strip_ident(&f.name),
            type_params: f
                .type_params
                .iter()
                .map(|t| TypeParam {
                    name: strip_ident(&t.name),
                    choices: t.choices.as_ref().map(|c| c.iter().map(strip_ident).collect()),
                    span: NO_SPAN,
                })
                .collect(),
            params: f
                .params
                .iter()
                .map(|p| Param {
                    is_const: p.is_const,
                    name: strip_ident(&p.name),
                    ty: strip_type(&p.ty),
                    span: NO_SPAN,
                })
                .collect(),
            ret: f.ret.as_ref().map(strip_type),
            clauses: f
                .clauses
                .iter()
                .map(|c| FnClause {
                    name: strip_ident(&c.name),
                    values: c.values.iter().map(strip_ident).collect(),
                    span: NO_SPAN,
                })
                .collect(),
            body: strip_block(&f.body),
            span: NO_SPAN,
        }),
        Item::Const(c) => Item::Const(ConstItem {
            name: strip_ident(&c.name),
            ty: c.ty.as_ref().map(strip_type),
            value: strip_expr(&c.value),
            span: NO_SPAN,
        }),
    }
}

fn strip_type(ty: &TypeExpr) -> TypeExpr {
    match ty {
        TypeExpr::Named(id) => TypeExpr::Named(strip_ident(id)),
        TypeExpr::Infer(_) => TypeExpr::Infer(NO_SPAN),
        TypeExpr::Tensor { elem, space, layout, align, .. } => TypeExpr::Tensor {
            elem: strip_ident(elem),
            space: strip_ident(space),
            layout: layout.as_ref().map(|l| LayoutLit {
                shape: strip_int_tuple(&l.shape),
                stride: l.stride.as_ref().map(strip_int_tuple),
                span: NO_SPAN,
            }),
            align: align.map(|(v, _)| (v, NO_SPAN)),
            span: NO_SPAN,
        },
        TypeExpr::Fn { params, ret, .. } => TypeExpr::Fn {
            params: params.iter().map(strip_type).collect(),
            ret: Box::new(strip_type(ret)),
            span: NO_SPAN,
        },
    }
}

fn strip_int_tuple(t: &IntTupleLit) -> IntTupleLit {
    match t {
        IntTupleLit::Int(v, _) => IntTupleLit::Int(*v, NO_SPAN),
        IntTupleLit::Dynamic(_) => IntTupleLit::Dynamic(NO_SPAN),
        IntTupleLit::DynamicDiv(d, _) => IntTupleLit::DynamicDiv(*d, NO_SPAN),
        IntTupleLit::DynamicDivExpr(e, _) => IntTupleLit::DynamicDivExpr(Box::new(strip_expr(e)), NO_SPAN),
        IntTupleLit::Tuple(items, _) => IntTupleLit::Tuple(items.iter().map(strip_int_tuple).collect(), NO_SPAN),
    }
}

fn strip_block(b: &Block) -> Block {
    Block { stmts: b.stmts.iter().map(strip_stmt).collect(), span: NO_SPAN }
}

fn strip_pattern(p: &Pattern) -> Pattern {
    match p {
        Pattern::Name(id) => Pattern::Name(strip_ident(id)),
        Pattern::Mut(id) => Pattern::Mut(strip_ident(id)),
        Pattern::Wildcard(_) => Pattern::Wildcard(NO_SPAN),
        Pattern::Tuple(items, _) => Pattern::Tuple(items.iter().map(strip_pattern).collect(), NO_SPAN),
    }
}

fn strip_stmt(s: &Stmt) -> Stmt {
    match s {
        Stmt::Let { pattern, ty, value, .. } => Stmt::Let {
            pattern: strip_pattern(pattern),
            ty: ty.as_ref().map(strip_type),
            value: strip_expr(value),
            span: NO_SPAN,
        },
        Stmt::Assign { target, value, .. } => {
            Stmt::Assign { target: strip_expr(target), value: strip_expr(value), span: NO_SPAN }
        }
        Stmt::Expr(e) => Stmt::Expr(strip_expr(e)),
        Stmt::If { cond, then, els, .. } => Stmt::If {
            cond: strip_expr(cond),
            then: strip_block(then),
            els: els.as_ref().map(|e| Box::new(strip_stmt(e))),
            span: NO_SPAN,
        },
        Stmt::Block(b) => Stmt::Block(strip_block(b)),
        Stmt::For { var, start, end, step, body, .. } => Stmt::For {
            var: strip_ident(var),
            start: strip_expr(start),
            end: strip_expr(end),
            step: step.as_ref().map(|(w, e)| (strip_ident(w), strip_expr(e))),
            body: strip_block(body),
            span: NO_SPAN,
        },
        Stmt::Return { value, .. } => Stmt::Return { value: value.as_ref().map(strip_expr), span: NO_SPAN },
        Stmt::While { cond, body, .. } => {
            Stmt::While { cond: strip_expr(cond), body: strip_block(body), span: NO_SPAN }
        }
        Stmt::Break(_) => Stmt::Break(NO_SPAN),
        Stmt::Continue(_) => Stmt::Continue(NO_SPAN),
        Stmt::Launch { kernel, args, clauses, .. } => Stmt::Launch {
            kernel: strip_ident(kernel),
            args: args.iter().map(strip_arg).collect(),
            clauses: clauses
                .iter()
                .map(|c| LaunchClause {
                    name: strip_ident(&c.name),
                    args: c.args.iter().map(strip_expr).collect(),
                    span: NO_SPAN,
                })
                .collect(),
            span: NO_SPAN,
        },
    }
}

fn strip_arg(a: &Arg) -> Arg {
    Arg { name: a.name.as_ref().map(strip_ident), value: strip_expr(&a.value) }
}

fn strip_expr(e: &Expr) -> Expr {
    let kind = match &e.kind {
        ExprKind::Int(v) => ExprKind::Int(*v),
        ExprKind::Float(v) => ExprKind::Float(*v),
        ExprKind::Bool(b) => ExprKind::Bool(*b),
        ExprKind::Str(s) => ExprKind::Str(s.clone()),
        ExprKind::Name(n) => ExprKind::Name(n.clone()),
        ExprKind::Wildcard => ExprKind::Wildcard,
        ExprKind::Tuple(items) => ExprKind::Tuple(items.iter().map(strip_expr).collect()),
        ExprKind::Unary(op, inner) => ExprKind::Unary(*op, Box::new(strip_expr(inner))),
        ExprKind::Binary(op, a, b) => ExprKind::Binary(*op, Box::new(strip_expr(a)), Box::new(strip_expr(b))),
        ExprKind::Call { callee, args } => {
            ExprKind::Call { callee: strip_ident(callee), args: args.iter().map(strip_arg).collect() }
        }
        ExprKind::Method { receiver, name, args } => ExprKind::Method {
            receiver: Box::new(strip_expr(receiver)),
            name: strip_ident(name),
            args: args.iter().map(strip_arg).collect(),
        },
        ExprKind::Field { base, name } => ExprKind::Field { base: Box::new(strip_expr(base)), name: strip_ident(name) },
        ExprKind::Index { base, index } => {
            ExprKind::Index { base: Box::new(strip_expr(base)), index: index.iter().map(strip_expr).collect() }
        }
    };
    Expr { kind, span: NO_SPAN }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(src: &str) -> String {
        match crate::parse(src) {
            Ok(f) => print_file(&f),
            Err(d) => panic!("{}: {src}", d.message),
        }
    }

    #[test]
    fn parentheses_only_where_needed() {
        let src = "const A = (1 + 2) * 3 - (4 - 5) - (6 * 7) + -(8 + 9) + ((a.b)).c + (x < y) == (z > w);";
        assert_eq!(canon(src), "const A = (1 + 2) * 3 - (4 - 5) - 6 * 7 + -(8 + 9) + a.b.c + (x < y) == (z > w);\n");
    }

    #[test]
    fn literals_print_as_the_lexer_reads_them() {
        assert_eq!(
            canon("const A = 0x1F + 1_000 + 1.5e3 + 1e-7 + 2.0;"),
            "const A = 31 + 1000 + 1500.0 + 1e-7 + 2.0;\n"
        );
        assert_eq!(canon(r#"const S = "a\"b\\c\n\t\0";"#), "const S = \"a\\\"b\\\\c\\n\\t\\0\";\n");
    }

    #[test]
    fn tuples_keep_their_comma() {
        assert_eq!(canon("const T = f((1,), (1, 2,), (3));"), "const T = f((1,), (1, 2), 3);\n");
    }
}
