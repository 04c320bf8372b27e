//! The policy: every weight, bar and default the engine uses, in one place.
//!
//! `docs/advice.md` has a row for every field here; change both together.
//! A policy file may give any subset of fields; the rest keep their
//! defaults. Unknown fields and out-of-range values are refused with the
//! field named, so a typo never silently falls back to a default.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::class::Class;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

impl Default for Policy {
    fn default() -> Self {
        Policy {
            round_trip_weight: 1.0,
            cross_site_weight: 8.0,
            headroom_weight: 15.0,
            headroom_threshold: 0.8,
            copy_weight_per_gb: 0.5,
            min_gain_fraction: 0.15,
            min_gain_points: 2.0,
            max_moves: 40,
            margins: Margins::default(),
            staleness: Staleness::default(),
            rtt: RttDefaults::default(),
            unknown_flow: UnknownFlow::default(),
            placement: PlacementWeights::default(),
        }
    }
}

impl Default for Margins {
    fn default() -> Self {
        Margins {
            measured: 0.05,
            reported: 0.15,
            inferred: 0.35,
            guessed: 1.0,
        }
    }
}

impl Default for Staleness {
    fn default() -> Self {
        Staleness {
            measured_s: 15 * 60,
            reported_s: 24 * 3600,
            inferred_s: 7 * 24 * 3600,
        }
    }
}

impl Default for RttDefaults {
    fn default() -> Self {
        RttDefaults {
            same_cluster_ms: 0.3,
            same_site_ms: 1.0,
            unknown_ms: 80.0,
        }
    }
}

impl Default for UnknownFlow {
    fn default() -> Self {
        UnknownFlow {
            weight: 1.0,
            mb_s: 0.1,
        }
    }
}

impl Default for PlacementWeights {
    fn default() -> Self {
        PlacementWeights {
            headroom_bonus: 10.0,
            target_utilisation: 0.8,
            over_target_cost: 1000.0,
            over_target_ramp: 100.0,
            incumbency_bonus: 5.0,
            blast_radius_cost: 2.0,
            youth_bonus: 3.0,
            youth_window_s: 24 * 3600,
        }
    }
}

/// A policy value out of range, naming the field.
#[derive(Clone, Debug, PartialEq, Serialize)]
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
        let policy: Policy = serde_json::from_str(text).map_err(|e| {
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
        let mut check = |field: &str, v: f64, lo: f64, hi: f64| {
            if !(v.is_finite() && v >= lo && v <= hi) {
                errs.push(PolicyError {
                    field: field.to_string(),
                    message: format!("expected a number in [{lo}, {hi}], got {v}"),
                });
            }
        };
        check("round_trip_weight", self.round_trip_weight, 0.0, 1e6);
        check("cross_site_weight", self.cross_site_weight, 0.0, 1e6);
        check("headroom_weight", self.headroom_weight, 0.0, 1e6);
        check("headroom_threshold", self.headroom_threshold, 0.0, 0.99);
        check("copy_weight_per_gb", self.copy_weight_per_gb, 0.0, 1e6);
        check("min_gain_fraction", self.min_gain_fraction, 0.0, 10.0);
        check("min_gain_points", self.min_gain_points, 0.0, 1e9);
        check("max_moves", self.max_moves as f64, 0.0, 10_000.0);
        check("margins.measured", self.margins.measured, 0.0, 1.0);
        check("margins.reported", self.margins.reported, 0.0, 1.0);
        check("margins.inferred", self.margins.inferred, 0.0, 1.0);
        check("margins.guessed", self.margins.guessed, 0.0, 1.0);
        check(
            "staleness.measured_s",
            self.staleness.measured_s as f64,
            1.0,
            1e10,
        );
        check(
            "staleness.reported_s",
            self.staleness.reported_s as f64,
            1.0,
            1e10,
        );
        check(
            "staleness.inferred_s",
            self.staleness.inferred_s as f64,
            1.0,
            1e10,
        );
        check("rtt.same_cluster_ms", self.rtt.same_cluster_ms, 0.0, 1e4);
        check("rtt.same_site_ms", self.rtt.same_site_ms, 0.0, 1e4);
        check("rtt.unknown_ms", self.rtt.unknown_ms, 0.0, 1e4);
        check("unknown_flow.weight", self.unknown_flow.weight, 0.0, 1e6);
        check("unknown_flow.mb_s", self.unknown_flow.mb_s, 0.0, 1e6);
        let p = &self.placement;
        check("placement.headroom_bonus", p.headroom_bonus, 0.0, 1e6);
        check(
            "placement.target_utilisation",
            p.target_utilisation,
            0.01,
            1.0,
        );
        check("placement.over_target_cost", p.over_target_cost, 0.0, 1e9);
        check("placement.over_target_ramp", p.over_target_ramp, 0.0, 1e9);
        check("placement.incumbency_bonus", p.incumbency_bonus, 0.0, 1e6);
        check("placement.blast_radius_cost", p.blast_radius_cost, 0.0, 1e6);
        check("placement.youth_bonus", p.youth_bonus, 0.0, 1e6);
        check(
            "placement.youth_window_s",
            p.youth_window_s as f64,
            0.0,
            1e10,
        );
        let m = &self.margins;
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
    pub fn digest(&self) -> String {
        let canonical = serde_json::to_vec(self).expect("policy serialises");
        let hash = Sha256::digest(&canonical);
        hash.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_policy_keeps_defaults_and_changes_digest() {
        let p = Policy::from_json(r#"{"cross_site_weight": 4}"#).unwrap();
        assert_eq!(p.cross_site_weight, 4.0);
        assert_eq!(p.round_trip_weight, 1.0);
        assert_ne!(p.digest(), Policy::default().digest());
        assert_eq!(Policy::default().digest(), Policy::default().digest());
    }

    #[test]
    fn unknown_field_and_out_of_range_are_refused_by_name() {
        let e = Policy::from_json(r#"{"cross_site_wieght": 4}"#).unwrap_err();
        assert!(e[0].message.contains("cross_site_wieght"), "{e:?}");
        let e =
            Policy::from_json(r#"{"headroom_threshold": 1.5, "min_gain_points": -1}"#).unwrap_err();
        let fields: Vec<_> = e.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["headroom_threshold", "min_gain_points"]);
    }
}
