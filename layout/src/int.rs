//! Integers of the layout algebra: static (known now) or dynamic (known at run time).
//!
//! A dynamic integer is a symbolic expression over opaque leaves
//! `Var { id, div }` (a kernel parameter or SSA value the compiler names by
//! `id`, known to be a positive multiple of `div`). It is kept in a canonical
//! product form `coef * f1 * f2 * ...` so that the question CuTe's algebra
//! asks most often, "is `s0*d0` equal to `d1`?", can be answered by structural
//! equality (this is what lets `coalesce((192,?):(1,192))` merge to
//! `?{div=192}:1`, which CuTe DSL cannot: its issue 3469). Sums, ceiling
//! divisions, minima, quotients and remainders that cannot be simplified
//! become opaque factors, so every dynamic result is still an expression the
//! compiler can lower to arithmetic.
//!
//! Dynamic leaves are assumed positive (they are shapes, or strides of
//! tensors laid out forward), as CuTe assumes; divisibility is tracked and
//! printed as CuTe prints it: `?`, `?{div=8}`.
//!
//! All arithmetic is checked: an overflow of the 64-bit index type is an
//! error, never a wrapped value.

use crate::error::{Error, Result};
use crate::int_tuple::IntTuple;
use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

/// How many factors a dynamic product may have. Each product holds its factors, so the prefix
/// products of `n` dynamic extents (a compact layout's strides) hold `n * n / 2` of them, and an
/// operation that multiplies a value by itself doubles them; bounding a product bounds both. Real
/// products have a few factors.
pub const MAX_FACTORS: usize = 256;

#[derive(Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Int {
    /// A static value.
    S(i64),
    /// A dynamic value.
    D(Dyn),
}

/// `coef * factors[0] * factors[1] * ...`, factors sorted, never empty.
#[derive(Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Dyn {
    pub coef: i64,
    pub factors: Arc<[Atom]>,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Atom {
    /// An opaque run-time value, a positive multiple of `div`.
    Var { id: u32, div: i64 },
    /// The basis element `E<path...>` of arithmetic tuples (CuTe's
    /// `ScaledBasis`): `k * Basis([0])` is the stride `k@0` of an identity
    /// layout. It only ever appears in strides (and in the values and offsets
    /// computed from them), at most once per product, never in a shape.
    Basis(Arc<[u32]>),
    /// An operation that could not be folded.
    Op(Arc<Op>),
}

#[derive(Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Op {
    Add(Int, Int),
    /// ceil(a / b), CuTe's `shape_div` where the divisibility is unknown: a count of tiles.
    CeilDiv(Int, Int),
    /// ceil(a / b) that a program computed as a value (the language's `ceil_div`, e.g. a padded
    /// extent `ceil_div(n, 128) * 128`), not a tiling: the launch checks, which take a
    /// [`Op::CeilDiv`] in an extent for a partial tile, leave it alone.
    CeilQuot(Int, Int),
    /// floor(a / b)
    Div(Int, Int),
    /// a mod b
    Mod(Int, Int),
    Min(Int, Int),
    /// max(a, b): only run-time host code makes it (`max` of run-time values picks a tiling).
    Max(Int, Int),
}

impl Op {
    /// The two operands, whatever the operation.
    pub fn operands(&self) -> (&Int, &Int) {
        match self {
            Op::Add(a, b)
            | Op::CeilDiv(a, b)
            | Op::CeilQuot(a, b)
            | Op::Div(a, b)
            | Op::Mod(a, b)
            | Op::Min(a, b)
            | Op::Max(a, b) => (a, b),
        }
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    i64::try_from(a).unwrap_or(1)
}

impl Atom {
    fn div(&self) -> i64 {
        match self {
            Atom::Var { div, .. } => *div,
            Atom::Basis(_) => 1,
            Atom::Op(op) => match &**op {
                Op::Add(a, b) | Op::Min(a, b) | Op::Max(a, b) => gcd(a.divisibility(), b.divisibility()).max(1),
                Op::Div(a, Int::S(b)) if *b > 0 && a.divisibility() % b == 0 => (a.divisibility() / b).max(1),
                _ => 1,
            },
        }
    }
    fn eval(&self, env: &dyn Fn(u32) -> Option<i64>) -> Option<i64> {
        match self {
            Atom::Var { id, .. } => env(*id),
            // An arithmetic tuple is not one integer.
            Atom::Basis(_) => None,
            Atom::Op(op) => match &**op {
                Op::Add(a, b) => a.eval(env)?.checked_add(b.eval(env)?),
                Op::CeilDiv(a, b) | Op::CeilQuot(a, b) => ceil_div_i(a.eval(env)?, b.eval(env)?),
                Op::Div(a, b) => {
                    let b = b.eval(env)?;
                    if b == 0 {
                        None
                    } else {
                        a.eval(env)?.checked_div_euclid(b)
                    }
                }
                Op::Mod(a, b) => {
                    let b = b.eval(env)?;
                    if b == 0 {
                        None
                    } else {
                        a.eval(env)?.checked_rem_euclid(b)
                    }
                }
                Op::Min(a, b) => Some(a.eval(env)?.min(b.eval(env)?)),
                Op::Max(a, b) => Some(a.eval(env)?.max(b.eval(env)?)),
            },
        }
    }
}

/// b | a without the panics of `%` (zero, and i64::MIN % -1).
fn divisible(a: i64, b: i64) -> bool {
    b != 0 && (b == -1 || a % b == 0)
}

fn ceil_div_i(a: i64, b: i64) -> Option<i64> {
    if b == 0 {
        return None;
    }
    let q = a.checked_div(b)?;
    if a % b != 0 && ((a < 0) == (b < 0)) {
        q.checked_add(1)
    } else {
        Some(q)
    }
}

impl Atom {
    /// See [`Int::known_positive`].
    fn known_positive(&self) -> bool {
        match self {
            Atom::Var { .. } => true,
            Atom::Basis(_) => false,
            Atom::Op(op) => match &**op {
                Op::Add(a, b) | Op::CeilDiv(a, b) | Op::CeilQuot(a, b) | Op::Min(a, b) => {
                    a.known_positive() && b.known_positive()
                }
                Op::Max(a, b) => a.known_positive() || b.known_positive(),
                Op::Div(..) | Op::Mod(..) => false,
            },
        }
    }

