//! Rule (d) of the ring checks (docs/language.md §8.8, "Checked rings"): a stage is released
//! (`mbarrier_arrive` on its barrier, or `consumer_release`, which elaborates to the same
//! instruction) only once every wgmma `gemm` that read the stage has been retired by a
//! `warpgroup_wait_group(N)`: `wgmma.wait_group N` leaves the N newest committed groups in flight,
//! so a group is retired once at least N groups were committed after it.
//!
//! The walk follows each thread's program order over the kernel's statements, counting the
//! committed wgmma groups still in flight and what each read. A wgmma's read is a stage of a ring
//! buffer when its shared operand is a view sliced on its last mode (`sA[_, _, stage]`,
//! `tCsA[_, _, _, stage]`: CuTe's rings keep the stage in the last mode), and a release names
//! stage `c` when its barrier offset is where the barrier tensor's mode-0 coordinate `c` lies (a
//! `(STAGES)` tensor of empty barriers, or a pipeline's `(STAGES, 2)` one). Stage indices are
//! expressions over constants, loop indices and `let mut` counters; a pipeline state kept in
//! registers is two such counters (pipeline_state.rs), so `st.index()` is a counter read and
//! `advance()` the hand-written ring's `index += 1; if index == STAGES { index = 0; ... }`.
//!
//! Values are followed exactly where they are known: a counter set to a constant (`let mut
//! stage = 0`, a new pipeline state) holds it, arithmetic on constants is a constant, and a
//! condition the walk can decide (`index == STAGES` on a known index, `kt > 0` on a loop index)
//! takes its one branch. A loop body is walked twice, the second time from where the first left,
//! so that a group committed in one trip is seen pending in the next: the first walk is the
//! loop's first trip (its index is the lower bound), the second a later one (its index is past
//! the lower bound). So two states of one pipeline, or a counter and its copy (`prev = stage`),
//! compare as the stages they hold in those trips: a consumer state `done` released one stage
//! behind `st` (gemm_sm90.cute) is a different stage; `st` itself is the same. Otherwise a read of
//! a counter stands for every read of the same value (the reads with no write between), and
//! stages are compared as linear expressions of what the walk does not know.
//!
//! A release of a stage that an in-flight group read is refuted: an error naming both sites. A
//! release whose stage, or a read whose stage, is a value the walk does not follow (loaded from
//! memory), or two stages it cannot tell equal or apart (a counter advanced under a condition it
//! cannot decide, or by an earlier run-time loop), is a warning.

use crate::diag::Diagnostic;
use crate::kir::{At, BinaryOp, CmpOp, Inst, Kernel, MbarrierOp, Operand, ValueId, ViewHow, WarpgroupOp};
use crate::span::Span;
use crate::types::MemSpace;
use cute_layout::expr::Value as ExprValue;
use cute_layout::int::{Atom, Op};
use cute_layout::{Int, IntTuple, Layout};
use std::collections::{BTreeMap, HashMap};

/// The errors and warnings of rule (d) in one kernel.
pub(super) fn check(k: &Kernel) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    let mut w = Walk::default();
    for p in &k.params {
        w.params.push(p.value);
        if let crate::kir::ParamKind::Tensor { dyn_leaves, .. } = &p.kind {
            w.params.extend(dyn_leaves);
        }
    }
    let mut state = State::default();
    w.block(&k.body, &mut state);
    (w.errors, w.warnings)
}

/// A stage index as the walk sees it: an expression over its own symbols, or a value it does not
/// follow (where it comes from).
type Stage = Result<Int, Span>;

#[derive(Clone)]
struct Read {
    stage: Stage,
    span: Span,
}

#[derive(Clone)]
struct Group {
    id: u32,
    reads: Vec<Read>,
}

/// One path's wgmma and register-cell state at a point of the program.
#[derive(Clone, Default)]
struct State {
    /// Committed groups still in flight, oldest first.
    pending: Vec<Group>,
    /// The wgmmas issued since the last commit.
    open: Vec<Read>,
    /// Each register cell's version (a fresh number per write) and, when the last write stored
    /// a value the walk names, that value's symbol.
    cells: HashMap<(ValueId, String), (u32, Option<Int>)>,
}

impl State {
    /// What holds after either of two paths: groups pending on both, cells equal on both.
    fn meet(&mut self, other: &State, fresh: &mut u32) {
        self.pending.retain(|g| other.pending.iter().any(|o| o.id == g.id));
        if self.open.len() != other.open.len() {
            self.open.clear();
        }
        let keys: Vec<_> = self.cells.keys().chain(other.cells.keys()).cloned().collect();
        for key in keys {
            if self.cells.get(&key) != other.cells.get(&key) {
                *fresh += 1;
                self.cells.insert(key, (*fresh, None));
            }
        }
    }
}

