//! The `eval` expression language: CuTe notation plus calls of the algebra's
//! operations, e.g. `composition((6,2):(8,2), (4,3):(3,1))`.
//!
//! Grammar (docs/layout-algebra.md has the full description):
//!
//! ```text
//! expr    := term [':' term]                 shape ':' stride makes a layout
//!          | swizzle 'o' term 'o' expr       a composed layout S<B,M,S> o off o L
//! term    := INT | '_' INT | '_' | dyn | '(' [expr {',' expr}] ')'
//!          | '<' expr {',' expr} '>' | swizzle | NAME '(' [expr {',' expr}] ')'
//! dyn     := '?' [NAME] ['{' 'div' '=' INT '}']
//! swizzle := 'S' '<' INT ',' INT ',' INT '>'      ('Sw<...>', CuTe C++'s spelling, too)
//! ```
//!
//! A swizzle is also made by the calls `make_swizzle(b, m, s)` (CuTe DSL) or
//! `Swizzle(b, m, s)`, and a composed layout by
//! `make_composed_layout(swizzle, offset, layout)` or
//! `composition(swizzle, layout)`.
//!
//! `_3` is the static 3 (CuTe C++ prints statics that way); `_` alone is the
//! underscore (keep this mode). Each `?` is a fresh dynamic value; `?n`
//! (no space between) names one, so `(?n,4):(1,?n)` uses the same value twice.

mod operations;

use crate::error::{Error, Result};
use crate::int::Int;
use crate::int_tuple::IntTuple;
use crate::layout::{crd2idx, idx2crd, idx2crd_strided, Layout};
use crate::mma::{MmaAtom, MmaOperand, TiledMma};
use crate::ops::*;
use crate::swizzle::{ComposedLayout, Swizzle};
use crate::tiler::Tiler;
use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

/// A value of the expression language.
#[derive(Clone, PartialEq, Debug)]
pub enum Value {
    Int(Int),
    Tuple(Vec<Value>),
    Layout(Layout),
    /// `<T0,T1,...>`
    Tiler(Vec<Value>),
    Swizzle(Swizzle),
    Composed(ComposedLayout),
    Under,
    /// A sliced layout and the offset of its origin.
    Sliced(Layout, Int),
    /// A word: an element type (`bf16`, `f32`, ...), an atom's CuTe name, or a
    /// `"quoted string"`; what `make_mma_atom` takes.
    Name(String),
    /// `make_mma_atom(...)`: one warp-wide tensor-core instruction.
    MmaAtom(&'static MmaAtom),
    /// `make_tiled_mma(...)`: an atom over a grid of warps and a tile.
    TiledMma(TiledMma),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, v: &[Value], open: &str, close: &str| -> fmt::Result {
            write!(f, "{open}")?;
            for (k, x) in v.iter().enumerate() {
                if k > 0 {
                    write!(f, ",")?;
                }
                write!(f, "{x}")?;
            }
            write!(f, "{close}")
        };
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Tuple(v) => list(f, v, "(", ")"),
            Value::Tiler(v) => list(f, v, "<", ">"),
            Value::Layout(l) => write!(f, "{l}"),
            Value::Swizzle(s) => write!(f, "{s}"),
            Value::Composed(c) => write!(f, "{c}"),
            Value::Under => write!(f, "_"),
            Value::Sliced(l, o) if l.has_basis_strides() || o.has_basis() => {
                // A counting (identity) tensor, printed as CuTe prints it:
                // `ArithTuple(0,0) o (4,8):(1@0,1@1)`.
                match o.to_arith_tuple(&l.basis_paths()) {
                    Ok(t) => write!(f, "ArithTuple{t} o {l}"),
                    Err(_) => write!(f, "ArithTuple({o}) o {l}"),
                }
            }
            Value::Sliced(l, o) => write!(f, "{l} offset={o}"),
            Value::Name(n) => write!(f, "{n}"),
            Value::MmaAtom(a) => write!(f, "{a}"),
            Value::TiledMma(t) => write!(f, "{t}"),
        }
    }
}

impl Value {
    fn kind(&self) -> &'static str {
        match self {
            Value::Int(_) => "an integer",
            Value::Tuple(_) => "a tuple",
            Value::Layout(_) => "a layout",
            Value::Tiler(_) => "a tiler",
            Value::Swizzle(_) => "a swizzle",
            Value::Composed(_) => "a composed layout",
            Value::Under => "_",
            Value::Sliced(..) => "a sliced layout",
            Value::Name(_) => "a name",
            Value::MmaAtom(_) => "an MMA atom",
            Value::TiledMma(_) => "a tiled MMA",
        }
    }

    pub fn to_int_tuple(&self) -> Option<IntTuple> {
        match self {
            Value::Int(i) => Some(IntTuple::Int(i.clone())),
            Value::Tuple(v) => v.iter().map(|x| x.to_int_tuple()).collect::<Option<Vec<_>>>().map(IntTuple::Tuple),
            _ => None,
        }
    }

    /// A layout; an integer n or a shape stands for its compact column-major
    /// layout (as `make_layout(shape)`).
    pub fn to_layout(&self) -> Option<Layout> {
        match self {
            Value::Layout(l) => Some(l.clone()),
            Value::Sliced(l, _) => Some(l.clone()),
            _ => Layout::col_major(self.to_int_tuple()?).ok(),
        }
    }

    pub fn to_tiler(&self) -> Option<Tiler> {
        match self {
            Value::Layout(l) => Some(Tiler::Layout(l.clone())),
            Value::Under => Some(Tiler::Skip),
            Value::Int(_) => Some(Tiler::Shape(self.to_int_tuple()?)),
            Value::Tuple(v) => match self.to_int_tuple() {
                Some(t) => Some(Tiler::Shape(t)),
                None => v.iter().map(|x| x.to_tiler()).collect::<Option<Vec<_>>>().map(Tiler::Tuple),
            },
            Value::Tiler(v) => v.iter().map(|x| x.to_tiler()).collect::<Option<Vec<_>>>().map(Tiler::Tuple),
            _ => None,
        }
    }

    pub fn to_crd(&self) -> Option<Crd> {
        match self {
            Value::Int(i) => Some(Crd::Int(i.clone())),
            Value::Under => Some(Crd::Under),
            Value::Tuple(v) => v.iter().map(|x| x.to_crd()).collect::<Option<Vec<_>>>().map(Crd::Tuple),
            _ => None,
        }
    }
}

fn tiler_value(t: &Tiler) -> Value {
    match t {
        Tiler::Layout(l) => Value::Layout(l.clone()),
        Tiler::Shape(s) => int_tuple_value(s),
        Tiler::Skip => Value::Under,
        Tiler::Tuple(v) => Value::Tiler(v.iter().map(tiler_value).collect()),
    }
}

