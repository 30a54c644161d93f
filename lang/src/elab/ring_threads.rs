//! Which threads of a block reach a point of a kernel: the `if`s around it evaluated for each
//! thread of the block a launch gives (`block(64)`), over `thread_idx`, `warp_idx()`,
//! `lane_idx()` and the arithmetic and comparisons on them. A condition that is the same for
//! every thread (a loop index, a parameter, `block_idx`) lets all of them through, and so does one
//! the checker cannot evaluate around a block-wide barrier (`sync_threads()`, a pipeline's
//! creation): a block whose threads split there would not get past it, so the condition is the
//! same for all of them (a grouped GEMM's block that finds no tile of its group exits whole). The
//! ring checks (ring_checks.rs, ring_phase.rs) count and order the threads' barrier operations by it.

use crate::kir::{BinaryOp, CmpOp, Inst, Kernel, Operand, Special, ValueId};
use crate::span::Span;
use cute_layout::Int;
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// What the checker could not see: the construct and why.
#[derive(Clone)]
pub(super) struct Unseen {
    pub(super) span: Span,
    pub(super) what: String,
}

/// The threads of the block (by linear index) that reach a point, or why that is unknown.
pub(super) type Threads = Result<Rc<Vec<bool>>, Unseen>;

/// The value of a scalar for one thread: known, the same for every thread, or varying in a way
/// the checker does not follow.
#[derive(Clone, Copy, PartialEq)]
enum Ev {
    Known(i64),
    Uniform,
    Varying,
}

/// The guards of one kernel for one block shape.
pub(super) struct Guards<'k> {
    defs: HashMap<ValueId, &'k Inst>,
    /// Each loop index's bounds and step.
    pub(super) ivs: HashMap<ValueId, (Int, Int, Int)>,
    /// Values the same for every thread: the parameters (and their dynamic extents and strides).
    params: HashSet<ValueId>,
    /// The `if`s (by span) with a block-wide barrier in a branch: the same for every thread.
    block_wide: HashSet<Span>,
    block: Option<[i64; 3]>,
}

