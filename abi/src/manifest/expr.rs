//! Integer expressions and conditions of the manifest: `$k`, literals and S-expressions such as
//! `(ceildiv $0 16)` or `(and (lt $0 1024) (eq $1 8))`, with their parser, their writer and their
//! checked `i64` evaluation (pure: the runtime binds `$k` to a call's values).

use std::fmt;

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
    /// `(ceildiv a b)`: ceiling division, a count of tiles where it is a tensor extent (checked
    /// for exactness there, see [`Expr::inexact_division`]).
    CeilDiv(Box<Expr>, Box<Expr>),
    /// `(ceilquot a b)`: ceiling division the program computed as a value (its `ceil_div`, e.g.
    /// a padded extent `ceil_div(n, 128) * 128`), not a tiling: never checked for exactness.
    CeilQuot(Box<Expr>, Box<Expr>),
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
            Expr::Div(a, b) | Expr::Mod(a, b) | Expr::CeilDiv(a, b) | Expr::CeilQuot(a, b) => {
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
    /// data) or a floor `div` (which drops it: the remainder is never computed); a `ceilquot` is
    /// the program's own rounding, not a tiling, and only its operands are looked into. Returns the
    /// division's kind, numerator expression, numerator value and divisor.
    pub fn inexact_division(&self, vars: &[i64]) -> std::result::Result<Option<Inexact<'_>>, EvalError> {
        self.inexact(vars, true)
    }

    /// [`Expr::inexact_division`] of a count (a grid's blocks): only the divisions the count is
    /// made of through products, sums and quotients. One under a `min` or `max` is a computation
    /// the count is capped or selected with (`min(tiles / 132, 4)`, the conditions of a host
    /// `where`), not a count of tiles, and is not looked at.
    pub fn inexact_count(&self, vars: &[i64]) -> std::result::Result<Option<Inexact<'_>>, EvalError> {
        self.inexact(vars, false)
    }

    fn inexact(&self, vars: &[i64], extrema: bool) -> std::result::Result<Option<Inexact<'_>>, EvalError> {
        fn either<'e>(
            a: &'e Expr,
            b: &'e Expr,
            vars: &[i64],
            extrema: bool,
        ) -> std::result::Result<Option<Inexact<'e>>, EvalError> {
            match a.inexact(vars, extrema)? {
                Some(hit) => Ok(Some(hit)),
                None => b.inexact(vars, extrema),
            }
        }
        match self {
            Expr::Const(_) | Expr::Var(_) => Ok(None),
            Expr::Min(_) | Expr::Max(_) if !extrema => Ok(None),
            Expr::Mul(xs) | Expr::Add(xs) | Expr::Min(xs) | Expr::Max(xs) => {
                for x in xs {
                    if let Some(hit) = x.inexact(vars, extrema)? {
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
                either(a, b, vars, extrema)
            }
            Expr::Mod(a, b) | Expr::CeilQuot(a, b) => either(a, b, vars, extrema),
        }
    }

    /// The operands of an operation, left to right; none for a constant or a `$k`.
    pub fn operands(&self) -> impl Iterator<Item = &Expr> {
        let (list, pair): (&[Expr], Option<[&Expr; 2]>) = match self {
            Expr::Const(_) | Expr::Var(_) => (&[], None),
            Expr::Mul(xs) | Expr::Add(xs) | Expr::Min(xs) | Expr::Max(xs) => (xs, None),
            Expr::Div(a, b) | Expr::Mod(a, b) | Expr::CeilDiv(a, b) | Expr::CeilQuot(a, b) => (&[], Some([a, b])),
        };
        list.iter().chain(pair.into_iter().flatten())
    }

    /// The first value `f` gives a subexpression of this one (itself included), in pre-order, left
    /// to right.
    pub fn find_map<T>(&self, f: &impl Fn(&Expr) -> Option<T>) -> Option<T> {
        f(self).or_else(|| self.operands().find_map(|x| x.find_map(f)))
    }

    /// Whether some `$k` referenced satisfies `f`.
    pub fn any_var(&self, f: &impl Fn(usize) -> bool) -> bool {
        self.find_var(f).is_some()
    }

    /// The first `$k` referenced (left to right) that satisfies `f`.
    pub fn find_var(&self, f: &impl Fn(usize) -> bool) -> Option<usize> {
        self.find_map(&|e| match e {
            Expr::Var(k) if f(*k) => Some(*k),
            _ => None,
        })
    }

    /// The largest `$k` referenced, if any.
    pub fn max_var(&self) -> Option<usize> {
        match self {
            Expr::Var(k) => Some(*k),
            _ => self.operands().filter_map(Expr::max_var).max(),
        }
    }
}

