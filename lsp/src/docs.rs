//! The builtins' one-line documentation, read from the language reference itself
//! (docs/language.md §8, compiled in), so hover and completion say what the reference says.
//!
//! Each row of a §8 table whose header starts with `builtin` documents one or more entries in its
//! first cell: calls (`size(L[, mode: m])`), methods (`t.load()`), fields (`L.shape`), or bare
//! names that share the row's first entry's form (`zipped_divide` after `logical_divide(L,
//! tiler)`, `partition_B(t)` after `thr_mma.partition_A(t)`, `_B(t)` after
//! `partition_fragment_A(t)`). The named arguments of a builtin are the `name:` its signatures show.

use std::collections::HashMap;
use std::sync::OnceLock;

const LANGUAGE_MD: &str = include_str!("../../docs/language.md");

/// One documented form of a builtin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// As the reference writes it: `size(L[, mode: m])`, `t.load()`, `L.shape`.
    pub signature: String,
    /// The row's description (markdown).
    pub doc: String,
}

#[derive(Debug, Default)]
pub struct Docs {
    pub functions: HashMap<String, Vec<Entry>>,
    pub methods: HashMap<String, Vec<Entry>>,
    pub fields: HashMap<String, Vec<Entry>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    Function,
    Method,
    Field,
}

pub fn docs() -> &'static Docs {
    static DOCS: OnceLock<Docs> = OnceLock::new();
    DOCS.get_or_init(|| Docs::parse(LANGUAGE_MD))
}

impl Docs {
    fn parse(markdown: &str) -> Docs {
        let mut docs = Docs::default();
        let builtins = markdown.split("\n## 8.").nth(1).and_then(|s| s.split("\n## 9.").next()).unwrap_or("");
        let lines: Vec<&str> = builtins.lines().collect();
        let mut in_builtin_table = false;
        for (i, line) in lines.iter().enumerate() {
            if !line.starts_with('|') {
                in_builtin_table = false;
                continue;
            }
            let cells = cells(line);
            if lines.get(i + 1).is_some_and(|next| next.starts_with("|---")) {
                in_builtin_table = cells.first().is_some_and(|c| c == "builtin");
                continue;
            }
            if line.starts_with("|---") || !in_builtin_table || cells.len() < 2 {
                continue;
            }
            docs.add_row(&cells[0], &cells[1..].join(" — "));
        }
        docs
    }

    fn add_row(&mut self, entries: &str, doc: &str) {
        let mut first: Option<Parsed> = None;
        for code in code_spans(entries) {
            for parsed in parse_entry(code, first.as_ref()) {
                let table = match parsed.form {
                    Form::Function => &mut self.functions,
                    Form::Method => &mut self.methods,
                    Form::Field => &mut self.fields,
                };
                add(table, &parsed.name, Entry { signature: parsed.signature(), doc: doc.to_string() });
                // `thread_idx.x` documents `thread_idx` too.
                if let Some(receiver) = parsed.receiver.as_deref().filter(|r| cute_lang::ide::DIM3_NAMES.contains(r)) {
                    add(
                        &mut self.functions,
                        receiver,
                        Entry { signature: format!("{receiver}.x"), doc: doc.to_string() },
                    );
                }
                first.get_or_insert(parsed);
            }
        }
    }

    /// The named arguments the reference shows for a builtin function or method.
    pub fn named_args(&self, callee: &str) -> Vec<String> {
        let entries = self.functions.get(callee).into_iter().chain(self.methods.get(callee)).flatten();
        let mut names: Vec<String> = entries.flat_map(|e| named_args(&e.signature)).collect();
        names.dedup();
        names
    }
}

/// A table row's cells, split at `|` but not at an escaped `\|`.
fn cells(line: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut chars = line.trim().trim_start_matches('|').chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => cells.last_mut().unwrap().push(chars.next().unwrap()),
            '|' => cells.push(String::new()),
            c => cells.last_mut().unwrap().push(c),
        }
    }
    if cells.last().is_some_and(|c| c.trim().is_empty()) {
        cells.pop();
    }
    cells.into_iter().map(|c| c.trim().to_string()).collect()
}

/// The text of each `code` span.
fn code_spans(text: &str) -> impl Iterator<Item = &str> {
    text.split('`').skip(1).step_by(2)
}

fn add(table: &mut HashMap<String, Vec<Entry>>, name: &str, entry: Entry) {
    let entries = table.entry(name.to_string()).or_default();
    if !entries.contains(&entry) {
        entries.push(entry);
    }
}

fn leading_ident(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(s.len());
    s.split_at(end)
}

fn is_ident(s: &str) -> bool {
    let (ident, rest) = leading_ident(s);
    !ident.is_empty() && rest.is_empty()
}

/// One documented entry: `receiver.name(args)`, `name(args)`, `receiver.name` or `name`.
struct Parsed {
    form: Form,
    receiver: Option<String>,
    name: String,
    /// The argument list as written, `(L, tiler)`, or nothing.
    args: String,
}

impl Parsed {
    fn signature(&self) -> String {
        let receiver = self.receiver.as_ref().map(|r| format!("{r}.")).unwrap_or_default();
        format!("{receiver}{}{}", self.name, self.args)
    }

