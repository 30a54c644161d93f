use super::*;

/// The offset of the `n`th (0-based) occurrence of `needle` in `source`, plus `within`.
fn at(source: &str, needle: &str, n: usize, within: usize) -> usize {
    source.match_indices(needle).nth(n).unwrap_or_else(|| panic!("`{needle}` #{n} not in the source")).0 + within
}

const TILED: &str = r#"const WARPS = 4;

fn twice(x) {
    return x * 2;
}

kernel rows(g: tensor<f32, gmem>, const tc) {
    let thr = tc.get_slice(thread_idx.x);
    let part = thr.partition_S(local_tile(g, (4, 128), (block_idx.x, 0)));
    let n = twice(size(part));
    for k in 0..2 {
        let unused = k;
    }
}

host run(g: tensor<f32, gmem, (?,128):(128,1), align: 16>) {
    let tc = make_tiled_copy_tv(make_copy_atom(f32, bits: 128), make_ordered_layout((WARPS, 32), order: (1, 0)), make_layout((1, 4)));
    let (m, _) = g.shape;
    launch rows(g, tc) grid(m / WARPS) block(128);
}
"#;

fn definition_values(a: &Analysis, offset: usize) -> (Definition, Vec<BoundValue>) {
    match a.hover(offset).expect("a name here").subject {
        Subject::Definition(d) => (d.def, d.values.values),
        other => panic!("not a definition: {other:?}"),
    }
}

#[test]
fn uses_resolve_to_their_definitions() {
    let a = analyze(TILED);
    assert!(a.errors.is_empty(), "{:?}", a.errors);
    // `tc` in the kernel is the kernel's `const` parameter, not the host's `let tc`.
    let use_in_kernel = at(TILED, "tc.get_slice", 0, 0);
    let def = a.definition(use_in_kernel).unwrap();
    assert_eq!((def.kind, def.span.start), (DefKind::ConstParam, at(TILED, "const tc", 0, 6)));
    // The launch's `tc` is the host's `let`.
    let def = a.definition(at(TILED, "rows(g, tc)", 0, 8)).unwrap();
    assert_eq!((def.kind, def.span.start), (DefKind::Let, at(TILED, "let tc", 0, 4)));
    // The launched kernel, a helper call and a `const` item.
    assert_eq!(a.definition(at(TILED, "launch rows", 0, 8)).unwrap().kind, DefKind::Kernel);
    assert_eq!(a.definition(at(TILED, "twice(size", 0, 2)).unwrap().kind, DefKind::Helper);
    assert_eq!(a.definition(at(TILED, "(WARPS, 32)", 0, 1)).unwrap().kind, DefKind::Const);
}

#[test]
fn hover_shows_the_tiled_copys_tv_layout_and_each_instances_layouts() {
    let a = analyze(TILED);
    let (def, values) = definition_values(&a, at(TILED, "let tc", 0, 5));
    assert_eq!(def.kind, DefKind::Let);
    assert_eq!(values.len(), 1);
    assert_eq!(values[0].context.as_deref(), Some("host `run`"));
    assert_eq!(values[0].value.ty, "tiled copy");
    let tv = values[0].value.facts.iter().find(|f| f.label == "TV layout").unwrap();
    assert_eq!(tv.text, "((32,4),4):((16,1),4)"); // as language.md §8.6 prints it

    // The kernel's parameter `g`: its declared type, then the layout of its one instance.
    let (def, values) = definition_values(&a, at(TILED, "g: tensor<f32, gmem>", 0, 0));
    assert_eq!(def.declared.as_deref(), Some("tensor<f32, gmem>"));
    assert_eq!(values[0].context.as_deref(), Some("kernel instance `rows`"));
    assert_eq!(values[0].value.ty, "tensor<f32, gmem, (?,128):(128,1), align: 16>");

    // A helper's parameter takes the value of each call.
    let (_, values) = definition_values(&a, at(TILED, "twice(x)", 0, 6));
    assert_eq!(values[0].value.ty, "static integer");
    assert_eq!(values[0].value.facts[0].text, "4"); // size(part): each thread's 4 values
}

