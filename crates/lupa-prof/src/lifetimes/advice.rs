//! Pretenuring advice: the allocation sites of a lifetime profile whose
//! objects outlive the nursery (`long`) or the run (`immortal`), as a small
//! JSON file that `--pretenure FILE` gives back to the VM (Blackburn et al.'s
//! profile-driven pretenuring, TOPLAS 2007).
//!
//! ```json
//! { "format": "lupa-pretenure-advice", "version": 1, "program": "GcLoad 20000",
//!   "sites": [ { "method": "GcLoadTable>>buildRows:records:", "pc": 100, "line": 31,
//!                "classes": ["GcLoadRow"], "advice": "immortal",
//!                "objects": 20038.0, "bytes": 1923648.0 } ] }
//! ```
//!
//! A site is a method's display name and the index of its allocating send,
//! with the classes allocated there; the VM pretenures an allocation when
//! all three match (`lupa_vm::obs::pretenure`).

use serde::{Deserialize, Serialize};
use std::io::{self, Write};

use super::Lifetimes;
use super::analysis::{Analysis, Demography};

/// The `format` field of an advice file.
pub const FORMAT: &str = "lupa-pretenure-advice";
/// The version this code writes and reads.
pub const VERSION: u32 = 1;

/// A pretenuring advice file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Advice {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`].
    pub version: u32,
    /// The profiled program.
    pub program: String,
    /// The sites to pretenure, most bytes first.
    pub sites: Vec<AdviceSite>,
}

/// One allocation site to pretenure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdviceSite {
    /// The allocating method's display name (`Foo>>bar`, `[] in Foo>>bar`).
    pub method: String,
    /// The index of the allocating send in that method.
    pub pc: u32,
    /// Its source line (for people).
    pub line: u32,
    /// The classes allocated there.
    pub classes: Vec<String>,
    /// `long` or `immortal`.
    pub advice: String,
    /// Estimated objects allocated there in the profile.
    pub objects: f64,
    /// Estimated bytes.
    pub bytes: f64,
}

impl Advice {
    /// The advice of a profile: its long-lived and immortal sites.
    pub fn of(profile: &Lifetimes) -> Advice {
        let analysis = Analysis::of(profile);
        let sites = analysis
            .sites
            .iter()
            .filter(|g| g.demography != Demography::Short && !g.method.is_empty())
            .map(|g| AdviceSite {
                method: g.method.clone(),
                pc: g.pc,
                line: g.line,
                classes: g.classes.clone(),
                advice: g.demography.name().to_string(),
                objects: g.objects,
                bytes: g.bytes,
            })
            .collect();
        Advice {
            format: FORMAT.to_string(),
            version: VERSION,
            program: profile.program.clone(),
            sites,
        }
    }

    /// Read an advice file's text; a clear message when it is not one.
    pub fn parse(text: &str) -> Result<Advice, String> {
        let a: Advice = serde_json::from_str(text)
            .map_err(|e| format!("not a pretenuring advice file: {e}"))?;
        if a.format != FORMAT {
            return Err(format!(
                "not a pretenuring advice file: its format is '{}', not '{FORMAT}'",
                a.format
            ));
        }
        if a.version != VERSION {
            return Err(format!(
                "pretenuring advice version {} is not supported (this lupa reads version {VERSION})",
                a.version
            ));
        }
        Ok(a)
    }
}

/// Write the advice of `profile` as JSON.
pub fn write<W: Write + ?Sized>(profile: &Lifetimes, w: &mut W) -> io::Result<()> {
    let text = serde_json::to_string_pretty(&Advice::of(profile)).map_err(io::Error::other)?;
    writeln!(w, "{text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_refuses_other_files_clearly() {
        assert!(Advice::parse("{}").is_err());
        let e = Advice::parse(r#"{"format":"x","version":1,"program":"","sites":[]}"#)
            .expect_err("wrong format");
        assert!(e.contains("format is 'x'"), "{e}");
        let e = Advice::parse(
            r#"{"format":"lupa-pretenure-advice","version":9,"program":"","sites":[]}"#,
        )
        .expect_err("wrong version");
        assert!(e.contains("version 9"), "{e}");
        let ok = Advice::parse(
            r#"{"format":"lupa-pretenure-advice","version":1,"program":"P","sites":[
                {"method":"A>>b","pc":3,"line":7,"classes":["C"],"advice":"long","objects":1.0,"bytes":16.0}]}"#,
        )
        .expect("parses");
        assert_eq!(ok.sites[0].method, "A>>b");
    }
}
