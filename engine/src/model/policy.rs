//! The policy: every weight, bar and default the engine uses, in one place.
//!
//! Every field is a row of [`FIELDS`] (path, group, default, range, unit,
//! meaning), which validation, the Policy page and the table in
//! `docs/advice.md` §8 (generated, checked by `tests/policy_table.rs`) all
//! read; the why of each default is its struct field's comment.
//!
//! A policy file may give any subset of fields; the rest keep their
//! defaults. Unknown fields and out-of-range values are refused with the
//! field named, so a typo never silently falls back to a default.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::class::Class;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// Points per ms of RTT on a flow of weight 1. 1.0 makes the point the
    /// physical unit of SPEC §1: one ms on a connection in constant use.
    pub round_trip_weight: f64,
    /// Points per MB/s of traffic whose two ends sit on different sites.
    /// 8 puts 1 MB/s of cross-site traffic on a par with 8 ms on a busy
    /// connection: inter-site bandwidth is billed and shared, so a service
    /// streaming tens of MB/s across sites should be worth a move even when
    /// its latency is tolerable.
    pub cross_site_weight: f64,
    /// Points for a cluster resource projected at 100 % utilisation; the
    /// penalty is linear from `headroom_threshold` (0 points) to 100 %
    /// (this many points) and keeps rising past 100 %. 15 is roughly what
    /// a medium flow (weight 1–2) pays for a cross-region hop, so filling a
    /// cluster to the brim needs a real latency win to be worth it.
    pub headroom_weight: f64,
    /// Utilisation (0–1) below which the headroom penalty is exactly zero.
    /// 0.8 leaves the usual 20 % for bursts, rollouts and node loss.
    pub headroom_threshold: f64,
    /// Points per GB of persistent data a move must copy, counted once and
    /// subtracted from that move's gain. 0.5/GB makes a 100 GB database need
    /// a 50-point steady-state gain: copying is slow, risky and billed once.
    pub copy_weight_per_gb: f64,
    /// A move must gain at least this share of the service's current cost.
    /// 15 % keeps the engine from churning for noise-level improvements.
    pub min_gain_fraction: f64,
    /// ...and at least this many points. 2 points is 2 ms on one busy
    /// connection: below that no one would notice the move.
    pub min_gain_points: f64,
    /// Longest sequence of recommended moves. 40 is more than a team can
    /// review in one sitting; the rest is better re-evaluated after.
    pub max_moves: usize,
    /// Relative margin of error per confidence class (SPEC §2).
    pub margins: Margins,
    /// Staleness windows (SPEC §2), seconds, cumulative from observation.
    pub staleness: Staleness,
    /// Nominal RTTs of the evidence ladder (SPEC §3).
    pub rtt: RttDefaults,
    /// Assumptions for flow facts whose value is unknown. They are used so
    /// that a flow is never a hidden zero, and carried as `guessed`.
    pub unknown_flow: UnknownFlow,
    /// Weights of the single-service placement scorer (SPEC §10).
    pub placement: PlacementWeights,
    /// Prices of traffic between clusters by link class, to read the
    /// cross-site traffic as money (`crate::money`). A display only: the
    /// cost weighs traffic through `cross_site_weight`. Not in
    /// [`Policy::digest`]: no result that names the digest reads them.
    pub transfer_price: TransferPrice,
    /// How far back, seconds, an applied move is matched to the advice
    /// that recommended it (`docs/outcomes.md`). 14 days: teams plan a
    /// move in one sprint and carry it out in the next; a recommendation
    /// older than two weeks was made on facts that have since aged out of
    /// every class but guessed, so crediting it would hold the advice to a
    /// prediction it no longer stood behind. Not in [`Policy::digest`]:
    /// no result that names the digest depends on it.
    pub outcome_lookback_s: i64,
    /// How long, seconds, after a move its outcome waits before it is
    /// judged. 1 hour: rollouts, connection pools and caches take minutes
    /// to settle, and the mesh's rates are windows of minutes (the agent's
    /// default is 5), so a figure from the first minutes measures the
    /// migration, not the placement. Not in [`Policy::digest`], like
    /// `outcome_lookback_s`. These two stay the struct's last fields (the
    /// digest leaves them out by cutting them off the end).
    pub outcome_settle_s: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct Margins {
    /// Agents and meshes measure directly: small error.
    pub measured: f64,
    /// A person or a file said so: plausible but unchecked.
    pub reported: f64,
    /// Derived from other facts (estimates, old reports).
    pub inferred: f64,
    /// ±100 %: could be anything from nothing to twice the value.
    pub guessed: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct Staleness {
    /// Capacity and RTT move within minutes: 15 min of silence from an
    /// agent makes a measurement only as good as a report.
    pub measured_s: i64,
    /// A report a day old is only an inference about today.
    pub reported_s: i64,
    /// An inference a week old is a guess.
    pub inferred_s: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct RttDefaults {
    /// Pod to pod inside one cluster: a few hops of one data-centre fabric.
    pub same_cluster_ms: f64,
    /// Between clusters of one site: same campus, a few more switches.
    pub same_site_ms: f64,
    /// Nothing known: roughly an intercontinental hop, pessimistic on
    /// purpose so that unknown distance never looks like closeness.
    pub unknown_ms: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct UnknownFlow {
    /// A declared flow is presumably in use: one connection's worth.
    pub weight: f64,
    /// Small: most request/response flows move well under 1 MB/s.
    pub mb_s: f64,
}

/// Weights of the single-service placement scorer (SPEC §10,
/// [`crate::place`]). Bonuses are added, costs subtracted; every term is
/// in points. `docs/placement.md` has a row for each field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct PlacementWeights {
    /// Points for a cluster left entirely free after placing the service:
    /// the bonus is this × the free share (0–1) left, averaged over CPU
    /// and memory, so it prefers the roomiest cluster. 10 keeps room a
    /// tie-breaker among nearby clusters: a few ms on one busy connection
    /// outweigh it, so it never drags a service away from its peers.
    pub headroom_bonus: f64,
    /// Utilisation (0–1) above which a cluster is over target. 0.8, like
    /// `headroom_threshold`, leaves 20 % for bursts, rollouts and the loss
    /// of a node.
    pub target_utilisation: f64,
    /// Flat cost of being over target on any resource: the soft wall.
    /// `validate` insists it exceeds every bonus together (headroom +
    /// incumbency + youth), so with the other costs equal a cluster with
    /// room always beats one without. 1000 points (a second of RTT on a
    /// busy connection) exceeds any network difference between clusters
    /// of one region, so an over-target cluster wins over one with room
    /// only when that one is across an ocean from the service's peers. It
    /// is a cost, not a refusal, so that when nothing has room the service
    /// still has a least-bad place.
    pub over_target_cost: f64,
    /// Points per unit of utilisation past the target, summed over CPU and
    /// memory: the ramp that ranks overloaded clusters against each other
    /// when none has room. 100 makes each percentage point over target
    /// cost 1 point, so the least overloaded cluster wins unless the
    /// network says otherwise by more.
    pub over_target_ramp: f64,
    /// Bonus for staying where it is: moving has a cost the model does not
    /// see (restarts, cache warm-up, a change to review), so staying wins
    /// ties and most non-ties. 5 is half the headroom bonus: another
    /// cluster must offer half of itself more free room, or a few ms less
    /// on a busy connection, to win.
    pub incumbency_bonus: f64,
    /// Points per service of the same owner already on the cluster, so
    /// that one cluster's loss does not stop all of a team's services. 2
    /// spreads a team across otherwise similar clusters without fighting
    /// the network term for services that talk to each other.
    pub blast_radius_cost: f64,
    /// Bonus for a cluster enrolled less than `youth_window_s` ago,
    /// fading linearly to zero: new capacity is probed gently. 3 tips
    /// close calls, never more (it is one of the bonuses the over-target
    /// cost must exceed).
    pub youth_bonus: f64,
    /// How long a cluster counts as new, seconds. A day covers the first
    /// business day of a newly enrolled cluster. 0 disables the bonus.
    pub youth_window_s: i64,
}

/// US dollars per GB of traffic between two clusters, by the class of
/// the link between them (`docs/advice.md` §1a; `crate::money`). Traffic
/// inside one cluster is free. The defaults are public list prices (AWS
/// EC2 On-Demand pricing, "Data Transfer", as read on 2026-12-07); an
/// operator with other contracts writes their own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(default, deny_unknown_fields)]
pub struct TransferPrice {
    /// Between clusters of one site: a site is a campus, its clusters in
    /// different zones; AWS bills traffic between availability zones of
    /// a region $0.01/GB leaving and $0.01/GB arriving, 0.02 per GB moved.
    pub same_site_usd_per_gb: f64,
    /// Between sites of one jurisdiction: AWS's inter-region rate out of
    /// its US and EU regions is $0.02/GB (e.g. us-east-1 → us-west-2,
    /// eu-central-1 → eu-west-1).
    pub same_jurisdiction_usd_per_gb: f64,
    /// Between sites of different jurisdictions: usually another
    /// continent, where AWS's inter-region rates reach $0.08/GB (us-east-1
    /// → ap-south-1); a US↔EU pair is billed $0.02/GB, so an estate of
    /// only those pairs reads high until the operator sets 0.02.
    pub across_jurisdictions_usd_per_gb: f64,
}

mod fields;
pub use fields::{Group, Kind, PolicyField, FIELDS};

/// Every default comes from [`FIELDS`]; the zeros below are overwritten
/// (a test checks that every field has a row).
impl Default for Policy {
    fn default() -> Self {
        let mut policy = Policy {
            round_trip_weight: 0.0,
            cross_site_weight: 0.0,
            headroom_weight: 0.0,
            headroom_threshold: 0.0,
            copy_weight_per_gb: 0.0,
            min_gain_fraction: 0.0,
            min_gain_points: 0.0,
            max_moves: 0,
            margins: Margins {
                measured: 0.0,
                reported: 0.0,
                inferred: 0.0,
                guessed: 0.0,
            },
            staleness: Staleness {
                measured_s: 0,
                reported_s: 0,
                inferred_s: 0,
            },
            rtt: RttDefaults {
                same_cluster_ms: 0.0,
                same_site_ms: 0.0,
                unknown_ms: 0.0,
            },
            unknown_flow: UnknownFlow {
                weight: 0.0,
                mb_s: 0.0,
            },
            placement: PlacementWeights {
                headroom_bonus: 0.0,
                target_utilisation: 0.0,
                over_target_cost: 0.0,
                over_target_ramp: 0.0,
                incumbency_bonus: 0.0,
                blast_radius_cost: 0.0,
                youth_bonus: 0.0,
                youth_window_s: 0,
            },
            transfer_price: TransferPrice {
                same_site_usd_per_gb: 0.0,
                same_jurisdiction_usd_per_gb: 0.0,
                across_jurisdictions_usd_per_gb: 0.0,
            },
            outcome_lookback_s: 0,
            outcome_settle_s: 0,
        };
        for f in FIELDS {
            (f.set)(&mut policy, f.default);
        }
        policy
    }
}

impl Default for Margins {
    fn default() -> Self {
        Policy::default().margins
    }
}

impl Default for Staleness {
    fn default() -> Self {
        Policy::default().staleness
    }
}

impl Default for RttDefaults {
    fn default() -> Self {
        Policy::default().rtt
    }
}

impl Default for UnknownFlow {
    fn default() -> Self {
        Policy::default().unknown_flow
    }
}

impl Default for PlacementWeights {
    fn default() -> Self {
        Policy::default().placement
    }
}

impl Default for TransferPrice {
    fn default() -> Self {
        Policy::default().transfer_price
    }
}

/// A policy value out of range, naming the field.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PolicyError {
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for PolicyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "policy {}: {}", self.field, self.message)
    }
}

