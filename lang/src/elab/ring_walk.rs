//! The program-order walk the ring rules share (docs/language.md §8.8, "Checked rings"): it
//! follows one thread's path through a kernel's statements, keeping the integer values it can
//! name, and hands every other instruction to a [`Visitor`] (rule (c), ring_phase.rs; rule (d),
//! ring_release.rs) with those values at hand.
//!
//! Values are followed exactly where they are known: a `let mut` counter set to a constant holds
//! it, a copy (`prev = stage`) is the copied value, arithmetic on constants is a constant, and a
//! condition the walk can decide (`index == STAGES` on a known index, `kt > 0` on a loop index)
//! takes its one branch. A read of a counter the walk does not know stands for every read of the
//! same value (the reads with no write between); such values are symbols, and the walk compares
//! linear expressions of them. An `if` it cannot decide is walked both ways, and what holds after
//! it is what holds after both (a counter written differently on the two is a new symbol).
//!
//! A loop is walked as the visitor asks ([`Trips`]): twice, the first trip at the lower bound and
//! the second a later one (past it), so that what one trip leaves behind is seen by the next; or
//! its first trips one by one with their indices, to see a ring wrap.

use crate::kir::{At, BinaryOp, CmpOp, Inst, Kernel, Operand, ValueId};
use crate::span::Span;
use crate::types::MemSpace;
use cute_layout::int::{Atom, Op};
use cute_layout::Int;
use std::collections::{BTreeMap, HashMap};

/// A value as the walk sees it: an expression over its own symbols, or a value it does not
/// follow (where it comes from).
pub(super) type Followed = Result<Int, Span>;

/// How many trips of a loop the walk takes.
pub(super) enum Trips {
    /// The first trip (index at the lower bound) and one later trip (index past it).
    Twice,
    /// The first `n` trips, each with its index, where the bounds are compile-time values (then
    /// a loop of at most `n` trips is walked whole); else as [`Trips::Twice`].
    First(usize),
}

/// What a rule does with the instructions the walk does not follow itself.
pub(super) trait Visitor {
    /// The rule's state along one path, beside the register cells.
    type State: Clone + Default;
    /// What holds after either of two paths (`a`, made from `b`'s).
    fn meet(&mut self, a: &mut Self::State, b: &Self::State);
    /// An instruction that is neither control flow nor a value the walk follows.
    fn inst(&mut self, vals: &Values, i: &Inst, st: &mut Self::State);
    /// Whether the rule looks at what an `if` with these branches guards: where it does not (no
    /// instruction of the rule's in either), the walk follows the branches' values without
    /// [`Visitor::enter`] and [`Visitor::leave`].
    fn watches(&self, _then: &[Inst], _els: &[Inst]) -> bool {
        true
    }
    /// Entering (`taken`: the then branch) and leaving a branch of an `if` the walk cannot decide.
    fn enter(&mut self, _cond: &Operand, _span: Span, _taken: bool) {}
    fn leave(&mut self) {}
    /// How to walk a loop with this body.
    fn trips(&self, _body: &[Inst]) -> Trips {
        Trips::Twice
    }
}

/// One path's register cells: each cell's version (a fresh number per write) and, when the last
/// write stored a value the walk names, that value.
type Cells = HashMap<(ValueId, String), (u32, Option<Int>)>;

#[derive(Clone, Default)]
struct Path<S> {
    cells: Cells,
    rule: S,
}

/// The values the walk names.
#[derive(Default)]
pub(super) struct Values {
    params: Vec<ValueId>,
    /// What each value is where the walk last defined it, over the walk's symbols.
    syms: HashMap<ValueId, Int>,
    /// The first read of each cell version: later reads of the version are the same value.
    first_read: HashMap<(ValueId, String, u32), Int>,
    /// The least value of each symbol that stands for a loop index after the loop's first trip.
    lower: HashMap<u32, i64>,
    fresh: u32,
}

/// Symbols are numbered above every value id, so that a parameter keeps its own id.
const SYMBOLS: u32 = 1 << 30;

