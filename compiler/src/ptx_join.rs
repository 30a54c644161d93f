//! Joining PTX modules that LLVM generated for one kernel each into the PTX it generates for the
//! same kernels as one module, byte for byte.
//!
//! The pipeline compiles each kernel instance in a module of its own, on its own thread
//! ([`crate::codegen`]), because LLVM's NVPTX back end compiles one module on one thread and it is
//! most of a build's time. ptxas then assembles one PTX module. The per-kernel modules differ from
//! the one-module output only in what LLVM numbers or places module-wide:
//!
//! - the header (`.version`, `.target`, `.address_size`) and the trailer's debug sections are the
//!   same in every part: kept once. The trailer's `.file` table lists the source files a part's
//!   `.loc` lines name, numbered from 1 in the order the part first names them; one module numbers
//!   them in the order its kernels first name them, so the joined table is the parts' tables in
//!   order, each file once, and each part's `.loc` lines are renumbered to it (a kernel that
//!   inlines code of an imported library names that file too, and its neighbours may not);
//! - the first function's `// .globl` comment comes before the module-scope statements;
//! - module-scope statements: function declarations (`vprintf`) come first, deduplicated; the
//!   printf format strings, which `convert-gpu-to-nvvm` names `printfFormat_N` in the order it
//!   creates them, shares between kernels by content, and inserts at the start of the module (so
//!   the newest is printed first); then our globals in kernel order (`__cute_dynamic_smem`
//!   declared once, one "has been demoted" note per kernel's shared array, the manifest, which the
//!   last part carries); then constants linked from libdevice, deduplicated;
//! - inside functions, labels and comments carry the function's number in the module
//!   (`$L__BB1_3`, `$L__func_begin1`, `__local_depot1`) or a module-wide counter (`$L__tmp7`,
//!   `// callseq 4`).
//!
//! Anything else (a part with a function besides its kernel, such as a libdevice function LLVM did
//! not inline, or a module-scope statement not listed here) makes [`join`] answer `None`: the
//! caller then compiles the kernels as one module. `pipeline::tests` checks, for every sample, that
//! the joined PTX is exactly the one-module PTX.

use std::collections::HashMap;
use std::fmt::Write;

const GLOBL: &str = "\t// .globl\t";
const PRINTF: &str = "printfFormat_";

/// One part's PTX, cut where the module-level structure is.
struct Part<'a> {
    /// Up to and including the blank line after `.address_size`.
    header: &'a str,
    /// The kernel's `// .globl NAME` line, if the part has a kernel.
    globl: Option<&'a str>,
    /// Module-scope statements, each with its trailing newline.
    statements: Vec<&'a str>,
    /// From the kernel's `.entry` line to its closing `}` line.
    function: Option<&'a str>,
    /// What follows the function: debug sections and the `.file` table.
    trailer: &'a str,
}

/// The byte offset just past the line that starts at `at`.
fn line_end(text: &str, at: usize) -> usize {
    text[at..].find('\n').map_or(text.len(), |i| at + i + 1)
}

fn is_function_start(line: &str) -> bool {
    [".visible .entry ", ".entry ", ".visible .func ", ".func ", ".weak .func "].iter().any(|p| line.starts_with(p))
}

fn split(ptx: &str) -> Option<Part<'_>> {
    let header_end = ptx.find("\n.address_size ").map(|i| line_end(ptx, i + 1))?;
    let header_end = if ptx[header_end..].starts_with('\n') { header_end + 1 } else { header_end };
    let mut at = header_end;
    let mut globl = None;
    if ptx[at..].starts_with(GLOBL) {
        let end = line_end(ptx, at);
        globl = Some(&ptx[at..end]);
        at = end;
    }
    // Module-scope statements, up to the blank line before the function (or the end).
    let mut statements = Vec::new();
    while at < ptx.len() && !ptx[at..].starts_with('\n') {
        let mut end = line_end(ptx, at);
        // A function declaration spans lines up to its `;`.
        if ptx[at..].starts_with(".extern .func") {
            end = ptx[at..].find("\n;\n").map(|i| at + i + 3)?;
        }
        statements.push(&ptx[at..end]);
        at = end;
    }
    if at < ptx.len() {
        at += 1;
    }
    let mut function = None;
    if at < ptx.len() && is_function_start(&ptx[at..]) {
        let end = ptx[at..].find("\n}\n").map(|i| at + i + 3)?;
        function = Some(&ptx[at..end]);
        at = end;
    }
    let trailer = &ptx[at..];
    // One function per part: a second one (a device function) is not something parts can share.
    if trailer.lines().any(is_function_start) || (globl.is_some() != function.is_some()) {
        return None;
    }
    Some(Part { header: &ptx[..header_end], globl, statements, function, trailer })
}

