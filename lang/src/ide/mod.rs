//! What an editor asks of the front end: the diagnostics of a file, what each name refers to and
//! what elaboration computed for it (types, layouts, TV layouts, per kernel instance), where it is
//! defined, and which names are in scope. One call, [`analyze`] (or [`analyze_files`] for a file
//! with imports), runs the whole front end with a recorder observing elaboration; the queries then
//! answer from its results. No MLIR here, and no file system: the caller's [`Loader`] finds the
//! imported files.

mod describe;
mod record;
pub(crate) mod resolve;

pub use describe::{describe, Fact, ValueInfo};
pub(crate) use record::Recorder;
pub use record::{BoundValue, BoundValues, MAX_VALUES};
pub use resolve::{
    builtin_functions, is_builtin_function, signature, DefKind, Definition, Index, Occurrence, Target, DIM3_NAMES,
};

use crate::diag::Diagnostic;
use crate::imports::{Loader, NoFiles};
use crate::sources::Sources;
use crate::span::Span;
use crate::types::Scalar;
use std::collections::HashMap;

/// The front end's results for one version of a file. Its spans are offsets in the span space of
/// [`Analysis::sources`]: the file analysed is at offset 0, the files it imports after it.
pub struct Analysis {
    /// Errors of loading, parsing and elaboration, as `cutec check` reports them (in any file).
    pub errors: Vec<Diagnostic>,
    /// Warnings `cutec check` reports too: what elaboration could not check (an mbarrier ring's
    /// counts).
    pub warnings: Vec<Diagnostic>,
    /// What only an editor reports (shown faded): `let` bindings of the file that are never used.
    pub unused: Vec<Diagnostic>,
    /// The file analysed and those it imports (as many as could be loaded), as analysed.
    pub sources: Sources,
    /// Absent when the file does not parse.
    parsed: Option<Parsed>,
}

struct Parsed {
    index: Index,
    bindings: HashMap<Span, BoundValues>,
    instances: HashMap<Span, Vec<String>>,
}

