//! `tune` blocks and tuning tables (docs/language.md, "Tuning").
//!
//! A `tune` block names a host function, the shape variables `--shapes` gives values to, the
//! top-level `const`s to try with their candidate values, and how to make the host function's
//! arguments for a shape. [`specs`] checks the blocks against the file; `cutec tune` prints them
//! ([`TuneSpec::to_json`]) for the timing side. The winners come back as a [`Table`]
//! (`cutec build --tuning FILE`), which elaboration turns into run-time `if`s over the shape
//! ([`Dispatch`]): the bucket rule is here, in one place.

use std::collections::HashMap;

use crate::ast::{Expr, ExprKind, File, FnKind, Function, Item, TuneBlock};
use crate::diag::Diagnostic;
use crate::span::Span;
use crate::types::Scalar;

/// A checked `tune` block.
#[derive(Clone, Debug, PartialEq)]
pub struct TuneSpec<'f> {
    pub block: &'f TuneBlock,
    pub host: &'f Function,
    /// Per shape variable, the (argument, extent) it is read from at run time: the first tensor
    /// argument with the bare variable as an extent.
    pub var_at: Vec<(usize, usize)>,
    pub args: Vec<TuneArg>,
}

/// How `args(...)` makes one argument for a shape; extents are integer expressions over the
/// shape variables (source text: `M`, `M * N`, `N / 2`).
#[derive(Clone, Debug, PartialEq)]
pub enum TuneArg {
    /// `rand(T, (E, ...))` (an input, uniform in [-1, 1)) or `zeros(T, (E, ...))` (an output,
    /// compared against the default instance's after the call): a row-major tensor.
    Tensor { init: &'static str, dtype: Scalar, shape: Vec<String> },
    /// An integer expression: an `i32` scalar argument.
    Int(String),
}

fn err(message: impl Into<String>, span: Span, label: &str) -> Diagnostic {
    Diagnostic::error(message, span, label)
}

/// The file's `tune` blocks, checked: `tune` spelled so, a non-generic host function of the file,
/// one block per host, shape variables, candidates of top-level `const`s, and one `args(...)` whose
/// arguments fit the host's parameters.
pub fn specs<'f>(file: &'f File, source: &str) -> Result<Vec<TuneSpec<'f>>, Vec<Diagnostic>> {
    let mut out: Vec<TuneSpec> = Vec::new();
    let mut diags = Vec::new();
    for b in &file.tunes {
        match spec(file, source, b) {
            Ok(s) => {
                if let Some(prev) = out.iter().find(|p| p.host.name.name == s.host.name.name) {
                    diags.push(
                        err(format!("`{}` has two `tune` blocks", b.host.name), b.host.span, "second block")
                            .with_secondary(prev.block.host.span, "first block")
                            .with_help("list every const in one block"),
                    );
                } else {
                    out.push(s);
                }
            }
            Err(d) => diags.push(d),
        }
    }
    if diags.is_empty() {
        Ok(out)
    } else {
        Err(diags)
    }
}

