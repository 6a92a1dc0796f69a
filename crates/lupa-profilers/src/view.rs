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
