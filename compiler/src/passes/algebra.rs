//! CuTe's operations on tensors, evaluated with the layout algebra. `cute-verify` uses this to check
//! that each op's result type is what the algebra gives; `cute-canonicalize` to replace the op by a
//! `cute.view` of the tensor the chain of ops started from.
//!
//! Evaluation is symbolic. Every run-time integer an op depends on (a `?` entry of a tensor's or a
//! layout's type, an `i32` operand) becomes a leaf of a `cute_layout::Int` expression, so the algebra
//! runs exactly as it does on static values, and what it gives (the view's offset, the `?` entries of
//! its layout) are expressions over those leaves that [`Folder::fold`] materializes as `arith` ops.

use super::common::{fail, tensor_info, type_layout, Reported};
use crate::ir::{self, Builder, Op, Val};
use cute_layout::expr::{self, Value};
use cute_layout::int::{Atom, Op as IntOp};
use cute_layout::{Int, IntTuple, Layout};
use std::collections::HashMap;
use std::str::FromStr;

/// Whether an op is one of CuTe's tensor operations that fold to a `cute.view`.
pub fn is_foldable(name: &str) -> bool {
    match name.strip_prefix("cute.") {
        Some("partition_s" | "partition_d" | "partition_a" | "partition_b" | "partition_c") => true,
        Some(n) => expr::is_tensor_view_op(n),
        None => false,
    }
}

/// Whether an op is CuTe's element access by coordinate (`tensor[coord]`), which folds to an offset.
pub fn is_element_access(name: &str) -> bool {
    matches!(name, "cute.load_at" | "cute.store_at")
}

fn has_under(v: &Value) -> bool {
    match v {
        Value::Under => true,
        Value::Tuple(items) => items.iter().any(has_under),
        _ => false,
    }
}

/// A tensor as the algebra sees it: `layout` over the memory of `root`, `offset` elements from its base.
#[derive(Clone)]
pub struct SymTensor {
    pub root: Val,
    pub offset: Int,
    pub layout: Layout,
}

/// What an algebra op makes: a tensor, or (from a `!cute.layout` source) a layout value.
#[derive(Clone)]
pub enum Sym {
    Tensor(SymTensor),
    Layout(Layout),
}

/// What a leaf of the symbolic expressions stands for.
#[derive(Clone, Copy)]
enum Leaf {
    /// An `i32` SSA value.
    Value(Val),
    /// The `index`-th `?` entry of a root tensor's type (read with `cute.dyn`).
    Dyn { tensor: Val, index: usize },
}

fn key(v: Val) -> usize {
    v.ptr as usize
}

/// The symbolic state of one walk over a module: leaves, and the tensors already evaluated.
pub struct Folder {
    /// The type offsets and `?` values are materialized in: the kernel's index type (`i32`, or
    /// `i64` in a kernel with `cute.index_bits = 64`), which its ops' integer operands have.
    pub index_type: &'static str,
    leaves: Vec<(Leaf, i64)>,
    by_value: HashMap<usize, u32>,
    by_dyn: HashMap<(usize, usize), u32>,
    values: HashMap<usize, Sym>,
    dyn_values: HashMap<(usize, usize), Val>,
}

impl Default for Folder {
    fn default() -> Self {
        Folder {
            index_type: "i32",
            leaves: Vec::new(),
            by_value: HashMap::new(),
            by_dyn: HashMap::new(),
            values: HashMap::new(),
            dyn_values: HashMap::new(),
        }
    }
}

impl Folder {
    fn leaf(&mut self, leaf: Leaf, div: i64) -> Int {
        // A constant operand is a static value: the algebra folds it.
        if let Leaf::Value(v) = leaf {
            if let Some(c) = ir::defining_op(v)
                .filter(|d| ir::op_name(*d) == "arith.constant")
                .and_then(|d| ir::int_attr(d, "value"))
            {
                return Int::S(c);
            }
        }
        let found = match leaf {
            Leaf::Value(v) => self.by_value.get(&key(v)).copied(),
            Leaf::Dyn { tensor, index } => self.by_dyn.get(&(key(tensor), index)).copied(),
        };
        let id = found.unwrap_or_else(|| {
            let id = self.leaves.len() as u32;
            self.leaves.push((leaf, div.max(1)));
            match leaf {
                Leaf::Value(v) => self.by_value.insert(key(v), id),
                Leaf::Dyn { tensor, index } => self.by_dyn.insert((key(tensor), index), id),
            };
            id
        });
        Int::var(id, self.leaves[id as usize].1)
    }

