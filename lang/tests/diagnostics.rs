//! One snapshot per distinct error the front end reports: lexical, syntactic, type resolution and
//! elaboration. Each case is a small realistic `.cute` program rendered as the user sees it
//! (`file:line:col`, the primary label, secondary labels and help).
//!
//! Update the snapshots with `INSTA_UPDATE=always cargo test -p cute-lang --test diagnostics`, then
//! read every changed `.snap` file: the message, the span and the help must still be right.

use cute_abi::Arch;
use cute_lang::{diag::render, front_end};

/// The rendered errors of `src`, from the front end run on a 64 MiB stack as `cutec` runs it (a
/// runaway `fn` recursion is 64 nested inlinings deep before it is refused).
fn errors(src: &str) -> String {
    let src = src.to_string();
    let worker = std::thread::Builder::new().stack_size(64 << 20).spawn(move || match front_end(&src) {
        Ok(_) => panic!("expected an error for:\n{src}"),
        Err(ds) => render("test.cute", &src, &ds),
    });
    worker.expect("spawn the front end's thread").join().unwrap_or_else(|e| std::panic::resume_unwind(e))
}

/// `name => source`: one test function (and one snapshot) per case, and the same list for
/// [`every_case_renders_a_located_error`].
macro_rules! cases {
    ($($name:ident => $src:expr;)*) => {
        $(
            #[test]
            fn $name() {
                insta::assert_snapshot!(errors(&$src));
            }
        )*
        const CASES: &[(&str, fn() -> String)] = &[$((stringify!($name), || String::from($src))),*];
    };
}

/// A host taking three (?,?) row-major f32 tensors, for launch errors; `BODY` is the host's body.
fn host3(kernel: &str, body: &str) -> String {
    format!(
        "{kernel}\n\nhost run(mA: tensor<f32, gmem, (?,?):(?,1), align: 16>, mB: tensor<f32, gmem, (?,?):(?,1), align: 16>, n: i32) {{\n{body}\n}}\n"
    )
}

const COPY_KERNEL: &str = "kernel copy_rows(src: tensor<f32, gmem>, dst: tensor<f32, gmem>) {\n    let i = block_idx.x;\n    let j = thread_idx.x;\n    dst[i, j] = src[i, j];\n}";