fn spec<'f>(file: &'f File, source: &str, b: &'f TuneBlock) -> Result<TuneSpec<'f>, Diagnostic> {
    let host = file.functions().find(|f| f.name.name == b.host.name && f.kind == FnKind::Host).ok_or_else(|| {
        err(
            format!("`tune {}`: the file has no host function `{}`", b.host.name, b.host.name),
            b.host.span,
            "no such host function",
        )
        .with_help("a `tune` block names a `host` function of its file")
    })?;
    if !host.type_params.is_empty() {
        return Err(err(
            format!("`{}` is generic: a `tune` block takes a host function of fixed types", b.host.name),
            b.host.span,
            "generic host function",
        )
        .with_help("tune a non-generic host function that calls the same code (`host add_f16(...) { ... }`)"));
    }
    if b.vars.is_empty() {
        return Err(err("a `tune` block names its shape's variables", b.host.span, "no variables").with_help(format!(
            "write `tune {}(M, N) {{ ... }}`, as many variables as `--shapes` gives extents",
            b.host.name
        )));
    }
    for (i, v) in b.vars.iter().enumerate() {
        if b.vars[..i].iter().any(|w| w.name == v.name) {
            return Err(err(format!("shape variable `{}` is named twice", v.name), v.span, "again"));
        }
    }
    let consts: Vec<&str> = file
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Const(c) => Some(c.name.name.as_str()),
            Item::Function(_) => None,
        })
        .collect();
    if b.consts.is_empty() {
        return Err(err("a `tune` block lists the consts to try", b.span, "no `const NAME in [...]`")
            .with_help("add `const NAME in [V1, V2];` naming a top-level `const` and its candidate values"));
    }
    for (i, c) in b.consts.iter().enumerate() {
        if !consts.contains(&c.name.name.as_str()) {
            return Err(err(format!("`{}` is not a top-level `const` of this file", c.name.name), c.name.span, "no such const")
                .with_help("a `tune` block tries values of `const` items (`const ILP = 2;`), which keep their value as the default"));
        }
        if b.consts[..i].iter().any(|d| d.name.name == c.name.name) {
            return Err(err(format!("`{}` is listed twice", c.name.name), c.name.span, "again"));
        }
        if c.values.is_empty() {
            return Err(err(format!("`{}` has no candidate values", c.name.name), c.span, "empty list"));
        }
        if let Some(v) = c.values.iter().find(|v| text(source, v.span).contains(['\n', '\r'])) {
            return Err(err("a candidate value is written on one line", v.span, "spans lines"));
        }
    }
    let (word, list) = match b.args.as_slice() {
        [(word, list)] if word.name == "args" => (word, list),
        [(word, _)] => {
            return Err(err(
                format!("unexpected `{}(...)` in a `tune` block", word.name),
                word.span,
                "expected `args(...)`",
            ))
        }
        [] => {
            return Err(err("a `tune` block says how to make the arguments", b.span, "no `args(...)`").with_help(
                "add `args(rand(f16, (M, N)), zeros(f16, (M, N)));`: `rand` inputs, `zeros` outputs, integers",
            ))
        }
        [_, (second, _), ..] => return Err(err("a `tune` block has one `args(...)`", second.span, "second `args`")),
    };
    if list.len() != host.params.len() {
        return Err(err(
            format!("`args` gives {} arguments, `{}` takes {}", list.len(), host.name.name, host.params.len()),
            word.span,
            "wrong number of arguments",
        )
        .with_secondary(host.name.span, "declared here"));
    }
    let vars: Vec<&str> = b.vars.iter().map(|v| v.name.as_str()).collect();
    let mut args = Vec::new();
    let mut var_at: Vec<Option<(usize, usize)>> = vec![None; vars.len()];
    for (k, (a, p)) in list.iter().zip(&host.params).enumerate() {
        let param_is_tensor = matches!(p.ty, crate::ast::TypeExpr::Tensor { .. });
        let arg = tune_arg(a, &vars)?;
        if let TuneArg::Tensor { shape, .. } = &arg {
            if !param_is_tensor {
                return Err(err(
                    format!("`{}` is not a tensor parameter", p.name.name),
                    a.span,
                    "a tensor for a scalar",
                )
                .with_secondary(p.span, "declared here"));
            }
            for (d, e) in shape.iter().enumerate() {
                if let Some(v) = vars.iter().position(|v| v == e) {
                    var_at[v].get_or_insert((k, d));
                }
            }
        } else if param_is_tensor {
            return Err(err(format!("`{}` is a tensor parameter", p.name.name), a.span, "not a tensor")
                .with_help("make a tensor with `rand(T, (M, N))` (an input) or `zeros(T, (M, N))` (an output)"));
        }
        args.push(arg);
    }
    let var_at = var_at
        .into_iter()
        .zip(&b.vars)
        .map(|(at, v)| {
            at.ok_or_else(|| {
                err(format!("shape variable `{}` is no extent of a tensor argument", v.name), v.span, "not read from the arguments")
                    .with_help("the tuned call finds the shape in its tensors: use each variable alone as an extent (`rand(f16, (M, N))`)")
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(TuneSpec { block: b, host, var_at, args })
}

fn text(source: &str, span: Span) -> &str {
    source.get(span.range()).unwrap_or("")
}

fn tune_arg(a: &Expr, vars: &[&str]) -> Result<TuneArg, Diagnostic> {
    if let ExprKind::Call { callee, args } = &a.kind {
        let init = match callee.name.as_str() {
            "rand" => "rand",
            "zeros" => "zeros",
            other => {
                return Err(err(format!("`{other}` is not a `tune` argument maker"), callee.span, "unknown").with_help(
                    "`rand(T, (M, N))` makes an input, `zeros(T, (M, N))` an output; an integer expression a scalar",
                ))
            }
        };
        let (dtype, shape) = match args.as_slice() {
            [t, s] if t.name.is_none() && s.name.is_none() => (&t.value, &s.value),
            _ => {
                return Err(err(
                    format!("`{init}` takes an element type and a shape: `{init}(f16, (M, N))`"),
                    a.span,
                    "bad arguments",
                ))
            }
        };
        let dtype = match &dtype.kind {
            ExprKind::Name(n) => Scalar::from_name(n),
            _ => None,
        }
        .ok_or_else(|| err("expected an element type (`f16`, `bf16`, `f32`, ...)", dtype.span, "not a type"))?;
        let extents: Vec<&Expr> = match &shape.kind {
            ExprKind::Tuple(items) => items.iter().collect(),
            _ => vec![shape],
        };
        let shape = extents.into_iter().map(|e| int_expr(e, vars)).collect::<Result<_, _>>()?;
        return Ok(TuneArg::Tensor { init, dtype, shape });
    }
    int_expr(a, vars).map(TuneArg::Int)
}

/// An integer expression over the shape variables (literals, variables, `+ - * / %`, parentheses),
/// written out (`M * N`, `(M + 1) / 2`).
fn int_expr(e: &Expr, vars: &[&str]) -> Result<String, Diagnostic> {
    use crate::ast::BinOp::*;
    let sub = |x: &Expr| -> Result<String, Diagnostic> {
        let t = int_expr(x, vars)?;
        Ok(if matches!(x.kind, ExprKind::Binary(..)) { format!("({t})") } else { t })
    };
    match &e.kind {
        ExprKind::Int(v) => Ok(v.to_string()),
        ExprKind::Name(n) if vars.contains(&n.as_str()) => Ok(n.clone()),
        ExprKind::Binary(op @ (Add | Sub | Mul | Div | Rem), l, r) => {
            let sym = match op {
                Add => "+",
                Sub => "-",
                Mul => "*",
                Div => "/",
                _ => "%",
            };
            Ok(format!("{} {sym} {}", sub(l)?, sub(r)?))
        }
        _ => Err(err("expected an integer expression of the shape variables", e.span, "not one")
            .with_help(format!("extents and scalars are integers: the variables {} and `+ - * / %`", vars.join(", ")))),
    }
}

impl<'f> TuneSpec<'f> {
    /// The block for the timing side (python/cutec/tune.py): one JSON object.
    pub fn to_json(&self, source: &str) -> String {
        let q = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
        let list = |v: Vec<String>| format!("[{}]", v.join(", "));
        let consts = self.block.consts.iter().map(|c| {
            let values = c.values.iter().map(|v| q(text(source, v.span))).collect();
            format!("{{\"name\": {}, \"values\": {}}}", q(&c.name.name), list(values))
        });
        let args = self.args.iter().map(|a| match a {
            TuneArg::Tensor { init, dtype, shape } => format!(
                "{{\"kind\": {}, \"dtype\": {}, \"shape\": {}}}",
                q(init),
                q(dtype.name()),
                list(shape.iter().map(|s| q(s)).collect())
            ),
            TuneArg::Int(e) => format!("{{\"kind\": \"int\", \"value\": {}}}", q(e)),
        });
        format!(
            "{{\"host\": {}, \"vars\": {}, \"consts\": {}, \"args\": {}}}",
            q(&self.host.name.name),
            list(self.block.vars.iter().map(|v| q(&v.name)).collect()),
            list(consts.collect()),
            list(args.collect())
        )
    }

    /// The candidate value of `name` written `value` (spaces ignored), if it is one.
    pub fn candidate(&self, source: &str, name: &str, value: &str) -> Option<&'f Expr> {
        let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        let c = self.block.consts.iter().find(|c| c.name.name == name)?;
        c.values.iter().find(|v| squash(text(source, v.span)) == squash(value))
    }
}

/// One line of a tuning table: a host function, a shape it was timed at and the winning values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableEntry {
    pub host: String,
    pub shape: Vec<i64>,
    /// `(const, value text)` in the block's order.
    pub consts: Vec<(String, String)>,
}

/// A tuning table (`cutec build --tuning FILE`, written by `cutec tune`): lines
/// `HOST M,N | NAME=VALUE; NAME=VALUE`, `#` comments and blank lines ignored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    pub entries: Vec<TableEntry>,
}