    /// A parsed value with its leaves (numbered 0, 1, ... in printed order by the parser) bound by `bind`.
    fn rebind(
        &mut self,
        op: Op,
        value: &Value,
        bind: &mut dyn FnMut(usize) -> Option<Leaf>,
    ) -> Result<Value, Reported> {
        let mut missing = false;
        let r = value.subst(&mut |id, div| match bind(id as usize) {
            Some(l) => Ok(self.leaf(l, div)),
            None => {
                missing = true;
                Ok(Int::ZERO)
            }
        });
        match r {
            Ok(_) if missing => Err(fail(op, "internal error: a `?` without a value")),
            Ok(v) => Ok(v),
            Err(e) => Err(fail(op, &format!("the layout algebra failed: {e}"))),
        }
    }

    /// Records what a value is (a view or layout made by a fold, an op checked by the verifier).
    pub fn record(&mut self, v: Val, s: Sym) {
        self.values.insert(key(v), s);
    }

    /// A tensor value: as recorded, or a root whose `?` entries are its own `cute.dyn` values.
    fn tensor(&mut self, op: Op, v: Val) -> Result<SymTensor, Reported> {
        if let Some(Sym::Tensor(t)) = self.values.get(&key(v)) {
            return Ok(t.clone());
        }
        let (_, layout, _) = tensor_info(op, &ir::type_to_string(ir::value_type(v)))?;
        let Value::Layout(layout) =
            self.rebind(op, &Value::Layout(layout), &mut |index| Some(Leaf::Dyn { tensor: v, index }))?
        else {
            return Err(fail(op, "internal error: a layout did not stay a layout"));
        };
        Ok(SymTensor { root: v, offset: Int::ZERO, layout })
    }

    /// A `!cute.layout` operand: as recorded, or made by `cute.make_layout` from its `?` values.
    fn layout_operand(&mut self, op: Op, v: Val) -> Result<Layout, Reported> {
        if let Some(Sym::Layout(l)) = self.values.get(&key(v)) {
            return Ok(l.clone());
        }
        let printed = ir::type_to_string(ir::value_type(v));
        let text = layout_type_text(&printed)
            .ok_or_else(|| fail(op, &format!("expected a !cute.layout operand, found {printed}")))?;
        let maker = ir::defining_op(v)
            .filter(|m| ir::op_name(*m) == "cute.make_layout")
            .ok_or_else(|| fail(op, "a layout operand must be made by `cute.make_layout` or a layout op"))?;
        let layout = type_layout(text).map_err(|e| fail(op, &format!("invalid layout \"{text}\": {e}")))?;
        let values: Vec<Val> = (0..ir::operand_count(maker)).map(|i| ir::operand(maker, i)).collect();
        let Value::Layout(l) =
            self.rebind(op, &Value::Layout(layout), &mut |k| values.get(k).map(|v| Leaf::Value(*v)))?
        else {
            return Err(fail(op, "internal error: a layout did not stay a layout"));
        };
        Ok(l)
    }

