//! What `lupa gc-bench` reports, as data: [`gcload`] (a summary line, how
//! the runs were made, one table of every configuration: the paper's tables
//! 1 and 3-5 in one) and [`dataframe`] (the paper's table 1, every size under
//! the first configuration, then one table per size, tables 3-5), and the raw
//! runs as a CSV table ([`runs_csv`]).
//!
//! Times are means (± sample standard deviation with more than one run);
//! speed-ups are relative to the first configuration.

use super::{Bench, DataSize};
use crate::cells::{count, mb, mean, pm, value_label};
use crate::gc_config::GcConfig;
use crate::gctune::speed_up;
use crate::runs::RunSample;
use lupa_heap::GcParam;
use lupa_prof::table::{Column, Document, Table};
use std::path::{Path, PathBuf};

/// How the runs were made, for a report's second line.
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    /// Measured runs per configuration.
    pub runs: usize,
    /// Unmeasured runs before.
    pub warmup: usize,
    /// Worker processes at a time (`None`: in this process).
    pub jobs: Option<usize>,
    /// Each worker's memory limit, bytes ([`crate::pressure`]).
    pub memory: Option<u64>,
    /// Did the runs have the JIT (as `lupa run` has it)?
    pub jit: bool,
    /// The configuration speed-ups are relative to.
    pub baseline: String,
}

impl Setup {
    /// `3 runs per configuration (interleaved, after 1 warm-up run), each in
    /// a fresh VM; ...`.
    fn line(&self, what: &str) -> String {
        let s = |n: usize| if n == 1 { "" } else { "s" };
        format!(
            "{} run{} per {what} (interleaved, after {} warm-up run{}), each in a fresh VM {}{}; \
times are mean{} of the workload's wall time; speed-ups are relative to {}",
            self.runs,
            s(self.runs),
            self.warmup,
            s(self.warmup),
            if self.jit {
                "with the JIT"
            } else {
                "interpreted (no JIT)"
            },
            match (self.jobs, self.memory) {
                (Some(n), None) => format!(" in worker processes, {n} at a time"),
                (Some(n), Some(m)) => format!(
                    " in worker processes, {n} at a time, {}",
                    crate::pressure::describe_limit(m)
                ),
                (None, _) => String::new(),
            },
            if self.runs == 1 { "" } else { " ± sd" },
            self.baseline
        )
    }
}

/// A column of the runs of one configuration.
fn col(ss: &[RunSample], f: &dyn Fn(&RunSample) -> f64) -> Vec<f64> {
    ss.iter().map(f).collect()
}

fn total_s(s: &RunSample) -> f64 {
    s.stats.total_s()
}

fn gc_s(s: &RunSample) -> f64 {
    s.stats.gc_s()
}

fn gc_pct(s: &RunSample) -> f64 {
    if s.stats.total_s() > 0.0 {
        100.0 * s.stats.gc_s() / s.stats.total_s()
    } else {
        0.0
    }
}

fn counts(ss: &[RunSample], f: &dyn Fn(&RunSample) -> u64) -> String {
    count(&ss.iter().map(f).collect::<Vec<u64>>())
}

/// The parameters the tables show: Pharo's four (the tenuring threshold is
/// one for every configuration).
const SHOWN: [GcParam; 4] = [
    GcParam::EdenSize,
    GcParam::GrowthHeadroom,
    GcParam::ShrinkThreshold,
    GcParam::GcRatio,
];

/// A table whose first columns name a configuration ([`config_cells`]), then `more`.
fn config_table(more: &[&str]) -> Table {
    let mut columns = vec![Column::left("config")];
    columns.extend(
        SHOWN
            .iter()
            .map(|p| p.info().label)
            .chain(more.iter().copied())
            .map(Column::right),
    );
    Table::new(columns)
}

/// A configuration's first cells (see [`config_table`]).
fn config_cells(c: &GcConfig) -> Vec<String> {
    let mut cells = vec![c.name.clone()];
    cells.extend(SHOWN.iter().map(|&p| value_label(p, c.get(p))));
    cells
}