    fn has_basis(&self) -> bool {
        match self {
            Atom::Var { .. } => false,
            Atom::Basis(_) => true,
            Atom::Op(op) => {
                let (a, b) = op.operands();
                a.has_basis() || b.has_basis()
            }
        }
    }
}

impl Dyn {
    /// Does this value involve a basis element (is it an arithmetic tuple)?
    pub fn has_basis(&self) -> bool {
        self.factors.iter().any(Atom::has_basis)
    }

    fn atom(a: Atom) -> Int {
        Int::D(Dyn { coef: 1, factors: Arc::from(vec![a]) })
    }

    /// A positive coefficient times leaves only: then the value is at least
    /// its divisibility.
    fn is_positive_product(&self) -> bool {
        self.coef > 0 && self.factors.iter().all(|f| matches!(f, Atom::Var { .. }))
    }

    /// The largest known divisor.
    pub fn divisibility(&self) -> i64 {
        let mut d = self.coef.checked_abs().unwrap_or(1);
        for f in self.factors.iter() {
            match d.checked_mul(f.div()) {
                Some(v) => d = v,
                None => return self.coef.checked_abs().unwrap_or(1).max(1),
            }
        }
        d.max(1)
    }
}

impl From<i64> for Int {
    fn from(v: i64) -> Int {
        Int::S(v)
    }
}

impl Int {
    pub const ZERO: Int = Int::S(0);
    pub const ONE: Int = Int::S(1);

    /// A fresh dynamic leaf. `div` is its known divisibility (1 when unknown).
    pub fn var(id: u32, div: i64) -> Int {
        Dyn::atom(Atom::Var { id, div: div.max(1) })
    }

    /// The scaled basis element `scale@path` (CuTe's `ScaledBasis`, printed
    /// `1@0`, `2@1`, `1@1@0` for `E<0,1>`). An empty path is the integer
    /// `scale` itself (CuTe's `E<>` is `1`).
    pub fn basis(path: &[u32], scale: &Int) -> Result<Int> {
        if path.is_empty() {
            return Ok(scale.clone());
        }
        if scale.has_basis() {
            return Err(Error::new("arithmetic", format!("the scale {scale} of a basis element must be an integer")));
        }
        Dyn::atom(Atom::Basis(Arc::from(path))).mul(scale)
    }

    /// Does this value involve a basis element (is it an arithmetic tuple,
    /// not an integer)? Always false for static values.
    pub fn has_basis(&self) -> bool {
        match self {
            Int::S(_) => false,
            Int::D(d) => d.has_basis(),
        }
    }

    /// `(scale, path)` when this is one scaled basis element `scale@path`.
    pub fn as_scaled_basis(&self) -> Option<(Int, &[u32])> {
        let Int::D(d) = self else { return None };
        let mut path = None;
        let mut rest = Vec::with_capacity(d.factors.len());
        for f in d.factors.iter() {
            match f {
                Atom::Basis(p) if path.is_none() => path = Some(&**p),
                f if f.has_basis() => return None,
                f => rest.push(f.clone()),
            }
        }
        let path = path?;
        let scale =
            if rest.is_empty() { Int::S(d.coef) } else { Int::D(Dyn { coef: d.coef, factors: Arc::from(rest) }) };
        Some((scale, path))
    }

    /// The components of an arithmetic tuple: `(path, coefficient)` pairs,
    /// sorted by path, zero coefficients dropped; a plain integer has the
    /// single component with the empty path. An error where a basis element
    /// sits under an operation other than a sum or a scaling (which the
    /// algebra never builds).
    pub fn arith_components(&self) -> Result<Vec<(Vec<u32>, Int)>> {
        let mut out: Vec<(Vec<u32>, Int)> = Vec::new();
        self.collect_components(&Int::ONE, &mut out)?;
        out.sort_by(|a, b| a.0.cmp(&b.0));
        let mut merged: Vec<(Vec<u32>, Int)> = Vec::with_capacity(out.len());
        for (p, c) in out {
            match merged.last_mut() {
                Some(last) if last.0 == p => last.1 = last.1.add(&c)?,
                _ => merged.push((p, c)),
            }
        }
        merged.retain(|(_, c)| !c.is(0));
        Ok(merged)
    }

