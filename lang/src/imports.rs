//! `import "path.cute";`: a file and every file it imports, loaded into one program.
//!
//! An import makes the top-level items (functions and `const`s) of the imported file visible in
//! the importing one; not those the imported file imports in turn (a file names what it uses). A
//! file is loaded once however many files import it (a diamond), cycles are refused, and a name
//! is defined in one file of the program only. Where files come from is the [`Loader`]'s
//! business: the command line and the editor read the disk ([`DiskLoader`]), tests and fuzz
//! targets keep files in memory ([`MemoryLoader`]).

use crate::ast::{File, Item};
use crate::diag::Diagnostic;
use crate::ide::resolve::{self, Target};
use crate::sources::Sources;
use crate::span::Span;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// Finds the files imports name.
pub trait Loader {
    /// The file `path` (as written in an `import` of the file named `importer`) names: its name
    /// (what diagnostics call it, and its identity: one name is loaded once) and its text. `Err`
    /// says why there is none, for the error at the `import`.
    fn load(&mut self, importer: &str, path: &str) -> Result<(String, String), String>;
}

/// A loader that has no files: the program is the one source given (`front_end(source)`).
pub struct NoFiles;

impl Loader for NoFiles {
    fn load(&mut self, _: &str, _: &str) -> Result<(String, String), String> {
        Err("this source was given as text, with no way to read other files".into())
    }
}

/// `path` resolved against the directory of `importer`, with `.` and `..` folded away.
fn beside(importer: &str, path: &str) -> PathBuf {
    let dir = Path::new(importer).parent().unwrap_or(Path::new(""));
    normalize(&dir.join(path))
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.components().next_back(), Some(Component::Normal(_))) => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// Files held in memory by name; an import resolves as on disk, relative to its file's name.
#[derive(Default)]
pub struct MemoryLoader {
    pub files: HashMap<String, String>,
}

impl<const N: usize> From<[(&str, &str); N]> for MemoryLoader {
    fn from(files: [(&str, &str); N]) -> MemoryLoader {
        MemoryLoader { files: files.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect() }
    }
}

impl Loader for MemoryLoader {
    fn load(&mut self, importer: &str, path: &str) -> Result<(String, String), String> {
        let name = beside(importer, path).display().to_string();
        let text = self.files.get(&name).ok_or_else(|| format!("there is no file `{name}`"))?;
        Ok((name, text.clone()))
    }
}

/// Files on disk: an import's path is tried beside the importing file, then in each search
/// directory in turn (`cutec build -I DIR`). A file's name is its path as found (relative to the
/// working directory where the importer's is).
#[derive(Default)]
pub struct DiskLoader {
    pub search_dirs: Vec<PathBuf>,
}

impl Loader for DiskLoader {
    fn load(&mut self, importer: &str, path: &str) -> Result<(String, String), String> {
        let candidates = self.candidates(importer, path);
        let Some(found) = candidates.iter().find(|c| c.is_file()) else {
            return Err(DiskLoader::not_found(&candidates));
        };
        Ok((found.display().to_string(), read_text(found)?))
    }
}

impl DiskLoader {
    /// The program whose root is the file at `path` (its imports not loaded yet).
    pub fn root(path: &Path) -> Result<Sources, String> {
        Ok(Sources::new(path.display().to_string(), read_text(path)?))
    }

    /// Where the import `path` of the file `importer` may be, in the order they are tried (a
    /// loader that keeps some files elsewhere, as the editor its unsaved buffers, tries the same).
    pub fn candidates(&self, importer: &str, path: &str) -> Vec<PathBuf> {
        std::iter::once(beside(importer, path))
            .chain(self.search_dirs.iter().map(|d| normalize(&d.join(path))))
            .collect()
    }

    /// The error of an import found at none of its `candidates`.
    pub fn not_found(candidates: &[PathBuf]) -> String {
        let tried: Vec<String> = candidates.iter().map(|c| format!("`{}`", c.display())).collect();
        format!("no such file (tried {})", tried.join(", "))
    }
}

/// The text of the file at `path`, or why it cannot be had (unreadable, not UTF-8).
pub fn read_text(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|e| {
        format!("`{}` is not UTF-8 (invalid byte at offset {})", path.display(), e.utf8_error().valid_up_to())
    })
}

/// The root file of `sources` parsed, with every file it imports loaded into `sources` and their
/// items in [`File::imported`]. Errors: a file that cannot be loaded or parsed, a cycle, a name
/// defined in two files, a name used in a file that does not import its definition.
pub fn load(sources: &mut Sources, loader: &mut dyn Loader) -> Result<File, Vec<Diagnostic>> {
    let mut root = crate::parse::parse_at(&sources.root().text, 0).map_err(|d| vec![d])?;
    if root.imports.is_empty() {
        return Ok(root);
    }
    let mut walk = Walk { sources, loader, done: Vec::new(), items: Vec::new(), visible: vec![Vec::new()] };
    walk.visit(0, &root, &mut vec![0])?;
    root.imported = walk.items;
    let visible = walk.visible;
    check_names(sources, &root, &visible)?;
    Ok(root)
}

