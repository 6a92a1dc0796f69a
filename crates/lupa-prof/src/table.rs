//! Result tables as data: what an experiment (`lupa gc-bench`, `gc-tune`,
//! `calibrate`, `stability`, `proxies-bench`) reports is built as a
//! [`Table`] (a title, columns with their alignment, rows of cells, notes) or
//! a [`Document`] (tables between lines of text), and written by one of three
//! writers: text ([`Table::text`], laid out with comfy-table), CSV
//! ([`Table::csv`], RFC 4180) and JSON ([`Table::json`]). A [`Table`] is a
//! [`Report`] whose formats ([`TableFormat`]) are those three writers.
//!
//! Two text layouts ([`Layout`]): [`Layout::Aligned`], columns as wide as
//! their widest cell, two spaces apart, a rule of dashes under the header,
//! the first column left-aligned unless said otherwise; and
//! [`Layout::Fixed`], `printf`-style, each cell padded to its column's
//! minimum width and one space apart (a longer cell pushes the rest of its
//! row only).
//!
//! Contract: writing never fails on content (only the writer can fail); the
//! text of a table ends with a newline; trailing spaces are trimmed in the
//! aligned layout and kept in the fixed one; CSV and JSON carry every cell,
//! whatever the layout shows; a CSV line has at least one field per column
//! (a short row is padded with empty fields).

use comfy_table::{CellAlignment, ColumnConstraint, Width, presets};
use serde::Serialize;
use std::io::{self, Write};

use crate::report::{DefaultFile, FormatInfo, Report, ReportFormat};

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Align {
    /// Padded on the right.
    Left,
    /// Padded on the left (numbers).
    Right,
}

/// One column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Column {
    /// Its header.
    pub name: String,
    /// How its cells line up.
    pub align: Align,
    /// The least width of its cells in the fixed layout (characters).
    #[serde(skip)]
    pub min_width: usize,
}

impl Column {
    /// A left-aligned column.
    pub fn left(name: impl Into<String>) -> Column {
        Column {
            name: name.into(),
            align: Align::Left,
            min_width: 0,
        }
    }

    /// A right-aligned column.
    pub fn right(name: impl Into<String>) -> Column {
        Column {
            align: Align::Right,
            ..Column::left(name)
        }
    }

    /// The same column, at least `width` characters wide in the fixed layout.
    pub fn width(mut self, width: usize) -> Column {
        self.min_width = width;
        self
    }
}

/// One cell: its text, and the number it shows, if any (JSON writes the
/// number).
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// As the text and CSV writers show it.
    pub text: String,
    /// The value behind the text.
    pub value: Option<f64>,
}

impl Cell {
    /// A cell of text.
    pub fn text(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            value: None,
        }
    }

    /// A number shown as `text`.
    pub fn number(value: f64, text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            value: Some(value),
        }
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell::text(text)
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::text(text)
    }
}

impl Serialize for Cell {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.value {
            Some(v) if v.is_finite() => s.serialize_f64(v),
            _ => s.serialize_str(&self.text),
        }
    }
}

/// How the text writer lays a table out (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// Columns as wide as their widest cell, two spaces apart, a rule under
    /// the header.
    #[default]
    Aligned,
    /// Cells padded to their column's minimum width, one space apart,
    /// `indent` spaces first; the header row only with `header`.
    Fixed {
        /// Spaces before each row.
        indent: usize,
        /// Is the header row shown?
        header: bool,
    },
}

/// A table of results.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Table {
    /// A line before the table.
    pub title: Option<String>,
    /// The columns.
    pub columns: Vec<Column>,
    /// The rows, each a cell per column.
    pub rows: Vec<Vec<Cell>>,
    /// Lines after the table.
    pub notes: Vec<String>,
    /// How the text writer lays it out.
    #[serde(skip)]
    pub layout: Layout,
}

impl Table {
    /// An empty table of these columns, in the aligned layout.
    pub fn new(columns: Vec<Column>) -> Table {
        Table {
            columns,
            ..Table::default()
        }
    }

    /// The same table in another layout.
    pub fn layout(mut self, layout: Layout) -> Table {
        self.layout = layout;
        self
    }

    /// The same table with a title.
    pub fn titled(mut self, title: impl Into<String>) -> Table {
        self.title = Some(title.into());
        self
    }

    /// Add a row.
    pub fn push<C: Into<Cell>>(&mut self, row: impl IntoIterator<Item = C>) {
        self.rows.push(row.into_iter().map(Into::into).collect());
    }

    /// Add a note (a line after the table).
    pub fn note(&mut self, line: impl Into<String>) {
        self.notes.push(line.into());
    }

    /// The text of the table: its title, the rows laid out, its notes.
    pub fn text(&self) -> String {
        let mut out = String::new();
        if let Some(t) = &self.title {
            out.push_str(t);
            out.push('\n');
        }
        match self.layout {
            Layout::Aligned => out.push_str(&self.aligned()),
            Layout::Fixed { indent, header } => out.push_str(&self.fixed(indent, header)),
        }
        for n in &self.notes {
            out.push_str(n);
            out.push('\n');
        }
        out
    }

