//! `lupa proxies-bench`: the MethodProxies paper's tables 2, 3 and 5.
//!
//! The Smalltalk driver `MpBenchmark` (smalltalk/Profiling/MethodProxies)
//! instruments every method of each project with each technique and handler,
//! runs the project's workload, uninstalls, and prints one CSV line per run.
//! [`run`] runs it in a VM with typed options ([`ProxiesOptions`], made into
//! the driver's `key=value` arguments in one place); the [`MpRun`] answers
//! the raw runs as a CSV table, the driver's comments, and the tables of
//! mean ± standard deviation.

use crate::LabError;
use crate::cells::mean_sd;
use lupa_prof::table::{Column, Document, Layout, Table};
use lupa_vm::{Vm, VmError};
use std::collections::BTreeMap;

/// What `lupa proxies-bench` asks of the driver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxiesOptions {
    /// Repetitions of every measurement (at least 1).
    pub runs: usize,
    /// Workload scale factor (at least 1).
    pub scale: usize,
    /// Each workload execution timed this many times in a row, the fastest kept.
    pub best_of: usize,
    /// Progress lines from the driver.
    pub progress: bool,
    /// Projects, comma-separated (the driver's default: all).
    pub projects: Option<String>,
    /// Techniques, comma-separated.
    pub techniques: Option<String>,
    /// Handlers, comma-separated.
    pub handlers: Option<String>,
}

/// The projects the driver knows (`MpBenchmark>>projectNamed:`); every one
/// but Havlak by default.
pub const PROJECTS: &[&str] = &[
    "Richards",
    "DeltaBlue",
    "Json",
    "CD",
    "Havlak",
    "Collections",
];
/// The instrumentation techniques (`MpBenchmark>>techniqueNamed:`).
pub const TECHNIQUES: &[&str] = &["trap", "runWithIn", "source", "trapUnsafe"];
/// The handlers (`MpBenchmark>>handlerNamed:`): `emptyHooks` has hooks that
/// do nothing (the paper's no-action tool), `noAction` none at all.
pub const HANDLERS: &[&str] = &[
    "noAction",
    "emptyHooks",
    "counting",
    "callGraph",
    "coverage",
];

/// Check a comma-separated list of names against `known` (what `--projects`,
/// `--techniques` and `--handlers` take): the list as given, or the unknown
/// name with the known ones.
pub fn check_names(list: &str, known: &[&str]) -> Result<String, String> {
    for name in list.split(',') {
        if !known.contains(&name) {
            return Err(format!(
                "unknown name '{name}' (known: {})",
                known.join(", ")
            ));
        }
    }
    Ok(list.to_string())
}

impl ProxiesOptions {
    /// The driver's arguments: `runs=5 scale=1 bestOf=3 progress=true ...`.
    pub fn to_args(&self) -> Vec<String> {
        let mut args = vec![
            format!("runs={}", self.runs.max(1)),
            format!("scale={}", self.scale.max(1)),
            format!("bestOf={}", self.best_of.max(1)),
            format!("progress={}", self.progress),
        ];
        for (k, v) in [
            ("projects", &self.projects),
            ("techniques", &self.techniques),
            ("handlers", &self.handlers),
        ] {
            if let Some(v) = v {
                args.push(format!("{k}={v}"));
            }
        }
        args
    }
}

/// One CSV line of MpBenchmark.
#[derive(Debug, Clone)]
struct Row {
    project: String,
    technique: String,
    handler: String,
    instrument_us: f64,
    execute_us: f64,
    uninstrument_us: f64,
    baseline_us: f64,
    ok: bool,
}

fn parse(line: &str) -> Option<Row> {
    let f: Vec<&str> = line.split(',').collect();
    if f.len() < 11 || f[0] == "project" {
        return None;
    }
    let num = |s: &str| s.trim().parse::<f64>().ok();
    Some(Row {
        project: f[0].to_string(),
        technique: f[1].to_string(),
        handler: f[2].to_string(),
        instrument_us: num(f[6])?,
        execute_us: num(f[7])?,
        uninstrument_us: num(f[8])?,
        baseline_us: num(f[9])?,
        ok: f[10].trim() == "true",
    })
}

/// The columns of the raw runs (one row per run).
const CSV_COLUMNS: [&str; 11] = [
    "project",
    "technique",
    "handler",
    "run",
    "methods",
    "skipped",
    "instrument_us",
    "execute_us",
    "uninstrument_us",
    "baseline_us",
    "ok",
];

