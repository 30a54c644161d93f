// cute-lower-to-gpu (from copy-async.mlir): a 16-byte cp.async.ca into shared rows 6 f32 apart:
// only pairs of f32 (8 bytes) start aligned on the destination side, so the 4-element chunks of
// `max_vector` are not proven, and the copy is refused rather than narrowed.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK: unproven-align.mlir:[[# @LINE + 3]]:7: error: cp.async.ca of 16 bytes needs 4-element chunks contiguous and aligned on both sides, but the layouts prove only 2 ((8,2):(1,8) with 16-byte alignment, (8,2):(1,6) with 16-byte alignment)
    gpu.func @padded(%g: !cute.tensor<f32, "gmem", 16, "(8,2):(1,8)">) kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<f32, "smem", 16, "(8,2):(1,6)">
      "cute.copy"(%g, %s) {max_vector = 4 : i32, op = "cp.async.ca"} : (!cute.tensor<f32, "gmem", 16, "(8,2):(1,8)">, !cute.tensor<f32, "smem", 16, "(8,2):(1,6)">) -> ()
      gpu.return
    }
  }
}
