//! Rule (c) of the ring checks (docs/language.md §8.8, "Checked rings"): the two sides of a
//! hand-written ring agree on its stage count and phase order.
//!
//! The walk (ring_walk.rs) follows the kernel in program order with the values it knows, walking
//! the first trips of a loop that waits on or arrives at barriers one by one, with their indices,
//! enough of them (twice the barriers of the largest barrier tensor, plus one) to see the ring
//! wrap twice; the threads that reach each barrier operation come from the `if`s around it
//! (ring_threads.rs). Each thread's barrier operations, in order, make its sequence; threads with
//! the same sequence are one role (the producer warp, the consumer warpgroup). Then, barrier by
//! barrier (tensor and element), for each role:
//!
//! - its successive waits on one barrier alternate parity: each waits for the phase after the
//!   previous one's (a consumer's k-th wait on a full barrier waits for parity k % 2, a producer's
//!   on an empty barrier for (k + 1) % 2, the fresh barrier's phase before the first counting as
//!   complete, so that its first wait passes at once);
//! - the barriers it waits on and another role arrives on (and neither does the other) are
//!   waited in the order the other completes their phases: its n-th wait that waits for a phase
//!   (not a first, free one) is on the barrier of the other's n-th arrival (consecutive arrivals
//!   on one barrier with no wait between count as one): both sides wrap at the same stage count
//!   and step the stage alike;
//! - of two roles that wait on each other's arrivals, exactly one passes its first wait free (the
//!   producer: the ring starts empty): both free is a race, neither a deadlock;
//! - every barrier waited on or arrived at is one an `mbarrier_init` initializes.
//!
//! A pipeline value's barriers are left out: its states agree by construction (pipeline.rs). What
//! the walk cannot follow (a barrier index or parity loaded from memory, an `if` it cannot decide
//! that is the same for every thread, a loop with run-time bounds and step, `mbarrier_try_wait`)
//! makes the barrier tensor's rule a warning saying what it could not see.

use super::ring_threads::{Guards, Threads};
use super::ring_walk::{Followed, Trips, Values, Visitor};
use crate::diag::Diagnostic;
use crate::kir::{Inst, Kernel, MbarrierOp, Operand, ValueId};
use crate::span::Span;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// The errors and warnings of rule (c) in kernel `k` launched with `block`.
pub(super) fn check(k: &Kernel, block: [i64; 3]) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    let guards = Guards::new(k, Some(block));
    let all = guards.all(k);
    let mut p = Phases {
        guards,
        threads: vec![(all, None)],
        trips: 2 * largest_barrier_tensor(&k.body) + 1,
        events: Vec::new(),
        pipelines: pipeline_barriers(&k.body),
        cut: None,
    };
    super::ring_walk::walk(k, &mut p);
    let mut out = Out::default();
    p.judge(block.iter().product::<i64>().max(0) as usize, &mut out);
    (out.errors, out.warnings)
}

#[derive(Default)]
struct Out {
    errors: Vec<Diagnostic>,
    warnings: Vec<Diagnostic>,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Init,
    Wait,
    Arrive,
    /// What the walk cannot order (`mbarrier_try_wait`, an arrival from another block).
    Unordered,
}

struct Event {
    kind: Kind,
    tensor: ValueId,
    offset: Followed,
    /// A wait's parity.
    parity: Followed,
    threads: Threads,
    /// The `if` the same for every thread that the walk could not decide, around the event.
    maybe: Option<Span>,
    span: Span,
}

/// The most events walked: a ring's events in a few trips are far fewer.
const MAX_EVENTS: usize = 50_000;

struct Phases<'k> {
    guards: Guards<'k>,
    /// The threads of each enclosing undecided `if`'s branch, and the innermost one the same for
    /// every thread.
    threads: Vec<(Threads, Option<Span>)>,
    trips: usize,
    events: Vec<Event>,
    /// The barrier tensors left out: a pipeline value's, and those other blocks arrive on.
    pipelines: HashSet<ValueId>,
    /// Where the walk stopped recording (too many events).
    cut: Option<Span>,
}

