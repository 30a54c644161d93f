//! Static checks of hand-written mbarrier rings (docs/language.md §8, "Checked rings"), per kernel
//! instance, on its KIR once it is elaborated:
//!
//! - **transaction bytes**: an `mbarrier_arrive_and_expect_tx(bar, BYTES)` announces the bytes of
//!   the `tma_load`s that complete on `bar` after it, in the same block of statements, up to the
//!   next announcement on `bar`: BYTES must be their tiles' bytes. Loads under an `if` count where
//!   both of its arms bring the barrier the same bytes (a paged cache's tile as one box or as
//!   several), whichever runs;
//! - **arrival count**: `mbarrier_init(bar, N)` must count the threads that arrive on `bar` per
//!   phase, the threads that reach its `mbarrier_arrive*` calls, each counted once per arrival
//!   in its largest run (the arrivals on one barrier in one block of statements with no wait, `if`
//!   or loop between are made in one phase; arrivals elsewhere are taken to be in different
//!   phases, as the trips of an unrolled ring are). Which threads reach a call follows from the
//!   `if`s around it (ring_threads.rs), for each thread of the block every launch of the kernel
//!   gives (`block(64)`);
//! - **phase order** (ring_phase.rs): a hand-written ring's producer and consumer agree on its
//!   stage count and phase order.
//! - **release after wgmma** (ring_release.rs): a stage is released only once the wgmmas that read
//!   it are retired by `warpgroup_wait_group`.
//!
//! A refuted check is an error naming both sites; one the checker cannot decide (bytes or counts
//! known only at run time, a guard over loaded values, a barrier index it cannot follow) is a
//! warning saying what it could not see. Barriers are told apart by their tensor and element
//! offset; an offset that reads a `let mut` counter (`full[stage]`) is the same barrier as another
//! read of the counter with no write between, and may be any barrier of the tensor elsewhere.

use super::ring_threads::{Guards, Threads, Unseen};
use crate::diag::Diagnostic;
use crate::kir::{Inst, Kernel, MbarrierOp, Module, Operand, ValueId};
use crate::span::Span;
use crate::types::MemSpace;
use cute_layout::Int;
use std::collections::HashMap;
use std::rc::Rc;

/// The errors and warnings of every kernel's rings.
pub(super) fn check(module: &Module) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    let mut launches = Vec::new();
    for h in &module.hosts {
        super::launch_bounds::collect(&h.steps, &mut launches);
    }
    let mut out = Findings::default();
    for k in &module.kernels {
        if !uses_mbarriers(&k.body) {
            continue;
        }
        let (errors, warnings) = super::ring_release::check(k);
        errors.into_iter().for_each(|d| out.error(d));
        warnings.into_iter().for_each(|d| out.warn(d));
        let mut blocks: Vec<[i64; 3]> = Vec::new();
        let mut dynamic = None;
        for l in launches.iter().filter(|l| l.kernel == k.symbol) {
            match l.block.iter().map(Int::as_static).collect::<Option<Vec<i64>>>() {
                Some(b) if !blocks.contains(&[b[0], b[1], b[2]]) => blocks.push([b[0], b[1], b[2]]),
                Some(_) => {}
                None => dynamic = Some(l.span),
            }
        }
        // The bytes do not depend on the block: one walk checks them; the counts, one per block shape.
        let first = Walk::run(k, blocks.first().copied());
        first.check_tx(&mut out);
        let Some(block) = blocks.first() else {
            if first.has_arrivals() {
                let at = dynamic.unwrap_or(k.span);
                out.warn(
                    Diagnostic::error(format!("the arrival counts of kernel `{}`'s mbarriers are not checked: no launch gives it a static block", k.source_name), at, "block unknown at compile time")
                        .with_help("launch it with a compile-time `block(...)`: the checker counts the threads that arrive on each barrier"),
                );
            }
            continue;
        };
        first.check_counts(*block, &mut out);
        let (errors, warnings) = super::ring_phase::check(k, *block);
        errors.into_iter().for_each(|d| out.error(d));
        warnings.into_iter().for_each(|d| out.warn(d));
        for b in &blocks[1..] {
            Walk::run(k, Some(*b)).check_counts(*b, &mut out);
        }
        if let Some(at) = dynamic {
            out.warn(
                Diagnostic::error(format!("kernel `{}`'s mbarrier arrival counts are not checked for this launch: its block is known only at run time", k.source_name), at, "run-time block")
                    .with_help("give `block(...)` compile-time extents to have the counts checked"),
            );
        }
    }
    (out.errors, out.warnings)
}