pub fn int_tuple_value(t: &IntTuple) -> Value {
    match t {
        IntTuple::Int(i) => Value::Int(i.clone()),
        IntTuple::Tuple(v) => Value::Tuple(v.iter().map(int_tuple_value).collect()),
    }
}

// ---------------------------------------------------------------- lexer

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(i64),
    Name(String),
    Str(String),
    Sym(char),
}

fn lex(src: &str) -> Result<Vec<(Tok, usize)>> {
    let b: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || (c == '-' && i + 1 < b.len() && b[i + 1].is_ascii_digit()) {
            let start = i;
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let text: String = b[start..i].iter().collect();
            let v = text.parse::<i64>().map_err(|_| {
                Error::new(
                    "parse",
                    format!("integer {text} at column {} does not fit the 64-bit index type", start + 1),
                )
            })?;
            out.push((Tok::Int(v), start));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_' || b[i] == '.') {
                i += 1;
            }
            let text: String = b[start..i].iter().collect();
            // `_3`: CuTe C++'s spelling of the static 3.
            if let Some(num) = text.strip_prefix('_').filter(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()))
            {
                let v = num
                    .parse::<i64>()
                    .map_err(|_| Error::new("parse", format!("integer {text} does not fit the 64-bit index type")))?;
                out.push((Tok::Int(v), start));
            } else {
                out.push((Tok::Name(text), start));
            }
        } else if c == '"' {
            // A quoted word, e.g. an element type "bf16" (CuTe DSL passes types, not strings).
            let start = i;
            i += 1;
            while i < b.len() && b[i] != '"' {
                i += 1;
            }
            if i == b.len() {
                return Err(Error::new("parse", format!("unterminated string starting at column {}", start + 1)));
            }
            out.push((Tok::Str(b[start + 1..i].iter().collect()), start));
            i += 1;
        } else if "()<>,:?{}=[]@".contains(c) {
            out.push((Tok::Sym(c), i));
            i += 1;
        } else {
            return Err(Error::new("parse", format!("unexpected character '{c}' at column {}", i + 1)));
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------- parser

#[derive(Clone, Debug)]
enum Ast {
    Int(Int),
    Under,
    Tuple(Vec<Ast>),
    Angle(Vec<Ast>),
    Layout(Box<Ast>, Box<Ast>),
    Swizzle(i64, i64, i64),
    Composed(Box<Ast>, Box<Ast>, Box<Ast>),
    /// A call: name, arguments (each with its `label:` if it has one, as in `.cute`'s
    /// `shape: (16,8,16)`), column.
    Call(String, Vec<(Option<String>, Ast)>, usize),
    Name(String),
}

/// How deep brackets, calls and composed layouts may nest before parsing is refused, as the
/// `.cute` parser bounds its brackets (`cute_lang::parse::MAX_NESTING`). The parser, the evaluation
/// and every operation on the result recurse once a level, so unbounded nesting (a type string in
/// `cutec opt`, a line of `eval -`) would overflow the thread's stack. A level takes up to about
/// 10 KiB of stack in a debug build, so the limit is lower than the `.cute` parser's 256: 64
/// levels fit a spawned thread's 2 MiB; real layouts are a few levels deep.
pub const MAX_NESTING: usize = 64;

/// How many dynamic values (`?`) one input may hold. Every dynamic stride, cosize or offset is an
/// expression over them (a compact layout's strides are the prefix products, a cosize the sum of
/// every mode's span), so their count bounds the size and depth of the expressions the operations
/// build and walk recursively; real layouts hold a handful.
pub const MAX_DYNAMIC: usize = 1024;

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    names: HashMap<String, u32>,
    next_id: u32,
    /// How many brackets, calls and composed layouts enclose the current position.
    depth: usize,
    /// How many `?`s have been read.
    dynamic: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }
    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.pos + k).map(|t| &t.0)
    }
    fn col(&self) -> usize {
        self.toks.get(self.pos).map_or(usize::MAX, |t| t.1 + 1)
    }
    fn err(&self, what: &str) -> Error {
        match self.toks.get(self.pos) {
            Some((t, c)) => Error::new("parse", format!("{what} at column {}, found {}", c + 1, tok_text(t))),
            None => Error::new("parse", format!("{what} at the end of the input")),
        }
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Sym(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: char) -> Result<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.err(&format!("expected '{c}'")))
        }
    }
    /// Parses one level deeper (a bracket's contents, a call's arguments, a composed layout's
    /// inner layout) with `f`, refusing to go past [`MAX_NESTING`]; `col` is where the level opens.
    fn nested<T>(&mut self, col: usize, f: impl FnOnce(&mut Parser) -> Result<T>) -> Result<T> {
        if self.depth >= MAX_NESTING {
            return Err(Error::new("parse", format!("nesting deeper than {MAX_NESTING} levels at column {col}")));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }
    fn int(&mut self) -> Result<i64> {
        match self.peek() {
            Some(Tok::Int(v)) => {
                let v = *v;
                self.pos += 1;
                Ok(v)
            }
            _ => Err(self.err("expected an integer")),
        }
    }

    fn expr(&mut self) -> Result<Ast> {
        let col = self.col();
        let t = self.term()?;
        if let Ast::Swizzle(..) = t {
            if self.peek() == Some(&Tok::Name("o".into())) {
                self.pos += 1;
                let off = self.term()?;
                if self.peek() != Some(&Tok::Name("o".into())) {
                    return Err(self.err("expected 'o' after the offset of a composed layout"));
                }
                self.pos += 1;
                let inner = self.nested(col, Parser::expr)?;
                return Ok(Ast::Composed(Box::new(t), Box::new(off), Box::new(inner)));
            }
        }
        if self.eat(':') {
            let d = self.term()?;
            return Ok(Ast::Layout(Box::new(t), Box::new(d)));
        }
        Ok(t)
    }

    /// The arguments of a call; `label: expr` names one (checked by [`check_labels`]).
    fn args(&mut self) -> Result<Vec<(Option<String>, Ast)>> {
        let mut v = Vec::new();
        if self.eat(')') {
            return Ok(v);
        }
        loop {
            let label = match (self.peek(), self.peek_at(1)) {
                (Some(Tok::Name(n)), Some(Tok::Sym(':'))) => {
                    let n = n.clone();
                    self.pos += 2;
                    Some(n)
                }
                _ => None,
            };
            v.push((label, self.expr()?));
            if self.eat(')') {
                return Ok(v);
            }
            self.expect(',')?;
        }
    }

    fn list(&mut self, close: char) -> Result<Vec<Ast>> {
        let mut v = Vec::new();
        if self.eat(close) {
            return Ok(v);
        }
        loop {
            v.push(self.expr()?);
            if self.eat(close) {
                return Ok(v);
            }
            self.expect(',')?;
        }
    }

    /// A term, then `@i@j...` makes it the scaled basis element (CuTe
    /// prints `E<j,i>` scaled by k as `k@i@j`).
    fn term(&mut self) -> Result<Ast> {
        let col = self.col();
        let t = self.term_inner()?;
        if self.peek() != Some(&Tok::Sym('@')) {
            return Ok(t);
        }
        let Ast::Int(k) = t else {
            return Err(Error::new(
                "parse",
                format!("only an integer can be scaled by a basis element ('@' after the term at column {col})"),
            ));
        };
        let mut path = Vec::new();
        while self.eat('@') {
            let i = self.int()?;
            path.push(u32::try_from(i).map_err(|_| {
                Error::new("parse", format!("basis index {i} at column {col} must be a small non-negative integer"))
            })?);
        }
        path.reverse();
        Ok(Ast::Int(Int::basis(&path, &k)?))
    }

    fn term_inner(&mut self) -> Result<Ast> {
        let col = self.col();
        match self.peek().cloned() {
            Some(Tok::Int(v)) => {
                self.pos += 1;
                Ok(Ast::Int(Int::S(v)))
            }
            Some(Tok::Sym('?')) => {
                self.pos += 1;
                self.dynamic += 1;
                if self.dynamic > MAX_DYNAMIC {
                    return Err(Error::new(
                        "parse",
                        format!("more than {MAX_DYNAMIC} dynamic values ('?') at column {col}"),
                    ));
                }
                // `?n` names a value only when the name follows the `?` at
                // once, so that `S<3,3,3> o ? o L` (a printed composed layout
                // with a dynamic offset) reads the `o` as the operator.
                let named = self.toks.get(self.pos).is_some_and(|t| t.1 == col);
                let id = match self.peek().cloned() {
                    Some(Tok::Name(n)) if named => {
                        self.pos += 1;
                        let next = self.next_id;
                        let id = *self.names.entry(n).or_insert(next);
                        if id == next {
                            self.next_id += 1;
                        }
                        id
                    }
                    _ => {
                        self.next_id += 1;
                        self.next_id - 1
                    }
                };
                let mut div = 1;
                if self.eat('{') {
                    if self.peek() != Some(&Tok::Name("div".into())) {
                        return Err(self.err("expected 'div'"));
                    }
                    self.pos += 1;
                    self.expect('=')?;
                    div = self.int()?;
                    if div < 1 {
                        return Err(Error::new(
                            "parse",
                            format!("divisibility {div} at column {col} must be positive"),
                        ));
                    }
                    self.expect('}')?;
                }
                Ok(Ast::Int(Int::var(id, div)))
            }
            Some(Tok::Sym('(')) => {
                self.pos += 1;
                Ok(Ast::Tuple(self.nested(col, |p| p.list(')'))?))
            }
            Some(Tok::Str(s)) => {
                self.pos += 1;
                Ok(Ast::Name(s))
            }
            Some(Tok::Sym('[')) => {
                // Python-style lists, as in cute.select(l, [0,1,3,2]).
                self.pos += 1;
                Ok(Ast::Tuple(self.nested(col, |p| p.list(']'))?))
            }
            Some(Tok::Sym('<')) => {
                self.pos += 1;
                Ok(Ast::Angle(self.nested(col, |p| p.list('>'))?))
            }
            Some(Tok::Name(n)) => {
                self.pos += 1;
                if n == "_" {
                    return Ok(Ast::Under);
                }
                if (n == "S" || n == "Sw") && self.peek() == Some(&Tok::Sym('<')) {
                    self.pos += 1;
                    let b = self.int()?;
                    self.expect(',')?;
                    let m = self.int()?;
                    self.expect(',')?;
                    let s = self.int()?;
                    self.expect('>')?;
                    return Ok(Ast::Swizzle(b, m, s));
                }
                if self.peek() == Some(&Tok::Sym('(')) {
                    self.pos += 1;
                    let args = self.nested(col, Parser::args)?;
                    let name = n.strip_prefix("cute.").unwrap_or(&n).to_string();
                    return Ok(Ast::Call(name, args, col));
                }
                if is_word(&n) {
                    return Ok(Ast::Name(n));
                }
                Err(Error::new("parse", format!("unknown name '{n}' at column {col} (a call needs parentheses)")))
            }
            _ => Err(self.err("expected a value")),
        }
    }
}

