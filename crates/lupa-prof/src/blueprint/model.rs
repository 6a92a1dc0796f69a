//! The blueprint model ([`Blueprint`]) and its text report ([`to_text`]).
//!
//! Contract: methods are named `Class>>selector` (`Class class>>selector` on
//! the class side, [`BlueprintMethod::name_in`]); a [`Call`] names both ends
//! that way, and only methods of the blueprint (a call a block made is its
//! home method's); times are milliseconds of the sampled run
//! ([`Blueprint::total_ms`]), `percentage` the self time as a share of it.
//! A block's time is its own ([`BlueprintMethod::blocks`], shown inside its
//! home method), not charged to the method that created it: a method's
//! `self_ms` leaves its blocks out, its `time_ms` is the time while it was on
//! the stack (blocks that ran inside it included, those that ran after it
//! returned not). So the percentages of all methods and their blocks add up
//! to about 100 when every method is in the blueprint.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// The version of the JSON document ([`Blueprint::to_json`]).
pub const VERSION: u32 = 1;

/// Which blueprint to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Classes in their inheritance tree, methods as boxes inside them.
    #[default]
    Structural,
    /// The call graph: methods as boxes, calls as arrows, layered top-down.
    Behavioral,
}

/// A time profiling blueprint.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Blueprint {
    /// [`VERSION`].
    pub version: u32,
    /// The command that produced it, e.g. `lupa blueprint Richards`.
    pub command: String,
    /// The packages profiled, in order.
    pub packages: Vec<String>,
    /// Milliseconds of the sampled run.
    pub total_ms: f64,
    /// Samples taken in it.
    pub samples: u64,
    /// The classes (both sides together), in order.
    pub classes: Vec<BlueprintClass>,
    /// Calls between methods of the blueprint, the most frequent first.
    pub calls: Vec<Call>,
}

/// A class and its methods.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BlueprintClass {
    /// The class name.
    pub name: String,
    /// Its package.
    pub package: String,
    /// Its superclass's name (`None` for a root class).
    pub superclass: Option<String>,
    /// Its methods, instance side first.
    pub methods: Vec<BlueprintMethod>,
}

/// A block of a method (shown inside it): its time and executions are its
/// own, not its home method's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BlueprintBlock {
    /// Its name, `[]#2 in Class>>selector`.
    pub name: String,
    /// Activations (exact).
    pub executions: u64,
    /// Milliseconds while it ran: its code and what it called (recursion
    /// counted once).
    pub time_ms: f64,
    /// Milliseconds in its own code.
    pub self_ms: f64,
    /// `self_ms` as a percentage of the run's time.
    pub percentage: f64,
    /// Sends its own code executed (exact).
    pub sends: u64,
}

impl BlueprintBlock {
    /// Did it run (or take time)?
    pub fn ran(&self) -> bool {
        self.executions > 0 || self.time_ms > 0.0
    }
}

/// A method and its metrics.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BlueprintMethod {
    /// The selector.
    pub selector: String,
    /// Is it a class-side method?
    pub class_side: bool,
    /// Activations (exact).
    pub executions: u64,
    /// Milliseconds while it was on the stack: its own code, what it called
    /// and the blocks that ran inside it (recursion counted once); a block of
    /// it that ran after it returned is not in it.
    pub time_ms: f64,
    /// Milliseconds in its own code (its blocks left out: see `blocks`).
    pub self_ms: f64,
    /// `self_ms` as a percentage of the run's time.
    pub percentage: f64,
    /// Sends its own code executed (exact; its blocks' are theirs, in
    /// `blocks`).
    pub sends: u64,
    /// Called at least twice, every call answering the same object (not its
    /// receiver): a caching candidate, drawn gray.
    pub same_answer: bool,
    /// Called, and no call changed a field of its receiver.
    pub side_effect_free: bool,
    /// Its blocks that ran, the most time first (their time is theirs, not
    /// the method's).
    #[serde(default)]
    pub blocks: Vec<BlueprintBlock>,
}

/// Calls of one method by another.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Call {
    /// The calling method, `Class>>selector`.
    pub caller: String,
    /// The called method.
    pub callee: String,
    /// How many times (exact).
    pub count: u64,
}

impl BlueprintMethod {
    /// Its display name in `class`: `Foo>>bar` or `Foo class>>bar`.
    pub fn name_in(&self, class: &str) -> String {
        if self.class_side {
            format!("{class} class>>{}", self.selector)
        } else {
            format!("{class}>>{}", self.selector)
        }
    }

    /// Did it run (or take time), or did one of its blocks?
    pub fn ran(&self) -> bool {
        self.executions > 0 || self.time_ms > 0.0 || self.blocks.iter().any(BlueprintBlock::ran)
    }

