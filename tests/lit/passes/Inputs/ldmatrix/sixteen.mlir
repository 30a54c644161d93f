// cute-verify (from ldmatrix.mlir, before cute-lower-to-gpu): one ldmatrix.x4 reads an 8-element row
// per lane and gives each lane exactly 8 values.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @sixteen() kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16, "(16):(1)">
      %r = "cute.alloc"() : () -> !cute.tensor<bf16, "rmem", 16, "(16):(1)">
      // CHECK: sixteen.mlir:[[# @LINE + 1]]:7: error: ldmatrix.x4 gives each lane an 8-element row and 8 values, not 16 (layout (16):(1)) into 16 (layout (16):(1))
      "cute.copy"(%s, %r) {op = "ldmatrix.x4"} : (!cute.tensor<bf16, "smem", 16, "(16):(1)">, !cute.tensor<bf16, "rmem", 16, "(16):(1)">) -> ()
      gpu.return
    }
  }
}