pub(super) fn skip_ws(b: &[u8], pos: &mut usize) {
    while b.get(*pos).is_some_and(|c| c.is_ascii_whitespace()) {
        *pos += 1;
    }
}

pub(super) type Parser<T> = fn(&[u8], &mut usize, usize) -> std::result::Result<T, String>;

/// Parses `text` as one `what` (an expression, a condition) with nothing after it.
pub(super) fn parse_whole<T>(text: &str, what: &str, parse: Parser<T>) -> std::result::Result<T, String> {
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
pub(super) fn parse_head(b: &[u8], pos: &mut usize) -> std::result::Result<String, String> {
    *pos += 1;
    skip_ws(b, pos);
    let start = *pos;
    while b.get(*pos).is_some_and(u8::is_ascii_alphabetic) {
        *pos += 1;
    }
    Ok(std::str::from_utf8(&b[start..*pos]).map_err(|e| e.to_string())?.to_string())
}

/// The operands of `(op ...)` up to and including its `)`.
pub(super) fn parse_operands<T>(
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

pub(super) fn parse_expr(b: &[u8], pos: &mut usize, depth: usize) -> std::result::Result<Expr, String> {
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
                "ceilquot" => two(xs).map(|(a, b)| Expr::CeilQuot(a, b)),
                "" => Err("`(` without an operator".into()),
                other => Err(format!("unknown operator `{other}` (known: mul add div mod ceildiv ceilquot min max)")),
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
            Expr::CeilQuot(a, b) => write!(f, "(ceilquot {a} {b})"),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Expr {
        let mut pos = 0;
        parse_expr(text.as_bytes(), &mut pos, 0).unwrap()
    }

    #[test]
    fn walks_visit_every_operand_left_to_right() {
        let e = parse("(add (mul $2 (ceilquot $0 128)) (min $5 (mod $1 7)))");
        assert_eq!(e.max_var(), Some(5));
        assert_eq!(e.find_var(&|k| k != 2), Some(0));
        assert!(e.any_var(&|k| k == 1));
        assert!(!e.any_var(&|k| k == 3));
        let quot = e.find_map(&|x| match x {
            Expr::CeilQuot(_, b) => Some(b.to_string()),
            _ => None,
        });
        assert_eq!(quot.as_deref(), Some("128"));
        assert_eq!(parse("7").max_var(), None);
        assert_eq!(e.operands().count(), 2);
    }

    #[test]
    fn a_programs_ceil_div_is_not_a_partial_tile() {
        // 1000 rows padded to whole tiles of 128: ceilquot rounds, nothing is refused.
        let padded = parse("(mul 128 (ceilquot $0 128))");
        assert_eq!(padded.eval(&[1000]), Ok(1024));
        assert_eq!(padded.inexact_division(&[1000]), Ok(None));
        // A tiling's count of the same extent is refused, also under a ceilquot.
        let tiles = parse("(ceildiv $0 128)");
        let hit = tiles.inexact_division(&[1000]).unwrap().unwrap();
        assert!(hit.ceil && hit.value == 1000 && hit.divisor == 128);
        let nested = parse("(ceilquot (ceildiv $0 16) 4)");
        assert_eq!(nested.inexact_division(&[1000]).unwrap().map(|h| h.divisor), Some(16));
        assert_eq!(nested.to_string(), "(ceilquot (ceildiv $0 16) 4)");
    }

    #[test]
    fn a_count_capped_by_min_is_not_a_partial_tile() {
        // A grid of n / 256 blocks drops a remainder; capped, min(n / 256, 4) is a computation.
        let grid = parse("(div $0 256)");
        assert_eq!(grid.inexact_count(&[1000]).unwrap().map(|h| (h.ceil, h.divisor)), Some((false, 256)));
        let capped = parse("(add 1 (min (div $0 256) 4))");
        assert_eq!(capped.inexact_count(&[1000]), Ok(None));
        assert!(capped.inexact_division(&[1000]).unwrap().is_some());
        let product = parse("(mul (div $0 128) (div $1 128))");
        assert_eq!(product.inexact_count(&[1024, 1000]).unwrap().map(|h| h.value), Some(1000));
    }
}
