//! Atomic operations on one memory element (PTX `atom` and its no-result form `red`): which
//! operation PTX has for which element type, under which name, and the scope and memory ordering
//! qualifiers. The front end refuses what this table lacks (at the call, with the reason); the
//! verifier checks the IR against it and the lowering spells the instruction from it.

use cute_abi::DType;

/// The read-modify-write an atomic builtin does (`atomic_add`, ..., `atomic_cas`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    Add,
    Min,
    Max,
    Exch,
    Cas,
    And,
    Or,
    Xor,
}

impl AtomicOp {
    pub const ALL: [AtomicOp; 8] = [
        AtomicOp::Add,
        AtomicOp::Min,
        AtomicOp::Max,
        AtomicOp::Exch,
        AtomicOp::Cas,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
    ];

    /// The PTX operation (`add`, `exch`, `cas`, ...), also the `kind` of the `cute.atomic` op.
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Add => "add",
            AtomicOp::Min => "min",
            AtomicOp::Max => "max",
            AtomicOp::Exch => "exch",
            AtomicOp::Cas => "cas",
            AtomicOp::And => "and",
            AtomicOp::Or => "or",
            AtomicOp::Xor => "xor",
        }
    }

    pub fn from_name(name: &str) -> Option<AtomicOp> {
        AtomicOp::ALL.into_iter().find(|o| o.name() == name)
    }

    /// The `.cute` builtin: `atomic_add`, ...
    pub fn builtin(self) -> &'static str {
        match self {
            AtomicOp::Add => "atomic_add",
            AtomicOp::Min => "atomic_min",
            AtomicOp::Max => "atomic_max",
            AtomicOp::Exch => "atomic_exch",
            AtomicOp::Cas => "atomic_cas",
            AtomicOp::And => "atomic_and",
            AtomicOp::Or => "atomic_or",
            AtomicOp::Xor => "atomic_xor",
        }
    }

    pub fn from_builtin(name: &str) -> Option<AtomicOp> {
        AtomicOp::ALL.into_iter().find(|o| o.builtin() == name)
    }

    /// The PTX type suffix of this operation on `elem` (`u32`, `s64`, `b32`, `f32`,
    /// `noftz.f16`, ...), or why PTX has no such atomic (with what to do instead).
    pub fn ptx_type(self, elem: DType) -> Result<&'static str, String> {
        use DType::*;
        let t = match (self, elem) {
            // `add` has .u32, .s32, .u64 (no .s64: the same bits as .u64), .f32, .f64 and the
            // 16-bit floats without subnormal flushing.
            (AtomicOp::Add, I32) => "s32",
            (AtomicOp::Add, U32) => "u32",
            (AtomicOp::Add, I64 | U64) => "u64",
            (AtomicOp::Add, F32) => "f32",
            (AtomicOp::Add, F64) => "f64",
            (AtomicOp::Add, F16) => "noftz.f16",
            (AtomicOp::Add, BF16) => "noftz.bf16",
            (AtomicOp::Min | AtomicOp::Max, I32) => "s32",
            (AtomicOp::Min | AtomicOp::Max, U32) => "u32",
            (AtomicOp::Min | AtomicOp::Max, I64) => "s64",
            (AtomicOp::Min | AtomicOp::Max, U64) => "u64",
            (AtomicOp::Min | AtomicOp::Max, F16 | BF16 | F32 | F64) => {
                return Err(format!("PTX has no scalar `atom.{}` on floating-point elements", self.name()))
            }
            (AtomicOp::Exch | AtomicOp::Cas, I32 | U32 | F32) => "b32",
            (AtomicOp::Exch | AtomicOp::Cas, I64 | U64 | F64) => "b64",
            (AtomicOp::And | AtomicOp::Or | AtomicOp::Xor, I32 | U32) => "b32",
            (AtomicOp::And | AtomicOp::Or | AtomicOp::Xor, I64 | U64) => "b64",
            (AtomicOp::And | AtomicOp::Or | AtomicOp::Xor, F16 | BF16 | F32 | F64) => {
                return Err(format!("`atom.{}` is a bitwise operation: PTX has it on integers only", self.name()))
            }
            (_, other) => {
                return Err(format!(
                    "PTX has no `atom.{}` on `{}` elements (atomics act on 32- and 64-bit elements{})",
                    self.name(),
                    other.name(),
                    if self == AtomicOp::Add { ", and `add` on f16 and bf16" } else { "" }
                ))
            }
        };
        Ok(t)
    }
}

