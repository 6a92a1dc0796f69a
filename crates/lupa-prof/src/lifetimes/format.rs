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
}
