//! Pipeline values (CuTe DSL's `PipelineAsync` and `PipelineTmaAsync`): a ring of STAGES stages,
//! each with a "full" and an "empty" mbarrier, and the producer and consumer states that walk it.
//!
//! Everything here is elaborated into the mbarrier and TMA instructions a hand-written ring uses
//! (`mbarrier_init`, `mbarrier_wait`, `mbarrier_arrive`, `mbarrier_arrive_and_expect_tx`), on one
//! `i64` shared tensor of shape `(STAGES, 2)` (stage, full/empty): the ring checks
//! (ring_checks.rs) see the same instructions, and the PTX is the hand-written ring's.
//!
//! The states (pipeline_state.rs) are made by their pipeline (its stage count) for one role (its
//! parity): a state used with another pipeline, or in the other role, is refused, so producer and
//! consumer agree on the stage count and the phase order by construction. A consumer waits for the
//! full barrier's phase of its round's parity, a producer for the empty barrier's phase before it
//! (a fresh barrier's "previous" phase counts as complete: the ring starts empty).

use super::builtins::args::{arity, named, positional, Arg};
use super::pipeline_state::PipeState;
use super::value::{Origin, TensorVal, Value};
use super::{Frame, R};
use crate::ast::BinOp;
use crate::diag::{article, Diagnostic};
use crate::kir::{Inst, MbarrierOp, Operand, WarpgroupOp};
use crate::span::Span;
use crate::types::Scalar;
use cute_layout::{Crd, Int, Layout};
use std::sync::Arc;

/// A ring of mbarriers made by `make_pipeline_async` or `make_pipeline_tma_async`.
#[derive(Debug)]
pub struct Pipeline {
    /// The barriers, views of one `i64` shared tensor of shape `(stages, 2)`: its full (`[_, 0]`)
    /// and its empty (`[_, 1]`) column. Two tensors for the ring checks, which tell a barrier a
    /// run-time state indexes only by its tensor.
    full: TensorVal,
    empty: TensorVal,
    pub(super) stages: i64,
    /// The bytes a stage's TMA loads bring (`make_pipeline_tma_async`); `None` for `PipelineAsync`.
    tx_bytes: Option<i64>,
    pub(super) span: Span,
}

impl PartialEq for Pipeline {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

/// How `print` shows a pipeline.
impl std::fmt::Display for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.tx_bytes {
            Some(b) => write!(f, "PipelineTmaAsync(stages {}, tx_bytes {b})", self.stages),
            None => write!(f, "PipelineAsync(stages {})", self.stages),
        }
    }
}

/// The methods of a pipeline.
pub(crate) const PIPELINE_METHODS: &[&str] = &[
    "producer_state",
    "consumer_state",
    "producer_acquire",
    "producer_commit",
    "producer_get_barrier",
    "consumer_wait",
    "consumer_try_wait",
    "consumer_release",
];

