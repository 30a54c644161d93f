use super::*;
use crate::kir::Module;

const KERNEL: &str = "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    a[thread_idx.x] = X;\n}\n";

fn front_end(files: &[(&str, &str)]) -> (Sources, Result<(File, Module), Vec<Diagnostic>>) {
    let mut loader = MemoryLoader { files: files.iter().map(|(n, t)| (n.to_string(), t.to_string())).collect() };
    let mut sources = Sources::new("main.cute", loader.files["main.cute"].clone());
    let r = crate::front_end_files(&mut sources, &mut loader, crate::Budget::default());
    (sources, r)
}

/// Loads `main.cute` of `files` and renders what goes wrong.
fn errors(files: &[(&str, &str)]) -> String {
    match front_end(files) {
        (_, Ok(_)) => panic!("accepted"),
        (sources, Err(ds)) => sources.render(&ds),
    }
}

fn module(files: &[(&str, &str)]) -> Module {
    match front_end(files) {
        (_, Ok((_, m))) => m,
        (sources, Err(ds)) => panic!("{}", sources.render(&ds)),
    }
}

#[test]
fn imports_bring_the_items_of_the_file() {
    let lib = "const X = 2.0;\nfn twice(v) {\n    return 2.0 * v;\n}\n";
    let main =
        "import \"lib/common.cute\";\nkernel k(a: tensor<f32, gmem, (8):(1)>) {\n    a[thread_idx.x] = twice(X);\n}\n";
    let m = module(&[("main.cute", main), ("lib/common.cute", lib)]);
    assert_eq!(m.kernels.len(), 1);
}

/// `a` and `b` both import `c`: it is loaded once (its names are not defined twice).
#[test]
fn a_diamond_loads_the_shared_file_once() {
    let files = [
        ("main.cute", "import \"a.cute\";\nimport \"b.cute\";\nconst X = A + B;\n".to_string() + KERNEL),
        ("a.cute", "import \"c.cute\";\nconst A = C;\n".into()),
        ("b.cute", "import \"./sub/../c.cute\";\nconst B = C;\n".into()),
        ("c.cute", "const C = 1.0;\n".into()),
    ];
    let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
    let (sources, r) = front_end(&files);
    r.unwrap_or_else(|ds| panic!("{}", sources.render(&ds)));
    let names: Vec<&str> = sources.files().iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["main.cute", "a.cute", "c.cute", "b.cute"]);
}

/// The host functions and standalone kernels of an imported file are not the importer's: an
/// imported kernel is compiled where a launch instantiates it.
#[test]
fn entry_points_are_the_root_files() {
    let lib = KERNEL.replace('X', "1.0");
    let m = module(&[("main.cute", "import \"lib.cute\";\nconst Y = 1;\n"), ("lib.cute", &lib)]);
    assert!(m.kernels.is_empty());
    assert_eq!(module(&[("main.cute", &lib)]).kernels.len(), 1);
}

#[test]
fn a_cycle_is_refused() {
    insta::assert_snapshot!(errors(&[
        ("main.cute", "import \"a.cute\";\n"),
        ("a.cute", "import \"b.cute\";\n"),
        ("b.cute", "import \"a.cute\";\n"),
    ]));
}

#[test]
fn a_missing_file_is_refused_where_it_is_imported() {
    insta::assert_snapshot!(errors(&[("main.cute", "import \"a.cute\";\n"), ("a.cute", "import \"nowhere.cute\";\n")]));
}

#[test]
fn a_name_in_two_files_is_refused() {
    insta::assert_snapshot!(errors(&[
        ("main.cute", "import \"a.cute\";\nconst A = 2;\n"),
        ("a.cute", "const A = 1;\n")
    ]));
}

/// `main` uses `C` of `c.cute`, which it imports only through `a.cute`.
#[test]
fn imports_are_not_transitive() {
    insta::assert_snapshot!(errors(&[
        ("main.cute", "import \"lib/a.cute\";\nconst X = C;\n"),
        ("lib/a.cute", "import \"c.cute\";\nconst A = C;\n"),
        ("lib/c.cute", "const C = 1.0;\n"),
    ]));
}

/// A type error in an imported file is shown in that file, with the chain of imports.
#[test]
fn an_error_in_an_imported_file_names_it() {
    let main = format!("import \"a.cute\";\n{}", KERNEL.replace('X', "f(1.0)"));
    insta::assert_snapshot!(errors(&[
        ("main.cute", &main),
        ("a.cute", "import \"b.cute\";\nfn f(v) {\n    return g(v);\n}\n"),
        ("b.cute", "fn g(v) {\n    return v + true;\n}\n"),
    ]));
}

#[test]
fn a_syntax_error_in_an_imported_file_names_it() {
    insta::assert_snapshot!(errors(&[("main.cute", "import \"a.cute\";\n"), ("a.cute", "const A = ;\n")]));
}

/// `front_end(source)` has no files to import from: it says so at the import.
#[test]
fn a_source_without_a_loader_cannot_import() {
    let src = "import \"a.cute\";\n";
    let e = crate::front_end(src).err().unwrap();
    assert!(e[0].message.starts_with("cannot import `a.cute`: this source was given as text"), "{e:?}");
    assert_eq!(e[0].primary.0, Span::new(7, 15));
}

#[test]
fn relative_paths() {
    assert_eq!(relative("main.cute", "lib/c.cute"), "lib/c.cute");
    assert_eq!(relative("lib/a.cute", "lib/c.cute"), "c.cute");
    assert_eq!(relative("x/a.cute", "lib/c.cute"), "../lib/c.cute");
    assert_eq!(beside("lib/a.cute", "../b.cute"), PathBuf::from("b.cute"));
}