/// The PTX type of `atom.add` on a packed pair of 16-bit floats (`let old = atomic_add(t[i], pair)`):
/// `noftz.f16x2` or `noftz.bf16x2` (sm_90), the lower-indexed element in the low half.
pub fn add_pair_ptx_type(elem: DType) -> Option<&'static str> {
    match elem {
        DType::F16 => Some("noftz.f16x2"),
        DType::BF16 => Some("noftz.bf16x2"),
        _ => None,
    }
}

/// The threads an atomic is atomic with respect to (PTX `.scope`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemScope {
    Cta,
    Cluster,
    Gpu,
    Sys,
}

impl MemScope {
    pub const ALL: [MemScope; 4] = [MemScope::Cta, MemScope::Cluster, MemScope::Gpu, MemScope::Sys];

    /// The `.cute` spelling, also PTX's qualifier without the dot.
    pub fn name(self) -> &'static str {
        match self {
            MemScope::Cta => "cta",
            MemScope::Cluster => "cluster",
            MemScope::Gpu => "gpu",
            MemScope::Sys => "sys",
        }
    }

    pub fn from_name(name: &str) -> Option<MemScope> {
        MemScope::ALL.into_iter().find(|s| s.name() == name)
    }

    /// LLVM's `syncscope` for the NVPTX target (`""` is the system scope).
    pub fn llvm_syncscope(self) -> &'static str {
        match self {
            MemScope::Cta => "block",
            MemScope::Cluster => "cluster",
            MemScope::Gpu => "device",
            MemScope::Sys => "",
        }
    }
}

/// The memory ordering of an atomic (PTX `.sem`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemOrder {
    Relaxed,
    Acquire,
    Release,
    AcqRel,
}

impl MemOrder {
    pub const ALL: [MemOrder; 4] = [MemOrder::Relaxed, MemOrder::Acquire, MemOrder::Release, MemOrder::AcqRel];

    /// The `.cute` spelling, also PTX's qualifier without the dot.
    pub fn name(self) -> &'static str {
        match self {
            MemOrder::Relaxed => "relaxed",
            MemOrder::Acquire => "acquire",
            MemOrder::Release => "release",
            MemOrder::AcqRel => "acq_rel",
        }
    }

    pub fn from_name(name: &str) -> Option<MemOrder> {
        MemOrder::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Whether `red` (no result) may carry it: PTX's `red` has `.relaxed` and `.release` only, so
    /// an acquiring atomic stays an `atom` whose result goes unused.
    pub fn allows_red(self) -> bool {
        matches!(self, MemOrder::Relaxed | MemOrder::Release)
    }

    /// LLVM's atomic orderings for a `cmpxchg` with this ordering: on success, and on failure
    /// (which may not release).
    pub fn llvm_cmpxchg(self) -> (&'static str, &'static str) {
        match self {
            MemOrder::Relaxed => ("monotonic", "monotonic"),
            MemOrder::Acquire => ("acquire", "acquire"),
            MemOrder::Release => ("release", "monotonic"),
            MemOrder::AcqRel => ("acq_rel", "acquire"),
        }
    }
}

/// The PTX instruction of one atomic on one element: `atom` (with result) or `red` (without; not
/// for exch and cas, which PTX's `red` lacks), the
/// ordering, the scope, the state space (`global` or `shared`) and the operation's type suffix.
/// The defaults (relaxed, gpu) are written out: the text says what the instruction does.
pub fn ptx_instruction(returns: bool, op: AtomicOp, ty: &str, scope: MemScope, order: MemOrder, space: &str) -> String {
    // `red` has no exch and no cas: they stay `atom`s whose result goes unused.
    let red = !returns && order.allows_red() && !matches!(op, AtomicOp::Exch | AtomicOp::Cas);
    let inst = if red { "red" } else { "atom" };
    format!("{inst}.{}.{}.{space}.{}.{ty}", order.name(), scope.name(), op.name())
}

/// How `atomic_add(tile, fragment)` adds a fragment into a global tile: `elems` contiguous
/// elements per `red{.sem}{.scope}.global.add.{ty}`, each operand register holding `per_reg` of
/// them (2 for the packed 16-bit pairs, low half first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RedFragment {
    pub elems: usize,
    pub ty: &'static str,
    pub per_reg: usize,
    /// The PTX ISA version the form needs (`major * 10 + minor`): 8.1 for the vector forms.
    pub ptx: Option<u32>,
    /// Whether the form is sm_90 only (the vector forms, and `bf16x2`).
    pub sm90: bool,
}

