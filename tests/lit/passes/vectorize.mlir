// RUN: %cutec opt %s --pass cute-vectorize | FileCheck %s
// cute-vectorize records the widest access the layout and the alignment prove.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @widths
    gpu.func @widths(%a: !cute.tensor<f16, "gmem", 16, "(1,8):(0,1)">, %b: !cute.tensor<f16, "gmem", 16, "(4,8):(?,1)">,
                     %c: !cute.tensor<f16, "gmem", 16, "(4,8):(?{div=8},1)">, %d: !cute.tensor<f16, "gmem", 4, "8:1">,
                     %e: !cute.tensor<f32, "gmem", 16, "8:2">, %f: !cute.tensor<f32, "gmem", 16, "(4,4):(1,4)">, %g: !cute.tensor<f16, "gmem", 16, "(8,4):(1,?{div=8})">) kernel {
      // Eight contiguous f16, 16-byte aligned: one 128-bit access.
      // CHECK: "cute.load_frag"(%{{.*}}) {vector = 8 : i32}
      %0 = "cute.load_frag"(%a) : (!cute.tensor<f16, "gmem", 16, "(1,8):(0,1)">) -> vector<8xf16>
      // A row stride of unknown divisibility cannot keep chunk starts aligned.
      // CHECK: "cute.load_frag"(%{{.*}}) {vector = 1 : i32}
      %1 = "cute.load_frag"(%b) : (!cute.tensor<f16, "gmem", 16, "(4,8):(?,1)">) -> vector<32xf16>
      // Fragment elements run along the first mode (colexicographic order): a row-major (4,8) tile is
      // not contiguous in that order, whatever its row stride.
      // CHECK: "cute.load_frag"(%{{.*}}) {vector = 1 : i32}
      %2 = "cute.load_frag"(%c) : (!cute.tensor<f16, "gmem", 16, "(4,8):(?{div=8},1)">) -> vector<32xf16>
      // Contiguous along the first mode, next column at a multiple of 8: 128-bit accesses.
      // CHECK: "cute.load_frag"(%{{.*}}) {vector = 8 : i32}
      %3 = "cute.load_frag"(%g) : (!cute.tensor<f16, "gmem", 16, "(8,4):(1,?{div=8})">) -> vector<32xf16>
      // 4-byte alignment limits f16 to pairs.
      // CHECK: "cute.store_frag"(%{{.*}}, %{{.*}}) {vector = 2 : i32}
      "cute.store_frag"(%0, %d) : (vector<8xf16>, !cute.tensor<f16, "gmem", 4, "8:1">) -> ()
      // Strided elements: one at a time.
      // CHECK: "cute.load_frag"(%{{.*}}) {vector = 1 : i32}
      %4 = "cute.load_frag"(%e) : (!cute.tensor<f32, "gmem", 16, "8:2">) -> vector<8xf32>
      // f32: four per 128-bit access.
      // CHECK: "cute.load_frag"(%{{.*}}) {vector = 4 : i32}
      %5 = "cute.load_frag"(%f) : (!cute.tensor<f32, "gmem", 16, "(4,4):(1,4)">) -> vector<16xf32>
      gpu.return
    }
  }
}
