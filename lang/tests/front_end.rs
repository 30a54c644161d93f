//! Front-end tests: samples check clean, and each error renders as the user will see it.

use cute_lang::{diag::render, front_end};

fn errors(src: &str) -> String {
    match front_end(src) {
        Ok(_) => panic!("expected an error for:\n{src}"),
        Err(ds) => render("test.cute", src, &ds),
    }
}

#[test]
fn samples_check() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../samples");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "cute") {
            let src = std::fs::read_to_string(&path).unwrap();
            if let Err(ds) = front_end(&src) {
                panic!("{}", render(&path.display().to_string(), &src, &ds));
            }
            n += 1;
        }
    }
    assert!(n > 0);
}

#[test]
fn syntax_error_is_rendered_with_location() {
    insta::assert_snapshot!(errors("kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    let i = thread_idx.x\n    a[i] = 1.0;\n}\n"));
}

#[test]
fn unknown_name_suggests() {
    insta::assert_snapshot!(errors("kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    let i = thread_id.x;\n}\n"));
}

#[test]
fn type_mismatch() {
    insta::assert_snapshot!(errors("kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    let i = thread_idx.x;\n    a[i] = i;\n}\n"));
}

#[test]
fn coordinate_rank_mismatch() {
    insta::assert_snapshot!(errors("kernel k(a: tensor<f32, gmem, (4,8):(8,1)>) {\n    a[1, 2, 3] = 0.0;\n}\n"));
}

#[test]
fn unterminated_comment() {
    insta::assert_snapshot!(errors("kernel k() {\n /* never closed\n}\n"));
}

#[test]
fn huge_integer() {
    insta::assert_snapshot!(errors("kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    a[99999999999999999999] = 0.0;\n}\n"));
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let src = format!("kernel k() {{ let x = {}1{}; }}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(errors(&src).contains("brackets nest too deeply"));
}

#[test]
fn binary_garbage_is_an_error() {
    let src = String::from_utf8_lossy(&[0x00, 0xff, 0x13, 0x37, b'{', 0x80]).into_owned();
    assert!(errors(&src).contains("error"));
}

/// `assert`: static conditions are decided at compile time; comparisons of run-time values in a
/// host function become the host's `asserts` (one per `&&` operand), checked by the runtime.
#[test]
fn host_asserts_become_plan_conditions() {
    let src = "const TILE = 32;\n\
               host h(a: tensor<f32, gmem, (?,?):(?,1)>, b: tensor<f32, gmem, (?,?):(?,1)>, n: i32) {\n\
               \x20   assert(TILE % 8 == 0, \"static\");\n\
               \x20   assert(a.shape[1] == b.shape[1], \"A and B must have the same K\");\n\
               \x20   assert(a.shape[0] <= n && size(a) > 0 && n == n);\n\
               }\n";
    let (_, module) = front_end(src).unwrap_or_else(|ds| panic!("{}", render("test.cute", src, &ds)));
    let asserts = &module.hosts[0].asserts;
    let shown: Vec<(String, &str, String, &str, &str)> =
        asserts.iter().map(|a| (a.message.clone(), a.op.symbol(), a.lhs_text.clone(), a.rhs_text.as_str(), if a.lhs.is_static() { "static" } else { "dynamic" })).collect();
    assert_eq!(
        shown,
        [
            ("A and B must have the same K".to_string(), "==", "a.shape[1]".to_string(), "b.shape[1]", "dynamic"),
            ("a.shape[0] <= n".to_string(), "<=", "a.shape[0]".to_string(), "n", "dynamic"),
            ("size(a) > 0".to_string(), ">", "size(a)".to_string(), "0", "dynamic"),
        ]
    );
    // A run-time assert in a kernel is refused; a static one is checked per instance.
    let e = errors("kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    assert(size(a) > 0);\n}\n");
    assert!(e.contains("this `assert` depends on run-time values, which only host functions can check"), "{e}");
    assert!(front_end("kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    assert(size(a) == 8, \"eight\");\n}\n").is_ok());
}