impl Table {
    /// Parses a table; errors name the line (1-based).
    pub fn parse(text: &str) -> Result<Table, String> {
        let mut entries = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |why: &str| format!("line {}: {why} (expected `HOST M,N | NAME=VALUE; NAME=VALUE`)", n + 1);
            let (head, consts) = line.split_once('|').ok_or_else(|| bad("no `|`"))?;
            let mut words = head.split_whitespace();
            let (Some(host), Some(shape), None) = (words.next(), words.next(), words.next()) else {
                return Err(bad("expected a host function's name and a shape before `|`"));
            };
            let shape = shape
                .split(',')
                .map(|x| x.trim().parse::<i64>().ok().filter(|v| *v > 0))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| bad(&format!("`{shape}` is not a shape of positive integers")))?;
            let consts = consts
                .split(';')
                .filter(|c| !c.trim().is_empty())
                .map(|c| {
                    let (k, v) = c.split_once('=').ok_or_else(|| bad(&format!("`{}` is not NAME=VALUE", c.trim())))?;
                    Ok((k.trim().to_string(), v.trim().to_string()))
                })
                .collect::<Result<Vec<_>, String>>()?;
            entries.push(TableEntry { host: host.to_string(), shape, consts });
        }
        Ok(Table { entries })
    }
}

