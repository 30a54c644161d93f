// RUN: not %cutec opt %s 2>&1 | FileCheck %s
// RUN: %cutec opt %S/Inputs/wgmma/rs.mlir -o %t.mlir
// RUN: %cutec opt %t.mlir | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: %cutec opt %t.mlir --pass cute-canonicalize --pass cute-lower-to-gpu | FileCheck %s --check-prefix=GPU
// cute-verify checks a `cute.wgmma` with an RS atom (A from registers): A is one thread's A
// fragment, a vector of the atom's 8 16-bit values, and an SS atom takes no vector A; B stays a
// canonical K-major shared tile. cute-lower-to-gpu passes A as four 32-bit registers (bf16 pairs)
// and B as a descriptor, and fences the A fragment's registers at the warpgroup fence and wait as
// it does the accumulators.
// ROUNDTRIP: "cute.wgmma"(%{{.*}}, %{{.*}}, %{{.*}}) {atom = "SM90_64x64x16_F32BF16BF16_RS"} : (vector<8xbf16>, !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">, vector<32xf32>) -> vector<32xf32>
// GPU: llvm.inline_asm has_side_effects "", "=r,=r,=r,=r,0,1,2,3"
// GPU: nvvm.wgmma.fence.aligned
// GPU: llvm.inline_asm has_side_effects "{ .reg .pred p; setp.ne.b32 p, $37, 0; wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, {{.*}}, $31}, {$32, $33, $34, $35}, $36, p, 1, 1, 0; }", "=f,{{(=f,)+}}r,r,r,r,l,r,0,
// GPU: nvvm.wgmma.wait.group.sync.aligned 0
// The fence reads and writes the fragment one 32-bit register (a bf16 pair) at a time.
// GPU-COUNT-4: llvm.load {{.*}} {alignment = 2 : i64} : !llvm.ptr -> vector<2xbf16>
// GPU: llvm.inline_asm has_side_effects "", "=r,=r,=r,=r,0,1,2,3"
// GPU-COUNT-4: llvm.store {{.*}} {alignment = 2 : i64} : vector<2xbf16>, !llvm.ptr
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%v8: vector<8xbf16>, %v4: vector<4xbf16>, %h8: vector<8xf16>) kernel {
      %a = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">
      %m = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(1,72)">
      %c = arith.constant dense<0.0> : vector<32xf32>
      // CHECK: wgmma-rs-errors.mlir:[[# @LINE + 1]]:13: error: SM90_64x64x16_F32BF16BF16_RS reads A from registers: one thread's 8 A values as vector<8xbf16>, found !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">
      %d0 = "cute.wgmma"(%a, %a, %c) {atom = "SM90_64x64x16_F32BF16BF16_RS"} : (!cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">, !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">, vector<32xf32>) -> vector<32xf32>
      // CHECK: wgmma-rs-errors.mlir:[[# @LINE + 1]]:13: error: SM90_64x64x16_F32BF16BF16_RS reads A from registers: one thread's 8 A values as vector<8xbf16>, found vector<4xbf16>
      %d1 = "cute.wgmma"(%v4, %a, %c) {atom = "SM90_64x64x16_F32BF16BF16_RS"} : (vector<4xbf16>, !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">, vector<32xf32>) -> vector<32xf32>
      // CHECK: wgmma-rs-errors.mlir:[[# @LINE + 1]]:13: error: SM90_64x64x16_F32BF16BF16_RS reads A from registers: one thread's 8 A values as vector<8xbf16>, found vector<8xf16>
      %d2 = "cute.wgmma"(%h8, %a, %c) {atom = "SM90_64x64x16_F32BF16BF16_RS"} : (vector<8xf16>, !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">, vector<32xf32>) -> vector<32xf32>
      // CHECK: wgmma-rs-errors.mlir:[[# @LINE + 1]]:13: error: SM90_64x64x16_F32BF16BF16_SS reads A from shared memory (a tensor); a register A (vector<8xbf16>) needs the RS atom SM90_64x64x16_F32BF16BF16_RS
      %d3 = "cute.wgmma"(%v8, %a, %c) {atom = "SM90_64x64x16_F32BF16BF16_SS"} : (vector<8xbf16>, !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(64,1)">, vector<32xf32>) -> vector<32xf32>
      // The B tile is checked as for an SS atom.
      // CHECK: wgmma-rs-errors.mlir:[[# @LINE + 1]]:13: error: SM90_64x64x16_F32BF16BF16_RS: the B operand layout S<3,3,3> o (64,16):(1,72) is not a canonical K-major wgmma layout (128-byte swizzle): element (0,1) is at offset 72, {{.*}}; nor is it MN-major: element (0,1) is at offset 72, the canonical layout S<3,3,3> o ((64,1),(8,2)):((1,LBO),(64,SBO)) has it at 64
      %d4 = "cute.wgmma"(%v8, %m, %c) {atom = "SM90_64x64x16_F32BF16BF16_RS"} : (vector<8xbf16>, !cute.tensor<bf16, "smem", 16 : i64, "S<3,3,3> o 0 o (64,16):(1,72)">, vector<32xf32>) -> vector<32xf32>
      gpu.return
    }
  }
}
