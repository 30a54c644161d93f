//! Launch plans of host functions: what a `.cute` `host` function does when it is called.
//!
//! cutec elaborates a host function into launches whose grid, block, shared memory and kernel
//! arguments are integer expressions over the call's **dynamic values** `$0, $1, ...`: walking the
//! host parameters in order, each tensor parameter contributes its `?` shape leaves then its `?`
//! stride leaves (flattened order), each scalar parameter contributes itself. The manifest writes
//! them inside the `host` block:
//!
//! ```text
//! launch elementwise_add_kernel
//! grid (mul (ceildiv $6 16) (ceildiv $7 256)) | 1 | 1
//! block 128 | 1 | 1
//! smem 0
//! arg tensor 0 | 0 | (ceildiv $0 16) | (ceildiv $1 256) | $2 | (mul 16 $2)
//! arg scalar i32 | (mul $0 $1)
//! endlaunch
//! ```
//!
//! `arg tensor P | OFFSET | D...`: the kernel's next tensor argument is a view of host parameter
//! `P` starting `OFFSET` elements after its pointer; `D...` are the values of the kernel
//! parameter's `?` entries in ABI order (shapes, then strides). `arg scalar T | E` passes `E` as a
//! `T`: an integer expression (checked to fit `T`) for integer types and `bool`; for a float type,
//! a constant (the value's IEEE bit pattern) or one `$k` of a host parameter of type `T`, passed
//! through unchanged (plans do no float arithmetic, and no expression may use a float's `$k`).
//!
//! `assert LHS OP RHS | s:MSG | s:LHS_TEXT | s:RHS_TEXT` ([`Assert`]), in the `host` block before
//! the launches: a `.cute` `assert` over run-time values. A call is refused unless `LHS OP RHS`
//! holds (`OP`: `== != < <= > >=`); the texts (hex UTF-8) are the message and the sides' source.
//!
//! A plan's steps ([`HostStep`]) are walked in order: `if COND` ... `else` ... `endif` branch at run
//! time, and `for $K | START | END | STEP` ... `endfor` loop, `$K` a slot after the call's dynamic
//! values; the trip count is fixed when a loop starts (a step that is not positive, or a call past
//! [`MAX_LOOP_TRIPS`] or [`MAX_LAUNCHES`], is refused), so an `endfor`'s jump back, the only
//! backward jump, cannot loop forever ([`HostSig::validate`] checks the nesting and every target).
//!
//! Expressions ([`Expr`]) are parsed once, when the manifest is read, and evaluated with checked
//! `i64` arithmetic ([`Expr::eval`]): overflow and division by zero are errors, never panics.
//! [`HostPlan`] binds a host function to the kernel signatures it launches and evaluates a call
//! ([`HostPlan::evaluate`]) as a pure function of the arguments: the runtime's `HostFn::call` and
//! the offline `cute-run plan` use the same code.

use std::fmt;
use std::sync::Arc;

use crate::checked::{check_tensor_ref, Arg, TensorView, ViewRef};
use crate::error::{Result, RuntimeError};
use crate::launch::{KernelArg, LaunchConfig};
use crate::manifest::{DType, KernelSig, Manifest, ParamKind, ParamSig};

/// Deepest expression nesting accepted (guards the recursive parser and evaluator).
const MAX_DEPTH: usize = 64;

/// An integer expression of a launch plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// A literal.
    Const(i64),
    /// `$k`: the k-th dynamic value of the call.
    Var(usize),
    /// `(mul a b ...)`: the product of all operands.
    Mul(Vec<Expr>),
    /// `(add a b ...)`: the sum of all operands.
    Add(Vec<Expr>),
    /// `(div a b)`: Euclidean division (floor division for positive divisors).
    Div(Box<Expr>, Box<Expr>),
    /// `(mod a b)`: Euclidean remainder (never negative).
    Mod(Box<Expr>, Box<Expr>),
    /// `(ceildiv a b)`: ceiling division.
    CeilDiv(Box<Expr>, Box<Expr>),
    /// `(min a b ...)`.
    Min(Vec<Expr>),
    /// `(max a b ...)`.
    Max(Vec<Expr>),
}

/// A division that is not exact (see [`Expr::inexact_division`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inexact<'a> {
    /// `ceildiv` (rounds up) rather than `div` (rounds down).
    pub ceil: bool,
    /// The numerator expression.
    pub numerator: &'a Expr,
    /// Its value.
    pub value: i64,
    /// The divisor's value.
    pub divisor: i64,
}

/// Why an expression could not be evaluated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// An intermediate result does not fit in i64.
    Overflow(String),
    /// A division or remainder by zero.
    DivByZero(String),
    /// `$k` with `k` beyond the call's dynamic values.
    UnboundVar(usize),
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Overflow(e) => write!(f, "integer overflow evaluating {e}"),
            EvalError::DivByZero(e) => write!(f, "division by zero evaluating {e}"),
            EvalError::UnboundVar(k) => write!(f, "${k} is not a dynamic value of this call"),
        }
    }
}

/// The quotient of Euclidean division (the remainder `mod` gives is never negative), as the
/// compiler folds it: for the positive divisors of tile counts this is floor division.
fn floor_div(a: i64, b: i64) -> Option<i64> {
    a.checked_div_euclid(b)
}

fn ceil_div(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    let r = a.checked_rem(b)?;
    Some(if r != 0 && ((r < 0) == (b < 0)) { q + 1 } else { q })
}

impl Expr {
    /// Parses one expression (the whole string).
    pub fn parse(text: &str) -> std::result::Result<Expr, String> {
        parse_whole(text, "expression", parse_expr)
    }

    /// Evaluates with the dynamic values `vars` (`$k` = `vars[k]`), in checked i64 arithmetic.
    pub fn eval(&self, vars: &[i64]) -> std::result::Result<i64, EvalError> {
        match self {
            Expr::Const(v) => Ok(*v),
            Expr::Var(k) => vars.get(*k).copied().ok_or(EvalError::UnboundVar(*k)),
            Expr::Mul(xs) => xs.iter().try_fold(1i64, |acc, x| {
                acc.checked_mul(x.eval(vars)?).ok_or_else(|| EvalError::Overflow(self.to_string()))
            }),
            Expr::Add(xs) => xs.iter().try_fold(0i64, |acc, x| {
                acc.checked_add(x.eval(vars)?).ok_or_else(|| EvalError::Overflow(self.to_string()))
            }),
            Expr::Min(xs) => {
                let mut m = i64::MAX;
                for x in xs {
                    m = m.min(x.eval(vars)?);
                }
                Ok(m)
            }
            Expr::Max(xs) => {
                let mut m = i64::MIN;
                for x in xs {
                    m = m.max(x.eval(vars)?);
                }
                Ok(m)
            }
            Expr::Div(a, b) | Expr::Mod(a, b) | Expr::CeilDiv(a, b) => {
                let (x, y) = (a.eval(vars)?, b.eval(vars)?);
                if y == 0 {
                    return Err(EvalError::DivByZero(self.to_string()));
                }
                let r = match self {
                    Expr::Div(..) => floor_div(x, y),
                    Expr::Mod(..) => x.checked_rem_euclid(y),
                    _ => ceil_div(x, y),
                };
                r.ok_or_else(|| EvalError::Overflow(self.to_string()))
            }
        }
    }

    /// The first division in the expression (outermost first, left to right) that is not exact
    /// for `vars`: a `ceildiv` (which rounds a partial tile up: the tile would reach past the
    /// data) or a floor `div` (which drops it: the remainder is never computed). Returns the
    /// division's kind, numerator expression, numerator value and divisor.
    pub fn inexact_division(&self, vars: &[i64]) -> std::result::Result<Option<Inexact<'_>>, EvalError> {
        match self {
            Expr::Const(_) | Expr::Var(_) => Ok(None),
            Expr::Mul(xs) | Expr::Add(xs) | Expr::Min(xs) | Expr::Max(xs) => {
                for x in xs {
                    if let Some(hit) = x.inexact_division(vars)? {
                        return Ok(Some(hit));
                    }
                }
                Ok(None)
            }
            Expr::CeilDiv(a, b) | Expr::Div(a, b) => {
                let (x, y) = (a.eval(vars)?, b.eval(vars)?);
                if y != 0 && x.checked_rem(y).is_some_and(|r| r != 0) {
                    return Ok(Some(Inexact {
                        ceil: matches!(self, Expr::CeilDiv(..)),
                        numerator: a,
                        value: x,
                        divisor: y,
                    }));
                }
                match a.inexact_division(vars)? {
                    Some(hit) => Ok(Some(hit)),
                    None => b.inexact_division(vars),
                }
            }
            Expr::Mod(a, b) => match a.inexact_division(vars)? {
                Some(hit) => Ok(Some(hit)),
                None => b.inexact_division(vars),
            },
        }
    }

    /// Whether some `$k` referenced satisfies `f`.
    pub fn any_var(&self, f: &impl Fn(usize) -> bool) -> bool {
        match self {
            Expr::Const(_) => false,
            Expr::Var(k) => f(*k),
            Expr::Mul(xs) | Expr::Add(xs) | Expr::Min(xs) | Expr::Max(xs) => xs.iter().any(|x| x.any_var(f)),
            Expr::Div(a, b) | Expr::Mod(a, b) | Expr::CeilDiv(a, b) => a.any_var(f) || b.any_var(f),
        }
    }

    /// The first `$k` referenced (left to right) that satisfies `f`.
    pub fn find_var(&self, f: &impl Fn(usize) -> bool) -> Option<usize> {
        match self {
            Expr::Const(_) => None,
            Expr::Var(k) => f(*k).then_some(*k),
            Expr::Mul(xs) | Expr::Add(xs) | Expr::Min(xs) | Expr::Max(xs) => xs.iter().find_map(|x| x.find_var(f)),
            Expr::Div(a, b) | Expr::Mod(a, b) | Expr::CeilDiv(a, b) => a.find_var(f).or_else(|| b.find_var(f)),
        }
    }

    /// The largest `$k` referenced, if any.
    pub fn max_var(&self) -> Option<usize> {
        match self {
            Expr::Const(_) => None,
            Expr::Var(k) => Some(*k),
            Expr::Mul(xs) | Expr::Add(xs) | Expr::Min(xs) | Expr::Max(xs) => xs.iter().filter_map(Expr::max_var).max(),
            Expr::Div(a, b) | Expr::Mod(a, b) | Expr::CeilDiv(a, b) => a.max_var().max(b.max_var()),
        }
    }
}

fn skip_ws(b: &[u8], pos: &mut usize) {
    while b.get(*pos).is_some_and(|c| c.is_ascii_whitespace()) {
        *pos += 1;
    }
}

