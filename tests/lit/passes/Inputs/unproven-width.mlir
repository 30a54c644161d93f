// A recorded vector width the layout does not prove is rejected, not trusted.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%t: !cute.tensor<f16, "gmem", 16, "(4,8):(?,1)">) kernel {
      %f = "cute.load_frag"(%t) {vector = 8 : i32} : (!cute.tensor<f16, "gmem", 16, "(4,8):(?,1)">) -> vector<32xf16>
      gpu.return
    }
  }
}
