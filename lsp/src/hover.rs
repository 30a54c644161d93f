//! Hover text (markdown): for a name the file defines, what is written for it and what elaboration
//! bound it to in each kernel instance or host function (types, layouts in CuTe notation, TV
//! layouts); for a builtin, method, field or named argument, the reference's one-line doc.

use crate::docs::{docs, Entry};
use cute_lang::ide::{BoundValue, DefKind, Definition, DefinitionHover, Subject, MAX_VALUES};

pub fn markdown(subject: &Subject) -> String {
    let d = docs();
    match subject {
        Subject::Definition(h) => definition(h),
        Subject::Builtin(name) => entries(&format!("builtin `{name}`"), d.functions.get(name)),
        Subject::Method(name) => entries(&format!("method `{name}`"), d.methods.get(name)),
        Subject::Field(name) => entries(&format!("field `{name}`"), d.fields.get(name)),
        Subject::NamedArg { callee, name } => {
            let callee_docs = d.functions.get(callee).or_else(|| d.methods.get(callee));
            format!("named argument `{name}:` of `{callee}`\n\n{}", entries("", callee_docs)).trim_end().to_string()
        }
        Subject::Type(s) => {
            let kind = if s.is_float() {
                "floating-point"
            } else if s.is_int() {
                "integer"
            } else {
                "boolean"
            };
            format!(
                "```cute\n{}\n```\n{kind} scalar type, {} byte{}",
                s.name(),
                s.size_bytes(),
                if s.size_bytes() == 1 { "" } else { "s" }
            )
        }
    }
}

fn entries(title: &str, entries: Option<&Vec<Entry>>) -> String {
    let Some(entries) = entries.filter(|e| !e.is_empty()) else { return title.to_string() };
    entries.iter().map(|e| format!("```cute\n{}\n```\n{}", e.signature, e.doc)).collect::<Vec<_>>().join("\n\n")
}

fn what(def: &Definition, owner: Option<&Definition>) -> String {
    let of_owner = || match owner {
        Some(o) => format!(" of {} `{}`", item_kind(o.kind), o.name),
        None => String::new(),
    };
    match def.kind {
        DefKind::Kernel | DefKind::Host | DefKind::Helper | DefKind::Const => item_kind(def.kind).to_string(),
        DefKind::Param => format!("parameter{}", of_owner()),
        DefKind::ConstParam => format!("`const` parameter{}", of_owner()),
        DefKind::Let => format!("`let` binding in {}", owner.map_or("the file".into(), |o| format!("`{}`", o.name))),
        DefKind::LetMut => {
            format!("`let mut` variable in {}", owner.map_or("the file".into(), |o| format!("`{}`", o.name)))
        }
        DefKind::LoopVar => {
            format!("loop variable in {}", owner.map_or("the file".into(), |o| format!("`{}`", o.name)))
        }
    }
}

fn item_kind(kind: DefKind) -> &'static str {
    match kind {
        DefKind::Kernel => "kernel",
        DefKind::Host => "host function",
        DefKind::Helper => "helper",
        _ => "`const` item",
    }
}

/// The definition as it is written: a signature, `name: type`, `let name`.
fn written(def: &Definition) -> String {
    let typed = |prefix: &str| match &def.declared {
        Some(t) => format!("{prefix}{}: {t}", def.name),
        None => format!("{prefix}{}", def.name),
    };
    match def.kind {
        DefKind::Kernel | DefKind::Host | DefKind::Helper => def.declared.clone().unwrap_or_else(|| def.name.clone()),
        DefKind::Const | DefKind::ConstParam => typed("const "),
        DefKind::Param => typed(""),
        DefKind::Let => typed("let "),
        DefKind::LetMut => typed("let mut "),
        DefKind::LoopVar => format!("for {}", def.name),
    }
}

fn definition(h: &DefinitionHover) -> String {
    let mut out = format!("```cute\n{}\n```\n{}", written(&h.def), what(&h.def, h.owner.as_ref()));
    if !h.instances.is_empty() {
        let names: Vec<String> = h.instances.iter().map(|s| format!("`{s}`")).collect();
        out.push_str(&format!("; instances: {}", names.join(", ")));
    }
    for value in &h.values.values {
        out.push_str("\n\n");
        out.push_str(&bound_value(value));
    }
    if h.values.truncated {
        out.push_str(&format!("\n\n… and more (the first {MAX_VALUES} distinct values are shown)"));
    }
    if let Some(why) = &h.no_values {
        out.push_str(&format!("\n\n*{why}*"));
    }
    out
}

fn bound_value(v: &BoundValue) -> String {
    let mut out = match &v.context {
        Some(c) => format!("**{c}**: `{}`", v.value.ty),
        None => format!("`{}`", v.value.ty),
    };
    for f in &v.value.facts {
        out.push_str(&format!("\n- {}: `{}`", f.label, f.text));
    }
    out
}
