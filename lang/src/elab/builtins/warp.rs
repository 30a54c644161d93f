//! Threads, warps and warpgroups: lane and warp indices, shuffles and warp reductions, block and
//! named barriers, and the warpgroup fences and register reconfiguration of Hopper.

use super::args::{arity, named, positional, static_usize, Arg};
use crate::diag::Diagnostic;
use crate::elab::value::Value;
use crate::elab::{layout_err, Frame, R};
use crate::kir::{Inst, Operand, ShuffleKind, ValueTy};
use crate::span::Span;
use crate::types::Scalar;
use cute_layout::Int;

pub(super) fn lane_or_warp_idx(f: &mut Frame, name: &str, _args: Vec<Arg>, span: Span) -> R<Value> {
    let lerr = |e| layout_err(e, span);
    let Value::Int(t) = f.field(Value::Dim3("thread_idx"), &crate::ast::Ident { name: "x".into(), span })? else {
        return Err(Diagnostic::error("internal error: thread index", span, "here"));
    };
    let warp = Int::S(32);
    Ok(Value::Int(if name == "lane_idx" { t.modulo(&warp) } else { t.floor_div(&warp) }.map_err(lerr)?))
}

pub(super) fn shuffle_call(f: &mut Frame, name: &str, args: Vec<Arg>, _span: Span) -> R<Value> {
    let p = positional(&args);
    let kind = match name {
        "shuffle_xor" => ShuffleKind::Xor,
        "shuffle_down" => ShuffleKind::Down,
        "shuffle_up" => ShuffleKind::Up,
        _ => ShuffleKind::Idx,
    };
    shuffle(f, kind, &p[0].value, &p[1].value, p[0].span)
}

pub(super) fn warp_reduce(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let (op, value) = match name {
        "warp_reduce" => {
            arity(name, &args, 2, 2, span, "warp_reduce(op, value)")?;
            let p = positional(&args);
            let Value::Func(op) = &p[0].value else {
                return Err(Diagnostic::error(
                    "`warp_reduce` takes an operation first (`add`, `max`, ...)",
                    p[0].span,
                    "not a function",
                ));
            };
            (op.clone(), p[1].value.clone())
        }
        _ => {
            arity(name, &args, 1, 1, span, &format!("{name}(value)"))?;
            (if name.ends_with("sum") { "add" } else { "max" }.to_string(), positional(&args)[0].value.clone())
        }
    };
    // A butterfly over the 32 lanes: after five exchanges every lane holds the result.
    let mut acc = value;
    for offset in [16, 8, 4, 2, 1] {
        let other = shuffle(f, ShuffleKind::Xor, &acc, &Value::Int(Int::S(offset)), span)?;
        acc = f.call_value(&op, vec![acc, other], span)?;
    }
    Ok(acc)
}

pub(super) fn sync_threads(f: &mut Frame, _name: &str, _args: Vec<Arg>, span: Span) -> R<Value> {
    f.need_kernel("`sync_threads`", span)?;
    f.emit(Inst::Barrier { span });
    Ok(Value::Unit)
}

pub(super) fn shuffle(f: &mut Frame, kind: ShuffleKind, value: &Value, offset: &Value, span: Span) -> R<Value> {
    f.need_kernel("a warp shuffle", span)?;
    let ty = match value {
        Value::Int(_) => Scalar::I32,
        Value::Scalar(s, _) if s.size_bytes() == 4 => *s,
        other => {
            return Err(Diagnostic::error(
                format!("warp shuffles move 32-bit values, found {}", crate::diag::article(&other.kind())),
                span,
                "not 32-bit",
            )
            .with_help("convert to f32 or i32 first"))
        }
    };
    let v = f.operand(value, ty, span)?;
    let o = match offset {
        Value::Int(i) => Operand::Int(i.clone()),
        other => {
            return Err(Diagnostic::error(
                format!("the shuffle offset is an integer, found {}", crate::diag::article(&other.kind())),
                span,
                "not an integer",
            ))
        }
    };
    let dst = f.fresh(ValueTy::Scalar(ty));
    f.emit(Inst::Shuffle { dst, kind, ty, value: v, offset: o, span });
    Ok(if ty == Scalar::I32 { Value::Int(Int::var(dst, 1)) } else { Value::Scalar(ty, dst) })
}