    fn collect_components(&self, scale: &Int, out: &mut Vec<(Vec<u32>, Int)>) -> Result<()> {
        if !self.has_basis() {
            out.push((Vec::new(), self.mul(scale)?));
            return Ok(());
        }
        if let Some((k, p)) = self.as_scaled_basis() {
            out.push((p.to_vec(), k.mul(scale)?));
            return Ok(());
        }
        let Int::D(d) = self else { return Ok(()) };
        // coef * (scalar factors) * (one sum holding basis elements)
        let mut vector = None;
        let mut rest = Vec::new();
        for f in d.factors.iter() {
            if f.has_basis() {
                if vector.is_some() {
                    return Err(Error::new("arithmetic", "a product of two arithmetic tuples"));
                }
                vector = Some(f);
            } else {
                rest.push(f.clone());
            }
        }
        let k = if rest.is_empty() { Int::S(d.coef) } else { Int::D(Dyn { coef: d.coef, factors: Arc::from(rest) }) };
        let k = k.mul(scale)?;
        match vector {
            Some(Atom::Op(op)) => match &**op {
                Op::Add(a, b) => {
                    a.collect_components(&k, out)?;
                    b.collect_components(&k, out)
                }
                _ => Err(Error::new("arithmetic", "an arithmetic tuple under a division, remainder or minimum")),
            },
            _ => Err(Error::new("arithmetic", "a malformed arithmetic tuple")),
        }
    }

    /// The arithmetic tuple as an IntTuple, e.g. `3@0 + 5@1` -> `(3,5)`.
    /// `like` lists the basis paths the tuple must have at least (the
    /// strides of the layout it comes from), so that zero components print
    /// too: `(3,0)`, as CuTe's ArithmeticTuple does.
    pub fn to_arith_tuple(&self, like: &[Vec<u32>]) -> Result<IntTuple> {
        let comps = self.arith_components()?;
        if comps.iter().any(|(p, _)| p.is_empty()) && comps.len() > 1 {
            return Err(Error::new("arithmetic", format!("{self} mixes an integer with an arithmetic tuple")));
        }
        if let [(p, c)] = comps.as_slice() {
            if p.is_empty() {
                return Ok(IntTuple::Int(c.clone()));
            }
        }
        let mut t = IntTuple::Tuple(Vec::new());
        for p in like.iter().chain(comps.iter().map(|(p, _)| p)) {
            place(&mut t, p, None);
        }
        for (p, c) in &comps {
            place(&mut t, p, Some(c));
        }
        Ok(t)
    }

    pub fn as_static(&self) -> Option<i64> {
        match self {
            Int::S(v) => Some(*v),
            Int::D(_) => None,
        }
    }
    /// Whether every constant this value is built from (its static value, or the coefficients
    /// and the constants of its unfolded operations) lies in `lo..=hi`: code generation writes
    /// them as integer literals of the index type, so they must fit it.
    pub fn constants_within(&self, lo: i64, hi: i64) -> bool {
        match self {
            Int::S(c) => (lo..=hi).contains(c),
            Int::D(d) => {
                (lo..=hi).contains(&d.coef)
                    && d.factors.iter().all(|a| match a {
                        Atom::Op(op) => {
                            let (x, y) = op.operands();
                            x.constants_within(lo, hi) && y.constants_within(lo, hi)
                        }
                        Atom::Var { .. } | Atom::Basis(_) => true,
                    })
            }
        }
    }

    pub fn is_static(&self) -> bool {
        matches!(self, Int::S(_))
    }
    pub fn is(&self, v: i64) -> bool {
        matches!(self, Int::S(x) if *x == v)
    }

    /// The largest number known to divide this value (for a static value, itself).
    pub fn divisibility(&self) -> i64 {
        match self {
            Int::S(v) => v.checked_abs().unwrap_or(i64::MAX),
            Int::D(d) => d.divisibility(),
        }
    }

    /// Evaluates with run-time values for the dynamic leaves.
    pub fn eval(&self, env: &dyn Fn(u32) -> Option<i64>) -> Option<i64> {
        match self {
            Int::S(v) => Some(*v),
            Int::D(d) => {
                let mut acc = d.coef;
                for f in d.factors.iter() {
                    acc = acc.checked_mul(f.eval(env)?)?;
                }
                Some(acc)
            }
        }
    }