#[test]
fn an_unrolled_loop_variable_keeps_each_trip() {
    let a = analyze(TILED);
    let (def, values) = definition_values(&a, at(TILED, "for k", 0, 4));
    assert_eq!(def.kind, DefKind::LoopVar);
    let shown: Vec<&str> = values.iter().map(|v| v.value.facts[0].text.as_str()).collect();
    assert_eq!(shown, ["0", "1"]);
}

#[test]
fn builtins_methods_fields_and_named_arguments_are_named() {
    let a = analyze(TILED);
    let subject = |needle: &str, within: usize| a.hover(at(TILED, needle, 0, within)).unwrap().subject;
    assert_eq!(subject("make_layout((1", 0), Subject::Builtin("make_layout".into()));
    assert_eq!(subject("get_slice", 0), Subject::Method("get_slice".into()));
    assert_eq!(subject("g.shape", 2), Subject::Field("shape".into()));
    assert_eq!(subject("bits: 128", 0), Subject::NamedArg { callee: "make_copy_atom".into(), name: "bits".into() });
    assert_eq!(subject("thread_idx", 0), Subject::Builtin("thread_idx".into()));
    assert_eq!(subject("f32, bits", 0), Subject::Type(Scalar::F32));
}

#[test]
fn unused_lets_are_warnings() {
    let a = analyze(TILED);
    let names: Vec<&str> = a.unused.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(names, ["unused variable `n`", "unused variable `unused`"]);
}