/// `make_pipeline_async(smem, stages: S, producers: P, consumers: C)` and
/// `make_pipeline_tma_async(smem, stages: S, producers: P, consumers: C, tx_bytes: B)`: allocates
/// the barriers from the allocator `smem`, and thread 0 initializes them (full: P arrivals, empty:
/// C arrivals), fences the init and the block synchronizes, as CuTe DSL's `create` does.
pub(super) fn make_pipeline(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let tma = name == "make_pipeline_tma_async";
    let usage = if tma {
        "make_pipeline_tma_async(smem, stages: S, producers: P, consumers: C, tx_bytes: B)"
    } else {
        "make_pipeline_async(smem, stages: S, producers: P, consumers: C)"
    };
    arity(name, &args, 1, 1, span, usage)?;
    let keys: &[&str] =
        if tma { &["stages", "producers", "consumers", "tx_bytes"] } else { &["stages", "producers", "consumers"] };
    let mut vals = Vec::new();
    for key in keys {
        let Some(a) = named(name, &args, key, keys)? else {
            return Err(Diagnostic::error(format!("`{name}` needs `{key}:`"), span, format!("no `{key}`"))
                .with_help(format!("write `{usage}`")));
        };
        let (lo, hi) = match *key {
            "stages" => (1, 64),
            "tx_bytes" => (0, (1 << 20) - 1),
            _ => (1, (1 << 20) - 1),
        };
        match &a.value {
            Value::Int(i) if i.as_static().is_some_and(|v| (lo..=hi).contains(&v)) => {
                vals.push(i.as_static().unwrap_or(0))
            }
            Value::Int(i) if i.is_static() => {
                return Err(Diagnostic::error(
                    format!("`{name}`: `{key}` is {i}; it must be {lo} to {hi}"),
                    a.span,
                    "out of range",
                ))
            }
            other => {
                return Err(Diagnostic::error(
                    format!("`{name}`: `{key}` must be a compile-time integer, found {}", article(&other.kind())),
                    a.span,
                    "not a compile-time integer",
                )
                .with_help(
                    "the ring checks and the states need the stage count, arrival counts and bytes at compile time",
                ))
            }
        }
    }
    let smem = positional(&args)[0];
    let Value::SmemAllocator(alloc) = &smem.value else {
        return Err(Diagnostic::error(
            format!(
                "`{name}` allocates its barriers from a shared-memory allocator, found {}",
                article(&smem.value.kind())
            ),
            smem.span,
            "not an allocator",
        )
        .with_help("pass `smem_allocator()`'s value, as in `let smem = smem_allocator();`"));
    };
    f.need_kernel(&format!("`{name}`"), span)?;
    let (stages, producers, consumers) = (vals[0], vals[1], vals[2]);
    let Value::Tensor(bars) = super::smem::allocate_layout(
        f,
        alloc,
        Scalar::I64,
        Layout::concat(vec![Layout::leaf(stages, 1), Layout::leaf(2, stages)]),
        span,
    )?
    else {
        unreachable!("allocate_layout gives a tensor")
    };
    let mut column = |k: i64| f.slice(&bars, &Crd::Tuple(vec![Crd::Under, Crd::Int(Int::S(k))]), span);
    let (full, empty) = (column(0)?, column(1)?);
    let pipe = Pipeline { full, empty, stages, tx_bytes: tma.then(|| vals[3]), span };
    let tid = f.special("thread_idx", 0, span)?;
    let Value::Scalar(Scalar::Bool, first) = f.binary(BinOp::Eq, tid, Value::Int(Int::ZERO), span, span, span)? else {
        unreachable!("an i32 comparison gives a bool")
    };
    let init = f.region(|f| {
        for s in 0..stages {
            pipe.emit(f, MbarrierOp::Init, &pipe.full, Int::S(s), Some(Operand::Int(Int::S(producers))), span);
            pipe.emit(f, MbarrierOp::Init, &pipe.empty, Int::S(s), Some(Operand::Int(Int::S(consumers))), span);
        }
        f.emit(Inst::Warpgroup { op: WarpgroupOp::FenceMbarrierInit, span });
        Ok(())
    })?;
    f.emit(Inst::If { cond: Operand::Value(first), then: init, els: Vec::new(), span });
    f.emit(Inst::Barrier { span });
    Ok(Value::Pipeline(Arc::new(pipe)))
}

impl Pipeline {
    fn emit(
        &self,
        f: &mut Frame,
        op: MbarrierOp,
        bars: &TensorVal,
        index: Int,
        arg: Option<Operand>,
        span: Span,
    ) -> Value {
        let Origin::Kernel(tensor) = bars.origin else { unreachable!("kernel tensors have kernel origins") };
        f.emit_mbarrier(op, tensor, bars.ty.clone(), index, arg, span)
    }
}

