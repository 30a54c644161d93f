//! `cute-hoist-arith`: moves loop-invariant integer arithmetic, divisions and remainders included,
//! out of `scf.for` and `scf.while` loops, as far out as its operands allow.
//!
//! Index arithmetic is materialized where it is used (docs/pipeline.md): a tile coordinate
//! `tm = t / n_tiles` computed in a producer's tile loop and used by a TMA load in its k loop is a
//! `div`/`rem` chain inside the k loop, between the stage's `mbarrier.try_wait` and its loads. LLVM
//! does not hoist it: its LICM only speculates ops that cannot have undefined behaviour, and
//! `sdiv`/`udiv`/`srem`/`urem` by a value not known to be non-zero can (a zero-trip loop, or one
//! whose division sits under an `if`, would execute a division the program never executed). Here,
//! with the loops still structured, this pass moves such an op to before the outermost enclosing
//! loop all of whose operands are defined outside it, passing through the `scf.if`s in between.
//!
//! Why that is safe: the ops moved are `arith` ops on scalar integers, with no memory access, no
//! call and no asm ([`MOVABLE`], [`DIVISIONS`]); computing one that the program would not have
//! computed has no effect but its value, except division by zero (and signed `MIN / -1`), which is
//! where the machine and LLVM differ. On the machine it is harmless: PTX `div`/`rem` by zero do not
//! trap, they give an unspecified value, which nothing uses when the loop would not have divided.
//! To LLVM a division by zero is undefined behaviour, and it reasons from that (a divisor an
//! executed division uses is known to be non-zero: a later `d == 0` could fold to false). So a
//! moved division whose divisor is not a non-zero constant divides by `d == 0 ? 1 : d` of the
//! frozen `d` (`llvm.freeze`, so that poison cannot reach the divisor either): the same value
//! wherever the original divided, and defined everywhere, at the cost of a compare and a select
//! once per entry into the loop. Signed `MIN / -1` (an index of -2^31) is not guarded: index
//! arithmetic does not reach it, and LLVM derives nothing from its absence.
//!
//! An op under an `scf.if` in the loop is moved too: it is then computed once per entry into the
//! loop instead of at most once per iteration, and the guard makes the division defined when the
//! branch would not have run. An op that is not in a loop, or whose operands are defined inside the
//! loop, stays where it is (moving it out of an `if` alone saves nothing). What is moved lives in a
//! register across the loop; ptxas' register counts before and after are in docs/pipeline.md.

use std::collections::HashMap;

use super::common::Reported;
use crate::ir::{self, Builder, Op, Val};
use melior::pass::Pass;

pub const NAME: &str = "cute-hoist-arith";
pub const SUMMARY: &str =
    "Move loop-invariant integer arithmetic, divisions included, out of scf.for/scf.while loops, as far out as its operands allow";

static PASS_ID: super::PassId = super::PassId(7);

pub fn create() -> Pass {
    super::external(&PASS_ID, NAME, SUMMARY, run)
}

/// Integer ops whose only effect is their value (an out-of-range shift gives poison, which is
/// harmless where nothing uses it).
const MOVABLE: &[&str] = &[
    "arith.constant",
    "arith.addi",
    "arith.subi",
    "arith.muli",
    "arith.mului_extended",
    "arith.mulsi_extended",
    "arith.andi",
    "arith.ori",
    "arith.xori",
    "arith.shli",
    "arith.shrsi",
    "arith.shrui",
    "arith.minsi",
    "arith.maxsi",
    "arith.minui",
    "arith.maxui",
    "arith.cmpi",
    "arith.select",
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
    "arith.index_cast",
    "arith.index_castui",
];

/// Integer divisions and remainders: operand 1 is the divisor, undefined behaviour to LLVM at zero.
const DIVISIONS: &[&str] = &[
    "arith.divsi",
    "arith.divui",
    "arith.remsi",
    "arith.remui",
    "arith.ceildivsi",
    "arith.ceildivui",
    "arith.floordivsi",
];

