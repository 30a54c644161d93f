//! The layout algebra's operations, one idea per module.

pub mod coalesce;
pub mod complement;
pub mod composition;
pub mod divide;
pub mod inverse;
pub mod partition;
pub mod product;
pub mod recast;
pub mod vector;

pub use coalesce::{coalesce, coalesce_by, filter, filter_by, filter_zeros};
pub use complement::{complement, complement_default};
pub use composition::{composition, composition_tiler};
pub use divide::{flat_divide, logical_divide, logical_divide_layout, tiled_divide, zipped_divide};
pub use inverse::{left_inverse, right_inverse};
pub use partition::{
    local_partition, local_tile, make_layout_tv, max_common_layout, max_common_vector, slice_and_offset, tile_to_shape,
    tv_partition, Crd,
};
pub use product::{
    blocked_product, flat_product, logical_product, logical_product_layout, raked_product, tiled_product,
    zipped_product,
};
pub use recast::{dice, dice_tuple, downcast, recast_is_exact, recast_layout, upcast};
pub use vector::vector_width;
