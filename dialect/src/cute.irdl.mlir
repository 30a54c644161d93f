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

  // The k-th dynamic entry of a tensor's layout (shape entries first, then strides, in flattened
  // order): the run-time value behind a `?` in its type.
  irdl.operation @dyn {
    %tensor = irdl.base @cute::@tensor
    %index = irdl.base "#builtin.integer"
    %i32 = irdl.is i32
    irdl.attributes { "index" = %index }
    irdl.operands(tensor: %tensor)
    irdl.results(value: %i32)
  }

  // A view of a tensor's memory: the base moved by `offset` elements, with the layout of the result
  // type; `dyn` gives the values of the result layout's `?` entries in order.
  irdl.operation @view {
    %src = irdl.base @cute::@tensor
    %i32 = irdl.is i32
    %dst = irdl.base @cute::@tensor
    irdl.operands(src: %src, offset: %i32, dyn: variadic %i32)
    irdl.results(view: %dst)
  }

  // New memory for a tensor of the result type: registers (rmem) or block-wide shared memory (smem).
  irdl.operation @alloc {
    %tensor = irdl.base @cute::@tensor
    irdl.operands()
    irdl.results(tensor: %tensor)
  }

  // Reads the element `offset` elements from the tensor's base.
  irdl.operation @load {
    %tensor = irdl.base @cute::@tensor
    %i32 = irdl.is i32
    %elem = irdl.any
    irdl.operands(tensor: %tensor, offset: %i32)
    irdl.results(value: %elem)
  }

  // Writes the element `offset` elements from the tensor's base.
  irdl.operation @store {
    %elem = irdl.any
    %tensor = irdl.base @cute::@tensor
    %i32 = irdl.is i32
    irdl.operands(value: %elem, tensor: %tensor, offset: %i32)
    irdl.results()
  }

  // Loads a whole static-size tensor into a register fragment (CuTe's TensorSSA `.load()`):
  // element i of the vector comes from the tensor's coordinate i.
  irdl.operation @load_frag {
    %tensor = irdl.base @cute::@tensor
    %vec = irdl.base "!builtin.vector"
    irdl.operands(tensor: %tensor)
    irdl.results(value: %vec)
  }

  // Stores a register fragment into a whole static-size tensor.
  irdl.operation @store_frag {
    %vec = irdl.base "!builtin.vector"
    %tensor = irdl.base @cute::@tensor
    irdl.operands(value: %vec, tensor: %tensor)
    irdl.results()
  }
}