    pub fn mul(&self, o: &Int) -> Result<Int> {
        Ok(match (self, o) {
            (Int::S(a), Int::S(b)) => Int::S(a.checked_mul(*b).ok_or_else(|| Error::overflow(format!("{a} * {b}")))?),
            (Int::S(0), _) | (_, Int::S(0)) => Int::S(0),
            (Int::S(1), x) | (x, Int::S(1)) => x.clone(),
            (Int::S(k), Int::D(d)) | (Int::D(d), Int::S(k)) => Int::D(Dyn {
                coef: d.coef.checked_mul(*k).ok_or_else(|| Error::overflow(format!("{k} * {}", d.coef)))?,
                factors: d.factors.clone(),
            }),
            (Int::D(a), Int::D(b)) => {
                if self.has_basis() && o.has_basis() {
                    return Err(Error::new(
                        "arithmetic",
                        format!("the product {self} * {o} of two basis elements is not an arithmetic tuple"),
                    ));
                }
                if a.factors.len() + b.factors.len() > MAX_FACTORS {
                    return Err(Error::new(
                        "arithmetic",
                        format!("a product of more than {MAX_FACTORS} run-time values is not supported"),
                    ));
                }
                let mut f: Vec<Atom> = a.factors.iter().chain(b.factors.iter()).cloned().collect();
                f.sort();
                Int::D(Dyn {
                    coef: a
                        .coef
                        .checked_mul(b.coef)
                        .ok_or_else(|| Error::overflow("a product of dynamic coefficients"))?,
                    factors: Arc::from(f),
                })
            }
        })
    }

    pub fn add(&self, o: &Int) -> Result<Int> {
        Ok(match (self, o) {
            (Int::S(a), Int::S(b)) => Int::S(a.checked_add(*b).ok_or_else(|| Error::overflow(format!("{a} + {b}")))?),
            (Int::S(0), x) | (x, Int::S(0)) => x.clone(),
            (a, b) => {
                let (a, b) = if a <= b { (a, b) } else { (b, a) };
                Dyn::atom(Atom::Op(Arc::new(Op::Add(a.clone(), b.clone()))))
            }
        })
    }

    pub fn neg(&self) -> Result<Int> {
        self.mul(&Int::S(-1))
    }

    pub fn sub(&self, o: &Int) -> Result<Int> {
        self.add(&o.neg()?)
    }

    /// `self / o` when the division is known to be exact.
    pub fn exact_div(&self, o: &Int) -> Option<Int> {
        match (self, o) {
            (_, Int::S(0)) => None,
            (x, Int::S(1)) => Some(x.clone()),
            (Int::S(a), Int::S(b)) => {
                if divisible(*a, *b) {
                    a.checked_div(*b).map(Int::S)
                } else {
                    None
                }
            }
            (Int::S(0), _) => Some(Int::S(0)),
            (Int::D(a), Int::S(b)) => {
                if divisible(a.coef, *b) {
                    Some(Int::D(Dyn { coef: a.coef.checked_div(*b)?, factors: a.factors.clone() }))
                } else if a.divisibility() % b == 0 {
                    // Known divisible, but not through the coefficient: keep
                    // the quotient as an (exact) division node.
                    Some(Dyn::atom(Atom::Op(Arc::new(Op::Div(self.clone(), o.clone())))))
                } else {
                    None
                }
            }
            (Int::S(_), Int::D(_)) => None,
            (Int::D(a), Int::D(b)) => {
                if !divisible(a.coef, b.coef) {
                    return None;
                }
                let mut rest: Vec<Atom> = a.factors.to_vec();
                for f in b.factors.iter() {
                    let pos = rest.iter().position(|x| x == f)?;
                    rest.remove(pos);
                }
                let coef = a.coef.checked_div(b.coef)?;
                Some(if rest.is_empty() { Int::S(coef) } else { Int::D(Dyn { coef, factors: Arc::from(rest) }) })
            }
        }
    }

    /// Is `self` known to divide `o`? `None` when it cannot be decided.
    pub fn divides(&self, o: &Int) -> Option<bool> {
        match (self, o) {
            (Int::S(0), Int::S(b)) => Some(*b == 0),
            (Int::S(a), Int::S(b)) => Some(divisible(*b, *a)),
            (Int::S(1), _) | (_, Int::S(0)) => Some(true),
            (Int::S(a), Int::D(d)) => {
                if divisible(d.divisibility(), *a) {
                    Some(true)
                } else {
                    None
                }
            }
            _ => {
                if o.exact_div(self).is_some() {
                    Some(true)
                } else {
                    None
                }
            }
        }
    }

