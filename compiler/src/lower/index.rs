//! Symbolic index expressions (`cute_layout::Int`) as `arith` ops: memoized per region, unsigned
//! where operands are proven non-negative, Euclidean division otherwise, and division by a run-time
//! divisor through the multiplier and shift the runtime computes (design.md (n)).

use super::{v, KernelWriter};
use cute_lang::diag::Diagnostic;
use cute_lang::kir::{ValueId, ValueTy};
use cute_lang::span::Span;
use cute_lang::types::Scalar;
use cute_layout::int::{Atom, Dyn, Op};
use cute_layout::Int;
use std::sync::Arc;

/// Which result of [`euclid`].
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Euclid {
    Quotient,
    Remainder,
}

/// Euclidean quotient or remainder of signed `x` by `y` (of type `ty`, a scalar or vector type):
/// r = x rem y, plus |y| when negative; q = (x - r) / y, which is exact. The last op defines `dst`
/// when given (else a temporary); returns its name.
pub(super) fn euclid(
    w: &mut KernelWriter,
    ty: &str,
    x: &str,
    y: &str,
    want: Euclid,
    dst: Option<ValueId>,
    span: Span,
) -> String {
    let is_vec = ty.starts_with("vector<");
    let elem =
        if is_vec { ty.trim_end_matches('>').rsplit('x').next().unwrap_or("i32").to_string() } else { ty.to_string() };
    let zero = if is_vec {
        w.op(&format!("arith.constant dense<0> : {ty}"), span)
    } else {
        w.op(&format!("arith.constant 0 : {elem}"), span)
    };
    let r0 = w.op(&format!("arith.remsi {x}, {y} : {ty}"), span);
    let neg = w.op(&format!("arith.cmpi slt, {r0}, {zero} : {ty}"), span);
    // |y| without math.absi (which would need libdevice): max(y, 0 - y).
    let neg_y = w.op(&format!("arith.subi {zero}, {y} : {ty}"), span);
    let abs_y = w.op(&format!("arith.maxsi {y}, {neg_y} : {ty}"), span);
    let fixed = w.op(&format!("arith.addi {r0}, {abs_y} : {ty}"), span);
    let cond_ty = if is_vec { format!("{}, ", ty.replace(&elem, "i1")) } else { String::new() };
    let select = format!("arith.select {neg}, {fixed}, {r0} : {cond_ty}{ty}");
    if want == Euclid::Remainder {
        return w.last(dst, &select, span);
    }
    let r = w.op(&select, span);
    let diff = w.op(&format!("arith.subi {x}, {r} : {ty}"), span);
    w.last(dst, &format!("arith.divsi {diff}, {y} : {ty}"), span)
}