#[derive(Default)]
struct Findings {
    errors: Vec<Diagnostic>,
    warnings: Vec<Diagnostic>,
}

impl Findings {
    fn error(&mut self, d: Diagnostic) {
        if !self.errors.contains(&d) {
            self.errors.push(d);
        }
    }
    fn warn(&mut self, d: Diagnostic) {
        if !self.warnings.contains(&d) {
            self.warnings.push(d);
        }
    }
}

fn uses_mbarriers(insts: &[Inst]) -> bool {
    insts.iter().any(|i| matches!(i, Inst::Mbarrier { .. }) || i.regions().into_iter().any(uses_mbarriers))
}

/// A barrier operand: its tensor and element offset (counter reads made canonical).
#[derive(Clone, PartialEq)]
struct Bar {
    tensor: ValueId,
    offset: Int,
}

struct Init {
    bar: Bar,
    count: Option<i64>,
    span: Span,
}

struct Arrival {
    bar: Bar,
    threads: Threads,
    /// The blocks whose `threads` arrive: 1, or a cluster's blocks arriving on each other's
    /// barriers (`cta:`), `threads` those of each block that name rank 0 (`Walk::cluster`).
    blocks: usize,
    /// A cluster arrival's threads that name each rank (none for a block's own).
    ranks: Vec<usize>,
    span: Span,
    /// The run it is part of: the arrivals on one barrier in one block of statements with no
    /// wait, `if` or loop between, which the same threads make in one phase.
    run: usize,
}

/// An `mbarrier_arrive_and_expect_tx` and the `tma_load`s on its barrier after it in its block.
struct TxGroup {
    bar: Bar,
    bytes: Option<i64>,
    span: Span,
    loads: Vec<(i64, Span)>,
    /// A load on the barrier under a branch or loop of the block: its bytes may or may not count.
    unseen: Option<Unseen>,
}

/// The loads of one arm of an `if` on barriers announced outside it, kept until the other arm is
/// walked: where both arms bring a barrier the same bytes they count as loads of the `if`'s block.
struct Arm {
    /// The arm's block's level (its index in `Walk::open`).
    level: usize,
    loads: Vec<(Bar, i64, Span)>,
    /// Barriers of the arm's loads the checker could not follow (under a loop, multicast).
    unseen: Vec<(Bar, Unseen)>,
}

impl Arm {
    fn bytes(&self, bar: &Bar) -> i64 {
        self.loads.iter().filter(|(b, ..)| b == bar).map(|(_, n, _)| n).sum()
    }
}

struct Walk<'k> {
    guards: Guards<'k>,
    /// Register cells (`let mut`): how often each was written so far, and the first read of each
    /// version, which stands for the later reads of the same version.
    versions: HashMap<ValueId, u32>,
    first_read: HashMap<(ValueId, u32, String), ValueId>,
    alias: HashMap<ValueId, ValueId>,
    inits: Vec<Init>,
    arrivals: Vec<Arrival>,
    /// The runs of arrivals open in each enclosing block (barrier, run), innermost last.
    runs: Vec<Vec<(Bar, usize)>>,
    /// The open transaction groups of each enclosing block, innermost last.
    open: Vec<Vec<TxGroup>>,
    groups: Vec<TxGroup>,
    orphans: Vec<Span>,
    /// The arms of the `if`s being walked, innermost last.
    arms: Vec<Arm>,
    /// The blocks of the kernel's thread-block cluster (`cluster(...)` of its launches), where
    /// more than one.
    cluster: Option<usize>,
    /// The multicast loads counted from every block of the cluster, by span.
    multicast: HashMap<Span, usize>,
}

