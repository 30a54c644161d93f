//! The manifest cutec embeds in every cubin: what kernels and host functions the module holds,
//! each parameter's type, the launch conditions, and each host function's launch plan. cutec
//! builds a [`Manifest`] and writes it with [`Manifest::to_text`]; the runtime reads it with
//! [`Manifest::parse`]: one writer, one reader, one set of types.
//!
//! The modules are layered: [`expr`] (integer expressions and conditions) ← [`signature`]
//! (kernel signatures, TMA records) ← [`plan`] (host plans and their checks) ← the reader and
//! the writer.
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
//! checksum 6d055f1d606e1827
//! ```
//!
//! * `checksum HEX` is the last line: the FNV-1a 64 hash of every byte before it, as 16 lowercase
//!   hex digits (the `checksum` module says why FNV-1a). The reader checks it before reading any
//!   record and refuses a manifest whose bytes do not match it ("manifest checksum mismatch: the
//!   cubin's manifest was altered or damaged; rebuild it with cutec build") or that has none (a
//!   cubin of a cutec older than the checksum: rebuild it; no such cubins are in use). The
//!   line needs no version: an older reader skips it as an unknown record. Hand-written
//!   manifests are sealed with [`seal`].
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
//!   declared ones, in line order ([`KernelSig::fast_divisors`], the runtime's `fastdiv`). A malformed
//!   line fails the manifest.
//! * `require EXPR | >=MIN | s:HEX` in a kernel or host block (version 8): `EXPR` (a run-time
//!   extent) must be at least `MIN`, because the code indexes it at the static coordinate
//!   `MIN - 1` ([`Need::AtLeast`]); `require EXPR | DIVISOR | s:HEX` (every version) asks for a
//!   multiple ([`Need::MultipleOf`]). Either is checked at every launch and call.
//! * `cluster X Y Z` in a kernel block (version 5): the kernel was compiled for thread-block
//!   clusters of X x Y x Z blocks (PTX `.reqnctapercluster`), in [`KernelSig::cluster`]; every
//!   launch path refuses a grid that is not a multiple of it in each dimension
//!   (the runtime's `KernelSig::check_cluster`). A malformed line fails the manifest.
//! * `index 64` in a kernel block (version 9): the kernel computes its index math in 64 bits
//!   (`kernel k(...) index(i64)`), in [`KernelSig::index_bits`] (32 when absent): its dynamic
//!   extents and strides are `i64` parameters, and checked launches accept tensors whose extents
//!   and offsets pass 2^31 - 1, which a 32-bit kernel is refused. A malformed line fails the manifest.
//! * `(ceilquot a b)` in a launch's view extents (version 10): a program's own `ceil_div` (a
//!   padded extent), evaluated as `ceildiv` but never taken for a partial tile
//!   ([`Expr::inexact_division`]); the writer spells it `ceildiv` everywhere else.
//! * `asserts` in a kernel block (any version): the kernel has run-time `assert`s compiled in
//!   (not built with `--release-asserts=off`), in [`KernelSig::asserts`]: a failed one prints
//!   where it failed and traps, and the runtime explains a launch failure of such a kernel as a
//!   likely failed assert. An older reader that skips the line loses only that hint, so the line
//!   needs no version.
//! * Forward compatibility: unknown record kinds and unknown `key=value`
//!   attributes are ignored, so later versions can add records without
//!   breaking old readers. A `host` block is parsed into
//!   [`Manifest::hosts`] ([`HostSig`]) with its params and its launch plan
//!   (`launch KERNEL` ... `endlaunch` blocks, see [`plan`]). A
//!   malformed plan does not make the manifest unreadable: it is recorded in
//!   [`HostSig::plan_error`] and only calling that host function fails.

mod checksum;
pub mod expr;
mod parse;
pub mod plan;
pub mod signature;
mod validate;
mod write;

use std::fmt;

pub use checksum::seal;
pub use expr::{CmpOp, Cond, EvalError, Expr, Inexact};
pub use plan::{
    format_print, write_print, Assert, HostSig, HostStep, LaunchPlan, PlanArg, PrintSeg, StepNesting, TypeArgSig,
};
pub use signature::{
    tma_elem_bytes, var_name_of, var_sources_of, IntTuple, KernelSig, Need, ParamKind, ParamSig, Require, TensorSig,
    TmaSig, VarSource,
};

/// The symbol cutec stores the manifest in (a global byte array of the kernel module).
pub const MANIFEST_SYMBOL: &str = "__cutec_manifest";
/// The format's first major version.
pub const MANIFEST_VERSION_BASE: u32 = 1;
/// Run-time `if` ... `endif` in host blocks: a reader that does not know the records must not
/// read the plan, as it would carry out every branch.
pub const MANIFEST_VERSION_HOST_FLOW: u32 = 2;
/// `fastdiv` lines in kernel blocks: such a kernel takes two more parameters per line, which a
/// reader that skipped the line would not pass.
pub const MANIFEST_VERSION_FAST_DIV: u32 = 3;
/// `tma` lines (TMA tensor maps): a 128-byte parameter per line that a reader that skipped the
/// line would not pass.
pub const MANIFEST_VERSION_TMA: u32 = 4;
/// `cluster` lines (a kernel's thread-block cluster shape): a reader that skipped the line would
/// launch grids that are not whole clusters, which the driver refuses without saying why.
pub const MANIFEST_VERSION_CLUSTER: u32 = 5;
/// Run-time loops in host blocks (`for` ... `endfor`, `break`, `continue`): a reader that skipped
/// the records would make a loop body's launches once, with the loop variable unbound.
pub const MANIFEST_VERSION_HOST_LOOPS: u32 = 6;
/// `store=1` on `tma` lines: a reader that ignored it would not refuse a tensor whose rows end
/// inside a 16-byte chunk, which a TMA store writes whole.
pub const MANIFEST_VERSION_TMA_STORE: u32 = 7;
/// `require EXPR | >=MIN` (a run-time extent a static coordinate indexes must be at least MIN): a
/// reader that did not know the form would refuse the manifest without saying to update.
pub const MANIFEST_VERSION_BOUND: u32 = 8;
/// The newest manifest major version this reader understands (each version above adds records an
/// older reader must not skip, so a writer uses the lowest version its manifest needs).
pub const MANIFEST_VERSION: u32 = MANIFEST_VERSION_CEIL_QUOT;
/// `index 64` in kernel blocks (64-bit index math): such a kernel takes `i64` extents and strides,
/// which a reader that skipped the line would pass as `i32`.
pub const MANIFEST_VERSION_INDEX64: u32 = 9;
/// `(ceilquot a b)` in a view's extents (a program's `ceil_div`, not a tiling): a reader that did
/// not know the operator would refuse the manifest without saying to update.
pub const MANIFEST_VERSION_CEIL_QUOT: u32 = 10;

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

impl Manifest {
    /// The kernel named `name`.
    pub fn kernel(&self, name: &str) -> Option<&KernelSig> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

/// Why a manifest could not be read: the line and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestError {
    /// The line (1-based).
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cutec manifest line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ManifestError {}
