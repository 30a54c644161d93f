//! Kernel timing with CUDA events, and the median used to summarise runs.

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::CudaEvent;

use crate::device::Stream;
use crate::driver::driver_error;
use crate::error::{Result, RuntimeError};

/// A pair of timing events. Record `start`, queue work, record `stop`, then
/// read [`EventTimer::elapsed_ms`] (which waits for `stop`).
pub struct EventTimer {
    start: CudaEvent,
    stop: CudaEvent,
}

impl EventTimer {
    /// Creates two timing-enabled events on the stream's device.
    pub fn new(stream: &Stream) -> Result<EventTimer> {
        let ctx = stream.device().ctx();
        let make =
            || ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(|e| driver_error("cuEventCreate", e));
        Ok(EventTimer { start: make()?, stop: make()? })
    }

    /// Records the start event on `stream`.
    pub fn start(&self, stream: &Stream) -> Result<()> {
        self.start.record(stream.cuda()).map_err(|e| driver_error("cuEventRecord", e))
    }

    /// Records the stop event on `stream`.
    pub fn stop(&self, stream: &Stream) -> Result<()> {
        self.stop.record(stream.cuda()).map_err(|e| driver_error("cuEventRecord", e))
    }

    /// Waits for the stop event and returns the milliseconds between the two.
    pub fn elapsed_ms(&self) -> Result<f32> {
        self.stop.synchronize().map_err(|e| driver_error("cuEventSynchronize", e))?;
        self.start.elapsed_ms(&self.stop).map_err(|e| driver_error("cuEventElapsedTime", e))
    }
}

impl Stream {
    /// Times `work` (which should only queue work on this stream) with CUDA
    /// events; returns milliseconds of GPU time.
    pub fn time_ms<F: FnOnce() -> Result<()>>(&self, work: F) -> Result<f32> {
        let t = EventTimer::new(self)?;
        t.start(self)?;
        work()?;
        t.stop(self)?;
        t.elapsed_ms()
    }

    /// Times `work` `iters` times with one pair of events (each run recorded alone, so runs do
    /// not overlap) and returns the median in milliseconds of GPU time. Warm-up is the caller's.
    pub fn median_ms<F: FnMut() -> Result<()>>(&self, iters: usize, mut work: F) -> Result<f32> {
        let t = EventTimer::new(self)?;
        let mut samples = Vec::with_capacity(iters);
        for _ in 0..iters {
            t.start(self)?;
            work()?;
            t.stop(self)?;
            samples.push(t.elapsed_ms()?);
        }
        median(&samples)
    }
}

/// Median of `samples` (mean of the two middle values for even lengths).
/// Errors on an empty slice or a NaN sample.
pub fn median(samples: &[f32]) -> Result<f32> {
    if samples.is_empty() {
        return Err(RuntimeError::InvalidArgument("median of no samples".into()));
    }
    if samples.iter().any(|x| x.is_nan()) {
        return Err(RuntimeError::InvalidArgument("median of a NaN sample".into()));
    }
    let mut v = samples.to_vec();
    v.sort_by(f32::total_cmp);
    let n = v.len();
    Ok(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_odd_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]).ok(), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]).ok(), Some(2.5));
        assert_eq!(median(&[7.0]).ok(), Some(7.0));
        assert!(median(&[]).is_err());
        assert!(median(&[1.0, f32::NAN]).is_err());
    }
}