impl Policy {
    /// Parse a (possibly partial) policy from JSON and validate it.
    pub fn from_json(text: &str) -> Result<Policy, Vec<PolicyError>> {
        let policy: Policy = crate::strict::from_str(text).map_err(|e| {
            vec![PolicyError {
                field: format!("line {} column {}", e.line(), e.column()),
                message: e.to_string(),
            }]
        })?;
        policy.validate()?;
        Ok(policy)
    }

    pub fn margin(&self, class: Class) -> f64 {
        match class {
            Class::Measured => self.margins.measured,
            Class::Reported => self.margins.reported,
            Class::Inferred => self.margins.inferred,
            Class::Guessed => self.margins.guessed,
        }
    }

    /// Every range rule, with every violation reported at once.
    pub fn validate(&self) -> Result<(), Vec<PolicyError>> {
        let mut errs = Vec::new();
        for f in FIELDS {
            let (v, lo, hi) = (f.value(self), f.min, f.max);
            if !(v.is_finite() && v >= lo && v <= hi) {
                errs.push(PolicyError {
                    field: f.path.to_string(),
                    message: format!("expected a number in [{lo}, {hi}], got {v}"),
                });
            }
        }
        let (m, p) = (&self.margins, &self.placement);
        if !(m.measured <= m.reported && m.reported <= m.inferred && m.inferred <= m.guessed) {
            errs.push(PolicyError {
                field: "margins".into(),
                message: "expected margins to grow from measured to guessed".into(),
            });
        }
        if p.over_target_cost <= p.headroom_bonus + p.incumbency_bonus + p.youth_bonus {
            errs.push(PolicyError {
                field: "placement.over_target_cost".into(),
                message: "expected the over-target cost to exceed every bonus together \
                          (headroom_bonus + incumbency_bonus + youth_bonus)"
                    .into(),
            });
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(errs)
        }
    }

