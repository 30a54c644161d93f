//! Calling a host function that launches nothing, without a device.
//!
//! A `.cute` host function whose plan has only `print` steps (e.g. the layout-algebra examples,
//! `print_example` of `samples/printing.cute`) needs no GPU: [`HostPlan::run_without_device`]
//! checks the arguments and the `assert` and `require` lines exactly as [`crate::HostFn::call`] does and writes
//! the prints to the given writer. A plan with launches is refused with a readable error.

use std::io::Write;

use crate::checked::Arg;
use crate::error::{Result, RuntimeError};
use crate::plan::{HostPlan, PlanScratch};

impl HostPlan {
    /// Runs a host function that launches no kernel, without a driver or device: the argument
    /// checks and `assert` and `require` conditions of a call, then each `print` step written to `out` in order.
    /// Errors: the plan launches kernels (`InvalidArgument`: it needs a device, use
    /// `Module::host`), or the call is refused (`ArgumentMismatch`), or writing to `out` fails.
    pub fn run_without_device(&self, args: &[Arg], out: &mut dyn Write) -> Result<()> {
        let sig = self.sig();
        if !sig.launches.is_empty() {
            let kernels: Vec<&str> = sig.launches.iter().map(|l| l.kernel.as_str()).collect();
            return Err(RuntimeError::InvalidArgument(format!(
                "host `{}` launches {}: it needs a device (load the module and call Module::host)",
                sig.name,
                kernels.join(", ")
            )));
        }
        let mut s = PlanScratch::default();
        self.evaluate_into(args, &mut s)?;
        // The prints of the branches taken and loop trips made, in order.
        for (_, text) in s.print_texts() {
            out.write_all(text.as_bytes())
                .map_err(|e| RuntimeError::InvalidArgument(format!("host `{}`: writing its output: {e}", sig.name)))?;
        }
        Ok(())
    }
}