cases! {
    // ----- lexer -----------------------------------------------------------------------------
    lex_unterminated_block_comment => "kernel k() {\n    /* TODO: the body\n}\n";
    lex_integer_too_large => "const BIG = 99999999999999999999;\n";
    lex_hex_too_large => "const MASK = 0xFFFF_FFFF_FFFF_FFFF_FF;\n";
    lex_float_out_of_range => "const EPS = 1e999;\n";
    lex_unterminated_string_at_end_of_line => "kernel k() {\n    printf(\"hello\n    );\n}\n";
    lex_unterminated_string_at_end_of_file => "kernel k() {\n    printf(\"hello";
    lex_unknown_escape => "kernel k() {\n    printf(\"tab\\q\\n\");\n}\n";
    lex_unexpected_character => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    a[0] = 1.0 @ 2.0;\n}\n";
    lex_unexpected_control_character => "kernel k() {\n    let x = 1;\u{7}\n}\n";

    // ----- parser ----------------------------------------------------------------------------
    parse_unexpected_token => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    let = a[0];\n}\n";
    parse_missing_semicolon => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    let i = thread_idx.x\n    a[i] = 1.0;\n}\n";
    parse_unexpected_eof => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    a[0] = 1.0;\n";
    parse_item_expected => "let x = 3;\n";
    parse_brackets_nest_too_deeply => format!("const X = {}1{};\n", "(".repeat(300), ")".repeat(300));
    parse_expression_too_deep => format!("const X = 1{};\n", " + 1".repeat(300));

    // ----- types -----------------------------------------------------------------------------
    type_unknown_with_suggestion => "kernel k(a: tensor<fp32, gmem, (8):(1)>) {\n}\n";
    type_unknown_without_suggestion => "kernel k(x: float) {\n}\n";
    type_unknown_memory_space => "kernel k(a: tensor<f32, global, (8):(1)>) {\n}\n";
    type_alignment_not_power_of_two => "kernel k(a: tensor<f32, gmem, (8):(1), align: 12>) {\n}\n";
    type_alignment_below_element_size => "kernel k(a: tensor<f64, gmem, (8):(1), align: 4>) {\n}\n";
    type_shape_stride_mismatch => "kernel k(a: tensor<f32, gmem, (4,8):(1)>) {\n}\n";
    type_zero_extent => "kernel k(a: tensor<f32, gmem, (4,0):(1,4)>) {\n}\n";
    type_div_not_positive => "host h(a: tensor<f16, gmem, (?{div=0}):(1)>) {\n}\n";
    type_div_wrong_key => "host h(a: tensor<f16, gmem, (?{mod=8}):(1)>) {\n}\n";
    type_empty_layout_tuple => "kernel k(a: tensor<f32, gmem, ()>) {\n}\n";
    type_parameter_needs_type => "kernel k(a: tensor<f32, gmem, (8):(1)>, n) {\n}\n";
    type_fn_type_needs_const => "kernel k(op: fn(f32, f32) -> f32, a: tensor<f32, gmem, (8):(1)>) {\n}\n";
    type_let_annotation_not_scalar => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    let b: tensor<f32, gmem, (8):(1)> = a;\n}\n";

    // ----- items and parameters ----------------------------------------------------------------
    item_defined_twice => "kernel k() {\n}\n\nkernel k() {\n}\n";
    item_const_not_static => "const TID = thread_idx.x;\n";
    kernel_returns_value => "kernel k(a: tensor<f32, gmem, (8):(1)>) -> f32 {\n    return a[0];\n}\n";
    kernel_tensor_not_gmem => "kernel k(a: tensor<f32, smem, (8):(1)>) {\n}\n";
    host_returns_value => "host h(n: i32) -> i32 {\n    return n;\n}\n";
    host_const_parameter => "host h(const n: i32) {\n}\n";
    host_tensor_without_layout => "host h(a: tensor<f32, gmem>) {\n}\n";
    host_tensor_not_gmem => "host h(a: tensor<f32, smem, (8):(1)>) {\n}\n";
    host_function_type_parameter => "host h(op: fn(f32) -> f32) {\n}\n";

    // ----- names, calls, arguments ------------------------------------------------------------
    unknown_name_did_you_mean => "kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    let i = thread_id.x;\n    a[i] = 0.0;\n}\n";
    unknown_name_local_did_you_mean => "kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    let index = thread_idx.x;\n    a[indx] = 0.0;\n}\n";
    unknown_function_did_you_mean => "host h(a: tensor<f32, gmem, (?,?):(?,1)>) {\n    let l = make_layuot((4, 8), stride: (8, 1));\n}\n";
    unknown_function_no_suggestion => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    frobnicate(a, a);\n}\n";
    builtin_wrong_argument_count => "host h(a: tensor<f32, gmem, (?,?):(?,1)>) {\n    let n = size(a, 1);\n}\n";
    helper_wrong_argument_count => "fn axpy(alpha, x, y) {\n    return alpha * x + y;\n}\n\nkernel k(a: tensor<f32, gmem, (8):(1)>) {\n    a[0] = axpy(2.0, a[1]);\n}\n";
    unknown_named_argument => "host h(a: tensor<f32, gmem, (?,?):(?,1)>) {\n    let l = make_layout((4, 8), strides: (8, 1));\n}\n";
    named_argument_on_builtin_without_names => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    let (tiler, tv) = make_layout_tv(make_layout(4), make_layout(2), order: 1);\n}\n";
    not_callable => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    let n = 4;\n    a[0] = n(1);\n}\n";
    kernel_called_not_launched => host3(COPY_KERNEL, "    copy_rows(mA, mB);");
    helper_runaway_recursion => "fn twice(x) {\n    return twice(x * 2);\n}\n\nkernel k(a: tensor<f32, gmem, (8):(1)>) {\n    a[0] = twice(a[1]);\n}\n";
    helper_can_fall_off_its_end => "fn clamp(x) {\n    if x > 1.0 {\n        return 1.0;\n    }\n}\n\nkernel k(a: tensor<f32, gmem, (8):(1)>) {\n    a[0] = clamp(a[1]);\n}\n";
    helper_runtime_return_of_tensor => "fn pick(t, c) {\n    if c {\n        return t;\n    }\n    return t;\n}\n\nkernel k(a: tensor<f32, gmem, (8):(1)>) {\n    let v = pick(a, a[0] > 0.0);\n}\n";
    helper_returns_mixed_types => "fn f(x: f32) {\n    if x > 0.0 {\n        return x;\n    }\n    return x > 1.0;\n}\n\nkernel k(a: tensor<f32, gmem, (8):(1)>) {\n    a[0] = f(a[1]);\n}\n";

    // ----- types of values ------------------------------------------------------------------
    mismatched_types_in_binary => "kernel k(a: tensor<f32, gmem, (8):(1)>, b: tensor<f16, gmem, (8):(1)>) {\n    a[0] = a[1] + b[1];\n}\n";
    mismatched_types_in_store => "kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    let i = thread_idx.x;\n    a[i] = i;\n}\n";
    mismatched_types_in_let => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    let h: f16 = a[0];\n}\n";
    fragment_sizes_differ => "kernel k(a: tensor<f32, gmem, (8):(1)>, b: tensor<f32, gmem, (4):(1)>) {\n    let s = a.load() + b.load();\n}\n";
    negate_unsigned => "kernel k(a: tensor<u32, gmem, (8):(1)>) {\n    a[0] = -a[1];\n}\n";
    bitwise_on_float => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    a[0] = a[1] << 2;\n}\n";
    not_on_float => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    a[0] = !a[1];\n}\n";
    unary_on_layout => "host h(a: tensor<f32, gmem, (?):(1)>) {\n    let l = -make_layout(4);\n}\n";
    static_bool_arithmetic => "const FLAG = true + false;\n";
    static_float_remainder => "const R = 7.5 % 2.0;\n";
    static_division_by_zero => "const TILE = 128;\nconst PARTS = TILE / (TILE - 128);\n";
    static_overflow => "const HUGE = 1 << 70;\n";
    convert_to_non_type => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    let x = a[0].to(16);\n}\n";
    if_condition_not_bool => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    if 8 {\n        a[0] = 1.0;\n    }\n}\n";

    // ----- coordinates and indexing ---------------------------------------------------------
    coordinate_rank_mismatch => "kernel k(a: tensor<f32, gmem, (4,8):(8,1)>) {\n    a[1, 2, 3] = 0.0;\n}\n";
    coordinate_does_not_fit => "kernel k(a: tensor<f32, gmem, (4,8):(8,1)>) {\n    a[(1, 2), 3] = 0.0;\n}\n";
    coordinate_not_integer => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    a[1.5] = 0.0;\n}\n";
    index_into_integer => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    let n = 8;\n    a[0] = n[0];\n}\n";
    tuple_index_out_of_range => "host h(a: tensor<f32, gmem, (?,?):(?,1)>) {\n    let n = a.shape[2];\n}\n";
    tuple_index_not_static => "kernel k(a: tensor<f32, gmem, (4,8):(8,1)>) {\n    let n = a.shape[thread_idx.x];\n}\n";
    slice_assigned_scalar => "kernel k(a: tensor<f32, gmem, (4,8):(8,1)>) {\n    a[_, 0] = 1.0;\n}\n";
    assign_to_field => "kernel k(a: tensor<f32, gmem, (4,8):(8,1)>) {\n    a.shape = (8, 4);\n}\n";
    no_field_on_dim3 => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    a[thread_idx.w] = 0.0;\n}\n";
    no_field_on_tensor => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    let s = a.size;\n}\n";
    no_method => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    let f = a.lod();\n}\n";
    pattern_count_mismatch => "host h(a: tensor<f32, gmem, (?,?):(?,1)>) {\n    let (m, n, k) = a.shape;\n}\n";
    const_type_mismatch => "const X: i32 = 2.5;\nkernel k() {}\n";
    copy_atom_wider_than_contiguous_run => "kernel k(gA: tensor<f32, gmem, (2,8):(1,16), align: 16>) {\n    let atom = make_copy_atom(f32, bits: 128);\n    let r = make_rmem_tensor((2, 8), f32);\n    copy(atom, gA, r);\n}\n";
    copy_atom_needs_alignment => "kernel k(gA: tensor<f32, gmem, (4,8):(1,4)>) {\n    let atom = make_copy_atom(f32, bits: 128);\n    let r = make_rmem_tensor((4, 8), f32);\n    copy(atom, gA, r);\n}\n";
    pattern_not_a_tuple => "host h(a: tensor<f32, gmem, (?,?):(?,1)>) {\n    let (m, n) = size(a);\n}\n";

    // ----- static values: const parameters, layout algebra ------------------------------------
    const_param_needs_static_value => host3("kernel tile_copy(src: tensor<f32, gmem>, const TILE) {\n    let t = local_tile(src, (TILE, TILE), (block_idx.x, 0));\n}", "    launch tile_copy(mA, n) grid(1) block(32);");
    layout_algebra_composition => "host h(a: tensor<f32, gmem, (?):(1)>) {\n    let c = composition(make_layout((3, 5), stride: (5, 1)), make_layout(4, stride: 2));\n}\n";
    layout_algebra_complement => "host h(a: tensor<f32, gmem, (?):(1)>) {\n    let c = complement(make_layout((2, 2), stride: (1, 1)), 8);\n}\n";
    layout_shape_stride_mismatch_in_make_layout => "host h(a: tensor<f32, gmem, (?):(1)>) {\n    let l = make_layout((4, 8), stride: (8, 1, 1));\n}\n";
    not_a_layout => "host h(a: tensor<f32, gmem, (?):(1)>) {\n    let n = size(1.5);\n}\n";
    not_a_tiler => "host h(a: tensor<f32, gmem, (?,?):(?,1)>) {\n    let g = zipped_divide(a, 2.0);\n}\n";
    ordered_layout_needs_order => "host h(a: tensor<f32, gmem, (?):(1)>) {\n    let l = make_ordered_layout((4, 32));\n}\n";
    group_modes_dynamic_bound => "host h(a: tensor<f32, gmem, (?,?,?):(?,?,1)>, n: i32) {\n    let g = group_modes(a, 0, n);\n}\n";
    ceil_div_by_zero => "host h(a: tensor<f32, gmem, (?):(1)>) {\n    let n = size(a);\n    let blocks = ceil_div(n, 0);\n}\n";
    make_tensor_of_layout => "host h(a: tensor<f32, gmem, (?):(1)>) {\n    let t = make_tensor(make_layout(4), make_layout(4));\n}\n";

    // ----- launches --------------------------------------------------------------------------
    launch_outside_host => "kernel child() {\n}\n\nkernel parent() {\n    launch child() grid(1) block(32);\n}\n";
    launch_unknown_kernel => host3(COPY_KERNEL, "    launch copy_row(mA, mB) grid(1) block(32);");
    launch_not_a_kernel => host3("fn helper(x) {\n    return x;\n}", "    launch helper(n) grid(1) block(32);");
    launch_wrong_argument_count => host3(COPY_KERNEL, "    launch copy_rows(mA) grid(1) block(32);");
    launch_unknown_clause_did_you_mean => host3(COPY_KERNEL, "    launch copy_rows(mA, mB) grids(8) block(32);");
    launch_unknown_clause_list => host3(COPY_KERNEL, "    launch copy_rows(mA, mB) grid(8) block(32) priority(2);");
    stream_clause_in_kernel => "kernel child() {\n}\n\nkernel parent(s: stream) {\n    launch child() grid(1) block(32) stream(s);\n}\n";
    stream_param_on_kernel => "kernel k(a: tensor<f32, gmem, (?):(1)>, s: stream) {\n    a[0] = 1.0;\n}\n";
    stream_clause_not_a_stream => host3(COPY_KERNEL, "    launch copy_rows(mA, mB) grid(8) block(32) stream(n);");
    stream_clause_literal => host3(COPY_KERNEL, "    launch copy_rows(mA, mB) grid(8) block(32) stream(0);");
    stream_clause_twice => "kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    a[0] = 1.0;\n}\n\nhost h(a: tensor<f32, gmem, (?):(1)>, s: stream, t: stream) {\n    launch k(a) grid(1) block(1) stream(s) stream(t);\n}\n";
    stream_in_arithmetic => "kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    a[0] = 1.0;\n}\n\nhost h(a: tensor<f32, gmem, (?):(1)>, s: stream) {\n    launch k(a) grid(s + 1) block(1);\n}\n";
    stream_passed_to_kernel => "kernel k(a: tensor<f32, gmem, (?):(1)>, n: i32) {\n    a[0] = 1.0;\n}\n\nhost h(a: tensor<f32, gmem, (?):(1)>, s: stream) {\n    launch k(a, s) grid(1) block(1);\n}\n";
    launch_missing_block => host3(COPY_KERNEL, "    launch copy_rows(mA, mB) grid(8);");
    launch_impossible_block => host3(COPY_KERNEL, "    launch copy_rows(mA, mB) grid(8) block(64, 32);");
    launch_grid_extent_out_of_range => host3(COPY_KERNEL, "    launch copy_rows(mA, mB) grid(8, 65536) block(32);");
    launch_negative_block_extents => host3(COPY_KERNEL, "    launch copy_rows(mA, mB) grid(8) block(-1, -1);");
    launch_too_many_extents => host3(COPY_KERNEL, "    launch copy_rows(mA, mB) grid(8, 1, 1, 1) block(32);");
    launch_smem_arguments => host3(COPY_KERNEL, "    launch copy_rows(mA, mB) grid(8) block(32) smem(1024, 16);");
    launch_arg_dtype_mismatch => host3("kernel k(src: tensor<f16, gmem>, dst: tensor<f32, gmem>) {\n}", "    launch k(mA, mB) grid(1) block(32);");
    launch_arg_space_mismatch => host3("kernel k(src: tensor<f32, smem>, dst: tensor<f32, gmem>) {\n}", "    launch k(mA, mB) grid(1) block(32);");
    launch_arg_alignment_mismatch => host3("kernel k(src: tensor<f32, gmem, (?,?):(?,1), align: 32>, dst: tensor<f32, gmem>) {\n}", "    launch k(mA, mB) grid(1) block(32);");
    launch_arg_layout_mismatch => host3("kernel k(src: tensor<f32, gmem, (?,8):(8,1)>, dst: tensor<f32, gmem>) {\n}", "    launch k(mA, mB) grid(1) block(32);");
    launch_arg_not_a_tensor => host3(COPY_KERNEL, "    launch copy_rows(mA, 0) grid(1) block(32);");
    launch_arg_not_an_i32 => host3("kernel k(src: tensor<f32, gmem>, n: i32) {\n}", "    launch k(mA, mB) grid(1) block(32);");
    launch_scalar_wrong_float_type => "kernel k(src: tensor<f32, gmem>, alpha: f16) {\n}\n\nhost run(a: tensor<f32, gmem, (?):(1)>, alpha: f32) {\n    launch k(a, alpha) grid(1) block(32);\n}\n";
    launch_float_from_runtime_int => host3("kernel k(src: tensor<f32, gmem>, alpha: f32) {\n}", "    launch k(mA, n) grid(1) block(32);");
    launch_scalar_out_of_range => host3("kernel k(src: tensor<f32, gmem>, q: u8) {\n}", "    launch k(mA, 300) grid(1) block(32);");
    error_inside_launched_kernel => host3("kernel k(src: tensor<f32, gmem>, dst: tensor<f32, gmem>) {\n    let v = src.load();\n}", "    launch k(mA, mB) grid(1) block(32);");

    // ----- memory: load, store, copy, allocation -----------------------------------------------
    load_dynamic_size => "kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    let v = a.load();\n}\n";
    load_too_large => "kernel k(a: tensor<f32, gmem, (16,32):(32,1)>) {\n    let v = a.load();\n}\n";
    store_fragment_size_mismatch => "kernel k(a: tensor<f32, gmem, (8):(1)>, b: tensor<f32, gmem, (4):(1)>) {\n    b.store(a.load());\n}\n";
    store_fragment_type_mismatch => "kernel k(a: tensor<f32, gmem, (8):(1)>, b: tensor<f16, gmem, (8):(1)>) {\n    b.store(a.load());\n}\n";
    store_not_a_fragment => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    a.store(1.0);\n}\n";
    copy_size_mismatch => "kernel k(a: tensor<f32, gmem, (8,8):(8,1)>) {\n    let r = make_rmem_tensor(4, f32);\n    basic_copy(a[0, _], r);\n}\n";
    copy_element_type_mismatch => "kernel k(a: tensor<f32, gmem, (8,8):(8,1)>) {\n    let r = make_rmem_tensor(8, f16);\n    basic_copy(a[0, _], r);\n}\n";
    rmem_too_large => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    let r = make_rmem_tensor((32, 32), f32);\n}\n";
    smem_dynamic_layout => "kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    let n = size(a);\n    let s = make_smem_tensor(f32, make_layout(n));\n}\n";
    rmem_element_not_a_type => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    let r = make_rmem_tensor(8, 4);\n}\n";
    copy_atom_bad_width => "kernel k(a: tensor<f16, gmem, (8):(1)>) {\n    let atom = make_copy_atom(f16, bits: 24);\n}\n";
    tiled_copy_tile_does_not_divide => "kernel k(g: tensor<f16, gmem, (128,32):(32,1), align: 16>, const tc) {\n    let s = make_smem_tensor(f16, make_layout((128, 32), stride: (32, 1)));\n    let thr = tc.get_slice(thread_idx.x);\n    copy(tc, thr.partition_S(g), thr.partition_D(s));\n}\n\nhost run(g: tensor<f16, gmem, (128,32):(32,1), align: 16>) {\n    let tc = make_tiled_copy_tv(make_copy_atom(f16, bits: 128), make_ordered_layout((32, 8), order: (1, 0)), make_layout((1, 8)));\n    launch k(g, tc) grid(1) block(256);\n}\n";
    mma_partition_tile_does_not_divide => "kernel k(g: tensor<bf16, gmem, (24,16):(16,1)>, const mma) {\n    let p = mma.get_slice(thread_idx.x).partition_A(g);\n}\n\nhost run(g: tensor<bf16, gmem, (24,16):(16,1)>) {\n    launch k(g, make_tiled_mma(make_mma_atom(bf16, f32, shape: (16, 8, 16)), (1, 1, 1))) grid(1) block(32);\n}\n";
    make_tensor_past_its_memory => "kernel k(g: tensor<f32, gmem, (64):(1)>) {\n    let s = make_smem_tensor(f32, make_layout(64));\n    let big = make_tensor(s, make_layout((16, 8)));\n}\n";
    mma_atom_unknown_shape => "host run(g: tensor<bf16, gmem, (16,16):(16,1)>) {\n    let atom = make_mma_atom(bf16, f32, shape: (16, 8, 32));\n}\n";
    gemm_fragment_in_smem => "kernel k(g: tensor<bf16, gmem, (16,16):(16,1)>, const mma) {\n    let thr = mma.get_slice(thread_idx.x);\n    let s = make_smem_tensor(bf16, make_layout((16, 16), stride: (16, 1)));\n    let c = thr.partition_fragment_C(make_layout((16, 8)));\n    gemm(mma, c, thr.partition_A(s), thr.partition_fragment_B(make_layout((8, 16))));\n}\n\nhost run(g: tensor<bf16, gmem, (16,16):(16,1)>) {\n    launch k(g, make_tiled_mma(make_mma_atom(bf16, f32, shape: (16, 8, 16)), (1, 1, 1))) grid(1) block(32);\n}\n";
    tiled_copy_needs_atom => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    let tc = make_tiled_copy_tv(f32, make_layout(32), make_layout(4));\n}\n";
    tiled_copy_dynamic_tv => "kernel k(a: tensor<f32, gmem, (?,64):(64,1)>, n: i32) {\n    let atom = make_copy_atom(f32, bits: 32);\n    let tc = make_tiled_copy(atom, make_layout((n, 4)), (4, 4));\n}\n";
    reduce_profile_invalid_entry => "kernel k(a: tensor<f32, gmem, (4,8):(8,1)>, out: tensor<f32, gmem, (8):(1)>) {\n    let s = a.load().reduce(add, init: 0.0, profile: (1, 2));\n}\n";
    reduce_profile_wrong_length => "kernel k(a: tensor<f32, gmem, (4,8):(8,1)>) {\n    let s = a.load().reduce(add, init: 0.0, profile: (1, _, _));\n}\n";
    math_on_integer => "kernel k(a: tensor<i32, gmem, (8):(1)>) {\n    let r = sqrt(a[0]);\n}\n";
    full_like_of_tensor => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    let z = full_like(a, 0.0);\n}\n";
    reduce_needs_operation => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    let s = a.load().reduce(0.0);\n}\n";

    // ----- statements --------------------------------------------------------------------------
    kernel_return_with_value => "kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    let i = thread_idx.x;\n    if i >= size(a) {\n        return 0;\n    }\n    a[i] = 0.0;\n}\n";
    break_outside_loop => "kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    if a[0] > 0.0 {\n        break;\n    }\n}\n";
    continue_in_helper_not_in_loop => "fn skip(x) {\n    if x > 0.0 {\n        continue;\n    }\n}\n\nkernel k(a: tensor<f32, gmem, (?):(1)>) {\n    for i in 0..size(a) {\n        skip(a[i]);\n    }\n}\n";
    while_in_host => "host h(a: tensor<f32, gmem, (?):(1)>, n: i32) {\n    while n > 0 {\n    }\n}\n";
    while_condition_not_bool => "kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    let mut i = 0;\n    while i {\n        i += 1;\n    }\n}\n";
    host_returns_a_value_statement => "host h(a: tensor<f32, gmem, (?):(1)>) {\n    return 1;\n}\n";
    assign_immutable => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    let acc = 0.0;\n    for i in 0..8 {\n        acc += a[i];\n    }\n}\n";
    let_mut_non_scalar => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    let mut l = make_layout(8);\n}\n";
    let_mut_in_host => "host h(a: tensor<f32, gmem, (?):(1)>) {\n    let mut blocks = 1;\n}\n";
    host_if_compares_a_tensor => "host h(a: tensor<f32, gmem, (?):(1)>, n: i32) {\n    if a < 4096 {\n        printf(\"small\\n\");\n    }\n}\n";
    host_if_compares_with_a_float => "host h(a: tensor<f32, gmem, (?):(1)>, n: i32) {\n    if size(a) > 1.5 {\n        printf(\"large\\n\");\n    }\n}\n";
    host_if_integer_condition => "host h(a: tensor<f32, gmem, (?):(1)>, n: i32) {\n    if n {\n        printf(\"nonzero\\n\");\n    }\n}\n";
    host_if_compares_conditions => "host h(a: tensor<f32, gmem, (?):(1)>, n: i32) {\n    if (n < 4) == (size(a) < 4) {\n        printf(\"both or neither\\n\");\n    }\n}\n";
    host_if_and_of_an_integer => "host h(a: tensor<f32, gmem, (?):(1)>, n: i32) {\n    if n > 4 && size(a) {\n        printf(\"large\\n\");\n    }\n}\n";
    host_if_error_inside_a_branch => "kernel k(a: tensor<f32, gmem>) {\n    a[thread_idx.x] = 0.0;\n}\n\nhost h(a: tensor<f32, gmem, (?):(1)>, n: i32) {\n    if n > 1024 {\n        launch k(a) grid(1) block(2048);\n    } else {\n        launch k(a) grid(1) block(32);\n    }\n}\n";
    host_bool_printed => "host h(a: tensor<f32, gmem, (?):(1)>, n: i32) {\n    let big = n > 1024;\n    printf(\"{}\\n\", big);\n}\n";
    host_loop_return => "host h(a: tensor<f32, gmem, (?):(1)>, n: i32) {\n    for i in 0..n {\n        printf(\"{}\\n\", i);\n        return;\n    }\n}\n";
    host_return_under_runtime_if => host3(COPY_KERNEL, "    if n > 4 {\n        return;\n    }\n    launch copy_rows(mA, mB) grid(n) block(32);");
    host_helper_returns_under_runtime_if => host3(&format!("{COPY_KERNEL}\n\nfn blocks(n) {{\n    if n > 132 {{\n        return 132;\n    }}\n    return n;\n}}"), "    launch copy_rows(mA, mB) grid(blocks(n)) block(32);");
    host_helper_return_statement_under_runtime_if => host3(&format!("{COPY_KERNEL}\n\nfn maybe_copy(a, b, n) {{\n    if n > 4 {{\n        return;\n    }}\n    launch copy_rows(a, b) grid(n) block(32);\n}}"), "    maybe_copy(mA, mB, n);");
    host_break_of_unrolled_loop_under_runtime_if => host3(COPY_KERNEL, "    for k in 0..4 {\n        if n > k {\n            break;\n        }\n        launch copy_rows(mA, mB) grid(k + 1) block(32);\n    }");
    host_loop_variable_as_const => host3("kernel fill(dst: tensor<f32, gmem>, const ROW) {\n    dst[ROW, thread_idx.x] = 0.0;\n}", "    for r in 0..n {\n        launch fill(mA, r) grid(1) block(32);\n    }");
    host_loop_variable_as_float => host3("kernel scale(dst: tensor<f32, gmem>, s: f32) {\n    dst[block_idx.x, thread_idx.x] = s;\n}", "    for r in 0..n {\n        launch scale(mA, r) grid(1) block(32);\n    }");
    host_loop_step_not_positive => host3(COPY_KERNEL, "    for r in 0..n step -1 {\n        launch copy_rows(mA, mB) grid(r) block(32);\n    }");
    host_loop_bound_not_integer => host3(COPY_KERNEL, "    for r in 0..mA {\n        launch copy_rows(mA, mB) grid(r) block(32);\n    }");
    host_reads_memory => "host h(a: tensor<f32, gmem, (?):(1)>) {\n    printf(\"{}\\n\", a[0]);\n}\n";
    host_thread_idx => "host h(a: tensor<f32, gmem, (?):(1)>) {\n    let t = thread_idx.x;\n}\n";
    host_where_on_floats => "host h(a: tensor<f32, gmem, (?):(1)>, x: f32) {\n    let s = where(size(a) > 4, x, 1.0);\n}\n";
    for_unknown_clause => "kernel k(a: tensor<f32, gmem, (16):(1)>) {\n    for i in 0..16 stride 2 {\n        a[i] = 0.0;\n    }\n}\n";
    for_step_not_positive => "kernel k(a: tensor<f32, gmem, (16):(1)>) {\n    for i in 0..16 step 0 {\n        a[i] = 0.0;\n    }\n}\n";
    for_bound_not_integer => "kernel k(a: tensor<f32, gmem, (16):(1)>) {\n    for i in 0..a[0] {\n        a[i] = 0.0;\n    }\n}\n";
    compile_time_loop_too_long => "host h(a: tensor<f32, gmem, (?):(1)>) {\n    for i in 0..10000 {\n        print(i);\n    }\n}\n";

    // ----- assert --------------------------------------------------------------------------------
    assert_static_false => "const TILE = 48;\n\nhost h(a: tensor<f32, gmem, (?):(1)>) {\n    assert(TILE % 32 == 0, \"the tile must be a multiple of 32\");\n}\n";
    assert_static_false_without_message => "const TILE = 48;\nconst WARPS = 4;\n\nhost h(a: tensor<f32, gmem, (?):(1)>) {\n    assert(WARPS > 0 && TILE <= 32);\n}\n";
    assert_static_false_in_launched_kernel => host3("kernel k(src: tensor<f32, gmem>, const TILE) {\n    assert(TILE % 8 == 0, \"TILE must be a multiple of 8\");\n}", "    launch k(mA, 16) grid(1) block(32);\n    launch k(mA, 12) grid(1) block(32);");
    assert_not_a_comparison => "host h(a: tensor<f32, gmem, (?):(1)>) {\n    assert(size(a));\n}\n";
    assert_message_not_a_string => "host h(a: tensor<f32, gmem, (?,?):(?,1)>, b: tensor<f32, gmem, (?,?):(?,1)>) {\n    assert(a.shape[1] == b.shape[1], a.shape[1]);\n}\n";
    asm_output_without_register => "kernel k(a: tensor<u8, gmem, (?):(1)>) {\n    a[0] = asm(\"mov.u16 $0, 1;\", outputs: u8);\n}\n";
    asm_operand_out_of_range => "kernel k(a: tensor<i32, gmem, (?):(1)>) {\n    a[0] = asm(\"add.s32 $0, $1, $2;\", outputs: i32, inputs: a[1]);\n}\n";
    asm_outputs_not_types => "kernel k(a: tensor<i32, gmem, (?):(1)>) {\n    a[0] = asm(\"mov.b32 $0, 1;\", outputs: a[1]);\n}\n";
    asm_in_host => "host h(a: tensor<i32, gmem, (?):(1)>) {\n    asm(\"membar.gl;\");\n}\n";
    assert_kernel_not_a_comparison => "kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    assert(a[thread_idx.x], \"set\");\n}\n";
    assert_runtime_or => "host h(a: tensor<f32, gmem, (?,?):(?,1)>, n: i32) {\n    assert(a.shape[0] == n || a.shape[1] == n, \"one side must be n\");\n}\n";
    assert_wrong_argument_count => "host h(a: tensor<f32, gmem, (?):(1)>) {\n    assert(size(a) > 0, \"not empty\", \"twice\");\n}\n";

    // ----- swizzles ----------------------------------------------------------------------------
    swizzle_shift_below_bits => "kernel k(a: tensor<f16, gmem, (8,64):(64,1)>) {\n    let s = make_swizzle(3, 3, 2);\n}\n";
    swizzle_composed_needs_swizzle => "kernel k(a: tensor<f16, gmem, (8,64):(64,1)>) {\n    let l = make_composed_layout(make_layout((8, 64)), 0, make_layout((8, 64)));\n}\n";
    swizzle_gmem_tensor => "kernel k(a: tensor<f16, gmem, (8,64):(64,1)>) {\n    let t = make_tensor(a, composition(make_swizzle(3, 3, 3), make_layout((8, 64), stride: (64, 1))));\n}\n";
    swizzle_on_a_view => "kernel k(a: tensor<f16, gmem, (8,64):(64,1)>) {\n    let s = make_smem_tensor(f16, make_layout((16, 64), stride: (64, 1)));\n    let t = make_tensor(local_tile(s, (8, 64), (1, 0)), composition(make_swizzle(3, 3, 3), make_layout((8, 64), stride: (64, 1))));\n}\n";
    swizzle_smem_nonzero_offset => "kernel k(a: tensor<f16, gmem, (8,64):(64,1)>) {\n    let s = make_smem_tensor(f16, make_composed_layout(make_swizzle(3, 3, 3), 8, make_layout((8, 64), stride: (64, 1))));\n}\n";

    // ----- predicated copies ---------------------------------------------------------------------
    copy_if_pred_not_bool => "kernel k(a: tensor<f32, gmem, (8):(1)>, b: tensor<f32, gmem, (8):(1)>) {\n    let p = make_fragment(8, f32);\n    copy_if(p, a, b);\n}\n";
    copy_if_pred_wrong_size => "kernel k(a: tensor<f32, gmem, (8):(1)>, b: tensor<f32, gmem, (8):(1)>) {\n    let p = make_fragment(4, bool);\n    copy_if(p, a, b);\n}\n";
    copy_if_ldmatrix => "kernel k(a: tensor<bf16, gmem, (16,16):(16,1)>) {\n    let s = make_smem_tensor(bf16, make_layout((8, 8), stride: (8, 1)));\n    let r = make_fragment(8, bf16);\n    let p = make_fragment(1, bool);\n    copy_if(make_copy_atom(bf16, op: \"ldmatrix.x4\"), p, s, r);\n}\n";
    tiled_copy_c_needs_universal_atom => "kernel k(a: tensor<bf16, gmem, (16,8):(8,1)>) {\n    let t = make_tiled_mma(make_mma_atom(bf16, f32, shape: (16, 8, 16)), (1, 1, 1));\n    let c = make_tiled_copy_C(make_copy_atom(bf16, op: \"ldmatrix.x4\"), t);\n}\n";
    launch_smem_too_small => "kernel k(a: tensor<f32, gmem, (64):(1)>) {\n    let smem = smem_allocator();\n    let s = smem.allocate_tensor(f32, make_layout(1024));\n    s[thread_idx.x] = a[thread_idx.x];\n}\n\nhost run(a: tensor<f32, gmem, (64):(1)>) {\n    launch k(a) grid(1) block(64) smem(1024);\n}\n";
    launch_smem_bad_alignment => "kernel k(a: tensor<f32, gmem, (64):(1)>) {\n    let smem = smem_allocator();\n    let s = smem.allocate_tensor(f32, make_layout(64), byte_alignment: 96);\n}\n";
    launch_smem_not_a_layout => "kernel k(a: tensor<f32, gmem, (64):(1)>) {\n    let smem = smem_allocator();\n    let s = smem.allocate_tensor(f32, a);\n}\n";
    launch_smem_in_host => "host run(a: tensor<f32, gmem, (64):(1)>) {\n    let smem = smem_allocator();\n}\n";
    launch_smem_unknown_method => "kernel k(a: tensor<f32, gmem, (64):(1)>) {\n    let smem = smem_allocator();\n    let s = smem.allocate(f32, make_layout(64));\n}\n";
    elem_less_ranks_differ => "kernel k(a: tensor<f32, gmem, (?,?):(?,1)>) {\n    let (m, n) = a.shape;\n    let inside = elem_less((thread_idx.x, 0, 1), (m, n));\n}\n";

    // ----- layout functions, recast --------------------------------------------------------------
    crd2idx_layout_and_stride => "host h() {\n    let i = crd2idx((1, 2), make_layout((4, 8)), (8, 1));\n}\n";
    take_range_past_rank => "host h() {\n    let l = take(make_layout((2, 3)), 1, 3);\n}\n";
    dice_coordinate_rank => "host h() {\n    let l = dice(make_layout((2, 3)), (1, _, 2));\n}\n";
    recast_layout_widths => "host h() {\n    let l = recast_layout(u32, 24, make_layout(8));\n}\n";
    recast_misaligned => "kernel k(a: tensor<f16, gmem, (8,64):(64,1)>) {\n    let w = recast(a, u32);\n}\n";
    recast_not_whole_elements => "kernel k(a: tensor<f16, gmem, (8,2):(8,1), align: 16>) {\n    let w = recast(a, u64);\n}\n";
    recast_fragment => "kernel k(a: tensor<f16, gmem, (8):(1), align: 16>) {\n    let v = a.load();\n    let w = recast(v, u32);\n}\n";
    recast_swizzled => "kernel k(a: tensor<f16, gmem, (8,64):(64,1)>) {\n    let s = make_smem_tensor(f16, composition(make_swizzle(3, 3, 3), make_layout((8, 64), stride: (64, 1))));\n    let w = recast(s, u32);\n}\n";
    recast_in_host => "host h(a: tensor<f16, gmem, (?):(1), align: 16>) {\n    let w = recast(a, u32);\n}\n";
    fragment_over_register_budget => "kernel k(a: tensor<f16, gmem, (8):(1)>) {\n    let r = make_fragment((16, 32), f16);\n}\n";

    // ----- wgmma (sm_90a) -------------------------------------------------------------------
    wgmma_wrong_n => "host run(g: tensor<bf16, gmem, (64,16):(16,1)>) {\n    let atom = make_mma_atom(bf16, f32, shape: (64, 100, 16));\n}\n";
    wgmma_op_and_shape_disagree => "host run(g: tensor<bf16, gmem, (64,16):(16,1)>) {\n    let atom = make_mma_atom(bf16, f32, shape: (16, 8, 16), op: \"wgmma\");\n}\n";
    wgmma_non_canonical_smem_layout => "kernel k(a: tensor<bf16, gmem, (64,16):(16,1)>, const mma) {\n    let thr = mma.get_slice(thread_idx.x);\n    let sA = make_smem_tensor(bf16, make_layout((64, 16), stride: (24, 1)));\n    let sB = make_smem_tensor(bf16, tile_to_shape(composition(make_swizzle(1, 3, 3), make_layout((8, 16), stride: (16, 1))), (64, 16)));\n    let c = thr.partition_fragment_C(make_layout((64, 64)));\n    gemm(mma, c, thr.partition_A(sA), thr.partition_B(sB));\n}\n\nhost run(a: tensor<bf16, gmem, (64,16):(16,1)>) {\n    launch k(a, make_tiled_mma(make_mma_atom(bf16, f32, shape: (64, 64, 16)), (1, 1, 1))) grid(1) block(128);\n}\n";
    wgmma_ss_partition_fragment_a_of_gmem => "kernel k(a: tensor<bf16, gmem, (64,16):(16,1)>, const mma) {\n    let thr = mma.get_slice(thread_idx.x);\n    let rA = thr.partition_fragment_A(a);\n}\n\nhost run(a: tensor<bf16, gmem, (64,16):(16,1)>) {\n    launch k(a, make_tiled_mma(make_mma_atom(bf16, f32, shape: (64, 64, 16)), (1, 1, 1))) grid(1) block(128);\n}\n";
    ldmatrix_of_fp8 => "kernel k(a: tensor<f8e4m3, gmem, (64,32):(32,1)>) {\n    let t = make_tiled_mma(make_mma_atom(f8e4m3, f32, shape: (64, 64, 32), a_src: \"rmem\"), (1, 1, 1));\n    let c = make_tiled_copy_A(make_copy_atom(f8e4m3, op: \"ldmatrix.x4\"), t);\n}\n";
    wgmma_tiled_copy_ldmatrix => "kernel k(a: tensor<bf16, gmem, (64,16):(16,1)>) {\n    let t = make_tiled_mma(make_mma_atom(bf16, f32, shape: (64, 64, 16)), (1, 1, 1));\n    let c = make_tiled_copy_A(make_copy_atom(bf16, op: \"ldmatrix.x4\"), t);\n}\n";
    wgmma_accumulate_on_mma_sync => "kernel k(g: tensor<bf16, gmem, (16,16):(16,1)>, const mma) {\n    let thr = mma.get_slice(thread_idx.x);\n    let c = thr.partition_fragment_C(make_layout((16, 8)));\n    gemm(mma, c, thr.partition_fragment_A(g), thr.partition_fragment_B(make_layout((8, 16))), accumulate: false);\n}\n\nhost run(g: tensor<bf16, gmem, (16,16):(16,1)>) {\n    launch k(g, make_tiled_mma(make_mma_atom(bf16, f32, shape: (16, 8, 16)), (1, 1, 1))) grid(1) block(32);\n}\n";
    wgmma_rs_on_mma_sync => "host run(g: tensor<bf16, gmem, (64,16):(16,1)>) {\n    let atom = make_mma_atom(bf16, f32, shape: (16, 8, 16), a_src: \"rmem\");\n}\n";
    wgmma_rs_unknown_a_src => "host run(g: tensor<bf16, gmem, (64,16):(16,1)>) {\n    let atom = make_mma_atom(bf16, f32, shape: (64, 64, 16), a_src: \"tmem\");\n}\n";
    wgmma_rs_a_from_smem => "kernel k(a: tensor<bf16, gmem, (64,16):(16,1)>, const mma) {\n    let thr = mma.get_slice(thread_idx.x);\n    let sB = make_smem_tensor(bf16, tile_to_shape(composition(make_swizzle(1, 3, 3), make_layout((8, 16), stride: (16, 1))), (64, 16)));\n    let c = thr.partition_fragment_C(make_layout((64, 64)));\n    gemm(mma, c, thr.partition_A(sB), thr.partition_B(sB));\n}\n\nhost run(a: tensor<bf16, gmem, (64,16):(16,1)>) {\n    launch k(a, make_tiled_mma(make_mma_atom(bf16, f32, shape: (64, 64, 16), op: \"wgmma\", a_src: \"rmem\"), (1, 1, 1))) grid(1) block(128);\n}\n";
    wgmma_rs_a_fragment_size => "kernel k(a: tensor<bf16, gmem, (64,16):(16,1)>, const mma) {\n    let thr = mma.get_slice(thread_idx.x);\n    let sB = make_smem_tensor(bf16, tile_to_shape(composition(make_swizzle(1, 3, 3), make_layout((8, 16), stride: (16, 1))), (64, 16)));\n    let c = thr.partition_fragment_C(make_layout((64, 64)));\n    let rA = make_rmem_tensor((4, 1, 1), bf16);\n    gemm(mma, c, rA, thr.partition_B(sB));\n}\n\nhost run(a: tensor<bf16, gmem, (64,16):(16,1)>) {\n    launch k(a, make_tiled_mma(make_mma_atom(bf16, f32, shape: (64, 64, 16), op: \"wgmma\", a_src: \"rmem\"), (1, 1, 1))) grid(1) block(128);\n}\n";
    wgmma_rs_a_element_type => "kernel k(a: tensor<bf16, gmem, (64,16):(16,1)>, const mma) {\n    let thr = mma.get_slice(thread_idx.x);\n    let sB = make_smem_tensor(bf16, tile_to_shape(composition(make_swizzle(1, 3, 3), make_layout((8, 16), stride: (16, 1))), (64, 16)));\n    let c = thr.partition_fragment_C(make_layout((64, 64)));\n    let rA = make_rmem_tensor((8, 1, 1), f16);\n    gemm(mma, c, rA, thr.partition_B(sB));\n}\n\nhost run(a: tensor<bf16, gmem, (64,16):(16,1)>) {\n    launch k(a, make_tiled_mma(make_mma_atom(bf16, f32, shape: (64, 64, 16), op: \"wgmma\", a_src: \"rmem\"), (1, 1, 1))) grid(1) block(128);\n}\n";
    wgmma_rs_b_from_registers => "kernel k(a: tensor<bf16, gmem, (64,16):(16,1)>, const mma) {\n    let thr = mma.get_slice(thread_idx.x);\n    let rB = thr.partition_fragment_B(make_layout((64, 16)));\n}\n\nhost run(a: tensor<bf16, gmem, (64,16):(16,1)>) {\n    launch k(a, make_tiled_mma(make_mma_atom(bf16, f32, shape: (64, 64, 16), op: \"wgmma\", a_src: \"rmem\"), (1, 1, 1))) grid(1) block(128);\n}\n";
    wgmma_rs_tiled_copy_b => "kernel k(a: tensor<bf16, gmem, (64,16):(16,1)>) {\n    let t = make_tiled_mma(make_mma_atom(bf16, f32, shape: (64, 64, 16), a_src: \"rmem\"), (1, 1, 1));\n    let c = make_tiled_copy_B(make_copy_atom(bf16, bits: 32), t);\n}\n";
    wgmma_wait_group_too_many => "kernel k(a: tensor<bf16, gmem, (64,16):(16,1)>) {\n    warpgroup_wait_group(8);\n}\n";
    tma_source_not_a_parameter => "kernel k(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    let bars = make_smem_tensor(i64, make_layout(1));\n    let s = make_smem_tensor(bf16, make_layout((64, 64), stride: (64, 1)));\n    let t = local_tile(g, (64, 64), (0, 0));\n    tma_load(t, s, bars[0], (0, 0));\n}\n";
    tma_box_not_compact => "kernel k(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    let bars = make_smem_tensor(i64, make_layout(1));\n    let s = make_smem_tensor(bf16, make_layout((64, 64), stride: (1, 64)));\n    tma_load(g, s, bars[0], (block_idx.y, block_idx.x));\n}\n";
    tma_swizzle_not_tma => "kernel k(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    let bars = make_smem_tensor(i64, make_layout(1));\n    let s = make_smem_tensor(bf16, composition(make_swizzle(2, 3, 3), make_layout((64, 64), stride: (64, 1))));\n    tma_load(g, s, bars[0], (0, 0));\n}\n";
    tma_slice_misaligned => "kernel k(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    let bars = make_smem_tensor(i64, make_layout(1));\n    let s = make_smem_tensor(bf16, make_layout((64, 64, 2), stride: (64, 1, 4104)));\n    tma_load(g, s[_, _, 1], bars[0], (0, 0));\n}\n";
    tma_slice_one_element => "kernel k(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    let bars = make_smem_tensor(i64, make_layout(1));\n    let s = make_smem_tensor(bf16, make_layout((64, 64, 2), stride: (64, 1, 4096)));\n    tma_load(g, s[0, 0, 1], bars[0], (0, 0));\n}\n";
    tma_destination_a_view => "kernel k(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    let bars = make_smem_tensor(i64, make_layout(1));\n    let s = make_smem_tensor(bf16, make_layout((64, 128), stride: (128, 1)));\n    tma_load(g, local_tile(s, (64, 64), (0, 1)), bars[0], (0, 0));\n}\n";
    tma_multicast_mask_zero => "kernel k(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    let bars = make_smem_tensor(i64, make_layout(1));\n    let s = make_smem_tensor(bf16, make_layout((64, 64), stride: (64, 1)));\n    tma_load(g, s, bars[0], (0, 0), multicast: 0);\n}\n";
    tma_multicast_mask_not_i32 => "kernel k(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    let bars = make_smem_tensor(i64, make_layout(1));\n    let s = make_smem_tensor(bf16, make_layout((64, 64), stride: (64, 1)));\n    tma_load(g, s, bars[0], (0, 0), multicast: 1.5);\n}\n";
    tma_multicast_twice => "kernel k(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    let bars = make_smem_tensor(i64, make_layout(1));\n    let s = make_smem_tensor(bf16, make_layout((64, 64), stride: (64, 1)));\n    tma_load(g, s, bars[0], (0, 0), multicast: 3, multicast: 3);\n}\n";
    tma_multicast_without_cluster => "kernel k(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    let bars = make_smem_tensor(i64, make_layout(1));\n    let s = make_smem_tensor(bf16, make_layout((64, 64), stride: (64, 1)));\n    tma_load(g, s, bars[0], (0, 0), multicast: 3);\n}\n\nhost h(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    launch k(g) grid(8) block(32);\n}\n";
    tma_multicast_past_cluster => "kernel k(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    let bars = make_smem_tensor(i64, make_layout(1));\n    let s = make_smem_tensor(bf16, make_layout((64, 64), stride: (64, 1)));\n    tma_load(g, s, bars[0], (0, 0), multicast: 4);\n}\n\nhost h(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    launch k(g) grid(8) block(32) cluster(2);\n}\n";
    tma_store_destination_a_tile => "kernel k(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    let s = make_smem_tensor(bf16, make_layout((64, 64), stride: (64, 1)));\n    let t = local_tile(g, (64, 64), (0, 0));\n    tma_store(s, t, (0, 0));\n}\n";
    tma_store_source_global => "kernel k(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    tma_store(g, g, (0, 0));\n}\n";
    tma_store_box_not_compact => "kernel k(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    let s = make_smem_tensor(bf16, make_layout((64, 64), stride: (1, 64)));\n    tma_store(s, g, (block_idx.y, block_idx.x));\n}\n";
    tma_store_wrong_arity => "kernel k(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    let s = make_smem_tensor(bf16, make_layout((64, 64), stride: (64, 1)));\n    tma_store(s, g, bars[0], (0, 0));\n}\n";
    tma_store_coordinate_rank => "kernel k(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    let s = make_smem_tensor(bf16, make_layout((64, 64), stride: (64, 1)));\n    tma_store(s, g, (0, 0, 1));\n}\n";
    tma_store_wait_runtime => "kernel k(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    tma_store_wait(thread_idx.x);\n}\n";
    tma_store_wait_read_keyword => "kernel k(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    tma_store_wait(0, read: true);\n}\n";
    tma_store_in_host => "host h(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    tma_store_arrive();\n}\n";
    named_barrier_bad_count => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    barrier(barrier_id: 1, number_of_threads: 100);\n}\n";
    named_barrier_bad_id => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    barrier_arrive(barrier_id: 16, number_of_threads: 128);\n}\n";
    named_barrier_missing_threads => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    barrier(barrier_id: 1);\n}\n";
    named_barrier_positional => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    barrier(1, 256);\n}\n";
    reg_alloc_not_multiple_of_8 => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    warpgroup_reg_alloc(100);\n}\n";
    reg_dealloc_never_launched => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    if thread_idx.x < 128 {\n        warpgroup_reg_dealloc(40);\n    }\n}\n";
    reg_dealloc_runtime_block => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    warpgroup_reg_dealloc(40);\n}\n\nhost h(x: tensor<f32, gmem, (?):(1)>) {\n    launch k(x) grid(1) block(size(x));\n}\n";
    reg_dealloc_two_blocks => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    warpgroup_reg_dealloc(40);\n}\n\nhost h(x: tensor<f32, gmem, (?):(1)>) {\n    launch k(x) grid(1) block(384);\n    launch k(x) grid(1) block(256);\n}\n";
    reg_dealloc_partial_warpgroup => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    warpgroup_reg_dealloc(40);\n}\n\nhost h(x: tensor<f32, gmem, (?):(1)>) {\n    launch k(x) grid(1) block(96);\n}\n";
    tma_elem_mismatch => "kernel k(g: tensor<bf16, gmem, (?,?):(?,1), align: 16>) {\n    let bars = make_smem_tensor(i64, make_layout(1));\n    let s = make_smem_tensor(f32, make_layout((64, 64), stride: (64, 1)));\n    tma_load(g, s, bars[0], (0, 0));\n}\n";
    mbarrier_not_i64 => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let smem = smem_allocator();\n    let flags = smem.allocate_tensor(i32, make_layout(4));\n    mbarrier_init(flags[0], 1);\n}\n";
    mbarrier_in_global => "kernel k(x: tensor<i64, gmem, (?):(1)>) {\n    mbarrier_arrive(x[block_idx.x]);\n}\n";
    mbarrier_value_not_place => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let smem = smem_allocator();\n    let bars = smem.allocate_tensor(i64, make_layout(4));\n    let b = bars[0] + 1;\n    mbarrier_arrive(b);\n}\n";
    mbarrier_through_fn => "fn arrive(bar) {\n    mbarrier_arrive(bar);\n}\n\nkernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let smem = smem_allocator();\n    let bars = smem.allocate_tensor(i64, make_layout(4));\n    arrive(bars[0]);\n}\n";
    mbarrier_slice => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let smem = smem_allocator();\n    let bars = smem.allocate_tensor(i64, make_layout(4));\n    mbarrier_arrive(bars[_]);\n}\n";
    mbarrier_wrong_arity => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let smem = smem_allocator();\n    let bars = smem.allocate_tensor(i64, make_layout(4));\n    mbarrier_wait(bars[0]);\n}\n";
    mbarrier_count_out_of_range => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let smem = smem_allocator();\n    let bars = smem.allocate_tensor(i64, make_layout(4));\n    mbarrier_init(bars[0], 0);\n}\n";
    mbarrier_phase_not_parity => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let smem = smem_allocator();\n    let bars = smem.allocate_tensor(i64, make_layout(4));\n    mbarrier_wait(bars[1], 2);\n}\n";
    mbarrier_bytes_not_i32 => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let smem = smem_allocator();\n    let bars = smem.allocate_tensor(i64, make_layout(4));\n    mbarrier_arrive_and_expect_tx(bars[0], 1.5);\n}\n";
    mbarrier_in_host => "host h(x: tensor<f32, gmem, (?):(1)>) {\n    mbarrier_init_fence();\n}\n";
    mbarrier_try_wait_parity => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let smem = smem_allocator();\n    let bars = smem.allocate_tensor(i64, make_layout(4));\n    let done = mbarrier_try_wait(bars[1], 2);\n}\n";
    mbarrier_cta_on_wait => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let smem = smem_allocator();\n    let bars = smem.allocate_tensor(i64, make_layout(4));\n    mbarrier_wait(bars[1], 0, cta: 1);\n}\n";
    mbarrier_cta_rank_out_of_range => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let smem = smem_allocator();\n    let bars = smem.allocate_tensor(i64, make_layout(4));\n    mbarrier_arrive(bars[1], cta: 8);\n}\n";
    mbarrier_cta_without_cluster => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let smem = smem_allocator();\n    let bars = smem.allocate_tensor(i64, make_layout(4));\n    mbarrier_arrive(bars[1], cta: 1);\n}\n\nhost h(x: tensor<f32, gmem, (?):(1)>) {\n    launch k(x) grid(8) block(32);\n}\n";
    pipeline_state_count_at_run_time => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let smem = smem_allocator();\n    let pipe = make_pipeline_async(smem, stages: 2, producers: 32, consumers: 32);\n    let st = pipe.consumer_state();\n    while x[0] > 0.0 {\n        st.advance();\n    }\n    x[1] = st.count().to(f32);\n}\n";
    pipeline_try_wait_producer_state => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let smem = smem_allocator();\n    let pipe = make_pipeline_async(smem, stages: 2, producers: 32, consumers: 32);\n    let done = pipe.consumer_try_wait(pipe.producer_state());\n}\n";
    // ----- thread-block clusters ----------------------------------------------------------------
    cluster_too_many_blocks => host3(COPY_KERNEL, "    launch copy_rows(mA, mB) grid(16) block(32) cluster(4, 4);");
    cluster_extent_zero => host3(COPY_KERNEL, "    launch copy_rows(mA, mB) grid(16) block(32) cluster(2, 0);");
    cluster_extent_run_time => host3(COPY_KERNEL, "    launch copy_rows(mA, mB) grid(16) block(32) cluster(n);");
    cluster_four_extents => host3(COPY_KERNEL, "    launch copy_rows(mA, mB) grid(16) block(32) cluster(2, 1, 1, 1);");
    cluster_clause_twice => host3(COPY_KERNEL, "    launch copy_rows(mA, mB) grid(16) block(32) cluster(2) cluster(2);");
    cluster_grid_not_multiple => host3(COPY_KERNEL, "    launch copy_rows(mA, mB) grid(8, 3) block(32) cluster(2, 2);");
    cluster_two_shapes => host3(COPY_KERNEL, "    launch copy_rows(mA, mB) grid(8) block(32) cluster(2);\n    launch copy_rows(mB, mA) grid(8) block(32) cluster(4);");
    cluster_then_none => host3(COPY_KERNEL, "    launch copy_rows(mA, mB) grid(8) block(32) cluster(2);\n    launch copy_rows(mB, mA) grid(8) block(32);");
    cluster_builtin_in_host => "host h(x: tensor<f32, gmem, (?):(1)>) {\n    cluster_sync();\n}\n";
    cluster_builtin_arguments => "kernel k(x: tensor<i32, gmem, (?):(1)>) {\n    x[0] = block_rank_in_cluster(0);\n}\n";
    dsmem_of_global => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    x[0] = dsmem_load(x[1], 1);\n}\n";
    dsmem_value_not_place => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let s = make_smem_tensor(f32, make_layout(32));\n    let v = s[0] * 2.0;\n    x[0] = dsmem_load(v, 1);\n}\n";
    dsmem_slice => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let s = make_smem_tensor(f32, make_layout((4, 8)));\n    x[0] = dsmem_load(s[_, 0], 1);\n}\n";
    dsmem_rank_out_of_range => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let s = make_smem_tensor(f32, make_layout(32));\n    x[0] = dsmem_load(s[thread_idx.x], 8);\n}\n";
    dsmem_rank_not_i32 => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let s = make_smem_tensor(f32, make_layout(32));\n    x[0] = dsmem_load(s[thread_idx.x], 1.0);\n}\n";
    dsmem_rank_past_the_cluster => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let s = make_smem_tensor(f32, make_layout(32));\n    x[0] = dsmem_load(s[thread_idx.x], 3);\n}\n\nhost h(x: tensor<f32, gmem, (?):(1)>) {\n    launch k(x) grid(8) block(32) cluster(2);\n}\n";
    dsmem_bool => "kernel k(x: tensor<bool, gmem, (?):(1)>) {\n    let s = make_smem_tensor(bool, make_layout(32));\n    x[0] = dsmem_load(s[thread_idx.x], 1);\n}\n";
    dsmem_store_wrong_type => "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let s = make_smem_tensor(i32, make_layout(32));\n    dsmem_store(s[thread_idx.x], 1, x[0]);\n}\n";
    fp8_arithmetic => "kernel k(q: tensor<f8e4m3, gmem, (16):(1)>, s: f32) {\n    q[0] = q[0] * q[1];\n}\n";
    fp8_fragment_arithmetic => "kernel k(q: tensor<f8e5m2, gmem, (16):(1)>) {\n    let v = q.load();\n    q.store(v + 1.0);\n}\n";
    fp8_negate => "kernel k(q: tensor<f8e4m3, gmem, (16):(1)>) {\n    q[0] = -q[1];\n}\n";
    fp8_compare => "kernel k(q: tensor<f8e4m3, gmem, (16):(1)>, o: tensor<bool, gmem, (16):(1)>) {\n    o[0] = q[0] < q[1];\n}\n";
    fp8_math => "kernel k(q: tensor<f8e4m3, gmem, (16):(1)>) {\n    q[0] = exp2(q[1]);\n}\n";
    fp8_max => "kernel k(q: tensor<f8e4m3, gmem, (16):(1)>) {\n    q[0] = max(q[0], q[1]);\n}\n";
    fp8_reduce => "kernel k(q: tensor<f8e4m3, gmem, (16):(1)>, o: tensor<f32, gmem, (1):(1)>) {\n    let s = q.load().reduce(add, init: 0.0, profile: 0);\n    o[0] = s.to(f32);\n}\n";

    // ----- warps, printing -------------------------------------------------------------------
    shuffle_not_32_bit => "kernel k(a: tensor<f16, gmem, (32):(1)>) {\n    let v = shuffle_xor(a[lane_idx()], 16);\n}\n";
    warp_reduce_needs_operation => "kernel k(a: tensor<f32, gmem, (32):(1)>) {\n    let v = warp_reduce(a[lane_idx()], 16);\n}\n";
    printf_more_placeholders => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    printf(\"a[{}] = {}\\n\", 0);\n}\n";
    printf_more_values => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    printf(\"a[0] = {}\\n\", a[0], a[1]);\n}\n";
    printf_needs_format => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    printf(a[0]);\n}\n";
    print_more_placeholders => "host h(a: tensor<f32, gmem, (?,?):(?,1)>) {\n    print(\"{} x {}\", size(a));\n}\n";
    printf_in_const => "const HELLO = printf(\"hi\\n\");\n";

    // ----- element-type generics ---------------------------------------------------------------
    generic_unbound_type_param => "kernel fill<T>(g: tensor<f32, gmem>, v: f32) {\n    g[thread_idx.x] = v;\n}\n";
    generic_host_without_list => "host add<T>(a: tensor<T, gmem, (?):(1)>) {\n}\n";
    generic_host_unbound => "host add<T: f16 | f32>(a: tensor<f32, gmem, (?):(1)>) {\n}\n";
    generic_unknown_choice => "host add<T: f16 | f23>(a: tensor<T, gmem, (?):(1)>) {\n}\n";
    generic_choice_twice => "host add<T: f16 | f32 | f16>(a: tensor<T, gmem, (?):(1)>) {\n}\n";
    generic_param_named_like_a_type => "kernel k<f16>(a: tensor<f16, gmem>) {\n}\n";
    generic_param_twice => "kernel k<T, T>(a: tensor<T, gmem>) {\n}\n";
    generic_on_helper => "fn twice<T>(x) {\n    return x + x;\n}\n";
    generic_mixed_element_types => format!(
        "kernel add<T>(a: tensor<T, gmem>, b: tensor<T, gmem>, c: tensor<T, gmem>) {{\n    c[thread_idx.x] = a[thread_idx.x] + b[thread_idx.x];\n}}\n\n\
         host run(x: tensor<f16, gmem, (?):(1)>, y: tensor<f32, gmem, (?):(1)>, z: tensor<f16, gmem, (?):(1)>) {{\n    launch add(x, y, z) grid(1) block(32);\n}}\n"
    );
    generic_kernel_type_not_listed => format!(
        "kernel add<T: f16 | bf16>(a: tensor<T, gmem>, c: tensor<T, gmem>) {{\n    c[thread_idx.x] = a[thread_idx.x];\n}}\n\n\
         host run(x: tensor<f32, gmem, (?):(1)>, y: tensor<f32, gmem, (?):(1)>) {{\n    launch add(x, y) grid(1) block(32);\n}}\n"
    );
    index_outside_static_shape => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    a[100] = 1.0;\n}\n";
    coordinate_outside_static_mode => "kernel k(a: tensor<f32, gmem, (4,8):(8,1)>) {\n    let v = make_rmem_tensor((4, 8), f32);\n    v[1, 2] = a[4, 2];\n}\n";
    generic_host_instance_error => "kernel k<T>(a: tensor<T, gmem>) {\n    a[0] = a[1] + 1.5;\n}\n\nhost h<T: f32 | i32>(a: tensor<T, gmem, (?):(1)>) {\n    launch k(a) grid(1) block(1);\n}\n";
    generic_div_not_static => "const VEC = true;\n\nhost h(a: tensor<f32, gmem, (?{div=VEC}):(1)>) {\n}\n";
    sizeof_not_a_type => "host h(a: tensor<f32, gmem, (?):(1)>) {\n    print(\"{}\", sizeof(3));\n}\n";
    type_unknown_field => "kernel k<T>(a: tensor<T, gmem>) {\n    let w = T.bits;\n}\n\nhost h(a: tensor<f32, gmem, (?):(1)>) {\n    launch k(a) grid(1) block(1);\n}\n";
    // ----- fast math (`math(...)`) and `fma` -----------------------------------------------------
    math_unknown_control => "kernel k(a: tensor<f32, gmem, (8):(1)>) math(ftz, fastest) {\n    a[0] = a[1] * 2.0;\n}\n";
    math_clause_twice => "kernel k(a: tensor<f32, gmem, (8):(1)>) math(ftz) math(contract) {\n    a[0] = a[1] * 2.0;\n}\n";
    math_control_twice => "kernel k(a: tensor<f32, gmem, (8):(1)>) math(approx, ftz, approx) {\n    a[0] = a[1] * 2.0;\n}\n";
    math_no_control => "kernel k(a: tensor<f32, gmem, (8):(1)>) math() {\n    a[0] = a[1] * 2.0;\n}\n";
    math_on_helper => "fn twice(x) math(ftz) {\n    return x + x;\n}\n";
    index_clause_two_types => "kernel k(a: tensor<f32, gmem, (8):(1)>) index(i64, i32) {\n    a[0] = 1.0;\n}\n";
    fma_on_integers => "kernel k(a: tensor<i32, gmem, (8):(1)>) {\n    a[0] = fma(a[1], a[2], 1);\n}\n";
    fma_mismatched_types => "kernel k(a: tensor<f32, gmem, (8):(1)>, b: tensor<f16, gmem, (8):(1)>) {\n    a[0] = fma(a[1], b[1], 1.0);\n}\n";
    fma_fragment_sizes => "kernel k(a: tensor<f32, gmem, (8):(1)>) {\n    let x = make_fragment(4, f32);\n    let y = make_fragment(8, f32);\n    x.fill(1.0);\n    y.fill(2.0);\n    let z = fma(x.load(), y.load(), 1.0);\n}\n";
}