#[derive(Default)]
struct Walk {
    params: Vec<ValueId>,
    /// What each value is where the walk last defined it, over the walk's symbols.
    syms: HashMap<ValueId, Int>,
    /// The first read of each cell version: later reads of the version are the same value.
    first_read: HashMap<(ValueId, String, u32), Int>,
    /// Each view's source, the stage it selects (a slice's last-mode coordinate), and its span.
    views: HashMap<ValueId, (ValueId, Option<Stage>, Span)>,
    /// The least value of each symbol that stands for a loop index after the loop's first trip.
    lower: HashMap<u32, i64>,
    fresh: u32,
    next_group: u32,
    errors: Vec<Diagnostic>,
    warnings: Vec<Diagnostic>,
}

/// Symbols are numbered above every value id, so that a parameter keeps its own id.
const SYMBOLS: u32 = 1 << 30;

impl Walk {
    fn fresh(&mut self) -> u32 {
        self.fresh += 1;
        self.fresh
    }

    /// A new symbol, standing for a value not known to equal any other.
    fn symbol(&mut self) -> Int {
        Int::var(SYMBOLS + self.fresh(), 1)
    }

    /// `i` over the walk's symbols, or the span of a value it does not follow.
    fn canon(&self, i: &Int, span: Span) -> Stage {
        i.subst(&mut |id, div| match self.syms.get(&id) {
            Some(s) => Ok(s.clone()),
            None if self.params.contains(&id) => Ok(Int::var(id, div)),
            None => Err(cute_layout::Error::new("canon", "not followed")),
        })
        .map_err(|_| span)
    }

