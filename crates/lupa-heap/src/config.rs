//! Heap configuration and Pharo's GC parameters: [`HeapConfig`] (sizes and
//! behaviour chosen at start), [`GcParam`] and its table ([`GcParam::info`]:
//! the one description of each parameter, from which the VM flags of `lupa`,
//! the defaults, the Smalltalk names and the experiments' configurations are
//! derived), [`GcSettings`] (values for some parameters), the heap's size
//! limits and the out-of-memory error. The parameters are settable at run time,
//! by name or Pharo index, validated by
//! [`Heap::set_parameter`](crate::Heap::set_parameter) in `params.rs`.

use crate::layout::AGE_MASK;
use crate::units::Unit;

/// Extra room past `--max-heap` in which the program can still handle an
/// out-of-memory error.
pub const RESERVE_BYTES: usize = 4 << 20;

/// The largest heap the header's 30-bit forwarding field can address (8 GB).
pub const MAX_HEAP_BYTES: usize = (1usize << 30) * 8 - RESERVE_BYTES;

const MB: f64 = (1 << 20) as f64;

/// Heap sizing and behaviour. The sizes are Pharo's GC parameters, with Pharo's
/// meaning; each field of a parameter has the parameter's name (see
/// [`GcParam`], whose table holds their defaults); they can be changed at run
/// time with [`Heap::set_parameter`](crate::Heap::set_parameter).
#[derive(Debug, Clone)]
pub struct HeapConfig {
    /// [`GcParam::EdenSize`], bytes. New space is eden plus two survivor
    /// spaces of eden/5 each (eden is 5/7 of new space, as in Spur). At most a
    /// quarter of `max_heap`.
    pub eden_size: usize,
    /// [`GcParam::MaxHeap`]: hard bound on the heap (new space plus old
    /// space), bytes; at most [`MAX_HEAP_BYTES`].
    pub max_heap: usize,
    /// Deprecated: the semispace collector's growth factor. Unused.
    pub growth_factor: f64,
    /// Collect at every safepoint that follows an allocation (every 4th of those
    /// collections is a full GC).
    pub stress: bool,
    /// Seed of the identity-hash generator.
    pub hash_seed: u64,
    /// [`GcParam::GrowthHeadroom`]: minimum amount old space grows by when it
    /// is full, bytes.
    pub growth_headroom: usize,
    /// [`GcParam::ShrinkThreshold`]: free old space kept after a full GC
    /// before memory is given back to the operating system, bytes.
    pub shrink_threshold: usize,
    /// [`GcParam::GcRatio`]: old-space growth since the last full GC, as a
    /// ratio of its size after that GC, that triggers the next full GC (0.33 =
    /// 33%).
    pub gc_ratio: f64,
    /// [`GcParam::TenuringThreshold`]: number of scavenges an object survives
    /// in new space before it is tenured (1..=15). Objects are also tenured
    /// when a survivor space overflows.
    pub tenuring_threshold: u32,
    /// [`GcParam::LargeObjectSize`]: objects at least this large (bytes,
    /// header included) are allocated directly in old space.
    pub large_object_size: usize,
}

impl Default for HeapConfig {
    /// Every parameter at its default ([`ParamInfo::default`]: Pharo's, from
    /// the Illimani paper's table 2).
    fn default() -> Self {
        let mut c = HeapConfig {
            eden_size: 0,
            max_heap: 0,
            growth_factor: 3.0,
            stress: false,
            hash_seed: 0x9E37_79B9_7F4A_7C15,
            growth_headroom: 0,
            shrink_threshold: 0,
            gc_ratio: 0.0,
            tenuring_threshold: 0,
            large_object_size: 0,
        };
        for p in GcParam::ALL {
            c.set(p, p.default());
        }
        c
    }
}

impl HeapConfig {
    /// The value of parameter `p` (bytes, a ratio or a count).
    pub fn get(&self, p: GcParam) -> f64 {
        match p {
            GcParam::EdenSize => self.eden_size as f64,
            GcParam::GrowthHeadroom => self.growth_headroom as f64,
            GcParam::ShrinkThreshold => self.shrink_threshold as f64,
            GcParam::GcRatio => self.gc_ratio,
            GcParam::TenuringThreshold => f64::from(self.tenuring_threshold),
            GcParam::MaxHeap => self.max_heap as f64,
            GcParam::LargeObjectSize => self.large_object_size as f64,
        }
    }

