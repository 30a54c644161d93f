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
//! its first trips one by one with their indices, to see a ring wrap. Where the visitor asks
//! ([`Visitor::splits_loop_exits`]), the statements after a loop with run-time bounds are walked
//! twice, once after no trip and once after some, each knowing which (`ub <= lb`, `ub >= lb + 1`):
//! a persistent kernel's `if k_tiles > 0 { release the last stage }` after its k loop is then
//! decided on both, and the two meet at the end of the block.
//!
//! Where paths meet, cells that differ keep what relates them: a cell that is another plus a
//! constant on both paths stays so (a new symbol for the first, the sum for the second), and one
//! congruent to another modulo some m on both (their differences on the two paths differ by a
//! multiple of m) becomes a symbol known only modulo m. A ring's wrap, `if next == STAGES {
//! stage = 0 }` after `stage = next`, makes `stage` a symbol congruent to `next` modulo STAGES. So
//! a pipeline's consumer state and the one a stage behind it (`done`), each advanced by run-time
//! loops, stay a stage apart modulo the stage count, and two stage indices that differ modulo it
//! are different stages.

use crate::kir::{At, BinaryOp, CmpOp, Inst, Kernel, Operand, ValueId};
use crate::span::Span;
use crate::types::MemSpace;
use cute_layout::int::{Atom, Op};
use cute_layout::Int;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

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
    /// Whether the statements after a loop walked [`Trips::Twice`] are walked after no trip and
    /// after some separately (rather than from what holds after either).
    fn splits_loop_exits(&self) -> bool {
        false
    }
}

/// A loop's exit walked apart from the path after its trips: the path after no trip, and what
/// holds on each (sums of symbols at least a constant).
struct Exit<S> {
    zero: Path<S>,
    none: Vec<Fact>,
    some: Vec<Fact>,
}

/// `Σ terms ≥ bound` on the path being walked.
type Fact = (BTreeMap<u32, i64>, i64);

/// A value as a sum of symbols times coefficients plus a constant, known up to a multiple of
/// `modulus` (exactly where it is 0).
struct Residue {
    terms: BTreeMap<u32, i64>,
    constant: i64,
    modulus: i64,
}

/// How many loop exits' statements are walked apart at once (each doubles what follows).
const MAX_SPLITS: usize = 4;
/// How many cells of a meet a cell is compared with for what relates them (a meet of many
/// integer cells would otherwise cost their square).
const MAX_BASES: usize = 64;

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
    /// Symbols known modulo a number: the symbol ≡ the expression (mod the number).
    congruent: HashMap<u32, (Int, i64)>,
    /// The operands of an `a == b` the walk could not decide, by the symbol it made for it.
    equations: HashMap<u32, (Int, Int)>,
    /// The operands of a `min` or `max` of values the walk follows, by the symbol it made for it.
    extremes: HashMap<u32, (BinaryOp, Int, Int)>,
    /// What holds on the path being walked (a loop's trips, none or some).
    facts: Vec<Fact>,
    /// Terms the walk's sums treat as symbols of their own (products, divisions), by their
    /// numbers.
    opaque: RefCell<HashMap<Int, u32>>,
    fresh: u32,
}