/// What the editor shows for the name under the cursor.
#[derive(Clone, Debug, PartialEq)]
pub struct Hover {
    /// The name.
    pub span: Span,
    pub subject: Subject,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Subject {
    /// A name the file defines, with what elaboration bound it to.
    Definition(Box<DefinitionHover>),
    Builtin(String),
    Method(String),
    Field(String),
    Type(Scalar),
    NamedArg {
        callee: String,
        name: String,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct DefinitionHover {
    pub def: Definition,
    /// The function a parameter or local belongs to.
    pub owner: Option<Definition>,
    pub values: BoundValues,
    /// For a kernel: the instances (cubin symbols) elaboration made of it.
    pub instances: Vec<String>,
    /// Why there are no values, when there are none for a parameter or local.
    pub no_values: Option<String>,
}

impl Parsed {
    fn definition_subject(&self, def: &Definition) -> Subject {
        let owner = def.owner.and_then(|o| self.index.defs.get(o)).cloned();
        let values = self.bindings.get(&def.span).cloned().unwrap_or_default();
        let instances = self.instances.get(&def.span).cloned().unwrap_or_default();
        let no_values = (values.values.is_empty()
            && !matches!(def.kind, DefKind::Kernel | DefKind::Host | DefKind::Helper))
        .then(|| self.why_no_values(owner.as_ref()));
        Subject::Definition(Box::new(DefinitionHover { def: def.clone(), owner, values, instances, no_values }))
    }

    fn why_no_values(&self, owner: Option<&Definition>) -> String {
        match owner {
            Some(k) if k.kind == DefKind::Kernel && !self.instances.contains_key(&k.span) => {
                format!("`{}` has no instance: it is generic (a tensor without a layout, or a `const` parameter) and no host function launches it", k.name)
            }
            Some(h) if h.kind == DefKind::Helper => {
                format!("not elaborated: `{}` is inlined where it is called, and no call reached it", h.name)
            }
            _ => "not elaborated: a branch no instance takes, or code after an error".to_string(),
        }
    }
}

/// Parses, resolves and elaborates a file, recording every binding's values.
pub fn analyze(source: &str) -> Analysis {
    analyze_with(source, crate::Budget::default())
}

/// [`analyze`] under a compile budget: the editor's carries a cancellation flag, set when a newer
/// text supersedes this one (the analysis then ends early with [`crate::elab::cancelled`] errors).
/// An `import` in `source` is an error: there are no files to import from.
pub fn analyze_with(source: &str, budget: crate::Budget) -> Analysis {
    analyze_files(Sources::new("<input>", source), &mut NoFiles, budget)
}

/// [`analyze_with`] on the root file of `sources`, its imports found by `loader` and added to the
/// sources the analysis keeps. When the imports cannot be loaded, the errors say why and the
/// queries answer about the root file alone (names it imports are then unresolved).
pub fn analyze_files(mut sources: Sources, loader: &mut dyn Loader, budget: crate::Budget) -> Analysis {
    let root = match crate::parse(&sources.root().text) {
        Ok(file) => file,
        Err(d) => return Analysis { errors: vec![d], warnings: Vec::new(), unused: Vec::new(), sources, parsed: None },
    };
    let (file, load_errors) = match crate::imports::load(&mut sources, loader) {
        Ok(file) => (file, Vec::new()),
        Err(errors) => (root, errors),
    };
    let end = sources.files().last().map_or(0, |f| f.base + f.text.len());
    let index = resolve::resolve(&file, end);
    let mut recorder = Recorder::default();
    let (errors, warnings) = if !load_errors.is_empty() {
        (load_errors, Vec::new())
    } else {
        match crate::elab::elaborate_observed(&file, &mut recorder, budget) {
            Ok(module) => (Vec::new(), module.warnings),
            Err(errors) => errors.into_iter().partition(|d| !d.warning),
        }
    };
    let root_len = sources.root().text.len();
    Analysis {
        errors,
        warnings,
        unused: unused_bindings(&index, root_len),
        sources,
        parsed: Some(Parsed { index, bindings: recorder.bindings, instances: recorder.instances }),
    }
}

/// `let` bindings of the root file (the first `root_len` bytes) never used. They are
/// [`Diagnostic`]s like the errors (which have no severity of their own); [`Analysis::unused`] is
/// what makes them editor hints.
fn unused_bindings(index: &Index, root_len: usize) -> Vec<Diagnostic> {
    index
        .defs
        .iter()
        .filter(|d| matches!(d.kind, DefKind::Let | DefKind::LetMut) && d.uses == 0 && !d.name.starts_with('_'))
        .filter(|d| d.span.start <= root_len)
        .map(|d| {
            Diagnostic::error(format!("unused variable `{}`", d.name), d.span, "never used")
                .with_help(format!("if this is intentional, name it `_{}` (or use `_` in the pattern)", d.name))
        })
        .collect()
}

impl Analysis {
    /// Whether the file parsed, so that the queries below have something to answer from.
    pub fn parsed(&self) -> bool {
        self.parsed.is_some()
    }

    /// The name resolution of the file, when it parsed.
    pub fn index(&self) -> Option<&Index> {
        self.parsed.as_ref().map(|p| &p.index)
    }

    /// The values elaboration bound to the name defined at `span`.
    pub fn values(&self, span: Span) -> Option<&BoundValues> {
        self.parsed.as_ref()?.bindings.get(&span)
    }

    /// Where the name at `offset` is defined.
    pub fn definition(&self, offset: usize) -> Option<&Definition> {
        let index = self.index()?;
        match &index.occurrence_at(offset)?.target {
            Target::Def(id) => index.defs.get(*id),
            _ => None,
        }
    }

    pub fn hover(&self, offset: usize) -> Option<Hover> {
        let parsed = self.parsed.as_ref()?;
        let occurrence = parsed.index.occurrence_at(offset)?;
        let subject = match &occurrence.target {
            Target::Def(id) => parsed.definition_subject(&parsed.index.defs[*id]),
            Target::Builtin(name) => Subject::Builtin(name.clone()),
            Target::Method(name) => Subject::Method(name.clone()),
            Target::Field(name) => Subject::Field(name.clone()),
            Target::Type(s) => Subject::Type(*s),
            Target::NamedArg { callee, name } => Subject::NamedArg { callee: callee.clone(), name: name.clone() },
        };
        Some(Hover { span: occurrence.span, subject })
    }

    /// The items of the file (kernels, host functions, helpers, `const`s), in order; not those
    /// it imports.
    pub fn items(&self) -> Vec<&Definition> {
        let in_root = |d: &&Definition| self.sources.file_of(d.span.start) == 0;
        self.index().map(|i| i.defs.iter().filter(|d| d.kind.is_item()).filter(in_root).collect()).unwrap_or_default()
    }

    /// The names that can be used at `offset`, innermost first, each name once (the imported
    /// files' items among them).
    pub fn names_in_scope(&self, offset: usize) -> Vec<&Definition> {
        let Some(index) = self.index() else { return Vec::new() };
        let mut visible: Vec<&Definition> =
            index.defs.iter().filter(|d| d.kind.is_item() || (d.span.end <= offset && offset <= d.scope_end)).collect();
        visible.sort_by_key(|d| (d.kind.is_item(), std::cmp::Reverse(d.span.start)));
        let mut seen = std::collections::HashSet::new();
        visible.retain(|d| seen.insert(d.name.as_str()));
        visible
    }
}

#[cfg(test)]
mod tests;
