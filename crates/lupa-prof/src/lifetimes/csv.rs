//! The records as CSV, one row per sampled allocation, after a header row
//! whose column names state their units. Fields are quoted when they hold a
//! comma, a quote or a line break (RFC 4180).

use std::io::{self, Write};

use super::Lifetimes;

/// The header row.
pub const HEADER: &str = "class,size_bytes,site_method,site_pc,site_line,birth_bytes,death_bytes,birth_us,death_us,survived_scavenges,survived_full_gcs,censored,probability";

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Write the records of `profile`.
pub fn write<W: Write + ?Sized>(profile: &Lifetimes, w: &mut W) -> io::Result<()> {
    writeln!(w, "{HEADER}")?;
    for r in &profile.records {
        let (method, pc, line) = match profile.site_of(r) {
            Some(s) => (s.method.as_str(), s.pc.to_string(), s.line.to_string()),
            None => ("", String::new(), String::new()),
        };
        writeln!(
            w,
            "{},{},{},{},{},{},{},{},{},{},{},{},{}",
            field(profile.class_of(r)),
            r.size_bytes,
            field(method),
            pc,
            line,
            r.birth_bytes,
            r.death_bytes,
            r.birth_us,
            r.death_us,
            r.survived_scavenges,
            r.survived_full_gcs,
            r.censored,
            r.probability
        )?;
    }
    Ok(())
}