struct Walk<'a> {
    sources: &'a mut Sources,
    loader: &'a mut dyn Loader,
    /// The files whose imports are all loaded (a file on the stack is not).
    done: Vec<usize>,
    /// The imported files' items, in dependency order.
    items: Vec<Item>,
    /// Per file, the files it imports.
    visible: Vec<Vec<usize>>,
}

impl Walk<'_> {
    /// Loads the imports of `file` (index `index`, on the `stack` of files being loaded).
    fn visit(&mut self, index: usize, file: &File, stack: &mut Vec<usize>) -> Result<(), Vec<Diagnostic>> {
        for import in &file.imports {
            let importer = self.sources.files()[index].name.clone();
            let (name, text) = self.loader.load(&importer, &import.path).map_err(|why| {
                vec![Diagnostic::error(
                    format!("cannot import `{}`: {why}", import.path),
                    import.path_span,
                    "imported here",
                )
                .with_help(
                    "paths are relative to the importing file, then to each search directory (`cutec build -I DIR`)",
                )]
            })?;
            let imported = match self.sources.find(&name) {
                Some(i) if self.done.contains(&i) => i,
                Some(i) => return Err(vec![cycle_error(self.sources, stack, i, import.span)]),
                None => {
                    let i = self.sources.add(name, text, import.span);
                    self.visible.push(Vec::new());
                    let base = self.sources.files()[i].base;
                    let parsed = crate::parse::parse_at(&self.sources.files()[i].text, base).map_err(|d| vec![d])?;
                    stack.push(i);
                    self.visit(i, &parsed, stack)?;
                    stack.pop();
                    self.done.push(i);
                    self.items.extend(parsed.items);
                    i
                }
            };
            self.visible[index].push(imported);
        }
        Ok(())
    }
}

fn cycle_error(sources: &Sources, stack: &[usize], again: usize, at: Span) -> Diagnostic {
    let from = stack.iter().position(|&i| i == again).unwrap_or(0);
    let names: Vec<&str> = stack[from..].iter().chain([&again]).map(|&i| sources.files()[i].name.as_str()).collect();
    Diagnostic::error(format!("imports form a cycle: {}", names.join(" -> ")), at, "this import closes the cycle")
        .with_help("move what the files share into a file that imports neither")
}

/// A name defined in two files is an error (the elaborator already refuses two definitions in
/// one file); so is a use of an item from a file the using file does not import.
fn check_names(sources: &Sources, root: &File, visible: &[Vec<usize>]) -> Result<(), Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let mut defined: HashMap<&str, Span> = HashMap::new();
    for item in root.all_items() {
        let name = match item {
            Item::Function(f) => &f.name,
            Item::Const(c) => &c.name,
        };
        if let Some(&first) = defined.get(name.name.as_str()) {
            if sources.file_of(first.start) != sources.file_of(name.span.start) {
                errors.push(
                    Diagnostic::error(format!("`{}` is defined in two files", name.name), name.span, "defined here")
                        .with_secondary(first, "and here")
                        .with_help("a name is defined once in a program: rename one of them"),
                );
            }
        } else {
            defined.insert(&name.name, name.span);
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let index = resolve::resolve(root, usize::MAX);
    for o in &index.occurrences {
        let Target::Def(d) = o.target else { continue };
        let def = &index.defs[d];
        let (user, owner) = (sources.file_of(o.span.start), sources.file_of(def.span.start));
        if def.kind.is_item() && user != owner && !visible[user].contains(&owner) {
            let (user_name, owner_name) = (&sources.files()[user].name, &sources.files()[owner].name);
            errors.push(
                Diagnostic::error(
                    format!("`{}` is defined in `{owner_name}`, which `{user_name}` does not import", def.name),
                    o.span,
                    "used here",
                )
                .with_secondary(def.span, "defined here")
                .with_help(format!("add `import \"{}\";` to `{user_name}`", relative(user_name, owner_name))),
            );
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// The path of file `to` as an import in file `from` would write it.
fn relative(from: &str, to: &str) -> String {
    let dir = Path::new(from).parent().unwrap_or(Path::new(""));
    let (dir, to) = (normalize(dir), normalize(Path::new(to)));
    let common = dir.components().zip(to.components()).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in dir.components().skip(common) {
        out.push("..");
    }
    out.extend(to.components().skip(common));
    out.display().to_string()
}

#[cfg(test)]
mod tests;