/// Walks kernel `k`'s body with `v`.
pub(super) fn walk<V: Visitor>(k: &Kernel, v: &mut V) {
    let mut vals = Values::default();
    for p in &k.params {
        vals.params.push(p.value);
        if let crate::kir::ParamKind::Tensor { dyn_leaves, .. } = &p.kind {
            vals.params.extend(dyn_leaves);
        }
    }
    let mut path = Path::default();
    Walker { vals, v }.block(&k.body, &mut path);
}

impl Values {
    fn fresh(&mut self) -> u32 {
        self.fresh += 1;
        self.fresh
    }

    /// A new symbol, standing for a value not known to equal any other.
    fn symbol(&mut self) -> Int {
        Int::var(SYMBOLS + self.fresh(), 1)
    }

    /// `i` over the walk's symbols, or `span` where it reads a value the walk does not follow.
    pub(super) fn canon(&self, i: &Int, span: Span) -> Followed {
        i.subst(&mut |id, div| match self.syms.get(&id) {
            Some(s) => Ok(s.clone()),
            None if self.params.contains(&id) => Ok(Int::var(id, div)),
            None => Err(cute_layout::Error::new("canon", "not followed")),
        })
        .map_err(|_| span)
    }

    /// What an integer or bool operand is over the walk's symbols; `None` when not followed.
    pub(super) fn value(&self, o: &Operand) -> Option<Int> {
        match o {
            Operand::Value(v) => match self.syms.get(v) {
                Some(s) => Some(s.clone()),
                None => self.params.contains(v).then(|| Int::var(*v, 1)),
            },
            Operand::Int(i) => self.canon(i, Span::default()).ok(),
            Operand::Bool(b) => Some(Int::S(i64::from(*b))),
            Operand::Float(_) => None,
        }
    }

    /// `dst`, computed from `operands`: a new symbol when the walk follows them all.
    fn derived(&mut self, dst: ValueId, operands: &[&Operand]) {
        let followed = operands.iter().all(|o| matches!(o, Operand::Float(_)) || self.value(o).is_some());
        if followed {
            let s = self.symbol();
            self.syms.insert(dst, s);
        } else {
            self.syms.remove(&dst);
        }
    }

    /// `dst = a op b`: a constant on constants, a sum or product of what the walk follows, or a
    /// new symbol.
    fn arith(&mut self, dst: ValueId, op: BinaryOp, a: &Operand, b: &Operand) {
        let (Some(x), Some(y)) = (self.value(a), self.value(b)) else {
            self.syms.remove(&dst);
            return;
        };
        let v = match (x.as_static(), y.as_static(), op) {
            (Some(p), Some(q), _) => super::ring_threads::binary(op, p, q).map(Int::S),
            (_, _, BinaryOp::Add) => x.add(&y).ok(),
            (_, _, BinaryOp::Sub) => x.sub(&y).ok(),
            (_, _, BinaryOp::Mul) => x.mul(&y).ok(),
            _ => None,
        };
        let v = v.unwrap_or_else(|| self.symbol());
        self.syms.insert(dst, v);
    }

    /// `dst = a op b` on integers: 0 or 1 where the walk decides it.
    fn compare(&mut self, dst: ValueId, op: CmpOp, a: &Operand, b: &Operand) {
        let (Some(x), Some(y)) = (self.value(a), self.value(b)) else {
            self.syms.remove(&dst);
            return;
        };
        let v = match self.decide(op, &x, &y) {
            Some(holds) => Int::S(i64::from(holds)),
            None => self.symbol(),
        };
        self.syms.insert(dst, v);
    }

    /// Whether `a op b` holds, where the walk can tell: `a - b` is a constant, or is bounded on
    /// one side by the loop indices it reads (each past its loop's lower bound after the first trip).
    pub(super) fn decide(&self, op: CmpOp, a: &Int, b: &Int) -> Option<bool> {
        let (terms, c) = linear(&a.sub(b).ok()?)?;
        let (mut lo, mut hi) = (Some(c), Some(c));
        for (id, k) in terms {
            let least = self.lower.get(&id).map(|l| k.checked_mul(*l));
            let (up, down) = if k > 0 { (&mut lo, &mut hi) } else { (&mut hi, &mut lo) };
            *up = match (*up, least) {
                (Some(u), Some(Some(l))) => u.checked_add(l),
                _ => None,
            };
            *down = None;
        }
        let below = |v: i64| hi.is_some_and(|h| h < v);
        let above = |v: i64| lo.is_some_and(|l| l > v);
        let at = lo.is_some() && lo == hi && lo == Some(0);
        match op {
            CmpOp::Eq if at => Some(true),
            CmpOp::Eq if below(0) || above(0) => Some(false),
            CmpOp::Ne => self.decide(CmpOp::Eq, a, b).map(|e| !e),
            CmpOp::Lt if below(0) => Some(true),
            CmpOp::Lt if above(-1) => Some(false),
            CmpOp::Le if below(1) => Some(true),
            CmpOp::Le if above(0) => Some(false),
            CmpOp::Gt | CmpOp::Ge => self.decide(if op == CmpOp::Gt { CmpOp::Lt } else { CmpOp::Le }, b, a),
            _ => None,
        }
    }

