//! `cute-slice-vectors`: computes each slice of a whole-fragment vector from slices of its inputs,
//! so that no whole-fragment vector is left for LLVM.
//!
//! `cute-lower-to-gpu` turns a fragment load into one vector of the whole fragment, assembled from
//! its chunk loads (`vector.insert_strided_slice`), and a fragment store into chunk stores, each
//! taking its slice of the stored vector (`vector.extract_strided_slice`). A fragment expression
//! such as an epilogue's `tCrD.store(tCrC.load().to(bf16))` is then element-wise arithmetic on a
//! `vector<128xf32>` between the two. LLVM keeps such vectors whole for a long way: in a GEMM,
//! InstCombine carries the accumulator out of the main loop as thirty `<128 x float>` phis (four
//! live lanes each), and the SelectionDAG legalizes every one of them lane by lane; that was half
//! of the time LLVM took on each kernel of `samples/gemm_sm80.cute` (docs/pipeline.md).
//!
//! So each slice taken of a vector (`vector.extract_strided_slice`, and the single elements
//! `vector.extract` reads) is rewritten as the computation of that slice alone, following its
//! definition:
//! - an `insert_strided_slice` chain: the inserted chunks that cover the slice (two chunks joined
//!   by a `vector.shuffle` when the slice straddles them);
//! - an element-wise `arith`/`math` op: the same op on the slices of its vector operands;
//! - a splat constant, `vector.broadcast` or `vector.from_elements`: the same, narrower;
//! - anything else: the slice itself, as before.
//!
//! The whole-fragment ops left without uses are erased. What is computed does not change, only how
//! wide the vectors it is computed on are.

use std::collections::HashMap;

use super::common::Reported;
use crate::ir::{self, Builder, Op, Val};
use melior::pass::Pass;
use mlir_sys::MlirType;

pub const NAME: &str = "cute-slice-vectors";
pub const SUMMARY: &str = "Compute each chunk a fragment store or an MMA takes from a whole-fragment vector from the chunks of its inputs, and erase the whole-fragment vectors left unused";

static PASS_ID: super::PassId = super::PassId(6);

pub fn create() -> Pass {
    super::external(&PASS_ID, NAME, SUMMARY, run)
}

fn run(module: Op) -> Result<(), Reported> {
    let mut slicer = Slicer::default();
    for op in ir::nested_ops(module) {
        match ir::op_name(op).as_str() {
            "vector.extract_strided_slice" => {
                let Some((o, s)) = extracted(op) else { continue };
                if !wide(ir::operand(op, 0)) {
                    continue;
                }
                let b = Builder::before(op);
                if let Some(v) = slicer.narrow(&b, ir::operand(op, 0), o, s) {
                    ir::replace_uses(op, &[v]);
                    ir::erase(op);
                }
            }
            // One element of a 1-D vector at a static position.
            "vector.extract" if ir::operand_count(op) == 1 && wide(ir::operand(op, 0)) => {
                let Some(&[p]) = ir::int_array_attr(op, "static_position").as_deref() else { continue };
                let b = Builder::before(op);
                if let Some(v) = slicer.narrow(&b, ir::operand(op, 0), p, 1) {
                    let e = b.create(
                        "vector.extract",
                        &[v],
                        &[ir::value_type(ir::result(op, 0))],
                        &[("static_position", b.attr("array<i64: 0>"))],
                    );
                    ir::replace_uses(op, &[ir::result(e, 0)]);
                    ir::erase(op);
                }
            }
            _ => {}
        }
    }
    erase_unused(module);
    Ok(())
}

/// Vectors of up to this many elements are left whole: LLVM handles them well, and their PTX (a
/// memory-bound kernel's loads, then its arithmetic, then its stores) is the one those kernels were
/// measured with; sliced, the f16 TV-layout add's 32 values came out of ptxas with 38 registers
/// instead of 32, for no gain in build time.
const WHOLE_UP_TO: i64 = 32;

/// Whether `v` is a vector this pass slices: 1-D and longer than [`WHOLE_UP_TO`].
fn wide(v: Val) -> bool {
    ir::vector_shape(ir::value_type(v)).is_some_and(|(n, _)| n > WHOLE_UP_TO)
}

/// The offset and size of a 1-D, unit-stride `vector.extract_strided_slice`.
fn extracted(op: Op) -> Option<(i64, i64)> {
    ir::vector_shape(ir::value_type(ir::operand(op, 0)))?;
    match (
        ir::int_array_attr(op, "offsets")?.as_slice(),
        ir::int_array_attr(op, "strides")?.as_slice(),
        ir::int_array_attr(op, "sizes")?.as_slice(),
    ) {
        (&[o], &[1], &[s]) => Some((o, s)),
        _ => None,
    }
}

/// The offset of a 1-D, unit-stride `vector.insert_strided_slice`.
fn inserted_at(op: Op) -> Option<i64> {
    ir::vector_shape(ir::value_type(ir::operand(op, 1)))?;
    match (ir::int_array_attr(op, "offsets")?.as_slice(), ir::int_array_attr(op, "strides")?.as_slice()) {
        (&[o], &[1]) => Some(o),
        _ => None,
    }
}

/// The slices already computed, per block (a slice built before one op of a block serves the later
/// ops of that block; ops of another block get their own).
#[derive(Default)]
struct Slicer {
    done: HashMap<(usize, usize, i64, i64), Val>,
}

