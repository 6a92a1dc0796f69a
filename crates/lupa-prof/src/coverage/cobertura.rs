//! Cobertura XML (coverage-04.dtd), the coverage format CI services (GitLab,
//! Jenkins, Azure) read.
//!
//! Packages are Lupa packages, classes are classes (their file as
//! `filename`), methods are methods (class-side ones named `class>>selector`)
//! with their lines; every class also lists all its lines. Rates are covered
//! lines over lines; Lupa has no branch data (rates 0, counts 0). Lines are as
//! in the LCOV export (measured, or method granularity).

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::render::escape_xml;

use super::{ClassCoverage, Coverage};

fn rate(covered: usize, valid: usize) -> String {
    if valid == 0 {
        "0".to_string()
    } else {
        format!("{:.4}", covered as f64 / valid as f64)
    }
}

/// A class's lines: line -> hits (summed over its methods).
fn class_lines(c: &ClassCoverage) -> BTreeMap<u32, u64> {
    let mut lines = BTreeMap::new();
    for m in &c.methods {
        for l in m.line_hits() {
            let e = lines.entry(l.line).or_insert(0u64);
            *e = e.saturating_add(l.hits);
        }
    }
    lines
}

fn count(lines: &BTreeMap<u32, u64>) -> (usize, usize) {
    (lines.values().filter(|&&h| h > 0).count(), lines.len())
}

/// Write `coverage` as Cobertura XML; `timestamp` in milliseconds since the
/// epoch (Cobertura's unit).
pub fn write<W: Write + ?Sized>(coverage: &Coverage, timestamp: u64, w: &mut W) -> io::Result<()> {
    let all: Vec<BTreeMap<u32, u64>> = coverage.classes.iter().map(class_lines).collect();
    let (covered, valid) = all
        .iter()
        .map(count)
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    writeln!(w, r#"<?xml version="1.0" ?>"#)?;
    writeln!(
        w,
        r#"<!DOCTYPE coverage SYSTEM "http://cobertura.sourceforge.net/xml/coverage-04.dtd">"#
    )?;
    writeln!(
        w,
        r#"<coverage line-rate="{}" branch-rate="0" lines-covered="{covered}" lines-valid="{valid}" branches-covered="0" branches-valid="0" complexity="0" version="lupa {}" timestamp="{timestamp}">"#,
        rate(covered, valid),
        env!("CARGO_PKG_VERSION")
    )?;
    writeln!(w, "  <sources>\n    <source>.</source>\n  </sources>")?;
    writeln!(w, "  <packages>")?;
    let mut packages: Vec<&str> = coverage.packages.iter().map(String::as_str).collect();
    for c in &coverage.classes {
        if !packages.contains(&c.package.as_str()) {
            packages.push(&c.package);
        }
    }
    for p in packages {
        let members: Vec<usize> = (0..coverage.classes.len())
            .filter(|&i| coverage.classes[i].package == p)
            .collect();
        let (pc, pv) = members
            .iter()
            .map(|&i| count(&all[i]))
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        writeln!(
            w,
            r#"    <package name="{}" line-rate="{}" branch-rate="0" complexity="0">"#,
            escape_xml(p),
            rate(pc, pv)
        )?;
        writeln!(w, "      <classes>")?;
        for i in members {
            let c = &coverage.classes[i];
            let file = c
                .file
                .clone()
                .unwrap_or_else(|| format!("{}/{}.som", c.package, c.name));
            let (cc, cv) = count(&all[i]);
            writeln!(
                w,
                r#"        <class name="{}" filename="{}" line-rate="{}" branch-rate="0" complexity="0">"#,
                escape_xml(&c.name),
                escape_xml(&file),
                rate(cc, cv)
            )?;
            writeln!(w, "          <methods>")?;
            for m in &c.methods {
                let hits = m.line_hits();
                let mc = hits.iter().filter(|l| l.hits > 0).count();
                let name = if m.class_side {
                    format!("class>>{}", m.selector)
                } else {
                    m.selector.clone()
                };
                writeln!(
                    w,
                    r#"            <method name="{}" signature="" line-rate="{}" branch-rate="0" complexity="0">"#,
                    escape_xml(&name),
                    rate(mc, hits.len())
                )?;
                writeln!(w, "              <lines>")?;
                for l in hits {
                    writeln!(
                        w,
                        r#"                <line number="{}" hits="{}" branch="false"/>"#,
                        l.line, l.hits
                    )?;
                }
                writeln!(w, "              </lines>")?;
                writeln!(w, "            </method>")?;
            }
            writeln!(w, "          </methods>")?;
            writeln!(w, "          <lines>")?;
            for (line, hits) in &all[i] {
                writeln!(
                    w,
                    r#"            <line number="{line}" hits="{hits}" branch="false"/>"#
                )?;
            }
            writeln!(w, "          </lines>")?;
            writeln!(w, "        </class>")?;
        }
        writeln!(w, "      </classes>")?;
        writeln!(w, "    </package>")?;
    }
    writeln!(w, "  </packages>")?;
    writeln!(w, "</coverage>")
}

/// [`write()`] into a string.
pub fn to_string(coverage: &Coverage, timestamp: u64) -> String {
    let mut buf = Vec::new();
    let _ = write(coverage, timestamp, &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coverage::tests::sample;
    use quick_xml::events::Event;

    /// Parse it back as XML: well formed, the elements nest as the DTD says,
    /// and the totals agree with the lines.
    #[test]
    fn parses_back_with_consistent_totals() {
        let mut c = sample();
        c.classes[0].name = "Shape<&>".into();
        let text = to_string(&c, 0);
        let mut reader = quick_xml::Reader::from_str(&text);
        let mut stack: Vec<String> = Vec::new();
        let (mut class_lines, mut covered) = (0, 0);
        let mut totals = None;
        loop {
            match reader.read_event().expect("well-formed XML") {
                Event::Start(e) | Event::Empty(e)
                    if e.name().as_ref() == b"line"
                        && stack.last().map(String::as_str) == Some("lines")
                        && stack.iter().rev().nth(1).map(String::as_str) == Some("class") =>
                {
                    class_lines += 1;
                    let hits = e
                        .try_get_attribute("hits")
                        .expect("attr")
                        .expect("hits")
                        .unescape_value()
                        .expect("text")
                        .parse::<u64>()
                        .expect("number");
                    covered += usize::from(hits > 0);
                }
                Event::Start(e) => {
                    let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                    if name == "coverage" {
                        let get = |k: &str| {
                            e.try_get_attribute(k)
                                .expect("attr")
                                .expect(k)
                                .unescape_value()
                                .expect("text")
                                .parse::<usize>()
                                .expect("number")
                        };
                        totals = Some((get("lines-covered"), get("lines-valid")));
                    }
                    if name == "class" {
                        let n = e
                            .try_get_attribute("name")
                            .expect("attr")
                            .expect("name")
                            .unescape_value()
                            .expect("text")
                            .into_owned();
                        assert!(n == "Shape<&>" || n == "Square", "{n}");
                    }
                    stack.push(name);
                }
                Event::End(_) => {
                    stack.pop();
                }
                Event::Eof => break,
                _ => {}
            }
        }
        assert!(stack.is_empty());
        assert_eq!(totals, Some((covered, class_lines)), "{text}");
        assert_eq!(class_lines, 1 + 4 + 2 + 2);
    }
}
