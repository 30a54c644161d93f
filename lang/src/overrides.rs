//! `cutec build -D NAME=VALUE`: the value of a top-level `const` item replaced before compiling
//! (specialization from the command line or Python's `cutec.compile(consts=...)`).
//!
//! The replacement is made in the source text, at the span of the item's value expression, so the
//! compiler sees an ordinary file: every check and diagnostic applies to the new value, and a
//! diagnostic there shows the line as compiled. A value must be one line, so line numbers stay.

use crate::ast::Item;

/// One `NAME=VALUE` of the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstOverride {
    pub name: String,
    pub value: String,
}

impl std::str::FromStr for ConstOverride {
    type Err = String;

    /// `NAME=VALUE`, VALUE an expression of one line (`128`, `(64, 32)`, `true`).
    fn from_str(arg: &str) -> Result<ConstOverride, String> {
        let Some((name, value)) = arg.split_once('=') else {
            return Err(format!("`{arg}` is not NAME=VALUE (for example `-D BM=128`)"));
        };
        let (name, value) = (name.trim(), value.trim());
        let ident = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ident {
            return Err(format!("`{name}` is not a const's name (a letter or `_`, then letters, digits, `_`)"));
        }
        if value.is_empty() || value.contains(['\n', '\r']) {
            return Err(format!(
                "the value of `{name}` must be an expression on one line (for example `-D {name}=128`)"
            ));
        }
        Ok(ConstOverride { name: name.to_string(), value: value.to_string() })
    }
}

/// `source` with each override's value put in place of its `const` item's value. A source that does
/// not parse is returned as it is (compiling it reports why). Errors: a name that is no top-level
/// `const` (the message lists those there are), a name given twice, a value that is not one
/// expression.
pub fn apply(source: &str, overrides: &[ConstOverride]) -> Result<String, String> {
    if overrides.is_empty() {
        return Ok(source.to_string());
    }
    let Ok(file) = crate::parse(source) else { return Ok(source.to_string()) };
    let consts: Vec<_> = file
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Const(c) => Some(c),
            Item::Function(_) => None,
        })
        .collect();
    let mut edits = Vec::new();
    for (k, o) in overrides.iter().enumerate() {
        if overrides[..k].iter().any(|p| p.name == o.name) {
            return Err(format!("`{}` is given twice (-D {}=...)", o.name, o.name));
        }
        let Some(item) = consts.iter().find(|c| c.name.name == o.name) else {
            let names: Vec<&str> = consts.iter().map(|c| c.name.name.as_str()).collect();
            let known =
                if names.is_empty() { "it has none".to_string() } else { format!("its consts: {}", names.join(", ")) };
            return Err(format!("-D {}: the source has no top-level `const {}` to override ({known})", o.name, o.name));
        };
        check_value(o)?;
        edits.push((item.value.span, o.value.as_str()));
    }
    edits.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
    let mut out = source.to_string();
    for (span, value) in edits {
        out.replace_range(span.range(), value);
    }
    Ok(out)
}

/// The value parses as exactly one expression: `const NAME = VALUE;` alone is one const item whose
/// value ends where VALUE does (so `1; kernel ...` or `1 // x` is refused).
fn check_value(o: &ConstOverride) -> Result<(), String> {
    let prefix = format!("const {} = ", o.name);
    let text = format!("{prefix}{};", o.value);
    let bad = |why: String| format!("-D {}={}: the value is not one expression: {why}", o.name, o.value);
    let file = crate::parse(&text).map_err(|d| bad(d.message))?;
    match file.items.as_slice() {
        [Item::Const(c)] if c.value.span.range() == (prefix.len()..prefix.len() + o.value.len()) => Ok(()),
        _ => Err(bad("it does not end where the value does".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(arg: &str) -> ConstOverride {
        arg.parse().unwrap()
    }

    const SRC: &str = "const BM = 64;\nconst TILE: layout = (8, 4);\nkernel k(g: tensor<f32, gmem>) {\n}\n";

    #[test]
    fn replaces_the_values_in_place() {
        let out = apply(SRC, &[o("TILE=(16, 2)"), o("BM = 128")]).unwrap();
        assert_eq!(out, SRC.replace("= 64", "= 128").replace("(8, 4)", "(16, 2)"));
        assert_eq!(apply(SRC, &[]).unwrap(), SRC);
    }

    #[test]
    fn refuses_unknown_repeated_and_bad() {
        let e = apply(SRC, &[o("BN=1")]).unwrap_err();
        assert_eq!(e, "-D BN: the source has no top-level `const BN` to override (its consts: BM, TILE)");
        assert_eq!(apply(SRC, &[o("BM=1"), o("BM=2")]).unwrap_err(), "`BM` is given twice (-D BM=...)");
        for bad in ["BM=1; kernel x() {}", "BM=1 // c", "BM=(1,", "BM=1 2"] {
            let e = apply(SRC, &[o(bad)]).unwrap_err();
            assert!(e.starts_with(&format!("-D {}: the value is not one expression", bad.replace("= ", "="))), "{e}");
        }
        assert!("BM".parse::<ConstOverride>().unwrap_err().contains("is not NAME=VALUE"));
        assert!("9x=1".parse::<ConstOverride>().unwrap_err().contains("is not a const's name"));
        assert!("BM=".parse::<ConstOverride>().unwrap_err().contains("must be an expression on one line"));
    }

    #[test]
    fn leaves_a_source_that_does_not_parse() {
        assert_eq!(apply("const = ;", &[o("BM=1")]).unwrap(), "const = ;");
    }
}