fn tok_text(t: &Tok) -> String {
    match t {
        Tok::Int(v) => v.to_string(),
        Tok::Name(n) => format!("'{n}'"),
        Tok::Str(n) => format!("\"{n}\""),
        Tok::Sym(c) => format!("'{c}'"),
    }
}

fn parse(src: &str) -> Result<Ast> {
    let mut p = Parser { toks: lex(src)?, pos: 0, names: HashMap::new(), next_id: 0, depth: 0, dynamic: 0 };
    let e = p.expr()?;
    if p.pos != p.toks.len() {
        return Err(p.err("unexpected input after the expression"));
    }
    Ok(e)
}

// ---------------------------------------------------------------- MMA words

/// Element types by their `.cute` names, with the CuTe DSL spellings read as the same type.
const ELEM_TYPES: &[(&str, &[&str])] = &[
    ("f16", &["Float16", "half"]),
    ("bf16", &["BFloat16", "bfloat16"]),
    ("tf32", &["TFloat32"]),
    ("f32", &["Float32", "float"]),
];

/// The `.cute` name of an element type written `name` (`BFloat16` and `cutlass.BFloat16` are `bf16`).
fn elem_type(name: &str) -> Option<&'static str> {
    let n = name.strip_prefix("cutlass.").unwrap_or(name);
    ELEM_TYPES.iter().find(|(t, alias)| *t == n || alias.contains(&n)).map(|(t, _)| *t)
}

/// Bare words the language reads as values (not as unknown names): element types and the
/// CuTe names of the MMA atoms. Anything else can be given as a `"quoted string"`.
fn is_word(name: &str) -> bool {
    elem_type(name).is_some() || MmaAtom::by_name(name).is_some()
}

/// The `label:`s each call accepts, at the argument position it must label (the `.cute`
/// spellings `make_mma_atom(bf16, f32, shape: (16,8,16))`,
/// `make_tiled_mma(atom, (2,2,1), permutation: (32,32,16))`).
const LABELS: &[(&str, &str, usize)] = &[
    ("make_mma_atom", "shape", 2),
    ("make_mma_atom", "a_src", 3),
    ("make_tiled_mma", "atom_layout", 1),
    ("make_tiled_mma", "permutation", 2),
];