impl<'k> Walk<'k> {
    fn run(k: &'k Kernel, block: Option<[i64; 3]>) -> Walk<'k> {
        let guards = Guards::new(k, block);
        let threads = guards.all(k);
        let mut w = Walk {
            guards,
            versions: HashMap::new(),
            first_read: HashMap::new(),
            alias: HashMap::new(),
            inits: Vec::new(),
            arrivals: Vec::new(),
            open: Vec::new(),
            runs: Vec::new(),
            groups: Vec::new(),
            orphans: Vec::new(),
            arms: Vec::new(),
            multicast: HashMap::new(),
            cluster: k
                .cluster
                .as_ref()
                .and_then(|c| usize::try_from(c.dims.iter().map(|d| u64::from(*d)).product::<u64>()).ok())
                .filter(|n| *n > 1),
        };
        w.block(&k.body, &threads);
        w
    }

    fn has_arrivals(&self) -> bool {
        !self.inits.is_empty() && !self.arrivals.is_empty()
    }

    /// The barrier `offset` elements into `tensor`, with counter reads made canonical.
    fn bar(&self, tensor: ValueId, offset: &Int) -> Bar {
        let mut canon = |id: u32, div: i64| Ok(Int::var(self.alias.get(&id).copied().unwrap_or(id), div));
        Bar { tensor, offset: offset.subst(&mut canon).unwrap_or_else(|_| offset.clone()) }
    }

    /// Where `threads` arrive on the barrier of the cluster's block `cta` names for each
    /// (`mbarrier_arrive(bar, cta: lane)`): those that name rank 0, and how many name each rank.
    /// The blocks of a cluster run the same statements, so block r's barrier gets from every
    /// block the arrivals that name r; the count check takes rank 0's and checks that the sites
    /// of a barrier name every rank alike. A `cta` that is the index of a loop over the
    /// cluster's ranks names each once for every thread. `None` where a rank is not known for
    /// each thread.
    fn cluster_arrivals(&self, threads: &Threads, cta: Option<&Operand>) -> Option<(Rc<Vec<bool>>, Vec<usize>)> {
        let blocks = self.cluster?;
        let Ok(set) = threads else { return None };
        let cta = cta?;
        if let Operand::Value(iv) = cta {
            if let Some((lb, ub, step)) = self.guards.ivs.get(iv) {
                let whole =
                    (lb.as_static(), ub.as_static(), step.as_static()) == (Some(0), Some(blocks as i64), Some(1));
                let n = set.iter().filter(|on| **on).count();
                return whole.then(|| (set.clone(), vec![n; blocks]));
            }
        }
        let ranks = self.guards.per_thread(threads, cta)?;
        let mut per_rank = vec![0usize; blocks];
        let mut rank0 = vec![false; set.len()];
        for (t, r) in ranks {
            *per_rank.get_mut(usize::try_from(r).ok()?)? += 1;
            rank0[t] = r == 0;
        }
        Some((Rc::new(rank0), per_rank))
    }

    /// An arrival on `bar`, in the run of the arrivals on it before in this block, if any.
    fn arrive(&mut self, bar: Bar, threads: &Threads, span: Span) {
        let runs = self.runs.last_mut().expect("a block is open");
        let run = match runs.iter().find(|(b, _)| *b == bar) {
            Some((_, r)) => *r,
            None => {
                runs.push((bar.clone(), self.arrivals.len()));
                self.arrivals.len()
            }
        };
        self.arrivals.push(Arrival { bar, threads: threads.clone(), blocks: 1, ranks: Vec::new(), span, run });
    }

    fn block(&mut self, insts: &'k [Inst], threads: &Threads) {
        self.open.push(Vec::new());
        self.runs.push(Vec::new());
        for i in insts {
            if !i.regions().is_empty() {
                self.runs.last_mut().expect("a block is open").clear();
            }
            self.inst(i, threads);
        }
        self.runs.pop();
        let done = self.open.pop().unwrap_or_default();
        self.groups.extend(done);
    }

    fn inst(&mut self, i: &'k Inst, threads: &Threads) {
        match i {
            Inst::Load { dst, tensor, ty, at, .. } if ty.space == MemSpace::Rmem => {
                let version = self.versions.get(tensor).copied().unwrap_or(0);
                let first = *self.first_read.entry((*tensor, version, format!("{at:?}"))).or_insert(*dst);
                self.alias.insert(*dst, first);
            }
            Inst::Store { tensor, .. } | Inst::StoreFrag { tensor, .. } => {
                *self.versions.entry(*tensor).or_insert(0) += 1;
            }
            Inst::If { cond, then, els, span } => {
                let (t, e) = self.guards.split(threads, cond, *span);
                let level = self.open.len();
                self.arms.push(Arm { level, loads: Vec::new(), unseen: Vec::new() });
                self.block(then, &t);
                let then_arm = self.arms.pop().expect("pushed above");
                self.arms.push(Arm { level, loads: Vec::new(), unseen: Vec::new() });
                self.block(els, &e);
                let else_arm = self.arms.pop().expect("pushed above");
                self.join_arms(then_arm, else_arm, level - 1);
            }
            Inst::For { body, exit, .. } => {
                if let Some(c) = exit {
                    self.block(&c.insts, threads);
                }
                self.block(body, threads);
            }
            Inst::While { cond, body, .. } => {
                self.block(&cond.insts, threads);
                self.block(body, threads);
            }
            Inst::Assert { cond, .. } => self.block(&cond.insts, threads),
            Inst::Mbarrier { op, tensor, offset, arg, span, .. } => {
                let bar = self.bar(*tensor, offset);
                let value = match arg {
                    Some(Operand::Int(i)) => i.as_static(),
                    _ => None,
                };
                match op {
                    MbarrierOp::Init => self.inits.push(Init { bar, count: value, span: *span }),
                    MbarrierOp::Arrive => self.arrive(bar, threads, *span),
                    MbarrierOp::ArriveExpectTx => {
                        self.arrive(bar.clone(), threads, *span);
                        let open = self.open.last_mut().expect("a block is open");
                        if let Some(at) = open.iter().position(|g| g.bar == bar) {
                            self.groups.push(open.remove(at));
                        }
                        open.push(TxGroup { bar, bytes: value, span: *span, loads: Vec::new(), unseen: None });
                    }
                    MbarrierOp::Wait | MbarrierOp::TryWait => self.runs.last_mut().expect("a block is open").clear(),
                    // The blocks of the cluster arrive on each other's barriers: one block's threads
                    // do not give the count.
                    MbarrierOp::ArriveCluster => {
                        let (threads, blocks, ranks) = match self.cluster_arrivals(threads, arg.as_ref()) {
                            Some((rank0, ranks)) => (Ok(rank0), ranks.len(), ranks),
                            None => {
                                let what = "the arrivals from other blocks of the cluster (`cta:`: the rank a thread names is not known for each, or the kernel has no static `cluster(...)`)".into();
                                (Err(Unseen { span: *span, what }), 1, Vec::new())
                            }
                        };
                        let run = self.arrivals.len();
                        self.arrivals.push(Arrival { bar, threads, blocks, ranks, span: *span, run });
                    }
                }
            }
            Inst::TmaLoad { smem_ty, bar, offset, multicast, span, .. } => {
                let bar = self.bar(*bar, offset);
                let bytes = smem_ty.layout.size().ok().and_then(|s| s.as_static()).unwrap_or(0)
                    * i64::from(smem_ty.elem.size_bytes());
                match (multicast, self.cluster) {
                    (None, _) => self.load(bar, bytes, *span, self.open.len() - 1),
                    // A mask of every block of the cluster: each block's load lands in all of
                    // them, so each barrier gets the box from every block (the blocks of a cluster
                    // run the same statements: a load under a condition on the block's rank is
                    // an `if` arm the other blocks do not take, left unchecked).
                    (Some(Operand::Int(mask)), Some(c)) if c < 32 && mask.as_static() == Some((1i64 << c) - 1) => {
                        self.multicast.insert(*span, c);
                        self.load(bar, bytes * c as i64, *span, self.open.len() - 1)
                    }
                    (Some(_), _) => {
                        let what = "the bytes other blocks of the cluster multicast to this barrier (its mask is not a compile-time value naming every block of the cluster)";
                        self.load_unseen(bar, Unseen { span: *span, what: what.into() }, self.open.len() - 1);
                    }
                }
            }
            _ => {}
        }
    }

    /// A load of `bytes` on `bar` in the block at `level`: one of the transaction group announced
    /// on `bar` in that block, or of the `if` arm that block is, or one the checker cannot count.
    fn load(&mut self, bar: Bar, bytes: i64, span: Span, level: usize) {
        let Some(d) = self.group_level(&bar, level) else {
            self.orphans.push(span);
            return;
        };
        if d == level {
            let g = self.open[d].iter_mut().find(|g| g.bar == bar).expect("found above");
            g.loads.push((bytes, span));
        } else if let Some(arm) = self.arms.last_mut().filter(|a| a.level == level) {
            arm.loads.push((bar, bytes, span));
        } else {
            self.load_unseen(bar, Unseen { span, what: "this `tma_load` under a branch or loop".into() }, level);
        }
    }

    /// A load on `bar` in the block at `level` whose bytes the checker cannot count: its group
    /// (or the `if` arm on the way to it) is not checked.
    fn load_unseen(&mut self, bar: Bar, unseen: Unseen, level: usize) {
        let Some(d) = self.group_level(&bar, level) else {
            self.orphans.push(unseen.span);
            return;
        };
        if d < level {
            if let Some(arm) = self.arms.last_mut().filter(|a| a.level == level) {
                arm.unseen.push((bar, unseen));
                return;
            }
        }
        let g = self.open[d].iter_mut().find(|g| g.bar == bar).expect("found above");
        g.unseen.get_or_insert(unseen);
    }

    /// The level of the innermost block at or outside `level` with an open transaction group on `bar`.
    fn group_level(&self, bar: &Bar, level: usize) -> Option<usize> {
        (0..=level).rev().find(|&d| self.open[d].iter().any(|g| g.bar == *bar))
    }

    /// An `if` at `level` whose arms loaded on barriers announced outside them: where both arms
    /// bring a barrier the same bytes and the checker saw all of them, the loads count as the
    /// `if` block's own (the first arm's, for their spans); otherwise the barrier is not checked.
    fn join_arms(&mut self, then_arm: Arm, else_arm: Arm, level: usize) {
        let mut bars: Vec<Bar> = Vec::new();
        let named = then_arm.loads.iter().map(|(b, ..)| b).chain(then_arm.unseen.iter().map(|(b, _)| b));
        for b in named.chain(else_arm.loads.iter().map(|(b, ..)| b)).chain(else_arm.unseen.iter().map(|(b, _)| b)) {
            if !bars.contains(b) {
                bars.push(b.clone());
            }
        }
        for bar in bars {
            if let Some((_, u)) = then_arm.unseen.iter().chain(&else_arm.unseen).find(|(b, _)| *b == bar) {
                self.load_unseen(bar, u.clone(), level);
                continue;
            }
            if then_arm.bytes(&bar) == else_arm.bytes(&bar) {
                for (b, bytes, span) in then_arm.loads.iter().filter(|(b, ..)| *b == bar) {
                    self.load(b.clone(), *bytes, *span, level);
                }
            } else {
                let span = then_arm.loads.iter().chain(&else_arm.loads).find(|(b, ..)| *b == bar).expect("a load").2;
                let what = "this `tma_load` under an `if` whose arms load different bytes".into();
                self.load_unseen(bar, Unseen { span, what }, level);
            }
        }
    }
}

/// The most combinations of loop indices enumerated to tell which barriers an offset names.
const MAX_ENUMERATED: usize = 4096;

impl Walk<'_> {
    /// The static offsets `off` takes over the static ranges of the loops whose indices it reads;
    /// `None` when it reads anything else (a counter, a parameter) or the ranges are too large.
    fn offsets(&self, off: &Int) -> Option<Vec<i64>> {
        if let Some(v) = off.as_static() {
            return Some(vec![v]);
        }
        let mut vars = Vec::new();
        off.subst(&mut |id, div| {
            if !vars.contains(&id) {
                vars.push(id);
            }
            Ok(Int::var(id, div))
        })
        .ok()?;
        let mut ranges = Vec::new();
        for v in &vars {
            let (lb, ub, step) = self.guards.ivs.get(v)?;
            let (lb, ub, step) = (lb.as_static()?, ub.as_static()?, step.as_static()?);
            if step <= 0 {
                return None;
            }
            ranges.push((lb..ub).step_by(step as usize).collect::<Vec<i64>>());
        }
        if ranges.iter().map(Vec::len).try_fold(1usize, |a, n| a.checked_mul(n)).is_none_or(|n| n > MAX_ENUMERATED) {
            return None;
        }
        let mut out = Vec::new();
        let mut pick = vec![0usize; ranges.len()];
        loop {
            let env = |id: u32| vars.iter().position(|v| *v == id).and_then(|k| ranges[k].get(pick[k]).copied());
            if let Some(x) = off.eval(&env) {
                if !out.contains(&x) {
                    out.push(x);
                }
            }
            let mut k = 0;
            while k < pick.len() {
                pick[k] += 1;
                if pick[k] < ranges[k].len() {
                    break;
                }
                pick[k] = 0;
                k += 1;
            }
            if k == pick.len() || ranges.iter().any(Vec::is_empty) {
                return Some(out);
            }
        }
    }