    /// Short stable digest of the full policy (defaults included), named by
    /// every result so two results can be told apart by what produced them.
    ///
    /// The outcome settings (`outcome_lookback_s`, `outcome_settle_s`) are
    /// left out: they change how applied moves are judged, which no
    /// digest-naming result holds, so changing them leaves every advice,
    /// what-if and plan (and their caches) as they were. They are the
    /// struct's last fields, cut off the end of its serialisation.
    pub fn digest(&self) -> String {
        let full = serde_json::to_string(self).expect("policy serialises");
        // The transfer prices are a display (`crate::money`): no result
        // that names the digest reads them, so they are cut out too.
        let prices = format!(
            ",\"transfer_price\":{}",
            serde_json::to_string(&self.transfer_price).expect("prices serialise")
        );
        let full = full.replacen(&prices, "", 1);
        let tail = format!(
            ",\"outcome_lookback_s\":{},\"outcome_settle_s\":{}}}",
            self.outcome_lookback_s, self.outcome_settle_s
        );
        let canonical = match full.strip_suffix(&tail) {
            Some(head) => format!("{head}}}"),
            None => unreachable!("the outcome settings are the policy's last fields"),
        };
        let hash = Sha256::digest(canonical.as_bytes());
        hash.iter().take(8).map(|b| format!("{b:02x}")).collect()
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

    fn at<'a>(v: &'a Value, path: &str) -> &'a Value {
        path.split('.').fold(v, |v, k| &v[k])
    }

    #[test]
    fn the_table_has_every_field_once() {
        let v = serde_json::to_value(Policy::default()).unwrap();
        let mut want = Vec::new();
        leaves(&v, "", &mut want);
        let mut have: Vec<_> = FIELDS.iter().map(|f| f.path).collect();
        have.sort();
        assert_eq!(have, want);
    }

    #[test]
    fn each_row_reads_and_writes_its_own_field() {
        // Defaults land where the JSON path says (the row's setter).
        let defaults = serde_json::to_value(Policy::default()).unwrap();
        for f in FIELDS {
            assert_eq!(
                at(&defaults, f.path).as_f64(),
                Some(f.default),
                "{}",
                f.path
            );
            assert!(f.min <= f.default && f.default <= f.max, "{}", f.path);
            if f.kind == Kind::Integer {
                assert!(at(&defaults, f.path).is_i64() || at(&defaults, f.path).is_u64());
            }
        }
        // A distinct value per field is read back by the row's getter.
        let mut v = defaults.clone();
        for (i, f) in FIELDS.iter().enumerate() {
            let mut parts: Vec<&str> = f.path.split('.').collect();
            let last = parts.pop().unwrap();
            let obj = parts.iter().fold(&mut v, |v, k| &mut v[*k]);
            obj[last] = serde_json::json!(i + 1);
        }
        let p: Policy = serde_json::from_value(v).unwrap();
        for (i, f) in FIELDS.iter().enumerate() {
            assert_eq!(f.value(&p), (i + 1) as f64, "{}", f.path);
        }
    }

    #[test]
    fn groups_are_contiguous_and_in_order() {
        let groups: Vec<_> = FIELDS.iter().map(|f| f.group).collect();
        let mut sorted = groups.clone();
        sorted.sort();
        assert_eq!(groups, sorted);
    }

    #[test]
    fn every_field_out_of_range_is_refused_with_todays_message() {
        for f in FIELDS {
            let text = format!(
                r#"{{"{}": 1000000000000}}"#,
                f.path.replace('.', r#"": {""#)
            ) + &"}".repeat(f.path.matches('.').count());
            let e = Policy::from_json(&text).unwrap_err();
            assert_eq!(e[0].field, f.path, "{text}");
            assert_eq!(
                e[0].message,
                format!(
                    "expected a number in [{}, {}], got 1000000000000",
                    f.min, f.max
                )
            );
        }
    }

    #[test]
    fn partial_policy_keeps_defaults_and_changes_digest() {
        let p = Policy::from_json(r#"{"cross_site_weight": 4}"#).unwrap();
        assert_eq!(p.cross_site_weight, 4.0);
        assert_eq!(p.round_trip_weight, 1.0);
        assert_ne!(p.digest(), Policy::default().digest());
        assert_eq!(Policy::default().digest(), Policy::default().digest());
    }

    #[test]
    fn the_outcome_settings_leave_the_digest_alone() {
        let p =
            Policy::from_json(r#"{"outcome_settle_s": 600, "outcome_lookback_s": 86400}"#).unwrap();
        assert_eq!((p.outcome_settle_s, p.outcome_lookback_s), (600, 86_400));
        assert_eq!(p.digest(), Policy::default().digest());
        // Everything before them still counts.
        let q = Policy {
            cross_site_weight: 4.0,
            ..p
        };
        assert_ne!(q.digest(), Policy::default().digest());
    }

    #[test]
    fn unknown_field_and_out_of_range_are_refused_by_name() {
        let e = Policy::from_json(r#"{"cross_site_wieght": 4}"#).unwrap_err();
        assert!(e[0].message.contains("cross_site_wieght"), "{e:?}");
        let e =
            Policy::from_json(r#"{"headroom_threshold": 1.5, "min_gain_points": -1}"#).unwrap_err();
        let fields: Vec<_> = e.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["headroom_threshold", "min_gain_points"]);
        let e = Policy::from_json(r#"{"staleness": {"measured_s": 0}}"#).unwrap_err();
        assert_eq!(
            e[0].to_string(),
            "policy staleness.measured_s: expected a number in [1, 10000000000], got 0"
        );
    }

    #[test]
    fn arrays_never_pass_for_a_policy_or_its_groups() {
        // serde alone fills the fields by position from an array.
        let e = Policy::from_json("[0.5, 77]").unwrap_err();
        assert!(
            e[0].message
                .starts_with("invalid type: sequence, expected struct Policy"),
            "{e:?}"
        );
        let e = Policy::from_json(r#"{"staleness": [60, 3600]}"#).unwrap_err();
        assert!(e[0].message.contains("invalid type: sequence"), "{e:?}");
    }
}
