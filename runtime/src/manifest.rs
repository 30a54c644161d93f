//! The manifest cutec embeds in every cubin: what kernels and host functions
//! the module holds, each parameter's type, the launch conditions, and each
//! host function's launch plan, so that the runtime can list them, check
//! launches against them and call host functions.
//!
//! # Where it lives
//!
//! cutec emits a global `__cutec_manifest` (a byte array with external
//! linkage in the global address space) into the kernel module; ptxas keeps
//! it, with its initializer, as an `OBJECT` symbol in `.nv.global.init`. The
//! runtime reads it from the cubin bytes by walking the ELF symbol table
//! ([`crate::elf`]) on the host: no driver, no GPU, no companion file.
//!
//! # Format (version 1)
//!
//! UTF-8 text, one record per line, fields separated by single spaces,
//! attributes written `key=value`:
//!
//! ```text
//! cutec-manifest 1
//! arch sm_90
//! kernel vector_add
//! param a tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1
//! param b tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1
//! param n scalar elem=i32
//! end
//! ```
//!
//! * `cutec-manifest MAJOR` is the first line. A reader accepts its own major
//!   version; a larger one is refused with a readable error.
//! * `kernel NAME` opens a kernel, `end` closes it; `param NAME KIND ...` lines
//!   inside give the parameters in declaration (= ABI) order.
//! * `tensor` params: `elem` (element type, cutec's scalar names), `space`
//!   (`gmem`/`smem`/`rmem`), `align` (bytes the base pointer must be aligned
//!   to), `rank` (top-level modes), `shape`/`stride` in CuTe notation with
//!   `?` for a dynamic entry (`(?,8)`, `((2,?),8)`).
//! * `scalar` params: `elem`.
//! * `smem BYTES` in a kernel block: the dynamic shared memory every launch must provide (the
//!   kernel's shared-memory tensors, when they exceed the 48 KiB static limit), in
//!   [`KernelSig::dynamic_smem_bytes`]; checked launches giving less are refused. A malformed
//!   value fails the manifest.
//! * `fastdiv EXPR` in a kernel block (version 3): the kernel divides its index math by `EXPR`
//!   (over its `$k`) with a multiplier and a shift, two `u32` parameters per line after its
//!   declared ones, in line order ([`KernelSig::fast_divisors`], [`crate::fastdiv`]). A malformed
//!   line fails the manifest.
//! * `cluster X Y Z` in a kernel block (version 5): the kernel was compiled for thread-block
//!   clusters of X x Y x Z blocks (PTX `.reqnctapercluster`), in [`KernelSig::cluster`]; every
//!   launch path refuses a grid that is not a multiple of it in each dimension
//!   ([`KernelSig::check_cluster`]). A malformed line fails the manifest.
//! * Forward compatibility: unknown record kinds and unknown `key=value`
//!   attributes are ignored, so later versions can add records without
//!   breaking old readers. A `host` block is parsed into
//!   [`Manifest::hosts`] ([`HostSig`]) with its params and its launch plan
//!   (`launch KERNEL` ... `endlaunch` blocks, see [`crate::plan`]). A
//!   malformed plan does not make the manifest unreadable: it is recorded in
//!   [`HostSig::plan_error`] and only calling that host function fails.

use std::fmt;
use std::path::Path;

use crate::elf;
use crate::error::{Result, RuntimeError};
pub use crate::plan::{Assert, Cond, HostSig, HostStep, LaunchPlan, Require};

/// The symbol cutec stores the manifest in.
pub const MANIFEST_SYMBOL: &str = "__cutec_manifest";
/// The newest manifest major version this reader understands. Version 2 is version 1 plus run-time
/// `if` ... `endif` in host blocks; cutec writes it only for modules whose host functions branch,
/// so that an older runtime refuses them rather than carrying out every branch. Version 3 adds
/// `fastdiv` lines to kernel blocks: such a kernel takes two parameters per line that an older
/// runtime would not pass; cutec writes it only for modules with such a kernel. Version 4 adds
/// `tma` lines (TMA tensor maps, 128-byte parameters after those, [`crate::tma`]). Version 5 adds
/// `cluster` lines (a kernel's thread-block cluster shape): an older runtime would launch grids
/// that are not whole clusters, which the driver refuses with an error that names neither.
/// Version 6 adds run-time loops to host blocks (`for` ... `endfor`, `break`, `continue`): an older
/// runtime would make a loop body's launches once, with the loop variable unbound. Version 7 adds
/// `store=1` to `tma` lines: an older runtime would not refuse a tensor whose rows end inside a
/// 16-byte chunk, which a TMA store writes whole.
pub const MANIFEST_VERSION: u32 = 7;

/// Element types (cutec's scalar type names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum DType {
    I8 = 1,
    I16 = 2,
    I32 = 3,
    I64 = 4,
    U8 = 5,
    U16 = 6,
    U32 = 7,
    U64 = 8,
    F16 = 9,
    BF16 = 10,
    TF32 = 11,
    F32 = 12,
    F64 = 13,
    F8E4M3 = 14,
    F8E5M2 = 15,
    Bool = 16,
}

impl DType {
    /// Every element type; the C ABI code of `ALL[i]` is `i + 1`.
    pub const ALL: [DType; 16] = [
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F16,
        DType::BF16,
        DType::TF32,
        DType::F32,
        DType::F64,
        DType::F8E4M3,
        DType::F8E5M2,
        DType::Bool,
    ];

