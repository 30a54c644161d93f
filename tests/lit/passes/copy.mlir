// RUN: %cutec opt %s --pass cute-vectorize | FileCheck %s --check-prefix=VEC
// RUN: %cutec opt %s --pass cute-vectorize --pass cute-lower-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: %cutec opt %s --pass cute-vectorize --pass cute-vectorize | FileCheck %s --check-prefix=VEC
// `cute.copy` (CuTe's copy) moves a tensor through registers: cute-vectorize gives each side its own
// width (`src_vector`, `dst_vector`), capped by a copy atom's `max_vector`; cute-lower-to-gpu loads
// and stores in chunks of those widths. Running cute-vectorize twice changes nothing.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // Contiguous and 16-byte aligned on both sides: 128-bit loads and stores.
    // VEC-LABEL: gpu.func @both_wide(
    // VEC: "cute.copy"(%{{.*}}, %{{.*}}) {dst_vector = 4 : i32, src_vector = 4 : i32}
    // GPU-LABEL: gpu.func @both_wide(
    // GPU-COUNT-2: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
    // GPU-COUNT-2: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
    gpu.func @both_wide(%g: !cute.tensor<f32, "gmem", 16, "8:1">) kernel {
      %r = "cute.alloc"() : () -> !cute.tensor<f32, "rmem", 16, "8:1">
      "cute.copy"(%g, %r) : (!cute.tensor<f32, "gmem", 16, "8:1">, !cute.tensor<f32, "rmem", 16, "8:1">) -> ()
      gpu.return
    }

    // A strided destination does not narrow the source: 128-bit loads, scalar stores.
    // VEC-LABEL: gpu.func @strided_dst(
    // VEC: "cute.copy"(%{{.*}}, %{{.*}}) {dst_vector = 1 : i32, src_vector = 4 : i32}
    // GPU-LABEL: gpu.func @strided_dst(
    // GPU-COUNT-2: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
    // GPU-COUNT-8: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
    gpu.func @strided_dst(%g: !cute.tensor<f32, "gmem", 16, "8:1">, %h: !cute.tensor<f32, "gmem", 16, "8:2">) kernel {
      "cute.copy"(%g, %h) : (!cute.tensor<f32, "gmem", 16, "8:1">, !cute.tensor<f32, "gmem", 16, "8:2">) -> ()
      gpu.return
    }

    // A 64-bit copy atom caps both sides at two f32.
    // VEC-LABEL: gpu.func @atom_cap(
    // VEC: "cute.copy"(%{{.*}}, %{{.*}}) {dst_vector = 2 : i32, max_vector = 2 : i32, src_vector = 2 : i32}
    // GPU-LABEL: gpu.func @atom_cap(
    // GPU-COUNT-4: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> vector<2xf32>
    gpu.func @atom_cap(%g: !cute.tensor<f32, "gmem", 16, "8:1">) kernel {
      %r = "cute.alloc"() : () -> !cute.tensor<f32, "rmem", 16, "8:1">
      "cute.copy"(%g, %r) {max_vector = 2 : i32} : (!cute.tensor<f32, "gmem", 16, "8:1">, !cute.tensor<f32, "rmem", 16, "8:1">) -> ()
      gpu.return
    }

    // Left alone by cute-vectorize: loads and stores of single elements.
    // VEC-LABEL: gpu.func @scalars(
    // VEC: "cute.load"(%{{.*}}, %{{.*}}) : (
    // VEC-NOT: vector =
    // VEC: gpu.return
    gpu.func @scalars(%g: !cute.tensor<f32, "gmem", 16, "8:1">, %i: i32) kernel {
      %x = "cute.load"(%g, %i) : (!cute.tensor<f32, "gmem", 16, "8:1">, i32) -> f32
      "cute.store"(%x, %g, %i) : (f32, !cute.tensor<f32, "gmem", 16, "8:1">, i32) -> ()
      gpu.return
    }
  }
}