/// The GcLoad table (the paper's tables 1 and 3-5 in one).
pub fn gcload_table(b: &Bench) -> Table {
    let base_total = mean(&col(&b.samples[0], &total_s));
    let base_gc = mean(&col(&b.samples[0], &gc_s));
    let mut t = config_table(&[
        "total s",
        "GC s",
        "GC %",
        "scavenges",
        "full GCs",
        "scavenge ms",
        "full GC ms",
        "tenured MB",
        "heap MB",
        "GC speed-up",
        "speed-up",
    ]);
    for (c, ss) in b.configs.iter().zip(&b.samples) {
        let total = col(ss, &total_s);
        let gc = col(ss, &gc_s);
        let per = |time_us: u64, n: u64| {
            if n == 0 {
                0.0
            } else {
                time_us as f64 / 1e3 / n as f64
            }
        };
        let mean_scavenge = col(ss, &|s| per(s.stats.scavenge_us, s.stats.scavenges));
        let mean_full = col(ss, &|s| per(s.stats.full_gc_us, s.stats.full_gcs));
        let ratio = |base: f64, x: f64| {
            if x > 0.0 {
                format!("{:.2}x", base / x)
            } else {
                "-".to_string()
            }
        };
        let mut row = config_cells(c);
        row.extend([
            pm(&total, 3),
            pm(&gc, 3),
            format!("{:.1}", mean(&col(ss, &gc_pct))),
            counts(ss, &|s| s.stats.scavenges),
            counts(ss, &|s| s.stats.full_gcs),
            format!("{:.2}", mean(&mean_scavenge)),
            format!("{:.2}", mean(&mean_full)),
            format!(
                "{:.1}",
                mb(mean(&col(ss, &|s| s.stats.tenured_bytes as f64)))
            ),
            format!("{:.1}", mb(mean(&col(ss, &|s| s.stats.heap_bytes as f64)))),
            ratio(base_gc, mean(&gc)),
            ratio(base_total, mean(&total)),
        ]);
        t.push(row);
    }
    t
}

/// `52169` from `DataFrameLoad: 52169 rows, 10 columns`.
pub fn rows_of(summary: &str) -> String {
    summary
        .split_once(": ")
        .map(|(_, r)| r)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or("?")
        .to_string()
}

/// The paper's table 1: every size under the first configuration.
pub fn table_1(sizes: &[(DataSize, PathBuf, Bench)]) -> Table {
    let mut t = Table::new(vec![
        Column::left("size"),
        Column::right("rows"),
        Column::right("file MB"),
        Column::right("allocated MB"),
        Column::right("scavenges"),
        Column::right("full GCs"),
        Column::right("GC time s"),
        Column::right("total time s"),
        Column::right("GC %"),
    ]);
    for (size, path, b) in sizes {
        let ss = &b.samples[0];
        let file = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        t.push([
            size.label.clone(),
            rows_of(&b.summary),
            format!("{:.1}", mb(file as f64)),
            format!(
                "{:.1}",
                mb(mean(&col(ss, &|s| s.stats.allocated_bytes as f64)))
            ),
            counts(ss, &|s| s.stats.scavenges),
            counts(ss, &|s| s.stats.full_gcs),
            pm(&col(ss, &gc_s), 3),
            pm(&col(ss, &total_s), 3),
            format!("{:.1}", mean(&col(ss, &gc_pct))),
        ]);
    }
    t
}

/// The paper's tables 3-5: one size under every configuration.
pub fn size_table(b: &Bench) -> Table {
    let mut t = config_table(&[
        "scavenges",
        "full GCs",
        "GC time s",
        "total time s",
        "GC %",
        "speed-up (95% CI)",
    ]);
    let base = b.times(0);
    for (i, (c, ss)) in b.configs.iter().zip(&b.samples).enumerate() {
        let up = if i == 0 {
            "1.00x".to_string()
        } else {
            speed_up(&base, &b.times(i)).map_or_else(|| "-".to_string(), |s| s.label())
        };
        let mut row = config_cells(c);
        row.extend([
            counts(ss, &|s| s.stats.scavenges),
            counts(ss, &|s| s.stats.full_gcs),
            pm(&col(ss, &gc_s), 3),
            pm(&col(ss, &total_s), 3),
            format!("{:.1}", mean(&col(ss, &gc_pct))),
            up,
        ]);
        t.push(row);
    }
    t
}

/// The columns of the raw runs (one row per run).
const CSV_COLUMNS: [&str; 20] = [
    "config",
    "eden_bytes",
    "growth_headroom_bytes",
    "shrink_threshold_bytes",
    "gc_ratio",
    "run",
    "total_s",
    "gc_s",
    "scavenges",
    "scavenge_s",
    "full_gcs",
    "full_gc_s",
    "max_pause_s",
    "tenured_bytes",
    "allocated_bytes",
    "heap_bytes",
    "growths",
    "shrinks",
    "page_faults",
    "checksum",
];

