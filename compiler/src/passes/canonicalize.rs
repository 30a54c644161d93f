//! `cute-canonicalize`: folds CuTe's tensor operations into views and simplifies the views, without
//! changing what any access reads.
//!
//! - Each of CuTe's tensor operations (`cute.local_tile`, `cute.slice`, `cute.composition`, the
//!   divides, `cute.partition_s`, ...) is evaluated with the layout algebra (`algebra.rs`) and
//!   replaced by a `cute.view` of the tensor its chain started from: the offset and the `?` entries of
//!   the result are computed as `arith` ops from the run-time values the chain used. Static parts fold
//!   away entirely. The result type must be what the algebra gives, or the pass fails at the op.
//!   Element accesses by coordinate (`cute.load_at`/`cute.store_at`) become `cute.load`/`cute.store`
//!   of that tensor at the offset the coordinate gives.
//! - A `cute.dyn` of a view is the view's own operand for that entry (no view needed to read it).
//! - A view of a view becomes one view of the original tensor, the two offsets added.
//! - A view's layout is put in canonical form: flattened, size-1 modes dropped, and neighbouring
//!   static modes merged where the second continues the first (`(2,4):(1,2)` → `8:1`). Every access
//!   is by element offset or by whole fragment in colexicographic order, both of which depend only on
//!   the layout as a function, so the canonical form is equivalent. Entries with a run-time (`?`)
//!   value are kept as they are: whether they merge depends on values only known at run time.
//! - Views, layouts, copies and `arith` values that end up unused are erased (folding leaves the
//!   offsets of intermediate views behind).

use super::algebra::{self, Folder};
use super::common::{fail, tensor_info, Reported};
use crate::ir::{self, Builder, Op, Val};
use cute_layout::{Int, IntTuple, Layout};
use melior::pass::Pass;

pub const NAME: &str = "cute-canonicalize";
pub const SUMMARY: &str = "Fold CuTe tensor ops (local_tile, slice, composition, divides, partitions) into views with the layout algebra; fold views of views; canonicalize view layouts";

static PASS_ID: super::PassId = super::PassId(2);

pub fn create() -> Pass {
    super::external(&PASS_ID, NAME, SUMMARY, run)
}

fn run(module: Op) -> Result<(), Reported> {
    // 0. CuTe's tensor operations, in program order (each one's source is folded before it).
    let mut folder = Folder::default();
    for op in ir::nested_ops(module) {
        let name = ir::op_name(op);
        if name == "gpu.func" {
            // A kernel's index integers are `i64` under `cute.index_bits = 64` (an `index(i64)`
            // kernel), else `i32`; the ops of its body follow it.
            folder.index_type = if ir::int_attr(op, "cute.index_bits") == Some(64) { "i64" } else { "i32" };
        } else if algebra::is_foldable(&name) {
            folder.fold(op)?;
        } else if algebra::is_element_access(&name) {
            folder.fold_access(op)?;
        }
    }
    // 1. cute.dyn of a view: the view's operand.
    for op in ir::nested_ops(module) {
        if ir::op_name(op) != "cute.dyn" {
            continue;
        }
        let Some(view) = ir::defining_op(ir::operand(op, 0)).filter(|v| ir::op_name(*v) == "cute.view") else {
            continue;
        };
        let index =
            ir::int_attr(op, "index").ok_or_else(|| fail(op, "`cute.dyn` needs an integer `index` attribute"))?;
        let slot = 2 + index as usize;
        if slot >= ir::operand_count(view) {
            return Err(fail(
                op,
                &format!(
                    "`cute.dyn` index {index} is out of range for the view's {} dynamic values",
                    ir::operand_count(view) - 2
                ),
            ));
        }
        ir::replace_uses(op, &[ir::operand(view, slot)]);
        ir::erase(op);
    }
    // 2. and 3. Views of views, canonical layouts (in program order, so inner views come first).
    for op in ir::nested_ops(module) {
        if ir::op_name(op) != "cute.view" {
            continue;
        }
        let mut op = op;
        if let Some(inner) = ir::defining_op(ir::operand(op, 0)).filter(|v| ir::op_name(*v) == "cute.view") {
            let b = Builder::before(op);
            let offset = b.binary("arith.addi", ir::operand(inner, 1), ir::operand(op, 1));
            let mut operands = vec![ir::operand(inner, 0), offset];
            operands.extend((2..ir::operand_count(op)).map(|i| ir::operand(op, i)));
            op = rebuild(op, &operands, None)?;
        }
        op = canonical_layout(op)?;
        let _ = op;
    }
    // 4. Views, layouts, copies, dynamic entries and arith values nobody reads any more (in reverse,
    // so users go before what they use).
    for op in ir::nested_ops(module).into_iter().rev() {
        let name = ir::op_name(op);
        let pure = matches!(
            name.as_str(),
            "cute.view"
                | "cute.dyn"
                | "cute.make_layout"
                | "cute.make_copy_atom"
                | "cute.make_tiled_copy"
                | "cute.make_mma_atom"
                | "cute.make_tiled_mma"
        ) || (name.starts_with("arith.") && ir::result_count(op) == 1);
        if pure && !ir::has_uses(ir::result(op, 0)) {
            ir::erase(op);
        }
    }
    Ok(())
}