/// `pipe.method(...)`.
pub(super) fn pipeline_method(f: &mut Frame, pipe: &Arc<Pipeline>, m: &str, args: &[Arg], span: Span) -> R<Value> {
    if let "producer_state" | "consumer_state" = m {
        arity(m, args, 0, 0, span, &format!("pipe.{m}()"))?;
        let st = PipeState::new(pipe.clone(), m == "producer_state", f.depth, span);
        return Ok(Value::PipeState(Arc::new(st)));
    }
    let producer = m.starts_with("producer");
    let release = m == "consumer_release";
    let usage =
        if release { "pipe.consumer_release(state[, cta: rank])".to_string() } else { format!("pipe.{m}(state)") };
    arity(m, args, 1, 1, span, &usage)?;
    let cta = if release { named(m, args, "cta", &["cta"])? } else { named(m, args, "", &[])? };
    let a = positional(args)[0];
    let Value::PipeState(st) = &a.value else {
        return Err(Diagnostic::error(
            format!("`{m}` takes a pipeline state, found {}", article(&a.value.kind())),
            a.span,
            "not a pipeline state",
        )
        .with_help(format!("make one with `pipe.{}_state()`", if producer { "producer" } else { "consumer" })));
    };
    if !Arc::ptr_eq(&st.pipe, pipe) {
        return Err(Diagnostic::error(format!("`{m}`: this state belongs to another pipeline"), a.span, "another pipeline's state")
            .with_secondary(st.pipe.span, "the state's pipeline")
            .with_secondary(pipe.span, "this pipeline")
            .with_help("a state walks the stages of the pipeline that made it: make one with this pipeline's `producer_state()` or `consumer_state()`"));
    }
    if st.producer != producer {
        let want = if producer { "producer" } else { "consumer" };
        return Err(Diagnostic::error(
            format!("`{m}` takes a {want} state; this is a {} state", st.role()),
            a.span,
            format!("a {} state", st.role()),
        )
        .with_secondary(st.span, "made here")
        .with_help(format!("the roles wait for different phases (a producer for the empty barrier's previous one): use `pipe.{want}_state()`")));
    }
    f.need_kernel(&format!("`{m}`"), span)?;
    let index = st.index(f, span);
    match m {
        "producer_acquire" => {
            // The empty barrier's phase before this round's: parity `1 - phase`.
            let phase = st.phase(f, span);
            let before = Int::ONE.sub(&phase).expect("a parity fits");
            pipe.emit(f, MbarrierOp::Wait, &pipe.empty, index.clone(), Some(Operand::Int(before)), span);
            if let Some(bytes) = pipe.tx_bytes {
                pipe.emit(f, MbarrierOp::ArriveExpectTx, &pipe.full, index, Some(Operand::Int(Int::S(bytes))), span);
            }
        }
        // A TMA pipeline's full barrier completes with the loads' bytes: nothing to commit.
        "producer_commit" if pipe.tx_bytes.is_none() => {
            pipe.emit(f, MbarrierOp::Arrive, &pipe.full, index, None, span);
        }
        "producer_commit" => {}
        "producer_get_barrier" => return Ok(Value::Barrier(pipe.full.clone(), index)),
        "consumer_wait" | "consumer_try_wait" => {
            let op = if m == "consumer_wait" { MbarrierOp::Wait } else { MbarrierOp::TryWait };
            let phase = st.phase(f, span);
            return Ok(pipe.emit(f, op, &pipe.full, index, Some(Operand::Int(phase)), span));
        }
        "consumer_release" => {
            let (op, rank) = match cta {
                Some(c) => {
                    (MbarrierOp::ArriveCluster, Some(f.cluster_rank_value(&c.value, c.span, "consumer_release")?))
                }
                None => (MbarrierOp::Arrive, None),
            };
            pipe.emit(f, op, &pipe.empty, index, rank, span);
        }
        _ => unreachable!("dispatched on PIPELINE_METHODS"),
    }
    Ok(Value::Unit)
}
