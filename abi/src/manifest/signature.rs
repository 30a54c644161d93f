//! Kernel signatures: parameters (tensors with their layouts in CuTe notation, scalars, streams),
//! launch conditions, fast divisors, TMA tensor maps and clusters, as a `kernel` block of the
//! manifest declares them, and the `$k` numbering of a parameter list's dynamic values.

use std::fmt;

use super::expr::Expr;
use crate::{DType, MemSpace};

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
    pub space: MemSpace,
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
pub(super) fn write_tuple_div<W: fmt::Write>(
    f: &mut W,
    t: &IntTuple,
    divs: &mut std::slice::Iter<'_, i64>,
) -> fmt::Result {
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
    /// Launches giving less are refused (the runtime checks it).
    pub dynamic_smem_bytes: u32,
    /// The run-time divisors of the kernel's index math (`fastdiv` lines, over its `$k`): each
    /// adds two `u32` parameters after the declared ones, its multiplier and shift, which every
    /// launch path computes (the runtime computes them).
    pub fast_divisors: Vec<Expr>,
    /// The TMA tensor maps the kernel takes after its fast divisors (`tma` lines): 128-byte
    /// parameters every launch encodes from a tensor argument ([`TmaSig`]).
    pub tmas: Vec<TmaSig>,
    /// The thread-block cluster shape the kernel was compiled for (`cluster X Y Z`; `[1, 1, 1]`
    /// when the line is absent): its grids must be whole clusters (the runtime checks it).
    pub cluster: [u32; 3],
    /// The width of the kernel's index math in bits (`index 64`; 32 when the line is absent): a
    /// 64-bit kernel takes its dynamic extents and strides as `i64` parameters and may be called
    /// with tensors whose offsets pass 2^31 - 1; a 32-bit one is refused them.
    pub index_bits: u32,
    /// Whether the kernel was compiled with run-time `assert`s (`asserts`; false when the line is
    /// absent): a failed one prints where and traps, so the runtime explains a trap as a likely
    /// failed assert only for such kernels.
    pub asserts: bool,
}

impl ParamSig {
    /// `mode 0` for a flat leaf of a rank-R tensor; `shape entry 3` for nested shapes.
    pub fn mode_of_leaf(&self, leaf: usize) -> String {
        match &self.kind {
            ParamKind::Tensor(t) if t.shape_leaves.len() == t.rank() => format!("mode {leaf}"),
            _ => format!("shape entry {leaf}"),
        }
    }
}

impl KernelSig {
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

/// A launch condition (`require EXPR | DIVISOR | s:HEX`, or `require EXPR | >=MIN | s:HEX`): EXPR,
/// over the `$k` of the kernel or host block it is in, must be a multiple of DIVISOR (a run-time
/// extent tiled by a static tile), or at least MIN (a run-time extent a static coordinate indexes);
/// `what` says what it is ("a run-time extent tiled by 16"), for the error message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Require {
    /// The value the condition is on.
    pub expr: Expr,
    /// What it must be.
    pub need: Need,
    /// What it is, from the compiler.
    pub what: String,
}

/// What a [`Require`] asks of its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// A multiple of this divisor (> 0): no partial tile.
    MultipleOf(i64),
    /// At least this (> 0; version 8): a static coordinate below it stays inside the tensor.
    AtLeast(i64),
}

impl fmt::Display for Need {
    /// The second field of a `require` line: `16` or `>=101`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Need::MultipleOf(d) => write!(f, "{d}"),
            Need::AtLeast(m) => write!(f, ">={m}"),
        }
    }
}