fn check_labels(name: &str, args: &[(Option<String>, Ast)]) -> Result<()> {
    for (k, (label, _)) in args.iter().enumerate() {
        let Some(label) = label else { continue };
        match LABELS.iter().find(|(op, l, _)| *op == name && l == label) {
            Some((_, _, at)) if *at == k => {}
            Some((_, _, at)) => {
                return Err(Error::new(
                    name,
                    format!("`{label}:` labels argument {}, found at argument {}", at + 1, k + 1),
                ))
            }
            None => return Err(Error::new(name, format!("takes no argument named `{label}`"))),
        }
    }
    Ok(())
}

/// The operand a `layout_tv_A`-style operation is for (`layout_tv_A`, CuTe C++'s `get_layoutA_TV`,
/// CuTe DSL's `tv_layout_A`).
fn tv_operand(name: &str) -> Option<MmaOperand> {
    let op = name
        .strip_prefix("layout_tv_")
        .or_else(|| name.strip_prefix("tv_layout_"))
        .or_else(|| name.strip_prefix("get_layout").and_then(|r| r.strip_suffix("_TV")))?;
    MmaOperand::parse(op)
}

// ---------------------------------------------------------------- evaluation

/// Parses and evaluates one expression.
pub fn eval_str(src: &str) -> Result<Value> {
    eval(&parse(src)?)
}

fn eval(a: &Ast) -> Result<Value> {
    match a {
        Ast::Int(i) => Ok(Value::Int(i.clone())),
        Ast::Under => Ok(Value::Under),
        Ast::Tuple(v) => Ok(Value::Tuple(v.iter().map(eval).collect::<Result<_>>()?)),
        Ast::Angle(v) => Ok(Value::Tiler(v.iter().map(eval).collect::<Result<_>>()?)),
        Ast::Swizzle(b, m, s) => Ok(Value::Swizzle(Swizzle::new(*b, *m, *s)?)),
        Ast::Layout(s, d) => {
            let (s, d) = (eval(s)?, eval(d)?);
            let s = s.to_int_tuple().ok_or_else(|| {
                Error::new("parse", format!("the shape of a layout must be an IntTuple, not {}", s.kind()))
            })?;
            let d = d.to_int_tuple().ok_or_else(|| {
                Error::new("parse", format!("the stride of a layout must be an IntTuple, not {}", d.kind()))
            })?;
            Ok(Value::Layout(Layout::new(s, d)?))
        }
        Ast::Composed(sw, off, l) => {
            let Value::Swizzle(sw) = eval(sw)? else { return Err(Error::new("parse", "expected a swizzle")) };
            let off = match eval(off)? {
                Value::Int(i) => i,
                v => {
                    return Err(Error::new(
                        "parse",
                        format!("the offset of a composed layout must be an integer, not {}", v.kind()),
                    ))
                }
            };
            let l = eval(l)?
                .to_layout()
                .ok_or_else(|| Error::new("parse", "the inner part of a composed layout must be a layout"))?;
            composed("composed layout", sw, off, l)
        }
        Ast::Name(n) => Ok(Value::Name(n.clone())),
        Ast::Call(name, args, col) => {
            check_labels(name, args)?;
            let vals = args.iter().map(|(_, a)| eval(a)).collect::<Result<Vec<_>>>()?;
            call(name, &vals).map_err(|e| {
                if e.op == "eval" && e.reason.starts_with("unknown") {
                    Error::new("eval", format!("{} (column {col})", e.reason))
                } else {
                    e
                }
            })
        }
    }
}

struct Args<'a> {
    op: &'a str,
    v: &'a [Value],
}

impl<'a> Args<'a> {
    fn count(&self, lo: usize, hi: usize) -> Result<()> {
        if self.v.len() < lo || self.v.len() > hi {
            let want = if lo == hi { format!("{lo}") } else { format!("{lo} to {hi}") };
            return Err(Error::new(self.op, format!("takes {want} arguments, got {}", self.v.len())));
        }
        Ok(())
    }
    fn bad(&self, i: usize, want: &str) -> Error {
        Error::new(self.op, format!("argument {} must be {want}, not {}", i + 1, self.v[i].kind()))
    }
    fn layout(&self, i: usize) -> Result<Layout> {
        self.v[i].to_layout().ok_or_else(|| self.bad(i, "a layout"))
    }
    fn tuple(&self, i: usize) -> Result<IntTuple> {
        self.v[i].to_int_tuple().ok_or_else(|| self.bad(i, "an IntTuple"))
    }
    fn swizzle(&self, i: usize) -> Result<Swizzle> {
        match &self.v[i] {
            Value::Swizzle(s) => Ok(*s),
            _ => Err(self.bad(i, "a swizzle (S<B,M,S> or make_swizzle(b, m, s))")),
        }
    }
    fn static_int(&self, i: usize) -> Result<i64> {
        match &self.v[i] {
            Value::Int(Int::S(x)) => Ok(*x),
            Value::Int(Int::D(_)) => {
                Err(Error::new(self.op, format!("argument {} must be a static integer, not a dynamic one", i + 1)))
            }
            _ => Err(self.bad(i, "a static integer")),
        }
    }
    fn int(&self, i: usize) -> Result<Int> {
        match &self.v[i] {
            Value::Int(x) => Ok(x.clone()),
            _ => Err(self.bad(i, "an integer")),
        }
    }
    fn index(&self, i: usize) -> Result<usize> {
        match &self.v[i] {
            Value::Int(Int::S(x)) if *x >= 0 => Ok(*x as usize),
            _ => Err(self.bad(i, "a static non-negative integer")),
        }
    }
    fn indices(&self, from: usize) -> Result<Vec<usize>> {
        // Either separate integers or one tuple/list of them.
        if self.v.len() == from + 1 {
            if let Value::Tuple(t) = &self.v[from] {
                return t
                    .iter()
                    .map(|x| match x {
                        Value::Int(Int::S(k)) if *k >= 0 => Ok(*k as usize),
                        _ => Err(self.bad(from, "a list of static non-negative integers")),
                    })
                    .collect();
            }
        }
        (from..self.v.len()).map(|i| self.index(i)).collect()
    }
    fn tiler(&self, i: usize) -> Result<Tiler> {
        self.v[i].to_tiler().ok_or_else(|| self.bad(i, "a tiler (a layout, a shape or <...>)"))
    }
    /// An element type: a word such as `bf16` or `"BFloat16"`.
    fn elem(&self, i: usize) -> Result<&'static str> {
        match &self.v[i] {
            Value::Name(n) => elem_type(n).ok_or_else(|| {
                let known: Vec<&str> = ELEM_TYPES.iter().map(|(t, _)| *t).collect();
                Error::new(
                    self.op,
                    format!("argument {}: unknown element type '{n}' (the types are {})", i + 1, known.join(", ")),
                )
            }),
            _ => Err(self.bad(i, "an element type (bf16, f16, tf32, f32)")),
        }
    }
    /// (M, N, K), three static positive integers.
    fn mnk(&self, i: usize) -> Result<[i64; 3]> {
        match &self.v[i] {
            Value::Tuple(t) if t.len() == 3 => {
                let mut out = [0; 3];
                for (k, x) in t.iter().enumerate() {
                    match x {
                        Value::Int(Int::S(n)) => out[k] = *n,
                        _ => return Err(self.bad(i, "(M,N,K) of static integers")),
                    }
                }
                Ok(out)
            }
            _ => Err(self.bad(i, "(M,N,K) of static integers")),
        }
    }
    /// A tiled MMA, or an atom as the tiled MMA of one warp.
    fn tiled_mma(&self, i: usize) -> Result<TiledMma> {
        match &self.v[i] {
            Value::TiledMma(t) => Ok(t.clone()),
            Value::MmaAtom(a) => TiledMma::new(a, [1, 1, 1], None),
            _ => Err(self.bad(i, "an MMA atom or a tiled MMA (make_mma_atom, make_tiled_mma)")),
        }
    }
    fn crd(&self, i: usize) -> Result<Crd> {
        self.v[i].to_crd().ok_or_else(|| self.bad(i, "a coordinate"))
    }
}