type Parser<T> = fn(&[u8], &mut usize, usize) -> std::result::Result<T, String>;

/// Parses `text` as one `what` (an expression, a condition) with nothing after it.
fn parse_whole<T>(text: &str, what: &str, parse: Parser<T>) -> std::result::Result<T, String> {
    let b = text.trim().as_bytes();
    let mut pos = 0;
    let x = parse(b, &mut pos, 0)?;
    skip_ws(b, &mut pos);
    if pos != b.len() {
        return Err(format!("unexpected `{}` after the {what}", String::from_utf8_lossy(&b[pos..])));
    }
    Ok(x)
}

/// The operator after a `(` at `pos` (skipping it): `mul` in `(mul $0 2)`; may be empty.
fn parse_head(b: &[u8], pos: &mut usize) -> std::result::Result<String, String> {
    *pos += 1;
    skip_ws(b, pos);
    let start = *pos;
    while b.get(*pos).is_some_and(u8::is_ascii_alphabetic) {
        *pos += 1;
    }
    Ok(std::str::from_utf8(&b[start..*pos]).map_err(|e| e.to_string())?.to_string())
}

/// The operands of `(op ...)` up to and including its `)`.
fn parse_operands<T>(
    b: &[u8],
    pos: &mut usize,
    depth: usize,
    op: &str,
    parse: Parser<T>,
) -> std::result::Result<Vec<T>, String> {
    let mut xs = Vec::new();
    loop {
        skip_ws(b, pos);
        match b.get(*pos) {
            Some(b')') => {
                *pos += 1;
                return Ok(xs);
            }
            None => return Err(format!("`({op} ...` is not closed")),
            _ => xs.push(parse(b, pos, depth + 1)?),
        }
    }
}

/// Writes `(op x y ...)`.
fn write_list<T: fmt::Display>(f: &mut fmt::Formatter<'_>, op: &str, xs: &[T]) -> fmt::Result {
    write!(f, "({op}")?;
    for x in xs {
        write!(f, " {x}")?;
    }
    f.write_str(")")
}

fn parse_int(b: &[u8], pos: &mut usize) -> std::result::Result<i64, String> {
    let start = *pos;
    if b.get(*pos) == Some(&b'-') {
        *pos += 1;
    }
    while b.get(*pos).is_some_and(u8::is_ascii_digit) {
        *pos += 1;
    }
    let s = std::str::from_utf8(&b[start..*pos]).map_err(|e| e.to_string())?;
    s.parse::<i64>().map_err(|_| format!("bad integer `{s}`"))
}

fn parse_expr(b: &[u8], pos: &mut usize, depth: usize) -> std::result::Result<Expr, String> {
    if depth > MAX_DEPTH {
        return Err(format!("expression nested deeper than {MAX_DEPTH}"));
    }
    skip_ws(b, pos);
    match b.get(*pos) {
        None => Err("expected an expression, found the end".into()),
        Some(b'$') => {
            *pos += 1;
            let start = *pos;
            while b.get(*pos).is_some_and(u8::is_ascii_digit) {
                *pos += 1;
            }
            let s = std::str::from_utf8(&b[start..*pos]).map_err(|e| e.to_string())?;
            s.parse::<usize>().map(Expr::Var).map_err(|_| format!("bad variable `${s}`"))
        }
        Some(c) if c.is_ascii_digit() || *c == b'-' => parse_int(b, pos).map(Expr::Const),
        Some(b'(') => {
            let op = parse_head(b, pos)?;
            let xs = parse_operands(b, pos, depth, &op, parse_expr)?;
            let n = xs.len();
            let two = |xs: Vec<Expr>| -> std::result::Result<(Box<Expr>, Box<Expr>), String> {
                let mut it = xs.into_iter();
                match (it.next(), it.next(), it.next()) {
                    (Some(a), Some(b), None) => Ok((Box::new(a), Box::new(b))),
                    _ => Err(format!("`{op}` takes 2 operands, got {n}")),
                }
            };
            match op.as_str() {
                "mul" | "add" | "min" | "max" if n == 0 => Err(format!("`{op}` needs at least one operand")),
                "mul" => Ok(Expr::Mul(xs)),
                "add" => Ok(Expr::Add(xs)),
                "min" => Ok(Expr::Min(xs)),
                "max" => Ok(Expr::Max(xs)),
                "div" => two(xs).map(|(a, b)| Expr::Div(a, b)),
                "mod" => two(xs).map(|(a, b)| Expr::Mod(a, b)),
                "ceildiv" => two(xs).map(|(a, b)| Expr::CeilDiv(a, b)),
                "" => Err("`(` without an operator".into()),
                other => Err(format!("unknown operator `{other}` (known: mul add div mod ceildiv min max)")),
            }
        }
        Some(&c) => Err(format!("unexpected `{}`", c as char)),
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = write_list::<Expr>;
        match self {
            Expr::Const(v) => write!(f, "{v}"),
            Expr::Var(k) => write!(f, "${k}"),
            Expr::Mul(xs) => list(f, "mul", xs),
            Expr::Add(xs) => list(f, "add", xs),
            Expr::Min(xs) => list(f, "min", xs),
            Expr::Max(xs) => list(f, "max", xs),
            Expr::Div(a, b) => write!(f, "(div {a} {b})"),
            Expr::Mod(a, b) => write!(f, "(mod {a} {b})"),
            Expr::CeilDiv(a, b) => write!(f, "(ceildiv {a} {b})"),
        }
    }
}

/// A launch condition (`require EXPR | DIVISOR | s:HEX`): EXPR, over the `$k` of the kernel or
/// host block it is in, must be a multiple of DIVISOR; `what` says what it is ("a run-time extent
/// tiled by 16"), for the error message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Require {
    /// The value that must be divisible.
    pub expr: Expr,
    /// The divisor (> 0).
    pub divisor: i64,
    /// What it is, from the compiler.
    pub what: String,
}

/// Decodes `s:HEX` (UTF-8 bytes in hexadecimal).
fn hex_text(field: &str) -> std::result::Result<String, String> {
    let hex = field.trim().strip_prefix("s:").ok_or_else(|| format!("expected `s:HEX`, found `{field}`"))?;
    if hex.len() % 2 != 0 {
        return Err(format!("odd-length hex text `{hex}`"));
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| hex.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(|| format!("bad hex text `{hex}`"))?;
    String::from_utf8(bytes).map_err(|_| "text is not UTF-8".to_string())
}

impl Require {
    /// Parses the fields after `require`.
    pub fn parse(rest: &str) -> std::result::Result<Require, String> {
        let p: Vec<&str> = rest.split('|').map(str::trim).collect();
        if p.len() < 2 {
            return Err("`require` needs `EXPR | DIVISOR`".into());
        }
        let expr = Expr::parse(p[0])?;
        let divisor =
            p[1].parse::<i64>().ok().filter(|&d| d > 0).ok_or_else(|| format!("`require`: bad divisor `{}`", p[1]))?;
        let what = match p.get(2) {
            Some(f) => hex_text(f)?,
            None => String::new(),
        };
        Ok(Require { expr, divisor, what })
    }

    /// Checks the condition for `vars`; `Err(message)` naming the value (through `sources` and
    /// `params`) when it fails.
    pub(crate) fn check(
        &self,
        vars: &[i64],
        params: &[ParamSig],
        sources: &[VarSource],
    ) -> std::result::Result<(), String> {
        let v = self.expr.eval(vars).map_err(|e| e.to_string())?;
        if v.rem_euclid(self.divisor) == 0 {
            return Ok(());
        }
        let what = match &self.expr {
            Expr::Var(k) => match sources.get(*k) {
                Some(VarSource::Shape { param, leaf }) => match params.get(*param) {
                    Some(p) => format!("{} extent {v} ({})", p.name, mode_of_leaf(p, *leaf)),
                    None => format!("${k} = {v}"),
                },
                Some(src) => format!("{} = {v}", var_name_of(params, *src)),
                None => format!("${k} = {v}"),
            },
            e => format!("{e} = {v}"),
        };
        let note = if self.what.is_empty() { String::new() } else { format!(" ({})", self.what) };
        Ok(()).and(Err(format!(
            "{what} is not a multiple of the tile {}{note}; this kernel has no tail handling",
            self.divisor
        )))
    }
}

/// The comparison of an `assert` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// Every operator.
    pub const ALL: [CmpOp; 6] = [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge];

    /// `==`, `!=`, `<`, `<=`, `>`, `>=`.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// Whether `a op b` holds.
    pub fn holds(self, a: i64, b: i64) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }
}

/// The condition of a host `if` (`if COND` in a `host` block): comparisons of integer expressions
/// joined by `and`, `or` and `not`, written as S-expressions: `(lt $0 1024)` (also `eq ne le gt
/// ge`), `(and C D ...)`, `(or C D ...)`, `(not C)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cond {
    /// `(OP A B)`: `A OP B`.
    Cmp(CmpOp, Expr, Expr),
    /// `(and C D ...)`: every operand holds (evaluated left to right, stopping at the first false).
    And(Vec<Cond>),
    /// `(or C D ...)`: some operand holds (stopping at the first true).
    Or(Vec<Cond>),
    /// `(not C)`.
    Not(Box<Cond>),
}

impl CmpOp {
    /// The name of the comparison in a condition: `eq ne lt le gt ge`.
    pub fn name(self) -> &'static str {
        match self {
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
        }
    }
}

impl Cond {
    /// Parses one condition (the whole string).
    pub fn parse(text: &str) -> std::result::Result<Cond, String> {
        parse_whole(text, "condition", parse_cond)
    }