    /// The instructions that define values: whether `i` was one.
    fn define<S>(&mut self, i: &Inst, path: &mut Path<S>) -> bool {
        match i {
            Inst::Load { dst, tensor, ty, at, .. } if ty.space == MemSpace::Rmem => {
                let key = (*tensor, at_key(at));
                let (version, known) = path.cells.entry(key.clone()).or_insert((0, None)).clone();
                let sym = match known {
                    Some(s) => s,
                    None => match self.first_read.get(&(key.0, key.1.clone(), version)) {
                        Some(s) => s.clone(),
                        None => {
                            let s = self.symbol();
                            self.first_read.insert((key.0, key.1, version), s.clone());
                            s
                        }
                    },
                };
                self.syms.insert(*dst, sym);
            }
            Inst::Special { dst, .. } => {
                let s = self.symbol();
                self.syms.insert(*dst, s);
            }
            // Arithmetic on followed values is a new value; on anything else (a value loaded from
            // memory) it is not followed.
            Inst::Binary { dst, op, a, b, frag: None, .. } => self.arith(*dst, *op, a, b),
            Inst::Cmp { dst, op, a, b, frag: None, .. } => self.compare(*dst, *op, a, b),
            Inst::Not { dst, a, ty: crate::types::Scalar::Bool, frag: None, .. } => {
                match self.value(a).and_then(|v| v.as_static()) {
                    Some(v) => {
                        self.syms.insert(*dst, Int::S(i64::from(v == 0)));
                    }
                    None => self.derived(*dst, &[a]),
                }
            }
            Inst::Convert { dst, a, to, frag: None, .. } if !to.is_float() => match self.value(a) {
                Some(v) => {
                    self.syms.insert(*dst, v);
                }
                None => {
                    self.syms.remove(dst);
                }
            },
            Inst::Not { dst, a, frag: None, .. } | Inst::Convert { dst, a, frag: None, .. } => self.derived(*dst, &[a]),
            Inst::Select { dst, c, a, b, frag: None, .. } => self.derived(*dst, &[c, a, b]),
            Inst::Load { dst, .. } => {
                self.syms.remove(dst);
            }
            Inst::Store { value, tensor, at, .. } => {
                // A copy of a followed value (`prev = stage`) is that value, a constant that
                // constant.
                let known = self.value(value);
                let version = self.fresh();
                path.cells.insert((*tensor, at_key(at)), (version, known));
            }
            Inst::StoreFrag { tensor, .. } => {
                let keys: Vec<_> = path.cells.keys().filter(|(t, _)| t == tensor).cloned().collect();
                for key in keys {
                    let version = self.fresh();
                    path.cells.insert(key, (version, None));
                }
            }
            _ => return false,
        }
        true
    }
}

struct Walker<'v, V> {
    vals: Values,
    v: &'v mut V,
}

