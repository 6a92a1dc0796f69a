//! Reading versions back and comparing them with the pure model of
//! `lupa_prof::history`: two versions' send counts ([`diff`]) or sampled
//! times ([`time_diff`], Welch's t-test), their folded stacks
//! ([`stacks_of`]), one method across every version ([`series`]).

use crate::store::ProfileStore;
use crate::{HistoryError, METRIC_TIME, METRIC_TIME_SAMPLES};
use lupa_prof::history::timed::{self, TimeDiff, TimeMeasure, TimeSide};
use lupa_prof::history::{self as model, Diff, DiffOptions, Measure, Series, VersionInfo};

/// Compare versions `from` and `to` (labels or ids) of `store`.
pub fn diff(
    store: &dyn ProfileStore,
    from: &str,
    to: &str,
    options: DiffOptions,
) -> Result<Diff, HistoryError> {
    let a = whole(store.version(from)?)?;
    let b = whole(store.version(to)?)?;
    let before = store.methods(a.id)?;
    let after = store.methods(b.id)?;
    Ok(model::diff(a, &before, b, &after, options))
}

/// `v`, refused when it is broken (nothing was measured there).
fn whole(v: VersionInfo) -> Result<VersionInfo, HistoryError> {
    if v.is_broken() {
        return Err(HistoryError::Incomparable(format!(
            "`{}` is broken (its program failed to load or run: {}): nothing to compare",
            v.label, v.command
        )));
    }
    Ok(v)
}

/// Is `metric` a version's sampled time ([`METRIC_TIME`],
/// [`METRIC_TIME_SAMPLES`])?
pub fn is_time(metric: &str) -> bool {
    metric == METRIC_TIME || metric == METRIC_TIME_SAMPLES
}

/// Versions `from` and `to` of `store`, refused unless both are of one
/// metric.
pub fn comparable(
    store: &dyn ProfileStore,
    from: &str,
    to: &str,
) -> Result<(VersionInfo, VersionInfo), HistoryError> {
    let a = whole(store.version(from)?)?;
    let b = whole(store.version(to)?)?;
    if a.metric != b.metric {
        return Err(HistoryError::Incomparable(format!(
            "`{}` was recorded with the metric {} and `{}` with {}: record both with the same --metric",
            a.label, a.metric, b.label, b.metric
        )));
    }
    Ok((a, b))
}

/// Compare two time versions (`--metric time`) with Welch's t-test per
/// method, class and package.
pub fn time_diff(
    store: &dyn ProfileStore,
    from: &str,
    to: &str,
    measure: TimeMeasure,
) -> Result<TimeDiff, HistoryError> {
    let (a, b) = comparable(store, from, to)?;
    if !is_time(&a.metric) {
        return Err(HistoryError::Incomparable(format!(
            "`{}` holds {}, not sampled time",
            a.label, a.metric
        )));
    }
    let (ma, mb) = (store.methods(a.id)?, store.methods(b.id)?);
    let (ra, rb) = (store.runs(a.id)?, store.runs(b.id)?);
    let unit = if a.metric == METRIC_TIME {
        "ms"
    } else {
        "samples"
    };
    Ok(timed::diff(
        TimeSide {
            version: &a,
            methods: &ma,
            runs: &ra,
        },
        TimeSide {
            version: &b,
            methods: &mb,
            runs: &rb,
        },
        measure,
        unit,
    ))
}

/// Two versions' folded stacks, with a method -> package map of the later
/// one; [`HistoryError::Incomparable`] when a version has none.
#[allow(clippy::type_complexity)]
pub fn stacks_of(
    store: &dyn ProfileStore,
    from: &str,
    to: &str,
) -> Result<
    (
        VersionInfo,
        Vec<(String, u64)>,
        VersionInfo,
        Vec<(String, u64)>,
        rustc_hash::FxHashMap<String, String>,
    ),
    HistoryError,
> {
    let (a, b) = comparable(store, from, to)?;
    let sa = store.stacks(a.id)?;
    let sb = store.stacks(b.id)?;
    for (v, s) in [(&a, &sa), (&b, &sb)] {
        if s.is_empty() {
            return Err(HistoryError::Incomparable(format!(
                "`{}` has no call stacks (recorded with --metric {} or by an older lupa); \
                 record it again with send counts",
                v.label, v.metric
            )));
        }
    }
    let mut packages: rustc_hash::FxHashMap<String, String> = Default::default();
    for v in [&a, &b] {
        for m in store.methods(v.id)? {
            packages.insert(m.method, m.package);
        }
    }
    Ok((a, sa, b, sb, packages))
}

/// `method` across every version of `store`.
pub fn series(
    store: &dyn ProfileStore,
    method: &str,
    measure: Measure,
) -> Result<Series, HistoryError> {
    Ok(model::series(method, store.series(method)?, measure))
}
