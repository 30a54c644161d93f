//! A tuned host function (`cutec build --tuning FILE`): its body elaborated once per bucket of
//! the tuning table, each time with the `const` items as the bucket's winner sets them, under
//! run-time `if`s over the call's extents ([`crate::tune::dispatch`], the bucket rule). Kernels
//! instantiated under a winner's consts are instances of their own (the consts are part of the
//! instance key), so the cubin holds every winner and the plan picks one per call.

use std::collections::HashMap;

use super::frame::{Frame, Mode};
use super::value::Value;
use super::{Program, R};
use crate::ast::{ConstItem, Expr, File, Function, Item};
use crate::diag::Diagnostic;
use crate::kir::{self, CmpOp, HostCond};
use crate::tune::{self, Dispatch, Table};
use cute_layout::Int;

/// What [`Program`] keeps of one tuned host function.
pub(super) struct Tuned {
    /// Per shape variable, the (parameter, extent) it is read from.
    var_at: Vec<(usize, usize)>,
    dispatch: Dispatch,
    /// Per table entry, its set of const values (an index into [`Program::variants`], from 1).
    variant_of: Vec<usize>,
    /// The manifest's `tuned` lines.
    pub(super) lines: Vec<String>,
}

impl<'f> Program<'f> {
    /// Reads the tuning table against the file's `tune` blocks and evaluates each winner's consts.
    pub(super) fn prepare_tuning(&mut self, file: &'f File, source: &str, table: &Table) -> R<()> {
        let specs = tune::specs(file, source).map_err(|mut d| d.remove(0))?;
        let by_host = tune::entries_by_host(&specs, source, table).map_err(|m| {
            let span = specs.first().map_or(crate::span::Span::new(0, 0), |s| s.block.span);
            Diagnostic::error(format!("--tuning: {m}"), span, "tune block")
                .with_help("run `cutec tune` again on this source")
        })?;
        for s in &specs {
            let Some(entries) = by_host.get(&s.host.name.name) else { continue };
            let mut variant_of = Vec::new();
            for e in entries {
                let values: HashMap<&str, &'f Expr> =
                    e.consts.iter().filter_map(|(k, v)| s.candidate(source, k, v).map(|x| (k.as_str(), x))).collect();
                let key: Vec<String> = e.consts.iter().map(|(k, v)| format!("{k}={v}")).collect();
                let key = key.join(";");
                let at = match self.variant_keys.iter().position(|k| *k == key) {
                    Some(i) => i + 1,
                    None => {
                        let env = self.const_env(file, &values)?;
                        self.variants.push(env);
                        self.variant_keys.push(key);
                        self.variants.len()
                    }
                };
                variant_of.push(at);
            }
            let shapes: Vec<Vec<i64>> = entries.iter().map(|e| e.shape.clone()).collect();
            let lines = entries.iter().map(|e| tune::entry_text(e)).collect();
            let tuned = Tuned { var_at: s.var_at.clone(), dispatch: tune::dispatch(&shapes), variant_of, lines };
            self.tuned.insert(s.host.name.name.clone(), tuned);
        }
        Ok(())
    }

    /// The file's consts evaluated in order with `values` in place of theirs.
    fn const_env(&mut self, file: &'f File, values: &HashMap<&str, &'f Expr>) -> R<HashMap<String, Value>> {
        let saved = std::mem::take(&mut self.consts);
        for item in &file.items {
            let Item::Const(c) = item else { continue };
            let r = match values.get(c.name.name.as_str()) {
                Some(v) => Frame::new(self, Mode::Const).const_item(&ConstItem { value: (*v).clone(), ..c.clone() }),
                None => Frame::new(self, Mode::Const).const_item(c),
            };
            match r {
                Ok(v) => {
                    self.consts.insert(c.name.name.clone(), v);
                }
                Err(d) => {
                    self.consts = saved;
                    return Err(d);
                }
            }
        }
        Ok(std::mem::replace(&mut self.consts, saved))
    }
}

impl Frame<'_, '_> {
    /// A host function's body: as written, or under the tuning table's dispatch.
    pub(super) fn host_body(&mut self, f: &Function) -> R<()> {
        let Some(t) = self.prog.tuned.get(&f.name.name) else { return self.stmts(&f.body.stmts).map(drop) };
        let (var_at, dispatch, variant_of) = (t.var_at.clone(), t.dispatch.clone(), t.variant_of.clone());
        let mut extents = Vec::new();
        for (param, dim) in var_at {
            let p = &f.params[param];
            let leaves = match self.lookup(&p.name.name) {
                Some(Value::Tensor(t)) => t.ty.layout.shape.leaves(),
                _ => Vec::new(),
            };
            let extent = leaves.get(dim).cloned().ok_or_else(|| {
                Diagnostic::error(
                    format!(
                        "the `tune` block reads extent {dim} of `{}`, whose shape has {} extents",
                        p.name.name,
                        leaves.len()
                    ),
                    p.span,
                    "parameter here",
                )
            })?;
            extents.push(extent);
        }
        self.dispatch(f, &dispatch, &variant_of, &extents)
    }

    fn dispatch(&mut self, f: &Function, d: &Dispatch, variant_of: &[usize], x: &[Int]) -> R<()> {
        match d {
            Dispatch::Leaf(i) => {
                let variant = variant_of[*i];
                let env = std::mem::replace(&mut self.prog.consts, self.prog.variants[variant - 1].clone());
                let outer = std::mem::replace(&mut self.prog.variant, variant);
                self.scopes.push(HashMap::new());
                let r = self.stmts(&f.body.stmts);
                self.scopes.pop();
                self.prog.variant = outer;
                self.prog.consts = env;
                r.map(drop)
            }
            Dispatch::Split { var, below_than, below, rest } => {
                let cond = HostCond::Cmp { lhs: x[*var].clone(), op: CmpOp::Lt, rhs: Int::S(*below_than) };
                let then = self.host_branch(|fr| fr.dispatch(f, below, variant_of, x).map(|()| Default::default()))?;
                let els = self.host_branch(|fr| fr.dispatch(f, rest, variant_of, x).map(|()| Default::default()))?;
                self.steps.push(kir::HostStep::If { cond, then, els, span: f.span });
                Ok(())
            }
        }
    }
}