    /// Is `self == o`? `None` when it cannot be decided.
    pub fn known_eq(&self, o: &Int) -> Option<bool> {
        if self == o {
            return Some(true);
        }
        match (self, o) {
            (Int::S(_), Int::S(_)) => Some(false),
            // A scaled basis element (positive scale) is never a plain integer.
            (Int::S(_), Int::D(d)) | (Int::D(d), Int::S(_)) if d.has_basis() => Some(false),
            (Int::D(a), Int::D(b)) if a.has_basis() || b.has_basis() => {
                match (self.as_scaled_basis(), o.as_scaled_basis()) {
                    (Some((ka, pa)), Some((kb, pb))) => {
                        if pa != pb {
                            Some(false)
                        } else {
                            ka.known_eq(&kb)
                        }
                    }
                    (Some(_), None) | (None, Some(_)) if !(a.has_basis() && b.has_basis()) => Some(false),
                    _ => None,
                }
            }
            (Int::S(s), d @ Int::D(_)) | (d @ Int::D(_), Int::S(s)) => {
                // A positive multiple of `div` can only equal s if div | s.
                if *s <= 0 || s % d.divisibility() != 0 {
                    Some(false)
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// Ordering where it is known (dynamic leaves are positive).
    pub fn known_cmp(&self, o: &Int) -> Option<Ordering> {
        match (self, o) {
            (Int::S(a), Int::S(b)) => Some(a.cmp(b)),
            _ if self == o => Some(Ordering::Equal),
            (Int::D(a), Int::D(b)) if a.factors == b.factors => Some(a.coef.cmp(&b.coef)),
            // A product of positive leaves is at least its divisibility.
            (Int::S(s), Int::D(d)) if d.is_positive_product() && *s < d.divisibility() => Some(Ordering::Less),
            (Int::D(d), Int::S(s)) if d.is_positive_product() && *s < d.divisibility() => Some(Ordering::Greater),
            _ => None,
        }
    }

    /// CuTe's `shape_div`: `a / b` rounded up, exact where divisible.
    pub fn ceil_div(&self, o: &Int) -> Result<Int> {
        if o.is(0) {
            return Err(Error::new("arithmetic", format!("division of {self} by zero")));
        }
        if let Some(q) = self.exact_div(o) {
            return Ok(q);
        }
        match (self, o) {
            (Int::S(a), Int::S(b)) => {
                Ok(Int::S(ceil_div_i(*a, *b).ok_or_else(|| Error::overflow(format!("{a} / {b}")))?))
            }
            // a | b with both positive: the quotient rounds up to one.
            (Int::S(a), b) if *a > 0 && b.known_positive() && self.divides(b) == Some(true) => Ok(Int::S(1)),
            _ => Ok(Dyn::atom(Atom::Op(Arc::new(Op::CeilDiv(self.clone(), o.clone()))))),
        }
    }

    /// ceil(a / b) as a value the program computed (the language's `ceil_div`): folded as
    /// [`Int::ceil_div`] folds, else an [`Op::CeilQuot`], which the launch checks do not take for
    /// a tiling's partial tile.
    pub fn ceil_quot(&self, o: &Int) -> Result<Int> {
        let q = self.ceil_div(o)?;
        // Only the division this call made: a folded result (`x / 1` is `x`) may itself be a
        // tiling's count, which keeps its kind.
        let made = Dyn::atom(Atom::Op(Arc::new(Op::CeilDiv(self.clone(), o.clone()))));
        Ok(if q == made { Dyn::atom(Atom::Op(Arc::new(Op::CeilQuot(self.clone(), o.clone())))) } else { q })
    }

    /// floor(a / b).
    pub fn floor_div(&self, o: &Int) -> Result<Int> {
        if o.is(0) {
            return Err(Error::new("arithmetic", format!("division of {self} by zero")));
        }
        if let Some(q) = self.exact_div(o) {
            return Ok(q);
        }
        match (self, o) {
            (Int::S(a), Int::S(b)) => {
                Ok(Int::S(a.checked_div_euclid(*b).ok_or_else(|| Error::overflow(format!("{a} / {b}")))?))
            }
            _ => Ok(Dyn::atom(Atom::Op(Arc::new(Op::Div(self.clone(), o.clone()))))),
        }
    }

    /// a mod b.
    pub fn modulo(&self, o: &Int) -> Result<Int> {
        if o.is(0) {
            return Err(Error::new("arithmetic", format!("{self} modulo zero")));
        }
        if o.divides(self) == Some(true) {
            return Ok(Int::S(0));
        }
        match (self, o) {
            (Int::S(a), Int::S(b)) => {
                Ok(Int::S(a.checked_rem_euclid(*b).ok_or_else(|| Error::overflow(format!("{a} % {b}")))?))
            }
            _ => Ok(Dyn::atom(Atom::Op(Arc::new(Op::Mod(self.clone(), o.clone()))))),
        }
    }

    /// min(a, b), folded where the order is known (a | b with both positive
    /// means a <= b).
    pub fn minimum(&self, o: &Int) -> Int {
        self.extremum(o, false)
    }

    /// max(a, b), folded where the order is known (as [`Int::minimum`]).
    pub fn maximum(&self, o: &Int) -> Int {
        self.extremum(o, true)
    }

    /// min(a, b) of values of either sign (run-time `i32` values, not extents): folded only where
    /// both are constants or equal. [`Int::minimum`] folds on the order it infers taking leaves for
    /// extents (positive): `min(v, 0)` is 0 there, which a loaded or passed `i32` need not be.
    pub fn minimum_signed(&self, o: &Int) -> Int {
        self.extremum_signed(o, false)
    }

    /// max(a, b) of values of either sign, as [`Int::minimum_signed`].
    pub fn maximum_signed(&self, o: &Int) -> Int {
        self.extremum_signed(o, true)
    }

    fn extremum_signed(&self, o: &Int, max: bool) -> Int {
        match (self.as_static(), o.as_static()) {
            (Some(p), Some(q)) => Int::S(if max { p.max(q) } else { p.min(q) }),
            _ if self == o => self.clone(),
            _ => self.extremum_op(o, max),
        }
    }

    fn extremum(&self, o: &Int, max: bool) -> Int {
        let pick = |self_is_smaller: bool| if self_is_smaller != max { self.clone() } else { o.clone() };
        if let Some(ord) = self.known_cmp(o) {
            return pick(ord != Ordering::Greater);
        }
        if self.known_positive() && o.known_positive() {
            if self.divides(o) == Some(true) {
                return pick(true);
            }
            if o.divides(self) == Some(true) {
                return pick(false);
            }
        }
        self.extremum_op(o, max)
    }

    /// min(a, b) or max(a, b) unfolded, its operands in canonical order.
    fn extremum_op(&self, o: &Int, max: bool) -> Int {
        let (a, b) = if self <= o { (self, o) } else { (o, self) };
        let op = if max { Op::Max(a.clone(), b.clone()) } else { Op::Min(a.clone(), b.clone()) };
        Dyn::atom(Atom::Op(Arc::new(op)))
    }

    /// min(max(self, 0), 1): 1 where the value is at least 1, else 0, for leaves of any sign.
    /// Folded only where the value is a constant: [`Int::minimum`] and [`Int::maximum`] fold on
    /// the order they infer taking leaves for extents (positive), which a host function's `i32`
    /// parameters are not (`max(l + 2, 0)` is not `l + 2` for l = -5).
    pub fn indicator_of_positive(&self) -> Int {
        self.maximum_signed(&Int::S(0)).minimum_signed(&Int::S(1))
    }

    /// Whether the value is known to be at least 1: a positive constant, or a positive
    /// coefficient times leaves (run-time extents are positive) and operations that keep
    /// positivity. Not a difference: `M - 131` may be zero or negative at run time (host plans
    /// compute such values), and folding `min(M - 131, 1)` to 1 on "1 divides it" would be wrong.
    pub fn known_positive(&self) -> bool {
        match self {
            Int::S(v) => *v > 0,
            Int::D(d) => d.coef > 0 && d.factors.iter().all(Atom::known_positive),
        }
    }

    pub fn abs(&self) -> Result<Int> {
        match self {
            Int::S(v) => Ok(Int::S(v.checked_abs().ok_or_else(|| Error::overflow(format!("|{v}|")))?)),
            Int::D(d) if d.coef < 0 => self.neg(),
            _ => Ok(self.clone()),
        }
    }

    /// Sign for strides: static sign, or +1 for a dynamic value with positive coefficient.
    pub fn signum(&self) -> i64 {
        match self {
            Int::S(v) => v.signum(),
            Int::D(d) => d.coef.signum(),
        }
    }
}

/// Makes sure the tuple `t` has a leaf at `path` (zero), and sets it to `v`
/// when given.
fn place(t: &mut IntTuple, path: &[u32], v: Option<&Int>) {
    let Some((&i, rest)) = path.split_first() else {
        if let Some(v) = v {
            *t = IntTuple::Int(v.clone());
        }
        return;
    };
    if !t.is_tuple() {
        *t = IntTuple::Tuple(Vec::new());
    }
    if let IntTuple::Tuple(v_) = t {
        let i = i as usize;
        while v_.len() <= i {
            v_.push(IntTuple::Int(Int::ZERO));
        }
        if !rest.is_empty() && !v_[i].is_tuple() {
            v_[i] = IntTuple::Tuple(Vec::new());
        }
        place(&mut v_[i], rest, v);
    }
}

impl Int {
    /// Whether the expression is proven >= 0, knowing which leaves are non-negative (`non_negative`)
    /// and which positive (`positive`): sums, products, minima, quotients by positive values and
    /// (Euclidean) remainders of such.
    pub fn proven_non_negative(&self, non_negative: &dyn Fn(u32) -> bool, positive: &dyn Fn(u32) -> bool) -> bool {
        match self {
            Int::S(c) => *c >= 0,
            Int::D(d) => {
                d.coef >= 0
                    && d.factors.iter().all(|a| match a {
                        Atom::Var { id, .. } => non_negative(*id) || positive(*id),
                        Atom::Basis(_) => false,
                        Atom::Op(op) => match &**op {
                            Op::Add(x, y) | Op::Min(x, y) | Op::Max(x, y) => {
                                x.proven_non_negative(non_negative, positive)
                                    && y.proven_non_negative(non_negative, positive)
                            }
                            Op::Div(x, y) | Op::CeilDiv(x, y) | Op::CeilQuot(x, y) => {
                                x.proven_non_negative(non_negative, positive) && y.proven_positive(positive)
                            }
                            Op::Mod(_, y) => y.proven_positive(positive),
                        },
                    })
            }
        }
    }

    /// Whether the expression is proven > 0: a positive constant times positive leaves.
    pub fn proven_positive(&self, positive: &dyn Fn(u32) -> bool) -> bool {
        match self {
            Int::S(c) => *c > 0,
            Int::D(d) => d.coef > 0 && d.factors.iter().all(|a| matches!(a, Atom::Var { id, .. } if positive(*id))),
        }
    }

    /// The same expression with every leaf `Var { id, div }` replaced by `f(id, div)`, re-simplified
    /// (so `(v*16)/16` with `v` replaced stays exact). Used to rebind an expression parsed from text,
    /// whose leaves are numbered by the parser, to the leaves of the caller.
    pub fn subst(&self, f: &mut dyn FnMut(u32, i64) -> Result<Int>) -> Result<Int> {
        let Int::D(d) = self else { return Ok(self.clone()) };
        let mut acc = Int::S(d.coef);
        for a in d.factors.iter() {
            let x = match a {
                Atom::Var { id, div } => f(*id, *div)?,
                Atom::Basis(_) => Int::D(Dyn { coef: 1, factors: Arc::from(vec![a.clone()]) }),
                Atom::Op(op) => match &**op {
                    Op::Add(x, y) => x.subst(f)?.add(&y.subst(f)?)?,
                    Op::CeilDiv(x, y) => x.subst(f)?.ceil_div(&y.subst(f)?)?,
                    Op::CeilQuot(x, y) => x.subst(f)?.ceil_quot(&y.subst(f)?)?,
                    Op::Div(x, y) => x.subst(f)?.floor_div(&y.subst(f)?)?,
                    Op::Mod(x, y) => x.subst(f)?.modulo(&y.subst(f)?)?,
                    Op::Min(x, y) => x.subst(f)?.minimum(&y.subst(f)?),
                    Op::Max(x, y) => x.subst(f)?.maximum(&y.subst(f)?),
                },
            };
            acc = acc.mul(&x)?;
        }
        Ok(acc)
    }
}

impl fmt::Display for Int {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Int::S(v) => write!(f, "{v}"),
            Int::D(d) if d.has_basis() => {
                if let Some((k, path)) = self.as_scaled_basis() {
                    // CuTe prints E<0,1> scaled by k as k@1@0.
                    write!(f, "{k}")?;
                    for p in path.iter().rev() {
                        write!(f, "@{p}")?;
                    }
                    return Ok(());
                }
                match self.to_arith_tuple(&[]) {
                    Ok(t) => write!(f, "{t}"),
                    Err(_) => write!(f, "?"),
                }
            }
            Int::D(d) => {
                let div = d.divisibility();
                if div > 1 {
                    write!(f, "?{{div={div}}}")
                } else {
                    write!(f, "?")
                }
            }
        }
    }
}

/// The alignment (bytes, a power of two) of `base + offset` elements of `elem_bytes` each when `base`
/// is `base_align`-aligned: the base's, unless the offset (a number, or its known divisibility)
/// proves less. The front end types views with it and cute-verify checks their types with it.
pub fn offset_alignment(base_align: u32, offset: &Int, elem_bytes: u32) -> u32 {
    let div = match offset.as_static() {
        Some(v) => v,
        None => offset.divisibility(),
    };
    match div.checked_mul(i64::from(elem_bytes)) {
        Some(0) | None => base_align,
        Some(bytes) => (1u32 << bytes.unsigned_abs().trailing_zeros().min(31)).min(base_align),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `minimum_signed`/`maximum_signed` (and the indicator built on them) hold for leaves of any
    /// sign, where `minimum`/`maximum` fold on the positivity of extents.
    #[test]
    fn signed_extrema_hold_for_negative_leaves() {
        let v = Int::var(0, 1);
        for x in -6..=6 {
            let at = |i: &Int| i.eval(&|_| Some(x)).unwrap();
            assert_eq!(at(&v.maximum_signed(&Int::S(0))), x.max(0), "max({x}, 0)");
            assert_eq!(at(&v.minimum_signed(&Int::S(0))), x.min(0), "min({x}, 0)");
            let w = v.mul(&Int::S(2)).unwrap();
            assert_eq!(at(&w.maximum_signed(&v)), (2 * x).max(x), "max(2·{x}, {x})");
            let shifted = v.add(&Int::S(3)).unwrap();
            assert_eq!(at(&shifted.indicator_of_positive()), i64::from(x + 3 >= 1), "[{x} + 3 >= 1]");
        }
        // Extents keep their folds: max(M, 0) is M for a run-time extent M >= 1.
        assert_eq!(v.maximum(&Int::S(0)), v);
    }

    #[test]
    fn subst_rebinds_and_simplifies() {
        let v = Int::var(0, 1);
        let e = v.mul(&Int::S(16)).unwrap().floor_div(&Int::S(4)).unwrap();
        let w = Int::var(7, 2);
        let r = e.subst(&mut |id, _| Ok(if id == 0 { w.clone() } else { Int::var(id, 1) })).unwrap();
        assert_eq!(r, w.mul(&Int::S(4)).unwrap());
        let s = e.subst(&mut |_, _| Ok(Int::S(3))).unwrap();
        assert_eq!(s, Int::S(12));
    }

    #[test]
    fn constants_within_sees_coefficients_and_operation_constants() {
        let (lo, hi) = (i64::from(i32::MIN), i64::from(i32::MAX));
        let v = Int::var(0, 1);
        assert!(v.mul(&Int::S(lo)).unwrap().constants_within(lo, hi));
        assert!(!v.mul(&Int::S(hi + 1)).unwrap().constants_within(lo, hi));
        // A constant inside an unfolded sum, and one inside a remainder.
        let w = Int::var(1, 1);
        assert!(!v.mul(&w).unwrap().add(&Int::S(1 << 40)).unwrap().constants_within(lo, hi));
        assert!(!v.modulo(&Int::S(1 << 40)).unwrap().constants_within(lo, hi));
        assert!(v.modulo(&Int::S(7)).unwrap().constants_within(lo, hi));
    }

    #[test]
    fn static_arithmetic_is_checked() {
        assert_eq!(Int::S(6).mul(&Int::S(7)).unwrap(), Int::S(42));
        assert!(Int::S(i64::MAX).mul(&Int::S(2)).is_err());
        assert!(Int::S(i64::MAX).add(&Int::S(1)).is_err());
        assert_eq!(Int::S(7).ceil_div(&Int::S(2)).unwrap(), Int::S(4));
        assert!(Int::S(7).ceil_div(&Int::S(0)).is_err());
    }

    #[test]
    fn dynamic_values_print_with_divisibility() {
        let x = Int::var(0, 1);
        assert_eq!(x.to_string(), "?");
        assert_eq!(x.mul(&Int::S(3)).unwrap().to_string(), "?{div=3}");
        let y = Int::var(1, 8);
        assert_eq!(y.to_string(), "?{div=8}");
        assert_eq!(y.mul(&Int::S(2)).unwrap().to_string(), "?{div=16}");
        assert_eq!(y.add(&Int::S(4)).unwrap().to_string(), "?{div=4}");
    }

    #[test]
    fn products_are_canonical() {
        let a = Int::var(0, 1);
        let b = Int::var(1, 1);
        let ab = a.mul(&b).unwrap();
        let ba = b.mul(&a).unwrap();
        assert_eq!(ab, ba);
        assert_eq!(ab.exact_div(&a), Some(b.clone()));
        assert_eq!(Int::S(192).mul(&a).unwrap().known_eq(&a.mul(&Int::S(192)).unwrap()), Some(true));
        assert_eq!(a.known_eq(&b), None);
        assert_eq!(Int::var(2, 8).known_eq(&Int::S(12)), Some(false));
    }

    #[test]
    fn differences_are_not_taken_for_positive_extents() {
        // min(M - 131, 1) is M - 131 when M < 132: no folding to 1 on "1 divides it".
        let m = Int::var(0, 1);
        let d = m.add(&Int::S(-131)).unwrap();
        assert!(!d.known_positive());
        let lo = d.minimum(&Int::S(1));
        assert!(!lo.is_static());
        assert_eq!(lo.eval(&|_| Some(100)), Some(-31));
        assert_eq!(lo.eval(&|_| Some(200)), Some(1));
        assert!(!Int::S(1).ceil_div(&d).unwrap().is_static());
        // Sums, quotients rounded up and minima of extents stay positive.
        let n = Int::var(1, 8);
        assert!(m.add(&n).unwrap().known_positive());
        assert!(m.ceil_div(&Int::S(128)).unwrap().known_positive());
        assert!(!m.floor_div(&Int::S(128)).unwrap().known_positive());
    }

    #[test]
    fn ceil_quot_folds_as_ceil_div_and_keeps_its_kind() {
        let x = Int::var(1, 4);
        assert_eq!(Int::S(7).ceil_quot(&Int::S(2)).unwrap(), Int::S(4));
        assert_eq!(x.ceil_quot(&Int::S(4)).unwrap(), x.exact_div(&Int::S(4)).unwrap()); // exact: folded
        let q = x.ceil_quot(&Int::S(128)).unwrap();
        let Int::D(d) = &q else { panic!("{q}") };
        assert!(matches!(&d.factors[0], Atom::Op(op) if matches!(&**op, Op::CeilQuot(..))));
        assert_eq!(q.eval(&|_| Some(300)), Some(3));
        // A padded extent: a multiple of the divisor, exactly divisible again.
        let padded = q.mul(&Int::S(128)).unwrap();
        assert_eq!(padded.divisibility(), 128);
        assert_eq!(padded.ceil_div(&Int::S(128)).unwrap(), q);
        // A tiling's count divided by 1 stays the tiling's (its partial tile is still checked).
        let tiles = x.ceil_div(&Int::S(128)).unwrap();
        assert_eq!(tiles.ceil_quot(&Int::S(1)).unwrap(), tiles);
    }

    #[test]
    fn min_and_ceil_div_fold_on_divisibility() {
        let x = Int::var(0, 16);
        assert_eq!(Int::S(4).minimum(&x), Int::S(4));
        assert_eq!(Int::S(4).ceil_div(&x).unwrap(), Int::S(1));
        assert_eq!(x.ceil_div(&Int::S(4)).unwrap().to_string(), "?{div=4}");
        let y = Int::var(1, 1);
        let m = Int::S(4).minimum(&y);
        assert!(!m.is_static());
        let env = |id: u32| Some(if id == 0 { 32 } else { 3 });
        assert_eq!(m.eval(&env), Some(3));
        assert_eq!(Int::S(8).ceil_div(&y).unwrap().eval(&env), Some(3));
        // max folds the same ways, the other way round, and stays exact when it cannot.
        assert_eq!(Int::S(4).maximum(&x), x);
        assert_eq!(Int::S(2).maximum(&Int::S(7)), Int::S(7));
        let big = Int::S(4).maximum(&y);
        assert!(!big.is_static());
        assert_eq!(big.eval(&env), Some(4));
        assert_eq!(big.eval(&|_| Some(9)), Some(9));
        let sub = big.subst(&mut |_, _| Ok(Int::S(5))).unwrap();
        assert_eq!(sub, Int::S(5));
    }
}
