// cute-lower-to-gpu (from ldmatrix.mlir): one ldmatrix.x4 gives each lane exactly 8 values.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @sixteen() kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16, "(16):(1)">
      %r = "cute.alloc"() : () -> !cute.tensor<bf16, "rmem", 16, "(16):(1)">
      // CHECK: sixteen.mlir:[[# @LINE + 1]]:7: error: ldmatrix.x4 reads one row of 8 contiguous, 16-byte aligned elements per lane, but the source has 16 elements proven contiguous in runs of 8 (layout (16):(1), 16-byte alignment)
      "cute.copy"(%s, %r) {op = "ldmatrix.x4"} : (!cute.tensor<bf16, "smem", 16, "(16):(1)">, !cute.tensor<bf16, "rmem", 16, "(16):(1)">) -> ()
      gpu.return
    }
  }
}