    /// What an integer or bool operand is over the walk's symbols; `None` when not followed.
    fn value(&self, o: &Operand) -> Option<Int> {
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
            (Some(p), Some(q), _) => super::ring_checks::binary(op, p, q).map(Int::S),
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
    fn decide(&self, op: CmpOp, a: &Int, b: &Int) -> Option<bool> {
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

    fn block(&mut self, insts: &[Inst], st: &mut State) {
        for i in insts {
            self.inst(i, st);
        }
    }

    fn inst(&mut self, i: &Inst, st: &mut State) {
        match i {
            Inst::Load { dst, tensor, ty, at, .. } if ty.space == MemSpace::Rmem => {
                let key = (*tensor, at_key(at));
                let (version, known) = st.cells.entry(key.clone()).or_insert((0, None)).clone();
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
                st.cells.insert((*tensor, at_key(at)), (version, known));
            }
            Inst::StoreFrag { tensor, .. } => {
                let keys: Vec<_> = st.cells.keys().filter(|(t, _)| t == tensor).cloned().collect();
                for key in keys {
                    let version = self.fresh();
                    st.cells.insert(key, (version, None));
                }
            }
            Inst::View { dst, src, how, span, .. } => {
                let stage = match how {
                    ViewHow::Algebra { op, args } if op == "slice" => match args.first() {
                        Some(ExprValue::Tuple(items)) => match items.last() {
                            Some(ExprValue::Int(c)) => Some(self.canon(c, *span)),
                            _ => None,
                        },
                        _ => None,
                    },
                    _ => None,
                };
                self.views.insert(*dst, (*src, stage, *span));
            }
            Inst::Wgmma { a, a_ty, b, span, .. } => {
                let operands = if a_ty.is_some() { vec![*a, *b] } else { vec![*b] };
                for op in operands {
                    if let Some(stage) = self.stage_read(op, *span) {
                        st.open.push(Read { stage, span: *span });
                    }
                }
            }
            Inst::Warpgroup { op: WarpgroupOp::CommitGroup, .. } => {
                self.next_group += 1;
                st.pending.push(Group { id: self.next_group, reads: std::mem::take(&mut st.open) });
            }
            Inst::Warpgroup { op: WarpgroupOp::WaitGroup(n), .. } => {
                let keep = (*n as usize).min(st.pending.len());
                st.pending.drain(..st.pending.len() - keep);
            }
            Inst::Mbarrier { op: MbarrierOp::Arrive, ty, offset, span, .. } => {
                let released = self.canon(offset, *span);
                self.release(st, &ty.layout, released, *span);
            }
            Inst::If { cond, then, els, .. } => {
                if let Some(taken) = self.value(cond).and_then(|c| c.as_static()) {
                    return self.block(if taken != 0 { then } else { els }, st);
                }
                let mut other = st.clone();
                self.block(then, st);
                self.block(els, &mut other);
                st.meet(&other, &mut self.fresh);
            }
            Inst::For { iv, lb, step, body, exit, .. } => {
                let entry = st.clone();
                let (lb, step) = (self.value(&Operand::Int(lb.clone())), step.as_static());
                for trip in 0..2 {
                    // The first trip's index is the lower bound; a later one's is past it.
                    let s = match (&lb, trip) {
                        (Some(l), 0) => l.clone(),
                        _ => self.symbol(),
                    };
                    if let (Some(l), Some(step), Some(id), 1) =
                        (lb.as_ref().and_then(Int::as_static), step, symbol_id(&s), trip)
                    {
                        if step > 0 {
                            self.lower.insert(id, l.saturating_add(step));
                        }
                    }
                    self.syms.insert(*iv, s);
                    if let Some(c) = exit {
                        self.block(&c.insts, st);
                    }
                    self.block(body, st);
                }
                st.meet(&entry, &mut self.fresh);
            }
            Inst::While { cond, body, .. } => {
                let entry = st.clone();
                for _ in 0..2 {
                    self.block(&cond.insts, st);
                    self.block(body, st);
                }
                self.block(&cond.insts, st);
                st.meet(&entry, &mut self.fresh);
            }
            _ => {}
        }
    }

    /// The stage a wgmma operand reads: the last-mode slice coordinate on its chain of views (the
    /// gemm's own per-atom slices, made at the gemm, not counted); `None` when it reads no stage.
    fn stage_read(&self, operand: ValueId, gemm: Span) -> Option<Stage> {
        let mut at = operand;
        let mut steps = 0;
        while let Some((src, stage, span)) = self.views.get(&at) {
            if *span != gemm {
                if let Some(s) = stage {
                    return Some(s.clone());
                }
            }
            at = *src;
            steps += 1;
            if steps > 64 {
                break;
            }
        }
        None
    }

    /// An arrival on the barrier at `released` of a tensor laid out as `bars`: refuted when a
    /// wgmma still in flight read the stage it names.
    fn release(&mut self, st: &State, bars: &Layout, released: Stage, span: Span) {
        let inflight = st.pending.iter().enumerate().flat_map(|(k, g)| {
            let newer = st.pending.len() - 1 - k;
            g.reads.iter().map(move |r| (r, Some(newer)))
        });
        let reads: Vec<(&Read, Option<usize>)> = inflight.chain(st.open.iter().map(|r| (r, None))).collect();
        if reads.is_empty() {
            return;
        }
        let released = match released {
            Ok(r) => r,
            Err(_) => {
                self.warn(
                    Diagnostic::error("this release is not checked against the wgmmas in flight: the checker cannot see which stage it releases (its barrier index is a value loaded from memory)", span, "stage not followed")
                        .with_help("index the barriers with a compile-time value, a loop index or a `let mut` counter"),
                );
                return;
            }
        };
        for (read, newer) in reads {
            let stage = match &read.stage {
                Ok(c) => c,
                Err(at) => {
                    self.warn(
                        Diagnostic::error("this release is not checked against a wgmma in flight: the checker cannot see which stage the wgmma reads", span, "not checked")
                            .with_secondary(read.span, "its stage is not followed")
                            .with_secondary(*at, "a value the checker does not follow"),
                    );
                    continue;
                }
            };
            let same: Vec<Option<bool>> =
                barriers_of(bars, stage).iter().map(|b| self.decide(CmpOp::Eq, b, &released)).collect();
            if !same.contains(&Some(true)) {
                if same.contains(&None) {
                    self.warn(
                        Diagnostic::error("this release is not checked against a wgmma in flight: the checker cannot tell whether it releases the stage the wgmma reads", span, "not checked")
                            .with_secondary(read.span, "reads a stage the checker cannot compare with the released one")
                            .with_help("the checker knows a stage index where it starts from a compile-time value (`let mut stage = 0`, a new pipeline state) and is advanced under conditions it can decide; an index advanced under other conditions, or by an earlier run-time loop, is a run-time value to it"),
                    );
                }
                continue;
            }
            let help = match newer {
                Some(0) => "retire the wgmma's group before the release: `warpgroup_wait_group(0)` (it retires every committed group)".to_string(),
                Some(n) => format!("retire the wgmma's group before the release: `warpgroup_wait_group({n})` (it leaves in flight only the {} committed after it)", crate::diag::count(n, "group")),
                None => "commit the wgmma's group (`warpgroup_commit_group()`) and retire it (`warpgroup_wait_group(0)`) before the release".to_string(),
            };
            let d = Diagnostic::error(
                "this releases a stage that a wgmma still reads: the producer may overwrite it while the wgmma is in flight",
                span,
                "released here",
            )
            .with_secondary(read.span, if newer.is_some() { "reads the stage; its group is still in flight" } else { "reads the stage; its group is not committed" })
            .with_help(help);
            if !self.errors.contains(&d) {
                self.errors.push(d);
            }
        }
    }

    fn warn(&mut self, d: Diagnostic) {
        if !self.warnings.contains(&d) {
            self.warnings.push(d);
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

/// The most barriers per stage the walk lists (a pipeline has two: full and empty).
const MAX_PER_STAGE: i64 = 16;

/// The offsets of the barriers of stage `stage` in a barrier tensor laid out as `bars`: the
/// element at mode-0 coordinate `stage` (and any coordinate of the other modes).
fn barriers_of(bars: &Layout, stage: &Int) -> Vec<Int> {
    match bars.rank() {
        0 | 1 => bars.eval(&IntTuple::Int(stage.clone())).into_iter().collect(),
        2 => {
            let per_stage = bars.mode(1).ok().and_then(|m| m.size().ok()).and_then(|s| s.as_static()).unwrap_or(0);
            if !(1..=MAX_PER_STAGE).contains(&per_stage) {
                return Vec::new();
            }
            (0..per_stage)
                .filter_map(|j| {
                    bars.eval(&IntTuple::Tuple(vec![IntTuple::Int(stage.clone()), IntTuple::Int(Int::S(j))])).ok()
                })
                .collect()
        }
        _ => Vec::new(),
    }
}