    /// Whether the condition holds for the dynamic values `vars`; an error when one of its
    /// expressions cannot be evaluated (overflow, division by zero).
    pub fn eval(&self, vars: &[i64]) -> std::result::Result<bool, EvalError> {
        match self {
            Cond::Cmp(op, a, b) => Ok(op.holds(a.eval(vars)?, b.eval(vars)?)),
            Cond::And(cs) => {
                for c in cs {
                    if !c.eval(vars)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Cond::Or(cs) => {
                for c in cs {
                    if c.eval(vars)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Cond::Not(c) => Ok(!c.eval(vars)?),
        }
    }

    /// The first `$k` referenced (left to right) that satisfies `f`.
    pub fn find_var(&self, f: &impl Fn(usize) -> bool) -> Option<usize> {
        match self {
            Cond::Cmp(_, a, b) => a.find_var(f).or_else(|| b.find_var(f)),
            Cond::And(cs) | Cond::Or(cs) => cs.iter().find_map(|c| c.find_var(f)),
            Cond::Not(c) => c.find_var(f),
        }
    }

    /// The largest `$k` referenced, if any.
    pub fn max_var(&self) -> Option<usize> {
        match self {
            Cond::Cmp(_, a, b) => a.max_var().max(b.max_var()),
            Cond::And(cs) | Cond::Or(cs) => cs.iter().filter_map(Cond::max_var).max(),
            Cond::Not(c) => c.max_var(),
        }
    }
}

fn parse_cond(b: &[u8], pos: &mut usize, depth: usize) -> std::result::Result<Cond, String> {
    if depth > MAX_DEPTH {
        return Err(format!("condition nested deeper than {MAX_DEPTH}"));
    }
    skip_ws(b, pos);
    if b.get(*pos) != Some(&b'(') {
        return Err(match b.get(*pos) {
            None => "expected a condition, found the end".to_string(),
            Some(&c) => format!("expected a condition `(OP ...)`, found `{}`", c as char),
        });
    }
    let op = parse_head(b, pos)?;
    if let Some(cmp) = CmpOp::ALL.into_iter().find(|c| c.name() == op) {
        let xs = parse_operands(b, pos, depth, &op, parse_expr)?;
        let n = xs.len();
        let mut it = xs.into_iter();
        return match (it.next(), it.next(), it.next()) {
            (Some(x), Some(y), None) => Ok(Cond::Cmp(cmp, x, y)),
            _ => Err(format!("`{op}` takes 2 operands, got {n}")),
        };
    }
    if !matches!(op.as_str(), "and" | "or" | "not") {
        return Err(if op.is_empty() {
            "`(` without an operator".into()
        } else {
            format!("unknown condition `{op}` (known: eq ne lt le gt ge and or not)")
        });
    }
    let cs = parse_operands(b, pos, depth, &op, parse_cond)?;
    match op.as_str() {
        "and" | "or" if cs.is_empty() => Err(format!("`{op}` needs at least one operand")),
        "and" => Ok(Cond::And(cs)),
        "or" => Ok(Cond::Or(cs)),
        _ => match <[Cond; 1]>::try_from(cs) {
            Ok([c]) => Ok(Cond::Not(Box::new(c))),
            Err(cs) => Err(format!("`not` takes 1 operand, got {}", cs.len())),
        },
    }
}

impl fmt::Display for Cond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = write_list::<Cond>;
        match self {
            Cond::Cmp(op, a, b) => write!(f, "({} {a} {b})", op.name()),
            Cond::And(cs) => list(f, "and", cs),
            Cond::Or(cs) => list(f, "or", cs),
            Cond::Not(c) => write!(f, "(not {c})"),
        }
    }
}

/// A host function's run-time `assert` (`assert LHS OP RHS | s:MESSAGE | s:LHS_TEXT | s:RHS_TEXT`):
/// the call is refused unless `LHS OP RHS` holds for its dynamic values. The texts are the
/// `.cute` source of the message (or of the condition) and of the two sides, for the error message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assert {
    /// The left side.
    pub lhs: Expr,
    /// The comparison.
    pub op: CmpOp,
    /// The right side.
    pub rhs: Expr,
    /// The user's message, or the condition's source text.
    pub message: String,
    /// The left side's source text (`A.shape[1]`); may be empty.
    pub lhs_text: String,
    /// The right side's source text; may be empty.
    pub rhs_text: String,
}

impl Assert {
    /// Parses the fields after `assert`.
    pub fn parse(rest: &str) -> std::result::Result<Assert, String> {
        let mut fields = rest.split('|').map(str::trim);
        let cond = fields.next().unwrap_or("").as_bytes();
        let mut pos = 0;
        let lhs = parse_expr(cond, &mut pos, 0).map_err(|e| format!("`assert`: {e}"))?;
        skip_ws(cond, &mut pos);
        let start = pos;
        while cond.get(pos).is_some_and(|c| b"=!<>".contains(c)) {
            pos += 1;
        }
        let sym = std::str::from_utf8(&cond[start..pos]).unwrap_or("");
        let op = CmpOp::ALL.into_iter().find(|o| o.symbol() == sym).ok_or_else(|| {
            format!("`assert`: expected a comparison (== != < <= > >=) after the left side, found `{sym}`")
        })?;
        let rhs = parse_expr(cond, &mut pos, 0).map_err(|e| format!("`assert`: {e}"))?;
        skip_ws(cond, &mut pos);
        if pos != cond.len() {
            return Err(format!(
                "`assert`: unexpected `{}` after the condition",
                String::from_utf8_lossy(&cond[pos..])
            ));
        }
        let mut text =
            || fields.next().filter(|f| !f.is_empty()).map(hex_text).transpose().map(Option::unwrap_or_default);
        let (message, lhs_text, rhs_text) = (text()?, text()?, text()?);
        Ok(Assert { lhs, op, rhs, message, lhs_text, rhs_text })
    }

    /// Checks the condition for `vars`: `Err("assert failed: MESSAGE (A.shape[1] = 64, B.shape[1] = 96)")`
    /// when it does not hold. A side without source text is named after its value (`n`,
    /// `A.shape[1]`, through `params` and `sources`) or shown as its expression; a side whose text is
    /// its value (a literal) is not repeated.
    pub(crate) fn check(
        &self,
        vars: &[i64],
        params: &[ParamSig],
        sources: &[VarSource],
    ) -> std::result::Result<(), String> {
        let name = |text: &str, e: &Expr| -> String {
            match (text, e) {
                ("", Expr::Var(k)) => sources.get(*k).map_or_else(|| e.to_string(), |src| var_name_of(params, *src)),
                ("", e) => e.to_string(),
                (t, _) => t.to_string(),
            }
        };
        let (lname, rname) = (name(&self.lhs_text, &self.lhs), name(&self.rhs_text, &self.rhs));
        let what = || {
            if self.message.is_empty() {
                format!("{lname} {} {rname}", self.op.symbol())
            } else {
                self.message.clone()
            }
        };
        let l = self.lhs.eval(vars).map_err(|e| format!("assert `{}`: {e}", what()))?;
        let r = self.rhs.eval(vars).map_err(|e| format!("assert `{}`: {e}", what()))?;
        if self.op.holds(l, r) {
            return Ok(());
        }
        let values: Vec<String> = [(&lname, l), (&rname, r)]
            .into_iter()
            .filter(|(t, v)| **t != v.to_string())
            .map(|(t, v)| format!("{t} = {v}"))
            .collect();
        let values = if values.is_empty() { String::new() } else { format!(" ({})", values.join(", ")) };
        Err(format!("assert failed: {}{values}", what()))
    }
}

impl fmt::Display for Assert {
    /// `$1 == $4 (A and B must have the same K)`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.lhs, self.op.symbol(), self.rhs)?;
        if !self.message.is_empty() {
            write!(f, " ({})", self.message)?;
        }
        Ok(())
    }
}

/// One segment of a host `print` step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrintSeg {
    /// Literal text.
    Text(String),
    /// An integer expression, printed in decimal.
    Int(Expr),
}

/// One step of a host function, in source order. A run-time `if` is a flat run of steps: `If`,
/// the then-branch, [`HostStep::Else`] and the else-branch when there is one, [`HostStep::EndIf`];
/// the jump targets are step indices, always forward.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostStep {
    /// `launches[i]`.
    Launch(usize),
    /// A host `print` (run at call time, before the following launches).
    Print(Vec<PrintSeg>),
    /// `if COND`: when `cond` does not hold, continue at step `else_at` (after the matching
    /// `Else`, or the matching `EndIf`).
    If {
        /// The condition.
        cond: Cond,
        /// Where the call continues when it does not hold.
        else_at: usize,
    },
    /// `else`: the end of a then-branch that was taken; continue at step `end_at` (the matching
    /// `EndIf`).
    Else {
        /// The matching `EndIf`.
        end_at: usize,
    },
    /// `endif`: nothing to do.
    EndIf,
    /// An `assert` line inside a branch: checked only when the branch is taken.
    Assert(Assert),
    /// A `require` line inside a branch: checked only when the branch is taken.
    Require(Require),
    /// `for $K | START | END | STEP`: a run-time loop. The bounds and the step are evaluated once,
    /// on entry; a step that is not positive refuses the call. When the loop makes no trip, the
    /// call continues at `end_at` (after the matching `EndFor`); otherwise `$K` (`var`, a slot after
    /// the host's dynamic values) is START and the body follows.
    For {
        /// The loop variable's slot in the call's dynamic values.
        var: usize,
        /// The first value (inclusive).
        start: Expr,
        /// The bound (exclusive).
        end: Expr,
        /// The step (must evaluate to a positive value).
        step: Expr,
        /// The step after the matching `EndFor`.
        end_at: usize,
    },
    /// `endfor`: the end of a trip. With trips left, `$K` advances by the step and the call goes
    /// back to the step after `for_at` (the only backward jump of a plan); otherwise it goes on.
    EndFor {
        /// The matching `For`.
        for_at: usize,
    },
    /// `break`: leaves the innermost loop, continuing at `end_at` (after its `EndFor`).
    Break {
        /// The step after the innermost loop's `EndFor`.
        end_at: usize,
    },
    /// `continue`: ends this trip of the innermost loop, continuing at `endfor_at` (its `EndFor`).
    Continue {
        /// The innermost loop's `EndFor`.
        endfor_at: usize,
    },
}

/// The most loop trips one call may make, all loops together (a nested loop's trips counted on
/// every trip of the loops around it). A call that would make more is refused before anything is
/// launched: a plan is evaluated in full first, so an unbounded loop would never launch at all.
pub const MAX_LOOP_TRIPS: u64 = 1 << 20;
/// The most launches one call may make. A call that would make more is refused before anything is
/// launched (each launch's arguments are kept until the call launches).
pub const MAX_LAUNCHES: usize = 1 << 20;

/// The text of a host `print` step for the call's dynamic values.
pub fn format_print(segs: &[PrintSeg], vars: &[i64]) -> std::result::Result<String, EvalError> {
    let mut out = String::new();
    write_print(segs, vars, &mut out)?;
    Ok(out)
}

/// [`format_print`] appended to `out`.
fn write_print(segs: &[PrintSeg], vars: &[i64], out: &mut String) -> std::result::Result<(), EvalError> {
    use std::fmt::Write as _;
    for seg in segs {
        match seg {
            PrintSeg::Text(t) => out.push_str(t),
            PrintSeg::Int(e) => {
                let _ = write!(out, "{}", e.eval(vars)?);
            }
        }
    }
    Ok(())
}