/// The widest `red` form for a fragment of `elem` into a tile holding `contiguous` contiguous,
/// aligned elements per access (`vector_width`), or why there is none.
pub fn red_fragment(elem: DType, contiguous: usize) -> Result<RedFragment, String> {
    let form = |elems, ty, per_reg, ptx, sm90| RedFragment { elems, ty, per_reg, ptx, sm90 };
    match (elem, contiguous) {
        (DType::F32, 4..) => Ok(form(4, "v4.f32", 1, Some(81), true)),
        (DType::F16, 8..) => Ok(form(8, "noftz.v4.f16x2", 2, Some(81), true)),
        (DType::BF16, 8..) => Ok(form(8, "noftz.v4.bf16x2", 2, Some(81), true)),
        (DType::F16, 2..) => Ok(form(2, "noftz.f16x2", 2, None, false)),
        (DType::BF16, 2..) => Ok(form(2, "noftz.bf16x2", 2, None, true)),
        (DType::F32, _) => Err(format!("`red.global.add.v4.f32` adds 4 contiguous, 16-byte-aligned f32 elements; the tile is proven to hold {contiguous} per access")),
        (DType::F16 | DType::BF16, _) => Err(format!("`red.global.add.noftz.{}x2` adds pairs of contiguous, 4-byte-aligned elements; the tile is proven to hold {contiguous} per access", elem.name())),
        _ => Err(format!("the fragment `red` adds f32, f16 and bf16 elements, not {}", elem.name())),
    }
}

/// [`red_fragment`] for a tile of `elem` laid out as `layout` from a base aligned to `align` bytes.
pub fn red_fragment_for(elem: DType, layout: &crate::Layout, align: u32) -> Result<RedFragment, String> {
    let contiguous = crate::vector_width(layout, align, elem.size_bytes()).unwrap_or(1) as usize;
    red_fragment(elem, contiguous)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for op in AtomicOp::ALL {
            assert_eq!(AtomicOp::from_name(op.name()), Some(op));
            assert_eq!(AtomicOp::from_builtin(op.builtin()), Some(op));
        }
        for s in MemScope::ALL {
            assert_eq!(MemScope::from_name(s.name()), Some(s));
        }
        for o in MemOrder::ALL {
            assert_eq!(MemOrder::from_name(o.name()), Some(o));
        }
    }

    #[test]
    fn ptx_types_follow_the_isa() {
        assert_eq!(AtomicOp::Add.ptx_type(DType::I64), Ok("u64"));
        assert_eq!(AtomicOp::Max.ptx_type(DType::I64), Ok("s64"));
        assert_eq!(AtomicOp::Min.ptx_type(DType::U32), Ok("u32"));
        assert_eq!(AtomicOp::Exch.ptx_type(DType::F32), Ok("b32"));
        assert_eq!(AtomicOp::Add.ptx_type(DType::BF16), Ok("noftz.bf16"));
        assert!(AtomicOp::Max.ptx_type(DType::F32).unwrap_err().contains("floating-point"));
        assert!(AtomicOp::Or.ptx_type(DType::F64).unwrap_err().contains("integers only"));
        assert!(AtomicOp::Exch.ptx_type(DType::F16).is_err());
        assert!(AtomicOp::Add.ptx_type(DType::I8).is_err());
        assert!(AtomicOp::Add.ptx_type(DType::Bool).is_err());
        assert_eq!(add_pair_ptx_type(DType::F16), Some("noftz.f16x2"));
        assert_eq!(add_pair_ptx_type(DType::BF16), Some("noftz.bf16x2"));
        assert_eq!(add_pair_ptx_type(DType::F32), None);
    }

    #[test]
    fn unused_results_become_red_where_ptx_has_it() {
        let text = |returns, op, order| ptx_instruction(returns, op, "u32", MemScope::Gpu, order, "global");
        assert_eq!(text(false, AtomicOp::Add, MemOrder::Relaxed), "red.relaxed.gpu.global.add.u32");
        assert_eq!(text(false, AtomicOp::Add, MemOrder::Release), "red.release.gpu.global.add.u32");
        assert_eq!(text(false, AtomicOp::Add, MemOrder::Acquire), "atom.acquire.gpu.global.add.u32");
        assert_eq!(text(true, AtomicOp::Or, MemOrder::AcqRel), "atom.acq_rel.gpu.global.or.u32");
        assert_eq!(text(false, AtomicOp::Cas, MemOrder::Relaxed), "atom.relaxed.gpu.global.cas.u32");
        assert_eq!(text(false, AtomicOp::Exch, MemOrder::Relaxed), "atom.relaxed.gpu.global.exch.u32");
    }
}