impl KernelWriter<'_> {
    /// The SSA name holding an index expression, computing it here if no enclosing region has.
    pub(super) fn int(&mut self, i: &Int, span: Span) -> String {
        if let Some(name) = self.memo.iter().rev().find_map(|m| m.get(i)) {
            return name.clone();
        }
        let name = match i {
            Int::S(c) => self.op(&format!("arith.constant {c} : {}", self.ix), span),
            Int::D(d) => {
                let mut acc: Option<String> = None;
                for a in d.factors.iter() {
                    let x = self.atom(a, span);
                    acc = Some(match acc {
                        None => x,
                        Some(p) => self.op(&format!("arith.muli {p}, {x} : {}", self.ix), span),
                    });
                }
                let acc = acc.unwrap_or_else(|| self.int(&Int::S(1), span));
                if d.coef == 1 {
                    acc
                } else {
                    let c = self.int(&Int::S(d.coef), span);
                    self.op(&format!("arith.muli {acc}, {c} : {}", self.ix), span)
                }
            }
        };
        if let Some(m) = self.memo.last_mut() {
            m.insert(i.clone(), name.clone());
        }
        name
    }

    /// The SSA name of one factor. Compound factors are memoized like whole expressions, so
    /// `tid / n` used in several offsets is computed once.
    pub(super) fn atom(&mut self, a: &Atom, span: Span) -> String {
        let op = match a {
            Atom::Var { id, .. } if self.ix == "i32" || self.wide_values.contains(id) => return v(*id),
            Atom::Var { id, .. } => return self.widened(*id, a, span),
            Atom::Op(op) => op.clone(),
            other => {
                // Basis elements (identity layouts) are coordinates, never run-time integers here.
                self.errors.push(Diagnostic::error(
                    format!("cannot compute `{other:?}` at run time"),
                    span,
                    "unsupported index expression",
                ));
                return self.int(&Int::S(0), span);
            }
        };
        let key = Int::D(Dyn { coef: 1, factors: Arc::from(vec![a.clone()]) });
        if let Some(name) = self.memo.iter().rev().find_map(|m| m.get(&key)) {
            return name.clone();
        }
        if let Op::Div(x, y) | Op::Mod(x, y) = &*op {
            if let Some(k) = self.fast_divisor(y) {
                let q = self.fast_quotient(x, y, k, span);
                let result = if matches!(&*op, Op::Div(..)) {
                    q
                } else {
                    // The Euclidean remainder x - floor(x / y) * y, in 0..y for y > 0.
                    let (xs, ys) = (self.int(x, span), self.int(y, span));
                    let p = self.op(&format!("arith.muli {q}, {ys} : i32"), span);
                    self.op(&format!("arith.subi {xs}, {p} : i32"), span)
                };
                if let Some(m) = self.memo.last_mut() {
                    m.insert(key, result.clone());
                }
                return result;
            }
        }
        // The algebra's division is Euclidean (the remainder is never negative). Where both
        // operands are proven non-negative (coordinates, extents, thread indices) the cheaper
        // unsigned operations are exact; otherwise the signed Euclidean forms are built.
        let unsigned = match &*op {
            Op::Div(x, y) | Op::Mod(x, y) | Op::CeilDiv(x, y) | Op::CeilQuot(x, y) => {
                self.non_negative(x) && self.positive(y)
            }
            _ => false,
        };
        let result = match (&*op, unsigned) {
            (Op::Add(x, y), _) => {
                let (x, y) = (self.int(x, span), self.int(y, span));
                self.op(&format!("arith.addi {x}, {y} : {}", self.ix), span)
            }
            (Op::Min(x, y), _) => {
                let (x, y) = (self.int(x, span), self.int(y, span));
                self.op(&format!("arith.minsi {x}, {y} : {}", self.ix), span)
            }
            (Op::Max(x, y), _) => {
                let (x, y) = (self.int(x, span), self.int(y, span));
                self.op(&format!("arith.maxsi {x}, {y} : {}", self.ix), span)
            }
            (Op::Div(x, y), true) | (Op::Mod(x, y), true) | (Op::CeilDiv(x, y) | Op::CeilQuot(x, y), true) => {
                let name = match &*op {
                    Op::Div(..) => "divui",
                    Op::Mod(..) => "remui",
                    _ => "ceildivui",
                };
                let (x, y) = (self.int(x, span), self.int(y, span));
                self.op(&format!("arith.{name} {x}, {y} : {}", self.ix), span)
            }
            (Op::CeilDiv(x, y) | Op::CeilQuot(x, y), false) => {
                let (x, y) = (self.int(x, span), self.int(y, span));
                self.op(&format!("arith.ceildivsi {x}, {y} : {}", self.ix), span)
            }
            (Op::Div(x, y), false) => {
                let (x, y) = (self.int(x, span), self.int(y, span));
                euclid(self, self.ix, &x, &y, Euclid::Quotient, None, span)
            }
            (Op::Mod(x, y), false) => {
                let (x, y) = (self.int(x, span), self.int(y, span));
                euclid(self, self.ix, &x, &y, Euclid::Remainder, None, span)
            }
        };
        if let Some(m) = self.memo.last_mut() {
            m.insert(key, result.clone());
        }
        result
    }

    /// The position of `y` among the kernel's run-time divisors when division by it goes through a
    /// multiplier and a shift the runtime computes: `y` is proven positive, not static (LLVM
    /// divides by constants itself), and an expression over the kernel's parameters only (the
    /// runtime evaluates it at launch, `$k` as in `require` lines). A 64-bit kernel divides with
    /// plain 64-bit division: the multiplier and shift are exact for dividends below 2^31 only.
    pub(super) fn fast_divisor(&mut self, y: &Int) -> Option<usize> {
        if self.ix != "i32" || y.as_static().is_some() || !self.positive(y) {
            return None;
        }
        let text = crate::plan::expr_text(y, &self.vars)?;
        Some(match self.fast_divisors.iter().position(|t| *t == text) {
            Some(k) => k,
            None => {
                self.fast_divisors.push(text);
                self.fast_divisors.len() - 1
            }
        })
    }

    /// floor(x / y) for `y` the kernel's fast divisor `k` (multiplier `%fdmK`, shift `%fdsK`:
    /// m = ceil(2^(31+l) / y), l = ceil(log2 y)): for 0 <= n < 2^31, n / y = mulhi(2n, m) >> l
    /// (design.md (n)). A dividend not proven non-negative is folded first: with s = x >> 31 (all
    /// ones when x < 0), floor(x / y) = (floor((x ^ s) / y)) ^ s, since x ^ s = -x - 1 >= 0 then.
    /// Memoized as `x / y`, so `x % y` next to it reuses the quotient.
    pub(super) fn fast_quotient(&mut self, x: &Int, y: &Int, k: usize, span: Span) -> String {
        let key = Int::D(Dyn { coef: 1, factors: Arc::from(vec![Atom::Op(Arc::new(Op::Div(x.clone(), y.clone())))]) });
        if let Some(name) = self.memo.iter().rev().find_map(|m| m.get(&key)) {
            return name.clone();
        }
        let xs = self.int(x, span);
        let sign = if self.non_negative(x) {
            None
        } else {
            let c31 = self.int(&Int::S(31), span);
            Some(self.op(&format!("arith.shrsi {xs}, {c31} : i32"), span))
        };
        let n = match &sign {
            Some(s) => self.op(&format!("arith.xori {xs}, {s} : i32"), span),
            None => xs,
        };
        let one = self.int(&Int::S(1), span);
        let n2 = self.op(&format!("arith.shli {n}, {one} : i32"), span);
        let wide = self.tmp();
        let loc = self.loc(span);
        self.line(&format!("{wide}:2 = arith.mului_extended {n2}, %fdm{k} : i32 {loc}"));
        let q = self.op(&format!("arith.shrui {wide}#1, %fds{k} : i32"), span);
        let q = match &sign {
            Some(s) => self.op(&format!("arith.xori {q}, {s} : i32"), span),
            None => q,
        };
        if let Some(m) = self.memo.last_mut() {
            m.insert(key, q.clone());
        }
        q
    }

    /// An `i32` value used as an index integer of a 64-bit kernel: zero-extended when it is proven
    /// non-negative (thread and block indices, which PTX keeps in 32-bit registers) or unsigned,
    /// sign-extended otherwise; once per region, like any factor.
    fn widened(&mut self, id: ValueId, a: &Atom, span: Span) -> String {
        let key = Int::D(Dyn { coef: 1, factors: Arc::from(vec![a.clone()]) });
        if let Some(name) = self.memo.iter().rev().find_map(|m| m.get(&key)) {
            return name.clone();
        }
        let ty = self.k.value_types.get(id as usize);
        if matches!(ty, Some(ValueTy::Scalar(Scalar::I64 | Scalar::U64))) {
            return v(id);
        }
        let unsigned = self.non_negative_values.contains(&id) || matches!(ty, Some(ValueTy::Scalar(Scalar::U32)));
        let ext = if unsigned { "extui" } else { "extsi" };
        let name = self.op(&format!("arith.{ext} {} : i32 to {}", v(id), self.ix), span);
        if let Some(m) = self.memo.last_mut() {
            m.insert(key, name.clone());
        }
        name
    }

    /// An index integer as an `i32` operand (shared-memory offsets, TMA coordinates, shuffle
    /// lanes, which PTX takes in 32 bits): a 64-bit kernel's value truncated.
    pub(super) fn int32(&mut self, i: &Int, span: Span) -> String {
        if self.ix == "i32" {
            return self.int(i, span);
        }
        if let Some(c) = i.as_static() {
            return self.op(&format!("arith.constant {c} : i32"), span);
        }
        let x = self.int(i, span);
        self.op(&format!("arith.trunci {x} : {} to i32", self.ix), span)
    }

    /// Whether an index expression is provably >= 0: built from non-negative values (thread and
    /// block indices, extents and strides, loop counters from a non-negative start) with
    /// non-negative constants.
    pub(super) fn non_negative(&self, i: &Int) -> bool {
        i.proven_non_negative(&|id| self.non_negative_values.contains(&id), &|id| self.positive_values.contains(&id))
    }

    pub(super) fn positive(&self, i: &Int) -> bool {
        i.proven_positive(&|id| self.positive_values.contains(&id))
    }
}
