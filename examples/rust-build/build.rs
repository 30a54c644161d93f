// Compiles kernels/*.cute with cutec into OUT_DIR and generates `kernels.rs` with one
// `include_bytes!` constant per cubin (cutec is found via $CUTEC, PATH, or ../../target/*/cutec).
fn main() {
    cutec_build::Build::new().file("kernels/vector_add.cute").arch("sm_90").compile("kernels");
}