    /// Set parameter `p` as it is, without validation (sizes and counts are
    /// truncated to whole numbers; [`Heap::set_parameter`](crate::Heap::set_parameter)
    /// validates, and a heap clamps its configuration when it starts).
    pub fn set(&mut self, p: GcParam, value: f64) {
        match p {
            GcParam::EdenSize => self.eden_size = value as usize,
            GcParam::GrowthHeadroom => self.growth_headroom = value as usize,
            GcParam::ShrinkThreshold => self.shrink_threshold = value as usize,
            GcParam::GcRatio => self.gc_ratio = value,
            GcParam::TenuringThreshold => self.tenuring_threshold = value as u32,
            GcParam::MaxHeap => self.max_heap = value as usize,
            GcParam::LargeObjectSize => self.large_object_size = value as usize,
        }
    }

    /// Every parameter's value, in the table's order.
    pub fn settings(&self) -> GcSettings {
        let mut s = GcSettings::default();
        for p in GcParam::ALL {
            s.set(p, self.get(p));
        }
        s
    }
}

/// The heap is exhausted (`--max-heap`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfMemory {
    /// Bytes that were requested.
    pub requested: usize,
}

impl std::fmt::Display for OutOfMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "heap exhausted while allocating {} bytes",
            self.requested
        )
    }
}

impl std::error::Error for OutOfMemory {}

/// A tunable GC parameter (Pharo's meaning). Values are read and written as
/// `f64`: bytes for sizes, a ratio for [`GcParam::GcRatio`], a count for
/// [`GcParam::TenuringThreshold`]. Everything about a parameter is in its row
/// of the table, [`GcParam::info`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GcParam {
    /// Eden size in bytes (new space is 7/5 of it). A change takes effect at the
    /// next full GC, when new space is empty and can be re-laid out (Pharo applies
    /// it at the next start).
    EdenSize,
    /// Minimum number of bytes old space grows by.
    GrowthHeadroom,
    /// Free old-space bytes kept after a full GC before memory is returned.
    ShrinkThreshold,
    /// Old-space growth ratio since the last full GC that triggers the next one.
    GcRatio,
    /// Scavenges survived before an object is tenured (1..=15).
    TenuringThreshold,
    /// Upper bound of the heap in bytes.
    MaxHeap,
    /// Size in bytes from which objects are allocated directly in old space.
    LargeObjectSize,
}

/// One row of the GC parameter table: everything Lupa says about a parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParamInfo {
    /// Its name (`eden-size`): in messages, in `lupa run --stats-json`, and a
    /// spelling `System>>gcParameterAt:` accepts.
    pub name: &'static str,
    /// Its `lupa` VM flag (`--eden-size`), if it has one.
    pub flag: Option<&'static str>,
    /// The index of the corresponding `Smalltalk vm parameterAt:` in Pharo,
    /// if any.
    pub pharo_index: Option<u32>,
    /// Its Smalltalk name (`#edenSize`, without the `#`).
    pub symbol: &'static str,
    /// Its column in experiment reports (`eden`).
    pub label: &'static str,
    /// What its values count, and how they are written and read.
    pub unit: Unit,
    /// Its default (Pharo's).
    pub default: f64,
    /// What it does (the flag's help).
    pub help: &'static str,
}

