//! The abstract syntax tree: what the parser produces, with a span on every node.

use crate::span::Span;

#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct File {
    /// `import "path.cute";` lines, which come before the items.
    pub imports: Vec<Import>,
    pub items: Vec<Item>,
    /// The items of every file imported, directly or not, in dependency order (a file's before
    /// its importer's): filled by [`crate::imports::load`], empty from [`crate::parse`]. They are
    /// definitions only: a build's host functions and standalone kernels are those of `items`.
    pub imported: Vec<Item>,
    /// `tune` blocks (docs/language.md, "Tuning"): read by `cutec tune` and `--tuning`, no part of
    /// the program otherwise.
    pub tunes: Vec<TuneBlock>,
}

/// `import "path.cute";`: every top-level item of that file is visible in this one.
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    /// The path as written, relative to the importing file or a search directory.
    pub path: String,
    /// The string literal.
    pub path_span: Span,
    /// The whole statement.
    pub span: Span,
}

/// `tune HOST(M, N) { const NAME in [V, ...]; ... args(ARG, ...); }`: the `const` items a host
/// function's speed depends on, their candidate values, and how to make its arguments for a shape.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneBlock {
    pub host: Ident,
    /// The shape's variables, as `--shapes` gives them (`M, N` for `--shapes 1024x4096`).
    pub vars: Vec<Ident>,
    pub consts: Vec<TuneConst>,
    /// The `args(...)` lines (exactly one is valid): the word and the arguments.
    pub args: Vec<(Ident, Vec<Expr>)>,
    pub span: Span,
}

/// `const NAME in [V, ...];` of a `tune` block.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneConst {
    pub name: Ident,
    pub values: Vec<Expr>,
    pub span: Span,
}

/// A top-level entry as parsed: an item or a `tune` block.
pub enum TopLevel {
    Item(Box<Item>),
    Tune(TuneBlock),
}

impl File {
    /// The file of its imports and its top-level entries in order.
    pub fn of(imports: Vec<Import>, tops: Vec<TopLevel>) -> File {
        let (mut items, mut tunes) = (Vec::new(), Vec::new());
        for t in tops {
            match t {
                TopLevel::Item(i) => items.push(*i),
                TopLevel::Tune(t) => tunes.push(t),
            }
        }
        File { imports, items, tunes, imported: Vec::new() }
    }

    /// The items imported, then the file's own: every definition the file can use.
    pub fn all_items(&self) -> impl Iterator<Item = &Item> {
        self.imported.iter().chain(&self.items)
    }