/// Symbols are numbered above every value id, so that a parameter keeps its own id.
const SYMBOLS: u32 = 1 << 30;
/// A loop bound's values the walk does not follow (loaded from memory) are named by their value
/// ids above this (`Values::bound`), opaque terms above every such name.
const UNFOLLOWED: u32 = 2 << 30;
const OPAQUE: u32 = 3 << 30;

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
    Walker { vals, v, splits: 0 }.block(&k.body, &mut path);
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
        self.over_symbols(i, false).ok_or(span)
    }

    /// A loop bound over the walk's symbols, a value it does not follow (loaded from memory)
    /// named by its id: only what the trip counts tell of it is known (`facts`). The facts of a
    /// loop hold for the statements after it in its block, where its bounds' values are the same.
    fn bound(&self, i: &Int) -> Option<Int> {
        self.over_symbols(i, true)
    }

    /// `i` with its leaves replaced by the walk's symbols (parameters stay themselves); a leaf
    /// the walk does not follow is named by its id where `name_unfollowed`, else `None`.
    fn over_symbols(&self, i: &Int, name_unfollowed: bool) -> Option<Int> {
        substitute(i, &mut |id, div| match self.syms.get(&id) {
            Some(s) => Ok(s.clone()),
            None if self.params.contains(&id) => Ok(Int::var(id, div)),
            None if name_unfollowed && id < SYMBOLS => Ok(Int::var(UNFOLLOWED + id, 1)),
            None => Err(cute_layout::Error::new("over_symbols", "not followed")),
        })
        .ok()
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
        let v = v.unwrap_or_else(|| {
            let s = self.symbol();
            if let (BinaryOp::Min | BinaryOp::Max, Some(id)) = (op, symbol_id(&s)) {
                self.extremes.insert(id, (op, x, y));
            }
            s
        });
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
            None => {
                let s = self.symbol();
                if let (CmpOp::Eq, Some(id)) = (op, symbol_id(&s)) {
                    self.equations.insert(id, (x, y));
                }
                s
            }
        };
        self.syms.insert(dst, v);
    }

    /// Whether `a op b` holds, where the walk can tell: `a - b` is a constant, or is bounded on
    /// one side by the loop indices it reads (each past its loop's lower bound after the first trip).
    pub(super) fn decide(&self, op: CmpOp, a: &Int, b: &Int) -> Option<bool> {
        if let Some(holds) = self.decide_extreme(op, a, b) {
            return Some(holds);
        }
        let d = a.sub(b).ok()?;
        // Opaque terms only where a fact may name them: interning them costs.
        let linear =
            self.linear(&d, false).or_else(|| if self.facts.is_empty() { None } else { self.linear(&d, true) });
        let Some((terms, c)) = linear else {
            return match op {
                CmpOp::Eq | CmpOp::Ne if self.incongruent(a, b) => Some(op == CmpOp::Ne),
                _ => None,
            };
        };
        let (mut lo, mut hi) = (Some(c), Some(c));
        for (&id, &k) in &terms {
            let least = self.lower.get(&id).map(|l| k.checked_mul(*l));
            let (up, down) = if k > 0 { (&mut lo, &mut hi) } else { (&mut hi, &mut lo) };
            *up = match (*up, least) {
                (Some(u), Some(Some(l))) => u.checked_add(l),
                _ => None,
            };
            *down = None;
        }
        // The path's facts bound the sum where it is one of them, or its negation.
        for (fact, bound) in &self.facts {
            if terms.is_empty() {
                break;
            }
            if *fact == terms {
                let l = bound.checked_add(c);
                lo = match (lo, l) {
                    (Some(x), Some(y)) => Some(x.max(y)),
                    (x, y) => x.or(y),
                };
            } else if fact.len() == terms.len() && fact.iter().all(|(id, k)| terms.get(id) == k.checked_neg().as_ref())
            {
                let h = bound.checked_neg().and_then(|b| b.checked_add(c));
                hi = match (hi, h) {
                    (Some(x), Some(y)) => Some(x.min(y)),
                    (x, y) => x.or(y),
                };
            }
        }
        let below = |v: i64| hi.is_some_and(|h| h < v);
        let above = |v: i64| lo.is_some_and(|l| l > v);
        let at = lo.is_some() && lo == hi && lo == Some(0);
        match op {
            CmpOp::Eq if at => Some(true),
            CmpOp::Eq if below(0) || above(0) || self.incongruent(a, b) => Some(false),
            CmpOp::Ne => self.decide(CmpOp::Eq, a, b).map(|e| !e),
            CmpOp::Lt if below(0) => Some(true),
            CmpOp::Lt if above(-1) => Some(false),
            CmpOp::Le if below(1) => Some(true),
            CmpOp::Le if above(0) => Some(false),
            CmpOp::Gt | CmpOp::Ge => self.decide(if op == CmpOp::Gt { CmpOp::Lt } else { CmpOp::Le }, b, a),
            _ => None,
        }
    }

    /// `a < b` or `a <= b` (`a > b`, `a >= b` turned round) where `a` or `b` is a `min` or `max`
    /// (`extremes`): min(p, q) ≤ b where p ≤ b or q ≤ b, a ≤ min(p, q) where a ≤ p and a ≤ q,
    /// and so on.
    fn decide_extreme(&self, op: CmpOp, a: &Int, b: &Int) -> Option<bool> {
        let (op, a, b) = match op {
            CmpOp::Gt => (CmpOp::Lt, b, a),
            CmpOp::Ge => (CmpOp::Le, b, a),
            CmpOp::Lt | CmpOp::Le => (op, a, b),
            _ => return None,
        };
        let extreme = |i: &Int| -> Option<(BinaryOp, Int, Int)> {
            if let Some(e) = symbol_id(i).and_then(|id| self.extremes.get(&id)) {
                return Some(e.clone());
            }
            let Int::D(d) = i else { return None };
            match (&d.factors[..], d.coef) {
                ([Atom::Op(op)], 1) => match &**op {
                    Op::Min(p, q) => Some((BinaryOp::Min, p.clone(), q.clone())),
                    Op::Max(p, q) => Some((BinaryOp::Max, p.clone(), q.clone())),
                    _ => None,
                },
                _ => None,
            }
        };
        // Whether the comparison holds of either operand (`any`) or of both.
        let of = |p: Option<bool>, q: Option<bool>, any: bool| match (p, q) {
            (Some(x), Some(y)) => Some(if any { x || y } else { x && y }),
            (Some(x), None) | (None, Some(x)) if x == any => Some(x),
            _ => None,
        };
        if let Some((kind, p, q)) = extreme(a) {
            return of(self.decide(op, &p, b), self.decide(op, &q, b), kind == BinaryOp::Min);
        }
        if let Some((kind, p, q)) = extreme(b) {
            return of(self.decide(op, a, &p), self.decide(op, a, &q), kind == BinaryOp::Max);
        }
        None
    }

    /// Whether `a` and `b` differ modulo a number both are known modulo (`congruent`): then they
    /// are different values.
    fn incongruent(&self, a: &Int, b: &Int) -> bool {
        if self.congruent.is_empty() {
            return false;
        }
        let (Some(x), Some(y)) = (self.residue(a, 0), self.residue(b, 0)) else { return false };
        let Some(d) = x.minus(&y) else { return false };
        d.terms.is_empty() && d.modulus >= 2 && d.constant.rem_euclid(d.modulus) != 0
    }

    /// `i` as a [`Residue`]: its sum of symbols, each symbol known modulo a number replaced by
    /// what it is congruent to.
    fn residue(&self, i: &Int, depth: usize) -> Option<Residue> {
        let (terms, constant) = self.linear(i, false)?;
        let mut r = Residue { terms: BTreeMap::new(), constant, modulus: 0 };
        for (id, k) in terms {
            match self.congruent.get(&id) {
                Some((e, m)) if depth < 16 => {
                    let inner = self.residue(e, depth + 1)?;
                    for (t, c) in inner.terms {
                        let sum = r.terms.entry(t).or_insert(0);
                        *sum = sum.checked_add(k.checked_mul(c)?)?;
                    }
                    r.constant = r.constant.checked_add(k.checked_mul(inner.constant)?)?;
                    r.modulus = gcd(r.modulus, k.checked_mul(gcd(*m, inner.modulus))?);
                }
                _ => {
                    let sum = r.terms.entry(id).or_insert(0);
                    *sum = sum.checked_add(k)?;
                }
            }
        }
        r.terms.retain(|_, k| *k != 0);
        Some(r)
    }

    /// `i` as a sum of symbols times coefficients plus a constant; `None` for anything else
    /// (sums over basis elements, and with `opaque` false products of symbols, divisions and
    /// remainders; with it true each of those is a term of its own).
    fn linear(&self, i: &Int, opaque: bool) -> Option<(BTreeMap<u32, i64>, i64)> {
        let Int::D(d) = i else { return Some((BTreeMap::new(), i.as_static()?)) };
        let one = |id: u32| (BTreeMap::from([(id, 1)]), 0);
        let (mut terms, c) = match &d.factors[..] {
            [Atom::Var { id, .. }] => one(*id),
            [Atom::Op(op)] if matches!(&**op, Op::Add(..)) => {
                let Op::Add(x, y) = &**op else { unreachable!("matched above") };
                let ((mut t, a), (u, b)) = (self.linear(x, opaque)?, self.linear(y, opaque)?);
                for (id, k) in u {
                    let sum = t.entry(id).or_insert(0);
                    *sum = sum.checked_add(k)?;
                }
                (t, a.checked_add(b)?)
            }
            factors if !opaque || factors.iter().any(|f| matches!(f, Atom::Basis(_))) => return None,
            factors => {
                let term = Int::D(cute_layout::int::Dyn { coef: 1, factors: factors.into() });
                let mut opaque = self.opaque.borrow_mut();
                let n = opaque.len() as u32;
                one(*opaque.entry(term).or_insert(OPAQUE + n))
            }
        };
        for k in terms.values_mut() {
            *k = k.checked_mul(d.coef)?;
        }
        terms.retain(|_, k| *k != 0);
        Some((terms, c.checked_mul(d.coef)?))
    }

    /// The fact that `a - b ≥ bound`, where the walk follows both.
    fn fact(&self, a: &Int, b: &Int, bound: i64) -> Option<Fact> {
        let (terms, c) = self.linear(&a.sub(b).ok()?, true)?;
        Some((terms, bound.checked_sub(c)?))
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
    /// The loop exits whose statements are being walked apart.
    splits: usize,
}