fn run(module: Op) -> Result<(), Reported> {
    // The guarded divisors, each built once, right after the divisor is defined.
    let mut guards: HashMap<usize, Val> = HashMap::new();
    // Pre-order: an op's operands defined in the same loop are moved before the op is looked at.
    for op in ir::nested_ops(module) {
        let name = ir::op_name(op);
        let division = DIVISIONS.contains(&name.as_str());
        if !(division || MOVABLE.contains(&name.as_str())) || !on_scalar_ints(op) {
            continue;
        }
        let Some(target) = destination(op) else { continue };
        let divisor = division.then(|| ir::operand(op, 1)).filter(|&d| !nonzero_constant(d));
        // `llvm.freeze` takes integers, not `index`: such a division stays.
        if divisor.is_some_and(|d| !ir::is_integer(ir::value_type(d))) {
            continue;
        }
        ir::move_before(op, target);
        if let Some(d) = divisor {
            let at = || Builder::after_definition(d, ir::location(op));
            let safe = *guards.entry(d.ptr as usize).or_insert_with(|| nonzero_divisor(&at(), d));
            ir::set_operand(op, 1, safe);
        }
    }
    Ok(())
}

/// Whether every operand and result of `op` is a scalar integer (or `index`).
fn on_scalar_ints(op: Op) -> bool {
    let operands = (0..ir::operand_count(op)).map(|i| ir::operand(op, i));
    let results = (0..ir::result_count(op)).map(|i| ir::result(op, i));
    operands.chain(results).map(ir::value_type).all(|t| ir::is_integer(t) || ir::is_index(t))
}

/// The outermost loop (`scf.for`, `scf.while`) around `op` that all of `op`'s operands are defined
/// outside of, reached through loops and `scf.if`s only; `None` when there is none.
fn destination(op: Op) -> Option<Op> {
    let mut best = None;
    let mut past_loop = false;
    let mut at = ir::parent_op(op);
    while let Some(region_op) = at {
        let name = ir::op_name(region_op);
        let is_loop = name == "scf.for" || name == "scf.while";
        if !(is_loop || name == "scf.if") || !defined_outside(op, region_op) {
            break;
        }
        past_loop |= is_loop;
        if past_loop {
            best = Some(region_op);
        }
        at = ir::parent_op(region_op);
    }
    best
}

/// Whether every operand of `op` is defined outside `region_op` (neither by an op nested in it nor
/// as an argument of one of its blocks).
fn defined_outside(op: Op, region_op: Op) -> bool {
    (0..ir::operand_count(op)).all(|i| {
        let v = ir::operand(op, i);
        let place = match ir::defining_op(v) {
            Some(def) => def,
            None => match ir::block_arg_owner(v) {
                Some((owner, _)) => owner,
                None => return false,
            },
        };
        !ir::is_within(place, region_op)
    })
}

/// Whether `v` is an `arith.constant` other than zero.
fn nonzero_constant(v: Val) -> bool {
    ir::defining_op(v)
        .filter(|&d| ir::op_name(d) == "arith.constant")
        .and_then(|d| ir::int_attr(d, "value"))
        .is_some_and(|c| c != 0)
}

/// `freeze(d) == 0 ? 1 : freeze(d)`, built before `b`'s anchor (where `d` is defined: one guard
/// serves every division by `d` moved out of a loop).
fn nonzero_divisor(b: &Builder, d: Val) -> Val {
    let ty = ir::value_type(d);
    let ty_text = ir::type_to_string(ty);
    let frozen = ir::result(b.create("llvm.freeze", &[d], &[ty], &[]), 0);
    let zero = b.const_int(0, &ty_text);
    let one = b.const_int(1, &ty_text);
    let is_zero =
        ir::result(b.create("arith.cmpi", &[frozen, zero], &[b.ty("i1")], &[("predicate", b.attr("0 : i64"))]), 0);
    ir::result(b.create("arith.select", &[is_zero, one, frozen], &[ty], &[]), 0)
}