pub(crate) fn parse_print(rest: &str) -> std::result::Result<Vec<PrintSeg>, String> {
    rest.split('|')
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(|f| match f.strip_prefix("e:") {
            Some(e) => Expr::parse(e).map(PrintSeg::Int),
            None => hex_text(f).map(PrintSeg::Text),
        })
        .collect()
}

/// One kernel argument of a launch plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanArg {
    /// A view of host parameter `host_param` (its index), `offset` elements after its pointer,
    /// with the values of the kernel parameter's `?` entries (shapes, then strides).
    Tensor {
        /// Index of the host parameter viewed.
        host_param: usize,
        /// Element offset of the view.
        offset: Expr,
        /// The kernel parameter's dynamic entries, ABI order.
        dyn_leaves: Vec<Expr>,
    },
    /// A scalar of type `ty` with value `value`.
    Scalar {
        /// The scalar type.
        ty: DType,
        /// Its value.
        value: Expr,
    },
}

/// One launch of a host function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchPlan {
    /// The kernel (a `kernel` block of the same manifest).
    pub kernel: String,
    /// Grid (x, y, z).
    pub grid: [Expr; 3],
    /// Block (x, y, z).
    pub block: [Expr; 3],
    /// Dynamic shared memory bytes.
    pub smem: Expr,
    /// The kernel's arguments in order.
    pub args: Vec<PlanArg>,
    /// `stream P`: the index of the host's `stream` parameter the launch goes to; `None`: the
    /// stream the call is made on.
    pub stream: Option<usize>,
}

impl LaunchPlan {
    pub(crate) fn new(kernel: &str) -> LaunchPlan {
        let one = || Expr::Const(1);
        LaunchPlan {
            kernel: kernel.to_string(),
            grid: [one(), one(), one()],
            block: [one(), one(), one()],
            smem: Expr::Const(0),
            args: Vec::new(),
            stream: None,
        }
    }

    /// Parses one line inside `launch ... endlaunch`; unknown records are ignored.
    pub(crate) fn parse_line(&mut self, fields: &str) -> std::result::Result<(), String> {
        let (kw, rest) = fields.split_once(' ').unwrap_or((fields, ""));
        let parts = || rest.split('|').map(str::trim).collect::<Vec<_>>();
        let exprs = |v: &[&str]| v.iter().map(|s| Expr::parse(s)).collect::<std::result::Result<Vec<_>, _>>();
        let three = |what: &str| -> std::result::Result<[Expr; 3], String> {
            let v = exprs(&parts())?;
            <[Expr; 3]>::try_from(v)
                .map_err(|v| format!("`{what}` needs 3 expressions separated by `|`, got {}", v.len()))
        };
        match kw {
            "grid" => self.grid = three("grid")?,
            "block" => self.block = three("block")?,
            "smem" => self.smem = Expr::parse(rest)?,
            "stream" => {
                if self.stream.is_some() {
                    return Err("a launch has one `stream` line".into());
                }
                let p = rest.trim().parse::<usize>().map_err(|_| format!("`stream`: bad parameter index `{rest}`"))?;
                self.stream = Some(p);
            }
            "arg" => {
                let p = parts();
                let (kind, first) = p.first().and_then(|f| f.split_once(' ')).ok_or("`arg` needs a kind")?;
                match kind {
                    "tensor" => {
                        let host_param = first
                            .trim()
                            .parse::<usize>()
                            .map_err(|_| format!("`arg tensor`: bad parameter index `{first}`"))?;
                        let offset = Expr::parse(p.get(1).ok_or("`arg tensor` without an offset")?)?;
                        let dyn_leaves = exprs(&p[2..])?;
                        self.args.push(PlanArg::Tensor { host_param, offset, dyn_leaves });
                    }
                    "scalar" => {
                        let ty = DType::from_name(first.trim())
                            .ok_or_else(|| format!("`arg scalar`: unknown type `{first}`"))?;
                        let value = Expr::parse(p.get(1).ok_or("`arg scalar` without a value")?)?;
                        // A float is passed through: its bit pattern, or a float host parameter.
                        if !is_integer(ty) && !matches!(value, Expr::Const(_) | Expr::Var(_)) {
                            return Err(format!("`arg scalar {ty}`: a plan computes only with integers; a {ty} is a constant (its bits) or a host parameter"));
                        }
                        if p.len() > 2 {
                            return Err("`arg scalar` takes one value".into());
                        }
                        self.args.push(PlanArg::Scalar { ty, value });
                    }
                    other => return Err(format!("unknown argument kind `{other}`")),
                }
            }
            _ => {} // forward compatibility
        }
        Ok(())
    }
}

fn is_integer(d: DType) -> bool {
    matches!(
        d,
        DType::I8
            | DType::I16
            | DType::I32
            | DType::I64
            | DType::U8
            | DType::U16
            | DType::U32
            | DType::U64
            | DType::Bool
    )
}

/// The range of plan values (i64) of type `d`.
fn int_range(d: DType) -> (i64, i64) {
    let (lo, hi) = d.integer_range().unwrap_or((i128::MIN, i128::MAX));
    let clamp = |v: i128| v.clamp(i64::MIN.into(), i64::MAX.into()) as i64;
    (clamp(lo), clamp(hi))
}

fn int_kernel_arg(d: DType, v: i64) -> KernelArg {
    match d {
        DType::U32 => return KernelArg::U32(v as u32),
        DType::U64 => return KernelArg::U64(v as u64),
        _ => {}
    }
    match d.size_bytes() {
        8 => KernelArg::I64(v),
        4 => KernelArg::I32(v as i32),
        2 => KernelArg::F16Bits(v as u16),
        _ => KernelArg::U8(v as u8),
    }
}

/// A float scalar from its bit pattern (in the low bits).
fn float_kernel_arg(d: DType, bits: u64) -> KernelArg {
    match d.size_bytes() {
        8 => KernelArg::F64(f64::from_bits(bits)),
        4 => KernelArg::F32(f32::from_bits(bits as u32)),
        2 => KernelArg::F16Bits(bits as u16),
        _ => KernelArg::U8(bits as u8),
    }
}

impl fmt::Display for LaunchPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "launch {}", self.kernel)?;
        writeln!(f, "grid {} | {} | {}", self.grid[0], self.grid[1], self.grid[2])?;
        writeln!(f, "block {} | {} | {}", self.block[0], self.block[1], self.block[2])?;
        writeln!(f, "smem {}", self.smem)?;
        if let Some(p) = self.stream {
            writeln!(f, "stream {p}")?;
        }
        for a in &self.args {
            match a {
                PlanArg::Tensor { host_param, offset, dyn_leaves } => {
                    write!(f, "arg tensor {host_param} | {offset}")?;
                    for d in dyn_leaves {
                        write!(f, " | {d}")?;
                    }
                    writeln!(f)?;
                }
                PlanArg::Scalar { ty, value } => writeln!(f, "arg scalar {ty} | {value}")?,
            }
        }
        write!(f, "endlaunch")
    }
}

/// A host function: its parameters and its launch plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSig {
    /// The host function's name.
    pub name: String,
    /// Its parameters in declaration order.
    pub params: Vec<ParamSig>,
    /// The launches, in order.
    pub launches: Vec<LaunchPlan>,
    /// The kernels named by `launches KERNEL` lines (a summary; older manifests have only these).
    pub launches_kernels: Vec<String>,
    /// Why the plan cannot be used, when the manifest's plan is malformed or does not match the
    /// kernels it launches (the rest of the manifest still loads).
    pub plan_error: Option<String>,
    /// Launch conditions checked before anything is launched (`require` lines).
    pub requires: Vec<Require>,
    /// The host's run-time `assert`s, checked before anything is launched (`assert` lines).
    pub asserts: Vec<Assert>,
    /// Launches and prints in source order (`HostStep::Launch(i)` is `launches[i]`).
    pub steps: Vec<HostStep>,
    /// For an instance of a generic host function (`host add<T: f16 | f32>`, named `add<f16>`):
    /// the generic's name (`instance add`).
    pub generic: Option<String>,
    /// The instance's type arguments (`typearg T f16 mA mB mC`).
    pub type_args: Vec<TypeArgSig>,
}

/// One type argument of an instance of a generic host function: type parameter `name` is `dtype`,
/// the element type of the tensor parameters `params` (indices).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeArgSig {
    /// The type parameter (`T`).
    pub name: String,
    /// Its element type in this instance.
    pub dtype: DType,
    /// The tensor parameters declared with element type `name`.
    pub params: Vec<usize>,
}

impl TypeArgSig {
    /// Parses the fields after `typearg` (`T f16 mA mB`) against the host's parameters read so far.
    pub(crate) fn parse(rest: &[&str], params: &[ParamSig]) -> std::result::Result<TypeArgSig, String> {
        let [name, dtype, names @ ..] = rest else {
            return Err("`typearg` needs a name, an element type and parameters".into());
        };
        let dtype =
            DType::from_name(dtype).ok_or_else(|| format!("`typearg {name}`: unknown element type `{dtype}`"))?;
        if names.is_empty() {
            return Err(format!("`typearg {name}` names no parameter"));
        }
        let mut idx = Vec::with_capacity(names.len());
        for n in names {
            let i = params
                .iter()
                .position(|p| p.name == *n)
                .ok_or_else(|| format!("`typearg {name}`: no parameter `{n}` (before this line)"))?;
            match &params[i].kind {
                ParamKind::Tensor(t) if t.elem == dtype => idx.push(i),
                ParamKind::Tensor(t) => {
                    return Err(format!("`typearg {name} {dtype}`: parameter `{n}` has element type {}", t.elem))
                }
                ParamKind::Scalar(_) | ParamKind::Stream => {
                    return Err(format!("`typearg {name}`: parameter `{n}` is not a tensor"))
                }
            }
        }
        Ok(TypeArgSig { name: name.to_string(), dtype, params: idx })
    }
}

/// Where a dynamic value `$k` comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarSource {
    /// Shape leaf `leaf` of (tensor) host parameter `param`.
    Shape {
        /// Host parameter index.
        param: usize,
        /// Flattened leaf index.
        leaf: usize,
    },
    /// Stride leaf `leaf` of host parameter `param`.
    Stride {
        /// Host parameter index.
        param: usize,
        /// Flattened leaf index.
        leaf: usize,
    },
    /// Scalar host parameter `param`.
    Scalar {
        /// Host parameter index.
        param: usize,
    },
}

impl HostSig {
    pub(crate) fn new(name: &str) -> HostSig {
        HostSig {
            name: name.to_string(),
            params: Vec::new(),
            launches: Vec::new(),
            launches_kernels: Vec::new(),
            plan_error: None,
            requires: Vec::new(),
            asserts: Vec::new(),
            steps: Vec::new(),
            generic: None,
            type_args: Vec::new(),
        }
    }

