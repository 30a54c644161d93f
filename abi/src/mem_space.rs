//! Memory spaces of tensors.

use std::fmt;

/// Where a tensor's elements live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemSpace {
    /// Global memory: the only space a host can pass.
    Gmem,
    /// Shared memory.
    Smem,
    /// Registers.
    Rmem,
}

impl MemSpace {
    pub const ALL: [MemSpace; 3] = [MemSpace::Gmem, MemSpace::Smem, MemSpace::Rmem];

    /// `gmem`, `smem` or `rmem`: the `.cute`, `cute` dialect and manifest spelling.
    pub fn name(self) -> &'static str {
        match self {
            MemSpace::Gmem => "gmem",
            MemSpace::Smem => "smem",
            MemSpace::Rmem => "rmem",
        }
    }

    pub fn from_name(name: &str) -> Option<MemSpace> {
        MemSpace::ALL.into_iter().find(|m| m.name() == name)
    }
}

impl fmt::Display for MemSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in MemSpace::ALL {
            assert_eq!(MemSpace::from_name(m.name()), Some(m));
        }
        assert_eq!(MemSpace::from_name("tmem"), None);
    }
}