/// The origin of a tensor view (0 for a plain layout), so that slicing a
/// slice, or tiling a counting tensor, accumulates it.
fn base_offset(v: &Value) -> Int {
    match v {
        Value::Sliced(_, off) => off.clone(),
        _ => Int::ZERO,
    }
}

fn lay(r: Result<Layout>) -> Result<Value> {
    r.map(Value::Layout)
}

/// `swizzle o offset o layout`, its errors named after the operation `op` that made it.
fn composed(op: &str, swizzle: Swizzle, offset: Int, layout: Layout) -> Result<Value> {
    ComposedLayout::new(swizzle, offset, layout).map(Value::Composed).map_err(|e| Error::new(op, e.reason))
}

/// An operation on a layout, or on the inner layout of a composed one (any
/// other value is read as a layout, as [`Args::layout`] reads it).
fn layout_or_composed(v: &Value, a: &Args, f: &dyn Fn(&Layout) -> Result<Layout>) -> Result<Value> {
    match v {
        Value::Composed(c) => Ok(Value::Composed(c.map(|l| f(l))?)),
        _ => lay(f(&a.layout(0)?)),
    }
}

/// Applies a right action to a layout or to the inner layout of a composed one.
fn right_action(v: &Value, a: &Args, f: &dyn Fn(&Layout) -> Result<Layout>) -> Result<Value> {
    match v {
        Value::Composed(c) => Ok(Value::Composed(c.map(|l| f(l))?)),
        // A tensor view (a sliced layout, a counting tensor) keeps its origin.
        Value::Sliced(l, off) => Ok(Value::Sliced(f(l)?, off.clone())),
        _ => lay(f(&a.layout(0)?)),
    }
}

/// One operation of the expression language.
pub struct Operation {
    pub name: &'static str,
    /// Other names it answers to (`compose` for `composition`, ...).
    pub aliases: &'static [&'static str],
    /// A tensor operation: on a tensor it gives a view of the same memory (`cute.NAME`, which the
    /// compiler folds into a `cute.view` by applying the operation to the tensor's layout).
    pub view: bool,
    run: fn(&Args) -> Result<Value>,
}

/// Every operation the expression language knows (the MMA operands' `layout_tv_X` also answer to
/// `tv_layout_X` and `get_layoutX_TV`).
pub const OPERATIONS: &[Operation] = &[
    Operation { name: "size", aliases: &[], view: false, run: operations::op_size },
    Operation { name: "cosize", aliases: &[], view: false, run: operations::op_cosize },
    Operation { name: "rank", aliases: &[], view: false, run: operations::op_rank },
    Operation { name: "depth", aliases: &[], view: false, run: operations::op_rank },
    Operation { name: "shape", aliases: &[], view: false, run: operations::op_shape },
    Operation { name: "stride", aliases: &[], view: false, run: operations::op_shape },
    Operation { name: "get", aliases: &["mode"], view: true, run: operations::op_get },
    Operation { name: "select", aliases: &[], view: true, run: operations::op_select },
    Operation { name: "take", aliases: &[], view: false, run: operations::op_take },
    Operation { name: "group_modes", aliases: &["group"], view: true, run: operations::op_group_modes },
    Operation { name: "flatten", aliases: &[], view: true, run: operations::op_flatten },
    Operation { name: "append", aliases: &[], view: false, run: operations::op_append },
    Operation { name: "prepend", aliases: &[], view: false, run: operations::op_append },
    Operation { name: "make_layout", aliases: &[], view: false, run: operations::op_make_layout },
    Operation { name: "make_layout_left", aliases: &["col_major"], view: false, run: operations::op_make_layout_left },
    Operation {
        name: "make_layout_right",
        aliases: &["row_major"],
        view: false,
        run: operations::op_make_layout_right,
    },
    Operation { name: "make_ordered_layout", aliases: &[], view: false, run: operations::op_make_ordered_layout },
    Operation { name: "make_identity_layout", aliases: &[], view: false, run: operations::op_make_identity_layout },
    Operation { name: "make_identity_tensor", aliases: &[], view: false, run: operations::op_make_identity_tensor },
    Operation { name: "crd2idx", aliases: &[], view: false, run: operations::op_crd2idx },
    Operation { name: "idx2crd", aliases: &[], view: false, run: operations::op_idx2crd },
    Operation { name: "eval", aliases: &["call"], view: false, run: operations::op_eval },
    Operation { name: "coalesce", aliases: &[], view: true, run: operations::op_coalesce },
    Operation { name: "filter", aliases: &[], view: false, run: operations::op_coalesce },
    Operation { name: "filter_zeros", aliases: &[], view: false, run: operations::op_filter_zeros },
    Operation { name: "composition", aliases: &["compose"], view: true, run: operations::op_composition },
    Operation { name: "complement", aliases: &[], view: false, run: operations::op_complement },
    Operation { name: "right_inverse", aliases: &[], view: false, run: operations::op_right_inverse },
    Operation { name: "left_inverse", aliases: &[], view: false, run: operations::op_left_inverse },
    Operation { name: "logical_divide", aliases: &[], view: true, run: operations::op_logical_divide },
    Operation { name: "zipped_divide", aliases: &[], view: true, run: operations::op_logical_divide },
    Operation { name: "tiled_divide", aliases: &[], view: true, run: operations::op_logical_divide },
    Operation { name: "flat_divide", aliases: &[], view: true, run: operations::op_logical_divide },
    Operation { name: "logical_product", aliases: &[], view: true, run: operations::op_logical_product },
    Operation { name: "zipped_product", aliases: &[], view: true, run: operations::op_logical_product },
    Operation { name: "tiled_product", aliases: &[], view: true, run: operations::op_logical_product },
    Operation { name: "flat_product", aliases: &[], view: true, run: operations::op_logical_product },
    Operation { name: "blocked_product", aliases: &[], view: false, run: operations::op_blocked_product },
    Operation { name: "raked_product", aliases: &[], view: false, run: operations::op_blocked_product },
    Operation { name: "tile_to_shape", aliases: &[], view: false, run: operations::op_tile_to_shape },
    Operation { name: "local_tile", aliases: &[], view: true, run: operations::op_local_tile },
    Operation { name: "local_partition", aliases: &[], view: true, run: operations::op_local_partition },
    Operation { name: "make_layout_tv", aliases: &[], view: false, run: operations::op_make_layout_tv },
    Operation { name: "max_common_vector", aliases: &[], view: false, run: operations::op_max_common_vector },
    Operation { name: "max_common_layout", aliases: &[], view: false, run: operations::op_max_common_layout },
    Operation { name: "slice", aliases: &[], view: true, run: operations::op_slice },
    Operation { name: "with_shape", aliases: &[], view: false, run: operations::op_with_shape },
    Operation { name: "product", aliases: &[], view: false, run: operations::op_product },
    Operation { name: "product_each", aliases: &[], view: false, run: operations::op_product_each },
    Operation { name: "leaves", aliases: &[], view: false, run: operations::op_leaves },
    Operation { name: "make_swizzle", aliases: &[], view: false, run: operations::op_make_swizzle },
    Operation { name: "Swizzle", aliases: &[], view: false, run: operations::op_make_swizzle },
    Operation { name: "make_composed_layout", aliases: &[], view: false, run: operations::op_make_composed_layout },
    Operation { name: "make_mma_atom", aliases: &[], view: false, run: operations::op_make_mma_atom },
    Operation { name: "make_tiled_mma", aliases: &[], view: false, run: operations::op_make_tiled_mma },
    Operation { name: "layout_tv_A", aliases: &[], view: false, run: operations::op_layout_tv },
    Operation { name: "layout_tv_B", aliases: &[], view: false, run: operations::op_layout_tv },
    Operation { name: "layout_tv_C", aliases: &[], view: false, run: operations::op_layout_tv },
    Operation { name: "tile_shape", aliases: &[], view: false, run: operations::op_tile_shape },
    Operation { name: "dice", aliases: &[], view: false, run: operations::op_dice },
    Operation { name: "upcast", aliases: &[], view: false, run: operations::op_upcast },
    Operation { name: "downcast", aliases: &[], view: false, run: operations::op_upcast },
    Operation { name: "recast_layout", aliases: &[], view: false, run: operations::op_recast_layout },
];