    /// Rule (a): each announcement's bytes against the bytes of the loads that complete on its
    /// barrier in its phase.
    fn check_tx(&self, out: &mut Findings) {
        for g in &self.groups {
            let loaded: i64 = g.loads.iter().map(|(b, _)| b).sum();
            if let Some(u) = &g.unseen {
                out.warn(unseen_warning("the transaction bytes of this barrier are not checked", g.span, u));
                continue;
            }
            let Some(bytes) = g.bytes else {
                out.warn(
                    Diagnostic::error("the transaction bytes of this barrier are not checked: they are known only at run time", g.span, "run-time byte count")
                        .with_help("write the bytes as a compile-time expression (`BM * BK * 2`) to have them checked against the `tma_load`s"),
                );
                continue;
            };
            if g.loads.is_empty() {
                if bytes != 0 {
                    out.warn(
                        Diagnostic::error(format!("the {bytes} transaction bytes announced here are not checked: no `tma_load` on this barrier follows in the same block"), g.span, "no `tma_load` to check against")
                            .with_help("issue the `tma_load`s that complete on the barrier right after the announcement, in the same block, to have their bytes checked"),
                    );
                }
                continue;
            }
            if loaded != bytes {
                let n = g.loads.len();
                let mut d = Diagnostic::error(
                    format!("this barrier expects {bytes} transaction bytes per phase, but the {} that complete{} on it bring{} {loaded}", crate::diag::count(n, "`tma_load`"), if n == 1 { "s" } else { "" }, if n == 1 { "s" } else { "" }),
                    g.span,
                    format!("expects {bytes} bytes"),
                );
                for (b, at) in &g.loads {
                    let label = match self.multicast.get(at) {
                        Some(c) => {
                            format!("completes {b} bytes ({} from each of the cluster's {c} blocks)", b / *c as i64)
                        }
                        None => format!("completes {b} bytes"),
                    };
                    d = d.with_secondary(*at, label);
                }
                out.error(d.with_help(format!("announce the bytes of the tiles loaded in the phase: `{loaded}` (each `tma_load` counts its whole box, out-of-bounds zeros included)")));
            }
        }
        for at in &self.orphans {
            out.warn(
                Diagnostic::error("the bytes of this `tma_load` are not checked: no `mbarrier_arrive_and_expect_tx` on its barrier precedes it in the same block", *at, "no announcement to check against")
                    .with_help("announce the bytes (`mbarrier_arrive_and_expect_tx(bar, BYTES)`) right before the loads, in the same block"),
            );
        }
    }