impl<V: Visitor> Walker<'_, V> {
    fn block(&mut self, insts: &[Inst], path: &mut Path<V::State>) {
        for (k, i) in insts.iter().enumerate() {
            let Some(exit) = self.inst(i, path) else { continue };
            let rest = &insts[k + 1..];
            if rest.is_empty() || self.splits >= MAX_SPLITS {
                self.meet(path, &exit.zero, None);
                continue;
            }
            // What follows the loop, after no trip and after some, each with what it knows.
            self.splits += 1;
            let known = self.vals.facts.len();
            let mut zero = exit.zero;
            self.vals.facts.extend(exit.none);
            self.block(rest, &mut zero);
            self.vals.facts.truncate(known);
            self.vals.facts.extend(exit.some);
            self.block(rest, path);
            self.vals.facts.truncate(known);
            self.splits -= 1;
            self.meet(path, &zero, None);
            return;
        }
    }

    /// What holds after either of two paths: the rule's meet, cells equal on both, and what
    /// relates the cells that differ (the module's header). `wrap`: the meet after an `if e ==
    /// STAGES` (path `a` its then branch), as (e, STAGES).
    fn meet(&mut self, a: &mut Path<V::State>, b: &Path<V::State>, wrap: Option<(Int, i64)>) {
        self.v.meet(&mut a.rule, &b.rule);
        let keys: Vec<_> =
            a.cells.keys().chain(b.cells.keys().filter(|k| !a.cells.contains_key(*k))).cloned().collect();
        // Cells that differ and hold values on both paths, in a fixed order (the symbols' order).
        let mut valued = Vec::new();
        for key in keys {
            let (x, y) = (a.cells.get(&key), b.cells.get(&key));
            if x == y {
                continue;
            }
            match (x.and_then(|c| c.1.clone()), y.and_then(|c| c.1.clone())) {
                (Some(x), Some(y)) => valued.push((key, x, y)),
                _ => {
                    let version = self.vals.fresh();
                    a.cells.insert(key, (version, None));
                }
            }
        }
        valued.sort_by(|p, q| p.0.cmp(&q.0));
        // (the symbol now, its value on a, on b) of each cell met so far.
        let mut bases: Vec<(Int, Int, Int)> = Vec::new();
        for (key, x, y) in valued {
            let version = self.vals.fresh();
            let value = self.related(&x, &y, &wrap, &mut bases);
            a.cells.insert(key, (version, Some(value)));
        }
    }

    /// The value of a cell that holds `x` on one path and `y` on the other, related to the cells
    /// met before it (`bases`) where their differences allow.
    fn related(&mut self, x: &Int, y: &Int, wrap: &Option<(Int, i64)>, bases: &mut Vec<(Int, Int, Int)>) -> Int {
        if let Some((e, stages)) = wrap {
            if *x == Int::S(0) && y == e {
                // 0 where e == STAGES, else e: e modulo STAGES either way.
                let s = self.vals.symbol();
                if let Some(id) = symbol_id(&s) {
                    self.vals.congruent.insert(id, (e.clone(), *stages));
                }
                return s;
            }
        }
        for (base, bx, by) in bases.iter().take(MAX_BASES) {
            let dx = x.sub(bx).ok().and_then(|d| self.vals.residue(&d, 0));
            let dy = y.sub(by).ok().and_then(|d| self.vals.residue(&d, 0));
            let (Some(dx), Some(dy)) = (dx, dy) else { continue };
            if !dx.terms.is_empty() || !dy.terms.is_empty() {
                continue;
            }
            let Some(apart) = dx.constant.checked_sub(dy.constant) else { continue };
            let modulus = gcd(gcd(dx.modulus, dy.modulus), apart);
            let Ok(sum) = base.add(&Int::S(dx.constant)) else { continue };
            if modulus == 0 {
                return sum;
            }
            if modulus >= 2 {
                let s = self.vals.symbol();
                if let Some(id) = symbol_id(&s) {
                    self.vals.congruent.insert(id, (sum, modulus));
                }
                bases.push((s.clone(), x.clone(), y.clone()));
                return s;
            }
        }
        let s = self.vals.symbol();
        bases.push((s.clone(), x.clone(), y.clone()));
        s
    }

    /// Walks instruction `i`; a loop whose exit the visitor splits returns it.
    fn inst(&mut self, i: &Inst, path: &mut Path<V::State>) -> Option<Exit<V::State>> {
        if self.vals.define(i, path) {
            return None;
        }
        match i {
            Inst::If { cond, then, els, span } => {
                if let Some(taken) = self.vals.value(cond).and_then(|c| c.as_static()) {
                    self.block(if taken != 0 { then } else { els }, path);
                    return None;
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
                let wrap = self.wrap(cond);
                self.meet(path, &other, wrap);
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
                            self.meet(path, &entry, None);
                        }
                        return None;
                    }
                }
                let first = self.vals.bound(lb);
                let last = self.vals.bound(ub);
                let forward = bounds.2.is_some_and(|s| s > 0);
                let trips = match (&first, &last) {
                    (Some(l), Some(u)) if forward => self.vals.decide(CmpOp::Lt, l, u),
                    _ => None,
                };
                if trips == Some(false) {
                    return None; // no trip
                }
                let split = self.v.splits_loop_exits() && forward;
                // A loop of at most one trip (`0..min(n, 1)`) has no later one.
                let later = match (&first, &last, bounds.2) {
                    (Some(l), Some(u), Some(step)) if step > 0 => {
                        l.add(&Int::S(step)).ok().and_then(|next| self.vals.decide(CmpOp::Lt, &next, u))
                    }
                    _ => None,
                };
                let index0 = self.vals.value(&Operand::Int(lb.clone()));
                let mut after_first = None;
                for k in 0..if later == Some(false) { 1 } else { 2 } {
                    // The first trip's index is the lower bound; a later one's is past it.
                    let s = match (&index0, k) {
                        (Some(l), 0) => l.clone(),
                        _ => self.vals.symbol(),
                    };
                    if let (Some(l), Some(step), Some(id), 1) =
                        (index0.as_ref().and_then(Int::as_static), bounds.2, symbol_id(&s), k)
                    {
                        if step > 0 {
                            self.vals.lower.insert(id, l.saturating_add(step));
                        }
                    }
                    trip(self, s, path);
                    if split && k == 0 {
                        after_first = Some(path.clone());
                    }
                }
                if let Some(one) = after_first {
                    // After some trips: after the first, or after a later one.
                    self.meet(path, &one, None);
                    if trips == Some(true) {
                        return None;
                    }
                    let (none, some) = match (&first, &last) {
                        (Some(l), Some(u)) => (self.vals.fact(l, u, 0), self.vals.fact(u, l, 1)),
                        _ => (None, None),
                    };
                    return Some(Exit {
                        zero: entry,
                        none: none.into_iter().collect(),
                        some: some.into_iter().collect(),
                    });
                }
                self.meet(path, &entry, None);
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
                self.meet(path, &entry, None);
            }
            _ => self.v.inst(&self.vals, i, &mut path.rule),
        }
        None
    }

    /// An `if` on `e == STAGES` (an undecided equation with a constant side of at least 2): (e,
    /// STAGES).
    fn wrap(&self, cond: &Operand) -> Option<(Int, i64)> {
        let id = symbol_id(&self.vals.value(cond)?)?;
        let (x, y) = self.vals.equations.get(&id)?;
        match (x.as_static(), y.as_static()) {
            (None, Some(n)) if n >= 2 => Some((x.clone(), n)),
            (Some(n), None) if n >= 2 => Some((y.clone(), n)),
            _ => None,
        }
    }
}