/// No diagnostic of the set renders empty: each names the file with a position and says `error:`.
#[test]
fn every_case_renders_a_located_error() {
    assert!(CASES.len() >= 40, "only {} cases", CASES.len());
    for (name, src) in CASES {
        let src = src();
        let out = errors(&src);
        assert!(out.contains("test.cute:"), "{name}: no location in\n{out}");
        assert!(out.contains("error:"), "{name}: no `error:` in\n{out}");
    }
}

/// A kernel with wgmma instructions built for a target without them (sm_90, sm_80): the check
/// `cutec build` runs after the front end, pointing at the first use.
#[test]
fn wgmma_needs_sm_90a() {
    let src = "kernel k(a: tensor<bf16, gmem, (64,16):(16,1)>) {\n    warpgroup_fence();\n    warpgroup_commit_group();\n    warpgroup_wait_group(0);\n}\n\nhost run(a: tensor<bf16, gmem, (64,16):(16,1)>) {\n    launch k(a) grid(1) block(128);\n}\n";
    let (_, module) = front_end(src).expect("the front end accepts it");
    assert!(cute_lang::check_arch(&module, Arch::Sm90a).is_ok());
    let ds = cute_lang::check_arch(&module, Arch::Sm90).expect_err("sm_90 has no wgmma");
    insta::assert_snapshot!(render("test.cute", src, &ds));
}