    /// What an op makes, by the algebra; fails (reporting at the op) when its operands do not match
    /// its `args`, the algebra rejects them, or the result type is not what the algebra gives.
    pub fn eval(&mut self, op: Op) -> Result<Sym, Reported> {
        let name = ir::op_name(op);
        let short = name.strip_prefix("cute.").unwrap_or(&name).to_string();
        let src_value = ir::operand(op, 0);
        let result_type = ir::type_to_string(ir::value_type(ir::result(op, 0)));
        let mismatch = |computed: &Layout, declared: &str| {
            fail(op, &format!("`{name}` gives the layout {computed} by the layout algebra, but its result type says \"{declared}\""))
        };
        if layout_type_text(&ir::type_to_string(ir::value_type(src_value))).is_some() {
            // The same algebra on a layout value: a layout (slicing one keeps the sub-layout, as CuTe).
            if matches!(
                short.as_str(),
                "partition_s" | "partition_d" | "partition_a" | "partition_b" | "partition_c" | "make_view"
            ) {
                return Err(fail(op, &format!("`{name}` takes a tensor, not a layout")));
            }
            let src = self.layout_operand(op, src_value)?;
            let (layout, _) = self.algebra(op, &short, &src, &Int::ZERO)?;
            let declared = layout_type_text(&result_type)
                .ok_or_else(|| fail(op, &format!("`{name}` of a layout makes a !cute.layout, not {result_type}")))?;
            if layout.to_string() != declared {
                return Err(mismatch(&layout, declared));
            }
            return Ok(Sym::Layout(layout));
        }
        let src = self.tensor(op, src_value)?;
        let (layout, offset) = match short.as_str() {
            "partition_s" | "partition_d" => self.partition(op, &src)?,
            "partition_a" | "partition_b" | "partition_c" => self.mma_partition(op, &short, &src)?,
            _ => self.algebra(op, &short, &src.layout, &src.offset)?,
        };
        let declared = tensor_info(op, &result_type)?.0;
        if layout.to_string() != declared.layout {
            return Err(mismatch(&layout, &declared.layout));
        }
        // The view is of the root's memory: same element type and space, and no more alignment than
        // the root's base and the view's offset prove.
        let (root, _, elem_bytes) = tensor_info(op, &ir::type_to_string(ir::value_type(src.root)))?;
        if declared.elem != root.elem || declared.space != root.space {
            return Err(fail(
                op,
                &format!(
                    "`{name}` views {} {} memory, but its result type says {} {}",
                    root.space, root.elem, declared.space, declared.elem
                ),
            ));
        }
        let proven = cute_layout::int::offset_alignment(root.align, &offset, elem_bytes);
        if declared.align > proven {
            return Err(fail(op, &format!("`{name}`'s result type claims {}-byte alignment, but its offset {offset} from a {}-byte aligned base proves only {proven}", declared.align, root.align)));
        }
        self.check_whole_tiles(op, &name, &short, &src.layout)?;
        Ok(Sym::Tensor(SymTensor { root: src.root, offset, layout }))
    }

    /// `name(src, args...)`: the result layout and its origin's offset (`src_offset` plus what a
    /// slice or tile adds).
    fn algebra(&mut self, op: Op, name: &str, src: &Layout, src_offset: &Int) -> Result<(Layout, Int), Reported> {
        let args = ir::string_array_attr(op, "args")
            .ok_or_else(|| fail(op, "expected an `args` attribute: an array of strings"))?;
        // The operands after the source: the `!cute.layout` group, then the `i32` group.
        let rest: Vec<Val> = (1..ir::operand_count(op)).map(|i| ir::operand(op, i)).collect();
        let split =
            rest.iter().take_while(|v| layout_type_text(&ir::type_to_string(ir::value_type(**v))).is_some()).count();
        let (mut layouts, mut ints) = (rest[..split].iter(), rest[split..].iter());
        let mut values = vec![Value::Layout(src.clone())];
        for text in &args {
            if text == "@" {
                let v =
                    *layouts.next().ok_or_else(|| fail(op, "an \"@\" argument has no `!cute.layout` operand left"))?;
                values.push(Value::Layout(self.layout_operand(op, v)?));
                continue;
            }
            let parsed = expr::eval_str(text).map_err(|e| fail(op, &format!("invalid argument \"{text}\": {e}")))?;
            let needed = parsed.dyn_leaves().len();
            let operands: Vec<Val> = ints.by_ref().take(needed).copied().collect();
            if operands.len() < needed {
                return Err(fail(
                    op,
                    &format!("argument \"{text}\" has {needed} `?` entries but the op has too few `i32` operands"),
                ));
            }
            values.push(self.rebind(op, &parsed, &mut |k| operands.get(k).map(|v| Leaf::Value(*v)))?);
        }
        let (unused_layouts, unused_ints) = (layouts.count(), ints.count());
        if unused_layouts + unused_ints > 0 {
            return Err(fail(
                op,
                &format!(
                    "{unused_layouts} `!cute.layout` and {unused_ints} `i32` operands are left over after the `args`"
                ),
            ));
        }
        if name == "make_view" {
            return match values.as_slice() {
                [_, Value::Layout(l)] => Ok((l.clone(), src_offset.clone())),
                // A swizzled layout over an allocation: the swizzle is the result type's, the inner
                // layout the view's (the front end attaches swizzles with offset 0 only).
                [_, Value::Composed(c)] if c.offset.as_static() == Some(0) => {
                    Ok((c.layout.clone(), src_offset.clone()))
                }
                _ => Err(fail(op, "`cute.make_view` takes one layout argument")),
            };
        }
        match expr::apply(name, &values) {
            Ok(Value::Layout(l)) => Ok((l, src_offset.clone())),
            Ok(Value::Sliced(l, off)) => {
                Ok((l, src_offset.add(&off).map_err(|e| fail(op, &format!("the layout algebra failed: {e}")))?))
            }
            Ok(other) => Err(fail(op, &format!("`{name}` gives {other}, not a layout"))),
            Err(e) => Err(fail(op, &format!("the layout algebra rejects `{name}`: {e}"))),
        }
    }