/// The line of `e` as the manifest's `tuned` records and the table write it.
pub fn entry_text(e: &TableEntry) -> String {
    let shape: Vec<String> = e.shape.iter().map(i64::to_string).collect();
    let consts: Vec<String> = e.consts.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{} | {}", shape.join(","), consts.join("; "))
}

/// The run-time choice among a host's tuned shapes: `Split` is `if x[var] < below_than { below }
/// else { rest }`, a `Leaf` the index of the winning table entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dispatch {
    Leaf(usize),
    Split { var: usize, below_than: i64, below: Box<Dispatch>, rest: Box<Dispatch> },
}

/// The bucket rule. Each extent of a call is snapped to the nearest extent tuned on that axis on a
/// log scale (the boundary between tuned extents `a < b` is their geometric mean: `x` goes to `a`
/// when `x * x < a * b`); the snapped shape takes the winner of the tuned shape nearest to it (the
/// sum over the axes of |log2 ratio|, ties to the earlier shape). A tuned shape is its own bucket.
pub fn dispatch(shapes: &[Vec<i64>]) -> Dispatch {
    let axes: Vec<Vec<i64>> = (0..shapes.first().map_or(0, Vec::len))
        .map(|i| {
            let mut v: Vec<i64> = shapes.iter().map(|s| s[i]).collect();
            v.sort_unstable();
            v.dedup();
            v
        })
        .collect();
    build(shapes, &axes, &mut Vec::new())
}

fn build(shapes: &[Vec<i64>], axes: &[Vec<i64>], point: &mut Vec<i64>) -> Dispatch {
    let axis = point.len();
    if axis == axes.len() {
        return Dispatch::Leaf(nearest(shapes, point));
    }
    let values = &axes[axis];
    let mut parts = Vec::new();
    for &v in values {
        point.push(v);
        parts.push(build(shapes, axes, point));
        point.pop();
    }
    // Right to left: `if x < boundary(v0, v1) { part0 } else if x < boundary(v1, v2) { part1 } else ...`.
    let mut tree = parts.pop().unwrap_or(Dispatch::Leaf(0));
    for (j, part) in parts.into_iter().enumerate().rev() {
        tree = if part == tree {
            tree
        } else {
            Dispatch::Split {
                var: axis,
                below_than: boundary(values[j], values[j + 1]),
                below: Box::new(part),
                rest: Box::new(tree),
            }
        };
    }
    tree
}