    /// Write [`Table::text`].
    pub fn write_text(&self, w: &mut dyn Write) -> io::Result<()> {
        w.write_all(self.text().as_bytes())
    }

    /// The header and every row, columns as wide as their widest cell.
    fn aligned(&self) -> String {
        let n = self.columns.len();
        if n == 0 {
            return String::new();
        }
        let chars = |s: &str| s.chars().count();
        let mut widths: Vec<usize> = self.columns.iter().map(|c| chars(&c.name)).collect();
        for row in &self.rows {
            for (w, c) in widths.iter_mut().zip(row) {
                *w = (*w).max(chars(&c.text));
            }
        }
        let mut t = comfy_table::Table::new();
        t.load_preset(presets::NOTHING);
        t.add_row(self.columns.iter().map(|c| c.name.clone()));
        t.add_row(widths.iter().map(|&w| "-".repeat(w)));
        for row in &self.rows {
            t.add_row(row.iter().take(n).map(|c| c.text.clone()));
        }
        for (i, col) in t.column_iter_mut().enumerate() {
            // Two spaces before every column but the first.
            let gap = if i == 0 { 0 } else { 2 };
            let width = widths.get(i).copied().unwrap_or(0).max(1);
            col.set_padding((gap, 0));
            col.set_constraint(ColumnConstraint::Absolute(Width::Fixed(
                u16::try_from(width + usize::from(gap)).unwrap_or(u16::MAX),
            )));
            let align = match self.columns.get(i).map(|c| c.align) {
                Some(Align::Right) => CellAlignment::Right,
                _ => CellAlignment::Left,
            };
            col.set_cell_alignment(align);
        }
        let mut out = t.trim_fmt();
        out.push('\n');
        out
    }

    /// Rows `printf`-style (see [`Layout::Fixed`]).
    fn fixed(&self, indent: usize, header: bool) -> String {
        let mut out = String::new();
        let mut line = |cells: &mut dyn Iterator<Item = &str>| {
            out.push_str(&" ".repeat(indent));
            for (i, text) in cells.enumerate() {
                let (w, align) = self
                    .columns
                    .get(i)
                    .map_or((0, Align::Left), |c| (c.min_width, c.align));
                if i > 0 {
                    out.push(' ');
                }
                match align {
                    Align::Left => out.push_str(&format!("{text:<w$}")),
                    Align::Right => out.push_str(&format!("{text:>w$}")),
                }
            }
            out.push('\n');
        };
        if header {
            line(&mut self.columns.iter().map(|c| c.name.as_str()));
        }
        for row in &self.rows {
            line(&mut row.iter().map(|c| c.text.as_str()));
        }
        out
    }

    /// The table as CSV (RFC 4180): the column names, then one line per row
    /// (cells as the text shows them; a short row padded with empty fields).
    pub fn csv(&self) -> String {
        let mut out = String::new();
        let mut line = |cells: &mut dyn Iterator<Item = &str>| {
            let quoted: Vec<String> = cells.map(csv_field).collect();
            out.push_str(&quoted.join(","));
            out.push('\n');
        };
        line(&mut self.columns.iter().map(|c| c.name.as_str()));
        let n = self.columns.len();
        for row in &self.rows {
            let padding = n.saturating_sub(row.len());
            line(
                &mut row
                    .iter()
                    .map(|c| c.text.as_str())
                    .chain(std::iter::repeat_n("", padding)),
            );
        }
        out
    }

    /// Write [`Table::csv`].
    pub fn write_csv(&self, w: &mut dyn Write) -> io::Result<()> {
        w.write_all(self.csv().as_bytes())
    }

    /// The table as pretty JSON: `title`, `columns` (`name`, `align`),
    /// `rows` (numbers as numbers), `notes`.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".to_string())
    }

    /// Write [`Table::json`] and a newline.
    pub fn write_json(&self, w: &mut dyn Write) -> io::Result<()> {
        writeln!(w, "{}", self.json())
    }
}

/// The formats of a [`Table`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TableFormat {
    /// [`Table::text`].
    Text,
    /// [`Table::csv`].
    Csv,
    /// [`Table::json`].
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
            TableFormat::Json => (
                "json",
                "JSON: title, columns, rows and notes",
                Some(".json"),
            ),
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

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One part of a [`Document`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Block {
    /// Text, written as it is (with its own line breaks).
    Text(String),
    /// A table.
    Table(Table),
}

/// Tables between lines of text: an experiment's whole report.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Document {
    /// The parts, in order.
    pub blocks: Vec<Block>,
}

impl Document {
    /// Add text (its line breaks included).
    pub fn text(&mut self, text: impl Into<String>) {
        self.blocks.push(Block::Text(text.into()));
    }

    /// Add a line of text.
    pub fn line(&mut self, line: impl Into<String>) {
        let mut s = line.into();
        s.push('\n');
        self.blocks.push(Block::Text(s));
    }