/// Recreates a view with new operands and, optionally, a new result type; returns the new op.
fn rebuild(op: Op, operands: &[Val], result_type: Option<&str>) -> Result<Op, Reported> {
    let b = Builder::before(op);
    let ty = match result_type {
        Some(t) => ir::parse_type(b.ctx, t).ok_or_else(|| fail(op, &format!("internal error: bad type {t}")))?,
        None => ir::value_type(ir::result(op, 0)),
    };
    let new = b.create("cute.view", operands, &[ty], &[]);
    ir::replace_uses(op, &[ir::result(new, 0)]);
    ir::erase(op);
    Ok(new)
}

/// One leaf of a view's layout: each entry static, or the operand holding its run-time value.
#[derive(Clone)]
struct Leaf {
    shape: Entry,
    stride: Entry,
}

#[derive(Clone)]
enum Entry {
    Static(i64),
    Dynamic { value: Val, text: String },
}

impl Entry {
    fn text(&self) -> String {
        match self {
            Entry::Static(v) => v.to_string(),
            Entry::Dynamic { text, .. } => text.clone(),
        }
    }
}

fn canonical_layout(op: Op) -> Result<Op, Reported> {
    let result = ir::result(op, 0);
    let printed = ir::type_to_string(ir::value_type(result));
    let (info, layout, _) = tensor_info(op, &printed)?;
    let dyn_values: Vec<Val> = (2..ir::operand_count(op)).map(|i| ir::operand(op, i)).collect();
    let leaves = bind(&layout, &dyn_values).ok_or_else(|| {
        fail(
            op,
            &format!(
                "`cute.view` has {} dynamic values but its layout {} needs another number",
                dyn_values.len(),
                info.layout
            ),
        )
    })?;
    let mut out: Vec<Leaf> = Vec::new();
    for leaf in leaves {
        if let Entry::Static(1) = leaf.shape {
            continue;
        }
        if let (
            Some(Leaf { shape: Entry::Static(s0), stride: Entry::Static(d0) }),
            Leaf { shape: Entry::Static(s1), stride: Entry::Static(d1) },
        ) = (out.last_mut(), &leaf)
        {
            if s0.checked_mul(*d0) == Some(*d1) {
                if let Some(s) = s0.checked_mul(*s1) {
                    *s0 = s;
                    continue;
                }
            }
        }
        out.push(leaf);
    }
    if out.is_empty() {
        out.push(Leaf { shape: Entry::Static(1), stride: Entry::Static(0) });
    }
    let tuple = |parts: Vec<String>| if parts.len() == 1 { parts[0].clone() } else { format!("({})", parts.join(",")) };
    let canonical = format!(
        "{}:{}",
        tuple(out.iter().map(|l| l.shape.text()).collect()),
        tuple(out.iter().map(|l| l.stride.text()).collect())
    );
    if canonical == info.layout {
        return Ok(op);
    }
    let mut operands = vec![ir::operand(op, 0), ir::operand(op, 1)];
    for e in out.iter().map(|l| &l.shape).chain(out.iter().map(|l| &l.stride)) {
        if let Entry::Dynamic { value, .. } = e {
            operands.push(*value);
        }
    }
    let ty = cute_dialect::TensorTypeInfo { layout: canonical, ..info }.to_mlir();
    rebuild(op, &operands, Some(&ty))
}

/// The layout's leaves in order, each `?` entry bound to its operand (shapes first, then strides).
fn bind(layout: &Layout, values: &[Val]) -> Option<Vec<Leaf>> {
    let mut it = values.iter();
    let mut entries = |t: &IntTuple| -> Option<Vec<Entry>> {
        t.leaves()
            .into_iter()
            .map(|l: Int| match l.as_static() {
                Some(v) => Some(Entry::Static(v)),
                None => it.next().map(|v| Entry::Dynamic { value: *v, text: l.to_string() }),
            })
            .collect()
    };
    let shapes = entries(&layout.shape)?;
    let strides = entries(&layout.stride)?;
    if it.next().is_some() {
        return None;
    }
    Some(shapes.into_iter().zip(strides).map(|(shape, stride)| Leaf { shape, stride }).collect())
}