/// The operation called `name` (or one of its aliases).
pub fn operation(name: &str) -> Option<&'static Operation> {
    OPERATIONS.iter().find(|o| o.name == name || o.aliases.contains(&name))
}

/// Whether `name` is a tensor operation that gives a view (see [`Operation::view`]).
pub fn is_view_operation(name: &str) -> bool {
    operation(name).is_some_and(|o| o.view)
}

/// Whether `name` is one of the algebra's tensor operations, `NAME(layout of the source, args...)`,
/// that the front end emits as a view and the passes re-run by name: `make_view` (the same memory
/// laid out again) or a view operation ([`is_view_operation`]).
pub fn is_tensor_view_op(name: &str) -> bool {
    name == "make_view" || is_view_operation(name)
}

/// Applies one operation of the language to values (which may hold dynamic integers): what a
/// compiler pass uses to fold an algebra op whose arguments it has in hand.
pub fn apply(name: &str, args: &[Value]) -> Result<Value> {
    call(name, args)
}

/// A coordinate (with `_`) as a value.
pub fn crd_value(c: &Crd) -> Value {
    match c {
        Crd::Int(i) => Value::Int(i.clone()),
        Crd::Under => Value::Under,
        Crd::Tuple(v) => Value::Tuple(v.iter().map(crd_value).collect()),
    }
}

impl Value {
    /// The dynamic integers of a value in the order its printed form shows their `?`s (a layout's
    /// shape, then its stride), so that `?`s in printed text can be bound to run-time values.
    pub fn dyn_leaves(&self) -> Vec<Int> {
        match self {
            Value::Int(i) => {
                if i.is_static() {
                    vec![]
                } else {
                    vec![i.clone()]
                }
            }
            Value::Tuple(v) | Value::Tiler(v) => v.iter().flat_map(Value::dyn_leaves).collect(),
            Value::Layout(l) | Value::Sliced(l, _) => l.dynamic_leaves(),
            Value::Composed(c) => c.layout.dynamic_leaves(),
            Value::Swizzle(_) | Value::Under | Value::Name(_) | Value::MmaAtom(_) | Value::TiledMma(_) => vec![],
        }
    }

    /// The value with every dynamic leaf rebound by `f` (see [`Int::subst`]).
    pub fn subst(&self, f: &mut dyn FnMut(u32, i64) -> Result<Int>) -> Result<Value> {
        let tuple = |t: &IntTuple, f: &mut dyn FnMut(u32, i64) -> Result<Int>| -> Result<IntTuple> {
            let leaves = t.leaves().iter().map(|i| i.subst(f)).collect::<Result<Vec<_>>>()?;
            t.unflatten_like(&mut leaves.into_iter())
        };
        let layout = |l: &Layout, f: &mut dyn FnMut(u32, i64) -> Result<Int>| -> Result<Layout> {
            Layout::new(tuple(&l.shape, f)?, tuple(&l.stride, f)?)
        };
        Ok(match self {
            Value::Int(i) => Value::Int(i.subst(f)?),
            Value::Tuple(v) => Value::Tuple(v.iter().map(|x| x.subst(f)).collect::<Result<_>>()?),
            Value::Tiler(v) => Value::Tiler(v.iter().map(|x| x.subst(f)).collect::<Result<_>>()?),
            Value::Layout(l) => Value::Layout(layout(l, f)?),
            Value::Sliced(l, off) => Value::Sliced(layout(l, f)?, off.subst(f)?),
            Value::Composed(c) => Value::Composed(ComposedLayout {
                swizzle: c.swizzle,
                offset: c.offset.subst(f)?,
                layout: layout(&c.layout, f)?,
            }),
            Value::Swizzle(_) | Value::Under | Value::Name(_) | Value::MmaAtom(_) | Value::TiledMma(_) => self.clone(),
        })
    }
}

fn call(name: &str, v: &[Value]) -> Result<Value> {
    let a = Args { op: name, v };
    if tv_operand(name).is_some() {
        return operations::op_layout_tv(&a);
    }
    match operation(name) {
        Some(op) => (op.run)(&a),
        None => Err(unknown(name)),
    }
}

fn unknown(name: &str) -> Error {
    Error::new("eval", format!("unknown operation '{name}'"))
}