    /// A caching candidate worth a look (drawn gray): every call answered
    /// the same object, and its own code sends messages, which a cached
    /// answer would save. A constant getter (`^'EUR'`, `^3`) answers the
    /// same object by definition and sends nothing: it is not one.
    pub fn caching_candidate(&self) -> bool {
        self.same_answer && self.sends > 0
    }
}

impl Blueprint {
    /// Every method with its class.
    pub fn methods(&self) -> impl Iterator<Item = (&BlueprintClass, &BlueprintMethod)> {
        self.classes
            .iter()
            .flat_map(|c| c.methods.iter().map(move |m| (c, m)))
    }

    /// The largest time and number of executions of its methods and their
    /// blocks (the scales of the pictures).
    pub fn maxima(&self) -> (f64, u64) {
        self.methods().fold((0.0f64, 0u64), |(t, e), (_, m)| {
            m.blocks
                .iter()
                .fold((t.max(m.time_ms), e.max(m.executions)), |(t, e), b| {
                    (t.max(b.time_ms), e.max(b.executions))
                })
        })
    }

    /// The JSON document (pretty), `version` first.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// The text report: a summary, the methods that ran by time (with their
/// flags: `G` same answer, `S` likely side-effect free), each followed by its
/// blocks that ran (indented, their own time), then the calls.
pub fn to_text(bp: &Blueprint) -> String {
    let mut ran: Vec<(String, &BlueprintMethod)> = bp
        .methods()
        .filter(|(_, m)| m.ran())
        .map(|(c, m)| (m.name_in(&c.name), m))
        .collect();
    ran.sort_by(|(na, a), (nb, b)| {
        b.time_ms
            .total_cmp(&a.time_ms)
            .then(b.executions.cmp(&a.executions))
            .then(na.cmp(nb))
    });
    let methods = bp.methods().count();
    let same = ran.iter().filter(|(_, m)| m.same_answer).count();
    // Caching candidates, the most to save first: the time of their calls,
    // then their sends.
    let mut candidates: Vec<&(String, &BlueprintMethod)> =
        ran.iter().filter(|(_, m)| m.caching_candidate()).collect();
    candidates.sort_by(|(na, a), (nb, b)| {
        b.time_ms
            .total_cmp(&a.time_ms)
            .then(b.sends.cmp(&a.sends))
            .then(na.cmp(nb))
    });
    let mut out = String::new();
    let _ = writeln!(out, "{}", bp.command);
    let _ = writeln!(
        out,
        "Time profiling blueprint: {} of {methods} methods ran; {:.1} ms sampled ({} samples); \
         {same} always answered the same object, {} of them caching candidates",
        ran.len(),
        bp.total_ms,
        bp.samples,
        candidates.len()
    );
    let _ = writeln!(
        out,
        "flags: G every call answered the same object (gray when it sends messages: cache it?), S no call changed its receiver; \
         a block is listed, indented, under its home method: its time is its own, not in its home's self time"
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:>10} {:>10} {:>7} {:>11} {:>11} {:<5} method",
        "time ms", "self ms", "self %", "executions", "sends", "flags"
    );
    for (name, m) in &ran {
        let flags = format!(
            "{}{}",
            if m.same_answer { "G" } else { "" },
            if m.side_effect_free { "S" } else { "" }
        );
        let _ = writeln!(
            out,
            "{:>10.2} {:>10.2} {:>6.1}% {:>11} {:>11} {:<5} {name}",
            m.time_ms, m.self_ms, m.percentage, m.executions, m.sends, flags
        );
        // Its blocks, inside it: their time is theirs.
        for b in m.blocks.iter().filter(|b| b.ran()) {
            let _ = writeln!(
                out,
                "{:>10.2} {:>10.2} {:>6.1}% {:>11} {:>11} {:<5}   {}",
                b.time_ms, b.self_ms, b.percentage, b.executions, b.sends, "", b.name
            );
        }
    }
    let _ = writeln!(out);
    if candidates.is_empty() {
        let _ = writeln!(
            out,
            "Caching candidates: none (no method that always answered the same object sends messages)"
        );
    } else {
        let _ = writeln!(
            out,
            "Caching candidates (every call answered the same object; a cached answer saves their time and sends; \
             constant getters left out), the most to save first:"
        );
        let _ = writeln!(
            out,
            "{:>10} {:>11} {:>11} method",
            "time ms", "sends", "executions"
        );
        for (name, m) in &candidates {
            let _ = writeln!(
                out,
                "{:>10.2} {:>11} {:>11} {name}",
                m.time_ms, m.sends, m.executions
            );
        }
    }
    if !bp.calls.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "Calls (caller -> callee: count), the most frequent first:"
        );
        for c in &bp.calls {
            let _ = writeln!(out, "{:>11}  {} -> {}", c.count, c.caller, c.callee);
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Shape and its subclass Square; `Square>>area` calls `Square>>side`
    /// (both answer the same object every time: `area` sends messages, a
    /// caching candidate; `side` sends none, a constant getter);
    /// `Shape>>unused` never ran.
    pub(crate) fn sample() -> Blueprint {
        let m = |sel: &str, execs: u64, time: f64, own: f64, sends: u64| BlueprintMethod {
            selector: sel.to_string(),
            executions: execs,
            time_ms: time,
            self_ms: own,
            percentage: own / 10.0 * 100.0,
            sends,
            ..BlueprintMethod::default()
        };
        Blueprint {
            version: VERSION,
            command: "lupa blueprint Main".into(),
            packages: vec!["Shapes".into()],
            total_ms: 10.0,
            samples: 10,
            classes: vec![
                BlueprintClass {
                    name: "Shape".into(),
                    package: "Shapes".into(),
                    superclass: Some("Object".into()),
                    methods: vec![m("describe", 2, 6.0, 1.0, 8), m("unused", 0, 0.0, 0.0, 0)],
                },
                BlueprintClass {
                    name: "Square".into(),
                    package: "Shapes".into(),
                    superclass: Some("Shape".into()),
                    methods: vec![
                        BlueprintMethod {
                            same_answer: true,
                            ..m("area", 2, 5.0, 3.0, 6)
                        },
                        BlueprintMethod {
                            same_answer: true,
                            side_effect_free: true,
                            ..m("side", 4, 2.0, 2.0, 0)
                        },
                        BlueprintMethod {
                            class_side: true,
                            ..m("new", 1, 1.0, 1.0, 2)
                        },
                    ],
                },
            ],
            calls: vec![
                Call {
                    caller: "Square>>area".into(),
                    callee: "Square>>side".into(),
                    count: 4,
                },
                Call {
                    caller: "Shape>>describe".into(),
                    callee: "Square>>area".into(),
                    count: 2,
                },
            ],
        }
    }

    #[test]
    fn text_ranks_by_time_with_flags_and_calls() {
        let text = to_text(&sample());
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].contains("4 of 5 methods ran"), "{text}");
        assert!(lines[5].ends_with("Shape>>describe"), "{text}");
        assert!(
            lines[7].contains(" GS ") && lines[7].ends_with("Square>>side"),
            "{text}"
        );
        assert!(lines[8].ends_with("Square class>>new"), "{text}");
        assert!(!text.contains("unused"), "{text}");
        assert!(
            lines[1].contains("2 always answered the same object, 1 of them caching candidates"),
            "{text}"
        );
        // The candidates: area (it sends), not side (a constant getter).
        let at = text.find("Caching candidates (").expect("the candidates");
        let section: Vec<&str> = text[at..].lines().take_while(|l| !l.is_empty()).collect();
        assert_eq!(section.len(), 3, "{text}");
        assert!(section[2].ends_with("Square>>area"), "{text}");
        assert!(
            text.contains("          4  Square>>area -> Square>>side"),
            "{text}"
        );
    }

    /// `Shape>>handler` only makes a block that ran 50 times later: the
    /// block's time is its own, listed under its home method.
    pub(crate) fn with_block() -> Blueprint {
        let mut bp = sample();
        bp.classes[0].methods.push(BlueprintMethod {
            selector: "handler".into(),
            executions: 1,
            time_ms: 0.1,
            self_ms: 0.1,
            percentage: 1.0,
            sends: 0,
            blocks: vec![BlueprintBlock {
                name: "[] in Shape>>handler".into(),
                executions: 50,
                time_ms: 8.0,
                self_ms: 3.0,
                percentage: 30.0,
                sends: 100,
            }],
            ..BlueprintMethod::default()
        });
        bp
    }

    #[test]
    fn text_lists_blocks_under_their_home_with_their_own_time() {
        let text = to_text(&with_block());
        let lines: Vec<&str> = text.lines().collect();
        let home = lines
            .iter()
            .position(|l| l.ends_with(" Shape>>handler"))
            .expect("the home method");
        assert!(
            lines[home].trim_start().starts_with("0.10       0.10"),
            "{text}"
        );
        let block = lines[home + 1];
        assert!(block.ends_with("   [] in Shape>>handler"), "{text}");
        assert!(
            block.trim_start().starts_with("8.00       3.00   30.0%"),
            "{text}"
        );
        assert!(block.contains("          50         100"), "{text}");
        assert_eq!(with_block().maxima(), (8.0, 50));
    }

    #[test]
    fn json_round_trips_with_its_version_first() {
        let bp = sample();
        let text = bp.to_json();
        assert!(
            text.trim_start().starts_with("{\n  \"version\": 1"),
            "{text}"
        );
        let back: Blueprint = serde_json::from_str(&text).expect("reads back");
        assert_eq!(back, bp);
        assert_eq!(bp.maxima(), (6.0, 4));
    }
}
