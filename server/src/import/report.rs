//! A merge's report for people.

use std::fmt::Write;

use super::*;

/// A merge's [`Report`] for people.
pub trait ReportText {
    /// The report for people, one fact per line.
    fn text(&self) -> String;
}

impl ReportText for Report {
    fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} import into cluster {}: {} — {} added, {} changed, {} removed, {} unchanged; flows: {} added, {} updated, {} removed",
            self.importer,
            self.cluster,
            counted(self.services.len() as f64, "service", "services"),
            self.added.len(),
            self.changed.len(),
            self.removed.len(),
            self.unchanged,
            self.flows_added.len(),
            self.flows_updated.len(),
            self.flows_removed.len()
        );
        let list = |out: &mut String, title: &str, items: Vec<String>| {
            if !items.is_empty() {
                let _ = writeln!(out, "{title}:");
                for i in items {
                    let _ = writeln!(out, "  {i}");
                }
            }
        };
        if !self.services.is_empty() {
            let known = |f: fn(&ServiceSummary) -> Option<f64>| -> f64 {
                self.services.iter().filter_map(f).sum()
            };
            let unknown = self
                .services
                .iter()
                .filter(|s| s.cpu.is_none() || s.memory_gib.is_none())
                .count();
            let _ = writeln!(
                out,
                "Known requests: {}, {} GiB; {unknown} service{} with an unknown request",
                counted(known(|s| s.cpu), "core", "cores"),
                num(Some(known(|s| s.memory_gib))),
                if unknown == 1 { "" } else { "s" }
            );
            let width = self.services.iter().map(|s| s.id.len()).max().unwrap_or(0);
            let _ = writeln!(
                out,
                "  {:<width$}  {:>8}  {:>10}  {:>8}",
                "service", "cores", "GiB", "data GB"
            );
            for s in &self.services {
                let mut flags = Vec::new();
                if s.pinned {
                    flags.push("pinned");
                }
                if s.local_volumes {
                    flags.push("local volumes");
                }
                let unknown = |f: &str| s.unknown.iter().any(|u| u == f);
                if unknown(LOCAL_VOLUMES) {
                    flags.push("local volumes unknown");
                }
                let data = if unknown(DATA_GB) {
                    None
                } else {
                    Some(s.data_gb)
                };
                let line = format!(
                    "  {:<width$}  {:>8}  {:>10}  {:>8}  {}",
                    s.id,
                    num(s.cpu),
                    num(s.memory_gib),
                    num(data),
                    flags.join(", ")
                );
                let _ = writeln!(out, "{}", line.trim_end());
            }
        }
        list(&mut out, "Added", self.added.clone());
        list(
            &mut out,
            "Changed",
            self.changed
                .iter()
                .map(|c| format!("{} ({})", c.id, c.fields.join(", ")))
                .collect(),
        );
        list(&mut out, "Removed", self.removed.clone());
        list(
            &mut out,
            "Kept as they were (skipped, or the input is incomplete)",
            self.kept.clone(),
        );
        let flows = |v: &[FlowRef]| -> Vec<String> {
            v.iter().map(|f| format!("{} → {}", f.from, f.to)).collect()
        };
        list(&mut out, "Flows added", flows(&self.flows_added));
        list(&mut out, "Flows updated", flows(&self.flows_updated));
        list(&mut out, "Flows removed", flows(&self.flows_removed));
        list(
            &mut out,
            "Notes",
            self.notes
                .iter()
                .map(|n| match &n.service {
                    Some(s) => format!("[{}] {s}: {}", n.code.as_str(), n.message),
                    None => format!("[{}] {}", n.code.as_str(), n.message),
                })
                .collect(),
        );
        list(
            &mut out,
            "Skipped (could not be understood)",
            self.skipped.iter().map(|e| e.to_string()).collect(),
        );
        if !self.ignored.is_empty() {
            let kinds: Vec<String> = self
                .ignored
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            let _ = writeln!(out, "Not imported, by kind: {}", kinds.join(", "));
        }
        out
    }
}

/// A number and its unit, singular for exactly one: "1 core", "0.5
/// cores", "12 services".
pub(super) fn counted(v: f64, one: &str, many: &str) -> String {
    let n = num(Some(v));
    let unit = if n == "1" { one } else { many };
    format!("{n} {unit}")
}

/// A number for the report: at most four decimals (64 MiB is 0.0625 GiB),
/// no trailing zeros;
/// `?` for unknown.
pub(super) fn num(v: Option<f64>) -> String {
    let Some(v) = v else {
        return "?".to_string();
    };
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}