/// Where LLVM prints a module-scope statement when the kernels are one module.
enum Statement<'a> {
    /// `.extern .func ...;`: printed before every global.
    Declaration(&'a str),
    /// `printfFormat_N` and the rest of its line.
    Printf { number: usize, rest: &'a str },
    /// Ours, in kernel order.
    Ours(&'a str),
    /// Linked from libdevice, after ours.
    Library(&'a str),
}

fn classify(statement: &str) -> Option<Statement<'_>> {
    const PRINTF_GLOBAL: &str = ".global .align 1 .b8 printfFormat_";
    if statement.starts_with(".extern .func") {
        return Some(Statement::Declaration(statement));
    }
    if let Some(rest) = statement.strip_prefix(PRINTF_GLOBAL) {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        return Some(Statement::Printf { number: rest[..digits].parse().ok()?, rest: &rest[digits..] });
    }
    let ours = statement.starts_with(".extern .shared ")
        || (statement.starts_with("// ") && statement.ends_with(" has been demoted\n"))
        || statement.starts_with(&format!(".visible .global .align 1 .b8 {}[", crate::manifest::MANIFEST_SYMBOL));
    if ours {
        return Some(Statement::Ours(statement));
    }
    if statement.starts_with(".global .align ") && statement.contains(" __cudart_") {
        return Some(Statement::Library(statement));
    }
    None
}

fn is_identifier_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// `text` with the number after each occurrence of `prefix` replaced by `map(number)`. A prefix
/// that is an identifier matches only at the start of one.
fn renumber(text: &str, prefix: &str, mut map: impl FnMut(usize) -> usize) -> String {
    let whole_word = prefix.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        out.push_str(&rest[..i]);
        let after = &rest[i + prefix.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let at_start = !whole_word || !out.bytes().last().is_some_and(is_identifier_byte);
        match after[..digits].parse::<usize>() {
            Ok(n) if at_start => {
                out.push_str(prefix);
                let _ = write!(out, "{}", map(n));
            }
            _ => out.push_str(&rest[i..i + prefix.len() + digits]),
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

/// One past the largest number after `prefix` in `text` (0 if none): how many of a module-wide
/// counter's values the part used.
fn used(text: &str, prefix: &str) -> usize {
    let mut most = 0;
    renumber(text, prefix, |n| {
        most = most.max(n + 1);
        n
    });
    most
}

const FILE: &str = "\t.file\t";
const LOC: &str = "\t.loc\t";

/// A part's trailer, its `.file` table apart.
struct Trailer<'a> {
    /// The lines other than the table's.
    rest: Vec<&'a str>,
    /// Where the table stood: the index in `rest` it came before (`usize::MAX`: none).
    at: usize,
    /// Each entry's number and the rest of its line (the path, and any checksum).
    files: Vec<(usize, &'a str)>,
}

fn file_table(trailer: &str) -> Option<Trailer<'_>> {
    let (mut rest, mut at, mut files) = (Vec::new(), None, Vec::new());
    for line in trailer.split_inclusive('\n') {
        match line.strip_prefix(FILE) {
            Some(entry) => {
                let digits = entry.bytes().take_while(u8::is_ascii_digit).count();
                files.push((entry[..digits].parse().ok()?, &entry[digits..]));
                at.get_or_insert(rest.len());
            }
            None => rest.push(line),
        }
    }
    Some(Trailer { rest, at: at.unwrap_or(usize::MAX), files })
}

/// The PTX LLVM generates for the parts' kernels as one module, in the parts' order; `None` when
/// the parts hold something this join does not place (the caller then compiles one module).
pub fn join(parts: &[String]) -> Option<String> {
    if parts.len() == 1 {
        return Some(parts[0].clone());
    }
    let parts: Vec<Part> = parts.iter().map(|p| split(p)).collect::<Option<_>>()?;
    let first = parts.first()?;
    let tables: Vec<Trailer> = parts.iter().map(|p| file_table(p.trailer)).collect::<Option<_>>()?;
    let trailer = &tables[0];
    if parts.iter().any(|p| p.header != first.header)
        || tables.iter().any(|t| t.rest != trailer.rest || t.at != trailer.at)
    {
        return None;
    }
    // The module's file table, and each part's numbers in it.
    let mut module_files: Vec<&str> = Vec::new();
    let file_maps: Vec<HashMap<usize, usize>> = tables
        .iter()
        .map(|t| {
            let mut sorted = t.files.clone();
            sorted.sort_unstable();
            sorted
                .into_iter()
                .map(|(n, path)| {
                    let at = module_files.iter().position(|f| *f == path).unwrap_or_else(|| {
                        module_files.push(path);
                        module_files.len() - 1
                    });
                    (n, at + 1)
                })
                .collect()
        })
        .collect();
    // A `.loc` of inlined code names a second file number after `inlined_at`, which the
    // renumbering below does not reach: such parts join only where no number changes.
    let renumbered = file_maps.iter().any(|m| m.iter().any(|(n, to)| n != to));
    if renumbered && parts.iter().any(|p| p.function.is_some_and(|f| f.contains("inlined_at"))) {
        return None;
    }
    let mut declarations: Vec<&str> = Vec::new();
    let mut ours: Vec<&str> = Vec::new();
    let mut library: Vec<&str> = Vec::new();
    // Printf formats as one module numbers them: by content, in creation order.
    let mut printf_numbers: HashMap<&str, usize> = HashMap::new();
    let mut printf_lines: Vec<String> = Vec::new();
    let mut functions = String::new();
    let (mut function_number, mut tmp_base, mut callseq_base) = (0, 0, 0);
    for (part, files) in parts.iter().zip(&file_maps) {
        let mut formats: Vec<(usize, &str)> = Vec::new();
        for s in &part.statements {
            match classify(s)? {
                Statement::Declaration(d) => {
                    if !declarations.contains(&d) {
                        declarations.push(d);
                    }
                }
                Statement::Printf { number, rest } => formats.push((number, rest)),
                Statement::Ours(o) => {
                    if !(o.starts_with(".extern ") && ours.contains(&o)) {
                        ours.push(o);
                    }
                }
                Statement::Library(l) => {
                    if !library.contains(&l) {
                        library.push(l);
                    }
                }
            }
        }
        formats.sort_unstable();
        let mut to_module: HashMap<usize, usize> = HashMap::new();
        for (number, rest) in formats {
            let next = printf_numbers.len();
            let n = *printf_numbers.entry(rest).or_insert(next);
            if n == next {
                printf_lines.push(format!(".global .align 1 .b8 {PRINTF}{n}{rest}"));
            }
            to_module.insert(number, n);
        }
        let (Some(globl), Some(function)) = (part.globl, part.function) else { continue };
        let mut text = renumber(function, PRINTF, |n| to_module.get(&n).copied().unwrap_or(n));
        text = renumber(&text, LOC, |n| files.get(&n).copied().unwrap_or(n));
        let (tmps, callseqs) = (used(&text, "$L__tmp"), used(&text, "// callseq "));
        text = renumber(&text, "$L__tmp", |n| n + tmp_base);
        text = renumber(&text, "// callseq ", |n| n + callseq_base);
        for prefix in ["$L__BB", "$L__func_begin", "$L__func_end", "__local_depot"] {
            text = renumber(&text, prefix, |_| function_number);
        }
        if !functions.is_empty() {
            functions.push_str(globl);
        }
        functions.push_str(&text);
        function_number += 1;
        tmp_base += tmps;
        callseq_base += callseqs;
    }
    let mut out = String::from(first.header);
    out.extend(first.globl);
    declarations.iter().for_each(|d| out.push_str(d));
    printf_lines.iter().rev().for_each(|p| out.push_str(p));
    ours.iter().chain(&library).for_each(|s| out.push_str(s));
    out.push('\n');
    out.push_str(&functions);
    for (i, line) in trailer.rest.iter().enumerate() {
        if i == trailer.at {
            push_files(&mut out, &module_files);
        }
        out.push_str(line);
    }
    if trailer.at >= trailer.rest.len() {
        push_files(&mut out, &module_files);
    }
    Some(out)
}

fn push_files(out: &mut String, files: &[&str]) {
    for (i, rest) in files.iter().enumerate() {
        let _ = write!(out, "{FILE}{}{rest}", i + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{module_to_ptx, Session};
    use crate::timings::KernelTimes;

    #[test]
    fn renumber_replaces_whole_identifiers_only() {
        let text = "mov.b64 %rd1, printfFormat_1; // xprintfFormat_1 printfFormat_12\n$L__BB0_3: bra $L__BB0_10;";
        assert_eq!(
            renumber(text, PRINTF, |n| n + 5),
            "mov.b64 %rd1, printfFormat_6; // xprintfFormat_1 printfFormat_17\n$L__BB0_3: bra $L__BB0_10;"
        );
        assert_eq!(
            renumber(text, "$L__BB", |_| 2),
            "mov.b64 %rd1, printfFormat_1; // xprintfFormat_1 printfFormat_12\n$L__BB2_3: bra $L__BB2_10;"
        );
        assert_eq!(used("$L__tmp0: $L__tmp3:", "$L__tmp"), 4);
    }

    #[test]
    fn parts_with_a_device_function_are_not_joined() {
        let part = |name: &str| {
            format!(".version 8.0\n.target sm_90\n.address_size 64\n\n\t// .globl\t{name}\n\n.visible .entry {name}()\n{{\n\tret;\n}}\n.func helper()\n{{\n\tret;\n}}\n")
        };
        assert!(join(&[part("a"), part("b")]).is_none());
    }

    /// Parts that name different source files: one table, in the order the parts first name them,
    /// and each part's `.loc` lines renumbered to it.
    #[test]
    fn file_tables_are_merged_in_order_of_first_use() {
        let part = |name: &str, files: &[&str]| {
            let locs: String = (1..=files.len()).map(|n| format!("\t.loc\t{n} 7 0\n")).collect();
            let table: String =
                files.iter().enumerate().map(|(i, f)| format!("\t.file\t{} \"{f}\"\n", i + 1)).collect();
            format!(".version 8.0\n.target sm_90\n.address_size 64\n\n\t// .globl\t{name}\n\n.visible .entry {name}()\n{{\n{locs}\tret;\n}}\n\t.section\t.debug_macinfo\t{{\t}}\n{table}")
        };
        let joined = join(&[part("a", &["main.cute"]), part("b", &["lib.cute", "main.cute"])]).unwrap();
        assert!(joined.contains("\t.file\t1 \"main.cute\"\n\t.file\t2 \"lib.cute\"\n"), "{joined}");
        assert!(joined.ends_with("\t.file\t2 \"lib.cute\"\n"), "{joined}");
        let b = &joined[joined.find(".entry b").unwrap()..];
        assert!(b.starts_with(".entry b()\n{\n\t.loc\t2 7 0\n\t.loc\t1 7 0\n"), "{b}");
        // A `.loc ... inlined_at N ...` would keep its part's number: not joined.
        let inlined =
            part("c", &["lib.cute", "main.cute"]).replace("\t.loc\t1 7 0\n", "\t.loc\t1 7 0, inlined_at 2 3 4\n");
        assert!(join(&[part("a", &["main.cute"]), inlined.clone()]).is_none());
        assert!(join(&[part("a", &["lib.cute", "main.cute"]), inlined]).is_some());
    }

    /// For every sample, its kernels compiled one module each and joined give exactly the PTX of
    /// the kernels compiled as one module: the parallel build changes no byte of any cubin.
    #[test]
    fn every_sample_joins_to_the_one_module_ptx() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../samples");
        let mut samples: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "cute"))
            .collect();
        samples.sort();
        let session = Session::new().unwrap();
        let mut joined = 0;
        for path in samples {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let source = std::fs::read_to_string(&path).unwrap();
            let mut sources = cute_lang::imports::DiskLoader::root(&path).unwrap();
            let loader = &mut cute_lang::imports::DiskLoader::default();
            let (_, kir) = cute_lang::front_end_files(&mut sources, loader, Default::default()).unwrap();
            let arch = crate::pipeline::source_arch(&source).unwrap_or_else(|e| panic!("{name}: {e}"));
            let cute = crate::lower::lower_to_cute(&kir, &sources, arch.name(), Default::default()).unwrap();
            let libdevice = cute.uses_math().then(|| crate::ptxas::find_libdevice().unwrap());
            let ptx = |text: &str, math: bool, version: Option<u32>| {
                let library = if math { libdevice.as_deref() } else { None };
                module_to_ptx(&session, text, &name, arch, library, version, &mut KernelTimes::default())
                    .unwrap_or_else(|e| panic!("{name}: {e:?}"))
            };
            let one_module = ptx(&cute.module(), cute.uses_math(), cute.ptx_version());
            let count = cute.kernels.len();
            if count < 2 {
                continue;
            }
            let parts: Vec<String> = (0..count)
                .map(|i| {
                    let k = &cute.kernels[i];
                    ptx(&cute.kernel_module(i, i == count - 1), k.uses_math, cute.ptx_version())
                })
                .collect();
            let Some(ptx) = join(&parts) else { panic!("{name}: the parts do not join") };
            assert!(ptx == one_module, "{name}: the joined PTX differs from the one-module PTX");
            joined += 1;
        }
        assert!(joined >= 8, "only {joined} samples have several kernels");
    }
}