    /// The `.cute` name (`f32`, `bf16`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::TF32 => "tf32",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::F8E4M3 => "f8e4m3",
            DType::F8E5M2 => "f8e5m2",
            DType::Bool => "bool",
        }
    }

    /// Parses a `.cute` type name.
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The C ABI code (`CUTE_DTYPE_*` in `cute_runtime.h`).
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The type with C ABI code `code`.
    pub fn from_code(code: i32) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.code() == code)
    }

    /// The values of an integer type (bool: 0 and 1), inclusive; `None` for floating types.
    pub fn integer_range(self) -> Option<(i128, i128)> {
        Some(match self {
            DType::I8 => (i8::MIN.into(), i8::MAX.into()),
            DType::I16 => (i16::MIN.into(), i16::MAX.into()),
            DType::I32 => (i32::MIN.into(), i32::MAX.into()),
            DType::I64 => (i64::MIN.into(), i64::MAX.into()),
            DType::U8 => (0, u8::MAX.into()),
            DType::U16 => (0, u16::MAX.into()),
            DType::U32 => (0, u32::MAX.into()),
            DType::U64 => (0, u64::MAX.into()),
            DType::Bool => (0, 1),
            _ => return None,
        })
    }

    /// Storage size in bytes (tf32 is stored in 32 bits).
    pub fn size_bytes(self) -> u32 {
        match self {
            DType::I8 | DType::U8 | DType::F8E4M3 | DType::F8E5M2 | DType::Bool => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 | DType::TF32 => 4,
            DType::I64 | DType::U64 | DType::F64 => 8,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Memory space of a tensor parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// Global memory: the only space a host can pass.
    Gmem,
    /// Shared memory.
    Smem,
    /// Registers.
    Rmem,
}

impl Space {
    /// `gmem`, `smem` or `rmem`.
    pub fn name(self) -> &'static str {
        match self {
            Space::Gmem => "gmem",
            Space::Smem => "smem",
            Space::Rmem => "rmem",
        }
    }
    fn from_name(s: &str) -> Option<Space> {
        [Space::Gmem, Space::Smem, Space::Rmem].into_iter().find(|m| m.name() == s)
    }
}

/// A CuTe integer tuple whose leaves are static (`Some`) or dynamic (`None`, `?`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IntTuple {
    /// One entry.
    Leaf(Option<i64>),
    /// A nested tuple.
    Node(Vec<IntTuple>),
}

impl IntTuple {
    /// The leaves in flattened (left to right) order.
    pub fn leaves(&self) -> Vec<Option<i64>> {
        let mut v = Vec::new();
        self.push_leaves(&mut v);
        v
    }

    fn push_leaves(&self, out: &mut Vec<Option<i64>>) {
        match self {
            IntTuple::Leaf(e) => out.push(*e),
            IntTuple::Node(items) => items.iter().for_each(|t| t.push_leaves(out)),
        }
    }

    /// Number of top-level modes (an integer has rank 1).
    pub fn rank(&self) -> usize {
        match self {
            IntTuple::Leaf(_) => 1,
            IntTuple::Node(items) => items.len(),
        }
    }

    /// Parses CuTe notation: `?`, `8`, `(?,8)`, `((2,?),8)`; a dynamic leaf may carry its
    /// divisibility, `?{div=8}` (see [`IntTuple::parse_with_div`]).
    pub fn parse(text: &str) -> Option<IntTuple> {
        IntTuple::parse_with_div(text).map(|(t, _)| t)
    }

    /// [`IntTuple::parse`], also returning each leaf's divisor in flattened order: `N` for
    /// `?{div=N}` (the value is known to be a multiple of N), 1 for other leaves.
    pub fn parse_with_div(text: &str) -> Option<(IntTuple, Vec<i64>)> {
        let b = text.as_bytes();
        let mut pos = 0;
        let mut divs = Vec::new();
        let t = parse_tuple(b, &mut pos, 0, &mut divs)?;
        (pos == b.len()).then_some((t, divs))
    }
}

fn parse_tuple(b: &[u8], pos: &mut usize, depth: usize, divs: &mut Vec<i64>) -> Option<IntTuple> {
    if depth > 64 {
        return None;
    }
    match *b.get(*pos)? {
        b'?' => {
            *pos += 1;
            let mut div = 1;
            if b.get(*pos) == Some(&b'{') {
                let rest = b.get(*pos..)?;
                let end = rest.iter().position(|&c| c == b'}')?;
                let inner = std::str::from_utf8(&rest[1..end]).ok()?;
                div = inner.strip_prefix("div=")?.parse::<i64>().ok().filter(|&d| d > 0)?;
                *pos += end + 1;
            }
            divs.push(div);
            Some(IntTuple::Leaf(None))
        }
        b'(' => {
            *pos += 1;
            let mut items = Vec::new();
            loop {
                items.push(parse_tuple(b, pos, depth + 1, divs)?);
                match *b.get(*pos)? {
                    b',' => *pos += 1,
                    b')' => {
                        *pos += 1;
                        break;
                    }
                    _ => return None,
                }
            }
            Some(if items.len() == 1 { items.pop()? } else { IntTuple::Node(items) })
        }
        b'0'..=b'9' => {
            let start = *pos;
            while b.get(*pos).is_some_and(u8::is_ascii_digit) {
                *pos += 1;
            }
            divs.push(1);
            std::str::from_utf8(&b[start..*pos]).ok()?.parse().ok().map(|v| IntTuple::Leaf(Some(v)))
        }
        _ => None,
    }
}

impl fmt::Display for IntTuple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntTuple::Leaf(Some(v)) => write!(f, "{v}"),
            IntTuple::Leaf(None) => f.write_str("?"),
            IntTuple::Node(items) => {
                f.write_str("(")?;
                for (i, t) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// A tensor parameter's type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSig {
    /// Element type.
    pub elem: DType,
    /// Memory space.
    pub space: Space,
    /// Required alignment of the base pointer, bytes.
    pub align: u32,
    /// Shape, CuTe notation.
    pub shape: IntTuple,
    /// Stride, CuTe notation (congruent with `shape`).
    pub stride: IntTuple,
    /// `shape.leaves()`, cached.
    pub shape_leaves: Vec<Option<i64>>,
    /// `stride.leaves()`, cached.
    pub stride_leaves: Vec<Option<i64>>,
    /// Per shape leaf, a divisor its value must be a multiple of (`?{div=N}`; 1 = none).
    pub shape_div: Vec<i64>,
    /// Per stride leaf, likewise.
    pub stride_div: Vec<i64>,
}