/// The table, in [`GcParam::ALL`]'s order.
const TABLE: [ParamInfo; 7] = [
    ParamInfo {
        name: "eden-size",
        flag: Some("--eden-size"),
        pharo_index: Some(45),
        symbol: "edenSize",
        label: "eden",
        unit: Unit::Bytes,
        default: 15.0 * MB,
        help: "Eden size (Pharo's parameter 45), e.g. 15MB (the default) or 64MB. New space is eden \
plus two survivor spaces of eden/5 each",
    },
    ParamInfo {
        name: "growth-headroom",
        flag: Some("--growth-headroom"),
        pharo_index: Some(25),
        symbol: "growthHeadroom",
        label: "headroom",
        unit: Unit::Bytes,
        default: 16.0 * MB,
        help: "Growth headroom (Pharo's parameter 25): the minimum amount old space grows by when it \
is full, e.g. 16MB (the default) or 128MB",
    },
    ParamInfo {
        name: "shrink-threshold",
        flag: Some("--shrink-threshold"),
        pharo_index: Some(24),
        symbol: "shrinkThreshold",
        label: "shrink",
        unit: Unit::Bytes,
        default: 32.0 * MB,
        help: "Shrink threshold (Pharo's parameter 24): free old space kept after a full GC before \
memory is given back to the system, e.g. 32MB (the default) or 256MB",
    },
    ParamInfo {
        name: "gc-ratio",
        flag: Some("--gc-ratio"),
        pharo_index: Some(55),
        symbol: "gcRatio",
        label: "ratio",
        unit: Unit::Ratio,
        default: 0.33,
        help: "Full-GC ratio (Pharo's parameter 55): old-space growth since the last full GC, \
relative to its size after it, that triggers the next full GC (default 0.33; e.g. 2.5 or 250%)",
    },
    ParamInfo {
        name: "tenuring-threshold",
        flag: Some("--tenuring-threshold"),
        pharo_index: Some(6),
        symbol: "tenuringThreshold",
        label: "tenuring",
        unit: Unit::Count {
            min: 1,
            max: AGE_MASK as u32,
        },
        default: 3.0,
        help: "Scavenges an object survives in new space before it is tenured (1-15, default 3)",
    },
    ParamInfo {
        name: "max-heap",
        flag: Some("--max-heap"),
        pharo_index: None,
        symbol: "maxHeap",
        label: "max heap",
        unit: Unit::Bytes,
        default: 4096.0 * MB,
        help: "Upper bound of the heap, e.g. 512MB, 2GB",
    },
    ParamInfo {
        name: "large-object-size",
        flag: None,
        pharo_index: None,
        symbol: "largeObjectSize",
        label: "large objects",
        unit: Unit::Bytes,
        default: 65536.0,
        help: "Objects at least this large (bytes, header included) are allocated directly in old \
space",
    },
];

impl GcParam {
    /// Every parameter, in the table's order.
    pub const ALL: [GcParam; 7] = [
        GcParam::EdenSize,
        GcParam::GrowthHeadroom,
        GcParam::ShrinkThreshold,
        GcParam::GcRatio,
        GcParam::TenuringThreshold,
        GcParam::MaxHeap,
        GcParam::LargeObjectSize,
    ];

    /// The parameter's row of the table.
    pub fn info(self) -> &'static ParamInfo {
        &TABLE[self as usize]
    }

    /// The parameter's name (`eden-size`, see [`ParamInfo::name`]).
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Its Smalltalk name (`edenSize`).
    pub fn symbol(self) -> &'static str {
        self.info().symbol
    }

    /// Its default value.
    pub fn default(self) -> f64 {
        self.info().default
    }

    /// Its unit.
    pub fn unit(self) -> Unit {
        self.info().unit
    }

    /// The parameter called `name` (see [`GcParam::name`]).
    pub fn from_name(name: &str) -> Option<GcParam> {
        GcParam::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The parameter `name` names in Smalltalk: its symbol (`edenSize`) or its
    /// name (`eden-size`).
    pub fn from_symbol(name: &str) -> Option<GcParam> {
        GcParam::ALL
            .into_iter()
            .find(|p| p.symbol() == name || p.name() == name)
    }

    /// The index of the corresponding `Smalltalk vm parameterAt:` in Pharo, if any
    /// (24 shrink threshold, 25 growth headroom, 45 desired eden size, 55 full-GC
    /// ratio, 6 tenuring threshold).
    pub fn pharo_index(self) -> Option<u32> {
        self.info().pharo_index
    }

    /// The parameter whose Pharo `vm parameterAt:` index is `i`.
    pub fn from_pharo_index(i: u32) -> Option<GcParam> {
        GcParam::ALL
            .into_iter()
            .find(|p| p.pharo_index() == Some(i))
    }

    /// A value of this parameter as its flag takes it (see [`Unit::format`]).
    pub fn format(self, value: f64) -> String {
        self.unit().format(value)
    }

    /// A value of this parameter as written on the command line (see
    /// [`Unit::parse`]).
    pub fn parse(self, text: &str) -> Result<f64, String> {
        self.unit().parse(text)
    }
}