/// What the driver printed, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MpRun {
    /// Its output: `#` comment lines and CSV lines.
    pub output: String,
    /// Its exit status.
    pub code: i32,
}

/// Run the driver in `vm` (its output captured).
pub fn run(vm: &mut Vm, o: &ProxiesOptions) -> Result<MpRun, LabError> {
    let mut argv = vec!["MpBenchmark".to_string()];
    argv.extend(o.to_args());
    vm.load_class_by_name("MpBenchmark")?;
    vm.io.capture_output();
    let code = vm.run_main(&argv)?;
    Ok(MpRun {
        output: vm.io.take_captured(),
        code,
    })
}

impl MpRun {
    /// The measurements, one row per run (the driver's CSV lines).
    pub fn csv(&self) -> Table {
        let mut t = Table::new(CSV_COLUMNS.into_iter().map(Column::left).collect());
        for line in self.output.lines().filter(|l| !l.starts_with('#')) {
            if parse(line).is_some() {
                t.push(line.split(','));
            }
        }
        t
    }

    /// The driver's comment lines (configuration, summary), each with its
    /// newline.
    pub fn comments(&self) -> String {
        self.output
            .lines()
            .filter(|l| l.starts_with('#'))
            .map(|c| format!("{c}\n"))
            .collect()
    }

    /// The tables (2, 3 and 5, then the absolute times), and whether every
    /// run verified its workload and its uninstall. A driver that failed or
    /// measured nothing is an error with its output.
    pub fn report(&self) -> Result<(Document, bool), LabError> {
        let out = &self.output;
        if self.code != 0 {
            return Err(LabError::Vm(VmError::Fatal(format!(
                "MpBenchmark exited with status {}:\n{out}",
                self.code
            ))));
        }
        let rows: Vec<Row> = out.lines().filter_map(parse).collect();
        if rows.is_empty() {
            return Err(LabError::Vm(VmError::Fatal(format!(
                "MpBenchmark printed no measurements:\n{out}"
            ))));
        }
        Ok(tables(&rows))
    }
}

type Key = (String, String, String);

/// Render the rows' tables; whether every run was right.
fn tables(rows: &[Row]) -> (Document, bool) {
    let mut groups: BTreeMap<Key, Vec<&Row>> = BTreeMap::new();
    for r in rows {
        groups
            .entry((r.project.clone(), r.handler.clone(), r.technique.clone()))
            .or_default()
            .push(r);
    }
    let techniques: Vec<String> = ordered(rows.iter().map(|r| r.technique.clone()));
    let handlers: Vec<String> = ordered(rows.iter().map(|r| r.handler.clone()));
    let projects: Vec<String> = ordered(rows.iter().map(|r| r.project.clone()));
    let all_ok = rows.iter().all(|r| r.ok);
    let fixed = Layout::Fixed {
        indent: 0,
        header: true,
    };
    let mut d = Document::default();
    let mut table = |title: &str, value: &dyn Fn(&[&Row]) -> Vec<f64>, relative_to_best: bool| {
        let mut columns = vec![
            Column::left("handler").width(12),
            Column::left("project").width(12),
        ];
        columns.extend(
            techniques
                .iter()
                .map(|t| Column::right(t.clone()).width(22)),
        );
        let mut t = Table::new(columns).layout(fixed).titled(title);
        for h in &handlers {
            for p in &projects {
                let cells: Vec<Option<(f64, f64)>> = techniques
                    .iter()
                    .map(|t| {
                        groups
                            .get(&(p.clone(), h.clone(), t.clone()))
                            .map(|rs| mean_sd(&value(rs)))
                    })
                    .collect();
                let best = cells
                    .iter()
                    .flatten()
                    .map(|(m, _)| *m)
                    .fold(f64::INFINITY, f64::min);
                let mut row = vec![h.clone(), p.clone()];
                row.extend(cells.iter().map(|c| match c {
                    Some((m, sd)) if relative_to_best && best > 0.0 => {
                        format!("{:.2}x ± {:.2}", m / best, sd / best)
                    }
                    Some((m, sd)) => format!("{m:.2}x ± {sd:.2}"),
                    None => "-".to_string(),
                }));
                t.push(row);
            }
        }
        d.line("");
        d.table(t);
    };
    table(
        "Table 2 - instrumentation time, relative to the fastest technique (mean ± sd)",
        &|rs| rs.iter().map(|r| r.instrument_us).collect(),
        true,
    );
    table(
        "Table 3 - uninstrumentation time, relative to the fastest technique (mean ± sd)",
        &|rs| rs.iter().map(|r| r.uninstrument_us).collect(),
        true,
    );
    table(
        "Table 5 - execution overhead: instrumented / uninstrumented workload time (mean ± sd)",
        &|rs| {
            rs.iter()
                .map(|r| r.execute_us / r.baseline_us.max(1.0))
                .collect()
        },
        false,
    );
    let mut abs = Table::new(vec![
        Column::left("project").width(12),
        Column::left("handler").width(12),
        Column::left("technique").width(12),
        Column::right("instrument").width(10),
        Column::right("execute").width(12),
        Column::right("uninstrument").width(10),
        Column::right("baseline").width(12),
    ])
    .layout(Layout::Fixed {
        indent: 0,
        header: false,
    })
    .titled("Absolute times, microseconds (mean): instrument / execute / uninstrument / baseline");
    for ((p, h, t), rs) in &groups {
        let m = |f: &dyn Fn(&Row) -> f64| mean_sd(&rs.iter().map(|r| f(r)).collect::<Vec<_>>()).0;
        abs.push([
            p.clone(),
            h.clone(),
            t.clone(),
            format!("{:.0}", m(&|r| r.instrument_us)),
            format!("{:.0}", m(&|r| r.execute_us)),
            format!("{:.0}", m(&|r| r.uninstrument_us)),
            format!("{:.0}", m(&|r| r.baseline_us)),
        ]);
    }
    d.line("");
    d.table(abs);
    if !all_ok {
        d.line("");
        d.line("WARNING: some runs gave wrong results or did not restore the method dictionaries exactly");
    }
    (d, all_ok)
}

