//! End-state capacity verdicts of each cluster that received services:
//! warnings for capacity that does not exist, can't tell and over target,
//! and the sensitivity of each verdict to the figures it rests on.

use super::*;

/// End-state capacity verdicts of cluster `c`, which received `arrived`:
/// warnings for capacity that does not exist, can't tell and over target,
/// and a sensitivity row per known figure the verdict rests on.
pub(super) fn capacity_verdicts(
    run: &mut Run,
    c: usize,
    arrived: &[usize],
    out: &mut Vec<Sensitivity>,
) {
    let ctx = run.ctx;
    let (e, policy) = (ctx.estate, ctx.policy);
    let cl = &e.clusters[c];
    let load = run.state.load[c];
    let names: Vec<String> = arrived.iter().map(|&s| e.services[s].id.clone()).collect();
    for (fact, total, need, (resource, res), name, unit, word) in [
        (
            &cl.cpu_free,
            cl.cpu_total,
            load.cpu_in,
            ("cpu", Resource::Cpu),
            "cpu_free",
            "cores",
            "CPU",
        ),
        (
            &cl.memory_free_gib,
            cl.memory_total_gib,
            load.memory_in,
            ("memory", Resource::Memory),
            "memory_free_gib",
            "GiB",
            "memory",
        ),
    ] {
        // An arrival with an unknown request: can't tell. (A departure
        // with an unknown request only frees room; leaving it out of
        // `need` errs on the cautious side.)
        if unknown_requests(run, c, arrived, resource, word) {
            continue;
        }
        // Net of what left: a cluster that ends with as much room or more
        // has no verdict resting on its figure (the tolerance allows for
        // the rounding of requests that moved in and out again).
        if need <= 1e-9 * total {
            continue;
        }
        let key = format!("{} {name}", cl.id);
        let Some(free) = fact.value else {
            run.warn(
                WarningCode::CantTell,
                None,
                None,
                Some(c),
                format!(
                    "{} would take {} {unit} more {word} ({}) but its free {word} is unknown",
                    cl.id,
                    num(need),
                    names.join(", ")
                ),
            );
            continue;
        };
        let class = fact.class_at(ctx.now, policy);
        let margin = policy.margin(class);
        // The capacity rule of `constraints::fit`, with the whole net load
        // already moved in and nothing more to add.
        let fit = match constraints::resource_fit(policy, c, res, free, class, 0.0, need) {
            FitCode::DoesNotFit(_) => FitVerdict::DoesNotFit,
            FitCode::CantTell(_) => FitVerdict::CantTell,
            FitCode::Fits => FitVerdict::Fits,
        };
        let figure = format!(
            "{} {unit} free ({} ±{}%)",
            num(free),
            class.as_str(),
            num(margin * 100.0)
        );
        match fit {
            FitVerdict::DoesNotFit => run.warn(
                WarningCode::OverCapacity,
                None,
                None,
                Some(c),
                format!(
                    "{} would take {} {unit} more {word} ({}) but has {figure}: at most {} \
                     {unit} — that capacity does not exist",
                    cl.id,
                    num(need),
                    names.join(", "),
                    num(free * (1.0 + margin))
                ),
            ),
            FitVerdict::CantTell => run.warn(
                WarningCode::CantTell,
                None,
                None,
                Some(c),
                format!(
                    "{} would take {} {unit} more {word} ({}) and has {figure}: between {} and \
                     {} {unit}, so whether it fits can't be told",
                    cl.id,
                    num(need),
                    names.join(", "),
                    num((free * (1.0 - margin)).max(0.0)),
                    num(free * (1.0 + margin))
                ),
            ),
            _ => {
                let before = (total - free) / total;
                let after = (total - free + need) / total;
                let target = policy.placement.target_utilisation;
                if after > target {
                    run.warn(
                        WarningCode::OverTarget,
                        None,
                        None,
                        Some(c),
                        format!(
                            "{} {word} would be at {}% after the scenario ({}% before; target \
                             {}%)",
                            cl.id,
                            num(after * 100.0),
                            num(before * 100.0),
                            num(target * 100.0)
                        ),
                    );
                }
            }
        }
        let fits = need <= free;
        out.push(Sensitivity {
            fact: key,
            cluster: cl.id.clone(),
            resource,
            value: free,
            class,
            margin_pct: margin * 100.0,
            need,
            services: names.clone(),
            verdict: if fits { "fits" } else { "does_not_fit" },
            fit,
            tolerance_pct: (free > 0.0).then(|| (free - need).abs() / free * 100.0),
            direction: if fits { "lower" } else { "higher" },
        });
    }
}

/// An arrival whose request is unknown brings an unknown amount: the
/// verdict can't be told whatever the figure, so there is no sensitivity
/// to report either. Warns and answers `true` when some arrival's
/// `resource` request is unknown.
pub(super) fn unknown_requests(
    run: &mut Run,
    c: usize,
    arrived: &[usize],
    resource: &str,
    word: &str,
) -> bool {
    let e = run.ctx.estate;
    let cl = &e.clusters[c];
    let unknown: Vec<&str> = arrived
        .iter()
        .map(|&s| &e.services[s])
        .filter(|s| match resource {
            "cpu" => s.cpu.is_none(),
            _ => s.memory_gib.is_none(),
        })
        .map(|s| s.id.as_str())
        .collect();
    if !unknown.is_empty() {
        run.warn(
            WarningCode::CantTell,
            None,
            None,
            Some(c),
            format!(
                "{} would take {} whose {word} {}, so whether it fits can't be told",
                cl.id,
                unknown.join(", "),
                if unknown.len() == 1 {
                    "request is unknown"
                } else {
                    "requests are unknown"
                },
            ),
        );
        return true;
    }
    false
}

/// A number for messages: at most two decimals, no trailing zeros.
pub(super) fn num(x: f64) -> String {
    let r = constraints::round2(x);
    let s = format!("{r:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}