impl TensorSig {
    /// Top-level modes.
    pub fn rank(&self) -> usize {
        self.shape.rank()
    }
    /// Number of kernel-ABI values this tensor passes: pointer + dynamic entries.
    pub fn abi_len(&self) -> usize {
        1 + self.shape_leaves.iter().chain(&self.stride_leaves).filter(|e| e.is_none()).count()
    }
}

/// Writes `t` with `?{div=N}` on dynamic leaves whose divisor (from `divs`, flattened order) is > 1.
fn write_tuple_div(f: &mut fmt::Formatter<'_>, t: &IntTuple, divs: &mut std::slice::Iter<'_, i64>) -> fmt::Result {
    match t {
        IntTuple::Leaf(Some(v)) => {
            divs.next();
            write!(f, "{v}")
        }
        IntTuple::Leaf(None) => match divs.next() {
            Some(&d) if d > 1 => write!(f, "?{{div={d}}}"),
            _ => f.write_str("?"),
        },
        IntTuple::Node(items) => {
            f.write_str("(")?;
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(",")?;
                }
                write_tuple_div(f, x, divs)?;
            }
            f.write_str(")")
        }
    }
}

impl fmt::Display for TensorSig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tensor<{}, {}, ", self.elem, self.space.name())?;
        write_tuple_div(f, &self.shape, &mut self.shape_div.iter())?;
        f.write_str(":")?;
        write_tuple_div(f, &self.stride, &mut self.stride_div.iter())?;
        write!(f, ", align: {}>", self.align)
    }
}

/// What a parameter is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// A tensor: pointer, dynamic shape entries, dynamic stride entries.
    Tensor(TensorSig),
    /// A scalar passed by value.
    Scalar(DType),
    /// A host function's CUDA stream (`param NAME stream`): no `$k`, not passed to kernels;
    /// launches with a `stream P` line go to it.
    Stream,
}

/// One parameter of a kernel or host function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamSig {
    /// The name in the `.cute` source.
    pub name: String,
    /// Its type.
    pub kind: ParamKind,
}

impl fmt::Display for ParamSig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ParamKind::Tensor(t) => write!(f, "{}: {t}", self.name),
            ParamKind::Scalar(d) => write!(f, "{}: {d}", self.name),
            ParamKind::Stream => write!(f, "{}: stream", self.name),
        }
    }
}

/// A kernel (or host function) signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelSig {
    /// Entry name (the cubin symbol for kernels).
    pub name: String,
    /// Parameters in declaration order.
    pub params: Vec<ParamSig>,
    /// Launch conditions over the kernel's dynamic ABI values (`require` lines), checked by
    /// checked launches.
    pub requires: Vec<Require>,
    /// Bytes of dynamic shared memory every launch must provide (`smem N`: the kernel's
    /// shared-memory tensors when they exceed the 48 KiB static limit; 0 when the line is absent).
    /// Launches giving less are refused ([`KernelSig::check_dynamic_smem`]).
    pub dynamic_smem_bytes: u32,
    /// The run-time divisors of the kernel's index math (`fastdiv` lines, over its `$k`): each
    /// adds two `u32` parameters after the declared ones, its multiplier and shift, which every
    /// launch path computes ([`crate::fastdiv`]).
    pub fast_divisors: Vec<crate::plan::Expr>,
    /// The TMA tensor maps the kernel takes after its fast divisors (`tma` lines): 128-byte
    /// parameters every launch encodes from a tensor argument ([`crate::tma`]).
    pub tmas: Vec<crate::tma::TmaSig>,
    /// The thread-block cluster shape the kernel was compiled for (`cluster X Y Z`; `[1, 1, 1]`
    /// when the line is absent): its grids must be whole clusters ([`KernelSig::check_cluster`]).
    pub cluster: [u32; 3],
}

impl KernelSig {
    /// Refuses a launch giving `given` bytes of dynamic shared memory when the kernel needs more
    /// (its `smem N` line): the kernel places its shared-memory tensors in the dynamic shared
    /// memory, so a smaller amount would make it access shared memory out of range. A pure check
    /// (no driver call): `Err(RuntimeError::InvalidLaunch)`.
    pub fn check_dynamic_smem(&self, given: u32) -> Result<()> {
        if given < self.dynamic_smem_bytes {
            return Err(RuntimeError::InvalidLaunch(format!(
                "kernel `{}` needs {} B of dynamic shared memory (its shared-memory tensors), the launch gives {given} B",
                self.name, self.dynamic_smem_bytes
            )));
        }
        Ok(())
    }

    /// Refuses a grid that is not a multiple of the kernel's cluster shape in every dimension:
    /// the kernel is compiled for clusters of that shape (`.reqnctapercluster`), which must tile
    /// the grid. A pure check (no driver call): `Err(RuntimeError::InvalidLaunch)`.
    pub fn check_cluster(&self, grid: (u32, u32, u32)) -> Result<()> {
        let g = [grid.0, grid.1, grid.2];
        if g.iter().zip(self.cluster).any(|(g, c)| c == 0 || g % c != 0) {
            let [cx, cy, cz] = self.cluster;
            return Err(RuntimeError::InvalidLaunch(format!(
                "kernel `{}` runs in thread-block clusters of ({cx}, {cy}, {cz}) blocks, but the grid ({}, {}, {}) is not a multiple of that in every dimension",
                self.name, g[0], g[1], g[2]
            )));
        }
        Ok(())
    }

    /// The kernel-ABI parameter list as text: `(u64 a, i32 a.shape[0], ...)`.
    pub fn abi(&self) -> String {
        let mut out = Vec::new();
        for p in &self.params {
            match &p.kind {
                ParamKind::Scalar(d) => out.push(format!("{d} {}", p.name)),
                ParamKind::Stream => {}
                ParamKind::Tensor(t) => {
                    out.push(format!("u64 {}", p.name));
                    for (i, e) in t.shape_leaves.iter().enumerate() {
                        if e.is_none() {
                            out.push(format!("i32 {}.shape[{i}]", p.name));
                        }
                    }
                    for (i, e) in t.stride_leaves.iter().enumerate() {
                        if e.is_none() {
                            out.push(format!("i32 {}.stride[{i}]", p.name));
                        }
                    }
                }
            }
        }
        for i in 0..self.fast_divisors.len() {
            out.push(format!("u32 fastdiv[{i}].multiplier"));
            out.push(format!("u32 fastdiv[{i}].shift"));
        }
        for t in &self.tmas {
            out.push(format!("tmap {}[128]", self.params[t.param].name));
        }
        format!("({})", out.join(", "))
    }
}