/// Decodes `s:HEX` (UTF-8 bytes in hexadecimal).
pub(super) fn hex_text(field: &str) -> std::result::Result<String, String> {
    let hex = field.trim().strip_prefix("s:").ok_or_else(|| format!("expected `s:HEX`, found `{field}`"))?;
    if hex.len() % 2 != 0 {
        return Err(format!("odd-length hex text `{hex}`"));
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| hex.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(|| format!("bad hex text `{hex}`"))?;
    String::from_utf8(bytes).map_err(|_| "text is not UTF-8".to_string())
}

impl Require {
    /// Parses the fields after `require`.
    pub fn parse(rest: &str) -> std::result::Result<Require, String> {
        let p: Vec<&str> = rest.split('|').map(str::trim).collect();
        if p.len() < 2 {
            return Err("`require` needs `EXPR | DIVISOR` or `EXPR | >=MIN`".into());
        }
        let expr = Expr::parse(p[0])?;
        let positive = |t: &str| t.parse::<i64>().ok().filter(|&d| d > 0);
        let need = match p[1].strip_prefix(">=") {
            Some(m) => Need::AtLeast(positive(m).ok_or_else(|| format!("`require`: bad minimum `{}`", p[1]))?),
            None => Need::MultipleOf(positive(p[1]).ok_or_else(|| format!("`require`: bad divisor `{}`", p[1]))?),
        };
        let what = match p.get(2) {
            Some(f) => hex_text(f)?,
            None => String::new(),
        };
        Ok(Require { expr, need, what })
    }

    /// Checks the condition for `vars`; `Err(message)` naming the value (through `sources` and
    /// `params`) when it fails.
    pub fn check(&self, vars: &[i64], params: &[ParamSig], sources: &[VarSource]) -> std::result::Result<(), String> {
        let v = self.expr.eval(vars).map_err(|e| e.to_string())?;
        let holds = match self.need {
            Need::MultipleOf(d) => v.rem_euclid(d) == 0,
            Need::AtLeast(m) => v >= m,
        };
        if holds {
            return Ok(());
        }
        let what = match &self.expr {
            Expr::Var(k) => match sources.get(*k) {
                Some(VarSource::Shape { param, leaf }) => match params.get(*param) {
                    Some(p) => format!("{} extent {v} ({})", p.name, p.mode_of_leaf(*leaf)),
                    None => format!("${k} = {v}"),
                },
                Some(src) => format!("{} = {v}", var_name_of(params, *src)),
                None => format!("${k} = {v}"),
            },
            e => format!("{e} = {v}"),
        };
        let note = if self.what.is_empty() { String::new() } else { format!(" ({})", self.what) };
        Err(match self.need {
            Need::MultipleOf(d) => format!("{what} is not a multiple of the tile {d}{note}; this kernel has no tail handling"),
            Need::AtLeast(m) => format!(
                "{what} is below {m}, the smallest extent its static coordinate allows{note}; the kernel would access memory outside the tensor"
            ),
        })
    }
}

/// Where a dynamic value `$k` comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarSource {
    /// Shape leaf `leaf` of (tensor) host parameter `param`.
    Shape {
        /// Host parameter index.
        param: usize,
        /// Flattened leaf index.
        leaf: usize,
    },
    /// Stride leaf `leaf` of host parameter `param`.
    Stride {
        /// Host parameter index.
        param: usize,
        /// Flattened leaf index.
        leaf: usize,
    },
    /// Scalar host parameter `param`.
    Scalar {
        /// Host parameter index.
        param: usize,
    },
}

/// The sources of `$0, $1, ...` of a parameter list (a host's or a kernel's ABI values).
pub fn var_sources_of(params: &[ParamSig]) -> Vec<VarSource> {
    let mut v = Vec::new();
    for (param, p) in params.iter().enumerate() {
        match &p.kind {
            ParamKind::Tensor(t) => {
                v.extend(
                    t.shape_leaves
                        .iter()
                        .enumerate()
                        .filter(|(_, e)| e.is_none())
                        .map(|(leaf, _)| VarSource::Shape { param, leaf }),
                );
                v.extend(
                    t.stride_leaves
                        .iter()
                        .enumerate()
                        .filter(|(_, e)| e.is_none())
                        .map(|(leaf, _)| VarSource::Stride { param, leaf }),
                );
            }
            ParamKind::Scalar(_) => v.push(VarSource::Scalar { param }),
            // Not an integer of the plan.
            ParamKind::Stream => {}
        }
    }
    v
}

/// A name for `$k` of a parameter list.
pub fn var_name_of(params: &[ParamSig], src: VarSource) -> String {
    let name = |p: usize| params.get(p).map_or("?", |p| p.name.as_str());
    match src {
        VarSource::Shape { param, leaf } => format!("{}.shape[{leaf}]", name(param)),
        VarSource::Stride { param, leaf } => format!("{}.stride[{leaf}]", name(param)),
        VarSource::Scalar { param } => name(param).to_string(),
    }
}