impl Visitor for Phases<'_> {
    type State = ();

    fn meet(&mut self, _: &mut (), _: &()) {}

    fn inst(&mut self, vals: &Values, i: &Inst, _: &mut ()) {
        let Inst::Mbarrier { op, tensor, offset, arg, span, .. } = i else { return };
        if self.pipelines.contains(tensor) {
            return;
        }
        if self.events.len() >= MAX_EVENTS {
            self.cut.get_or_insert(*span);
            return;
        }
        let kind = match op {
            MbarrierOp::Init => Kind::Init,
            MbarrierOp::Wait => Kind::Wait,
            MbarrierOp::Arrive | MbarrierOp::ArriveExpectTx => Kind::Arrive,
            MbarrierOp::TryWait => Kind::Unordered,
            // Other blocks arrive too: the arrival counts' rule warns that it cannot see them.
            MbarrierOp::ArriveCluster => {
                self.pipelines.insert(*tensor);
                return;
            }
        };
        let parity = match (kind, arg) {
            (Kind::Wait, Some(a @ (Operand::Int(_) | Operand::Value(_)))) => vals.value(a).ok_or(*span),
            _ => Err(*span),
        };
        let (threads, maybe) = self.threads.last().cloned().expect("the block's threads are pushed first");
        self.events.push(Event {
            kind,
            tensor: *tensor,
            offset: vals.canon(offset, *span),
            parity,
            threads,
            maybe,
            span: *span,
        });
    }

    // Only barrier operations are recorded with their threads: an `if` around none (a mask on a
    // fragment's elements, unrolled) needs no split of the threads, which evaluates its condition
    // for every thread of the block.
    fn watches(&self, then: &[Inst], els: &[Inst]) -> bool {
        has_barrier_ops(then) || has_barrier_ops(els)
    }

    fn enter(&mut self, cond: &Operand, span: Span, taken: bool) {
        let (outer, maybe) = self.threads.last().cloned().expect("the block's threads are pushed first");
        let (then, els) = self.guards.split(&outer, cond, span);
        let inner = if taken { then } else { els };
        // A condition the same for every thread lets them all through: whether it holds is what
        // the walk could not decide.
        let same = matches!((&inner, &outer), (Ok(a), Ok(b)) if Rc::ptr_eq(a, b));
        self.threads.push((inner, if same { Some(span) } else { maybe }));
    }

    fn leave(&mut self) {
        self.threads.pop();
    }

    fn trips(&self, body: &[Inst]) -> Trips {
        if has_barrier_ops(body) {
            Trips::First(self.trips)
        } else {
            Trips::Twice
        }
    }
}

fn has_barrier_ops(insts: &[Inst]) -> bool {
    insts.iter().any(|i| matches!(i, Inst::Mbarrier { .. }) || i.regions().into_iter().any(has_barrier_ops))
}

/// The most barriers of one tensor the walk's trip count follows.
const MAX_RING: usize = 32;

fn largest_barrier_tensor(insts: &[Inst]) -> usize {
    let mut most = 1;
    for i in insts {
        if let Inst::Mbarrier { ty, .. } = i {
            let n = ty.layout.size().ok().and_then(|s| s.as_static()).unwrap_or(1);
            most = most.max(usize::try_from(n).unwrap_or(1).min(MAX_RING));
        }
        for r in i.regions() {
            most = most.max(largest_barrier_tensor(r));
        }
    }
    most
}