impl fmt::Display for KernelSig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let params: Vec<String> = self.params.iter().map(ToString::to_string).collect();
        write!(f, "{}({})", self.name, params.join(", "))
    }
}

/// A parsed manifest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    /// The major version (`cutec-manifest N`).
    pub version: u32,
    /// Target architecture (`sm_90`), when given.
    pub arch: Option<String>,
    /// Kernels in source order.
    pub kernels: Vec<KernelSig>,
    /// Host functions with their launch plans, in source order.
    pub hosts: Vec<HostSig>,
    /// The text it was parsed from.
    pub text: String,
}

fn perr(line: usize, why: impl fmt::Display) -> RuntimeError {
    RuntimeError::InvalidImage(format!("cutec manifest line {line}: {why}"))
}

fn parse_param(line_no: usize, fields: &[&str]) -> Result<ParamSig> {
    let name = fields.get(1).ok_or_else(|| perr(line_no, "`param` without a name"))?.to_string();
    let kind = *fields.get(2).ok_or_else(|| perr(line_no, format!("param `{name}` without a kind")))?;
    let attr = |key: &str| fields[3..].iter().find_map(|f| f.strip_prefix(key).and_then(|r| r.strip_prefix('=')));
    let need = |key: &str| attr(key).ok_or_else(|| perr(line_no, format!("param `{name}`: missing `{key}=`")));
    let elem_of = |s: &str| {
        DType::from_name(s).ok_or_else(|| perr(line_no, format!("param `{name}`: unknown element type `{s}`")))
    };
    let kind = match kind {
        "scalar" => ParamKind::Scalar(elem_of(need("elem")?)?),
        "stream" => ParamKind::Stream,
        "tensor" => {
            let elem = elem_of(need("elem")?)?;
            let space_s = need("space")?;
            let space = Space::from_name(space_s)
                .ok_or_else(|| perr(line_no, format!("param `{name}`: unknown space `{space_s}`")))?;
            let align_s = need("align")?;
            let align: u32 = align_s
                .parse()
                .ok()
                .filter(|a: &u32| a.is_power_of_two())
                .ok_or_else(|| perr(line_no, format!("param `{name}`: bad align `{align_s}`")))?;
            let tuple = |key: &str| -> Result<(IntTuple, Vec<i64>)> {
                let s = need(key)?;
                IntTuple::parse_with_div(s).ok_or_else(|| perr(line_no, format!("param `{name}`: bad {key} `{s}`")))
            };
            let (shape, shape_div) = tuple("shape")?;
            let (stride, stride_div) = tuple("stride")?;
            let shape_leaves = shape.leaves();
            let stride_leaves = stride.leaves();
            if shape_leaves.len() != stride_leaves.len() || shape.rank() != stride.rank() {
                return Err(perr(
                    line_no,
                    format!("param `{name}`: shape {shape} and stride {stride} are not congruent"),
                ));
            }
            if let Some(r) = attr("rank") {
                if r.parse::<usize>().ok() != Some(shape.rank()) {
                    return Err(perr(
                        line_no,
                        format!("param `{name}`: rank={r} but shape {shape} has rank {}", shape.rank()),
                    ));
                }
            }
            ParamKind::Tensor(TensorSig {
                elem,
                space,
                align,
                shape,
                stride,
                shape_leaves,
                stride_leaves,
                shape_div,
                stride_div,
            })
        }
        other => return Err(perr(line_no, format!("param `{name}`: unknown kind `{other}`"))),
    };
    Ok(ParamSig { name, kind })
}

/// A block of a host plan the reader has opened and not closed yet.
#[derive(Debug)]
enum Block {
    /// An `if` (its step index) and its `else` once read.
    If { at: usize, els: Option<usize> },
    /// A `for` (its step index) and the `break`/`continue` steps inside it, whose targets are
    /// set when it closes.
    For { at: usize, jumps: Vec<usize> },
}

/// One `if COND`, `else`, `endif`, `for $K | START | END | STEP`, `endfor`, `break` or `continue`
/// record of a host block: appends the step, keeps `open` (the blocks not closed yet) and sets the
/// jump targets when a block closes. Blocks nest: an `endif` closes an `if`, an `endfor` a `for`,
/// and `break`/`continue` belong to the innermost `for`.
fn branch_record(h: &mut HostSig, open: &mut Vec<Block>, kw: &str, rest: &str) -> std::result::Result<(), String> {
    let here = h.steps.len();
    if !matches!(kw, "if" | "for") && !rest.trim().is_empty() {
        return Err(format!("`{kw}` takes nothing, found `{}`", rest.trim()));
    }
    match kw {
        "if" => {
            let cond = crate::plan::Cond::parse(rest).map_err(|e| format!("`if`: {e}"))?;
            h.steps.push(HostStep::If { cond, else_at: here + 1 });
            open.push(Block::If { at: here, els: None });
        }
        "else" => {
            let Some(Block::If { at, els }) = open.last_mut() else { return Err("`else` without `if`".into()) };
            if els.is_some() {
                return Err("a second `else` for one `if`".into());
            }
            *els = Some(here);
            if let Some(HostStep::If { else_at, .. }) = h.steps.get_mut(*at) {
                *else_at = here + 1;
            }
            h.steps.push(HostStep::Else { end_at: here + 1 });
        }
        "endif" => {
            let Some(Block::If { at, els }) = open.pop() else {
                return Err(if open.is_empty() {
                    "`endif` without `if`".into()
                } else {
                    "`endif` closes a `for` (expected `endfor`)".into()
                });
            };
            match els {
                Some(e) => {
                    if let Some(HostStep::Else { end_at }) = h.steps.get_mut(e) {
                        *end_at = here;
                    }
                }
                None => {
                    if let Some(HostStep::If { else_at, .. }) = h.steps.get_mut(at) {
                        *else_at = here;
                    }
                }
            }
            h.steps.push(HostStep::EndIf);
        }
        "for" => {
            let (var, start, end, step) = parse_for(rest).map_err(|e| format!("`for`: {e}"))?;
            h.steps.push(HostStep::For { var, start, end, step, end_at: here + 1 });
            open.push(Block::For { at: here, jumps: Vec::new() });
        }
        "endfor" => {
            let Some(Block::For { at, jumps }) = open.pop() else {
                return Err(if open.is_empty() {
                    "`endfor` without `for`".into()
                } else {
                    "`endfor` closes an `if` (expected `endif`)".into()
                });
            };
            if let Some(HostStep::For { end_at, .. }) = h.steps.get_mut(at) {
                *end_at = here + 1;
            }
            for j in jumps {
                match h.steps.get_mut(j) {
                    Some(HostStep::Break { end_at }) => *end_at = here + 1,
                    Some(HostStep::Continue { endfor_at }) => *endfor_at = here,
                    _ => {}
                }
            }
            h.steps.push(HostStep::EndFor { for_at: at });
        }
        _ => {
            // `break` / `continue`: of the innermost `for`, through any `if`s inside it.
            let Some(jumps) = open.iter_mut().rev().find_map(|b| match b {
                Block::For { jumps, .. } => Some(jumps),
                Block::If { .. } => None,
            }) else {
                return Err(format!("`{kw}` outside a `for`"));
            };
            jumps.push(here);
            h.steps.push(if kw == "break" {
                HostStep::Break { end_at: here + 1 }
            } else {
                HostStep::Continue { endfor_at: here }
            });
        }
    }
    Ok(())
}