/// `i` with every leaf replaced by `f(id, div)`, as [`Int::subst`] but with `min` and `max`
/// folded only where both sides are constants or equal: the walk's symbols stand for values of
/// either sign (a trip count `where(ok, n, 0)`), which `Int::minimum` would take for extents,
/// folding `min(n, 1)` to 1.
fn substitute(i: &Int, f: &mut dyn FnMut(u32, i64) -> cute_layout::Result<Int>) -> cute_layout::Result<Int> {
    let Int::D(d) = i else { return Ok(i.clone()) };
    let mut acc = Int::S(d.coef);
    for a in d.factors.iter() {
        let x = match a {
            Atom::Var { id, div } => f(*id, *div)?,
            Atom::Op(op) => match &**op {
                Op::Add(x, y) => substitute(x, f)?.add(&substitute(y, f)?)?,
                Op::Min(x, y) => substitute(x, f)?.minimum_signed(&substitute(y, f)?),
                Op::Max(x, y) => substitute(x, f)?.maximum_signed(&substitute(y, f)?),
                _ => Int::D(cute_layout::int::Dyn { coef: 1, factors: Arc::from(vec![a.clone()]) }).subst(f)?,
            },
            Atom::Basis(_) => Int::D(cute_layout::int::Dyn { coef: 1, factors: Arc::from(vec![a.clone()]) }),
        };
        acc = acc.mul(&x)?;
    }
    Ok(acc)
}

