//! `layout show --svg`: the SVG is well-formed and holds one cell per element.

use cute_layout::cli::run;

/// A minimal well-formedness check: every tag closes in order, attributes are
/// quoted, and the document has one root.
fn well_formed(svg: &str) -> Result<(), String> {
    let body = svg.trim_start();
    let body = if body.starts_with("<?xml") { &body[body.find("?>").ok_or("unterminated prolog")? + 2..] } else { body };
    let mut stack: Vec<String> = Vec::new();
    let mut roots = 0;
    let mut rest = body;
    while let Some(i) = rest.find('<') {
        let j = rest[i..].find('>').ok_or("unterminated tag")? + i;
        let tag = &rest[i + 1..j];
        if tag.contains('<') {
            return Err(format!("'<' inside a tag: {tag}"));
        }
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack.pop().ok_or(format!("close without open: {name}"))?;
            if open != name.trim() {
                return Err(format!("</{name}> closes <{open}>"));
            }
        } else {
            if tag.matches('"').count() % 2 != 0 {
                return Err(format!("unbalanced quotes in <{tag}>"));
            }
            let name = tag.split_whitespace().next().unwrap_or("").trim_end_matches('/').to_string();
            if stack.is_empty() {
                roots += 1;
            }
            if !tag.ends_with('/') {
                stack.push(name);
            }
        }
        rest = &rest[j + 1..];
    }
    if !stack.is_empty() {
        return Err(format!("unclosed: {stack:?}"));
    }
    if roots != 1 {
        return Err(format!("{roots} root elements"));
    }
    Ok(())
}

fn show_svg(expr: &str) -> String {
    let path = std::env::temp_dir().join(format!("cute-layout-show-{}-{}.svg", std::process::id(), expr.len()));
    let args: Vec<String> = ["show", expr, "--svg", path.to_str().unwrap()].iter().map(|s| s.to_string()).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run(&args, &mut std::io::empty(), &mut out, &mut err);
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    let svg = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    svg
}

#[test]
fn layout_svg_has_one_cell_per_element() {
    let svg = show_svg("(4,8):(8,1)");
    well_formed(&svg).unwrap();
    assert_eq!(svg.matches(r#"<rect class="cell""#).count(), 32);
    assert!(svg.contains(">31</text>"));
}

#[test]
fn tv_svg_is_coloured_by_thread() {
    // The seed's reduce-sum picture: 32 threads of 1 value on a (4,8) tile.
    let svg = show_svg("make_layout_tv((4,8):(8,1), (1):(1))");
    well_formed(&svg).unwrap();
    assert_eq!(svg.matches(r#"<rect class="cell""#).count(), 32);
    assert!(svg.contains(">T0V0</text>") && svg.contains(">T31V0</text>"));
    // The elementwise-add TV layout: 128 threads x 32 values on (16,256).
    let svg = show_svg("make_layout_tv((4,32):(32,1), (4,8):(8,1))");
    well_formed(&svg).unwrap();
    assert_eq!(svg.matches(r#"<rect class="cell""#).count(), 16 * 256);
    assert!(svg.contains(">T127V31</text>"));
    // Cells of one thread share a colour; neighbouring threads differ.
    let colour_of = |label: &str| {
        let k = svg.find(&format!(">{label}</text>")).unwrap();
        let rect = svg[..k].rfind("fill=\"").unwrap();
        svg[rect + 6..rect + 6 + svg[rect + 6..].find('"').unwrap()].to_string()
    };
    assert_eq!(colour_of("T0V0"), colour_of("T0V1"));
    assert_ne!(colour_of("T0V0"), colour_of("T1V0"));
}

#[test]
fn rejects_malformed_svg() {
    assert!(well_formed("<svg><rect></svg>").is_err());
    assert!(well_formed("<svg></svg><svg></svg>").is_err());
}