    /// The sources of `$0, $1, ...`, in order.
    pub fn var_sources(&self) -> Vec<VarSource> {
        var_sources_of(&self.params)
    }

    /// A name for `$k`: `mA.shape[0]`, `n`.
    pub fn var_name(&self, src: VarSource) -> String {
        var_name_of(&self.params, src)
    }
}

/// The sources of `$0, $1, ...` of a parameter list (a host's or a kernel's ABI values).
pub fn var_sources_of(params: &[ParamSig]) -> Vec<VarSource> {
    let mut v = Vec::new();
    for (param, p) in params.iter().enumerate() {
        match &p.kind {
            ParamKind::Tensor(t) => {
                v.extend(
                    t.shape_leaves
                        .iter()
                        .enumerate()
                        .filter(|(_, e)| e.is_none())
                        .map(|(leaf, _)| VarSource::Shape { param, leaf }),
                );
                v.extend(
                    t.stride_leaves
                        .iter()
                        .enumerate()
                        .filter(|(_, e)| e.is_none())
                        .map(|(leaf, _)| VarSource::Stride { param, leaf }),
                );
            }
            ParamKind::Scalar(_) => v.push(VarSource::Scalar { param }),
            // Not an integer of the plan.
            ParamKind::Stream => {}
        }
    }
    v
}

/// A name for `$k` of a parameter list.
pub fn var_name_of(params: &[ParamSig], src: VarSource) -> String {
    let name = |p: usize| params.get(p).map_or("?", |p| p.name.as_str());
    match src {
        VarSource::Shape { param, leaf } => format!("{}.shape[{leaf}]", name(param)),
        VarSource::Stride { param, leaf } => format!("{}.stride[{leaf}]", name(param)),
        VarSource::Scalar { param } => name(param).to_string(),
    }
}

/// A block open while [`HostSig::structure`] walks the steps.
enum OpenBlock {
    /// An `if` at step `at`, and its `else` once seen.
    If { at: usize, els: Option<usize> },
    /// A `for` at step `at`, and the `break`/`continue` steps that leave or end its trips.
    For { at: usize, var: usize, jumps: Vec<usize> },
}

impl HostSig {
    /// Checks that the steps nest — `if` [`else`] `endif`, `for` `endfor`, `break` and `continue`
    /// inside a `for` — with the jump targets the manifest reader sets, and that the loop variables
    /// are the slots after the host's `nvars` dynamic values, in the order of their `for`s. Returns,
    /// per step, the loop variables bound there (a `for`'s own bounds are outside its loop). The
    /// evaluator relies on this: only an `endfor` jumps back, to its own loop, and a loop's state
    /// is always set by its `for` before its `endfor` reads it.
    fn structure(&self, nvars: usize) -> std::result::Result<Vec<Vec<usize>>, String> {
        let n = self.steps.len();
        let mut open: Vec<OpenBlock> = Vec::new();
        let mut bound: Vec<usize> = Vec::new();
        let mut scopes = Vec::with_capacity(n);
        let mut loops = 0;
        fn innermost_for(open: &mut [OpenBlock]) -> Option<&mut Vec<usize>> {
            open.iter_mut().rev().find_map(|b| match b {
                OpenBlock::For { jumps, .. } => Some(jumps),
                OpenBlock::If { .. } => None,
            })
        }
        for (i, st) in self.steps.iter().enumerate() {
            scopes.push(bound.clone());
            match st {
                HostStep::If { else_at, .. } => {
                    if *else_at <= i || *else_at > n {
                        return Err(format!("step {i}: `if` continues at step {else_at}, not after it"));
                    }
                    open.push(OpenBlock::If { at: i, els: None });
                }
                HostStep::Else { end_at } => {
                    if *end_at <= i || *end_at > n {
                        return Err(format!("step {i}: `else` continues at step {end_at}, not after it"));
                    }
                    match open.last_mut() {
                        Some(OpenBlock::If { at, els: els @ None }) => {
                            if !matches!(self.steps.get(*at), Some(HostStep::If { else_at, .. }) if *else_at == i + 1) {
                                return Err(format!("step {at}: `if` does not continue after its `else` (step {i})"));
                            }
                            *els = Some(i);
                        }
                        _ => return Err(format!("step {i}: `else` without its `if`")),
                    }
                }
                HostStep::EndIf => match open.pop() {
                    Some(OpenBlock::If { at, els }) => {
                        let ok = match els {
                            Some(e) => matches!(self.steps.get(e), Some(HostStep::Else { end_at }) if *end_at == i),
                            None => matches!(self.steps.get(at), Some(HostStep::If { else_at, .. }) if *else_at == i),
                        };
                        if !ok {
                            return Err(format!("step {i}: the `if` at step {at} does not continue at its `endif`"));
                        }
                    }
                    _ => return Err(format!("step {i}: `endif` without its `if`")),
                },
                HostStep::For { var, .. } => {
                    if *var != nvars + loops {
                        return Err(format!("step {i}: `for ${var}`: expected `${}` (loop variables are numbered after the host's {nvars} dynamic values, in the order of their `for`)", nvars + loops));
                    }
                    loops += 1;
                    open.push(OpenBlock::For { at: i, var: *var, jumps: Vec::new() });
                    bound.push(*var);
                }
                HostStep::EndFor { for_at } => match open.pop() {
                    Some(OpenBlock::For { at, var, jumps }) => {
                        if *for_at != at
                            || !matches!(self.steps.get(at), Some(HostStep::For { end_at, .. }) if *end_at == i + 1)
                        {
                            return Err(format!("step {i}: `endfor` and the `for` at step {at} do not match"));
                        }
                        for j in jumps {
                            let ok = match self.steps.get(j) {
                                Some(HostStep::Break { end_at }) => *end_at == i + 1,
                                Some(HostStep::Continue { endfor_at }) => *endfor_at == i,
                                _ => false,
                            };
                            if !ok {
                                return Err(format!("step {j}: does not jump to the end of its loop (step {i})"));
                            }
                        }
                        bound.retain(|v| *v != var);
                    }
                    _ => return Err(format!("step {i}: `endfor` without its `for`")),
                },
                HostStep::Break { .. } | HostStep::Continue { .. } => match innermost_for(&mut open) {
                    Some(jumps) => jumps.push(i),
                    None => return Err(format!("step {i}: `break` or `continue` outside a `for`")),
                },
                HostStep::Launch(_) | HostStep::Print(_) | HostStep::Assert(_) | HostStep::Require(_) => {}
            }
        }
        if let Some(b) = open.last() {
            let (what, at) = match b {
                OpenBlock::If { at, .. } => ("if", at),
                OpenBlock::For { at, .. } => ("for", at),
            };
            return Err(format!("step {at}: `{what}` is not closed"));
        }
        Ok(scopes)
    }

    /// The number of loop variables (`for` steps) of the plan.
    pub fn loop_count(&self) -> usize {
        self.steps.iter().filter(|st| matches!(st, HostStep::For { .. })).count()
    }

    /// Checks the plan against the manifest's kernels: each launched kernel exists, its argument
    /// count and kinds match the kernel's parameters, a tensor argument gives one expression per
    /// `?` entry and views a tensor host parameter of the kernel's element type, and every `$k` is
    /// a dynamic value of the host.
    pub fn validate(&self, m: &Manifest) -> std::result::Result<(), String> {
        let sources = self.var_sources();
        let nvars = sources.len();
        // The type of a scalar parameter's `$k` (`None` for tensor extents and strides).
        let scalar_ty = |k: usize| match sources.get(k) {
            Some(VarSource::Scalar { param }) => match self.params.get(*param).map(|p| &p.kind) {
                Some(ParamKind::Scalar(d)) => Some(*d),
                _ => None,
            },
            _ => None,
        };
        // The loop variables bound at each step (the slots of the loops around it).
        let scopes = self.structure(nvars)?;
        let nloops = self.loop_count();
        let var_ok = |e: &Expr, what: &str, open: &[usize]| {
            if let Some(k) = e.find_var(&|k| k >= nvars && !open.contains(&k)) {
                return Err(if k < nvars + nloops {
                    format!("{what}: `{e}` uses the loop variable ${k} outside its loop")
                } else {
                    format!("{what}: ${k} but the host has {nvars} dynamic values")
                });
            }
            // Integer arithmetic on a float's bits would be meaningless.
            if e.any_var(&|k| scalar_ty(k).is_some_and(|d| !is_integer(d))) {
                return Err(format!("{what}: `{e}` computes with a float parameter"));
            }
            Ok(())
        };
        for r in &self.requires {
            var_ok(&r.expr, "require", &[])?;
        }
        for a in &self.asserts {
            var_ok(&a.lhs, "assert", &[])?;
            var_ok(&a.rhs, "assert", &[])?;
        }
        // The loop variables bound where each launch is made (a launch is made by one step).
        let mut launch_scope: Vec<Option<&[usize]>> = vec![None; self.launches.len()];
        for (i, (st, open)) in self.steps.iter().zip(&scopes).enumerate() {
            match st {
                HostStep::Print(segs) => {
                    for seg in segs {
                        if let PrintSeg::Int(e) = seg {
                            var_ok(e, "print", open)?;
                        }
                    }
                }
                HostStep::Launch(li) => match launch_scope.get_mut(*li) {
                    Some(slot @ None) => *slot = Some(open),
                    Some(Some(_)) => return Err(format!("step {i}: launch {li} is made by two steps")),
                    None => return Err(format!("step {i}: launch {li} does not exist")),
                },
                HostStep::If { cond, .. } => {
                    if let Some(k) = cond.find_var(&|k| k >= nvars && !open.contains(&k)) {
                        return Err(if k < nvars + nloops {
                            format!("if {cond}: uses the loop variable ${k} outside its loop")
                        } else {
                            format!("if {cond}: ${k} but the host has {nvars} dynamic values")
                        });
                    }
                }
                HostStep::Assert(a) => {
                    var_ok(&a.lhs, "assert", open)?;
                    var_ok(&a.rhs, "assert", open)?;
                }
                HostStep::Require(r) => var_ok(&r.expr, "require", open)?,
                HostStep::For { var, start, end, step, .. } => {
                    let what = format!("for ${var}");
                    var_ok(start, &what, open)?;
                    var_ok(end, &what, open)?;
                    var_ok(step, &what, open)?;
                }
                HostStep::Else { .. }
                | HostStep::EndIf
                | HostStep::EndFor { .. }
                | HostStep::Break { .. }
                | HostStep::Continue { .. } => {}
            }
        }
        for (li, l) in self.launches.iter().enumerate() {
            let ctx = format!("launch {li} ({})", l.kernel);
            let k = m.kernel(&l.kernel).ok_or_else(|| format!("{ctx}: no kernel `{}` in the manifest", l.kernel))?;
            // A launch no step makes is never evaluated; its expressions may use no loop variable.
            let open = launch_scope.get(li).copied().flatten().unwrap_or(&[]);
            let var_ok = |e: &Expr, what: &str| var_ok(e, what, open);
            for e in l.grid.iter().chain(&l.block).chain(std::iter::once(&l.smem)) {
                var_ok(e, &ctx)?;
            }
            if let Some(p) = l.stream {
                match self.params.get(p) {
                    Some(ParamSig { kind: ParamKind::Stream, .. }) => {}
                    Some(hp) => {
                        return Err(format!("{ctx}: `stream {p}`: host parameter `{}` is not a stream", hp.name))
                    }
                    None => return Err(format!("{ctx}: `stream {p}`: host parameter {p} does not exist")),
                }
            }
            if k.params.len() != l.args.len() {
                return Err(format!(
                    "{ctx}: the kernel takes {} parameters but the plan passes {}",
                    k.params.len(),
                    l.args.len()
                ));
            }
            for (ai, (kp, a)) in k.params.iter().zip(&l.args).enumerate() {
                let actx = format!("{ctx} argument {ai} (`{}`)", kp.name);
                match (&kp.kind, a) {
                    (ParamKind::Tensor(t), PlanArg::Tensor { host_param, offset, dyn_leaves }) => {
                        let hp = self
                            .params
                            .get(*host_param)
                            .ok_or_else(|| format!("{actx}: host parameter {host_param} does not exist"))?;
                        let ParamKind::Tensor(ht) = &hp.kind else {
                            return Err(format!("{actx}: host parameter `{}` is not a tensor", hp.name));
                        };
                        if ht.elem != t.elem {
                            return Err(format!(
                                "{actx}: the kernel takes {} elements but host parameter `{}` has {}",
                                t.elem, hp.name, ht.elem
                            ));
                        }
                        let want = t.abi_len() - 1;
                        if dyn_leaves.len() != want {
                            return Err(format!(
                                "{actx}: the kernel parameter has {want} dynamic entries but the plan gives {}",
                                dyn_leaves.len()
                            ));
                        }
                        var_ok(offset, &actx)?;
                        for e in dyn_leaves {
                            var_ok(e, &actx)?;
                        }
                    }
                    (ParamKind::Scalar(d), PlanArg::Scalar { ty, value }) => {
                        if d != ty {
                            return Err(format!("{actx}: the kernel takes a {d} scalar but the plan passes a {ty}"));
                        }
                        match value {
                            Expr::Var(k) if !is_integer(*ty) => {
                                if scalar_ty(*k) != Some(*ty) {
                                    return Err(format!(
                                        "{actx}: a {ty} argument must be a {ty} host parameter, not ${k}"
                                    ));
                                }
                            }
                            _ => var_ok(value, &actx)?,
                        }
                    }
                    (ParamKind::Tensor(_), _) => {
                        return Err(format!("{actx}: the kernel takes a tensor but the plan passes a scalar"))
                    }
                    (ParamKind::Scalar(_), _) => {
                        return Err(format!("{actx}: the kernel takes a scalar but the plan passes a tensor"))
                    }
                    (ParamKind::Stream, _) => {
                        return Err(format!("{actx}: the kernel takes a stream, which kernels cannot"))
                    }
                }
            }
        }
        Ok(())
    }
}

