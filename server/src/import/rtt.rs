//! Round trips between clusters that a team already measures, read from
//! Prometheus: the Blackbox exporter's ICMP probes, Submariner's gateway
//! latency, Cilium's node health checks, Liqo's gateway pings. Pure: the
//! query is text, its answer a JSON value; `crate::agent` runs it each
//! tick (`berth agent --rtt-from`) and posts the figures as measured
//! `rtt_ms` path facts. `docs/observations.md` has one row per source.

use std::collections::BTreeMap;

use berth_api::FactUpdate;
use serde_json::Value;

use berth_engine::json_shape::describe;

use super::prometheus::{parse_sample_value, Mapping};

/// A source of measured round trips.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RttSource {
    Blackbox,
    Submariner,
    Cilium,
    Liqo,
}

impl RttSource {
    pub const ALL: [RttSource; 4] = [
        RttSource::Blackbox,
        RttSource::Submariner,
        RttSource::Cilium,
        RttSource::Liqo,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RttSource::Blackbox => "blackbox",
            RttSource::Submariner => "submariner",
            RttSource::Cilium => "cilium",
            RttSource::Liqo => "liqo",
        }
    }

    pub fn parse(s: &str) -> Result<RttSource, String> {
        RttSource::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| {
                format!(
                    "--rtt-from {s:?}: expected one of {}",
                    RttSource::ALL.map(RttSource::name).join(", ")
                )
            })
    }

    /// The query: one sample per (from, to) in milliseconds. Each metric
    /// is a gauge of the last round trip; `avg` over the window's samples
    /// and over the series of one pair (several gateways, nodes or probe
    /// modules) smooths one slow ping without hiding a change for long.
    pub fn query(self) -> String {
        match self {
            // ICMP probes from this cluster's exporter; the target (the
            // `instance` label, as the exporter's usual relabelling sets
            // it) is mapped to a cluster with --map-cluster.
            RttSource::Blackbox => "1000 * avg by (instance) (avg_over_time(probe_icmp_duration_seconds{phase=\"rtt\"}[5m]))".into(),
            // The gateway's last RTT to each remote cluster's gateway.
            RttSource::Submariner => "1000 * avg by (local_cluster, remote_cluster) (avg_over_time(submariner_connection_latency_seconds[5m]))".into(),
            // The node-to-node ICMP health check, by source and target
            // cluster: the gauge that still carries the target cluster
            // (Cilium deprecates it in favour of a histogram without
            // one); −1 means no answer and is left out.
            RttSource::Cilium => "1000 * avg by (source_cluster, target_cluster) (avg_over_time(cilium_node_connectivity_latency_seconds{type=\"node\", protocol=\"icmp\"}[5m]) >= 0)".into(),
            // The gateway's UDP ping through the tunnel, in µs, by peer.
            RttSource::Liqo => "avg by (cluster_id) (avg_over_time(liqo_peer_latency_us[5m])) / 1000".into(),
        }
    }

    /// The labels naming the two ends; `None` for the near end: this
    /// agent's own cluster.
    fn ends(self) -> (Option<&'static str>, &'static str) {
        match self {
            RttSource::Blackbox => (None, "instance"),
            RttSource::Submariner => (Some("local_cluster"), "remote_cluster"),
            RttSource::Cilium => (Some("source_cluster"), "target_cluster"),
            RttSource::Liqo => (None, "cluster_id"),
        }
    }
}

/// A round trip read: the two estate clusters, milliseconds, when.
#[derive(Clone, Debug, PartialEq)]
pub struct Rtt {
    pub a: String,
    pub b: String,
    pub ms: f64,
    pub at: i64,
}

