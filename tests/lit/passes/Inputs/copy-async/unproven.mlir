// cute-lower-to-gpu (from copy-async.mlir): a cp.async moves exactly `max_vector` elements per
// instruction; where the layouts or alignments prove only narrower chunks it fails, never issuing
// a different instruction.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // Strided source: no two elements are contiguous.
    // CHECK: unproven.mlir:[[# @LINE + 3]]:7: error: cp.async.cg of 16 bytes needs 8-element chunks contiguous and aligned on both sides, but the layouts prove only 1 ((32):(2) with 16-byte alignment, (32):(1) with 16-byte alignment)
    gpu.func @strided(%g: !cute.tensor<bf16, "gmem", 16, "(32):(2)">) kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16, "(32):(1)">
      "cute.copy"(%g, %s) {max_vector = 8 : i32, op = "cp.async.cg"} : (!cute.tensor<bf16, "gmem", 16, "(32):(2)">, !cute.tensor<bf16, "smem", 16, "(32):(1)">) -> ()
      gpu.return
    }
  }
}
