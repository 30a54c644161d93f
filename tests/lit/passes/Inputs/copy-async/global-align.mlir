// cute-lower-to-gpu (from copy-async.mlir): a global tensor known only 8-byte aligned proves 4 bf16
// per chunk, not the 8 of a 16-byte cp.async.cg. Without cute-vectorize no width is recorded (1).
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK: global-align.mlir:[[# @LINE + 4]]:7: error: cp.async.cg of 16 bytes needs 8-element chunks contiguous and aligned on both sides, but the layouts prove only 4 ((32):(1) with 8-byte alignment, (32):(1) with 16-byte alignment)
    // NOVEC: global-align.mlir:[[# @LINE + 3]]:7: error: cp.async.cg of 16 bytes needs 8-element chunks contiguous and aligned on both sides, but the layouts prove only 1
    gpu.func @align8(%g: !cute.tensor<bf16, "gmem", 8, "(32):(1)">) kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16, "(32):(1)">
      "cute.copy"(%g, %s) {max_vector = 8 : i32, op = "cp.async.cg"} : (!cute.tensor<bf16, "gmem", 8, "(32):(1)">, !cute.tensor<bf16, "smem", 16, "(32):(1)">) -> ()
      gpu.return
    }
  }
}
