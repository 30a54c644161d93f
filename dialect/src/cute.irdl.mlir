// The `cute` dialect, defined in IRDL and loaded when a context is created.
//
// Types carry the static part of a layout in CuTe's notation as a string parameter, e.g.
// !cute.tensor<f32, "gmem", 4, "(?):(1)">: element type, memory space, base alignment in bytes,
// layout. A `?` entry is dynamic: its value travels with the tensor at run time.
irdl.dialect @cute {
  irdl.type @tensor {
    %elem = irdl.any
    %space = irdl.is "gmem"
    %space_s = irdl.is "smem"
    %space_r = irdl.is "rmem"
    %spaces = irdl.any_of(%space, %space_s, %space_r)
    %align = irdl.base "#builtin.integer"
    %layout = irdl.base "#builtin.string"
    irdl.parameters(elem: %elem, space: %spaces, align: %align, layout: %layout)
  }

  // The number of elements of a tensor (CuTe's size()); folds when the shape is static.
  irdl.operation @size {
    %tensor = irdl.base @cute::@tensor
    %i32 = irdl.is i32
    irdl.operands(tensor: %tensor)
    irdl.results(size: %i32)
  }

  // Reads one element at a coordinate: one linear index, or one index per mode.
  irdl.operation @load {
    %tensor = irdl.base @cute::@tensor
    %i32 = irdl.is i32
    %elem = irdl.any
    irdl.operands(tensor: %tensor, coord: variadic %i32)
    irdl.results(value: %elem)
  }

  // Writes one element at a coordinate.
  irdl.operation @store {
    %elem = irdl.any
    %tensor = irdl.base @cute::@tensor
    %i32 = irdl.is i32
    irdl.operands(value: %elem, tensor: %tensor, coord: variadic %i32)
    irdl.results()
  }
}
