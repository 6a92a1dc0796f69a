//! `lupa proxies-bench`: the MethodProxies paper's tables 2, 3 and 5.
//!
//! The Smalltalk driver `MpBenchmark` (smalltalk/Profiling/MethodProxies) instruments
//! every method of each project with each technique and handler, runs the
//! project's workload, uninstalls, and prints one CSV line per run. This module
//! runs it in-process, parses the lines and prints mean ± standard deviation.

use crate::units::mean_sd;
use lupa_vm::{Vm, VmError};
use std::collections::BTreeMap;

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

type Key = (String, String, String);

/// The columns of the CSV file (one row per run).
pub(crate) const CSV_HEADER: &str = "project,technique,handler,run,methods,skipped,instrument_us,execute_us,uninstrument_us,baseline_us,ok";

/// Where the configuration and summary of a CSV file go: `FILE.summary.txt`.
pub(crate) fn summary_path(csv: &std::path::Path) -> std::path::PathBuf {
    let mut name = csv.as_os_str().to_owned();
    name.push(".summary.txt");
    std::path::PathBuf::from(name)
}

/// Run the driver with `args` (`key=value` options of MpBenchmark) and render the tables.
pub(crate) fn run(
    vm: &mut Vm,
    args: &[String],
    csv: Option<&std::path::Path>,
) -> Result<(String, bool), VmError> {
    let mut argv = vec!["MpBenchmark".to_string()];
    argv.extend(args.iter().cloned());
    vm.load_class_by_name("MpBenchmark")?;
    vm.io.capture_output();
    let code = vm.run_main(&argv)?;
    let out = vm.io.take_captured();
    if let Some(path) = csv {
        // Plain CSV (the header and the rows); the driver's `#` comment
        // lines (configuration, summary) go to a file of their own beside it.
        let (comments, rows): (Vec<&str>, Vec<&str>) =
            out.lines().partition(|l| l.starts_with('#'));
        let mut table = String::from(CSV_HEADER);
        table.push('\n');
        for r in rows.iter().filter(|l| parse(l).is_some()) {
            table.push_str(r);
            table.push('\n');
        }
        crate::save::save(path, table.as_bytes()).map_err(VmError::Io)?;
        let notes = summary_path(path);
        let text: String = comments.iter().map(|c| format!("{c}\n")).collect();
        crate::save::save(&notes, text.as_bytes()).map_err(VmError::Io)?;
    }
    if code != 0 {
        return Err(VmError::Fatal(format!(
            "MpBenchmark exited with status {code}:\n{out}"
        )));
    }
    let rows: Vec<Row> = out.lines().filter_map(parse).collect();
    if rows.is_empty() {
        return Err(VmError::Fatal(format!(
            "MpBenchmark printed no measurements:\n{out}"
        )));
    }
    let mut groups: BTreeMap<Key, Vec<&Row>> = BTreeMap::new();
    for r in &rows {
        groups
            .entry((r.project.clone(), r.handler.clone(), r.technique.clone()))
            .or_default()
            .push(r);
    }
    let techniques: Vec<String> = ordered(rows.iter().map(|r| r.technique.clone()));
    let handlers: Vec<String> = ordered(rows.iter().map(|r| r.handler.clone()));
    let projects: Vec<String> = ordered(rows.iter().map(|r| r.project.clone()));
    let all_ok = rows.iter().all(|r| r.ok);
    let mut s = String::new();
    let table = |s: &mut String,
                 title: &str,
                 value: &dyn Fn(&[&Row]) -> Vec<f64>,
                 relative_to_best: bool| {
        s.push_str(&format!("\n{title}\n"));
        s.push_str(&format!("{:<12} {:<12}", "handler", "project"));
        for t in &techniques {
            s.push_str(&format!(" {:>22}", t));
        }
        s.push('\n');
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
                s.push_str(&format!("{:<12} {:<12}", h, p));
                for c in &cells {
                    match c {
                        Some((m, sd)) if relative_to_best && best > 0.0 => s.push_str(&format!(
                            " {:>22}",
                            format!("{:.2}x ± {:.2}", m / best, sd / best)
                        )),
                        Some((m, sd)) => {
                            s.push_str(&format!(" {:>22}", format!("{:.2}x ± {:.2}", m, sd)))
                        }
                        None => s.push_str(&format!(" {:>22}", "-")),
                    }
                }
                s.push('\n');
            }
        }
    };
    table(
        &mut s,
        "Table 2 - instrumentation time, relative to the fastest technique (mean ± sd)",
        &|rs| rs.iter().map(|r| r.instrument_us).collect(),
        true,
    );
    table(
        &mut s,
        "Table 3 - uninstrumentation time, relative to the fastest technique (mean ± sd)",
        &|rs| rs.iter().map(|r| r.uninstrument_us).collect(),
        true,
    );
    table(
        &mut s,
        "Table 5 - execution overhead: instrumented / uninstrumented workload time (mean ± sd)",
        &|rs| {
            rs.iter()
                .map(|r| r.execute_us / r.baseline_us.max(1.0))
                .collect()
        },
        false,
    );
    let mut abs = String::new();
    abs.push_str(
        "\nAbsolute times, microseconds (mean): instrument / execute / uninstrument / baseline\n",
    );
    for ((p, h, t), rs) in &groups {
        let m = |f: &dyn Fn(&Row) -> f64| mean_sd(&rs.iter().map(|r| f(r)).collect::<Vec<_>>()).0;
        abs.push_str(&format!(
            "{:<12} {:<12} {:<12} {:>10.0} {:>12.0} {:>10.0} {:>12.0}\n",
            p,
            h,
            t,
            m(&|r| r.instrument_us),
            m(&|r| r.execute_us),
            m(&|r| r.uninstrument_us),
            m(&|r| r.baseline_us)
        ));
    }
    s.push_str(&abs);
    if !all_ok {
        s.push_str("\nWARNING: some runs gave wrong results or did not restore the method dictionaries exactly\n");
    }
    Ok((s, all_ok))
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