    fn partition(&mut self, op: Op, src: &SymTensor) -> Result<(Layout, Int), Reported> {
        let copy = TiledCopyType::of(op, ir::operand(op, 1))?;
        let tid_value = ir::operand(op, 2);
        let tid = self.leaf(Leaf::Value(tid_value), 1);
        let algebra_err = |e: cute_layout::Error| fail(op, &format!("the layout algebra rejects the partition: {e}"));
        let (layout, offset) =
            cute_layout::tv_partition(&src.layout, &copy.tv, &copy.tile, &tid).map_err(algebra_err)?;
        Ok((layout, src.offset.add(&offset).map_err(algebra_err)?))
    }

    /// A partition of a tensor by a tiled copy or MMA must tile its static extents exactly, as the
    /// front end requires: a partial tile would reach past the tensor.
    fn check_whole_tiles(&self, op: Op, name: &str, short: &str, src: &Layout) -> Result<(), Reported> {
        let tile = match short {
            "partition_s" | "partition_d" => TiledCopyType::of(op, ir::operand(op, 1))?.tile,
            "partition_a" | "partition_b" | "partition_c" => {
                let [p, q] = tiled_mma_of(op, ir::operand(op, 1))?.tile_of(mma_operand(op, short)?);
                IntTuple::Tuple(vec![p.into(), q.into()])
            }
            _ => return Ok(()),
        };
        match cute_layout::tiler::partial_tile(src, &cute_layout::Tiler::Shape(tile)) {
            Some((path, _, e, t)) => {
                let mode = path.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(".");
                Err(fail(op, &format!("`{name}`: the tile's {t} does not divide the extent {e} of mode {mode} of {src}: the last tile would reach past the tensor")))
            }
            None => Ok(()),
        }
    }

    /// A tiled MMA's `partition_A/B/C`, by the same definition the front end uses.
    fn mma_partition(&mut self, op: Op, short: &str, src: &SymTensor) -> Result<(Layout, Int), Reported> {
        let tiled = tiled_mma_of(op, ir::operand(op, 1))?;
        let operand = mma_operand(op, short)?;
        let tid = self.leaf(Leaf::Value(ir::operand(op, 2)), 1);
        let algebra_err =
            |e: cute_layout::Error| fail(op, &format!("the layout algebra rejects the MMA partition: {e}"));
        let (layout, offset) = tiled.partition(operand, &src.layout, &tid).map_err(algebra_err)?;
        Ok((layout, src.offset.add(&offset).map_err(algebra_err)?))
    }