/// The barrier tensors a pipeline value made: the views that its `make_pipeline_*` call slices
/// and initializes (the views and their inits carry the call's span; a ring written by hand
/// initializes its barriers at `mbarrier_init` calls, not where it makes its tensors).
fn pipeline_barriers(body: &[Inst]) -> HashSet<ValueId> {
    fn visit(insts: &[Inst], views: &mut HashMap<ValueId, Span>, inits: &mut Vec<(ValueId, Span)>) {
        for i in insts {
            match i {
                Inst::View { dst, span, .. } => {
                    views.insert(*dst, *span);
                }
                Inst::Mbarrier { op: MbarrierOp::Init, tensor, span, .. } => inits.push((*tensor, *span)),
                _ => {}
            }
            for r in i.regions() {
                visit(r, views, inits);
            }
        }
    }
    let (mut views, mut inits) = (HashMap::new(), Vec::new());
    visit(body, &mut views, &mut inits);
    inits.into_iter().filter(|(t, at)| views.get(t) == Some(at)).map(|(t, _)| t).collect()
}

/// A barrier: its tensor and element.
type Bar = (ValueId, i64);

/// One role's operation on a barrier, in its order.
#[derive(Clone, Copy)]
struct Op {
    kind: Kind,
    bar: Bar,
    parity: i64,
    span: Span,
}

/// A role: threads with the same sequence of barrier operations.
struct Role {
    ops: Vec<Op>,
}

impl Role {
    fn waits(&self, b: Bar) -> bool {
        self.ops.iter().any(|o| o.kind == Kind::Wait && o.bar == b)
    }
    fn arrives(&self, b: Bar) -> bool {
        self.ops.iter().any(|o| o.kind == Kind::Arrive && o.bar == b)
    }
}

impl Phases<'_> {
    fn judge(&self, threads: usize, out: &mut Out) {
        let unseen = self.unseen(out);
        let events: Vec<(usize, &Event)> =
            self.events.iter().enumerate().filter(|(_, e)| !unseen.contains(&e.tensor)).collect();
        let inits: HashSet<Bar> = events
            .iter()
            .filter(|(_, e)| e.kind == Kind::Init)
            .filter_map(|(_, e)| Some((e.tensor, e.offset.as_ref().ok()?.as_static()?)))
            .collect();
        let init_span: HashMap<ValueId, Span> =
            events.iter().filter(|(_, e)| e.kind == Kind::Init).map(|(_, e)| (e.tensor, e.span)).collect();
        // Each thread's sequence of operations (event indices); one role per distinct sequence.
        let mut seqs: Vec<Vec<usize>> = vec![Vec::new(); threads];
        for (n, e) in events.iter().filter(|(_, e)| e.kind != Kind::Init) {
            if let Ok(set) = &e.threads {
                for (t, _) in set.iter().enumerate().filter(|(_, on)| **on) {
                    seqs[t].push(*n);
                }
            }
        }
        let mut distinct: Vec<&Vec<usize>> = Vec::new();
        for s in seqs.iter().filter(|s| !s.is_empty()) {
            if !distinct.contains(&s) {
                distinct.push(s);
            }
        }
        let roles: Vec<Role> = distinct
            .iter()
            .map(|s| Role {
                ops: s
                    .iter()
                    .map(|n| {
                        let e = &self.events[*n];
                        let bar = (e.tensor, e.offset.as_ref().ok().and_then(|o| o.as_static()).unwrap_or(0));
                        let parity = e.parity.as_ref().ok().and_then(|p| p.as_static()).unwrap_or(0);
                        Op { kind: e.kind, bar, parity, span: e.span }
                    })
                    .collect(),
            })
            .collect();
        for r in &roles {
            for o in &r.ops {
                if !inits.contains(&o.bar) {
                    if let Some(at) = init_span.get(&o.bar.0) {
                        let what = if o.kind == Kind::Wait { "waits on" } else { "arrives on" };
                        error(out, Diagnostic::error(format!("this {what} element {} of its barrier tensor, which no `mbarrier_init` initializes", o.bar.1), o.span, "not initialized")
                            .with_secondary(*at, "the tensor's barriers are initialized here")
                            .with_help("wrap the stage counter at the number of barriers initialized (`if stage == STAGES { stage = 0; ... }`), and initialize every stage's barrier"));
                    }
                }
            }
            alternation(r, &init_span, out);
        }
        for (w, waiter) in roles.iter().enumerate() {
            for (a, arriver) in roles.iter().enumerate() {
                if w != a {
                    stage_order(waiter, arriver, out);
                    if w < a {
                        first_waits(waiter, arriver, out);
                    }
                }
            }
        }
    }

    /// The barrier tensors whose events the walk could not follow, each warned about once.
    fn unseen(&self, out: &mut Out) -> HashSet<ValueId> {
        let mut unseen = HashSet::new();
        for e in &self.events {
            if unseen.contains(&e.tensor) {
                continue;
            }
            let not_static = |f: &Followed| f.as_ref().ok().and_then(|v| v.as_static()).is_none();
            let why = match () {
                _ if e.kind == Kind::Unordered => Some((
                    e.span,
                    "the order of this operation (an `mbarrier_try_wait` has waited only where it returned true)",
                )),
                _ if not_static(&e.offset) => {
                    Some((e.span, "which barrier this names (its index is a value the checker does not know here)"))
                }
                _ if e.kind == Kind::Wait && not_static(&e.parity) => {
                    Some((e.span, "which phase this waits for (its parity is a value the checker does not know here)"))
                }
                _ if e.threads.is_err() => Some((e.span, "which threads reach this")),
                _ => e.maybe.map(|at| {
                    (at, "whether this condition holds (it is the same for every thread, and known only at run time)")
                }),
            };
            if let Some((at, what)) = why {
                unseen.insert(e.tensor);
                let mut d = Diagnostic::error(
                    format!("the phase order of this ring is not checked: the checker cannot see {what}"),
                    e.span,
                    "not checked",
                );
                if at != e.span {
                    d = d.with_secondary(at, "not followed");
                }
                warn(out, d.with_help("the checker follows stage and phase counters that start from compile-time values and are stepped under conditions it can decide, in loops with compile-time start and step"));
            }
        }
        if let Some(at) = self.cut {
            warn(out, Diagnostic::error("the phase order of the rings after this point is not checked: the walk stopped here (too many barrier operations)", at, "not checked"));
        }
        unseen
    }
}