impl fmt::Display for HostSig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let params: Vec<String> = self.params.iter().map(ToString::to_string).collect();
        write!(f, "host {}({})", self.name, params.join(", "))
    }
}

/// One evaluated launch (what [`HostPlan::evaluate`] returns).
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedLaunch {
    /// Index of the launch in the plan.
    pub index: usize,
    /// The kernel.
    pub kernel: String,
    /// Grid, block, shared memory.
    pub config: LaunchConfig,
    /// The flat kernel-ABI arguments.
    pub args: Vec<KernelArg>,
    /// The tensor views passed, for display: (kernel parameter, host parameter, element offset,
    /// shape leaves, stride leaves).
    pub views: Vec<(String, String, i64, Vec<i64>, Vec<i64>)>,
    /// The host's `stream` parameter (index) the launch goes to; `None`: the call's stream.
    pub stream: Option<usize>,
}

/// Reusable buffers of [`HostPlan::evaluate_into`] (no allocation per call once warm).
#[derive(Debug, Default)]
pub struct PlanScratch {
    /// `$k` values.
    pub vars: Vec<i64>,
    /// The flat kernel arguments of all launches, back to back.
    pub flat: Vec<KernelArg>,
    /// Per launch the call makes, in order: its index in the plan's launches, its config and its
    /// range in `flat` (a plan with `if`s makes the launches of the branches taken).
    pub launches: Vec<(usize, LaunchConfig, std::ops::Range<usize>)>,
    /// Per `print` step the call makes, in order: how many of `launches` come before it, and the
    /// step's index in the plan's steps.
    pub prints: Vec<(usize, usize)>,
    /// The text of every print, back to back: print `j` is `print_text[print_spans[j]]`
    /// (formatted when its step is reached, with the loop variables of that trip).
    pub print_text: String,
    /// Per print, its range in `print_text`.
    pub print_spans: Vec<std::ops::Range<usize>>,
    /// Per launch, the values of the plan's loop variables when it was made (none for a plan
    /// without loops), back to back.
    pub(crate) launch_vars: Vec<i64>,
    /// Per pointer in `flat` that views a host tensor: (its index in `flat`, the host parameter).
    pub(crate) ptr_sources: Vec<(usize, usize)>,
    /// Per loop, its trips left and its step, while it runs.
    loop_state: Vec<LoopState>,
    /// The loop trips the call has made so far ([`MAX_LOOP_TRIPS`]).
    trips: u64,
    shape: Vec<i64>,
    stride: Vec<i64>,
    host_flat: Vec<KernelArg>,
}

impl PlanScratch {
    /// The prints of the call, in order: how many launches come before each, and its text.
    pub fn print_texts(&self) -> impl Iterator<Item = (usize, &str)> {
        self.prints
            .iter()
            .zip(&self.print_spans)
            .map(|(&(before, _), r)| (before, self.print_text.get(r.clone()).unwrap_or("")))
    }
}

/// A running loop of a call: its trips left (this one included) and its step.
#[derive(Clone, Copy, Debug, Default)]
struct LoopState {
    left: u64,
    step: i64,
}

/// A host function bound to the kernel signatures it launches: evaluates calls (pure).
#[derive(Clone, Debug)]
pub struct HostPlan {
    sig: Arc<HostSig>,
    /// Per launch, the kernel's signature.
    kernels: Vec<Arc<KernelSig>>,
    vars: Vec<VarSource>,
    /// The plan's loop variables (slots after `vars`).
    nloops: usize,
}

fn refuse(host: &str, what: String) -> RuntimeError {
    RuntimeError::ArgumentMismatch(format!("host `{host}`: {what}"))
}

impl HostPlan {
    /// The plan of host function `name` of manifest `m`; an error when there is none or its plan
    /// is unusable (the message says why).
    pub fn new(m: &Manifest, name: &str) -> Result<HostPlan> {
        let sig = m
            .host(name)
            .ok_or_else(|| RuntimeError::HostNotFound { name: name.to_string(), available: m.host_names() })?;
        HostPlan::from_sig(m, Arc::new(sig.clone()))
    }

    pub(crate) fn from_sig(m: &Manifest, sig: Arc<HostSig>) -> Result<HostPlan> {
        if let Some(e) = &sig.plan_error {
            return Err(RuntimeError::InvalidImage(format!("host function `{}`: unusable launch plan: {e}", sig.name)));
        }
        if sig.launches.is_empty() && !sig.launches_kernels.is_empty() {
            return Err(RuntimeError::InvalidImage(format!(
                "host function `{}` launches {} but its manifest has no launch plan (built by an older cutec?)",
                sig.name,
                sig.launches_kernels.join(", ")
            )));
        }
        sig.validate(m).map_err(|e| RuntimeError::InvalidImage(format!("host function `{}`: {e}", sig.name)))?;
        let mut kernels: Vec<Arc<KernelSig>> = Vec::with_capacity(sig.launches.len());
        for l in &sig.launches {
            match kernels.iter().find(|k| k.name == l.kernel) {
                Some(k) => kernels.push(k.clone()),
                None => kernels.push(Arc::new(
                    m.kernel(&l.kernel)
                        .cloned()
                        .ok_or_else(|| RuntimeError::InvalidImage(format!("no kernel `{}`", l.kernel)))?,
                )),
            }
        }
        let vars = sig.var_sources();
        let nloops = sig.loop_count();
        Ok(HostPlan { sig, kernels, vars, nloops })
    }

    /// The host function's signature and plan.
    pub fn sig(&self) -> &HostSig {
        &self.sig
    }

    /// The signature of the kernel of launch `i`.
    pub fn kernel_sig(&self, i: usize) -> Option<&KernelSig> {
        self.kernels.get(i).map(|k| &**k)
    }

    /// Where each `$k` comes from.
    pub fn var_sources(&self) -> &[VarSource] {
        &self.vars
    }

    /// Evaluates a call: checks `args` against the host's parameters (as checked kernel launches
    /// do), collects the dynamic values, then evaluates each launch and checks each view it passes.
    /// Nothing is launched: see `HostFn::call`.
    pub fn evaluate(&self, args: &[Arg]) -> Result<Vec<PlannedLaunch>> {
        let mut s = PlanScratch::default();
        self.evaluate_into(args, &mut s)?;
        let mut out = Vec::with_capacity(s.launches.len());
        let nvars = self.vars.len();
        let mut vars = s.vars.clone();
        for (n, &(i, ref cfg, ref range)) in s.launches.iter().enumerate() {
            let kernel = &self.kernels[i];
            // The loop variables as they were when this launch was made.
            if let (Some(dst), Some(src)) =
                (vars.get_mut(nvars..), s.launch_vars.get(n * self.nloops..(n + 1) * self.nloops))
            {
                dst.copy_from_slice(src);
            }
            let mut views = Vec::new();
            for (kp, a) in kernel.params.iter().zip(&self.sig.launches[i].args) {
                if let (ParamKind::Tensor(t), PlanArg::Tensor { host_param, offset, dyn_leaves }) = (&kp.kind, a) {
                    let off = offset.eval(&vars).unwrap_or(0);
                    let (sh, st) = fill_leaves(t, dyn_leaves, &vars).unwrap_or_default();
                    views.push((kp.name.clone(), self.sig.params[*host_param].name.clone(), off, sh, st));
                }
            }
            out.push(PlannedLaunch {
                index: i,
                kernel: kernel.name.clone(),
                config: *cfg,
                args: s.flat[range.clone()].to_vec(),
                views,
                stream: self.sig.launches[i].stream,
            });
        }
        Ok(out)
    }

