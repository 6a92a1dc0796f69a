//! The JSON export: a documented, versioned document (`docs/profile.schema.json`),
//! not a dump of the internal structures.
//!
//! Contract: `schema` is [`SCHEMA`] and changes whenever a field changes
//! meaning or disappears (adding a field keeps it); every node of the
//! calling-context tree appears once, in the process that owns it
//! ([`Profile::processes`]), with its parent (`null` for a process's
//! top-level contexts), its method (an index into `methods`), its self and
//! total values and its activations (`null` when unknown: a sampled
//! profile); synthetic nodes (the root, process
//! labels) are not nodes of the document. Nodes are listed parents first.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use super::options::{ReportOptions, SamplingInfo, TimeEstimate};
use crate::profile::{NodeId, Profile};

/// The schema identifier of this document.
pub const SCHEMA: &str = "lupa-profile/1";

/// The whole document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The Lupa version that wrote it.
    pub lupa_version: String,
    /// The profiled command (`lupa count Foo 10`).
    pub command: String,
    /// What the values count.
    pub metric: MetricDoc,
    /// The grand total of the metric.
    pub total: u64,
    /// The calibrated time estimate of the run, when there is one.
    pub estimate: Option<TimeEstimate>,
    /// How a sampled profile was sampled (absent for other profiles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingInfo>,
    /// The methods and blocks, referenced by index from nodes.
    pub methods: Vec<MethodDoc>,
    /// The processes, main first.
    pub processes: Vec<ProcessDoc>,
}

/// The metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricDoc {
    /// `sends`, `nanoseconds`, `samples`...
    pub name: String,
    /// The unit of every value.
    pub unit: String,
}

/// A method or block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MethodDoc {
    /// `Class>>selector` (or a block's name).
    pub name: String,
    /// The class (empty when not applicable).
    pub class: String,
    /// The selector (empty when not applicable).
    pub selector: String,
    /// The package (directory) of its class.
    pub package: String,
    /// Its source file, if known.
    pub file: Option<String>,
    /// The line of its definition, if known.
    pub line: Option<u32>,
}

/// One Smalltalk process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessDoc {
    /// 0 for the main process.
    pub number: usize,
    /// `main`, `process N`.
    pub name: String,
    /// The process's total.
    pub total: u64,
    /// Value charged to the process outside any method.
    pub outside: u64,
    /// Its calling contexts, parents first.
    pub nodes: Vec<NodeDoc>,
}

/// One calling context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeDoc {
    /// Unique in the document.
    pub id: usize,
    /// The calling context, or `null` at the top of a process.
    pub parent: Option<usize>,
    /// Index into `methods`.
    pub method: usize,
    /// Value charged to the context itself.
    #[serde(rename = "self")]
    pub self_value: u64,
    /// Its value with all its callees.
    pub total: u64,
    /// How many activations it stands for; `null` when the profile does
    /// not know (a sampled profile sees no calls).
    pub activations: Option<u64>,
}

/// Build the document for `profile`.
pub fn to_document(profile: &Profile, options: &ReportOptions) -> Document {
    let totals = profile.node_totals();
    let known = profile.knows_activations();
    let methods = profile
        .methods
        .iter()
        .map(|m| MethodDoc {
            name: m.name.clone(),
            class: m.class.clone(),
            selector: m.selector.clone(),
            package: m.category.clone(),
            file: m.file.clone(),
            line: m.line,
        })
        .collect();
    let processes = profile
        .processes()
        .into_iter()
        .map(|p| {
            let mut nodes = Vec::new();
            let mut stack: Vec<(NodeId, Option<usize>)> =
                p.roots.iter().rev().map(|&r| (r, None)).collect();
            while let Some((n, parent)) = stack.pop() {
                let node = &profile.nodes[n];
                nodes.push(NodeDoc {
                    id: n.index(),
                    parent,
                    method: node.method.index(),
                    self_value: node.self_value,
                    total: totals[n.index()],
                    activations: known.then_some(node.activations),
                });
                stack.extend(node.children.iter().rev().map(|&c| (c, Some(n.index()))));
            }
            let total = p.outside + p.roots.iter().map(|r| totals[r.index()]).sum::<u64>();
            ProcessDoc {
                number: p.number,
                name: p.name,
                total,
                outside: p.outside,
                nodes,
            }
        })
        .collect();
    Document {
        schema: SCHEMA.to_string(),
        lupa_version: env!("CARGO_PKG_VERSION").to_string(),
        command: options.command.clone(),
        metric: MetricDoc {
            name: profile.metric.name().to_lowercase(),
            unit: profile.metric.unit().to_string(),
        },
        total: profile.grand_total(),
        estimate: options.estimate.clone(),
        sampling: options.sampling.clone(),
        methods,
        processes,
    }
}