/// A role's successive waits on one barrier alternate parity.
fn alternation(r: &Role, inits: &HashMap<ValueId, Span>, out: &mut Out) {
    let mut last: HashMap<Bar, &Op> = HashMap::new();
    for o in r.ops.iter().filter(|o| o.kind == Kind::Wait) {
        if let Some(prev) = last.get(&o.bar) {
            if prev.parity == o.parity {
                let mut d = Diagnostic::error(
                    format!("this waits for a phase of parity {} of its barrier, as the previous wait on it did: the phase it waited for is complete, so this passes without waiting for the next", o.parity),
                    o.span,
                    format!("parity {} again", o.parity),
                );
                // The same wait in a later trip: the barrier's init is the other site.
                d = match inits.get(&o.bar.0) {
                    Some(init) if prev.span == o.span => d.with_secondary(
                        *init,
                        format!(
                            "the barrier (element {}), initialized here; waited for parity {} in two successive rounds",
                            o.bar.1, o.parity
                        ),
                    ),
                    _ => d.with_secondary(
                        prev.span,
                        format!("the previous wait on this barrier, parity {}", prev.parity),
                    ),
                };
                error(out, d.with_help("a ring's waits on one barrier alternate parity: flip the phase each time the stage counter wraps (`stage += 1; if stage == STAGES { stage = 0; phase = 1 - phase; }`)"));
                return;
            }
        }
        last.insert(o.bar, o);
    }
}