impl Slicer {
    /// Elements `[o, o + s)` of `v`, computed from slices of what defines `v`; `None` when `v`'s
    /// definition is none of the kinds this pass follows (the caller keeps its own slice).
    fn narrow(&mut self, b: &Builder, v: Val, o: i64, s: i64) -> Option<Val> {
        let (n, elem) = ir::vector_shape(ir::value_type(v))?;
        if o < 0 || s <= 0 || o + s > n {
            return None;
        }
        if o == 0 && s == n {
            return Some(v);
        }
        let key = (b.block().ptr as usize, v.ptr as usize, o, s);
        if let Some(done) = self.done.get(&key) {
            return Some(*done);
        }
        let def = ir::defining_op(v)?;
        let narrow_ty = ir::vector_type(s, elem);
        let out = match ir::op_name(def).as_str() {
            "vector.insert_strided_slice" => {
                let at = inserted_at(def)?;
                let (src, dest) = (ir::operand(def, 0), ir::operand(def, 1));
                let (m, _) = ir::vector_shape(ir::value_type(src))?;
                let (lo, hi) = (o.max(at), (o + s).min(at + m));
                if lo >= hi {
                    // Disjoint from the inserted chunk: the slice of what it was inserted into.
                    self.slice(b, dest, o, s)
                } else if lo == o && hi == o + s {
                    self.slice(b, src, o - at, s)
                } else {
                    // Straddles the chunk's edge: the parts before, inside and after it, joined.
                    let mut parts = Vec::new();
                    if o < lo {
                        parts.push(self.slice(b, dest, o, lo - o));
                    }
                    parts.push(self.slice(b, src, lo - at, hi - lo));
                    if hi < o + s {
                        parts.push(self.slice(b, dest, hi, o + s - hi));
                    }
                    join(b, &parts, elem)
                }
            }
            "vector.from_elements" => {
                let elems: Vec<Val> = (o..o + s).map(|i| ir::operand(def, i as usize)).collect();
                ir::result(b.create("vector.from_elements", &elems, &[narrow_ty], &[]), 0)
            }
            "vector.broadcast" if ir::vector_shape(ir::value_type(ir::operand(def, 0))).is_none() => {
                ir::result(b.create("vector.broadcast", &[ir::operand(def, 0)], &[narrow_ty], &[]), 0)
            }
            "arith.constant" => {
                let splat = ir::splat_value(def)?;
                ir::result(
                    b.create("arith.constant", &[], &[narrow_ty], &[("value", ir::splat_attr(narrow_ty, splat))]),
                    0,
                )
            }
            name if is_elementwise(def, name) && ir::result_count(def) == 1 => {
                // Every vector operand has the result's length (element-wise); scalars (a select's
                // condition) stay as they are.
                let mut operands = Vec::new();
                for i in 0..ir::operand_count(def) {
                    let x = ir::operand(def, i);
                    operands.push(match ir::vector_shape(ir::value_type(x)) {
                        Some((len, _)) if len == n => self.slice(b, x, o, s),
                        Some(_) => return None,
                        None => x,
                    });
                }
                ir::result(b.clone_with(def, &operands, &[narrow_ty]), 0)
            }
            _ => return None,
        };
        self.done.insert(key, out);
        Some(out)
    }

    /// Elements `[o, o + s)` of `v`: narrowed when its definition allows, else sliced.
    fn slice(&mut self, b: &Builder, v: Val, o: i64, s: i64) -> Val {
        if let Some(x) = self.narrow(b, v, o, s) {
            return x;
        }
        let (_, elem) = ir::vector_shape(ir::value_type(v)).expect("slice of a 1-D vector");
        let attrs =
            [("offsets", b.attr(&format!("[{o}]"))), ("sizes", b.attr(&format!("[{s}]"))), ("strides", b.attr("[1]"))];
        ir::result(b.create("vector.extract_strided_slice", &[v], &[ir::vector_type(s, elem)], &attrs), 0)
    }
}

/// The parts (vectors of `elem`) one after the other (`vector.shuffle` of two at a time).
fn join(b: &Builder, parts: &[Val], elem: MlirType) -> Val {
    let len = |v: Val| ir::vector_shape(ir::value_type(v)).map_or(0, |(n, _)| n);
    let mut acc = parts[0];
    for &p in &parts[1..] {
        let n = len(acc) + len(p);
        let mask = (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
        acc = ir::result(
            b.create(
                "vector.shuffle",
                &[acc, p],
                &[ir::vector_type(n, elem)],
                &[("mask", b.attr(&format!("array<i64: {mask}>")))],
            ),
            0,
        );
    }
    acc
}

/// Ops that apply to each element on its own, whatever the vector's length: every `arith` op but a
/// constant, `math`'s, and the LLVM intrinsics fast math and `fma` lower to (lower/fast_math.rs).
fn is_elementwise(op: Op, name: &str) -> bool {
    (name.starts_with("arith.") && name != "arith.constant")
        || name.starts_with("math.")
        || (name == "llvm.call_intrinsic"
            && matches!(ir::string_attr(op, "intrin").as_deref(), Some("llvm.exp2" | "llvm.sqrt" | "llvm.fma")))
}

/// Erases the side-effect-free vector ops (and the arithmetic) left without uses, last first so
/// that a chain goes in one sweep.
fn erase_unused(module: Op) {
    let pure = |op: Op, name: &str| {
        is_elementwise(op, name)
            || name == "arith.constant"
            || matches!(
                name,
                "vector.insert_strided_slice"
                    | "vector.extract_strided_slice"
                    | "vector.from_elements"
                    | "vector.broadcast"
                    | "vector.shuffle"
                    | "vector.extract"
            )
    };
    for op in ir::nested_ops(module).into_iter().rev() {
        let results = ir::result_count(op);
        if results > 0 && pure(op, &ir::op_name(op)) && (0..results).all(|i| !ir::has_uses(ir::result(op, i))) {
            ir::erase(op);
        }
    }
}