    /// A bare name in a row shares the row's first entry's form, receiver and arguments (after a
    /// field, `block_idx` after `thread_idx.x`, it is a name of its own).
    fn like(first: Option<&Parsed>, name: &str) -> Parsed {
        match first {
            Some(f) if f.form != Form::Field => {
                Parsed { form: f.form, receiver: f.receiver.clone(), name: name.to_string(), args: f.args.clone() }
            }
            _ => Parsed { form: Form::Function, receiver: None, name: name.to_string(), args: String::new() },
        }
    }
}

/// The entries one code span of a row's first cell documents; `first` is the row's first entry.
fn parse_entry(code: &str, first: Option<&Parsed>) -> Vec<Parsed> {
    let code = code.trim();
    // `sqrt rsqrt exp ...`: several names in one span.
    if code.contains(' ') && code.split_whitespace().all(is_ident) {
        return code.split_whitespace().map(|name| Parsed::like(None, name)).collect();
    }
    // `.y` after `thread_idx.x`.
    if let Some(field) = code.strip_prefix('.') {
        let receiver = first.and_then(|f| f.receiver.clone());
        return vec![Parsed { form: Form::Field, receiver, name: field.to_string(), args: String::new() }];
    }
    let (head, rest) = leading_ident(code);
    if head.is_empty() {
        return Vec::new();
    }
    if let Some(member) = rest.strip_prefix('.') {
        let (name, args) = leading_ident(member);
        let form = if args.starts_with('(') { Form::Method } else { Form::Field };
        return vec![Parsed { form, receiver: Some(head.to_string()), name: name.to_string(), args: args.to_string() }];
    }
    // A suffix (`_B(t)` after `partition_fragment_A(t)`) names the first entry with another ending.
    let name = match (head.starts_with('_'), first.and_then(|f| f.name.rsplit_once('_'))) {
        (true, Some((stem, _))) => format!("{stem}{head}"),
        _ => head.to_string(),
    };
    if rest.is_empty() {
        return vec![Parsed::like(first, &name)];
    }
    // `partition_B(t)` after `thr_mma.partition_A(t)`: a method of the same receiver.
    let mut parsed = Parsed::like(first.filter(|f| f.form == Form::Method), &name);
    parsed.args = rest.to_string();
    vec![parsed]
}

/// The `name:` arguments of a signature: `make_copy_atom(T[, bits: B][, op: OP])` has `bits`, `op`.
fn named_args(signature: &str) -> Vec<String> {
    let Some((_, args)) = signature.split_once('(') else { return Vec::new() };
    args.split([',', '[', '('])
        .filter_map(|part| {
            let (name, rest) = leading_ident(part.trim());
            (!name.is_empty() && rest.starts_with(": ")).then(|| name.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signatures(table: &HashMap<String, Vec<Entry>>, name: &str) -> Vec<String> {
        table.get(name).map(|es| es.iter().map(|e| e.signature.clone()).collect()).unwrap_or_default()
    }

    #[test]
    fn every_builtin_function_is_documented() {
        let missing: Vec<&str> =
            cute_lang::ide::builtin_functions().filter(|f| !docs().functions.contains_key(*f)).collect();
        assert!(missing.is_empty(), "builtins without a row in docs/language.md §8: {missing:?}");
    }

    /// docs/language.md §8 documents only what exists: every function it names is a builtin, an
    /// operator, a CUDA index value or a scalar type's conversion (`f32(x)`).
    #[test]
    fn every_documented_function_is_a_builtin() {
        let dim3 = cute_lang::ide::DIM3_NAMES;
        let mut unknown: Vec<&str> = docs()
            .functions
            .keys()
            .map(String::as_str)
            .filter(|f| !cute_lang::ide::is_builtin_function(f) && !dim3.contains(f))
            .filter(|f| cute_lang::types::Scalar::from_name(f).is_none())
            .collect();
        unknown.sort_unstable();
        assert!(unknown.is_empty(), "docs/language.md §8 documents functions that do not exist: {unknown:?}");
    }

    #[test]
    fn rows_name_functions_methods_and_fields() {
        let d = docs();
        assert_eq!(signatures(&d.functions, "size"), ["size(L[, mode: m])", "size(swizzled)", "size(tiled_mma)"]);
        assert_eq!(signatures(&d.functions, "zipped_divide"), ["zipped_divide(L, tiler)"]);
        assert_eq!(signatures(&d.functions, "exp2"), ["exp2"]);
        assert_eq!(signatures(&d.functions, "thread_idx"), ["thread_idx.x"]);
        assert_eq!(signatures(&d.methods, "partition_B"), ["thr_mma.partition_B(t)"]);
        assert_eq!(signatures(&d.methods, "partition_fragment_C"), ["thr_mma.partition_fragment_C(t)"]);
        assert_eq!(signatures(&d.methods, "retile_S"), ["thr_copy.retile_S(frag)"]);
        assert_eq!(signatures(&d.fields, "stride"), ["L.stride", "t.stride"]);
        assert_eq!(signatures(&d.fields, "y"), ["thread_idx.y"]);
        assert_eq!(signatures(&d.functions, "block_idx"), ["block_idx"]);
        assert!(d.functions["make_layout"][0].doc.starts_with("a layout; column-major compact"));
    }

    #[test]
    fn named_arguments_come_from_the_signatures() {
        let d = docs();
        assert_eq!(d.named_args("make_copy_atom"), ["bits", "op"]);
        assert_eq!(d.named_args("size"), ["mode"]);
        assert_eq!(d.named_args("reduce"), ["init", "profile"]);
        assert!(d.named_args("composition").is_empty());
    }
}