/// TMA stores and their bulk groups built for sm_80: refused at the first (the fence is the
/// proxy fence, which is not checked).
#[test]
fn tma_store_needs_sm_90() {
    let src = "kernel k(g: tensor<bf16, gmem, (?,?):(?{div=8},1), align: 16>) {\n    let s = make_smem_tensor(bf16, make_layout((64, 64), stride: (64, 1)));\n    tma_store_fence();\n    sync_threads();\n    if thread_idx.x == 0 {\n        tma_store(s, g, (block_idx.y, block_idx.x));\n        tma_store_arrive();\n        tma_store_wait(0);\n    }\n}\n";
    let (_, module) = front_end(src).expect("the front end accepts it");
    assert!(cute_lang::check_arch(&module, Arch::Sm90).is_ok());
    assert!(cute_lang::check_arch(&module, Arch::Sm90a).is_ok());
    let ds = cute_lang::check_arch(&module, Arch::Sm80).expect_err("sm_80 has no TMA");
    insta::assert_snapshot!(render("test.cute", src, &ds));
    let wait_only = "kernel k(g: tensor<f32, gmem, (?):(1)>) {\n    tma_store_wait(1);\n}\n";
    let (_, module) = front_end(wait_only).expect("the front end accepts it");
    let ds = cute_lang::check_arch(&module, Arch::Sm80).expect_err("sm_80 has no bulk groups");
    assert!(ds[0].message.contains("`tma_store_wait` is a Hopper TMA instruction"), "{}", ds[0].message);
}