/// The barriers `waiter` waits on and `arriver` arrives on (and neither does the other): the
/// waits that wait for a phase, in order, against the arrivals that complete the phases.
fn stage_order(waiter: &Role, arriver: &Role, out: &mut Out) {
    let ring = |b: Bar| arriver.arrives(b) && !arriver.waits(b) && !waiter.arrives(b);
    let mut seen: HashSet<Bar> = HashSet::new();
    let mut waits = Vec::new();
    for o in waiter.ops.iter().filter(|o| o.kind == Kind::Wait && ring(o.bar)) {
        // A barrier's first wait for parity 1 waits for the fresh barrier's phase before the
        // first: it passes at once, and waits for no arrival.
        if seen.insert(o.bar) && o.parity == 1 {
            continue;
        }
        waits.push(o);
    }
    let mut arrivals: Vec<&Op> = Vec::new();
    let mut since_wait = false;
    for o in &arriver.ops {
        match o.kind {
            Kind::Wait => since_wait = false,
            Kind::Arrive if ring(o.bar) => {
                if !(since_wait && arrivals.last().is_some_and(|l| l.bar == o.bar)) {
                    arrivals.push(o);
                }
                since_wait = true;
            }
            _ => {}
        }
    }
    for (n, (w, a)) in waits.iter().zip(&arrivals).enumerate() {
        if w.bar != a.bar {
            error(out, Diagnostic::error(
                format!("the two sides of this ring take its stages in different orders: this is the waiting side's {} wait for a phase, on element {} of its barrier tensor, but the arriving side's {} arrival is on element {}", nth(n), w.bar.1, nth(n), a.bar.1),
                w.span,
                format!("waits on element {}", w.bar.1),
            )
            .with_secondary(a.span, format!("arrives on element {}", a.bar.1))
            .with_help("step both sides' stage counters by one and wrap both at the same stage count: `stage += 1; if stage == STAGES { stage = 0; phase = 1 - phase; }`"));
            return;
        }
    }
}

/// Of two roles that wait on each other's arrivals, exactly one passes its first wait free.
fn first_waits(x: &Role, y: &Role, out: &mut Out) {
    let first = |w: &Role, a: &Role| {
        w.ops.iter().find(|o| o.kind == Kind::Wait && a.arrives(o.bar) && !a.waits(o.bar) && !w.arrives(o.bar)).copied()
    };
    let (Some(fx), Some(fy)) = (first(x, y), first(y, x)) else { return };
    let arrives_first = |w: &Role, a: &Role, wait: &Op| {
        w.ops.iter().take_while(|o| o.span != wait.span).any(|o| o.kind == Kind::Arrive && a.waits(o.bar))
    };
    let (what, label, help) = if fx.parity == 1 && fy.parity == 1 {
        (
            "both sides of this ring pass their first wait at once (parity 1, the fresh barrier's phase before the first): neither waits for the other, so the consumer may read a stage before it is filled",
            "passes at once",
            "the consumer waits for the full barrier's phase of the round's parity (`phase`, 0 first), the producer for the empty barrier's phase before it (`1 - phase`)",
        )
    } else if fx.parity == 0 && fy.parity == 0 && !arrives_first(x, y, &fx) && !arrives_first(y, x, &fy) {
        (
            "both sides of this ring first wait for a phase the other completes (parity 0), before arriving: each waits for the other, a deadlock",
            "waits for the other side",
            "the producer waits for the empty barrier's phase before the round's (`1 - phase`: the fresh barrier's previous phase counts as complete, so the ring starts empty), the consumer for the full barrier's (`phase`)",
        )
    } else {
        return;
    };
    let d = Diagnostic::error(what, fx.span, label).with_secondary(fy.span, format!("{label} too")).with_help(help);
    error(out, d);
}

fn nth(n: usize) -> String {
    let k = n + 1;
    let suffix = match (k % 10, k % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{k}{suffix}")
}

fn error(out: &mut Out, d: Diagnostic) {
    push_new(&mut out.errors, d);
}

fn warn(out: &mut Out, d: Diagnostic) {
    push_new(&mut out.warnings, d);
}

/// Each finding once: the walk meets a ring's operations in every trip.
fn push_new(list: &mut Vec<Diagnostic>, d: Diagnostic) {
    if !list.contains(&d) {
        list.push(d);
    }
}