fn get_path(v: &Value, path: &[usize]) -> Result<Value> {
    let mut cur = v.clone();
    for &i in path {
        cur = match cur {
            Value::Layout(l) => Value::Layout(l.mode(i)?),
            Value::Composed(c) => Value::Composed(c.map(|l| l.mode(i))?),
            Value::Tuple(t) | Value::Tiler(t) => {
                t.get(i).cloned().ok_or_else(|| Error::at("get", i, "index out of range"))?
            }
            Value::Int(x) if i == 0 => Value::Int(x),
            other => return Err(Error::at("get", i, format!("cannot index {}", other.kind()))),
        };
    }
    Ok(cur)
}

// ---------------------------------------------------------------- FromStr

impl FromStr for Layout {
    type Err = Error;
    fn from_str(s: &str) -> Result<Layout> {
        match eval(&parse(s)?)? {
            Value::Layout(l) => Ok(l),
            v => Err(Error::new("parse", format!("expected a layout, found {}", v.kind()))),
        }
    }
}

impl FromStr for IntTuple {
    type Err = Error;
    fn from_str(s: &str) -> Result<IntTuple> {
        let v = eval(&parse(s)?)?;
        v.to_int_tuple().ok_or_else(|| Error::new("parse", format!("expected an IntTuple, found {}", v.kind())))
    }
}

impl FromStr for Tiler {
    type Err = Error;
    fn from_str(s: &str) -> Result<Tiler> {
        let v = eval(&parse(s)?)?;
        v.to_tiler().ok_or_else(|| Error::new("parse", format!("expected a tiler, found {}", v.kind())))
    }
}

impl FromStr for ComposedLayout {
    type Err = Error;
    fn from_str(s: &str) -> Result<ComposedLayout> {
        match eval(&parse(s)?)? {
            Value::Composed(c) => Ok(c),
            v => Err(Error::new("parse", format!("expected a composed layout, found {}", v.kind()))),
        }
    }
}

