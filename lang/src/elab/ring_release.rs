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
//! The walk (ring_walk.rs) follows values exactly where they are known, and walks a loop body
//! twice, the second time from where the first left, so that a group committed in one trip is
//! seen pending in the next: the first walk is the loop's first trip (its index is the lower
//! bound), the second a later one (its index is past the lower bound). So two states of one
//! pipeline, or a counter and its copy (`prev = stage`), compare as the stages they hold in those
//! trips: a consumer state `done` released one stage behind `st` (gemm_sm90.cute) is a different
//! stage; `st` itself is the same. Elsewhere stages are compared as linear expressions of what the
//! walk does not know.
//!
//! A read is of the released ring only where the buffer's stage mode has as many stages as the
//! ring's barriers (where both extents are known): a single buffer sliced on its last mode
//! (`sK[0, _, 0, _, 0]` of a K tile loaded once) is no stage of a two-stage ring. Nor is a read of
//! a buffer that `tma_load`s fill on other barriers than the released one's tensor, where that
//! tensor has loads of its own: two pipelines of one stage count (FlashAttention's K and V rings),
//! each its `(STAGES, 2)` tensor of full and empty barriers, guard their own buffers. (A
//! hand-written ring's empty barriers are a tensor no load completes on: its reads are compared.)
//!
//! A release of a stage that an in-flight group read is refuted: an error naming both sites. A
//! release whose stage, or a read whose stage, is a value the walk does not follow (loaded from
//! memory), or two stages it cannot tell equal or apart (a counter advanced under a condition it
//! cannot decide, or a run-time number of times that its partner is not), is a warning. Counters
//! advanced alike by run-time loops stay related (ring_walk.rs: residues modulo the stage count,
//! a loop's exit walked after no trip and after some), so a persistent kernel's consumer states
//! are compared tile after tile.

use super::ring_walk::{Followed as Stage, Values, Visitor};
use crate::diag::Diagnostic;
use crate::kir::{CmpOp, Inst, Kernel, MbarrierOp, ValueId, ValueTy, ViewHow, WarpgroupOp};
use crate::span::Span;
use cute_layout::expr::Value as ExprValue;
use cute_layout::{Int, IntTuple, Layout};
use std::collections::{HashMap, HashSet};

/// The errors and warnings of rule (d) in one kernel.
pub(super) fn check(k: &Kernel) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    let mut w = Walk { types: &k.value_types, rings: Rings::of(&k.body), ..Walk::default() };
    super::ring_walk::walk(k, &mut w);
    (w.errors, w.warnings)
}

/// A stage read: its index, and the stage count of the buffer it is a stage of, where static.
type StageOf = (Stage, Option<i64>);

#[derive(Clone)]
struct Read {
    stage: Stage,
    /// The extent of the sliced stage mode, where static.
    stages: Option<i64>,
    /// The tensor the read views, at the root of its chain of views.
    buffer: ValueId,
    span: Span,
}

/// Which buffers the kernel's `tma_load`s fill on which barrier tensors, each tensor by the root of
/// its chain of views.
#[derive(Default)]
struct Rings {
    /// Each view's source.
    parents: HashMap<ValueId, ValueId>,
    /// Per barrier tensor, the buffers loaded on its barriers.
    filled: HashMap<ValueId, HashSet<ValueId>>,
    /// Every buffer a `tma_load` fills.
    loaded: HashSet<ValueId>,
}

impl Rings {
    fn of(body: &[Inst]) -> Rings {
        let mut r = Rings::default();
        let mut loads = Vec::new();
        r.scan(body, &mut loads);
        for (smem, bar) in loads {
            let (buffer, bars) = (r.root(smem), r.root(bar));
            r.filled.entry(bars).or_default().insert(buffer);
            r.loaded.insert(buffer);
        }
        r
    }

    fn scan(&mut self, insts: &[Inst], loads: &mut Vec<(ValueId, ValueId)>) {
        for i in insts {
            match i {
                Inst::View { dst, src, .. } => {
                    self.parents.insert(*dst, *src);
                }
                Inst::TmaLoad { smem, bar, .. } => loads.push((*smem, *bar)),
                _ => {}
            }
            for region in i.regions() {
                self.scan(region, loads);
            }
        }
    }

    /// The tensor at the root of `v`'s chain of views.
    fn root(&self, v: ValueId) -> ValueId {
        let mut at = v;
        for _ in 0..256 {
            match self.parents.get(&at) {
                Some(src) => at = *src,
                None => break,
            }
        }
        at
    }

    /// Whether a read of `buffer` is of another ring than the barrier tensor `bars`': the tensor's
    /// barriers complete loads, and only into other buffers, while `buffer` is loaded on others.
    fn other_ring(&self, buffer: ValueId, bars: ValueId) -> bool {
        let bars = self.root(bars);
        self.filled.get(&bars).is_some_and(|own| !own.contains(&buffer)) && self.loaded.contains(&buffer)
    }
}

#[derive(Clone)]
struct Group {
    id: u32,
    reads: Vec<Read>,
}