/// The least `x` with `x * x >= a * b` (`x < boundary` is nearer `a` on a log scale).
fn boundary(a: i64, b: i64) -> i64 {
    let p = i128::from(a) * i128::from(b);
    let mut x = (p as f64).sqrt() as i128;
    while x * x < p {
        x += 1;
    }
    while x > 0 && (x - 1) * (x - 1) >= p {
        x -= 1;
    }
    x as i64
}

fn nearest(shapes: &[Vec<i64>], point: &[i64]) -> usize {
    let dist =
        |s: &Vec<i64>| -> f64 { s.iter().zip(point).map(|(a, b)| ((*a as f64) / (*b as f64)).log2().abs()).sum() };
    let mut best = 0;
    for (i, s) in shapes.iter().enumerate() {
        if dist(s) < dist(&shapes[best]) {
            best = i;
        }
    }
    best
}

impl Dispatch {
    /// The table entry a call of this shape takes (what the elaborated `if`s choose).
    pub fn pick(&self, x: &[i64]) -> usize {
        match self {
            Dispatch::Leaf(i) => *i,
            Dispatch::Split { var, below_than, below, rest } => {
                if x[*var] < *below_than {
                    below.pick(x)
                } else {
                    rest.pick(x)
                }
            }
        }
    }
}

