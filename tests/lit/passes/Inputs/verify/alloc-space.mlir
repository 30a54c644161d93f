module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad() kernel {
      %t = "cute.alloc"() : () -> !cute.tensor<f32, "gmem", 16, "8:1">
      %u = "cute.alloc"() : () -> !cute.tensor<f32, "rmem", 16, "(?,8):(8,1)">
      gpu.return
    }
  }
}