impl<'k> Guards<'k> {
    pub(super) fn new(k: &'k Kernel, block: Option<[i64; 3]>) -> Guards<'k> {
        let mut g = Guards {
            defs: HashMap::new(),
            ivs: HashMap::new(),
            params: HashSet::new(),
            block_wide: HashSet::new(),
            block,
        };
        for p in &k.params {
            g.params.insert(p.value);
            if let crate::kir::ParamKind::Tensor { dyn_leaves, .. } = &p.kind {
                g.params.extend(dyn_leaves);
            }
        }
        g.index(&k.body);
        g
    }

    /// Every thread of the block, or why they are not known.
    pub(super) fn all(&self, k: &Kernel) -> Threads {
        match self.block {
            Some(b) => Ok(Rc::new(vec![true; (b[0] * b[1] * b[2]).max(0) as usize])),
            None => Err(Unseen { span: k.span, what: "the block shape (no launch gives a static one)".into() }),
        }
    }

    fn index(&mut self, insts: &'k [Inst]) {
        for i in insts {
            let dst = match i {
                Inst::Special { dst, .. }
                | Inst::Binary { dst, frag: None, .. }
                | Inst::Cmp { dst, frag: None, .. }
                | Inst::Not { dst, frag: None, .. }
                | Inst::Select { dst, frag: None, .. }
                | Inst::Convert { dst, frag: None, .. } => Some(*dst),
                _ => None,
            };
            if let Some(d) = dst {
                self.defs.insert(d, i);
            }
            if let Inst::For { iv, lb, ub, step, .. } = i {
                self.ivs.insert(*iv, (lb.clone(), ub.clone(), step.clone()));
            }
            if let Inst::If { then, els, span, .. } = i {
                if syncs_block(then) || syncs_block(els) {
                    self.block_wide.insert(*span);
                }
            }
            for r in i.regions() {
                self.index(r);
            }
        }
    }

    /// The threads that take each branch of `if cond`.
    pub(super) fn split(&self, threads: &Threads, cond: &Operand, span: Span) -> (Threads, Threads) {
        let Ok(set) = threads else { return (threads.clone(), threads.clone()) };
        let Some(b) = self.block else { return (threads.clone(), threads.clone()) };
        let (mut then, mut els) = (vec![false; set.len()], vec![false; set.len()]);
        let mut uniform = false;
        for (t, _) in set.iter().enumerate().filter(|(_, on)| **on) {
            let t = t as i64;
            let tid = [t % b[0], (t / b[0]) % b[1], t / (b[0] * b[1])];
            match self.operand(cond, tid) {
                Ev::Known(v) if v != 0 => then[t as usize] = true,
                Ev::Known(_) => els[t as usize] = true,
                Ev::Uniform => uniform = true,
                Ev::Varying if self.block_wide.contains(&span) => uniform = true,
                Ev::Varying => {
                    let u =
                        Unseen { span, what: "this condition (it reads values the checker does not follow)".into() };
                    return (Err(u.clone()), Err(u));
                }
            }
        }
        if uniform {
            if then.iter().chain(&els).any(|on| *on) {
                let u = Unseen { span, what: "this condition (known for some threads only)".into() };
                return (Err(u.clone()), Err(u));
            }
            return (threads.clone(), threads.clone());
        }
        (Ok(Rc::new(then)), Ok(Rc::new(els)))
    }

    /// The value of `op` for each thread of `threads` (by linear index), where it is known for
    /// every one of them.
    pub(super) fn per_thread(&self, threads: &Threads, op: &Operand) -> Option<Vec<(usize, i64)>> {
        let (Ok(set), Some(b)) = (threads, self.block) else { return None };
        let mut values = Vec::new();
        for (t, _) in set.iter().enumerate().filter(|(_, on)| **on) {
            let i = t as i64;
            match self.operand(op, [i % b[0], (i / b[0]) % b[1], i / (b[0] * b[1])]) {
                Ev::Known(v) => values.push((t, v)),
                _ => return None,
            }
        }
        Some(values)
    }

    fn operand(&self, op: &Operand, tid: [i64; 3]) -> Ev {
        match op {
            Operand::Int(i) => self.int(i, tid),
            Operand::Value(id) => self.value(*id, tid),
            Operand::Bool(b) => Ev::Known(i64::from(*b)),
            Operand::Float(_) => Ev::Uniform,
        }
    }

    fn int(&self, i: &Int, tid: [i64; 3]) -> Ev {
        let worst = Cell::new(Ev::Known(0));
        let env = |id: u32| match self.value(id, tid) {
            Ev::Known(v) => Some(v),
            other => {
                if other == Ev::Varying || worst.get() != Ev::Varying {
                    worst.set(other);
                }
                None
            }
        };
        match i.eval(&env) {
            Some(v) => Ev::Known(v),
            None if worst.get() == Ev::Varying => Ev::Varying,
            None => Ev::Uniform,
        }
    }

    /// The value `id` has for the thread `tid`.
    fn value(&self, id: ValueId, tid: [i64; 3]) -> Ev {
        let Some(def) = self.defs.get(&id) else {
            // Parameters and loop indices are the same for every thread; loaded values are not.
            return if self.ivs.contains_key(&id) || self.params.contains(&id) { Ev::Uniform } else { Ev::Varying };
        };
        let both = |a: &Operand, b: &Operand, f: &dyn Fn(i64, i64) -> Option<i64>| match (
            self.operand(a, tid),
            self.operand(b, tid),
        ) {
            (Ev::Known(x), Ev::Known(y)) => f(x, y).map_or(Ev::Varying, Ev::Known),
            (Ev::Varying, _) | (_, Ev::Varying) => Ev::Varying,
            _ => Ev::Uniform,
        };
        match def {
            Inst::Special { which, .. } => match (which, self.block) {
                (Special::ThreadIdx(d), _) => Ev::Known(tid[usize::from(*d).min(2)]),
                (Special::BlockDim(d), Some(b)) => Ev::Known(b[usize::from(*d).min(2)]),
                _ => Ev::Uniform,
            },
            Inst::Cmp { op, a, b, .. } => both(a, b, &|x, y| Some(i64::from(cmp(*op, x, y)))),
            Inst::Binary { op, a, b, .. } => both(a, b, &|x, y| binary(*op, x, y)),
            Inst::Not { a, ty, .. } => match self.operand(a, tid) {
                Ev::Known(x) if *ty == crate::types::Scalar::Bool => Ev::Known(i64::from(x == 0)),
                Ev::Known(x) => Ev::Known(!x),
                other => other,
            },
            Inst::Convert { a, to, .. } if !to.is_float() => self.operand(a, tid),
            Inst::Select { c, a, b, .. } => match self.operand(c, tid) {
                Ev::Known(v) => self.operand(if v != 0 { a } else { b }, tid),
                other => other,
            },
            _ => Ev::Varying,
        }
    }
}

/// Whether `insts` hold a block-wide barrier (`sync_threads()`; a pipeline's creation has one).
fn syncs_block(insts: &[Inst]) -> bool {
    insts.iter().any(|i| matches!(i, Inst::Barrier { .. }) || i.regions().into_iter().any(syncs_block))
}

fn cmp(op: CmpOp, a: i64, b: i64) -> bool {
    op.holds(a, b)
}

/// `a op b` on integers, `None` where it overflows or divides by zero.
pub(super) fn binary(op: BinaryOp, a: i64, b: i64) -> Option<i64> {
    Some(match op {
        BinaryOp::Add => a.checked_add(b)?,
        BinaryOp::Sub => a.checked_sub(b)?,
        BinaryOp::Mul => a.checked_mul(b)?,
        BinaryOp::Div => a.checked_div(b)?,
        BinaryOp::Rem => a.checked_rem(b)?,
        BinaryOp::And => a & b,
        BinaryOp::Or => a | b,
        BinaryOp::Xor => a ^ b,
        BinaryOp::Shl => a.checked_shl(u32::try_from(b).ok()?)?,
        BinaryOp::Shr => a.checked_shr(u32::try_from(b).ok()?)?,
        BinaryOp::Min => a.min(b),
        BinaryOp::Max => a.max(b),
    })
}