    /// [`HostPlan::evaluate`] into reusable buffers (`scratch.launches[i]` = (config, range of
    /// `scratch.flat`)). On `Err` nothing must be launched.
    pub fn evaluate_into(&self, args: &[Arg], s: &mut PlanScratch) -> Result<()> {
        let host = self.sig.name.as_str();
        s.vars.clear();
        s.flat.clear();
        s.launches.clear();
        s.prints.clear();
        s.print_text.clear();
        s.print_spans.clear();
        s.launch_vars.clear();
        s.ptr_sources.clear();
        // 1. The arguments against the host's parameters: the checked-launch rules.
        crate::checked::check_args_named(host, "host", &self.sig.params, args, &mut s.host_flat)?;
        // 2. The dynamic values, in $k order.
        for src in &self.vars {
            let v = match (*src, &args) {
                (VarSource::Shape { param, leaf }, _) => match args.get(param) {
                    Some(Arg::Tensor(v)) => v.shape.get(leaf).copied(),
                    _ => None,
                },
                (VarSource::Stride { param, leaf }, _) => match args.get(param) {
                    Some(Arg::Tensor(v)) => v.stride.get(leaf).copied(),
                    _ => None,
                },
                (VarSource::Scalar { param }, _) => match args.get(param) {
                    Some(Arg::Scalar(d, bits)) => Some(scalar_value(*d, *bits)),
                    _ => None,
                },
            };
            s.vars.push(v.ok_or_else(|| {
                RuntimeError::InvalidArgument(format!("host `{host}`: dynamic value source {src:?} missing"))
            })?);
        }
        // 3. The host's `assert`s, then the launch conditions the compiler wrote (`require`):
        // partial tiles and the like.
        for a in &self.sig.asserts {
            a.check(&s.vars, &self.sig.params, &self.vars).map_err(|m| refuse(host, m))?;
        }
        for r in &self.sig.requires {
            r.check(&s.vars, &self.sig.params, &self.vars).map_err(|m| refuse(host, m))?;
        }
        // 4. The steps: each launch of the branches taken and of every loop trip, with the checks
        // of those branches and trips.
        let steps = &self.sig.steps;
        let nvars = self.vars.len();
        s.vars.resize(nvars + self.nloops, 0);
        s.loop_state.clear();
        s.loop_state.resize(self.nloops, LoopState::default());
        s.trips = 0;
        let mut i = 0;
        while let Some(st) = steps.get(i) {
            let next = match st {
                HostStep::Launch(li) => {
                    self.evaluate_launch(*li, args, s)?;
                    i + 1
                }
                HostStep::Print(segs) => {
                    // Formatted now: a loop variable has this trip's value only now.
                    let start = s.print_text.len();
                    write_print(segs, &s.vars, &mut s.print_text).map_err(|e| refuse(host, format!("print: {e}")))?;
                    s.prints.push((s.launches.len(), i));
                    s.print_spans.push(start..s.print_text.len());
                    i + 1
                }
                HostStep::For { var, start, end, step, end_at } => {
                    let ev = |e: &Expr| {
                        e.eval(&s.vars)
                            .map_err(|err| refuse(host, format!("for ${var} | {start} | {end} | {step}: {err}")))
                    };
                    let (a, b, st) = (ev(start)?, ev(end)?, ev(step)?);
                    if st <= 0 {
                        let what = match step {
                            Expr::Var(k) if *k < nvars => self.sig.var_name(self.vars[*k]),
                            other => other.to_string(),
                        };
                        return Err(refuse(host, format!("the step of a loop must be positive, but {what} = {st} (loop ${var} from {a} to {b}: it would never end)")));
                    }
                    // i128: b - a + st - 1 cannot overflow it.
                    let trips = if b > a {
                        ((i128::from(b) - i128::from(a) + i128::from(st) - 1) / i128::from(st)) as u64
                    } else {
                        0
                    };
                    s.trips = s.trips.saturating_add(trips);
                    if s.trips > MAX_LOOP_TRIPS {
                        return Err(refuse(
                            host,
                            format!("the call would make more than {MAX_LOOP_TRIPS} loop trips (for ${var} from {a} to {b} step {st} makes {trips}); a call is limited to {MAX_LOOP_TRIPS}: use a larger step, or loop inside a kernel"),
                        ));
                    }
                    let (Some(slot), Some(state)) =
                        (s.vars.get_mut(*var), var.checked_sub(nvars).and_then(|l| s.loop_state.get_mut(l)))
                    else {
                        return Err(RuntimeError::InvalidImage(format!(
                            "host `{host}`: step {i}: loop variable ${var} has no slot (validated plan; please report)"
                        )));
                    };
                    if trips == 0 {
                        *end_at
                    } else {
                        *slot = a;
                        *state = LoopState { left: trips, step: st };
                        i + 1
                    }
                }
                HostStep::EndFor { for_at } => {
                    let Some(HostStep::For { var, .. }) = steps.get(*for_at) else {
                        return Err(RuntimeError::InvalidImage(format!(
                            "host `{host}`: step {i}: `endfor` without its `for` (validated plan; please report)"
                        )));
                    };
                    let (Some(slot), Some(state)) =
                        (s.vars.get_mut(*var), var.checked_sub(nvars).and_then(|l| s.loop_state.get_mut(l)))
                    else {
                        return Err(RuntimeError::InvalidImage(format!(
                            "host `{host}`: step {i}: loop variable ${var} has no slot (validated plan; please report)"
                        )));
                    };
                    state.left = state.left.saturating_sub(1);
                    match slot.checked_add(state.step) {
                        // Below `end` by construction of the trip count: no overflow on a trip left.
                        Some(v) if state.left > 0 => {
                            *slot = v;
                            *for_at + 1
                        }
                        _ => i + 1,
                    }
                }
                HostStep::Break { end_at } => *end_at,
                HostStep::Continue { endfor_at } => *endfor_at,
                HostStep::If { cond, else_at } => match cond.eval(&s.vars) {
                    Ok(true) => i + 1,
                    Ok(false) => *else_at,
                    Err(e) => return Err(refuse(host, format!("if {cond}: {e}"))),
                },
                HostStep::Else { end_at } => *end_at,
                HostStep::EndIf => i + 1,
                HostStep::Assert(a) => {
                    a.check(&s.vars, &self.sig.params, &self.vars).map_err(|m| refuse(host, m))?;
                    i + 1
                }
                HostStep::Require(r) => {
                    r.check(&s.vars, &self.sig.params, &self.vars).map_err(|m| refuse(host, m))?;
                    i + 1
                }
            };
            // Jumps go forward (validated when the plan is made), but for an `endfor`'s jump back
            // into its own loop, which ends when the loop's trips run out: no plan loops forever.
            if next <= i && !matches!(st, HostStep::EndFor { for_at } if next == for_at + 1) {
                return Err(RuntimeError::InvalidImage(format!("host `{host}`: step {i} jumps back to step {next}")));
            }
            i = next;
        }
        Ok(())
    }