/// The raw runs of some benches, one row per run; with `size` first when
/// they are of the DataFrame workload (each bench with its size's label).
pub fn runs_csv<'a>(benches: impl IntoIterator<Item = (Option<&'a str>, &'a Bench)>) -> Table {
    let mut benches = benches.into_iter().peekable();
    let sized = benches.peek().is_some_and(|(size, _)| size.is_some());
    let names = sized.then_some("size").into_iter().chain(CSV_COLUMNS);
    let mut t = Table::new(names.map(Column::left).collect());
    for (size, b) in benches {
        for (c, ss) in b.configs.iter().zip(&b.samples) {
            for (i, s) in ss.iter().enumerate() {
                let st = &s.stats;
                let secs = |us: u64| format!("{:.6}", us as f64 / 1e6);
                let mut row: Vec<String> = size.map(str::to_string).into_iter().collect();
                row.extend([
                    c.name.clone(),
                    c.bytes(GcParam::EdenSize).to_string(),
                    c.bytes(GcParam::GrowthHeadroom).to_string(),
                    c.bytes(GcParam::ShrinkThreshold).to_string(),
                    c.get(GcParam::GcRatio).to_string(),
                    (i + 1).to_string(),
                    format!("{:.6}", st.total_s()),
                    format!("{:.6}", st.gc_s()),
                    st.scavenges.to_string(),
                    secs(st.scavenge_us),
                    st.full_gcs.to_string(),
                    secs(st.full_gc_us),
                    secs(st.max_pause_us),
                    st.tenured_bytes.to_string(),
                    st.allocated_bytes.to_string(),
                    st.heap_bytes.to_string(),
                    st.growths.to_string(),
                    st.shrinks.to_string(),
                    st.page_faults.to_string(),
                    s.checksum.clone().unwrap_or_default(),
                ]);
                t.push(row);
            }
        }
    }
    t
}

/// The GcLoad report: its summary, how the runs were made, the table.
pub fn gcload(b: &Bench, setup: &Setup) -> Document {
    let mut d = Document::default();
    d.line(format!(
        "{}; {:.0} MB allocated per run; checksum {}, verified in every run",
        b.summary,
        mb(b.allocated_per_run()),
        b.checksum
    ));
    d.line(setup.line("configuration"));
    d.line("");
    d.table(gcload_table(b));
    d
}

/// The DataFrame report: the sizes, how the runs were made, table 1, then
/// one table per size.
pub fn dataframe(
    results: &[(DataSize, PathBuf, Bench)],
    data_dir: &Path,
    setup: &Setup,
) -> Document {
    let mut d = Document::default();
    let labels: Vec<&str> = results.iter().map(|(s, _, _)| s.label.as_str()).collect();
    d.line(format!(
        "DataFrameLoad: sizes {}, data files in {}; every run verified its result",
        labels.join(", "),
        data_dir.display()
    ));
    d.line(setup.line("configuration and size"));
    d.line("");
    d.table(table_1(results).titled(format!(
        "Table 1: loading a DataFrame with the {} GC parameters",
        setup.baseline
    )));
    for (k, (size, path, b)) in results.iter().enumerate() {
        d.line("");
        let what = if size.label.bytes().all(|b| b.is_ascii_digit()) {
            format!("{}-row", size.label)
        } else {
            size.label.clone()
        };
        d.table(size_table(b).titled(format!(
            "Table {}: the {what} DataFrame ({}: {}; checksum {})",
            k + 3,
            path.display(),
            b.summary
                .strip_prefix("DataFrameLoad: ")
                .unwrap_or(&b.summary),
            b.checksum
        )));
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows() {
        assert_eq!(rows_of("DataFrameLoad: 300 rows, 10 columns"), "300");
        assert_eq!(rows_of("nothing"), "?");
    }

    #[test]
    fn setup_lines() {
        let s = Setup {
            runs: 1,
            warmup: 0,
            jobs: Some(2),
            memory: None,
            jit: true,
            baseline: "default".into(),
        };
        assert_eq!(
            s.line("configuration"),
            "1 run per configuration (interleaved, after 0 warm-up runs), each in a fresh VM with \
the JIT in worker processes, 2 at a time; times are mean of the workload's wall time; speed-ups are \
relative to default"
        );
        let limited = Setup {
            memory: Some(64 << 20),
            ..s
        };
        assert!(
            limited.line("configuration").contains(
                "2 at a time, each in a memory cgroup of 64MB, paged out to swap beyond it;"
            ),
            "{}",
            limited.line("configuration")
        );
    }
}
