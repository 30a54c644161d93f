//! The one writer of the manifest: [`Manifest`] to text, record by record, in the order the
//! reader ([`Manifest::parse`]) expects and cutec has always written them.

use std::fmt::{self, Write as _};

use super::plan::{HostSig, HostStep, PrintSeg};
use super::signature::{write_tuple_div, KernelSig, ParamKind, ParamSig, Require, TmaSig};
use super::{checksum, Manifest};

/// UTF-8 text as `s:HEX` (no character needs escaping in the line-based format).
pub(super) fn hex(f: &mut impl fmt::Write, text: &str) -> fmt::Result {
    f.write_str("s:")?;
    text.bytes().try_for_each(|b| write!(f, "{b:02x}"))
}

impl Manifest {
    /// The manifest text: `cutec-manifest VERSION`, `arch ARCH`, then a `kernel` block per kernel
    /// and a `host` block per host function, and last the `checksum` of all of it (the format:
    /// [`crate::manifest`]).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = self.write(&mut out);
        checksum::seal(&out)
    }

    fn write(&self, f: &mut String) -> fmt::Result {
        writeln!(f, "cutec-manifest {}", self.version)?;
        if let Some(arch) = &self.arch {
            writeln!(f, "arch {arch}")?;
        }
        for k in &self.kernels {
            write_kernel(f, k)?;
        }
        for h in &self.hosts {
            write_host(f, h)?;
        }
        Ok(())
    }
}

fn write_params(f: &mut String, params: &[ParamSig]) -> fmt::Result {
    for p in params {
        match &p.kind {
            ParamKind::Scalar(d) => writeln!(f, "param {} scalar elem={d}", p.name)?,
            // A host function's CUDA stream: no `$k`, never passed to a kernel; launches name it
            // with a `stream P` line (P: its index among the host's parameters).
            ParamKind::Stream => writeln!(f, "param {} stream", p.name)?,
            ParamKind::Tensor(t) => {
                write!(
                    f,
                    "param {} tensor elem={} space={} align={} rank={} shape=",
                    p.name,
                    t.elem,
                    t.space,
                    t.align,
                    t.rank()
                )?;
                write_tuple_div(f, &t.shape, &mut t.shape_div.iter())?;
                f.write_str(" stride=")?;
                write_tuple_div(f, &t.stride, &mut t.stride_div.iter())?;
                f.write_str("\n")?;
            }
        }
    }
    Ok(())
}

/// `require EXPR | DIVISOR | s:HEX` or `require EXPR | >=MIN | s:HEX`.
fn write_require(f: &mut String, r: &Require) -> fmt::Result {
    write!(f, "require {} | {} | ", r.expr, r.need)?;
    hex(f, &r.what)?;
    f.write_str("\n")
}

/// A list of integers: `(1,0)`, or the one integer of a one-element list.
fn write_list(f: &mut String, xs: &[u64]) -> fmt::Result {
    match xs {
        [x] => write!(f, "{x}"),
        _ => {
            let items: Vec<String> = xs.iter().map(u64::to_string).collect();
            write!(f, "({})", items.join(","))
        }
    }
}

fn write_tma(f: &mut String, k: &KernelSig, t: &TmaSig) -> fmt::Result {
    let name = k.params.get(t.param).map_or("?", |p| p.name.as_str());
    write!(f, "tma {name} elem={} order=", t.elem)?;
    write_list(f, &t.order.iter().map(|&o| o as u64).collect::<Vec<_>>())?;
    f.write_str(" box=")?;
    write_list(f, &t.box_dims.iter().map(|&b| u64::from(b)).collect::<Vec<_>>())?;
    writeln!(f, " swizzle={}{}", t.swizzle_bytes, if t.store { " store=1" } else { "" })
}

