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
//! compared as expressions: constants, loop indices and `let mut` counters (a read of a counter
//! stands for every read of the same value: the reads with no write between, and a counter
//! copied from another, as `prev = stage`). A loop body is walked twice, the second time from
//! where the first left, so that a group committed in one trip is seen pending in the next.
//!
//! A release of a stage that an in-flight group read is refuted: an error naming both sites. A
//! release whose stage, or a read whose stage, is a value the walk does not follow (loaded from
//! memory) is a warning. Two different counters (`empty[prev]` against a wgmma reading
//! `sA[.., stage]`) are not proved distinct: the walk stays silent there, since a ring keeps them
//! apart by construction (gemm_sm90.cute releases the previous trip's stage after
//! `warpgroup_wait_group(1)`, which retires that trip's group).

use crate::diag::Diagnostic;
use crate::kir::{At, Inst, Kernel, MbarrierOp, Operand, ValueId, ViewHow, WarpgroupOp};
use crate::span::Span;
use crate::types::MemSpace;
use cute_layout::expr::Value as ExprValue;
use cute_layout::{Int, IntTuple, Layout};
use std::collections::HashMap;

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

    /// `dst`, computed from `operands`: a new symbol when the walk follows them all.
    fn derived(&mut self, dst: ValueId, operands: &[&Operand]) {
        let followed = operands.iter().all(|o| match o {
            Operand::Value(v) => self.syms.contains_key(v) || self.params.contains(v),
            Operand::Int(i) => self.canon(i, Span::default()).is_ok(),
            Operand::Bool(_) | Operand::Float(_) => true,
        });
        if followed {
            let s = self.symbol();
            self.syms.insert(dst, s);
        } else {
            self.syms.remove(&dst);
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
            Inst::Binary { dst, a, b, frag: None, .. } | Inst::Cmp { dst, a, b, frag: None, .. } => {
                self.derived(*dst, &[a, b]);
            }
            Inst::Not { dst, a, frag: None, .. } | Inst::Convert { dst, a, frag: None, .. } => self.derived(*dst, &[a]),
            Inst::Select { dst, c, a, b, frag: None, .. } => self.derived(*dst, &[c, a, b]),
            Inst::Load { dst, .. } => {
                self.syms.remove(dst);
            }
            Inst::Store { value, tensor, at, .. } => {
                // A copy of a followed value (`prev = stage`) is that value; a constant is not
                // kept (the walk's first trip of a loop would take a guarded later trip's
                // release for the first trip's).
                let known = match value {
                    Operand::Value(v) => self.syms.get(v).cloned(),
                    Operand::Int(i) => self.canon(i, Span::default()).ok(),
                    _ => None,
                }
                .filter(|k| !k.is_static());
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
            Inst::If { then, els, .. } => {
                let mut other = st.clone();
                self.block(then, st);
                self.block(els, &mut other);
                st.meet(&other, &mut self.fresh);
            }
            Inst::For { iv, body, exit, .. } => {
                let entry = st.clone();
                for _ in 0..2 {
                    let s = self.symbol();
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
            if !barriers_of(bars, stage).contains(&released) {
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
