//! The options of the profile reports (`lupa count`, `lupa profile`): what
//! part of the profile they show ([`ViewArgs`], a `lupa_profilers::view::View`)
//! and the flame graph's look ([`FlameArgs`]); and their delivery.

use clap::Args;
use lupa_prof::Profile;
use lupa_prof::report::{DEFAULT_TREE_DEPTH, ReportOptions};
use lupa_profilers::sources;
use lupa_profilers::view::View;
use lupa_vm::{Vm, VmError};

use crate::report_args::{Destination, ReportArgs};

/// What part of a profile a profiler command reports.
#[derive(Args, Debug)]
pub(crate) struct ViewArgs {
    /// Report only methods of these packages (class directories, e.g. Benchmarks/Richards);
    /// their values still include what they cause in other packages.
    #[arg(long = "package", value_name = "PACKAGE")]
    packages: Vec<String>,
    /// Report only methods of these classes (same folding as --package).
    #[arg(long = "class", value_name = "CLASS")]
    classes: Vec<String>,
    /// Number of methods in the ranking.
    #[arg(long, default_value_t = 25)]
    pub(crate) top: usize,
    /// Deepest level of the call tree printed by the text and tree reports
    /// (deeper contexts are summarised in one line); 0 for no limit.
    #[arg(long, default_value_t = DEFAULT_TREE_DEPTH)]
    depth: usize,
    /// Tree: leave out subtrees below this percentage of the total.
    #[arg(long, default_value_t = 1.0)]
    cutoff: f64,
}

impl ViewArgs {
    /// The view these options ask for.
    pub(crate) fn view(&self) -> View {
        View {
            packages: self.packages.clone(),
            classes: self.classes.clone(),
            top: self.top,
            depth: (self.depth > 0).then_some(self.depth),
            cutoff: self.cutoff / 100.0,
        }
    }
}

/// The flame graph's options (the svg and html formats).
#[derive(Args, Debug)]
pub(crate) struct FlameArgs {
    /// Flame graph (svg): its title (default: the command and the metric).
    #[arg(long)]
    title: Option<String>,
    /// Flame graph (svg): its width in pixels (default 1200).
    #[arg(long, value_name = "PIXELS")]
    width: Option<f64>,
    /// Flame graph (svg): leave out frames narrower than this many pixels (default 0.1).
    #[arg(long, value_name = "PIXELS")]
    min_width: Option<f64>,
}

impl FlameArgs {
    /// Set them in a report's options.
    fn apply(&self, options: &mut ReportOptions) {
        options.title.clone_from(&self.title);
        options.width = self.width;
        options.min_width = self.min_width;
    }
}

/// Write a profile report to `dest` with the flame graph's options, the
/// bundled sources beside a callgrind file, after the program's output.
pub(crate) fn deliver_profile(
    vm: &mut Vm,
    report: &ReportArgs<Profile>,
    flame: &FlameArgs,
    dest: &Destination,
    mut profile: Profile,
    mut options: ReportOptions,
) -> Result<(), VmError> {
    flame.apply(&mut options);
    if let Some(path) = dest.file() {
        sources::export_beside(vm, &mut profile, report.format, path)?;
    }
    vm.io.flush()?;
    report.deliver(&profile, &options, dest)
}