    /// Rule (b): each barrier's arrival count against the threads that arrive on it.
    fn check_counts(&self, block: [i64; 3], out: &mut Findings) {
        let threads = block.iter().product::<i64>();
        for init in &self.inits {
            let Some(count) = init.count else {
                out.warn(
                    Diagnostic::error(
                        "the arrival count of this barrier is not checked: it is known only at run time",
                        init.span,
                        "run-time count",
                    )
                    .with_help("write the count as a compile-time expression (`128 * WG_M`) to have it checked"),
                );
                continue;
            };
            let Some(mine) = self.offsets(&init.bar.offset) else {
                out.warn(
                    Diagnostic::error("the arrival count of this barrier is not checked: the checker cannot tell which barrier it initializes", init.span, "barrier index not followed")
                        .with_help("index the barriers with compile-time values or loop indices over static ranges"),
                );
                continue;
            };
            // The arrivals that may name one of these barriers, and whether exactly.
            let mut sites = Vec::new();
            let mut exact = true;
            for a in self.arrivals.iter().filter(|a| a.bar.tensor == init.bar.tensor) {
                match self.offsets(&a.bar.offset) {
                    Some(offs) if offs.iter().any(|o| mine.contains(o)) => sites.push(a),
                    Some(_) => {}
                    None => {
                        exact = false;
                        sites.push(a);
                    }
                }
            }
            let Some(first) = sites.first() else { continue };
            // A cluster's arrivals give every block's barrier the same count only where its sites
            // name every rank alike.
            let mut per_rank: Vec<usize> = Vec::new();
            for a in sites.iter().filter(|a| a.blocks > 1) {
                per_rank.resize(a.ranks.len(), 0);
                per_rank.iter_mut().zip(&a.ranks).for_each(|(n, m)| *n += m);
            }
            if per_rank.iter().any(|n| *n != per_rank[0]) {
                let times: Vec<String> = per_rank.iter().map(usize::to_string).collect();
                let u = Unseen {
                    span: first.span,
                    what: format!(
                        "the same count at every block of the cluster (its arrivals name the cluster's ranks {} times)",
                        times.join(", ")
                    ),
                };
                out.warn(
                    unseen_warning("the arrival count of this barrier is not checked", first.span, &u)
                        .with_secondary(init.span, format!("initialized for {count} arrivals")),
                );
                continue;
            }
            // Each thread's arrivals per phase: the most it makes in one run.
            let mut per_thread = vec![0usize; threads.max(0) as usize];
            let mut per_site = Vec::new();
            for a in &sites {
                let set = match &a.threads {
                    Ok(set) => set,
                    Err(u) => {
                        out.warn(
                            unseen_warning("the arrival count of this barrier is not checked", a.span, u)
                                .with_secondary(init.span, format!("initialized for {count} arrivals")),
                        );
                        per_site.clear();
                        break;
                    }
                };
                let times = sites.iter().filter(|b| b.run == a.run).count();
                let mut n = 0;
                for (t, _) in set.iter().enumerate().filter(|(_, on)| **on) {
                    per_thread[t] = per_thread[t].max(times * a.blocks);
                    n += 1;
                }
                per_site.push((a.span, n, times, a.blocks));
            }
            if per_site.len() != sites.len() {
                continue;
            }
            let arrivals = per_thread.iter().sum::<usize>() as i64;
            let arriving = per_thread.iter().filter(|n| **n > 0).count();
            if arrivals == count {
                continue;
            }
            // A single arrival that may name any barrier of the tensor is all the arrivals of
            // whichever it names: its count refutes as well as an exact one.
            if !exact && sites.len() > 1 {
                out.warn(
                    Diagnostic::error("the arrival count of this barrier is not checked: an arrival's barrier index is a run-time counter the checker cannot follow", init.span, format!("initialized for {count} arrivals"))
                        .with_secondary(first.span, "arrives here"),
                );
                continue;
            }
            let cluster = sites.iter().map(|a| a.blocks).max().unwrap_or(1);
            let repeated = if cluster > 1 {
                format!(", {arrivals} arrivals per phase from the cluster's {cluster} blocks (each block's threads that name this block's rank)")
            } else if arrivals == arriving as i64 {
                String::new()
            } else {
                format!(", {arrivals} arrivals per phase (a thread's arrivals on it in one block, with no wait, `if` or loop between, are in one phase)")
            };
            let mut d = Diagnostic::error(
                format!("this barrier is initialized for {count} arrivals per phase, but {} of the {threads}-thread block arrive{} on it{repeated}", crate::diag::count(arriving, "thread"), if arriving == 1 { "s" } else { "" }),
                init.span,
                format!("initialized for {count} arrivals"),
            );
            for (at, n, times, blocks) in &per_site {
                if !d.secondary.iter().any(|(s, _)| s == at) {
                    let each = if *times > 1 {
                        format!(", {times} times each per phase with the arrivals beside it")
                    } else {
                        String::new()
                    };
                    let whose = if *blocks > 1 {
                        format!(" from each of the cluster's {blocks} blocks")
                    } else {
                        String::new()
                    };
                    d = d.with_secondary(
                        *at,
                        format!(
                            "{}{whose} arrive{} here{each}",
                            crate::diag::count(*n, "thread"),
                            if *n == 1 && whose.is_empty() { "s" } else { "" }
                        ),
                    );
                }
            }
            let what = if repeated.is_empty() { "the threads that arrive" } else { "the arrivals" };
            out.error(d.with_help(format!("initialize it with {what} per phase (`{arrivals}`), or guard the arrival so that {count} threads reach it (`if thread_idx.x == 0`, `if warp_idx() == 0`, ...)")));
        }
    }
}

fn unseen_warning(what: &str, at: Span, u: &Unseen) -> Diagnostic {
    Diagnostic::error(format!("{what}: the checker cannot see {}", u.what), at, "not checked")
        .with_secondary(u.span, "not followed")
}