/// Write the document (pretty JSON, newline-terminated).
pub fn write<W: Write + ?Sized>(
    profile: &Profile,
    options: &ReportOptions,
    w: &mut W,
) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, &to_document(profile, options))?;
    writeln!(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::processes::process_label;
    use crate::profile::tests::sample_profile;
    use crate::report::NativeFunctionDoc;

    fn schema() -> serde_json::Value {
        let text = include_str!("../../../../docs/profile.schema.json");
        serde_json::from_str(text).expect("the schema is JSON")
    }

    /// A small checker for the subset of JSON Schema the schema file uses
    /// (type, required, properties, items, const, enum-free): enough to catch
    /// a document and its schema drifting apart.
    fn check(value: &serde_json::Value, schema: &serde_json::Value, path: &str) {
        use serde_json::Value as V;
        if let Some(c) = schema.get("const") {
            assert_eq!(value, c, "{path}");
        }
        if let Some(t) = schema.get("type") {
            let types: Vec<&str> = match t {
                V::String(s) => vec![s.as_str()],
                V::Array(a) => a.iter().filter_map(|x| x.as_str()).collect(),
                _ => vec![],
            };
            let ok = types.iter().any(|t| match *t {
                "object" => value.is_object(),
                "array" => value.is_array(),
                "string" => value.is_string(),
                "integer" => value.is_u64() || value.is_i64(),
                "number" => value.is_number(),
                "null" => value.is_null(),
                "boolean" => value.is_boolean(),
                _ => false,
            });
            assert!(ok, "{path}: {value} is not {types:?}");
        }
        if let (Some(req), Some(obj)) = (schema.get("required"), value.as_object()) {
            for k in req
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|k| k.as_str())
            {
                assert!(obj.contains_key(k), "{path}: missing {k}");
            }
        }
        if let (Some(props), Some(obj)) = (schema.get("properties"), value.as_object()) {
            for (k, v) in obj {
                let sub = props
                    .get(k)
                    .unwrap_or_else(|| panic!("{path}: {k} is not in the schema"));
                check(v, sub, &format!("{path}.{k}"));
            }
        }
        if let (Some(items), Some(arr)) = (schema.get("items"), value.as_array()) {
            for (i, v) in arr.iter().enumerate() {
                check(v, items, &format!("{path}[{i}]"));
            }
        }
    }

    #[test]
    fn the_document_follows_its_schema() {
        let mut p = sample_profile();
        p.graft(&sample_profile(), &process_label(1));
        let options = ReportOptions {
            command: "lupa count Main".into(),
            estimate: Some(TimeEstimate {
                milliseconds: 1.5,
                lower: Some(1.25),
                upper: Some(1.75),
                confidence: 0.95,
            }),
            sampling: Some(SamplingInfo {
                clock: "cpu".into(),
                requested_hz: Some(1000),
                achieved_hz: Some(998.5),
                seed: Some(1),
                every: None,
                samples: 72,
                lost: 1,
                missed: 0,
                native_value: 50,
                interpreted_value: 20,
                code_zone: vec![NativeFunctionDoc {
                    name: "Main>>run".into(),
                    start: 0x7000_0000,
                    size: 256,
                    live: true,
                    pc_map: vec![[0x7000_0010, 0], [0x7000_0020, 1]],
                }],
            }),
            ..ReportOptions::default()
        };
        let mut buf = Vec::new();
        write(&p, &options, &mut buf).expect("write");
        let value: serde_json::Value = serde_json::from_slice(&buf).expect("JSON");
        check(&value, &schema(), "$");
        assert_eq!(value["sampling"]["requested_hz"], 1000);
        let doc: Document = serde_json::from_value(value).expect("reads back");
        assert_eq!(doc.schema, SCHEMA);
        assert_eq!(doc.processes.len(), 2);
        assert_eq!(doc.processes[1].name, "process 1");
        // Every value is in exactly one process.
        let sum: u64 = doc.processes.iter().map(|p| p.total).sum();
        assert_eq!(sum, doc.total);
        for proc in &doc.processes {
            let selfs: u64 = proc.nodes.iter().map(|n| n.self_value).sum();
            assert_eq!(selfs + proc.outside, proc.total);
            for n in &proc.nodes {
                assert!(n.total >= n.self_value);
                assert!(n.method < doc.methods.len());
            }
        }
    }

    #[test]
    fn snapshot() {
        let options = ReportOptions {
            command: "lupa count Main".into(),
            ..ReportOptions::default()
        };
        let mut buf = Vec::new();
        write(&sample_profile(), &options, &mut buf).expect("write");
        let text = String::from_utf8_lossy(&buf).replace(env!("CARGO_PKG_VERSION"), "<version>");
        insta::assert_snapshot!(text);
    }
}