/// The fields after `for`: `$K | START | END | STEP`.
fn parse_for(
    rest: &str,
) -> std::result::Result<(usize, crate::plan::Expr, crate::plan::Expr, crate::plan::Expr), String> {
    let p: Vec<&str> = rest.split('|').map(str::trim).collect();
    let [var, start, end, step] = p[..] else {
        return Err(format!("expected `for $K | START | END | STEP`, found `for {}`", rest.trim()));
    };
    let var = var
        .strip_prefix('$')
        .and_then(|k| k.parse::<usize>().ok())
        .ok_or_else(|| format!("the loop variable must be `$K`, found `{var}`"))?;
    let e = |what: &str, t: &str| crate::plan::Expr::parse(t).map_err(|err| format!("{what}: {err}"));
    Ok((var, e("start", start)?, e("end", end)?, e("step", step)?))
}

impl Manifest {
    /// Parses manifest text.
    pub fn parse(text: &str) -> Result<Manifest> {
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim_end_matches('\r')));
        let (_, first) = lines.next().ok_or_else(|| perr(1, "empty manifest"))?;
        let version = first
            .strip_prefix("cutec-manifest ")
            .and_then(|v| v.trim().parse::<u32>().ok())
            .ok_or_else(|| perr(1, format!("expected `cutec-manifest VERSION`, found `{first}`")))?;
        if version > MANIFEST_VERSION {
            return Err(perr(
                1,
                format!("manifest version {version} is newer than this runtime understands ({MANIFEST_VERSION}); update cute-runtime"),
            ));
        }
        let mut m = Manifest { version, text: text.to_string(), ..Manifest::default() };
        // The open block: a kernel, or a host (with its open `launch`, if any).
        enum Open {
            Kernel(KernelSig),
            /// A host, its open `launch`, and its open `if`s and `for`s.
            Host(HostSig, Option<LaunchPlan>, Vec<Block>),
        }
        let mut open: Option<Open> = None;
        // Whether the open kernel block had its `smem` line.
        let mut smem_seen = false;
        for (no, line) in lines {
            let fields: Vec<&str> = line.split(' ').filter(|f| !f.is_empty()).collect();
            // Inside `launch ... endlaunch`: plan records. A malformed record marks the host's
            // plan unusable instead of failing the whole manifest.
            if let Some(Open::Host(h, Some(l), _)) = &mut open {
                if fields.first() == Some(&"endlaunch") {
                    if let Some(Open::Host(h, Some(l), _)) = &mut open {
                        h.steps.push(HostStep::Launch(h.launches.len()));
                        h.launches.push(std::mem::replace(l, LaunchPlan::new("")));
                    }
                    if let Some(Open::Host(_, l, _)) = &mut open {
                        *l = None;
                    }
                    continue;
                }
                if matches!(
                    fields.first().copied(),
                    Some(
                        "end"
                            | "kernel"
                            | "host"
                            | "launch"
                            | "if"
                            | "else"
                            | "endif"
                            | "for"
                            | "endfor"
                            | "break"
                            | "continue"
                    )
                ) {
                    let what = format!("line {no}: `launch {}` is not closed with `endlaunch`", l.kernel);
                    h.plan_error.get_or_insert(what);
                    if let Some(Open::Host(_, l, _)) = &mut open {
                        *l = None;
                    }
                } else {
                    if let Err(e) = l.parse_line(&fields.join(" ")) {
                        h.plan_error.get_or_insert(format!("line {no}: {e}"));
                    }
                    continue;
                }
            }
            match fields.first().copied() {
                None => {}
                Some("arch") => m.arch = fields.get(1).map(|s| s.to_string()),
                Some(kw @ ("kernel" | "host")) => {
                    if let Some(o) = &open {
                        let name = match o {
                            Open::Kernel(k) => &k.name,
                            Open::Host(h, _, _) => &h.name,
                        };
                        return Err(perr(no, format!("`{kw}` inside `{name}` (missing `end`)")));
                    }
                    let name = fields.get(1).ok_or_else(|| perr(no, format!("`{kw}` without a name")))?;
                    smem_seen = false;
                    open = Some(if kw == "host" {
                        Open::Host(HostSig::new(name), None, Vec::new())
                    } else {
                        Open::Kernel(KernelSig {
                            name: name.to_string(),
                            params: Vec::new(),
                            requires: Vec::new(),
                            dynamic_smem_bytes: 0,
                            fast_divisors: Vec::new(),
                            tmas: Vec::new(),
                            cluster: [1, 1, 1],
                        })
                    });
                }
                Some("param") => match &mut open {
                    Some(Open::Kernel(k)) => {
                        let p = parse_param(no, &fields)?;
                        // A kernel has no stream in its ABI: such a manifest cannot be launched right.
                        if p.kind == ParamKind::Stream {
                            return Err(perr(
                                no,
                                format!(
                                    "kernel `{}`: parameter `{}` is a stream, which only host functions take",
                                    k.name, p.name
                                ),
                            ));
                        }
                        k.params.push(p)
                    }
                    Some(Open::Host(h, _, _)) => h.params.push(parse_param(no, &fields)?),
                    None => return Err(perr(no, "`param` outside a kernel")),
                },
                Some("require") => {
                    let rest = line.trim_start().strip_prefix("require").unwrap_or("");
                    match (&mut open, Require::parse(rest)) {
                        (Some(Open::Kernel(k)), Ok(r)) => k.requires.push(r),
                        // Inside an `if`: checked only when the branch is taken.
                        (Some(Open::Host(h, _, ifs)), Ok(r)) if !ifs.is_empty() => h.steps.push(HostStep::Require(r)),
                        (Some(Open::Host(h, _, _)), Ok(r)) => h.requires.push(r),
                        // A kernel condition the reader cannot parse must not be skipped.
                        (Some(Open::Kernel(k)), Err(e)) => return Err(perr(no, format!("kernel `{}`: {e}", k.name))),
                        (Some(Open::Host(h, _, _)), Err(e)) => {
                            h.plan_error.get_or_insert(format!("line {no}: {e}"));
                        }
                        (None, _) => {}
                    }
                }
                Some("assert") => {
                    let rest = line.trim_start().strip_prefix("assert").unwrap_or("");
                    match (&mut open, Assert::parse(rest)) {
                        (Some(Open::Host(h, _, ifs)), Ok(a)) if !ifs.is_empty() => h.steps.push(HostStep::Assert(a)),
                        (Some(Open::Host(h, _, _)), Ok(a)) => h.asserts.push(a),
                        (Some(Open::Host(h, _, _)), Err(e)) => {
                            h.plan_error.get_or_insert(format!("line {no}: {e}"));
                        }
                        // Kernels have no `assert` lines; one this reader does not know how to
                        // check must not be skipped.
                        (Some(Open::Kernel(k)), _) => {
                            return Err(perr(
                                no,
                                format!("kernel `{}`: `assert` lines are not supported in kernel blocks", k.name),
                            ))
                        }
                        (None, _) => {}
                    }
                }
                Some("print") => {
                    if let Some(Open::Host(h, _, _)) = &mut open {
                        let rest = line.trim_start().strip_prefix("print").unwrap_or("");
                        match crate::plan::parse_print(rest) {
                            Ok(segs) => h.steps.push(HostStep::Print(segs)),
                            Err(e) => {
                                h.plan_error.get_or_insert(format!("line {no}: {e}"));
                            }
                        }
                    }
                }
                // A kernel's dynamic shared memory; outside a kernel block (in a host block, outside
                // a `launch`) it means nothing and is ignored. Skipping a malformed one would let
                // launches through unchecked, so it fails the manifest.
                // `cluster X Y Z`: the kernel's cluster shape. A malformed line fails the
                // manifest: skipping it would launch grids the kernel cannot run.
                Some("cluster") => {
                    if let Some(Open::Kernel(k)) = &mut open {
                        let dims: Option<Vec<u32>> =
                            fields[1..].iter().map(|f| f.parse::<u32>().ok().filter(|&d| d >= 1)).collect();
                        match dims.as_deref() {
                            Some(&[x, y, z]) if k.cluster == [1, 1, 1] => k.cluster = [x, y, z],
                            Some(&[_, _, _]) => return Err(perr(no, format!("kernel `{}`: a second `cluster` line", k.name))),
                            _ => return Err(perr(no, format!("kernel `{}`: bad `cluster` line `{line}` (expected `cluster X Y Z`, each at least 1)", k.name))),
                        }
                    }
                }
                Some("smem") => {
                    if let Some(Open::Kernel(k)) = &mut open {
                        let bytes = match fields[1..] {
                            [v] => v.parse::<u32>().ok(),
                            _ => None,
                        };
                        match bytes {
                            Some(b) if !smem_seen => {
                                k.dynamic_smem_bytes = b;
                                smem_seen = true;
                            }
                            Some(_) => return Err(perr(no, format!("kernel `{}`: a second `smem` line", k.name))),
                            None => {
                                return Err(perr(
                                    no,
                                    format!("kernel `{}`: bad `smem` line `{line}` (expected `smem BYTES`, BYTES in 0..=4294967295)", k.name),
                                ))
                            }
                        }
                    }
                }
                // An instance of a generic host function: `instance NAME`, then per type
                // parameter `typearg T DTYPE PARAM...` (after the `param` lines). A malformed one
                // makes this host unusable, never a wrongly selected one.
                Some("instance") => {
                    if let Some(Open::Host(h, _, _)) = &mut open {
                        match fields[1..] {
                            [g] if h.generic.is_none() => h.generic = Some(g.to_string()),
                            _ => {
                                h.plan_error.get_or_insert(format!(
                                    "line {no}: bad `instance` line `{line}` (expected one per host: `instance NAME`)"
                                ));
                            }
                        }
                    }
                }
                Some("typearg") => {
                    if let Some(Open::Host(h, _, _)) = &mut open {
                        match crate::plan::TypeArgSig::parse(&fields[1..], &h.params) {
                            Ok(t) if h.type_args.iter().any(|o| o.name == t.name) => {
                                h.plan_error.get_or_insert(format!("line {no}: a second `typearg {}`", t.name));
                            }
                            Ok(t) => h.type_args.push(t),
                            Err(e) => {
                                h.plan_error.get_or_insert(format!("line {no}: {e}"));
                            }
                        }
                    }
                }
                // A run-time divisor of a kernel's index math: two more kernel parameters. Skipping
                // one would launch the kernel with too few, so a malformed one fails the manifest.
                Some("fastdiv") => {
                    if let Some(Open::Kernel(k)) = &mut open {
                        let rest = line.trim_start().strip_prefix("fastdiv").unwrap_or("");
                        match crate::plan::Expr::parse(rest.trim()) {
                            Ok(e) => k.fast_divisors.push(e),
                            Err(e) => return Err(perr(no, format!("kernel `{}`: bad `fastdiv` line: {e}", k.name))),
                        }
                    }
                }
                // A TMA tensor map: a 128-byte kernel parameter. Skipping one would launch the
                // kernel without it, so a malformed one fails the manifest.
                Some("tma") => {
                    if let Some(Open::Kernel(k)) = &mut open {
                        match crate::tma::TmaSig::parse(&fields[1..], k) {
                            Ok(t) => k.tmas.push(t),
                            Err(e) => return Err(perr(no, format!("kernel `{}`: bad `tma` line: {e}", k.name))),
                        }
                    }
                }
                Some("launches") => {
                    if let (Some(Open::Host(h, _, _)), Some(k)) = (&mut open, fields.get(1)) {
                        h.launches_kernels.push(k.to_string());
                    }
                }
                // A run-time `if` of a host: `if COND`, the branch, [`else`, the branch,] `endif`;
                // a run-time loop: `for $K | START | END | STEP`, the body, `endfor`, with `break`
                // and `continue` inside. A malformed one makes the host's plan unusable (never a
                // partial plan).
                Some(kw @ ("if" | "else" | "endif" | "for" | "endfor" | "break" | "continue")) => {
                    if let Some(Open::Host(h, _, ifs)) = &mut open {
                        let rest = line.trim_start().strip_prefix(kw).unwrap_or("");
                        if let Err(e) = branch_record(h, ifs, kw, rest) {
                            h.plan_error.get_or_insert(format!("line {no}: {e}"));
                        }
                    }
                }
                Some("launch") => match (&mut open, fields.get(1)) {
                    (Some(Open::Host(_, l, _)), Some(k)) => *l = Some(LaunchPlan::new(k)),
                    (Some(Open::Host(h, _, _)), None) => {
                        h.plan_error.get_or_insert(format!("line {no}: `launch` without a kernel name"));
                    }
                    _ => {} // outside a host: unknown here, ignore
                },
                Some("end") => match open.take() {
                    Some(Open::Host(mut h, _, ifs)) => {
                        let unclosed_ifs = ifs.iter().filter(|b| matches!(b, Block::If { .. })).count();
                        if unclosed_ifs > 0 {
                            h.plan_error
                                .get_or_insert(format!("line {no}: {unclosed_ifs} `if` not closed with `endif`"));
                        }
                        let unclosed_fors = ifs.len() - unclosed_ifs;
                        if unclosed_fors > 0 {
                            h.plan_error
                                .get_or_insert(format!("line {no}: {unclosed_fors} `for` not closed with `endfor`"));
                        }
                        m.hosts.push(h)
                    }
                    Some(Open::Kernel(k)) => m.kernels.push(k),
                    None => return Err(perr(no, "`end` without a kernel")),
                },
                // Unknown records: a later minor addition; ignore.
                Some(_) => {}
            }
        }
        if let Some(o) = open {
            let name = match o {
                Open::Kernel(k) => k.name,
                Open::Host(h, _, _) => h.name,
            };
            return Err(perr(text.lines().count(), format!("kernel `{name}` is not closed with `end`")));
        }
        // Plans are checked against the kernels once every block is read.
        let checked: Vec<Option<String>> = m.hosts.iter().map(|h| h.validate(&m).err()).collect();
        for (h, e) in m.hosts.iter_mut().zip(checked) {
            if h.plan_error.is_none() {
                h.plan_error = e;
            }
        }
        Ok(m)
    }

    /// Reads the manifest embedded in a cubin's bytes; `Ok(None)` when the
    /// image has none (not an ELF, or not built by a manifest-writing cutec).
    pub fn from_cubin(bytes: &[u8]) -> Result<Option<Manifest>> {
        if !elf::is_elf(bytes) {
            return Ok(None);
        }
        let Some(raw) = elf::symbol_bytes(bytes, MANIFEST_SYMBOL)? else { return Ok(None) };
        let raw = raw.strip_suffix(&[0]).unwrap_or(raw);
        let text = std::str::from_utf8(raw)
            .map_err(|e| RuntimeError::InvalidImage(format!("the cutec manifest is not UTF-8: {e}")))?;
        Manifest::parse(text).map(Some)
    }

    /// Reads the manifest of the cubin file `path`.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Option<Manifest>> {
        let path = path.as_ref();
        let bytes =
            std::fs::read(path).map_err(|e| RuntimeError::Io { path: path.to_path_buf(), message: e.to_string() })?;
        Manifest::from_cubin(&bytes)
    }

    /// The kernel named `name`.
    pub fn kernel(&self, name: &str) -> Option<&KernelSig> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// The host function named `name` (an instance of a generic one by its own name, `add<f16>`).
    pub fn host(&self, name: &str) -> Option<&HostSig> {
        self.hosts.iter().find(|h| h.name == name)
    }

    /// The instances of generic host function `name` (`instance NAME` blocks), in manifest order;
    /// empty when there is no such generic.
    pub fn host_instances(&self, name: &str) -> Vec<&HostSig> {
        self.hosts.iter().filter(|h| h.generic.as_deref() == Some(name)).collect()
    }

    /// The names a host function is called by: each non-generic host function, and each generic
    /// one once (its instances are also found by their own names, `add<f16>`).
    pub fn host_names(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for h in &self.hosts {
            let name = h.generic.as_ref().unwrap_or(&h.name);
            if !out.contains(name) {
                out.push(name.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "cutec-manifest 1\narch sm_90\nkernel vector_add\n\
        param a tensor elem=f32 space=gmem align=4 rank=1 shape=? stride=1\n\
        param m tensor elem=f16 space=gmem align=16 rank=2 shape=((2,?),8) stride=((1,?),64) future=yes\n\
        param n scalar elem=i32\nend\n";

    #[test]
    fn parses_and_prints() {
        let m = Manifest::parse(TEXT).unwrap();
        assert_eq!(m.version, 1);
        assert_eq!(m.arch.as_deref(), Some("sm_90"));
        let k = m.kernel("vector_add").unwrap();
        assert_eq!(k.params.len(), 3);
        let ParamKind::Tensor(t) = &k.params[1].kind else { panic!() };
        assert_eq!(t.shape_leaves, vec![Some(2), None, Some(8)]);
        assert_eq!(t.stride_leaves, vec![Some(1), None, Some(64)]);
        assert_eq!(t.rank(), 2);
        assert_eq!(t.abi_len(), 3);
        assert_eq!(
            k.to_string(),
            "vector_add(a: tensor<f32, gmem, ?:1, align: 4>, m: tensor<f16, gmem, ((2,?),8):((1,?),64), align: 16>, n: i32)"
        );
        assert_eq!(k.abi(), "(u64 a, i32 a.shape[0], u64 m, i32 m.shape[1], i32 m.stride[1], i32 n)");
    }

    #[test]
    fn forward_compatible_and_versioned() {
        let m = Manifest::parse("cutec-manifest 1\nsomething new\nhost h\nparam x scalar elem=f32\nlaunches k\nend\n")
            .unwrap();
        assert_eq!(m.hosts.len(), 1);
        assert!(m.kernels.is_empty());
        assert_eq!(Manifest::parse("cutec-manifest 2\n").unwrap().version, 2);
        assert_eq!(Manifest::parse("cutec-manifest 3\n").unwrap().version, 3);
        assert_eq!(Manifest::parse("cutec-manifest 4\n").unwrap().version, 4);
        assert_eq!(Manifest::parse("cutec-manifest 5\n").unwrap().version, 5);
        assert_eq!(Manifest::parse("cutec-manifest 6\n").unwrap().version, 6);
        assert_eq!(Manifest::parse("cutec-manifest 7\n").unwrap().version, 7);
        let e = Manifest::parse("cutec-manifest 8\n").unwrap_err();
        assert!(e.to_string().contains("manifest version 8 is newer than this runtime understands (7)"), "{e}");
        assert!(Manifest::parse("hello\n").is_err());
        assert!(Manifest::parse(
            "cutec-manifest 1\nkernel k\nparam a tensor elem=f32 space=gmem align=4 shape=(?,8) stride=1\nend\n"
        )
        .is_err());
        assert!(Manifest::parse("cutec-manifest 1\nkernel k\n").is_err());
        assert!(Manifest::parse(
            "cutec-manifest 1\nkernel k\nparam a tensor elem=q32 space=gmem align=4 shape=? stride=1\nend"
        )
        .is_err());
    }

    #[test]
    fn fast_divisors() {
        let text = "cutec-manifest 3\nkernel k\nparam a tensor elem=f16 space=gmem align=16 rank=2 shape=(?,?{div=8}) stride=(?{div=8},1)\n\
                    fastdiv $1\nfastdiv (div $1 8)\nend\n";
        let m = Manifest::parse(text).unwrap();
        let k = m.kernel("k").unwrap();
        assert_eq!(k.fast_divisors.len(), 2);
        assert_eq!(k.fast_divisors[1].to_string(), "(div $1 8)");
        assert_eq!(
            k.abi(),
            "(u64 a, i32 a.shape[0], i32 a.shape[1], i32 a.stride[0], u32 fastdiv[0].multiplier, u32 fastdiv[0].shift, \
             u32 fastdiv[1].multiplier, u32 fastdiv[1].shift)"
        );
        assert_eq!(crate::fastdiv::declared_abi_len(k), 4);
        // Skipping a divisor would launch the kernel with too few parameters: a bad line fails.
        let e = Manifest::parse("cutec-manifest 3\nkernel k\nfastdiv (div $1\nend\n").unwrap_err();
        assert!(e.to_string().contains("bad `fastdiv` line"), "{e}");
        // In a host block it means nothing.
        assert!(Manifest::parse("cutec-manifest 3\nhost h\nfastdiv $0\nend\n").is_ok());
    }

    #[test]
    fn tuples() {
        for s in ["?", "8", "(?,8)", "((2,?),8)", "(1,(2,(3,?)))"] {
            assert_eq!(IntTuple::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(IntTuple::parse("(8)").unwrap().to_string(), "8");
        let (t, divs) = IntTuple::parse_with_div("(?,?{div=8}):").map_or((IntTuple::Leaf(None), vec![]), |x| x);
        assert!(divs.is_empty(), "{t}");
        let (t, divs) = IntTuple::parse_with_div("((2,?{div=16}),?)").unwrap();
        assert_eq!((t.to_string(), divs), ("((2,?),?)".to_string(), vec![1, 16, 1]));
        for s in ["", "(", "(,)", "()", "-1", "(1,2", "1 2", "x", "?{div=0}", "?{mod=2}", "?{div=8"] {
            assert!(IntTuple::parse(s).is_none(), "{s}");
        }
    }

    #[test]
    fn from_cubin_reads_the_elf_symbol() {
        let elf = crate::elf::tests::tiny_elf(MANIFEST_SYMBOL, TEXT.as_bytes());
        let m = Manifest::from_cubin(&elf).unwrap().unwrap();
        assert_eq!(m.kernels[0].name, "vector_add");
        assert_eq!(Manifest::from_cubin(b"// ptx text").unwrap(), None);
        let other = crate::elf::tests::tiny_elf("something_else", b"x");
        assert_eq!(Manifest::from_cubin(&other).unwrap(), None);
    }

    #[test]
    fn dtype_codes_round_trip() {
        for d in DType::ALL {
            assert_eq!(DType::from_code(d.code()), Some(d));
            assert_eq!(DType::from_name(d.name()), Some(d));
        }
        assert_eq!(DType::F32.code(), 12);
    }
}