    /// Evaluates launch `li` of the plan into `s` (appending to `s.flat` and `s.launches`), with
    /// every check of its configuration and arguments.
    fn evaluate_launch(&self, li: usize, args: &[Arg], s: &mut PlanScratch) -> Result<()> {
        let host = self.sig.name.as_str();
        if s.launches.len() >= MAX_LAUNCHES {
            return Err(refuse(host, format!("the call would make more than {MAX_LAUNCHES} launches (launch {li} of a loop); a call is limited to {MAX_LAUNCHES}: use a larger step, or loop inside a kernel")));
        }
        {
            let (Some(l), Some(kernel)) = (self.sig.launches.get(li), self.kernels.get(li)) else {
                return Err(RuntimeError::InvalidImage(format!("host `{host}`: launch {li} does not exist")));
            };
            let ev = |e: &Expr, what: &dyn Fn() -> String| -> Result<i64> {
                e.eval(&s.vars).map_err(|err| refuse(host, format!("launch {li} ({}): {}: {err}", l.kernel, what())))
            };
            let dim = |e: &Expr, what: &str, i: usize| -> Result<u32> {
                let v = ev(e, &|| format!("{what}[{i}] = {e}"))?;
                u32::try_from(v).map_err(|_| {
                    RuntimeError::InvalidLaunch(format!(
                        "host `{host}` launch {li} ({}): {what} dimension {i} = {e} = {v} is out of range",
                        l.kernel
                    ))
                })
            };
            let cfg = LaunchConfig {
                grid: (dim(&l.grid[0], "grid", 0)?, dim(&l.grid[1], "grid", 1)?, dim(&l.grid[2], "grid", 2)?),
                block: (dim(&l.block[0], "block", 0)?, dim(&l.block[1], "block", 1)?, dim(&l.block[2], "block", 2)?),
                shared_mem_bytes: dim(&l.smem, "smem", 0)?,
            };
            // The launch config, and the dynamic shared memory the kernel needs (its `smem` line:
            // cutec adds it to the plan's `smem`, checked again here).
            cfg.validate()
                .and_then(|()| kernel.check_dynamic_smem(cfg.shared_mem_bytes))
                .and_then(|()| kernel.check_cluster(cfg.grid))
                .map_err(|e| match e {
                    RuntimeError::InvalidLaunch(m) => {
                        RuntimeError::InvalidLaunch(format!("host `{host}` launch {li} ({}): {m}", l.kernel))
                    }
                    other => other,
                })?;
            let start = s.flat.len();
            for (ai, (kp, a)) in kernel.params.iter().zip(&l.args).enumerate() {
                match (&kp.kind, a) {
                    (ParamKind::Tensor(t), PlanArg::Tensor { host_param, offset, dyn_leaves }) => {
                        let hp = &self.sig.params[*host_param];
                        let Some(Arg::Tensor(hv)) = args.get(*host_param) else {
                            return Err(refuse(host, format!("parameter `{}` is not a tensor", hp.name)));
                        };
                        let ndyn_shape = t.shape_leaves.iter().filter(|e| e.is_none()).count();
                        // The partial-tile check: a tile count must be an exact division.
                        for e in &dyn_leaves[..ndyn_shape.min(dyn_leaves.len())] {
                            let hit = e
                                .inexact_division(&s.vars)
                                .map_err(|err| refuse(host, format!("launch {li} ({}): {err}", l.kernel)))?;
                            if let Some(hit) = hit {
                                return Err(refuse(
                                    host,
                                    format!(
                                        "{} (launch {li}: {}, argument `{}`)",
                                        self.partial_tile(&hp.name, &hit),
                                        l.kernel,
                                        kp.name
                                    ),
                                ));
                            }
                        }
                        let off = ev(offset, &|| format!("argument `{}` offset", kp.name))?;
                        // The view's leaves: static from the kernel, dynamic from the plan.
                        s.shape.clear();
                        s.stride.clear();
                        let mut it = dyn_leaves.iter();
                        for leaf in &t.shape_leaves {
                            s.shape.push(match leaf {
                                Some(v) => *v,
                                None => ev(it.next().unwrap_or(&Expr::Const(0)), &|| {
                                    format!("argument `{}` shape", kp.name)
                                })?,
                            });
                        }
                        for leaf in &t.stride_leaves {
                            s.stride.push(match leaf {
                                Some(v) => *v,
                                None => ev(it.next().unwrap_or(&Expr::Const(0)), &|| {
                                    format!("argument `{}` stride", kp.name)
                                })?,
                            });
                        }
                        let ctx = || {
                            format!(
                                "launch {li} ({}) argument `{}` = view of `{}` at offset {off}",
                                l.kernel, kp.name, hp.name
                            )
                        };
                        // Inside the host tensor: offset >= 0 and offset + the view's largest
                        // element offset <= the host tensor's largest element offset.
                        let elem = i128::from(t.elem.size_bytes());
                        if off < 0 {
                            return Err(refuse(host, format!("{}: negative offset", ctx())));
                        }
                        if s.shape.iter().all(|&x| x > 0) && hv.shape.iter().all(|&x| x > 0) {
                            let reach = |sh: &[i64], st: &[i64]| {
                                sh.iter().zip(st).map(|(&a, &b)| i128::from(a - 1) * i128::from(b)).sum::<i128>()
                            };
                            let view_max = i128::from(off) + reach(&s.shape, &s.stride);
                            let host_max = reach(&hv.shape, &hv.stride);
                            if view_max > host_max {
                                return Err(refuse(
                                    host,
                                    format!(
                                        "{}: the view reaches element {view_max} but `{}` (shape {:?}, stride {:?}) ends at element {host_max}",
                                        ctx(),
                                        hp.name,
                                        hv.shape,
                                        hv.stride
                                    ),
                                ));
                            }
                        }
                        let byte_off = i128::from(off) * elem;
                        let ptr = u64::try_from(i128::from(hv.ptr) + byte_off)
                            .map_err(|_| refuse(host, format!("{}: pointer overflow", ctx())))?;
                        let bytes = hv.bytes.map(|b| u64::try_from((i128::from(b) - byte_off).max(0)).unwrap_or(0));
                        let view = ViewRef { ptr, dtype: hv.dtype, shape: &s.shape, stride: &s.stride, bytes };
                        s.ptr_sources.push((s.flat.len(), *host_param));
                        check_tensor_ref(&kernel.name, "kernel", ai, &kp.name, t, &view, &mut s.flat).map_err(|e| {
                            match e {
                                RuntimeError::ArgumentMismatch(m) => refuse(host, format!("{}: {m}", ctx())),
                                other => other,
                            }
                        })?;
                    }
                    (ParamKind::Scalar(d), PlanArg::Scalar { value, .. }) if !is_integer(*d) => {
                        // Passed through: the bits of a float host parameter or constant.
                        let bits = ev(value, &|| format!("argument `{}`", kp.name))?;
                        s.flat.push(float_kernel_arg(*d, bits as u64));
                    }
                    (ParamKind::Scalar(d), PlanArg::Scalar { value, .. }) => {
                        let v = ev(value, &|| format!("argument `{}`", kp.name))?;
                        let (lo, hi) = int_range(*d);
                        if v < lo || v > hi {
                            return Err(refuse(
                                host,
                                format!(
                                    "launch {li} ({}) argument `{}` = {value} = {v} does not fit {d}",
                                    l.kernel, kp.name
                                ),
                            ));
                        }
                        s.flat.push(int_kernel_arg(*d, v));
                    }
                    _ => {
                        return Err(refuse(
                            host,
                            format!("launch {li}: argument {ai} kind mismatch (validated plan; please report)"),
                        ))
                    }
                }
            }
            // A grid computed with a floor division that is not exact would leave the remainder
            // uncomputed (the kernels have no tail handling).
            for (i, e) in l.grid.iter().enumerate() {
                let hit = e
                    .inexact_division(&s.vars)
                    .map_err(|err| refuse(host, format!("launch {li} ({}): {err}", l.kernel)))?;
                if let Some(hit) = hit.filter(|h| !h.ceil) {
                    return Err(refuse(
                        host,
                        format!(
                            "grid dimension {i} of launch {li} ({}): {}",
                            l.kernel,
                            self.partial_tile("the grid", &hit)
                        ),
                    ));
                }
            }
            // The launched kernel's own launch conditions (e.g. a `local_tile` inside the kernel
            // needs whole tiles), over its dynamic ABI values: every argument but the pointers.
            if !kernel.requires.is_empty() {
                let vars: Vec<i64> = s.flat[start..].iter().filter_map(KernelArg::dynamic_value).collect();
                let sources = var_sources_of(&kernel.params);
                for r in &kernel.requires {
                    r.check(&vars, &kernel.params, &sources)
                        .map_err(|m| refuse(host, format!("launch {li} ({}): {m}", l.kernel)))?;
                }
            }
            // The multiplier and shift of each run-time divisor of the kernel's index math.
            if !kernel.fast_divisors.is_empty() {
                let vars = crate::fastdiv::vars_of(&s.flat[start..]);
                crate::fastdiv::push_fast_divisors(kernel, &vars, &mut s.flat)
                    .map_err(|m| refuse(host, format!("launch {li} ({}): {m}", l.kernel)))?;
            }
            s.launches.push((li, cfg, start..s.flat.len()));
            // This trip's loop variables, for the views `evaluate` reports.
            if let Some(loop_vars) = s.vars.get(self.vars.len()..) {
                s.launch_vars.extend_from_slice(loop_vars);
            }
        }
        Ok(())
    }
}

impl HostPlan {
    /// "mA extent 1000 (mode 0) is not a multiple of the tile 16; this kernel has no tail handling"
    fn partial_tile(&self, viewed: &str, hit: &Inexact<'_>) -> String {
        let what = match hit.numerator {
            Expr::Var(k) => match self.vars.get(*k) {
                Some(VarSource::Shape { param, leaf }) => {
                    let pn = &self.sig.params[*param].name;
                    format!("{pn} extent {} ({})", hit.value, mode_of_leaf(&self.sig.params[*param], *leaf))
                }
                Some(src) => format!("{} = {}", self.sig.var_name(*src), hit.value),
                None => format!("{} = {}", hit.numerator, hit.value),
            },
            other => format!("{other} = {} (for {viewed})", hit.value),
        };
        let consequence = if hit.ceil {
            "this kernel has no tail handling"
        } else {
            "this kernel has no tail handling (the remainder would not be computed)"
        };
        format!("{what} is not a multiple of the tile {}; {consequence}", hit.divisor)
    }
}

/// `mode 0` for a flat leaf of a rank-R tensor; `shape entry 3` for nested shapes.
fn mode_of_leaf(p: &ParamSig, leaf: usize) -> String {
    match &p.kind {
        ParamKind::Tensor(t) if t.shape_leaves.len() == t.rank() => format!("mode {leaf}"),
        _ => format!("shape entry {leaf}"),
    }
}

fn fill_leaves(t: &crate::manifest::TensorSig, dyn_leaves: &[Expr], vars: &[i64]) -> Option<(Vec<i64>, Vec<i64>)> {
    let mut it = dyn_leaves.iter();
    let mut next = |leaf: &Option<i64>| -> Option<i64> {
        match leaf {
            Some(v) => Some(*v),
            None => it.next()?.eval(vars).ok(),
        }
    };
    let sh = t.shape_leaves.iter().map(&mut next).collect::<Option<Vec<_>>>()?;
    let st = t.stride_leaves.iter().map(&mut next).collect::<Option<Vec<_>>>()?;
    Some((sh, st))
}

fn scalar_value(d: DType, bits: u64) -> i64 {
    match d {
        DType::I8 => i64::from(bits as u8 as i8),
        DType::I16 => i64::from(bits as u16 as i16),
        DType::I32 => i64::from(bits as u32 as i32),
        DType::I64 | DType::U64 => bits as i64,
        DType::U8 | DType::Bool => i64::from(bits as u8),
        DType::U16 => i64::from(bits as u16),
        DType::U32 => i64::from(bits as u32),
        // Floating scalars keep their slot in the numbering; plans never compute with them.
        _ => bits as i64,
    }
}

/// A view of a host tensor parameter for offline evaluation (`cute-run plan --shape`): a fake,
/// aligned pointer, the given shape, compact strides matching the parameter's static strides
/// (row-major first, else column-major), and its size in bytes.
pub fn synthetic_view(p: &ParamSig, index: usize, shape: &[i64]) -> std::result::Result<TensorView, String> {
    let ParamKind::Tensor(t) = &p.kind else { return Err(format!("`{}` is not a tensor", p.name)) };
    if shape.len() != t.shape_leaves.len() {
        return Err(format!(
            "`{}` has {} shape leaves ({}) but {} extents were given",
            p.name,
            t.shape_leaves.len(),
            t.shape,
            shape.len()
        ));
    }
    let compact = |order: &mut dyn Iterator<Item = usize>| {
        let mut st = vec![0i64; shape.len()];
        let mut acc = 1i64;
        for i in order {
            st[i] = acc;
            acc = acc.saturating_mul(shape[i].max(1));
        }
        st
    };
    let n = shape.len();
    let right = compact(&mut (0..n).rev());
    let left = compact(&mut (0..n));
    let fits = |st: &[i64]| t.stride_leaves.iter().zip(st).all(|(w, g)| w.is_none_or(|w| w == *g));
    let stride = if fits(&right) {
        right
    } else if fits(&left) {
        left
    } else {
        return Err(format!("no compact layout of `{}` matches its strides {}", p.name, t.stride));
    };
    let cos: i64 = shape.iter().zip(&stride).map(|(s, d)| (s - 1).max(0) * d).sum::<i64>() + 1;
    let ptr = 0x7f00_0000_0000u64 + (index as u64) * 0x10_0000_0000;
    Ok(TensorView::new(ptr, t.elem, shape, &stride).with_bytes((cos as u64) * u64::from(t.elem.size_bytes())))
}
