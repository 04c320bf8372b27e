//! Every policy field with its unit and meaning, for the Policy page.
//! The canonical explanation of each (why it has its default) is the
//! field's comment in `engine/src/policy.rs` and its row in
//! `docs/advice.md`; these are the one-line versions people edit by. A
//! test checks that this list and the engine's policy have the same
//! fields, so a new field cannot be left off the page.

/// (JSON path, unit, meaning).
pub const FIELDS: &[(&str, &str, &str)] = &[
    (
        "round_trip_weight",
        "points per ms",
        "cost of one ms of RTT on a flow of weight 1",
    ),
    (
        "cross_site_weight",
        "points per MB/s",
        "cost of traffic whose two ends are on different sites",
    ),
    (
        "headroom_weight",
        "points",
        "penalty for a cluster resource at 100 % utilisation (linear from the threshold)",
    ),
    (
        "headroom_threshold",
        "share 0–1",
        "utilisation below which the headroom penalty is zero",
    ),
    (
        "copy_weight_per_gb",
        "points per GB",
        "one-off cost of copying a service's persistent data, subtracted from a move's gain",
    ),
    (
        "min_gain_fraction",
        "share 0–1",
        "bar: a move must gain at least this share of the service's current cost",
    ),
    (
        "min_gain_points",
        "points",
        "bar: a move must gain at least this many points",
    ),
    ("max_moves", "moves", "longest list of recommended moves"),
    (
        "margins.measured",
        "share",
        "margin of error of a measured fact",
    ),
    (
        "margins.reported",
        "share",
        "margin of error of a reported fact",
    ),
    (
        "margins.inferred",
        "share",
        "margin of error of an inferred fact",
    ),
    (
        "margins.guessed",
        "share",
        "margin of error of a guessed fact",
    ),
    (
        "staleness.measured_s",
        "seconds",
        "after this a measurement counts only as reported",
    ),
    (
        "staleness.reported_s",
        "seconds",
        "after this a report counts only as inferred",
    ),
    (
        "staleness.inferred_s",
        "seconds",
        "after this an inference counts only as a guess",
    ),
    (
        "rtt.same_cluster_ms",
        "ms",
        "nominal RTT inside one cluster",
    ),
    (
        "rtt.same_site_ms",
        "ms",
        "nominal RTT between clusters of one site",
    ),
    (
        "rtt.unknown_ms",
        "ms",
        "RTT assumed when nothing is known (pessimistic on purpose)",
    ),
    (
        "unknown_flow.weight",
        "connections",
        "weight assumed for a flow whose weight is unknown (guessed)",
    ),
    (
        "unknown_flow.mb_s",
        "MB/s",
        "traffic assumed for a flow whose volume is unknown (guessed)",
    ),
    (
        "placement.headroom_bonus",
        "points",
        "placement scorer: bonus for free room left on a cluster",
    ),
    (
        "placement.target_utilisation",
        "share 0–1",
        "placement scorer: utilisation above which a cluster is over target",
    ),
    (
        "placement.over_target_cost",
        "points",
        "placement scorer: flat cost of being over target",
    ),
    (
        "placement.over_target_ramp",
        "points per unit",
        "placement scorer: cost per unit of utilisation past the target",
    ),
    (
        "placement.incumbency_bonus",
        "points",
        "placement scorer: bonus for staying where it is",
    ),
    (
        "placement.blast_radius_cost",
        "points per service",
        "placement scorer: cost per service of the same owner already there",
    ),
    (
        "placement.youth_bonus",
        "points",
        "placement scorer: bonus for a newly enrolled cluster",
    ),
    (
        "placement.youth_window_s",
        "seconds",
        "placement scorer: how long a cluster counts as new",
    ),
];

/// The value at a dotted path of a JSON object.
pub fn get<'a>(v: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    path.split('.').try_fold(v, |v, k| v.get(k))
}

/// Set the value at a dotted path (creating objects on the way).
pub fn set(v: &mut serde_json::Value, path: &str, value: serde_json::Value) {
    let mut cur = v;
    let mut parts = path.split('.').peekable();
    while let Some(k) = parts.next() {
        if !cur.is_object() {
            *cur = serde_json::json!({});
        }
        let obj = cur.as_object_mut().expect("made an object");
        if parts.peek().is_none() {
            obj.insert(k.to_string(), value);
            return;
        }
        cur = obj
            .entry(k.to_string())
            .or_insert_with(|| serde_json::json!({}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn leaves(v: &Value, prefix: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    let p = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    leaves(v, &p, out);
                }
            }
            _ => out.push(prefix.to_string()),
        }
    }

    #[test]
    fn every_policy_field_is_listed_once() {
        let v = serde_json::to_value(berth_engine::Policy::default()).unwrap();
        let mut want = Vec::new();
        leaves(&v, "", &mut want);
        want.sort();
        let mut have: Vec<String> = FIELDS.iter().map(|f| f.0.to_string()).collect();
        have.sort();
        assert_eq!(have, want);
    }

    #[test]
    fn set_then_get_at_a_dotted_path() {
        let mut v = serde_json::json!({});
        set(&mut v, "rtt.unknown_ms", serde_json::json!(90.0));
        assert_eq!(get(&v, "rtt.unknown_ms"), Some(&serde_json::json!(90.0)));
    }
}
