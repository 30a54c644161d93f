//! The one reader of the manifest: text to [`Manifest`], every record checked as it is read and
//! each host plan checked against the kernels once the whole text is read.

use std::fmt;

use super::expr::{Cond, Expr};
use super::plan::{parse_print, Assert, HostSig, HostStep, LaunchPlan, StepNesting, TypeArgSig};
use super::signature::{hex_text, IntTuple, KernelSig, ParamKind, ParamSig, Require, TensorSig, TmaSig};
use super::{checksum, Manifest, ManifestError, MANIFEST_VERSION};
use crate::{DType, MemSpace};

fn perr(line: usize, why: impl fmt::Display) -> ManifestError {
    ManifestError { line, message: why.to_string() }
}

fn parse_param(line_no: usize, fields: &[&str]) -> Result<ParamSig, ManifestError> {
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
            let space = MemSpace::from_name(space_s)
                .ok_or_else(|| perr(line_no, format!("param `{name}`: unknown space `{space_s}`")))?;
            let align_s = need("align")?;
            let align: u32 = align_s
                .parse()
                .ok()
                .filter(|a: &u32| a.is_power_of_two())
                .ok_or_else(|| perr(line_no, format!("param `{name}`: bad align `{align_s}`")))?;
            let tuple = |key: &str| -> Result<(IntTuple, Vec<i64>), ManifestError> {
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

/// One `if COND`, `else`, `endif`, `for $K | START | END | STEP`, `endfor`, `break` or `continue`
/// record of a host block: its step, appended through `open` (the blocks not closed yet), which
/// sets the jump targets.
fn branch_record(h: &mut HostSig, open: &mut StepNesting, kw: &str, rest: &str) -> Result<(), String> {
    if !matches!(kw, "if" | "for") && !rest.trim().is_empty() {
        return Err(format!("`{kw}` takes nothing, found `{}`", rest.trim()));
    }
    let step = match kw {
        "if" => HostStep::If { cond: Cond::parse(rest).map_err(|e| format!("`if`: {e}"))?, else_at: 0 },
        "else" => HostStep::Else { end_at: 0 },
        "endif" => HostStep::EndIf,
        "for" => {
            let (var, start, end, step) = parse_for(rest).map_err(|e| format!("`for`: {e}"))?;
            HostStep::For { var, start, end, step, end_at: 0 }
        }
        "endfor" => HostStep::EndFor { for_at: 0 },
        "break" => HostStep::Break { end_at: 0 },
        _ => HostStep::Continue { endfor_at: 0 },
    };
    open.push(h, step)
}

/// The fields after `for`: `$K | START | END | STEP`.
fn parse_for(rest: &str) -> Result<(usize, Expr, Expr, Expr), String> {
    let p: Vec<&str> = rest.split('|').map(str::trim).collect();
    let [var, start, end, step] = p[..] else {
        return Err(format!("expected `for $K | START | END | STEP`, found `for {}`", rest.trim()));
    };
    let var = var
        .strip_prefix('$')
        .and_then(|k| k.parse::<usize>().ok())
        .ok_or_else(|| format!("the loop variable must be `$K`, found `{var}`"))?;
    let e = |what: &str, t: &str| Expr::parse(t).map_err(|err| format!("{what}: {err}"));
    Ok((var, e("start", start)?, e("end", end)?, e("step", step)?))
}

/// The block the reader is in: a kernel, or a host (with its open `launch`, if any). One per
/// reader, so the size of its variants does not matter.
#[allow(clippy::large_enum_variant)]
enum Open {
    Kernel(KernelSig),
    /// A host, its open `launch`, and its open `if`s and `for`s.
    Host(HostSig, Option<LaunchPlan>, StepNesting),
}

/// The reader's state between lines.
struct Reader {
    m: Manifest,
    open: Option<Open>,
    /// Whether the open kernel block had its `smem` line.
    smem_seen: bool,
}

impl Manifest {
    /// Parses manifest text. A NUL byte anywhere in it marks a damaged manifest (the writer
    /// never emits one, and a C reader would see the text end there): refused, whichever
    /// language reads it, rather than read up to or past it. So is a text whose last line is not
    /// the `checksum` of the bytes before it (the format: [`crate::manifest`]).
    pub fn parse(text: &str) -> Result<Manifest, ManifestError> {
        if let Some(at) = text.find('\0') {
            let line = text[..at].matches('\n').count() + 1;
            return Err(perr(line, format!("a NUL byte at byte {at}: the manifest is damaged")));
        }
        let first = text.lines().next().ok_or_else(|| perr(1, "empty manifest"))?.trim_end_matches('\r');
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
        // After the version: a newer format may seal its text differently. Before any record: a
        // damaged manifest is refused as such, not by whatever its damage makes of a record.
        let body = checksum::verify(text)?;
        let lines = body.lines().enumerate().map(|(i, l)| (i + 1, l.trim_end_matches('\r'))).skip(1);
        let m = Manifest { version, text: text.to_string(), ..Manifest::default() };
        let mut r = Reader { m, open: None, smem_seen: false };
        for (no, line) in lines {
            // Fields end at any ASCII white space, so that none keeps a `\r` or tab the writer
            // would write back into a different line (found by the manifest fuzz target).
            let fields: Vec<&str> = line.split_ascii_whitespace().collect();
            if !r.launch_record(no, &fields) {
                r.record(no, line, &fields)?;
            }
        }
        let mut m = r.m;
        if let Some(o) = r.open {
            let name = match o {
                Open::Kernel(k) => k.name,
                Open::Host(h, _, _) => h.name,
            };
            return Err(perr(body.lines().count(), format!("kernel `{name}` is not closed with `end`")));
        }
        // Plans are checked against the kernels once every block is read.
        let checked: Vec<Option<String>> = m.hosts.iter().map(|h| h.validate(|k| m.kernel(k)).err()).collect();
        for (h, e) in m.hosts.iter_mut().zip(checked) {
            if h.plan_error.is_none() {
                h.plan_error = e;
            }
            // Never a partial plan: a refused host keeps its reason and its summaries only.
            if h.plan_error.is_some() {
                h.steps.clear();
                h.launches.clear();
            }
        }
        Ok(m)
    }
}

impl Reader {
    /// Inside `launch ... endlaunch`: plan records. A malformed record marks the host's plan
    /// unusable instead of failing the whole manifest. Returns whether the line was consumed.
    fn launch_record(&mut self, no: usize, fields: &[&str]) -> bool {
        if let Some(Open::Host(h, Some(l), _)) = &mut self.open {
            if fields.first() == Some(&"endlaunch") {
                if let Some(Open::Host(h, Some(l), _)) = &mut self.open {
                    h.steps.push(HostStep::Launch(h.launches.len()));
                    h.launches.push(std::mem::replace(l, LaunchPlan::new("")));
                }
                if let Some(Open::Host(_, l, _)) = &mut self.open {
                    *l = None;
                }
                return true;
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
                if let Some(Open::Host(_, l, _)) = &mut self.open {
                    *l = None;
                }
            } else {
                if let Err(e) = l.parse_line(&fields.join(" ")) {
                    h.plan_error.get_or_insert(format!("line {no}: {e}"));
                }
                return true;
            }
        }
        false
    }

    /// A record outside `launch ... endlaunch`: blocks, parameters and checks here, the rest in
    /// [`Reader::kernel_or_host_record`].
    fn record(&mut self, no: usize, line: &str, fields: &[&str]) -> Result<(), ManifestError> {
        match fields.first().copied() {
            None => {}
            Some("arch") => self.m.arch = fields.get(1).map(|s| s.to_string()),
            Some(kw @ ("kernel" | "host")) => {
                if let Some(o) = &self.open {
                    let name = match o {
                        Open::Kernel(k) => &k.name,
                        Open::Host(h, _, _) => &h.name,
                    };
                    return Err(perr(no, format!("`{kw}` inside `{name}` (missing `end`)")));
                }
                let name = fields.get(1).ok_or_else(|| perr(no, format!("`{kw}` without a name")))?;
                self.smem_seen = false;
                self.open = Some(if kw == "host" {
                    Open::Host(HostSig::new(name), None, StepNesting::default())
                } else {
                    Open::Kernel(KernelSig {
                        name: name.to_string(),
                        params: Vec::new(),
                        requires: Vec::new(),
                        dynamic_smem_bytes: 0,
                        fast_divisors: Vec::new(),
                        tmas: Vec::new(),
                        cluster: [1, 1, 1],
                        index_bits: 32,
                        asserts: false,
                    })
                });
            }
            Some("param") => match &mut self.open {
                Some(Open::Kernel(k)) => {
                    let p = parse_param(no, fields)?;
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
                Some(Open::Host(h, _, _)) => h.params.push(parse_param(no, fields)?),
                None => return Err(perr(no, "`param` outside a kernel")),
            },
            Some("require") => {
                let rest = line.trim_start().strip_prefix("require").unwrap_or("");
                match (&mut self.open, Require::parse(rest)) {
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
                match (&mut self.open, Assert::parse(rest)) {
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
                if let Some(Open::Host(h, _, _)) = &mut self.open {
                    let rest = line.trim_start().strip_prefix("print").unwrap_or("");
                    match parse_print(rest) {
                        Ok(segs) => h.steps.push(HostStep::Print(segs)),
                        Err(e) => {
                            h.plan_error.get_or_insert(format!("line {no}: {e}"));
                        }
                    }
                }
            }
            Some("end") => match self.open.take() {
                Some(Open::Host(mut h, _, ifs)) => {
                    let (unclosed_ifs, unclosed_fors) = ifs.unclosed();
                    if unclosed_ifs > 0 {
                        h.plan_error.get_or_insert(format!("line {no}: {unclosed_ifs} `if` not closed with `endif`"));
                    }
                    if unclosed_fors > 0 {
                        h.plan_error
                            .get_or_insert(format!("line {no}: {unclosed_fors} `for` not closed with `endfor`"));
                    }
                    self.m.hosts.push(h)
                }
                Some(Open::Kernel(k)) => self.m.kernels.push(k),
                None => return Err(perr(no, "`end` without a kernel")),
            },
            _ => self.kernel_or_host_record(no, line, fields)?,
        }
        Ok(())
    }

    /// The records of one kind of block: a kernel's `smem`, `cluster`, `fastdiv` and `tma`; a
    /// host's `instance`, `typearg`, `launches`, `launch` and control flow. Unknown records are a
    /// later minor addition: ignored.
    fn kernel_or_host_record(&mut self, no: usize, line: &str, fields: &[&str]) -> Result<(), ManifestError> {
        match fields.first().copied() {
            // A kernel's dynamic shared memory; outside a kernel block (in a host block, outside
            // a `launch`) it means nothing and is ignored. Skipping a malformed one would let
            // launches through unchecked, so it fails the manifest.
            // `cluster X Y Z`: the kernel's cluster shape. A malformed line fails the
            // manifest: skipping it would launch grids the kernel cannot run.
            Some("cluster") => {
                if let Some(Open::Kernel(k)) = &mut self.open {
                    let dims: Option<Vec<u32>> =
                        fields[1..].iter().map(|f| f.parse::<u32>().ok().filter(|&d| d >= 1)).collect();
                    match dims.as_deref() {
                        Some(&[x, y, z]) if k.cluster == [1, 1, 1] => k.cluster = [x, y, z],
                        Some(&[_, _, _]) => {
                            return Err(perr(no, format!("kernel `{}`: a second `cluster` line", k.name)))
                        }
                        _ => {
                            return Err(perr(
                                no,
                                format!(
                                "kernel `{}`: bad `cluster` line `{line}` (expected `cluster X Y Z`, each at least 1)",
                                k.name
                            ),
                            ))
                        }
                    }
                }
            }
            // `index 64`: the kernel's index math is 64-bit. A malformed line fails the manifest:
            // skipping it would pass `i32` extents to a kernel that reads `i64` ones.
            Some("index") => {
                if let Some(Open::Kernel(k)) = &mut self.open {
                    match fields {
                        ["index", "64"] if k.index_bits == 32 => k.index_bits = 64,
                        _ => {
                            return Err(perr(
                                no,
                                format!("kernel `{}`: bad `index` line `{line}` (expected one `index 64`)", k.name),
                            ))
                        }
                    }
                }
            }
            // `asserts`: the kernel has run-time asserts compiled in. Only a hint (how a trap is
            // explained), so a malformed line fails nothing: it is ignored.
            Some("asserts") => {
                if let (Some(Open::Kernel(k)), ["asserts"]) = (&mut self.open, fields) {
                    k.asserts = true;
                }
            }
            Some("smem") => {
                if let Some(Open::Kernel(k)) = &mut self.open {
                    let bytes = match fields[1..] {
                        [v] => v.parse::<u32>().ok(),
                        _ => None,
                    };
                    match bytes {
                            Some(b) if !self.smem_seen => {
                                k.dynamic_smem_bytes = b;
                                self.smem_seen = true;
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
                if let Some(Open::Host(h, _, _)) = &mut self.open {
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
            Some("tuned") => {
                if let Some(Open::Host(h, _, _)) = &mut self.open {
                    h.tuned.push(line["tuned".len()..].trim().to_string());
                }
            }
            Some("typearg") => {
                if let Some(Open::Host(h, _, _)) = &mut self.open {
                    match TypeArgSig::parse(&fields[1..], &h.params) {
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
                if let Some(Open::Kernel(k)) = &mut self.open {
                    let rest = line.trim_start().strip_prefix("fastdiv").unwrap_or("");
                    match Expr::parse(rest.trim()) {
                        Ok(e) => k.fast_divisors.push(e),
                        Err(e) => return Err(perr(no, format!("kernel `{}`: bad `fastdiv` line: {e}", k.name))),
                    }
                }
            }
            // A TMA tensor map: a 128-byte kernel parameter. Skipping one would launch the
            // kernel without it, so a malformed one fails the manifest.
            Some("tma") => {
                if let Some(Open::Kernel(k)) = &mut self.open {
                    match TmaSig::parse(&fields[1..], k) {
                        Ok(t) => k.tmas.push(t),
                        Err(e) => return Err(perr(no, format!("kernel `{}`: bad `tma` line: {e}", k.name))),
                    }
                }
            }
            // `unusable s:HEX`: a host whose plan was refused when it was read, written back
            // (by a tool that read and rewrote the manifest) with the reason, never as a host
            // with an empty plan that a call would run.
            Some("unusable") => {
                if let Some(Open::Host(h, _, _)) = &mut self.open {
                    let why = fields.get(1).map_or_else(|| Err("no reason".to_string()), |f| hex_text(f));
                    h.plan_error.get_or_insert(why.unwrap_or_else(|e| format!("line {no}: bad `unusable` line: {e}")));
                }
            }
            Some("launches") => {
                if let (Some(Open::Host(h, _, _)), Some(k)) = (&mut self.open, fields.get(1)) {
                    h.launches_kernels.push(k.to_string());
                }
            }
            // A run-time `if` of a host: `if COND`, the branch, [`else`, the branch,] `endif`;
            // a run-time loop: `for $K | START | END | STEP`, the body, `endfor`, with `break`
            // and `continue` inside. A malformed one makes the host's plan unusable (never a
            // partial plan).
            Some(kw @ ("if" | "else" | "endif" | "for" | "endfor" | "break" | "continue")) => {
                if let Some(Open::Host(h, _, ifs)) = &mut self.open {
                    let rest = line.trim_start().strip_prefix(kw).unwrap_or("");
                    if let Err(e) = branch_record(h, ifs, kw, rest) {
                        h.plan_error.get_or_insert(format!("line {no}: {e}"));
                    }
                }
            }
            Some("launch") => match (&mut self.open, fields.get(1)) {
                (Some(Open::Host(_, l, _)), Some(k)) => *l = Some(LaunchPlan::new(k)),
                (Some(Open::Host(h, _, _)), None) => {
                    h.plan_error.get_or_insert(format!("line {no}: `launch` without a kernel name"));
                }
                _ => {} // outside a host: unknown here, ignore
            },
            _ => {}
        }
        Ok(())
    }
}