    /// Replaces a foldable op by what the algebra gives: a `cute.view` of its root tensor, or a
    /// `cute.make_layout` of a layout value.
    pub fn fold(&mut self, op: Op) -> Result<(), Reported> {
        let sym = self.eval(op)?;
        let b = Builder::before(op);
        let mut memo = HashMap::new();
        let (layout, mut operands, name) = match &sym {
            Sym::Tensor(t) => (&t.layout, vec![t.root, self.materialize(&b, &t.offset, &mut memo)], "cute.view"),
            Sym::Layout(l) => (l, vec![], "cute.make_layout"),
        };
        for leaf in layout.dynamic_leaves() {
            operands.push(self.materialize(&b, &leaf, &mut memo));
        }
        let made = b.create(name, &operands, &[ir::value_type(ir::result(op, 0))], &[]);
        ir::replace_uses(op, &[ir::result(made, 0)]);
        ir::erase(op);
        // A view that lays the memory out with another swizzle (or none) is a new root: what is
        // made from it and what reads it must go through it, not through a root swizzled otherwise.
        let swizzle = |v: Val| {
            cute_dialect::TensorTypeInfo::parse(&ir::type_to_string(ir::value_type(v))).and_then(|i| i.swizzle)
        };
        let relaid = matches!(&sym, Sym::Tensor(t) if swizzle(t.root) != swizzle(ir::result(made, 0)));
        if !relaid {
            self.record(ir::result(made, 0), sym);
        }
        Ok(())
    }

    /// The element a `cute.load_at`/`cute.store_at` reaches: the tensor its chain started from, and
    /// the offset from that tensor's base.
    pub fn eval_access(&mut self, op: Op) -> Result<(Val, Int), Reported> {
        let tensor_index = if ir::op_name(op) == "cute.load_at" { 0 } else { 1 };
        let src = self.tensor(op, ir::operand(op, tensor_index))?;
        let text = ir::string_attr(op, "coord")
            .ok_or_else(|| fail(op, "expected a `coord` attribute: a coordinate in CuTe notation"))?;
        let parsed = expr::eval_str(&text).map_err(|e| fail(op, &format!("invalid coordinate \"{text}\": {e}")))?;
        let ints: Vec<Val> = (tensor_index + 1..ir::operand_count(op)).map(|i| ir::operand(op, i)).collect();
        let needed = parsed.dyn_leaves().len();
        if ints.len() != needed {
            return Err(fail(
                op,
                &format!(
                    "the coordinate \"{text}\" has {needed} `?` entries but the op has {} `i32` operands",
                    ints.len()
                ),
            ));
        }
        if has_under(&parsed) {
            return Err(fail(
                op,
                &format!("the coordinate \"{text}\" of one element cannot keep a mode (`_`): slice with `cute.slice`"),
            ));
        }
        let coord = self.rebind(op, &parsed, &mut |k| ints.get(k).map(|v| Leaf::Value(*v)))?;
        let crd = coord.to_crd().ok_or_else(|| fail(op, &format!("\"{text}\" is not a coordinate")))?;
        let algebra_err = |e: cute_layout::Error| {
            fail(op, &format!("the coordinate {text} does not index the layout {}: {e}", src.layout))
        };
        let (_, offset) = cute_layout::slice_and_offset(&crd, &src.layout).map_err(algebra_err)?;
        Ok((src.root, src.offset.add(&offset).map_err(algebra_err)?))
    }

    /// Replaces an access by coordinate with a `cute.load`/`cute.store` of the root tensor at the
    /// offset the layouts give.
    pub fn fold_access(&mut self, op: Op) -> Result<(), Reported> {
        let (root, offset) = self.eval_access(op)?;
        let b = Builder::before(op);
        let off = self.materialize(&b, &offset, &mut HashMap::new());
        if ir::op_name(op) == "cute.load_at" {
            let load = b.create("cute.load", &[root, off], &[ir::value_type(ir::result(op, 0))], &[]);
            ir::replace_uses(op, &[ir::result(load, 0)]);
        } else {
            b.create("cute.store", &[ir::operand(op, 0), root, off], &[], &[]);
        }
        ir::erase(op);
        Ok(())
    }