/// One `tma` line: the tensor map of tensor parameter `param` (an index into the kernel's
/// parameters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TmaSig {
    pub param: usize,
    pub elem: DType,
    /// The tensor's modes, innermost (stride 1) first: the map's dimensions.
    pub order: Vec<usize>,
    /// The box (the shared-memory tile), per mode of the tensor.
    pub box_dims: Vec<u32>,
    /// 0, 32, 64 or 128 (bytes).
    pub swizzle_bytes: u32,
    /// `store=1` (version 7): a `tma_store` writes through the map.
    pub store: bool,
}

fn list(s: &str) -> Option<Vec<u64>> {
    let s = s.strip_prefix('(').and_then(|s| s.strip_suffix(')')).unwrap_or(s);
    s.split(',').map(|x| x.trim().parse::<u64>().ok()).collect()
}

/// The bytes of a tensor-map element of type `d`; `None` for tf32, which has no tensor-map type.
pub fn tma_elem_bytes(d: DType) -> Option<u64> {
    Some(match d {
        DType::I8 | DType::U8 | DType::F8E4M3 | DType::F8E5M2 | DType::Bool => 1,
        DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
        DType::I32 | DType::U32 | DType::F32 => 4,
        DType::I64 | DType::U64 | DType::F64 => 8,
        DType::TF32 => return None,
    })
}

impl TmaSig {
    /// Parses the fields after `tma` against the kernel's parameters read so far.
    pub(super) fn parse(fields: &[&str], sig: &KernelSig) -> Result<TmaSig, String> {
        let (name, attrs) = fields.split_first().ok_or("expected `tma PARAM elem=T order=(..) box=(..) swizzle=S`")?;
        let param = sig
            .params
            .iter()
            .position(|p| p.name == *name)
            .ok_or_else(|| format!("`{name}` is not a parameter of the kernel"))?;
        let ParamKind::Tensor(t) = &sig.params[param].kind else {
            return Err(format!("`{name}` is not a tensor parameter"));
        };
        if t.space != MemSpace::Gmem {
            return Err(format!("`{name}` is not a global-memory tensor"));
        }
        let get = |k: &str| {
            attrs
                .iter()
                .find_map(|a| a.strip_prefix(k).and_then(|r| r.strip_prefix('=')))
                .ok_or_else(|| format!("missing `{k}=`"))
        };
        let elem = DType::from_name(get("elem")?).ok_or("unknown `elem`")?;
        if elem != t.elem || tma_elem_bytes(elem).is_none() {
            return Err(format!(
                "`elem={}` is not the tensor's element type {} or has no tensor-map type",
                elem.name(),
                t.elem.name()
            ));
        }
        let order: Vec<usize> = list(get("order")?).ok_or("bad `order`")?.into_iter().map(|o| o as usize).collect();
        let box_dims: Vec<u32> =
            list(get("box")?).ok_or("bad `box`")?.into_iter().map(|b| u32::try_from(b).unwrap_or(0)).collect();
        let swizzle_bytes = get("swizzle")?.parse::<u32>().map_err(|_| "bad `swizzle`")?;
        let store = match get("store") {
            Err(_) | Ok("0") => false,
            Ok("1") => true,
            Ok(_) => return Err("bad `store` (0 or 1)".into()),
        };
        let rank = t.shape_leaves.len();
        let mut sorted = order.clone();
        sorted.sort_unstable();
        if t.rank() != rank
            || !(2..=5).contains(&rank)
            || sorted != (0..rank).collect::<Vec<_>>()
            || box_dims.len() != rank
        {
            return Err(format!("`order` and `box` must be a permutation and a box of the tensor's 2 to 5 flat modes (it has {rank} leaves)"));
        }
        if t.stride_leaves[order[0]] != Some(1) {
            return Err("the first mode of `order` must have static stride 1".into());
        }
        if box_dims.iter().any(|b| !(1..=256).contains(b)) || ![0, 32, 64, 128].contains(&swizzle_bytes) {
            return Err("box extents must be 1 to 256 and `swizzle` 0, 32, 64 or 128".into());
        }
        Ok(TmaSig { param, elem, order, box_dims, swizzle_bytes, store })
    }
}