    /// The file's own functions (not those imported).
    pub fn functions(&self) -> impl Iterator<Item = &Function> {
        self.items.iter().filter_map(|i| match i {
            Item::Function(f) => Some(f),
            Item::Const(_) => None,
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Function(Function),
    /// `const NAME = expr;`: a compile-time value visible in every function of the file.
    Const(ConstItem),
}

#[derive(Clone, Debug, PartialEq)]
pub struct ConstItem {
    pub name: Ident,
    pub ty: Option<TypeExpr>,
    pub value: Expr,
    pub span: Span,
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
    /// `<T, U: f16 | f32>`: element-type parameters, bound per launch (kernels) or compiled for
    /// each listed type (host functions).
    pub type_params: Vec<TypeParam>,
    pub params: Vec<Param>,
    pub ret: Option<TypeExpr>,
    /// `index(i64)`, `math(ftz, approx)` between the signature and the body (kernels only).
    pub clauses: Vec<FnClause>,
    pub body: Block,
    pub span: Span,
}

/// A clause on a function's signature, `NAME(VALUE, ...)`: `index(i64)` asks for 64-bit index
/// math, `math(ftz, approx, contract)` for fast floating-point math.
#[derive(Clone, Debug, PartialEq)]
pub struct FnClause {
    pub name: Ident,
    pub values: Vec<Ident>,
    pub span: Span,
}

/// A type parameter, `T` or `T: f16 | f32 | bf16`: an element type bound by each launch (deduced from
/// the tensors passed) or, for a host function, each type of the list in turn.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeParam {
    pub name: Ident,
    /// The element types it may be (`: f16 | f32`); `None` for any.
    pub choices: Option<Vec<Ident>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// A `const` parameter is known at compile time (CuTe DSL's `Constexpr`): every launch supplies
    /// a static value and gets its own instance of the kernel.
    pub is_const: bool,
    pub name: Ident,
    pub ty: TypeExpr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeExpr {
    /// A named type: a scalar (`f32`, `i32`, ...) or `int`, `layout`, `shape`, `tiler`, `tiled_copy`, ...
    Named(Ident),
    /// `tensor<elem, space[, layout][, align: N]>`; without a layout the parameter takes the layout of
    /// whatever tensor each launch passes (the kernel is instantiated per layout, as CuTe DSL's JIT is).
    Tensor { elem: Ident, space: Ident, layout: Option<LayoutLit>, align: Option<(i64, Span)>, span: Span },
    /// `fn(T, U) -> R`: the type of a function passed as a `const` parameter.
    Fn { params: Vec<TypeExpr>, ret: Box<TypeExpr>, span: Span },
    /// No type written (a `fn` helper's parameter): it takes the type of its argument.
    Infer(Span),
}

impl TypeExpr {
    pub fn span(&self) -> Span {
        match self {
            TypeExpr::Named(id) => id.span,
            TypeExpr::Tensor { span, .. } | TypeExpr::Fn { span, .. } | TypeExpr::Infer(span) => *span,
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
    /// `?{div=N}`: dynamic, and known to be a multiple of N (CuTe's divisibility).
    DynamicDiv(i64, Span),
    /// `?{div=EXPR}` with a compile-time expression that is not a literal (`16 / sizeof(T)`),
    /// evaluated when the parameter's type is resolved (per instance).
    DynamicDivExpr(Box<Expr>, Span),
}

impl IntTupleLit {
    pub fn span(&self) -> Span {
        match self {
            IntTupleLit::Int(_, s)
            | IntTupleLit::Dynamic(s)
            | IntTupleLit::Tuple(_, s)
            | IntTupleLit::DynamicDiv(_, s)
            | IntTupleLit::DynamicDivExpr(_, s) => *s,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

/// The left side of a `let`: a name, `_`, or a tuple of patterns (`let (tiler, tv) = ...`).
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    Name(Ident),
    /// `let mut x = ...`: a variable that assignments (`x = ...`, `x += ...`) may change.
    Mut(Ident),
    Wildcard(Span),
    Tuple(Vec<Pattern>, Span),
}

impl Pattern {
    pub fn span(&self) -> Span {
        match self {
            Pattern::Name(id) | Pattern::Mut(id) => id.span,
            Pattern::Wildcard(s) | Pattern::Tuple(_, s) => *s,
        }
    }
}

/// One clause of a `launch`: `grid(x, y, z)`, `block(x, y, z)`, `smem(bytes)` or `stream(s)`.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchClause {
    pub name: Ident,
    pub args: Vec<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    Let {
        pattern: Pattern,
        ty: Option<TypeExpr>,
        value: Expr,
        span: Span,
    },
    Assign {
        target: Expr,
        value: Expr,
        span: Span,
    },
    Expr(Expr),
    If {
        cond: Expr,
        then: Block,
        els: Option<Box<Stmt>>,
        span: Span,
    },
    /// An `else` branch that is a plain block (an `else if` is a nested `If`).
    Block(Block),
    For {
        var: Ident,
        start: Expr,
        end: Expr,
        step: Option<(Ident, Expr)>,
        body: Block,
        span: Span,
    },
    /// `return [EXPR];`, anywhere in a kernel or `fn` (docs/language.md §6).
    Return {
        value: Option<Expr>,
        span: Span,
    },
    /// `while COND { ... }`: a run-time loop (kernels only).
    While {
        cond: Expr,
        body: Block,
        span: Span,
    },
    /// `break;`: leaves the innermost `for` or `while`.
    Break(Span),
    /// `continue;`: goes on with the next trip of the innermost `for` or `while`.
    Continue(Span),
    /// `launch kernel(args) grid(...) block(...) [smem(...)] [stream(...)];` in a host function.
    Launch {
        kernel: Ident,
        args: Vec<Arg>,
        clauses: Vec<LaunchClause>,
        span: Span,
    },
}

impl Stmt {
    pub fn span(&self) -> Span {
        match self {
            Stmt::Let { span, .. }
            | Stmt::Assign { span, .. }
            | Stmt::If { span, .. }
            | Stmt::For { span, .. }
            | Stmt::Return { span, .. }
            | Stmt::While { span, .. }
            | Stmt::Launch { span, .. }
            | Stmt::Break(span)
            | Stmt::Continue(span) => *span,
            Stmt::Expr(e) => e.span,
            Stmt::Block(b) => b.span,
        }
    }
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
    Call {
        callee: Ident,
        args: Vec<Arg>,
    },
    Method {
        receiver: Box<Expr>,
        name: Ident,
        args: Vec<Arg>,
    },
    Field {
        base: Box<Expr>,
        name: Ident,
    },
    Index {
        base: Box<Expr>,
        index: Vec<Expr>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    pub name: Option<Ident>,
    pub value: Expr,
}