impl<V: Visitor> Walker<'_, V> {
    fn block(&mut self, insts: &[Inst], path: &mut Path<V::State>) {
        for i in insts {
            self.inst(i, path);
        }
    }

    /// What holds after either of two paths: the rule's meet, and cells equal on both.
    fn meet(&mut self, a: &mut Path<V::State>, b: &Path<V::State>) {
        self.v.meet(&mut a.rule, &b.rule);
        let keys: Vec<_> = a.cells.keys().chain(b.cells.keys()).cloned().collect();
        for key in keys {
            if a.cells.get(&key) != b.cells.get(&key) {
                let version = self.vals.fresh();
                a.cells.insert(key, (version, None));
            }
        }
    }

    fn inst(&mut self, i: &Inst, path: &mut Path<V::State>) {
        if self.vals.define(i, path) {
            return;
        }
        match i {
            Inst::If { cond, then, els, span } => {
                if let Some(taken) = self.vals.value(cond).and_then(|c| c.as_static()) {
                    return self.block(if taken != 0 { then } else { els }, path);
                }
                let mut other = path.clone();
                let watched = self.v.watches(then, els);
                for (branch, taken, path) in [(then, true, &mut *path), (els, false, &mut other)] {
                    if watched {
                        self.v.enter(cond, *span, taken);
                    }
                    self.block(branch, path);
                    if watched {
                        self.v.leave();
                    }
                }
                self.meet(path, &other);
            }
            Inst::For { iv, lb, ub, step, body, exit, .. } => {
                let entry = path.clone();
                let trip = |w: &mut Self, index: Int, path: &mut Path<V::State>| {
                    w.vals.syms.insert(*iv, index);
                    if let Some(c) = exit {
                        w.block(&c.insts, path);
                    }
                    w.block(body, path);
                };
                let bounds = (lb.as_static(), ub.as_static(), step.as_static());
                if let (Trips::First(n), (Some(lb), ub, Some(step))) = (self.v.trips(body), bounds) {
                    if step > 0 {
                        let all = ub.map(|ub| usize::try_from(((ub - lb).max(0) + step - 1) / step).unwrap_or(0));
                        for k in 0..all.map_or(n, |a| a.min(n)) {
                            trip(self, Int::S(lb + step * k as i64), path);
                        }
                        if all.is_none_or(|a| a > n) {
                            self.meet(path, &entry);
                        }
                        return;
                    }
                }
                let lb = self.vals.value(&Operand::Int(lb.clone()));
                for k in 0..2 {
                    // The first trip's index is the lower bound; a later one's is past it.
                    let s = match (&lb, k) {
                        (Some(l), 0) => l.clone(),
                        _ => self.vals.symbol(),
                    };
                    if let (Some(l), Some(step), Some(id), 1) =
                        (lb.as_ref().and_then(Int::as_static), bounds.2, symbol_id(&s), k)
                    {
                        if step > 0 {
                            self.vals.lower.insert(id, l.saturating_add(step));
                        }
                    }
                    trip(self, s, path);
                }
                self.meet(path, &entry);
            }
            Inst::While { cond, body, .. } => {
                let entry = path.clone();
                let n = match self.v.trips(body) {
                    Trips::Twice => 2,
                    Trips::First(n) => n,
                };
                for _ in 0..n {
                    self.block(&cond.insts, path);
                    self.block(body, path);
                }
                self.block(&cond.insts, path);
                self.meet(path, &entry);
            }
            _ => self.v.inst(&self.vals, i, &mut path.rule),
        }
    }
}

/// `i` as a sum of symbols times coefficients plus a constant; `None` for anything else
/// (products of symbols, divisions, remainders).
fn linear(i: &Int) -> Option<(BTreeMap<u32, i64>, i64)> {
    let Int::D(d) = i else { return Some((BTreeMap::new(), i.as_static()?)) };
    let [factor] = &d.factors[..] else { return None };
    let (mut terms, c) = match factor {
        Atom::Var { id, .. } => (BTreeMap::from([(*id, 1)]), 0),
        Atom::Op(op) => match &**op {
            Op::Add(x, y) => {
                let ((mut t, a), (u, b)) = (linear(x)?, linear(y)?);
                for (id, k) in u {
                    *t.entry(id).or_insert(0) += k;
                }
                (t, a.checked_add(b)?)
            }
            _ => return None,
        },
        Atom::Basis(_) => return None,
    };
    for k in terms.values_mut() {
        *k = k.checked_mul(d.coef)?;
    }
    terms.retain(|_, k| *k != 0);
    Some((terms, c.checked_mul(d.coef)?))
}

/// The symbol `s` is, when it is one alone.
fn symbol_id(s: &Int) -> Option<u32> {
    match linear(s)? {
        (terms, 0) if terms.len() == 1 && terms.values().all(|k| *k == 1) => terms.keys().next().copied(),
        _ => None,
    }
}

fn at_key(at: &At) -> String {
    format!("{at:?}")
}