fn ordered(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for i in items {
        if !v.contains(&i) {
            v.push(i);
        }
    }
    v
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_are_checked_against_the_drivers() {
        assert_eq!(
            check_names("Richards,Json", PROJECTS),
            Ok("Richards,Json".to_string())
        );
        let e = check_names("Richards,Nope", PROJECTS).expect_err("unknown");
        assert!(e.contains("'Nope'") && e.contains("Collections"), "{e}");
        assert!(check_names("bogus", HANDLERS).is_err());
        // The lists are the Smalltalk driver's.
        let driver = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../smalltalk/Profiling/MethodProxies/MpBenchmark.som"
        ))
        .expect("the driver's source");
        for name in PROJECTS.iter().chain(TECHNIQUES).chain(HANDLERS) {
            assert!(
                driver.contains(&format!("'{name}'")),
                "{name} is not in MpBenchmark.som"
            );
        }
    }

    use super::*;

    const OUTPUT: &str = "# config
project,technique,handler,run,methods,skipped,instrument_us,execute_us,uninstrument_us,baseline_us,ok
Richards,trap,noAction,1,60,0,100,2000,50,1000,true
Richards,source,noAction,1,60,0,300,1500,150,1000,true
# summary
";

    #[test]
    fn options_are_the_drivers_arguments() {
        let o = ProxiesOptions {
            runs: 0,
            scale: 2,
            best_of: 3,
            progress: false,
            projects: Some("Richards".into()),
            techniques: None,
            handlers: Some("counting".into()),
        };
        assert_eq!(
            o.to_args().join(" "),
            "runs=1 scale=2 bestOf=3 progress=false projects=Richards handlers=counting"
        );
    }

    #[test]
    fn runs_become_tables() {
        let r = MpRun {
            output: OUTPUT.to_string(),
            code: 0,
        };
        assert_eq!(r.comments(), "# config\n# summary\n");
        let csv = r.csv().csv();
        assert!(csv.starts_with("project,technique,handler,run,"), "{csv}");
        assert_eq!(csv.lines().count(), 3);
        let (d, ok) = r.report().expect("tables");
        assert!(ok);
        let text = d.to_text();
        assert!(
            text.starts_with("\nTable 2 - instrumentation time"),
            "{text}"
        );
        assert!(
            text.contains(
                "noAction     Richards               1.00x ± 0.00           3.00x ± 0.00\n"
            ),
            "{text}"
        );
        assert!(text.contains("Richards     noAction     trap                100         2000         50         1000\n"), "{text}");
        let failed = MpRun {
            output: OUTPUT.to_string(),
            code: 1,
        };
        assert!(failed.report().is_err());
    }
}
