//! What part of a profile a report shows, and how much of it: the
//! application filter (packages, classes), the ranking's length, the tree's
//! depth and cutoff. `lupa count` and `lupa profile` (and the Smalltalk
//! side's reports) take one [`View`] and turn it into the report's options.
//!
//! Contract: a view with no package and no class keeps the profile
//! unchanged; a kept method's values still include what it causes in the
//! methods left out ([`Profile::filtered`]); the header lines go only above
//! the terminal formats (text, ranking, tree).

use lupa_prof::Profile;
use lupa_prof::report::{DEFAULT_TREE_DEPTH, Format, ReportOptions};

use crate::sampler::Sampled;

/// What part of a profile a report shows.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    /// Only methods of these packages (class directories, e.g.
    /// `Benchmarks/Richards`, and their subdirectories).
    pub packages: Vec<String>,
    /// Only methods of these classes.
    pub classes: Vec<String>,
    /// Methods in the ranking.
    pub top: usize,
    /// Deepest level of the call tree (`None`: all).
    pub depth: Option<usize>,
    /// Tree: leave out subtrees below this fraction of the total (0.01 = 1%).
    pub cutoff: f64,
}

impl Default for View {
    fn default() -> View {
        View {
            packages: Vec::new(),
            classes: Vec::new(),
            top: 25,
            depth: Some(DEFAULT_TREE_DEPTH),
            cutoff: 0.01,
        }
    }
}

impl View {
    /// Does the view keep only some methods?
    fn filters(&self) -> bool {
        !self.packages.is_empty() || !self.classes.is_empty()
    }

    /// Is the method in one of the classes or packages (or a sub-package)?
    fn keeps(&self, m: &lupa_prof::MethodInfo) -> bool {
        self.classes.contains(&m.class)
            || self
                .packages
                .iter()
                .any(|p| m.category == *p || m.category.starts_with(&format!("{p}/")))
    }

    /// The packages and classes of the view that match no method of
    /// `profile`, with the message that says so and names the packages
    /// (or classes) the profile has; `None` when each matches some method.
    /// A filter that matches nothing is a usage error, not an empty report.
    pub fn unmatched(&self, profile: &Profile) -> Option<String> {
        let methods = || profile.methods.iter().filter(|m| !m.is_synthetic_root());
        let in_package = |m: &lupa_prof::MethodInfo, p: &str| {
            m.category == p || m.category.starts_with(&format!("{p}/"))
        };
        let packages: Vec<&str> = self
            .packages
            .iter()
            .filter(|p| !methods().any(|m| in_package(m, p)))
            .map(String::as_str)
            .collect();
        let classes: Vec<&str> = self
            .classes
            .iter()
            .filter(|c| !methods().any(|m| m.class == **c))
            .map(String::as_str)
            .collect();
        let mut problems = Vec::new();
        if !packages.is_empty() {
            let mut known: Vec<&str> = methods().map(|m| m.category.as_str()).collect();
            known.sort_unstable();
            known.dedup();
            problems.push(format!(
                "no method of package {} ran (the packages that ran: {})",
                packages.join(", "),
                known.join(", ")
            ));
        }
        if !classes.is_empty() {
            let mut known: Vec<&str> = methods().map(|m| m.class.as_str()).collect();
            known.sort_unstable();
            known.dedup();
            problems.push(format!(
                "no method of class {} ran (the classes that ran: {})",
                classes.join(", "),
                known.join(", ")
            ));
        }
        (!problems.is_empty()).then(|| problems.join("; "))
    }

    /// The profile with only the methods the view keeps.
    pub fn apply(&self, profile: Profile) -> Profile {
        if !self.filters() {
            return profile;
        }
        profile.filtered(|m| self.keeps(m))
    }

    /// [`View::apply`] for a sampled profile, whose timeline follows.
    pub fn apply_sampled(&self, sampled: Sampled) -> Sampled {
        if !self.filters() {
            return sampled;
        }
        let Sampled { profile, mut stats } = sampled;
        let (profile, map) = profile.filtered_mapped(|m| self.keeps(m));
        stats.timeline.remap(&map);
        Sampled { profile, stats }
    }

    /// The options of a report of `command` in `format`, `header` above it
    /// when the format is a terminal one.
    pub fn report_options(
        &self,
        format: Format,
        command: String,
        header: Vec<String>,
    ) -> ReportOptions {
        ReportOptions {
            header: if format.is_terminal_text() {
                header
            } else {
                Vec::new()
            },
            command,
            top: Some(self.top),
            cutoff: self.cutoff,
            max_depth: self.depth,
            ..ReportOptions::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lupa_prof::{MethodInfo, Metric, ProfileBuilder};

    fn profile() -> Profile {
        let mut b = ProfileBuilder::new(Metric::Sends);
        let app = b.add_method(MethodInfo::new("App", "run").with_category("Apps/Mine"));
        let lib = b.add_method(MethodInfo::new("Array", "do:").with_category("Kernel"));
        b.enter(app);
        b.add_self(1);
        b.enter(lib);
        b.add_self(5);
        b.exit();
        b.exit();
        b.finish()
    }

    #[test]
    fn a_filter_that_matches_nothing_says_what_there_is() {
        let view = View {
            packages: vec!["Apps".to_string(), "Nope".to_string()],
            classes: vec!["Ghost".to_string()],
            ..View::default()
        };
        let message = view.unmatched(&profile()).unwrap_or_default();
        assert_eq!(
            message,
            "no method of package Nope ran (the packages that ran: Apps/Mine, Kernel); \
             no method of class Ghost ran (the classes that ran: App, Array)"
        );
        let fine = View {
            packages: vec!["Apps".to_string()],
            classes: vec!["Array".to_string()],
            ..View::default()
        };
        assert_eq!(fine.unmatched(&profile()), None);
    }

    #[test]
    fn a_view_keeps_the_application_with_what_it_causes() {
        let p = profile();
        assert_eq!(View::default().apply(p.clone()), p);
        let view = View {
            packages: vec!["Apps".into()],
            ..View::default()
        };
        let kept = view.apply(p);
        assert!(kept.method_index("Array>>do:").is_none());
        let app = kept.method_index("App>>run").expect("kept");
        assert_eq!(kept.method_stats()[app.index()].total, 6);
    }

    #[test]
    fn the_header_goes_above_terminal_formats_only() {
        let v = View::default();
        let header = vec!["lupa count Foo".to_string()];
        let text = v.report_options(Format::Text, "c".into(), header.clone());
        assert_eq!(text.header, header);
        assert!(
            v.report_options(Format::Json, "c".into(), header)
                .header
                .is_empty()
        );
    }
}