    fn leaf_value(&mut self, id: u32) -> Val {
        match self.leaves[id as usize].0 {
            Leaf::Value(v) => v,
            Leaf::Dyn { tensor, index } => {
                if let Some(v) = self.dyn_values.get(&(key(tensor), index)) {
                    return *v;
                }
                // Read where the tensor is defined, so every later use is dominated.
                let b = Builder::after_definition(tensor, unsafe { mlir_sys::mlirValueGetLocation(tensor) });
                let ty = b.ty(self.index_type);
                let dyn_op = b.create("cute.dyn", &[tensor], &[ty], &[("index", b.attr(&format!("{index} : i32")))]);
                let v = ir::result(dyn_op, 0);
                self.dyn_values.insert((key(tensor), index), v);
                v
            }
        }
    }

    /// An index expression as `arith` ops before the builder's anchor (each subexpression once).
    fn materialize(&mut self, b: &Builder, i: &Int, memo: &mut HashMap<Int, Val>) -> Val {
        if let Some(v) = memo.get(i) {
            return *v;
        }
        let v = match i {
            Int::S(c) => b.const_int(*c, self.index_type),
            Int::D(d) => {
                let mut acc: Option<Val> = None;
                for a in d.factors.iter() {
                    let x = self.atom(b, a, memo);
                    acc = Some(match acc {
                        None => x,
                        Some(p) => b.binary("arith.muli", p, x),
                    });
                }
                let acc = acc.unwrap_or_else(|| b.const_int(1, self.index_type));
                if d.coef == 1 {
                    acc
                } else {
                    let c = b.const_int(d.coef, self.index_type);
                    b.binary("arith.muli", acc, c)
                }
            }
        };
        memo.insert(i.clone(), v);
        v
    }

    fn atom(&mut self, b: &Builder, a: &Atom, memo: &mut HashMap<Int, Val>) -> Val {
        let op = match a {
            Atom::Var { id, .. } => return self.leaf_value(*id),
            Atom::Op(op) => op.clone(),
            // Basis elements belong to counting tensors, which are never memory.
            Atom::Basis(_) => return b.const_int(0, self.index_type),
        };
        match &*op {
            IntOp::Add(x, y) => {
                let (x, y) = (self.materialize(b, x, memo), self.materialize(b, y, memo));
                b.binary("arith.addi", x, y)
            }
            IntOp::Min(x, y) => {
                let (x, y) = (self.materialize(b, x, memo), self.materialize(b, y, memo));
                b.binary("arith.minsi", x, y)
            }
            IntOp::Max(x, y) => {
                let (x, y) = (self.materialize(b, x, memo), self.materialize(b, y, memo));
                b.binary("arith.maxsi", x, y)
            }
            IntOp::Div(x, y) | IntOp::Mod(x, y) | IntOp::CeilDiv(x, y) | IntOp::CeilQuot(x, y) => {
                // The algebra's division is Euclidean (divisors are positive extents). Where the
                // dividend is proven non-negative the unsigned operations are exact and cheapest.
                let unsigned = self.non_negative(x) && y.proven_positive(&|id| self.positive(id));
                let (xv, yv) = (self.materialize(b, x, memo), self.materialize(b, y, memo));
                match (&*op, unsigned) {
                    (IntOp::Div(..), true) => b.binary("arith.divui", xv, yv),
                    (IntOp::Mod(..), true) => b.binary("arith.remui", xv, yv),
                    (IntOp::CeilDiv(..) | IntOp::CeilQuot(..), true) => b.binary("arith.ceildivui", xv, yv),
                    (IntOp::Div(..), false) => b.binary("arith.floordivsi", xv, yv),
                    (IntOp::CeilDiv(..) | IntOp::CeilQuot(..), false) => b.binary("arith.ceildivsi", xv, yv),
                    _ => {
                        let q = b.binary("arith.floordivsi", xv, yv);
                        let qy = b.binary("arith.muli", q, yv);
                        b.binary("arith.subi", xv, qy)
                    }
                }
            }
        }
    }