/// The entries of `table` for each tuned host function, checked against the file's `tune` blocks:
/// a host with a block, a shape of its variables' count, each value a candidate of the block.
pub fn entries_by_host<'t>(
    specs: &[TuneSpec],
    source: &str,
    table: &'t Table,
) -> Result<HashMap<String, Vec<&'t TableEntry>>, String> {
    let mut out: HashMap<String, Vec<&TableEntry>> = HashMap::new();
    for e in &table.entries {
        let s = specs
            .iter()
            .find(|s| s.host.name.name == e.host)
            .ok_or_else(|| format!("the tuning table names `{}`, which has no `tune` block in the source", e.host))?;
        if e.shape.len() != s.block.vars.len() {
            return Err(format!(
                "the tuning table gives `{}` a shape of {} extents; its `tune` block has {} variables",
                e.host,
                e.shape.len(),
                s.block.vars.len()
            ));
        }
        for (k, v) in &e.consts {
            if s.candidate(source, k, v).is_none() {
                return Err(format!(
                    "the tuning table sets `{k} = {v}` for `{}`: not a candidate of its `tune` block",
                    e.host
                ));
            }
        }
        out.entry(e.host.clone()).or_default().push(e);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "const ILP = 2;\nconst THREADS = 256;\n\
        host h(a: tensor<f16, gmem, (?,?):(?,1)>, c: tensor<f16, gmem, (?,?):(?,1)>, n: i32) {}\n\
        tune h(M, N) {\n  const ILP in [1, 2, 4];\n  const THREADS in [128, 256];\n  args(rand(f16, (M, N)), zeros(f16, (M, N)), M * N);\n}\n";

    #[test]
    fn reads_a_block() {
        let file = crate::parse(SRC).unwrap();
        let specs = specs(&file, SRC).unwrap();
        assert_eq!(specs.len(), 1);
        assert_eq!(specs[0].var_at, vec![(0, 0), (0, 1)]);
        assert_eq!(
            specs[0].to_json(SRC),
            "{\"host\": \"h\", \"vars\": [\"M\", \"N\"], \"consts\": [{\"name\": \"ILP\", \"values\": [\"1\", \"2\", \"4\"]}, \
             {\"name\": \"THREADS\", \"values\": [\"128\", \"256\"]}], \"args\": [{\"kind\": \"rand\", \"dtype\": \"f16\", \
             \"shape\": [\"M\", \"N\"]}, {\"kind\": \"zeros\", \"dtype\": \"f16\", \"shape\": [\"M\", \"N\"]}, {\"kind\": \"int\", \"value\": \"M * N\"}]}"
        );
    }

    fn first_error(src: &str) -> String {
        let file = crate::parse(src).unwrap();
        specs(&file, src).unwrap_err()[0].message.clone()
    }

    #[test]
    fn refuses_bad_blocks() {
        let cases = [
            ("tune h(M, N)", "tune g(M, N)", "the file has no host function `g`"),
            ("const ILP in", "const IL in", "`IL` is not a top-level `const`"),
            ("[128, 256]", "[]", "`THREADS` has no candidate values"),
            (", M * N);", ");", "`args` gives 2 arguments, `h` takes 3"),
            ("M * N);", "rand(f16, (M, N)));", "`n` is not a tensor parameter"),
            ("zeros(f16, (M, N))", "M", "`c` is a tensor parameter"),
            ("zeros(f16, (M, N))", "ones(f16, (M, N))", "`ones` is not a `tune` argument maker"),
            ("rand(f16, (M, N))", "rand(q8, (M, N))", "expected an element type"),
            ("M * N);", "K);", "expected an integer expression of the shape variables"),
            ("tune h(M, N)", "tune h(M, N, K)", "shape variable `K` is no extent of a tensor argument"),
            ("  args(", "  const ILP in [8];\n  args(", "`ILP` is listed twice"),
        ];
        for (from, to, want) in cases {
            let src = SRC.replacen(from, to, 1);
            let got = first_error(&src);
            assert!(got.contains(want), "{to}: {got}");
        }
        let twice = format!("{SRC}tune h(M) {{ const ILP in [1]; args(rand(f16, (M, 1)), zeros(f16, (M, 1)), 1); }}\n");
        assert!(first_error(&twice).contains("`h` has two `tune` blocks"));
    }

    #[test]
    fn tables_round_trip_and_are_checked() {
        let t = Table::parse("# winners\nh 1024,4096 | ILP=2; THREADS=128\n\nh 64,64 | ILP = 4\n").unwrap();
        assert_eq!(t.entries.len(), 2);
        assert_eq!(entry_text(&t.entries[0]), "1024,4096 | ILP=2; THREADS=128");
        assert_eq!(t.entries[1].consts, vec![("ILP".to_string(), "4".to_string())]);
        for bad in ["h 1,2", "h | ILP=1", "h 1,x | ILP=1", "h 1,0 | ILP=1", "h 1,2 | ILP"] {
            assert!(Table::parse(bad).unwrap_err().starts_with("line 1: "), "{bad}");
        }
        let file = crate::parse(SRC).unwrap();
        let specs = specs(&file, SRC).unwrap();
        assert_eq!(entries_by_host(&specs, SRC, &t).unwrap()["h"].len(), 2);
        let e = |line: &str| entries_by_host(&specs, SRC, &Table::parse(line).unwrap()).unwrap_err();
        assert!(e("g 1,2 | ILP=1").contains("names `g`, which has no `tune` block"));
        assert!(e("h 1 | ILP=1").contains("a shape of 1 extents; its `tune` block has 2"));
        assert!(e("h 1,2 | ILP=3").contains("sets `ILP = 3` for `h`: not a candidate"));
    }

    #[test]
    fn buckets_by_log_distance() {
        let shapes = vec![vec![1024, 1024], vec![4096, 4096], vec![16384, 1024]];
        let d = dispatch(&shapes);
        // Each tuned shape is its own bucket.
        for (i, s) in shapes.iter().enumerate() {
            assert_eq!(d.pick(s), i);
        }
        // 2047 < sqrt(1024 * 4096) = 2048 <= 2048: the boundary is the geometric mean.
        assert_eq!(d.pick(&[2047, 1024]), 0);
        assert_eq!(d.pick(&[2048, 4096]), 1);
        assert_eq!(d.pick(&[1, 1]), 0);
        assert_eq!(d.pick(&[1 << 20, 900]), 2);
        // (16384, 4096) snaps to itself, nearest to (4096, 4096) (2 + 0) and (16384, 1024) (0 + 2): the earlier.
        assert_eq!(d.pick(&[16384, 4096]), 1);
        assert_eq!(dispatch(&[vec![7]]), Dispatch::Leaf(0));
        assert_eq!(boundary(2, 8), 4);
        assert_eq!(boundary(2, 3), 3);
    }
}
