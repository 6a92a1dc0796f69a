//! [`Lifetimes`] as a [`Report`]: its formats and their default files.

use std::io::{self, Write};

use crate::report::{DefaultFile, FormatInfo, Report, ReportFormat};

use super::{Lifetimes, advice, csv, html, svg, text, trace};

/// The formats of a lifetime report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LifetimesFormat {
    /// Summary, densities, sites and classes.
    Text,
    /// Metadata and the analysis.
    Json,
    /// One row per sampled allocation.
    Csv,
    /// The density charts.
    Svg,
    /// The HTML page.
    Html,
    /// Chrome trace events.
    Trace,
    /// Pretenuring advice.
    Advice,
}

impl LifetimesFormat {
    /// Every format, the default first.
    pub const ALL: [LifetimesFormat; 7] = [
        LifetimesFormat::Text,
        LifetimesFormat::Json,
        LifetimesFormat::Csv,
        LifetimesFormat::Svg,
        LifetimesFormat::Html,
        LifetimesFormat::Trace,
        LifetimesFormat::Advice,
    ];
}

impl ReportFormat for LifetimesFormat {
    fn info(self) -> FormatInfo {
        let (name, description, file) = match self {
            LifetimesFormat::Text => (
                "text",
                "Summary, lifetime densities on each clock, allocation sites and classes",
                None,
            ),
            LifetimesFormat::Json => (
                "json",
                "Metadata (program, mode, sampling, totals, units) and the analysis",
                Some("lifetimes.json"),
            ),
            LifetimesFormat::Csv => (
                "csv",
                "One row per sampled allocation, with a header stating units",
                Some("lifetimes.csv"),
            ),
            LifetimesFormat::Svg => (
                "svg",
                "The lifetime density charts (by objects and by memory) on the three clocks",
                Some("lifetimes.svg"),
            ),
            LifetimesFormat::Html => (
                "html",
                "One HTML page: the charts, the summary and the site table",
                Some("lifetimes.html"),
            ),
            LifetimesFormat::Trace => (
                "trace",
                "Chrome trace events: collections and allocation rate over time (Perfetto)",
                Some("lifetimes.trace.json"),
            ),
            LifetimesFormat::Advice => (
                "advice",
                "Pretenuring advice: the long-lived and immortal sites, as JSON for `--pretenure FILE`",
                Some("pretenure.json"),
            ),
        };
        FormatInfo {
            name,
            aliases: &[],
            description,
            default_file: file.map_or(DefaultFile::Stdout, DefaultFile::Fixed),
        }
    }
}

impl Report for Lifetimes {
    type Format = LifetimesFormat;
    type Options = text::TextOptions;
    const FORMATS: &'static [LifetimesFormat] = &LifetimesFormat::ALL;
    const NOUN: &'static str = "lifetime";

    fn write(
        &self,
        format: LifetimesFormat,
        options: &text::TextOptions,
        w: &mut dyn Write,
    ) -> io::Result<()> {
        match format {
            LifetimesFormat::Text => text::write(self, options, w),
            LifetimesFormat::Json => self.write_json(w),
            LifetimesFormat::Csv => csv::write(self, w),
            LifetimesFormat::Svg => svg::write_all(self, w),
            LifetimesFormat::Html => html::write(self, w),
            LifetimesFormat::Trace => trace::write(self, w),
            LifetimesFormat::Advice => advice::write(self, w),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_writers() {
        crate::report::api::tests::check_formats::<Lifetimes>();
        let l = crate::lifetimes::svg::tests::sample();
        let mut csv_out = Vec::new();
        csv::write(&l, &mut csv_out).expect("csv");
        assert_eq!(
            l.render(LifetimesFormat::Csv, &text::TextOptions::default())
                .as_bytes(),
            csv_out
        );
    }

    /// A large lifetime profile (100,000 records of 50 classes at 2,000
    /// sites, half of them under one 20,000-deep stack, and 5,000
    /// collections) in every format, each in output linear in its size.
    /// Without a timing assertion: a writer quadratic in the records, the
    /// sites or a stack's depth shows as a test that takes minutes.
    #[test]
    fn every_format_writes_a_large_profile_in_linear_output() {
        use crate::lifetimes::{Collection, Record, Site};
        let (records, sites, depth, collections) = (100_000usize, 2_000usize, 20_000usize, 5_000);
        let mut l = crate::lifetimes::svg::tests::sample();
        l.classes = (0..50).map(|k| format!("Class{k}")).collect();
        l.sites = (0..sites)
            .map(|s| Site {
                method: format!("Class{}>>site{s}", s % 50),
                pc: (s % 40) as u32,
                line: (s % 300) as u32,
            })
            .collect();
        // Stack 0 is a deep recursion through the sites; the others are one
        // site each.
        let deep: Vec<u32> = (0..depth).map(|d| (d % sites) as u32).collect();
        l.stacks = std::iter::once(deep)
            .chain((0..sites).map(|s| vec![s as u32]))
            .collect();
        l.records = (0..records)
            .map(|i| {
                let birth = i as u64 * 10;
                let life = (i as u64 * 7919) % 100_000;
                Record {
                    class: (i % 50) as u32,
                    size_bytes: 16 + (i % 64) as u64 * 8,
                    stack: if i % 2 == 0 {
                        0
                    } else {
                        1 + (i % sites) as u32
                    },
                    birth_bytes: birth * 40,
                    death_bytes: (birth + life) * 40,
                    birth_us: birth,
                    death_us: birth + life,
                    survived_scavenges: (life / 10_000) as u32,
                    survived_full_gcs: 0,
                    censored: i % 97 == 0,
                    probability: 1.0,
                }
            })
            .collect();
        l.collections = (0..collections)
            .map(|k| Collection {
                start_us: k as u64 * 200,
                duration_us: 5,
                full: k % 50 == 0,
                allocated_bytes: k as u64 * 8_000,
            })
            .collect();
        l.totals.duration_us = records as u64 * 10 + 100_000;
        l.totals.allocated_objects = records as u64;
        let units = records + collections + depth;
        for f in LifetimesFormat::ALL {
            let mut out = Vec::new();
            l.write(f, &text::TextOptions::default(), &mut out)
                .expect("writes");
            assert!(
                out.len() <= units * 1_000,
                "{f:?}: {} bytes for {units} records, collections and frames",
                out.len()
            );
        }
    }
}