/// Values for some of the GC parameters, the others keeping their defaults:
/// what `lupa`'s VM flags set, and one configuration of an experiment.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GcSettings([Option<f64>; 7]);

impl GcSettings {
    /// The value set for `p`, if any.
    pub fn get(&self, p: GcParam) -> Option<f64> {
        self.0[p as usize]
    }

    /// The value of `p`: the one set, else its default.
    pub fn value(&self, p: GcParam) -> f64 {
        self.get(p).unwrap_or_else(|| p.default())
    }

    /// Set `p` to `value`.
    pub fn set(&mut self, p: GcParam, value: f64) {
        self.0[p as usize] = Some(value);
    }

    /// These settings with `p` set to `value`.
    pub fn with(mut self, p: GcParam, value: f64) -> GcSettings {
        self.set(p, value);
        self
    }

    /// Forget the value of `p` (its default applies).
    pub fn unset(&mut self, p: GcParam) {
        self.0[p as usize] = None;
    }

    /// The values set, in the table's order.
    pub fn iter(&self) -> impl Iterator<Item = (GcParam, f64)> + '_ {
        GcParam::ALL
            .into_iter()
            .filter_map(|p| self.get(p).map(|v| (p, v)))
    }

    /// Set these values in `config`.
    pub fn apply(&self, config: &mut HeapConfig) {
        for (p, v) in self.iter() {
            config.set(p, v);
        }
    }

    /// The `lupa` VM flags that set these values (`--eden-size 64MB
    /// --gc-ratio 2.5`...), in the table's order; they parse back to the same
    /// values ([`Unit::format`] is exact). A parameter without a flag
    /// ([`ParamInfo::flag`]: the large-object size) is left out: it can only
    /// be set from Smalltalk, `System>>gcParameterAt:put:`.
    pub fn flags(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (p, v) in self.iter() {
            if let Some(flag) = p.info().flag {
                out.push(flag.to_string());
                out.push(p.format(v));
            }
        }
        out
    }
}

/// A rejected [`Heap::set_parameter`](crate::Heap::set_parameter).
#[derive(Debug, Clone, PartialEq)]
pub struct ParamError(pub String);

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParamError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_the_enums_order_and_consistent() {
        for (i, p) in GcParam::ALL.into_iter().enumerate() {
            assert_eq!(p as usize, i);
            let info = p.info();
            if let Some(flag) = info.flag {
                assert_eq!(flag, format!("--{}", info.name));
            }
            assert_eq!(GcParam::from_name(info.name), Some(p));
            assert_eq!(GcParam::from_symbol(info.symbol), Some(p));
            assert_eq!(GcParam::from_symbol(info.name), Some(p));
            if let Some(i) = info.pharo_index {
                assert_eq!(GcParam::from_pharo_index(i), Some(p));
            }
            // A help text that names the default names this one.
            if info.help.contains("default") {
                assert!(
                    info.help.contains(&p.format(p.default())),
                    "{}: {}",
                    info.name,
                    info.help
                );
            }
            assert_eq!(p.parse(&p.format(p.default())), Ok(p.default()));
        }
    }

    #[test]
    fn the_defaults_come_from_the_table() {
        let c = HeapConfig::default();
        for p in GcParam::ALL {
            assert_eq!(c.get(p), p.default(), "{}", p.name());
        }
        assert_eq!(c.eden_size, 15 << 20);
        assert_eq!(c.max_heap, 4 << 30);
        assert_eq!(c.large_object_size, 64 << 10);
        assert_eq!(c.settings().flags().len(), 12);
    }

    #[test]
    fn settings_apply_and_make_flags() {
        let s = GcSettings::default()
            .with(GcParam::GcRatio, 2.5)
            .with(GcParam::EdenSize, (64 << 20) as f64)
            .with(GcParam::LargeObjectSize, 4096.0);
        assert_eq!(s.flags(), ["--eden-size", "64MB", "--gc-ratio", "2.5"]);
        let mut c = HeapConfig::default();
        s.apply(&mut c);
        assert_eq!(
            (c.eden_size, c.gc_ratio, c.large_object_size),
            (64 << 20, 2.5, 4096)
        );
        assert_eq!(s.value(GcParam::TenuringThreshold), 3.0);
        let mut t = s;
        t.unset(GcParam::GcRatio);
        assert_eq!(t.get(GcParam::GcRatio), None);
    }
}