#[test]
fn a_generic_kernel_nobody_launches_has_no_values_and_says_why() {
    let source = "kernel k(g: tensor<f32, gmem>) {\n    let x = g.layout;\n}\n";
    let a = analyze(source);
    match a.hover(at(source, "let x", 0, 4)).unwrap().subject {
        Subject::Definition(d) => {
            assert!(d.values.values.is_empty());
            assert!(d.no_values.unwrap().contains("`k` has no instance"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn values_before_an_error_are_kept() {
    let source = "host h() {\n    let l = make_layout((4, 8));\n    let bad = nope;\n}\n";
    let a = analyze(source);
    assert_eq!(a.errors.len(), 1);
    let (_, values) = definition_values(&a, at(source, "let l", 0, 4));
    assert_eq!(values[0].value.facts[0].text, "(4,8):(1,4)");
}

#[test]
fn a_file_that_does_not_parse_has_one_error_and_no_names() {
    let a = analyze("kernel k( {");
    assert_eq!(a.errors.len(), 1);
    assert!(!a.parsed());
    assert!(a.hover(8).is_none());
}

#[test]
fn names_in_scope_follow_blocks() {
    let a = analyze(TILED);
    let names = |offset| a.names_in_scope(offset).iter().map(|d| d.name.clone()).collect::<Vec<_>>();
    let in_loop = names(at(TILED, "let unused", 0, 0));
    assert!(
        in_loop.contains(&"k".to_string())
            && in_loop.contains(&"thr".to_string())
            && in_loop.contains(&"WARPS".to_string())
    );
    let in_host = names(at(TILED, "launch", 0, 0));
    assert!(!in_host.contains(&"thr".to_string()) && in_host.contains(&"m".to_string()));
}

#[test]
fn scoping_is_elaborations() {
    let source = "fn h() {\n    return x;\n}\n\nhost run() {\n    let x = 1;\n    let x = x + 1;\n    if x > 1 {\n        let x = 10;\n    }\n    print(\"{}\", x, h());\n}\n";
    let a = analyze(source);
    // A helper does not see its caller's locals: elaboration reports it, resolution finds nothing.
    assert!(a.errors[0].message.contains("cannot find value `x`"), "{:?}", a.errors);
    assert!(a.definition(at(source, "return x", 0, 7)).is_none());
    // `let x = x + 1` reads the `x` before it; the print reads the second, not the block's.
    assert_eq!(a.definition(at(source, "x + 1", 0, 0)).unwrap().span.start, at(source, "let x = 1", 0, 4));
    assert_eq!(a.definition(at(source, "x, h()", 0, 0)).unwrap().span.start, at(source, "let x = x", 0, 4));
    let (_, values) = definition_values(&a, at(source, "let x = x", 0, 4));
    assert_eq!(values[0].value.facts[0].text, "2");
}

#[test]
fn a_ring_the_compiler_cannot_check_is_a_warning_not_an_unused_hint() {
    // tma_copy.cute with its transaction bytes known only at run time: `cutec check` warns, and
    // the editor shows the same warning, not faded as an unused binding is.
    let sample = include_str!("../../../samples/tma_copy.cute");
    assert!(sample.contains("T * T * 4);"), "the sample's expect_tx changed: update this test");
    let a = analyze(&sample.replacen("T * T * 4);", "m * 4);", 1));
    assert!(a.errors.is_empty(), "{:?}", a.errors);
    let warnings: Vec<&str> = a.warnings.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(warnings, ["the transaction bytes of this barrier are not checked: they are known only at run time"]);
    assert!(a.unused.iter().all(|d| d.message.starts_with("unused variable")), "{:?}", a.unused);
}

const LIB: &str = "const SCALE = 2.0;\nfn twice(v) {\n    let unused_in_lib = 1;\n    return SCALE * v;\n}\n";
const MAIN: &str = "import \"lib/common.cute\";\n\nhost run() {\n    let x = twice(3.0);\n    print(\"{}\", x);\n}\n";

fn analyze_program(files: [(&str, &str); 2]) -> Analysis {
    let mut loader = crate::imports::MemoryLoader::from(files);
    analyze_files(Sources::new("main.cute", MAIN), &mut loader, crate::Budget::default())
}

#[test]
fn names_from_an_imported_file_resolve_into_it() {
    let a = analyze_program([("main.cute", MAIN), ("lib/common.cute", LIB)]);
    assert!(a.errors.is_empty(), "{:?}", a.errors);
    assert_eq!(a.sources.files().len(), 2);
    let def = a.definition(at(MAIN, "twice(3.0)", 0, 0)).unwrap();
    let (file, local) = a.sources.local(def.span);
    assert_eq!((file, def.kind, local.start), (1, DefKind::Helper, at(LIB, "twice(v)", 0, 0)));
    // The helper's parameter was bound by the call in the root file.
    let v_in_lib = a.sources.global(1, Span::new(at(LIB, "twice(v)", 0, 6), at(LIB, "twice(v)", 0, 7)));
    assert_eq!(a.values(v_in_lib).unwrap().values[0].value.facts[0].text, "3");
    // The document's own items and unused bindings only; completion sees the imported names.
    let items: Vec<&str> = a.items().iter().map(|d| d.name.as_str()).collect();
    assert_eq!(items, ["run"]);
    assert!(a.unused.is_empty(), "{:?}", a.unused);
    let names: Vec<String> = a.names_in_scope(at(MAIN, "print", 0, 0)).iter().map(|d| d.name.clone()).collect();
    assert!(names.contains(&"SCALE".to_string()) && names.contains(&"x".to_string()), "{names:?}");
}

#[test]
fn an_error_in_an_imported_file_is_located_there_and_the_root_still_answers() {
    let broken = LIB.replace("SCALE * v", "SCALE * ");
    let a = analyze_program([("main.cute", MAIN), ("lib/common.cute", &broken)]);
    assert_eq!(a.errors.len(), 1, "{:?}", a.errors);
    assert_eq!(a.sources.file_of(a.errors[0].primary.0.start), 1);
    // Hover in the document still works; the imported name is unresolved.
    assert!(a.hover(at(MAIN, "let x", 0, 4)).is_some());
    assert!(a.definition(at(MAIN, "twice(3.0)", 0, 0)).is_none());
}

#[test]
fn without_a_loader_an_import_is_an_error_at_it() {
    let a = analyze(MAIN);
    assert!(a.errors[0].message.starts_with("cannot import `lib/common.cute`"), "{:?}", a.errors);
    assert!(a.parsed());
}
