//! Reading and changing Pharo's GC parameters at run time ([`Heap::parameter`],
//! [`Heap::set_parameter`], which validates), and the full-GC threshold policy
//! they drive.

use crate::config::*;
use crate::heap::Heap;
use crate::layout::*;

impl Heap {
    /// Clamp a configuration to what the heap can honour (sizes, ratio, threshold).
    pub(crate) fn sanitize(c: &mut HeapConfig) {
        c.max_heap = c.max_heap.clamp(64 << 10, MAX_HEAP_BYTES);
        c.eden_size = c.eden_size.clamp(8 << 10, (c.max_heap / 4).max(8 << 10));
        c.tenuring_threshold = c.tenuring_threshold.clamp(1, AGE_MASK as u32);
        if !(c.gc_ratio.is_finite() && c.gc_ratio >= 0.0) {
            c.gc_ratio = GcParam::GcRatio.default();
        }
        c.growth_headroom = c.growth_headroom.max(64 << 10);
        c.large_object_size = c.large_object_size.max(1024);
    }

    // ------------------------------------------------------------------
    // Parameters
    // ------------------------------------------------------------------

    /// The current value of a GC parameter.
    pub fn parameter(&self, p: GcParam) -> f64 {
        self.config.get(p)
    }

    /// Set a GC parameter; answers its previous value. Sizes are in bytes. An eden
    /// size change takes effect at the next full GC; the others at once.
    pub fn set_parameter(&mut self, p: GcParam, value: f64) -> Result<f64, ParamError> {
        if !value.is_finite() || value < 0.0 {
            return Err(ParamError(format!(
                "{}: {value} is not a non-negative number",
                p.name()
            )));
        }
        let old = self.parameter(p);
        let bytes = value as usize;
        match p {
            GcParam::EdenSize => {
                if bytes < 8 << 10 {
                    return Err(ParamError("eden-size: at least 8 KB".into()));
                }
                self.config.eden_size = bytes;
            }
            GcParam::GrowthHeadroom => self.config.growth_headroom = bytes,
            GcParam::ShrinkThreshold => self.config.shrink_threshold = bytes,
            GcParam::GcRatio => {
                self.config.gc_ratio = value;
                if let Some(used) = self.last_full_used {
                    self.full_gc_threshold = self.threshold_after(used);
                }
            }
            GcParam::TenuringThreshold => {
                if !(1.0..=AGE_MASK as f64).contains(&value) {
                    return Err(ParamError("tenuring-threshold: between 1 and 15".into()));
                }
                self.config.tenuring_threshold = value as u32;
            }
            GcParam::MaxHeap => {
                if bytes < 64 << 10 {
                    return Err(ParamError("max-heap: at least 64 KB".into()));
                }
                self.config.max_heap = bytes.min(MAX_HEAP_BYTES);
            }
            GcParam::LargeObjectSize => {
                self.config.large_object_size = bytes.max(1024);
                let eden = self.eden_end - self.young_start;
                self.set_large_bound((self.config.large_object_size / 8).min(eden / 4).max(64));
            }
        }
        let mut c = self.config.clone();
        Self::sanitize(&mut c);
        self.config = c;
        Ok(old)
    }

    /// The full-GC threshold after a full GC that left `used` old words.
    pub(crate) fn threshold_after(&self, used: usize) -> usize {
        let grown = (used as f64 * (1.0 + self.config.gc_ratio)) as usize;
        // Tiny old spaces would collect all the time: allow at least 1/4 eden of growth.
        let min_growth = (self.eden_end - self.young_start) / 4;
        grown.max(used + min_growth)
    }
}
