//! A table of results, the output of an experiment (a benchmark's rows, a
//! tuning's candidates): a title, named columns and rows of cells, written
//! as text, CSV or JSON ([`Table`] is a [`Report`]).
//!
//! Contract: every row has one cell per column (shorter rows are padded with
//! empty cells when written, longer ones cut); text aligns numbers right and
//! the rest left; CSV is RFC 4180 (a header line, fields quoted when they
//! hold a comma, a quote or a line break); JSON is `{"title", "columns",
//! "rows"}`, cells as strings.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use crate::report::{DefaultFile, FormatInfo, Report, ReportFormat};

/// A table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Table {
    /// What it shows (the text's first line).
    pub title: String,
    /// The column names.
    pub columns: Vec<String>,
    /// The rows, one cell per column.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these columns.
    pub fn new(title: impl Into<String>, columns: &[&str]) -> Table {
        Table {
            title: title.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Add a row.
    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// Row `r`'s cell in column `c` ("" past its end).
    fn cell(&self, r: usize, c: usize) -> &str {
        self.rows[r].get(c).map_or("", String::as_str)
    }

    /// Does column `c` hold numbers only (empty cells aside)?
    fn numeric(&self, c: usize) -> bool {
        (0..self.rows.len()).all(|r| {
            let v = self.cell(r, c);
            v.is_empty() || v.trim_end_matches('%').parse::<f64>().is_ok()
        })
    }

    fn write_text(&self, w: &mut dyn Write) -> io::Result<()> {
        let n = self.columns.len();
        let widths: Vec<usize> = (0..n)
            .map(|c| {
                (0..self.rows.len())
                    .map(|r| self.cell(r, c).chars().count())
                    .chain([self.columns[c].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let numeric: Vec<bool> = (0..n).map(|c| self.numeric(c)).collect();
        let line = |cells: &mut dyn Iterator<Item = &str>| -> String {
            let parts: Vec<String> = cells
                .enumerate()
                .map(|(c, v)| {
                    if numeric[c] {
                        format!("{v:>w$}", w = widths[c])
                    } else {
                        format!("{v:<w$}", w = widths[c])
                    }
                })
                .collect();
            parts.join("  ").trim_end().to_string()
        };
        if !self.title.is_empty() {
            writeln!(w, "{}", self.title)?;
        }
        writeln!(w, "{}", line(&mut self.columns.iter().map(String::as_str)))?;
        for r in 0..self.rows.len() {
            writeln!(w, "{}", line(&mut (0..n).map(|c| self.cell(r, c))))?;
        }
        Ok(())
    }

    fn write_csv(&self, w: &mut dyn Write) -> io::Result<()> {
        fn field(v: &str) -> String {
            if v.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", v.replace('"', "\"\""))
            } else {
                v.to_string()
            }
        }
        let n = self.columns.len();
        let header: Vec<String> = self.columns.iter().map(|c| field(c)).collect();
        writeln!(w, "{}", header.join(","))?;
        for r in 0..self.rows.len() {
            let row: Vec<String> = (0..n).map(|c| field(self.cell(r, c))).collect();
            writeln!(w, "{}", row.join(","))?;
        }
        Ok(())
    }

    fn write_json(&self, w: &mut dyn Write) -> io::Result<()> {
        let n = self.columns.len();
        let rows: Vec<Vec<&str>> = (0..self.rows.len())
            .map(|r| (0..n).map(|c| self.cell(r, c)).collect())
            .collect();
        let doc = serde_json::json!({
            "title": self.title,
            "columns": self.columns,
            "rows": rows,
        });
        serde_json::to_writer_pretty(&mut *w, &doc).map_err(io::Error::from)?;
        w.write_all(b"\n")
    }
}

/// The formats of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TableFormat {
    /// Aligned columns.
    Text,
    /// Comma-separated values.
    Csv,
    /// JSON.
    Json,
}

impl TableFormat {
    /// Every format, the default first.
    pub const ALL: [TableFormat; 3] = [TableFormat::Text, TableFormat::Csv, TableFormat::Json];
}

impl ReportFormat for TableFormat {
    fn info(self) -> FormatInfo {
        let (name, description, suffix) = match self {
            TableFormat::Text => ("text", "Aligned columns, for the terminal", None),
            TableFormat::Csv => (
                "csv",
                "Comma-separated values with a header line",
                Some(".csv"),
            ),
            TableFormat::Json => ("json", "JSON: title, columns and rows", Some(".json")),
        };
        FormatInfo {
            name,
            aliases: &[],
            description,
            default_file: suffix.map_or(DefaultFile::Stdout, |suffix| DefaultFile::Named {
                prefix: "",
                suffix,
            }),
        }
    }
}

impl Report for Table {
    type Format = TableFormat;
    type Options = ();
    const FORMATS: &'static [TableFormat] = &TableFormat::ALL;
    const NOUN: &'static str = "table";

    fn write(&self, format: TableFormat, _: &(), w: &mut dyn Write) -> io::Result<()> {
        match format {
            TableFormat::Text => self.write_text(w),
            TableFormat::Csv => self.write_csv(w),
            TableFormat::Json => self.write_json(w),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new("GC time", &["config", "ms", "note"]);
        t.push(vec!["default".into(), "12.5".into(), "a, b".into()]);
        t.push(vec!["c1".into(), "3".into()]);
        t
    }

    #[test]
    fn text_aligns_numbers_right() {
        crate::report::api::tests::check_formats::<Table>();
        assert_eq!(
            sample().render(TableFormat::Text, &()),
            "GC time\nconfig     ms  note\ndefault  12.5  a, b\nc1          3\n"
        );
    }

    #[test]
    fn csv_quotes_and_pads() {
        assert_eq!(
            sample().render(TableFormat::Csv, &()),
            "config,ms,note\ndefault,12.5,\"a, b\"\nc1,3,\n"
        );
    }

    #[test]
    fn json_has_every_cell() {
        let v: serde_json::Value =
            serde_json::from_str(&sample().render(TableFormat::Json, &())).expect("json");
        assert_eq!(v["rows"][1], serde_json::json!(["c1", "3", ""]));
        assert_eq!(v["columns"][2], "note");
    }
}
