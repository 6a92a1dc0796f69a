//! The ranking of methods by total value, as a text table or JSON.

use comfy_table::{CellAlignment, Table, presets};
use serde::{Deserialize, Serialize};

use super::{group_digits, percent, shown as show};
use crate::profile::{MethodId, Profile};

/// One method of a [`Ranking`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankingEntry {
    /// Position, 1-based.
    pub rank: usize,
    /// Index into the profile's methods.
    pub method: MethodId,
    /// `Class>>selector`.
    pub name: String,
    /// Class name.
    pub class: String,
    /// Selector.
    pub selector: String,
    /// Category (package).
    pub category: String,
    /// Activations over all contexts.
    pub activations: u64,
    /// Self value over all contexts.
    pub self_value: u64,
    /// Inclusive value (recursion counted once).
    pub total: u64,
    /// `self_value` in percent of the grand total (4 decimals).
    pub self_percent: f64,
    /// `total` in percent of the grand total (4 decimals).
    pub total_percent: f64,
}

/// Methods ranked by total value (descending), then name — the list a profiler
/// user reads first, and the input of
/// [`ranking_instability`](crate::stats::ranking_instability).
///
/// The synthetic root is not ranked; methods that occur in no context are left
/// out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ranking {
    /// Metric display name (`"Sends"`).
    pub metric: String,
    /// Metric unit (`"sends"`).
    pub unit: String,
    /// Grand total of the profile.
    pub grand_total: u64,
    /// The ranked methods.
    pub entries: Vec<RankingEntry>,
}

impl Ranking {
    /// Rank the methods of `profile`.
    pub fn of(profile: &Profile) -> Ranking {
        let totals = profile.node_totals();
        let grand_total = profile
            .roots()
            .map(|r| totals[r.index()])
            .fold(0u64, u64::saturating_add);
        let stats = profile.method_stats_with(&totals);
        let used = profile.used_methods();
        let mut idx: Vec<usize> = (0..profile.methods.len())
            .filter(|&m| used[m] && !profile.methods[m].is_synthetic_root())
            .collect();
        idx.sort_by(|&a, &b| {
            stats[b]
                .total
                .cmp(&stats[a].total)
                .then_with(|| profile.methods[a].name.cmp(&profile.methods[b].name))
                .then(a.cmp(&b))
        });
        let entries = idx
            .into_iter()
            .enumerate()
            .map(|(i, m)| {
                let info = &profile.methods[m];
                let s = stats[m];
                RankingEntry {
                    rank: i + 1,
                    method: MethodId(m),
                    name: info.name.clone(),
                    class: info.class.clone(),
                    selector: info.selector.clone(),
                    category: info.category.clone(),
                    activations: s.activations,
                    self_value: s.self_value,
                    total: s.total,
                    self_percent: round4(percent(s.self_value, grand_total)),
                    total_percent: round4(percent(s.total, grand_total)),
                }
            })
            .collect();
        Ranking {
            metric: profile.metric.name().to_string(),
            unit: profile.metric.unit().to_string(),
            grand_total,
            entries,
        }
    }

    /// The method names, best first.
    pub fn names(&self) -> Vec<String> {
        self.entries.iter().map(|e| e.name.clone()).collect()
    }

    /// A text table of the first `limit` methods (all if `None`), with a last
    /// line counting the ones left out. The activations column is left out
    /// when no method has any (a sampling profiler does not see calls).
    pub fn to_table(&self, limit: Option<usize>) -> String {
        let show_calls = self.entries.iter().any(|e| e.activations > 0);
        let mut table = Table::new();
        table.load_preset(presets::ASCII_MARKDOWN);
        let mut header = vec![
            "#".to_string(),
            "Method".to_string(),
            format!("Total ({})", show(&self.unit, 0).1),
            "Total %".to_string(),
            format!("Self ({})", show(&self.unit, 0).1),
            "Self %".to_string(),
        ];
        if show_calls {
            header.push("Activations".to_string());
        }
        table.set_header(header);
        let shown = limit.unwrap_or(usize::MAX).min(self.entries.len());
        for e in &self.entries[..shown] {
            let mut row = vec![
                e.rank.to_string(),
                e.name.clone(),
                show(&self.unit, e.total).0,
                format!("{:.2}", e.total_percent),
                show(&self.unit, e.self_value).0,
                format!("{:.2}", e.self_percent),
            ];
            if show_calls {
                row.push(group_digits(e.activations));
            }
            table.add_row(row);
        }
        for col in [0, 2, 3, 4, 5, 6] {
            if let Some(c) = table.column_mut(col) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        let mut out = table.to_string();
        out.push('\n');
        if shown < self.entries.len() {
            out.push_str(&format!(
                "... {} more methods\n",
                self.entries.len() - shown
            ));
        }
        out
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> serde_json::Result<String> {
        serde_json::to_string_pretty(self)
    }
}

/// Round to 4 decimals (keeps the JSON short and stable).
fn round4(v: f64) -> f64 {
    (v * 10_000.0).round() / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::tests::sample_profile;

    #[test]
    fn ranks_by_total_then_name() {
        let r = Ranking::of(&sample_profile());
        assert_eq!(r.grand_total, 72);
        assert_eq!(r.names(), ["Main>>main", "Main>>a", "Lib>>b", "Main>>c"]);
        assert_eq!(r.entries[2].total, 35);
        assert_eq!(r.entries[2].activations, 3);
    }

    #[test]
    fn table_snapshot() {
        let r = Ranking::of(&sample_profile());
        insta::assert_snapshot!(r.to_table(None));
        insta::assert_snapshot!("table_limited", r.to_table(Some(2)));
    }

    #[test]
    fn json_snapshot_and_round_trip() {
        let r = Ranking::of(&sample_profile());
        let s = r.to_json().expect("json");
        insta::assert_snapshot!(s);
        let back: Ranking = serde_json::from_str(&s).expect("parse");
        assert_eq!(back.names(), r.names());
        for (a, b) in back.entries.iter().zip(&r.entries) {
            assert_eq!(
                (a.total, a.self_value, a.activations),
                (b.total, b.self_value, b.activations)
            );
            assert!((a.total_percent - b.total_percent).abs() < 1e-9);
        }
    }
}