    /// Whether an expression is proven >= 0: tensors' extents and strides are (CuTe's layouts run
    /// forward, and the runtime checks the arguments), and SSA values where their definition shows it.
    fn non_negative(&self, i: &Int) -> bool {
        i.proven_non_negative(
            &|id| matches!(self.leaves[id as usize].0, Leaf::Value(v) if non_negative_value(v, 8)),
            &|id| self.positive(id),
        )
    }

    /// Divisors are extents: the `?` entries of tensor and layout types are positive.
    fn positive(&self, id: u32) -> bool {
        matches!(self.leaves[id as usize].0, Leaf::Dyn { .. })
    }
}

/// Whether an `i32` SSA value is proven >= 0: GPU indices and sizes, non-negative constants, and
/// sums, products and unsigned quotients of such values, loop counters that start at one.
fn non_negative_value(v: Val, depth: u32) -> bool {
    if depth == 0 {
        return false;
    }
    if let Some((owner, 0)) = ir::block_arg_owner(v) {
        // An scf.for counter counts up from its lower bound.
        return ir::op_name(owner) == "scf.for"
            && non_negative_value(ir::operand(owner, 0), depth - 1)
            && non_negative_value(ir::operand(owner, 2), depth - 1);
    }
    let Some(op) = ir::defining_op(v) else { return false };
    let all = |n: usize| (0..n).all(|k| non_negative_value(ir::operand(op, k), depth - 1));
    match ir::op_name(op).as_str() {
        "gpu.thread_id" | "gpu.block_id" | "gpu.block_dim" | "gpu.grid_dim" | "gpu.lane_id" | "cute.dyn" => true,
        "arith.constant" => ir::int_attr(op, "value").is_some_and(|c| c >= 0),
        "arith.index_cast" | "arith.index_castui" => all(1),
        "arith.addi" | "arith.muli" | "arith.divui" | "arith.remui" | "arith.divsi" | "arith.remsi" | "arith.minsi"
        | "arith.maxsi" | "arith.ceildivui" => all(2),
        _ => false,
    }
}

/// `!cute.layout<"L">` → `L`.
pub fn layout_type_text(printed: &str) -> Option<&str> {
    printed.strip_prefix("!cute.layout<\"")?.strip_suffix("\">")
}

/// The parameters of a `!cute.tiled_copy<elem, bits, "tile", "tv">` type.
pub struct TiledCopyType {
    pub elem: String,
    pub bits: u32,
    pub tile: IntTuple,
    pub tv: Layout,
}

impl TiledCopyType {
    pub fn of(op: Op, v: Val) -> Result<TiledCopyType, Reported> {
        let printed = ir::type_to_string(ir::value_type(v));
        Self::parse(&printed).ok_or_else(|| {
            fail(op, &format!("expected a !cute.tiled_copy with a static tile and TV layout, found {printed}"))
        })
    }

    fn parse(printed: &str) -> Option<TiledCopyType> {
        let inner = printed.strip_prefix("!cute.tiled_copy<")?.strip_suffix("\">")?;
        let (elem, rest) = inner.split_once(", ")?;
        let (bits, rest) = rest.split_once(", \"")?;
        let (tile, tv) = rest.split_once("\", \"")?;
        let tile = IntTuple::from_str(tile).ok().filter(|t| t.is_static())?;
        let tv = Layout::from_str(tv).ok().filter(|l| l.shape.is_static() && l.stride.is_static())?;
        Some(TiledCopyType { elem: elem.to_string(), bits: bits.trim_end_matches(" : i64").parse().ok()?, tile, tv })
    }
}

