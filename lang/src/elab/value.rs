//! The values elaboration computes with: static values are folded, run-time ones are symbolic
//! index expressions or numbered KIR values.

use crate::kir::{CopyOp, FragTy, TensorTy, ValueId};
use crate::types::Scalar;
use cute_layout::{ComposedLayout, Int, IntTuple, Layout, Swizzle};
use std::fmt;

/// Where a tensor's memory comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Origin {
    /// In a kernel: a KIR value (a parameter or a view).
    Kernel(ValueId),
    /// In a host function: a tensor parameter, moved by a (symbolic) element offset.
    Host { param: usize, offset: Int },
}

#[derive(Clone, Debug, PartialEq)]
pub struct TensorVal {
    pub ty: TensorTy,
    pub origin: Origin,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// An index integer (i32): static, or symbolic over run-time values.
    Int(Int),
    /// A run-time scalar that is not an i32 index (floats, bools, other integer widths).
    Scalar(Scalar, ValueId),
    /// A float literal not yet given a type.
    Float(f64),
    Bool(bool),
    Tuple(Vec<Value>),
    Layout(Layout),
    /// `make_swizzle(B, M, S)`: CuTe's `Swizzle<B,M,S>`, a function on offsets.
    Swizzle(Swizzle),
    /// `swizzle o offset o layout` (`make_composed_layout`, `composition(swizzle, layout)`): the
    /// layout of a swizzled shared-memory tensor. Boxed: it is rare and large.
    Composed(Box<ComposedLayout>),
    Tensor(TensorVal),
    /// A counting (identity) tensor: its "elements" are coordinates, `origin + layout(c)` with the
    /// layout's strides basis elements (`1@0`, `1@1`). Used to predicate partial tiles.
    Counting {
        layout: Layout,
        origin: Int,
    },
    Frag(FragTy, ValueId),
    /// `thread_idx`, `block_idx`, `block_dim`, `grid_dim`.
    Dim3(&'static str),
    /// A type used as a value, as in `.to(f16)` or `make_rmem_tensor(8, f32)`.
    Type(Scalar),
    /// A function passed by name: a `fn` item or a builtin operator such as `add`.
    Func(String),
    /// A copy atom: how one thread moves one chunk (`make_copy_atom`): element type and bits per copy.
    CopyAtom {
        elem: Scalar,
        bits: u32,
        op: CopyOp,
    },
    /// A tiled copy: a TV layout ((thread, value) -> tile coordinate) over a tile shape.
    TiledCopy {
        elem: Scalar,
        bits: u32,
        op: CopyOp,
        tv: Layout,
        tile: IntTuple,
    },
    /// One thread's part of a tiled copy (`tiled_copy.get_slice(tid)`).
    ThrCopy {
        elem: Scalar,
        bits: u32,
        op: CopyOp,
        tv: Layout,
        tile: IntTuple,
        tid: Int,
    },
    /// An MMA atom (`make_mma_atom`): one warp-wide tensor-core instruction and its TV layouts.
    MmaAtom(&'static cute_layout::MmaAtom),
    /// A tiled MMA (`make_tiled_mma`): an atom over a grid of warps and a tile.
    TiledMma(cute_layout::TiledMma),
    /// One thread's part of a tiled MMA (`tiled_mma.get_slice(tid)`).
    ThrMma(Box<(cute_layout::TiledMma, Int)>),
    Str(String),
    /// `smem_allocator()`: hands out the launch's dynamic shared memory (CuTe DSL's `SmemAllocator`).
    SmemAllocator(super::smem::SmemAllocator),
    /// A `let mut` variable: a one-element register tensor holding a value of this type (the
    /// backend promotes it to a register); reading it loads, assigning stores.
    Var(TensorVal, Scalar),
    /// A pipeline (`make_pipeline_async`, `make_pipeline_tma_async`): a ring of mbarriers.
    Pipeline(std::sync::Arc<super::pipeline::Pipeline>),
    /// A producer or consumer state of a pipeline (`pipe.producer_state()`), moved in place by `advance()`.
    PipeState(std::sync::Arc<super::pipeline_state::PipeState>),
    /// An mbarrier's place, `element` elements into an `i64` shared tensor (`pipe.producer_get_barrier(state)`).
    Barrier(TensorVal, Int),
    /// `_` in a coordinate.
    Under,
    Unit,
    /// A host function's `stream` parameter (its index among the host's parameters): only named
    /// by a launch's `stream(s)` clause.
    Stream(usize),
}

impl Value {
    pub fn kind(&self) -> String {
        match self {
            Value::Int(i) if i.is_static() => "static integer".into(),
            Value::Int(_) => "i32".into(),
            Value::Scalar(s, _) => s.name().into(),
            Value::Float(_) => "float literal".into(),
            Value::Bool(_) => "bool".into(),
            Value::Tuple(_) => "tuple".into(),
            Value::Layout(_) => "layout".into(),
            Value::Swizzle(_) => "swizzle".into(),
            Value::Composed(_) => "swizzled layout".into(),
            Value::Tensor(t) => format!("{}", t.ty),
            Value::Counting { layout, .. } => format!("identity tensor {layout}"),
            Value::Frag(f, _) => format!("fragment<{}, {}>", f.elem.name(), f.shape),
            Value::Dim3(_) => "dim3".into(),
            Value::Type(_) => "type".into(),
            Value::Func(_) => "function".into(),
            Value::CopyAtom { .. } => "copy atom".into(),
            Value::TiledCopy { .. } => "tiled copy".into(),
            Value::ThrCopy { .. } => "thread slice of a tiled copy".into(),
            Value::MmaAtom(_) => "MMA atom".into(),
            Value::TiledMma(_) => "tiled MMA".into(),
            Value::ThrMma(..) => "thread slice of a tiled MMA".into(),
            Value::Str(_) => "string".into(),
            Value::SmemAllocator(_) => "shared-memory allocator".into(),
            Value::Pipeline(_) => "pipeline".into(),
            Value::PipeState(_) => "pipeline state".into(),
            Value::Barrier(..) => "mbarrier".into(),
            Value::Under => "`_`".into(),
            Value::Var(_, s) => format!("mut {}", s.name()),
            Value::Unit => "()".into(),
            Value::Stream(_) => "stream".into(),
        }
    }

    /// An integer tuple (shape, stride or coordinate) made of index integers.
    pub fn to_int_tuple(&self) -> Option<IntTuple> {
        match self {
            Value::Int(i) => Some(IntTuple::Int(i.clone())),
            Value::Tuple(items) => {
                items.iter().map(Value::to_int_tuple).collect::<Option<Vec<_>>>().map(IntTuple::Tuple)
            }
            _ => None,
        }
    }

    pub fn from_int_tuple(t: &IntTuple) -> Value {
        match t {
            IntTuple::Int(i) => Value::Int(i.clone()),
            IntTuple::Tuple(items) => Value::Tuple(items.iter().map(Value::from_int_tuple).collect()),
        }
    }
}

/// How `print` shows a value: as CuTe DSL prints at compile time, `?` for what is known only at run time.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Scalar(..) | Value::Frag(..) => f.write_str("?"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Tuple(items) => {
                f.write_str("(")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str(")")
            }
            Value::Layout(l) => write!(f, "{l}"),
            Value::Swizzle(s) => write!(f, "{s}"),
            Value::Composed(c) => write!(f, "{c}"),
            Value::Counting { layout, origin } => {
                let comps = origin
                    .to_arith_tuple(&layout.basis_paths())
                    .map(|t| t.to_string())
                    .unwrap_or_else(|_| origin.to_string());
                write!(f, "ArithTuple{comps} o {layout}")
            }
            Value::Tensor(t) => write!(
                f,
                "tensor<ptr<{}, {}, align<{}>> o {}>",
                t.ty.elem.name(),
                t.ty.space.name(),
                t.ty.align,
                t.ty.layout_text()
            ),
            Value::Dim3(n) => write!(f, "{n}"),
            Value::Type(s) => write!(f, "{}", s.name()),
            Value::Func(n) => write!(f, "{n}"),
            Value::CopyAtom { elem, bits, op: CopyOp::Universal } => {
                write!(f, "Copy_Atom<UniversalCopy<{bits}b>, {}>", elem.name())
            }
            Value::CopyAtom { elem, bits, op } => write!(f, "Copy_Atom<{}<{bits}b>, {}>", op.name(), elem.name()),
            Value::TiledCopy { tv, tile, .. } => write!(f, "TiledCopy(tile {tile}, TV {tv})"),
            Value::ThrCopy { tv, tile, tid, .. } => write!(f, "ThrCopy(thread {tid} of tile {tile}, TV {tv})"),
            Value::MmaAtom(a) => write!(f, "{a}"),
            Value::TiledMma(t) => write!(f, "{t}"),
            Value::ThrMma(slice) => write!(f, "ThrMMA(thread {} of {})", slice.1, slice.0),
            Value::Str(s) => f.write_str(s),
            Value::SmemAllocator(a) => write!(f, "SmemAllocator(next byte {})", a.next()),
            Value::Pipeline(p) => write!(f, "{p}"),
            Value::PipeState(s) => write!(f, "{s}"),
            Value::Barrier(_, offset) => write!(f, "mbarrier({offset})"),
            Value::Under => f.write_str("_"),
            Value::Var(..) => f.write_str("?"),
            Value::Unit => f.write_str("()"),
            Value::Stream(_) => f.write_str("stream"),
        }
    }
}