    /// Add a table.
    pub fn table(&mut self, table: Table) {
        self.blocks.push(Block::Table(table));
    }

    /// The tables, in order.
    pub fn tables(&self) -> impl Iterator<Item = &Table> {
        self.blocks.iter().filter_map(|b| match b {
            Block::Table(t) => Some(t),
            Block::Text(_) => None,
        })
    }

    /// The whole document as text.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for b in &self.blocks {
            match b {
                Block::Text(t) => out.push_str(t),
                Block::Table(t) => out.push_str(&t.text()),
            }
        }
        out
    }

    /// Write [`Document::to_text`].
    pub fn write_text(&self, w: &mut dyn Write) -> io::Result<()> {
        w.write_all(self.to_text().as_bytes())
    }

    /// The document as pretty JSON (`blocks`: `{"text": ...}` or
    /// `{"table": ...}`).
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new(vec![
            Column::left("config"),
            Column::right("eden"),
            Column::right("ratio"),
        ]);
        t.push(["default", "15MB", "33%"]);
        t.push(["1MB/1MB/2MB/33%", "1MB", "33%"]);
        t
    }

    #[test]
    fn aligned_text() {
        let mut t = sample().titled("Table 1: sizes");
        t.note("done, with a \"note\"");
        insta::assert_snapshot!(t.text(), @r#"
        Table 1: sizes
        config           eden  ratio
        ---------------  ----  -----
        default          15MB    33%
        1MB/1MB/2MB/33%   1MB    33%
        done, with a "note"
        "#);
    }

    #[test]
    fn fixed_text_pads_each_cell_alone() {
        let mut t = Table::new(vec![
            Column::left("program").width(8),
            Column::right("ms").width(6),
        ])
        .layout(Layout::Fixed {
            indent: 2,
            header: true,
        });
        t.push(["a", "1.00"]);
        t.push(["a longer name", "2.00"]);
        assert_eq!(
            t.text(),
            "  program      ms\n  a          1.00\n  a longer name   2.00\n"
        );
    }

    #[test]
    fn csv_and_json() {
        let mut t = sample();
        t.push([
            Cell::text("x,\"y\""),
            Cell::number(2.5, "2.50"),
            Cell::text("-"),
        ]);
        assert_eq!(
            t.csv(),
            "config,eden,ratio\ndefault,15MB,33%\n1MB/1MB/2MB/33%,1MB,33%\n\"x,\"\"y\"\"\",2.50,-\n"
        );
        let v: serde_json::Value = serde_json::from_str(&t.json()).expect("JSON");
        assert_eq!(v["columns"][1]["align"], "right");
        assert_eq!(v["rows"][2][1], 2.5);
        assert_eq!(v["rows"][2][0], "x,\"y\"");
    }

    /// A table is a report: its three formats keep the report contract and
    /// write what the writers write.
    #[test]
    fn a_table_is_a_report() {
        crate::report::api::tests::check_formats::<Table>();
        let t = sample().titled("GC time");
        assert_eq!(t.render(TableFormat::Text, &()), t.text());
        assert_eq!(t.render(TableFormat::Csv, &()), t.csv());
        assert_eq!(t.render(TableFormat::Json, &()), format!("{}\n", t.json()));
    }

    #[test]
    fn text_aligns_numbers_right() {
        let mut t = Table::new(vec![Column::left("config"), Column::right("ms")]).titled("GC time");
        t.push(["default", "12.5"]);
        t.push(["c1", "3"]);
        assert_eq!(
            t.render(TableFormat::Text, &()),
            "GC time\nconfig     ms\n-------  ----\ndefault  12.5\nc1          3\n"
        );
    }

    #[test]
    fn csv_quotes_and_pads() {
        let mut t = Table::new(vec![
            Column::left("config"),
            Column::right("ms"),
            Column::left("note"),
        ]);
        t.push(["default", "12.5", "a, b"]);
        t.push(["c1", "3"]);
        assert_eq!(
            t.render(TableFormat::Csv, &()),
            "config,ms,note\ndefault,12.5,\"a, b\"\nc1,3,\n"
        );
    }

    #[test]
    fn json_has_every_cell() {
        let mut t = sample();
        t.push(["c1", "3"]);
        let v: serde_json::Value =
            serde_json::from_str(&t.render(TableFormat::Json, &())).expect("json");
        assert_eq!(v["rows"][2], serde_json::json!(["c1", "3"]));
        assert_eq!(v["columns"][2]["name"], "ratio");
    }

    #[test]
    fn documents_join_their_blocks() {
        let mut d = Document::default();
        d.line("Summary");
        d.text("\n");
        d.table(sample());
        assert!(d.to_text().starts_with("Summary\n\nconfig "));
        assert_eq!(d.tables().count(), 1);
        let v: serde_json::Value = serde_json::from_str(&d.json()).expect("JSON");
        assert_eq!(v["blocks"][0]["text"], "Summary\n");
        assert_eq!(v["blocks"][2]["table"]["rows"][0][0], "default");
    }
}
