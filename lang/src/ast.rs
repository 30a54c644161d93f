//! The abstract syntax tree: what the parser produces, with a span on every node.

use crate::span::Span;

#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct File {
    pub items: Vec<Function>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FnKind {
    /// A device entry point: one cubin kernel.
    Kernel,
    /// A device helper, inlined at each call.
    Device,
    /// Host code: tiles tensors and launches kernels.
    Host,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub kind: FnKind,
    pub name: Ident,
    pub params: Vec<Param>,
    pub ret: Option<TypeExpr>,
    pub body: Block,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: Ident,
    pub ty: TypeExpr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeExpr {
    /// A scalar type name such as `f32` or `i32`.
    Named(Ident),
    /// `tensor<elem, space, layout[, align: N]>`.
    Tensor { elem: Ident, space: Ident, layout: LayoutLit, align: Option<(i64, Span)>, span: Span },
}

impl TypeExpr {
    pub fn span(&self) -> Span {
        match self {
            TypeExpr::Named(id) => id.span,
            TypeExpr::Tensor { span, .. } => *span,
        }
    }
}

/// A layout written in CuTe notation, `shape:stride`; `?` marks a dynamic entry.
#[derive(Clone, Debug, PartialEq)]
pub struct LayoutLit {
    pub shape: IntTupleLit,
    pub stride: Option<IntTupleLit>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum IntTupleLit {
    Int(i64, Span),
    Dynamic(Span),
    Tuple(Vec<IntTupleLit>, Span),
}

impl IntTupleLit {
    pub fn span(&self) -> Span {
        match self {
            IntTupleLit::Int(_, s) | IntTupleLit::Dynamic(s) | IntTupleLit::Tuple(_, s) => *s,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    Let { name: Ident, ty: Option<TypeExpr>, value: Expr, span: Span },
    Assign { target: Expr, value: Expr, span: Span },
    Expr(Expr),
    If { cond: Expr, then: Block, els: Option<Box<Stmt>>, span: Span },
    /// An `else` branch that is a plain block (an `else if` is a nested `If`).
    Block(Block),
    For { var: Ident, start: Expr, end: Expr, body: Block, span: Span },
    Return { value: Option<Expr>, span: Span },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "&&",
            BinOp::Or => "||",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(self, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    Name(String),
    /// `_`: a whole mode in a slice (CuTe's `None`).
    Wildcard,
    Tuple(Vec<Expr>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Call { callee: Ident, args: Vec<Arg> },
    Method { receiver: Box<Expr>, name: Ident, args: Vec<Arg> },
    Field { base: Box<Expr>, name: Ident },
    Index { base: Box<Expr>, index: Vec<Expr> },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    pub name: Option<Ident>,
    pub value: Expr,
}
