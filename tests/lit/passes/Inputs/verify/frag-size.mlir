module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%t: !cute.tensor<f32, "gmem", 4, "8:1">) kernel {
      %x = "cute.load_frag"(%t) : (!cute.tensor<f32, "gmem", 4, "8:1">) -> vector<4xf32>
      gpu.return
    }
  }
}