/// `warpgroup_fence()`, `warpgroup_commit_group()`, `warpgroup_wait_group(n)` (CuTe DSL's
/// `cute.nvgpu.warpgroup.fence/commit_group/wait_group`) and `fence_proxy_async()` (CuTe DSL's
/// `cute.arch.fence_proxy("async.shared", space="cta")`, CUTLASS's `fence_view_async_shared`).
pub(super) fn warpgroup_sync(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let args = &args[..];
    use crate::kir::WarpgroupOp;
    let op = match name {
        "warpgroup_wait_group" => {
            arity(name, args, 1, 1, span, "warpgroup_wait_group(n)")?;
            let n = static_usize(positional(args)[0], "the number of wgmma groups left in flight")?;
            if n > 7 {
                return Err(Diagnostic::error(
                    format!("`warpgroup_wait_group({n})`: wgmma.wait_group takes 0 to 7"),
                    span,
                    "too many groups",
                ));
            }
            WarpgroupOp::WaitGroup(n as u32)
        }
        "warpgroup_reg_alloc" | "warpgroup_reg_dealloc" => {
            arity(name, args, 1, 1, span, &format!("{name}(registers)"))?;
            let n = static_usize(positional(args)[0], "the registers per thread")?;
            if !(24..=256).contains(&n) || n % 8 != 0 {
                return Err(Diagnostic::error(
                    format!("`{name}({n})`: setmaxnreg takes 24 to 256 registers per thread, a multiple of 8"),
                    positional(args)[0].span,
                    "not a register count",
                )
                .with_help(
                    "CUTLASS's warp-specialized GEMMs use 40 for the producer and 232 or 240 for the consumers",
                ));
            }
            if name == "warpgroup_reg_alloc" {
                WarpgroupOp::RegAlloc(n as u32)
            } else {
                WarpgroupOp::RegDealloc(n as u32)
            }
        }
        _ => {
            arity(name, args, 0, 0, span, &format!("{name}()"))?;
            match name {
                "warpgroup_fence" => WarpgroupOp::Fence,
                "warpgroup_commit_group" => WarpgroupOp::CommitGroup,
                "mbarrier_init_fence" => WarpgroupOp::FenceMbarrierInit,
                _ => WarpgroupOp::FenceProxyAsync,
            }
        }
    };
    f.need_kernel(&format!("`{name}`"), span)?;
    f.emit(Inst::Warpgroup { op, span });
    Ok(Value::Unit)
}

/// `barrier(barrier_id: ID, number_of_threads: N)` and `barrier_arrive(...)` (CuTe DSL's
/// `cute.arch.barrier` / `barrier_arrive`): a named barrier of part of the block. Without
/// arguments `barrier()` is `sync_threads()`.
pub(super) fn named_barrier(f: &mut Frame, name: &str, args: Vec<Arg>, span: Span) -> R<Value> {
    let args = &args[..];
    let usage = format!("{name}(barrier_id: 1, number_of_threads: 256)");
    if args.iter().any(|a| a.name.is_none()) {
        return Err(Diagnostic::error(format!("`{name}` takes its arguments by name"), span, "positional arguments")
            .with_help(format!("write `{usage}`")));
    }
    let keys = ["barrier_id", "number_of_threads"];
    let id = named(name, args, "barrier_id", &keys)?;
    let threads = named(name, args, "number_of_threads", &keys)?;
    f.need_kernel(&format!("`{name}`"), span)?;
    let (id, threads) = match (id, threads) {
        (None, None) if name == "barrier" => {
            f.emit(Inst::Barrier { span });
            return Ok(Value::Unit);
        }
        (Some(i), Some(t)) => (i, t),
        _ => {
            return Err(Diagnostic::error(
                format!("`{name}` needs both `barrier_id` and `number_of_threads`"),
                span,
                "missing argument",
            )
            .with_help(format!("write `{usage}`")))
        }
    };
    let operand = |a: &Arg, what: &str, ok: &dyn Fn(i64) -> bool, range: &str| -> R<Operand> {
        match &a.value {
            Value::Int(i) => match i.as_static() {
                Some(c) if !ok(c) => Err(Diagnostic::error(
                    format!("`{name}`: {what} is {c}; it must be {range}"),
                    a.span,
                    "out of range",
                )),
                _ => Ok(Operand::Int(i.clone())),
            },
            other => Err(Diagnostic::error(
                format!("`{name}`: {what} must be an integer, found {}", crate::diag::article(&other.kind())),
                a.span,
                "not an integer",
            )),
        }
    };
    // PTX: 16 barriers per block; the count is a multiple of the warp size (whole warps arrive).
    let id = operand(id, "the barrier id", &|c| (0..16).contains(&c), "0 to 15")?;
    let threads = operand(
        threads,
        "the number of threads",
        &|c| c > 0 && c % 32 == 0 && c <= 1024,
        "a multiple of 32 from 32 to 1024",
    )?;
    f.emit(Inst::NamedBarrier { id, threads, arrive: name == "barrier_arrive", span });
    Ok(Value::Unit)
}