/// mbarrier builtins built for sm_80 (no `try_wait`, no transaction counts): refused at the first.
#[test]
fn mbarrier_needs_sm_90() {
    let src = "kernel k(x: tensor<f32, gmem, (?):(1)>) {\n    let smem = smem_allocator();\n    let bars = smem.allocate_tensor(i64, make_layout(2));\n    mbarrier_init(bars[0], 1);\n    mbarrier_init_fence();\n    mbarrier_wait(bars[0], 0);\n}\n\nhost run(x: tensor<f32, gmem, (?):(1)>) {\n    launch k(x) grid(1) block(32) smem(128);\n}\n";
    let (_, module) = front_end(src).expect("the front end accepts it");
    assert!(cute_lang::check_arch(&module, Arch::Sm90).is_ok());
    assert!(cute_lang::check_arch(&module, Arch::Sm90a).is_ok());
    let ds = cute_lang::check_arch(&module, Arch::Sm80).expect_err("sm_80 has no mbarrier try_wait");
    insta::assert_snapshot!(render("test.cute", src, &ds));
}

/// Clusters built for sm_80 (`.reqnctapercluster`, the cluster registers and barrier are sm_90):
/// refused at the `cluster(...)` clause, or at the first cluster builtin of a kernel without one.
#[test]
fn clusters_need_sm_90() {
    let src = "kernel k(x: tensor<i32, gmem, (?):(1)>) {\n    cluster_sync();\n    x[block_idx.x] = block_rank_in_cluster();\n}\n\nhost run(x: tensor<i32, gmem, (?):(1)>) {\n    launch k(x) grid(size(x)) block(32) cluster(2);\n}\n";
    let (_, module) = front_end(src).expect("the front end accepts it");
    assert!(cute_lang::check_arch(&module, Arch::Sm90).is_ok());
    assert!(cute_lang::check_arch(&module, Arch::Sm90a).is_ok());
    let ds = cute_lang::check_arch(&module, Arch::Sm80).expect_err("sm_80 has no clusters");
    insta::assert_snapshot!(render("test.cute", src, &ds));
    // Without a launch (the kernel compiled on its own): the first cluster builtin.
    let src = "kernel k(x: tensor<i32, gmem, (?):(1)>) {\n    x[block_idx.x] = block_rank_in_cluster();\n}\n";
    let (_, module) = front_end(src).expect("the front end accepts it");
    let ds = cute_lang::check_arch(&module, Arch::Sm80).expect_err("sm_80 has no cluster registers");
    insta::assert_snapshot!("clusters_need_sm_90_builtin", render("test.cute", src, &ds));
}
