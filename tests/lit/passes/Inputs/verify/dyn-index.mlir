module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%t: !cute.tensor<f32, "gmem", 4, "(?,8):(8,1)">) kernel {
      %n = "cute.dyn"(%t) {index = 1 : i32} : (!cute.tensor<f32, "gmem", 4, "(?,8):(8,1)">) -> i32
      gpu.return
    }
  }
}