/// Read one `/api/v1/query` answer of [`RttSource::query`]. Cluster names
/// go through `mapping`'s cluster map (`--map-cluster`); `own` is the
/// agent's cluster, the near end where the source names none. Pairs of
/// one cluster with itself (a node-to-node check inside it) are left out;
/// what cannot be read is said in `notes`.
pub fn derive(
    source: RttSource,
    answer: &Value,
    own: &str,
    mapping: &Mapping,
) -> Result<(Vec<Rtt>, Vec<String>), String> {
    if answer["status"] != "success" {
        return Err(format!(
            "Prometheus answered {}: {}",
            answer["errorType"].as_str().unwrap_or("an error"),
            answer["error"].as_str().unwrap_or("(no message)")
        ));
    }
    let Some(result) = answer["data"]["result"].as_array() else {
        return Err(format!(
            "expected a vector of samples at /data/result, found {}",
            describe(&answer["data"]["result"])
        ));
    };
    let (near, far) = source.ends();
    let mut notes = vec![];
    // Averaged per pair: a pair read in both directions (Submariner's
    // gateways each report) is one round trip.
    let mut pairs: BTreeMap<(String, String), (f64, usize, i64)> = BTreeMap::new();
    for (i, s) in result.iter().enumerate() {
        let label = |k: &str| s["metric"][k].as_str().filter(|v| !v.is_empty());
        let a = match near {
            None => Some(own.to_string()),
            Some(l) => label(l).map(|c| mapping.cluster_for(c)),
        };
        let b = label(far).map(|c| mapping.cluster_for(c));
        let value = s["value"][1].as_str().and_then(parse_sample_value);
        let at = s["value"][0].as_f64().map(|t| t.floor() as i64);
        let (Some(a), Some(b), Some(ms), Some(at)) = (a, b, value, at) else {
            notes.push(format!(
                "/data/result/{i}: no {} or no value: skipped",
                [near.unwrap_or(""), far]
                    .iter()
                    .filter(|l| !l.is_empty())
                    .copied()
                    .collect::<Vec<_>>()
                    .join(" or ")
            ));
            continue;
        };
        if !ms.is_finite() || ms < 0.0 {
            notes.push(format!("{a} ↔ {b}: {ms} ms is not a round trip: skipped"));
            continue;
        }
        if a == b {
            continue;
        }
        let key = if a < b { (a, b) } else { (b, a) };
        let e = pairs.entry(key).or_insert((0.0, 0, at));
        e.0 += ms;
        e.1 += 1;
        e.2 = e.2.max(at);
    }
    let rtts = pairs
        .into_iter()
        .map(|((a, b), (sum, n, at))| Rtt {
            a,
            b,
            // Microseconds: finer than any WAN round trip varies.
            ms: (sum / n as f64 * 1000.0).round() / 1000.0,
            at,
        })
        .collect();
    Ok((rtts, notes))
}

/// The observations for these round trips: measured path facts.
pub fn observations(rtts: &[Rtt]) -> Vec<FactUpdate> {
    rtts.iter()
        .map(|r| FactUpdate {
            fact: "rtt_ms".into(),
            a: Some(r.a.clone()),
            b: Some(r.b.clone()),
            value: Some(Some(r.ms)),
            class: Some("measured".into()),
            observed_at: Some(berth_engine::estate::format_time(r.at)),
            ..FactUpdate::default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vector(samples: Value) -> Value {
        json!({"status": "success", "data": {"resultType": "vector", "result": samples}})
    }

    #[test]
    fn submariner_pairs_read_both_ways_are_one_round_trip() {
        let mut m = Mapping::default();
        m.add_cluster_arg("cluster-fra=c-fra-1").unwrap();
        let answer = vector(json!([
            {"metric": {"local_cluster": "cluster-fra", "remote_cluster": "c-par-1"}, "value": [1796011500.0, "9.0"]},
            {"metric": {"local_cluster": "c-par-1", "remote_cluster": "cluster-fra"}, "value": [1796011500.0, "10.0"]},
            {"metric": {"local_cluster": "c-par-1"}, "value": [1796011500.0, "3"]},
        ]));
        let (rtts, notes) = derive(RttSource::Submariner, &answer, "c-fra-1", &m).unwrap();
        assert_eq!(
            rtts,
            [Rtt {
                a: "c-fra-1".into(),
                b: "c-par-1".into(),
                ms: 9.5,
                at: 1796011500
            }]
        );
        assert_eq!(notes.len(), 1, "{notes:?}");
    }

    #[test]
    fn liqo_and_blackbox_measure_from_this_cluster() {
        let answer = vector(json!([{"metric": {"cluster_id": "c-lon-1"}, "value": [1.0, "4.25"]}]));
        let (rtts, _) = derive(RttSource::Liqo, &answer, "c-fra-1", &Mapping::default()).unwrap();
        assert_eq!(
            (rtts[0].a.as_str(), rtts[0].b.as_str(), rtts[0].ms),
            ("c-fra-1", "c-lon-1", 4.25)
        );
        assert!(RttSource::parse("ping")
            .unwrap_err()
            .contains("blackbox, submariner"));
        let refused = json!({"status": "error", "errorType": "bad_data", "error": "parse error"});
        assert!(
            derive(RttSource::Cilium, &refused, "c", &Mapping::default())
                .unwrap_err()
                .contains("bad_data")
        );
    }
}
