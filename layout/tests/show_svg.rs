//! `layout show --svg`: the SVG is well-formed and holds one cell per element (for an MMA, one per
//! element of each of its A, B and C panels).

use cute_layout::cli::run;

/// A minimal well-formedness check: every tag closes in order, attributes are
/// quoted, and the document has one root.
fn well_formed(svg: &str) -> Result<(), String> {
    let body = svg.trim_start();
    let body =
        if body.starts_with("<?xml") { &body[body.find("?>").ok_or("unterminated prolog")? + 2..] } else { body };
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
    // Tests run in parallel threads of one process: a fresh name per call.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("cute-layout-show-{}-{n}.svg", std::process::id()));
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

/// The rects of one panel `<g id="X">...</g>` of an MMA picture.
fn panel<'a>(svg: &'a str, id: &str) -> &'a str {
    let start = svg.find(&format!(r#"<g id="{id}">"#)).unwrap_or_else(|| panic!("no panel {id}"));
    let end = svg[start..].find("</g>").unwrap() + start;
    &svg[start..end]
}

#[test]
fn mma_svg_has_three_panels_one_rect_per_element() {
    let svg = show_svg("make_mma_atom(bf16, f32, (16,8,16))");
    well_formed(&svg).unwrap();
    assert_eq!(svg.matches(r#"<rect class="cell""#).count(), 16 * 16 + 16 * 8 + 16 * 8);
    for (id, cells) in [("A", 16 * 16), ("B", 16 * 8), ("C", 16 * 8)] {
        assert_eq!(panel(&svg, id).matches(r#"<rect class="cell""#).count(), cells, "{id}");
        // Every lane appears in every panel; no cell is empty.
        assert!(!panel(&svg, id).contains(r#"fill="white""#), "{id}");
        for lane in 0..32 {
            assert!(panel(&svg, id).contains(&format!(">T{lane}V0</text>")), "{id} lane {lane}");
        }
    }
    assert_eq!(svg.matches(">T0V0</text>").count(), 3);
    assert!(panel(&svg, "A").contains(">T31V7</text>") && !panel(&svg, "B").contains(">T31V4</text>"));
    // One colour per thread, across the panels.
    let fill_of = |part: &str, label: &str| {
        let k = part.find(&format!(">{label}</text>")).unwrap();
        let rect = part[..k].rfind("fill=\"").unwrap();
        part[rect + 6..rect + 6 + part[rect + 6..].find('"').unwrap()].to_string()
    };
    let (a, b, c) = (panel(&svg, "A"), panel(&svg, "B"), panel(&svg, "C"));
    assert_eq!(fill_of(a, "T5V0"), fill_of(b, "T5V0"));
    assert_eq!(fill_of(a, "T5V0"), fill_of(c, "T5V3"));
    assert_ne!(fill_of(c, "T5V0"), fill_of(c, "T6V0"));
    // B sits above C, in C's columns; A to the left of C, in C's rows.
    let first_rect = |part: &str| -> (usize, usize) {
        let r = &part[part.find("<rect").unwrap()..];
        let attr = |name: &str| -> usize {
            let k = r.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
            r[k..k + r[k..].find('"').unwrap()].parse().unwrap()
        };
        (attr("x"), attr("y"))
    };
    let ((ax, ay), (bx, by), (cx, cy)) = (first_rect(a), first_rect(b), first_rect(c));
    assert_eq!(bx, cx);
    assert!(by + 16 * 24 <= cy);
    assert_eq!(ay, cy);
    assert!(ax + 16 * 40 <= cx);
    // A tiled MMA: 128 threads over (32,16,16).
    let svg = show_svg("make_tiled_mma(make_mma_atom(bf16, f32, (16,8,16)), (2,2,1))");
    well_formed(&svg).unwrap();
    assert_eq!(svg.matches(r#"<rect class="cell""#).count(), 32 * 16 + 16 * 16 + 32 * 16);
    assert!(panel(&svg, "C").contains(">T127V3</text>"));
    assert!(!panel(&svg, "A").contains(">T64V0</text>"), "A shows the lowest of the threads holding an element");
}

#[test]
fn mma_svg_reports_its_panels() {
    let path = std::env::temp_dir().join(format!("cute-layout-mma-{}.svg", std::process::id()));
    let args: Vec<String> = ["show", "make_mma_atom(tf32, f32, (16,8,8))", "--svg", path.to_str().unwrap()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    assert_eq!(run(&args, &mut std::io::empty(), &mut out, &mut err), 0);
    let _ = std::fs::remove_file(&path);
    assert_eq!(String::from_utf8_lossy(&out), format!("wrote {} (A 16x8, B 8x8, C 16x8 cells)\n", path.display()));
}

#[test]
fn rejects_malformed_svg() {
    assert!(well_formed("<svg><rect></svg>").is_err());
    assert!(well_formed("<svg></svg><svg></svg>").is_err());
}
