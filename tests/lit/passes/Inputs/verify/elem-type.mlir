module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%t: !cute.tensor<f32, "gmem", 4, "8:1">, %i: i32) kernel {
      %x = "cute.load"(%t, %i) : (!cute.tensor<f32, "gmem", 4, "8:1">, i32) -> f16
      gpu.return
    }
  }
}