/// Round-trip helper for tilers printed from values.
pub fn tiler_to_value(t: &Tiler) -> Value {
    tiler_value(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::int::MAX_FACTORS;

    fn ev(s: &str) -> String {
        eval_str(s).map(|v| v.to_string()).unwrap_or_else(|e| format!("error: {e}"))
    }

    #[test]
    fn parse_and_print_round_trip() {
        for s in [
            "12:1",
            "(4,8):(8,1)",
            "((2,2),3):((24,2),8)",
            "<3:3,(2,4):(1,8)>",
            "(16,256)",
            "(3):(1)",
            "((3)):((1))",
            "?{div=8}:1",
            "S<3,4,3> o 0 o (8,64):(64,1)",
        ] {
            assert_eq!(ev(s), s);
        }
        assert_eq!(ev("(_2,_3):(_1,_2)"), "(2,3):(1,2)");
    }

    #[test]
    fn issue_examples() {
        assert_eq!(ev("composition((6,2):(8,2), (4,3):(3,1))"), "((2,2),3):((24,2),8)");
        assert_eq!(ev("complement(4:1, 24)"), "6:4");
        assert_eq!(
            ev("zipped_divide((9,(4,8)):(59,(13,1)), <3:3,(2,4):(1,8)>)"),
            "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))"
        );
        assert_eq!(ev("coalesce((2,(1,6)):(1,(6,2)), (1,1))"), "(2,6):(1,2)");
        assert_eq!(ev("make_layout_tv((4,32):(32,1), (4,8):(8,1))"), "((16,256),((32,4),(8,4)):((128,4),(16,1)))");
    }

    #[test]
    fn errors_are_messages() {
        assert!(ev("composition((4,3):(1,10), 6:1)").starts_with("error: composition"));
        assert!(ev("frobnicate(1)").contains("unknown operation 'frobnicate'"));
        assert!(ev("(4,8):(8,1").contains("parse"));
        assert!(ev("(4,8):(8,(1,2))").contains("not congruent"));
        assert!(ev("size(99999999999999999999)").contains("64-bit"));
        assert!(ev("size((4294967296,4294967296))").contains("overflows"));
    }

    #[test]
    fn mma_values() {
        let atom = "MMA_Atom(SM80_16x8x16_F32BF16BF16F32_TN, shape (16,8,16), TV A ((4,8),(2,2,2)):((32,1),(16,8,128)), B ((4,8),(2,2)):((16,1),(8,64)), C ((4,8),(2,2)):((32,1),(16,8)))";
        // Bare words, quoted strings, CuTe DSL spellings, `.cute`'s `shape:` label, the CuTe name.
        for s in [
            "make_mma_atom(bf16, f32, (16,8,16))",
            "make_mma_atom(\"bf16\", \"f32\", (16,8,16))",
            "make_mma_atom(cutlass.BFloat16, Float32, shape: (16,8,16))",
            "cute.make_mma_atom(SM80_16x8x16_F32BF16BF16F32_TN)",
        ] {
            assert_eq!(ev(s), atom, "{s}");
        }
        let tiled = "make_tiled_mma(make_mma_atom(bf16, f32, (16,8,16)), (2,2,1))";
        assert!(
            ev(tiled).starts_with(
                "TiledMMA(SM80_16x8x16_F32BF16BF16F32_TN, atom layout (2,2,1), tile (32,16,16), 128 threads, TV A "
            ),
            "{}",
            ev(tiled)
        );
        assert_eq!(ev(&format!("size({tiled})")), "128");
        assert_eq!(ev(&format!("tile_shape({tiled})")), "(32,16,16)");
        let perm = "make_tiled_mma(make_mma_atom(bf16, f32, (16,8,16)), atom_layout: (2,2,1), permutation: (32,32,16))";
        assert_eq!(ev(&format!("tile_shape({perm})")), "(32,32,16)");
        // The TV layouts, under all three spellings; an atom gives its own.
        assert_eq!(ev(&format!("layout_tv_C({tiled})")), "(((4,8),2,2,1),(2,2)):(((64,1),16,256,0),(32,8))");
        assert_eq!(ev(&format!("get_layoutC_TV({tiled})")), ev(&format!("tv_layout_C({tiled})")));
        assert_eq!(ev("layout_tv_A(make_mma_atom(bf16, f32, (16,8,16)))"), "((4,8),(2,2,2)):((32,1),(16,8,128))");
        // A wgmma RS atom (A from registers): CuTe's ALayout_64x16; `a_src: "smem"` is the SS atom.
        assert_eq!(
            ev("layout_tv_A(make_mma_atom(bf16, f32, (64,64,16), a_src: \"rmem\"))"),
            "((4,8,4),(2,2,2)):((128,1,16),(64,8,512))"
        );
        assert_eq!(
            ev("make_mma_atom(f16, f32, (64,64,16), a_src: \"smem\")"),
            ev("make_mma_atom(SM90_64x64x16_F32F16F16_SS)")
        );
        assert!(ev("make_mma_atom(bf16, f32, (64,64,16), a_src: \"tmem\")").contains("a_src"));
        assert!(
            ev("make_mma_atom(bf16, f32, (16,8,16), a_src: \"rmem\")").contains("A from registers is a wgmma option")
        );
        assert_eq!(ev(&format!("size(layout_tv_B({perm}))")), "1024");
        // Errors name what is wrong.
        assert!(ev("make_mma_atom(\"f8\", f32, (16,8,16))").contains("unknown element type 'f8'"));
        assert!(ev("make_mma_atom(f8, f32, (16,8,16))").contains("unknown name 'f8'"));
        assert!(ev("make_mma_atom(f16, f32, (16,8,32))").contains("no mma.sync atom"));
        assert!(ev("make_mma_atom(f16, f32, permutation: (16,8,16))").contains("no argument named `permutation`"));
        assert!(ev("make_tiled_mma(make_mma_atom(f16, f32, (16,8,16)), permutation: (2,2,1))")
            .contains("labels argument 3"));
        assert!(
            ev("make_tiled_mma(make_mma_atom(f16, f32, (16,8,16)), (2,2,1), (32,24,16))").contains("not a multiple")
        );
        assert!(ev("make_tiled_mma((4,8):(8,1), (2,2,1))").contains("argument 1 must be an MMA atom"));
        assert!(ev("layout_tv_A((4,8):(8,1))").contains("must be an MMA atom or a tiled MMA"));
        assert!(ev("size(bf16)").contains("not a name"));
        assert!(ev("make_mma_atom(\"bf16").contains("unterminated string"));
    }

    /// `open` nested `n` times around `inner`, closed by `close`.
    fn nest(open: &str, inner: &str, close: &str, n: usize) -> String {
        format!("{}{inner}{}", open.repeat(n), close.repeat(n))
    }

    #[test]
    fn deep_nesting_is_an_error_at_every_entry_point() {
        let start = std::time::Instant::now();
        let deep = nest("(", "4", ")", 100_000);
        let limit = format!("nesting deeper than {MAX_NESTING} levels");
        for err in [
            eval_str(&deep).map(|_| ()),
            Layout::from_str(&format!("{deep}:{deep}")).map(|_| ()),
            IntTuple::from_str(&deep).map(|_| ()),
            Tiler::from_str(&nest("<", "4:1", ">", 100_000)).map(|_| ()),
            ComposedLayout::from_str(&format!("S<1,2,3> o 0 o {deep}:1")).map(|_| ()),
            eval_str(&nest("[", "1", "]", 100_000)).map(|_| ()),
            eval_str(&nest("size(", "4:1", ")", 100_000)).map(|_| ()),
            eval_str(&format!("{}4:1", "S<1,2,3> o 0 o ".repeat(100_000))).map(|_| ()),
            // The issue's case: a composition with a tiler nested 8,192 deep.
            eval_str(&format!("composition(8:1, {})", nest("<", "2:1", ">", 8192))).map(|_| ()),
        ] {
            let err = err.unwrap_err();
            assert!(err.to_string().contains(&limit), "{err}");
        }
        assert!(start.elapsed().as_secs() < 20, "deep inputs took {:?}", start.elapsed());
    }

    #[test]
    fn nesting_up_to_the_limit_parses() {
        let n = MAX_NESTING;
        let shape = nest("(", "4", ")", n);
        assert_eq!(Layout::from_str(&format!("{shape}:{}", nest("(", "1", ")", n))).unwrap().size().unwrap(), 4.into());
        assert_eq!(IntTuple::from_str(&shape).unwrap().depth(), n);
        assert!(Tiler::from_str(&nest("<", "4:1", ">", n)).is_ok());
        let inner = format!("{}:{}", nest("(", "4", ")", n - 1), nest("(", "1", ")", n - 1));
        assert!(ComposedLayout::from_str(&format!("S<1,2,3> o 0 o {inner}")).is_ok());
        assert_eq!(ev(&nest("size(", "4:1", ")", n)), "4");
        // A composed layout inside a composed layout is refused after parsing, one past the limit before.
        let chain = |k: usize| ev(&format!("{}4:1", "S<1,2,3> o 0 o ".repeat(k)));
        assert!(!chain(n).contains("nesting deeper"), "{}", chain(n));
        assert!(chain(n + 1).contains("nesting deeper"), "{}", chain(n + 1));
    }

    #[test]
    fn dynamic_values_are_bounded() {
        let many = |n: usize| vec!["?"; n].join(",");
        assert!(ev(&format!("size(({}))", many(MAX_DYNAMIC + 1))).contains("more than 1024 dynamic values"));
        // A compact layout's strides are the prefix products of its extents.
        assert!(ev(&format!("make_layout(({}))", many(MAX_FACTORS + 2))).contains("more than 256 run-time values"));
        assert_eq!(ev(&format!("coalesce(make_layout(({})))", many(MAX_FACTORS))), "?:1");
    }

    /// 16 KB inputs of 2,000 modes (a layout, a tiler, their composition and divisions) take
    /// linear work: milliseconds in a release build. The bound is loose, for a loaded machine
    /// and a debug build; a quadratic path took seconds at this size.
    #[test]
    fn wide_inputs_are_fast() {
        let n = 2000;
        // Mostly 1s, 40 modes of 2, so that the size fits the index type.
        let shape: Vec<i64> = (0..n).map(|i| if i % 50 == 0 { 2 } else { 1 }).collect();
        let mut stride = Vec::new();
        let mut acc = 1i64;
        for s in &shape {
            stride.push(acc);
            acc *= s;
        }
        let join = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        let l = format!("({}):({})", join(&shape), join(&stride));
        let t = format!("<{}>", shape.iter().map(|s| format!("{s}:1")).collect::<Vec<_>>().join(","));
        let start = std::time::Instant::now();
        for e in [
            format!("composition({l}, {l})"),
            format!("composition({l}, {t})"),
            format!("logical_divide({l}, {t})"),
            format!("zipped_divide({l}, {t})"),
            format!("coalesce({l})"),
            format!("right_inverse({l})"),
            format!("blocked_product({l}, 1:1)"),
        ] {
            assert!(!ev(&e).starts_with("error"), "{e}: {}", ev(&e));
        }
        assert!(start.elapsed().as_secs() < 10, "wide inputs took {:?}", start.elapsed());
    }

    #[test]
    fn named_dynamic_values() {
        assert_eq!(ev("coalesce((?n,4):(1,?n))"), "?{div=4}:1");
        assert_eq!(ev("coalesce((?n{div=4},4):(1,?n{div=4}))"), "?{div=16}:1");
        assert_eq!(ev("right_inverse((16,?):(1,16))"), "?{div=16}:1");
    }
}