/// One path's wgmma state at a point of the program.
#[derive(Clone, Default)]
struct State {
    /// Committed groups still in flight, oldest first.
    pending: Vec<Group>,
    /// The wgmmas issued since the last commit.
    open: Vec<Read>,
}

#[derive(Default)]
struct Walk<'k> {
    /// The kernel's value types (a sliced tensor's stage count).
    types: &'k [ValueTy],
    /// The buffers each barrier tensor's loads fill.
    rings: Rings,
    /// Each view's source, the stage it selects (a slice's last-mode coordinate) with the extent
    /// of that mode, and its span.
    views: HashMap<ValueId, (ValueId, Option<StageOf>, Span)>,
    next_group: u32,
    errors: Vec<Diagnostic>,
    warnings: Vec<Diagnostic>,
}

impl Visitor for Walk<'_> {
    type State = State;

    fn splits_loop_exits(&self) -> bool {
        true
    }

    /// What holds after either of two paths: groups pending on both.
    fn meet(&mut self, a: &mut State, b: &State) {
        a.pending.retain(|g| b.pending.iter().any(|o| o.id == g.id));
        if a.open.len() != b.open.len() {
            a.open.clear();
        }
    }

    fn inst(&mut self, vals: &Values, i: &Inst, st: &mut State) {
        match i {
            Inst::View { dst, src, how, span, .. } => {
                let stage = match how {
                    ViewHow::Algebra { op, args } if op == "slice" => match args.first() {
                        Some(ExprValue::Tuple(items)) => match items.last() {
                            Some(ExprValue::Int(c)) => Some((vals.canon(c, *span), self.last_extent(*src))),
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
                    if let Some((stage, stages)) = self.stage_read(op, *span) {
                        st.open.push(Read { stage, stages, buffer: self.rings.root(op), span: *span });
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
            Inst::Mbarrier { op: MbarrierOp::Arrive, tensor, ty, offset, span, .. } => {
                let released = vals.canon(offset, *span);
                self.release(vals, st, (*tensor, &ty.layout), released, *span);
            }
            _ => {}
        }
    }
}

impl Walk<'_> {
    /// The static extent of the last mode of tensor `v` (a buffer's stage count).
    fn last_extent(&self, v: ValueId) -> Option<i64> {
        let Some(ValueTy::Tensor(t)) = self.types.get(v as usize) else { return None };
        let rank = t.layout.rank();
        t.layout.mode(rank.checked_sub(1)?).ok()?.size().ok()?.as_static()
    }

    /// The stage a wgmma operand reads, with the stage count of its buffer: the last-mode slice
    /// coordinate on its chain of views (the gemm's own per-atom slices, made at the gemm, not
    /// counted); `None` when it reads no stage.
    fn stage_read(&self, operand: ValueId, gemm: Span) -> Option<StageOf> {
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

    /// An arrival on the barrier at `released` of barrier tensor `bars` (its value and layout):
    /// refuted when a wgmma still in flight read the stage it names.
    fn release(&mut self, vals: &Values, st: &State, bars: (ValueId, &Layout), released: Stage, span: Span) {
        let (tensor, bars) = bars;
        let inflight = st.pending.iter().enumerate().flat_map(|(k, g)| {
            let newer = st.pending.len() - 1 - k;
            g.reads.iter().map(move |r| (r, Some(newer)))
        });
        let reads: Vec<(&Read, Option<usize>)> = inflight
            .chain(st.open.iter().map(|r| (r, None)))
            .filter(|(r, _)| !self.rings.other_ring(r.buffer, tensor))
            .collect();
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
        let ring_stages = stage_count(bars);
        for (read, newer) in reads {
            if let (Some(ring), Some(buffer)) = (ring_stages, read.stages) {
                if ring != buffer {
                    continue; // another buffer than this ring's
                }
            }
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
                barriers_of(bars, stage).iter().map(|b| vals.decide(CmpOp::Eq, b, &released)).collect();
            if !same.contains(&Some(true)) {
                if same.contains(&None) {
                    self.warn(
                        Diagnostic::error("this release is not checked against a wgmma in flight: the checker cannot tell whether it releases the stage the wgmma reads", span, "not checked")
                            .with_secondary(read.span, "reads a stage the checker cannot compare with the released one")
                            .with_help("the checker knows a stage index where it starts from a compile-time value (`let mut stage = 0`, a new pipeline state) and is advanced under conditions it can decide, and two indices advanced alike by run-time loops as a stage apart modulo the stage count; an index advanced under other conditions, or a run-time number of times its partner is not, is a run-time value to it"),
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

/// The most barriers per stage the walk lists (a pipeline has two: full and empty).
const MAX_PER_STAGE: i64 = 16;

/// The stages of a barrier tensor laid out as `bars` (its mode 0: a `(STAGES)` ring of barriers or
/// a pipeline's `(STAGES, 2)`), where static.
fn stage_count(bars: &Layout) -> Option<i64> {
    match bars.rank() {
        0 | 1 => bars.size().ok()?.as_static(),
        _ => bars.mode(0).ok()?.size().ok()?.as_static(),
    }
}

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