/// The tiled MMA a `!cute.tiled_mma<"ATOM", "(TM,TN,TK)", "(M,N,K)">` type describes, checked as
/// `make_tiled_mma` checks it.
pub fn tiled_mma_type(printed: &str) -> Result<cute_layout::TiledMma, String> {
    let bad = || format!("expected !cute.tiled_mma<\"ATOM\", \"(TM,TN,TK)\", \"(M,N,K)\">, found {printed}");
    let inner = printed.strip_prefix("!cute.tiled_mma<\"").and_then(|s| s.strip_suffix("\">")).ok_or_else(bad)?;
    let parts: Vec<&str> = inner.split("\", \"").collect();
    let [name, layout, tile] = parts[..] else { return Err(bad()) };
    let atom = cute_layout::MmaAtom::by_name(name).ok_or_else(|| format!("unknown MMA atom \"{name}\""))?;
    let triple = |s: &str| -> Result<[i64; 3], String> {
        let t = IntTuple::from_str(s).map_err(|e| format!("\"{s}\": {e}"))?;
        let v: Vec<i64> = t.modes().iter().filter_map(|m| m.as_int().and_then(|i| i.as_static())).collect();
        <[i64; 3]>::try_from(v).map_err(|_| format!("\"{s}\" is not three static integers"))
    };
    cute_layout::TiledMma::new(atom, triple(layout)?, Some(triple(tile)?)).map_err(|e| e.to_string())
}

/// The MMA operand a `partition_a|b|c` op (by its short name) partitions.
fn mma_operand(op: Op, short: &str) -> Result<cute_layout::MmaOperand, Reported> {
    short
        .strip_prefix("partition_")
        .and_then(|o| cute_layout::MmaOperand::parse(&o.to_ascii_uppercase()))
        .ok_or_else(|| fail(op, &format!("internal error: `{short}` is not an MMA partition")))
}

/// The tiled MMA of an operand's type, or a reported failure at `op`.
pub fn tiled_mma_of(op: Op, v: Val) -> Result<cute_layout::TiledMma, Reported> {
    tiled_mma_type(&ir::type_to_string(ir::value_type(v))).map_err(|e| fail(op, &e))
}

/// The parameters of a `!cute.copy_atom<elem, bits>` type.
pub fn copy_atom_type(printed: &str) -> Option<(String, u32)> {
    let inner = printed.strip_prefix("!cute.copy_atom<")?.strip_suffix('>')?;
    let (elem, bits) = inner.split_once(", ")?;
    Some((elem.to_string(), bits.trim_end_matches(" : i64").parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tiled_copy_types() {
        let t =
            TiledCopyType::parse("!cute.tiled_copy<f16, 128 : i64, \"(32,64)\", \"((32,4),(8,4)):((128,4),(16,1))\">")
                .unwrap();
        assert_eq!(
            (t.elem.as_str(), t.bits, t.tile.to_string(), t.tv.to_string()),
            ("f16", 128, "(32,64)".into(), "((32,4),(8,4)):((128,4),(16,1))".into())
        );
        assert!(TiledCopyType::parse("!cute.tiled_copy<f16, 128 : i64, \"(?,64)\", \"4:1\">").is_none());
        assert_eq!(copy_atom_type("!cute.copy_atom<f32, 128 : i64>"), Some(("f32".into(), 128)));
        assert_eq!(layout_type_text("!cute.layout<\"(4,8):(8,1)\">"), Some("(4,8):(8,1)"));
    }

    #[test]
    fn reads_tiled_mma_types() {
        let t =
            tiled_mma_type("!cute.tiled_mma<\"SM80_16x8x16_F32BF16BF16F32_TN\", \"(2,2,1)\", \"(32,32,16)\">").unwrap();
        assert_eq!((t.atom.name, t.atom_layout, t.tile), ("SM80_16x8x16_F32BF16BF16F32_TN", [2, 2, 1], [32, 32, 16]));
        let e = tiled_mma_type("!cute.tiled_mma<\"SM80_16x8x16_F32BF16BF16F32_TN\", \"(2,2,1)\", \"(32,24,16)\">")
            .unwrap_err();
        assert!(e.contains("not a multiple"), "{e}");
        assert!(tiled_mma_type("!cute.tiled_mma<\"SM99\", \"(2,2,1)\", \"(32,32,16)\">")
            .unwrap_err()
            .contains("unknown MMA atom"));
    }
}