/// The symbol `s` is, when it is one alone.
fn symbol_id(s: &Int) -> Option<u32> {
    match s {
        Int::D(d) if d.coef == 1 => match &d.factors[..] {
            [Atom::Var { id, .. }] => Some(*id),
            _ => None,
        },
        _ => None,
    }
}

/// The greatest common divisor of `|a|` and `|b|` (0 with 0: the other), as a modulus: 1 (known
/// modulo nothing) where it is 2^63.
fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    i64::try_from(a).unwrap_or(1)
}

impl Residue {
    /// `self - other`, known modulo both moduli's divisor.
    fn minus(&self, other: &Residue) -> Option<Residue> {
        let mut terms = self.terms.clone();
        for (id, k) in &other.terms {
            let sum = terms.entry(*id).or_insert(0);
            *sum = sum.checked_sub(*k)?;
        }
        terms.retain(|_, k| *k != 0);
        Some(Residue {
            terms,
            constant: self.constant.checked_sub(other.constant)?,
            modulus: gcd(self.modulus, other.modulus),
        })
    }
}

fn at_key(at: &At) -> String {
    format!("{at:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(vals: &mut Values) -> (Int, u32) {
        let s = vals.symbol();
        let id = symbol_id(&s).expect("a fresh symbol");
        (s, id)
    }

    fn plus(a: &Int, c: i64) -> Int {
        a.add(&Int::S(c)).expect("small sums")
    }

    #[test]
    fn residues_tell_stages_apart_modulo_the_stage_count() {
        let mut vals = Values::default();
        let (g, _) = sym(&mut vals);
        // h ≡ g + 1 (mod 4): the index after one advance; k ≡ h + 3 ≡ g (mod 4).
        let (h, hid) = sym(&mut vals);
        vals.congruent.insert(hid, (plus(&g, 1), 4));
        let (k, kid) = sym(&mut vals);
        vals.congruent.insert(kid, (plus(&h, 3), 4));
        assert_eq!(vals.decide(CmpOp::Eq, &h, &g), Some(false));
        assert_eq!(vals.decide(CmpOp::Ne, &h, &g), Some(true));
        // Congruent values may or may not be equal (k is g's residue, g any integer).
        assert_eq!(vals.decide(CmpOp::Eq, &k, &g), None);
        // Barrier offsets of a (STAGES, 2) tensor laid out (1, 4): stage + 4·j.
        assert_eq!(vals.decide(CmpOp::Eq, &plus(&h, 4), &g), Some(false));
        // Scaled: 2h ≡ 2g + 2 (mod 8).
        let two = |x: &Int| x.mul(&Int::S(2)).expect("small products");
        assert_eq!(vals.decide(CmpOp::Eq, &plus(&two(&h), 1), &plus(&two(&g), 1)), Some(false));
    }

    #[test]
    fn facts_and_extremes_decide_trip_counts() {
        let mut vals = Values::default();
        let (n, _) = sym(&mut vals);
        let (m, mid) = sym(&mut vals);
        vals.extremes.insert(mid, (BinaryOp::Min, n.clone(), Int::S(1)));
        assert_eq!(vals.decide(CmpOp::Lt, &Int::S(0), &n), None);
        // After a loop `0..n` with no trip: n <= 0, so `0..min(n, 1)` has none either.
        let none = vals.fact(&Int::S(0), &n, 0).expect("linear");
        vals.facts.push(none);
        assert_eq!(vals.decide(CmpOp::Gt, &n, &Int::S(0)), Some(false));
        assert_eq!(vals.decide(CmpOp::Lt, &Int::S(0), &m), Some(false));
        vals.facts.clear();
        // After some: n >= 1, so `0..min(n, 1)` has exactly one trip.
        let some = vals.fact(&n, &Int::S(0), 1).expect("linear");
        vals.facts.push(some);
        assert_eq!(vals.decide(CmpOp::Gt, &n, &Int::S(0)), Some(true));
        assert_eq!(vals.decide(CmpOp::Lt, &Int::S(0), &m), Some(true));
        assert_eq!(vals.decide(CmpOp::Lt, &Int::S(1), &m), Some(false));
    }

    #[test]
    fn opaque_terms_carry_facts() {
        // ceil(K / 64) as a KIR bound over a parameter: a term of its own.
        let k = Int::var(7, 1).ceil_quot(&Int::S(64)).expect("a quotient");
        let mut vals = Values::default();
        vals.params.push(7);
        let fact = vals.fact(&k, &Int::S(0), 1).expect("an opaque term");
        vals.facts.push(fact);
        assert_eq!(vals.decide(CmpOp::Gt, &k, &Int::S(0)), Some(true));
        assert_eq!(vals.decide(CmpOp::Le, &k, &Int::S(0)), Some(false));
    }

    #[test]
    fn gcd_of_differences() {
        assert_eq!(gcd(0, 4), 4);
        assert_eq!(gcd(-6, 4), 2);
        assert_eq!(gcd(0, 0), 0);
    }
}