/// A `kernel` block: its parameters, `smem` (the dynamic shared memory every launch must provide),
/// `cluster` (the thread-block cluster shape it is compiled for), `index 64` (64-bit index math), `asserts` (run-time asserts compiled in), its launch conditions, a
/// `fastdiv` line per run-time divisor of its index math and a `tma` line per tensor map.
fn write_kernel(f: &mut String, k: &KernelSig) -> fmt::Result {
    writeln!(f, "kernel {}", k.name)?;
    write_params(f, &k.params)?;
    if k.dynamic_smem_bytes > 0 {
        writeln!(f, "smem {}", k.dynamic_smem_bytes)?;
    }
    if k.cluster != [1, 1, 1] {
        writeln!(f, "cluster {} {} {}", k.cluster[0], k.cluster[1], k.cluster[2])?;
    }
    if k.index_bits == 64 {
        writeln!(f, "index 64")?;
    }
    if k.asserts {
        writeln!(f, "asserts")?;
    }
    for r in &k.requires {
        write_require(f, r)?;
    }
    for d in &k.fast_divisors {
        writeln!(f, "fastdiv {d}")?;
    }
    for t in &k.tmas {
        write_tma(f, k, t)?;
    }
    f.write_str("end\n")
}

/// A `host` block: its parameters, `instance` and `typearg` lines for an instance of a generic
/// host function, its checks, then its steps. A host read from an older manifest has only
/// `launches KERNEL` summary lines (no plan): they are written as they were read.
fn write_host(f: &mut String, h: &HostSig) -> fmt::Result {
    writeln!(f, "host {}", h.name)?;
    write_params(f, &h.params)?;
    if let Some(g) = &h.generic {
        writeln!(f, "instance {g}")?;
        for ta in &h.type_args {
            let names: Vec<&str> = ta.params.iter().filter_map(|i| h.params.get(*i)).map(|p| p.name.as_str()).collect();
            writeln!(f, "typearg {} {} {}", ta.name, ta.dtype, names.join(" "))?;
        }
    }
    for t in &h.tuned {
        writeln!(f, "tuned {t}")?;
    }
    for r in &h.requires {
        write_require(f, r)?;
    }
    for a in &h.asserts {
        write_assert(f, a)?;
    }
    // A host whose plan was refused when read has no steps: it is written refused, with why.
    if let Some(why) = &h.plan_error {
        f.write_str("unusable ")?;
        hex(f, why)?;
        f.write_str("\n")?;
    }
    let mut summaries = h.launches_kernels.iter();
    for st in &h.steps {
        match st {
            HostStep::Launch(i) => {
                let l = &h.launches[*i];
                writeln!(f, "launches {}", summaries.next().unwrap_or(&l.kernel))?;
                writeln!(f, "{l}")?;
            }
            HostStep::Print(segs) => {
                let parts: Vec<String> = segs
                    .iter()
                    .map(|s| match s {
                        PrintSeg::Text(t) => {
                            let mut h = String::new();
                            let _ = hex(&mut h, t);
                            h
                        }
                        PrintSeg::Int(e) => format!("e:{e}"),
                    })
                    .collect();
                writeln!(f, "print {}", parts.join(" | "))?;
            }
            HostStep::If { cond, .. } => writeln!(f, "if {cond}")?,
            HostStep::Else { .. } => f.write_str("else\n")?,
            HostStep::EndIf => f.write_str("endif\n")?,
            HostStep::Assert(a) => write_assert(f, a)?,
            HostStep::Require(r) => write_require(f, r)?,
            HostStep::For { var, start, end, step, .. } => writeln!(f, "for ${var} | {start} | {end} | {step}")?,
            HostStep::EndFor { .. } => f.write_str("endfor\n")?,
            HostStep::Break { .. } => f.write_str("break\n")?,
            HostStep::Continue { .. } => f.write_str("continue\n")?,
        }
    }
    // Summaries without a plan (a manifest of an older cutec, or a host whose plan could not be
    // written): the runtime refuses to call such a host.
    for k in summaries {
        writeln!(f, "launches {k}")?;
    }
    f.write_str("end\n")
}

/// `assert LHS OP RHS | s:MESSAGE | s:LHS_TEXT | s:RHS_TEXT`.
fn write_assert(f: &mut String, a: &super::plan::Assert) -> fmt::Result {
    write!(f, "assert {} {} {} | ", a.lhs, a.op.symbol(), a.rhs)?;
    hex(f, &a.message)?;
    f.write_str(" | ")?;
    hex(f, &a.lhs_text)?;
    f.write_str(" | ")?;
    hex(f, &a.rhs_text)?;
    f.write_str("\n")
}
