//! Every policy field as data ([`FIELDS`]): path, group, kind, default,
//! accepted range, unit and meaning, read by validation, the Policy page
//! and the generated table in `docs/advice.md` §8.

use serde::Serialize;

use super::Policy;

/// What a policy field tunes. The order is the order of [`FIELDS`] and of
/// the table in `docs/advice.md` §8.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Group {
    /// Converting a term of the cost into points.
    Weights,
    /// What a move must clear to be recommended, and how many.
    Bars,
    /// Relative margin of error per confidence class.
    Margins,
    /// Staleness windows per confidence class.
    Windows,
    /// RTTs used when a rung of the evidence ladder names no measurement.
    NominalValues,
    /// Values assumed for flow facts that are unknown.
    Assumptions,
    /// Weights of the single-service placement scorer.
    Placement,
    /// Prices that turn traffic into money, for display.
    Prices,
    /// How applied moves are matched to the advice and when they are
    /// judged (`docs/outcomes.md`).
    Outcomes,
}

impl Group {
    pub fn as_str(self) -> &'static str {
        match self {
            Group::Weights => "weights",
            Group::Bars => "bars",
            Group::Margins => "margins",
            Group::Windows => "windows",
            Group::NominalValues => "nominal values",
            Group::Assumptions => "assumptions",
            Group::Placement => "placement",
            Group::Prices => "prices",
            Group::Outcomes => "outcomes",
        }
    }
}

/// The JSON type of a field's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Number,
    Integer,
}

/// One policy field as data: where it is, what it means, its default and
/// the range [`Policy::validate`] accepts. [`FIELDS`] has one per field;
/// the why of each default is the doc comment of its struct field above.
#[derive(Clone, Copy, Debug)]
pub struct PolicyField {
    /// The JSON path, dotted inside nested objects (`margins.measured`).
    pub path: &'static str,
    pub group: Group,
    pub kind: Kind,
    /// The value a policy that does not name the field has.
    pub default: f64,
    /// Smallest value accepted, inclusive.
    pub min: f64,
    /// Largest value accepted, inclusive. (Every value must also be finite.)
    pub max: f64,
    pub unit: &'static str,
    /// One line: what the field does, as the Policy page shows it.
    pub meaning: &'static str,
    pub(super) get: fn(&Policy) -> f64,
    pub(super) set: fn(&mut Policy, f64),
}

impl PolicyField {
    /// The field's value in `policy`, as a number.
    pub fn value(&self, policy: &Policy) -> f64 {
        (self.get)(policy)
    }
}

/// Every policy field, in the order validation reports them and the docs
/// list them. Adding a field: its struct field (with the why of its
/// default), a row here, and `UPDATE_DOCS=1 cargo test -p berth-engine
/// --test policy_table` for `docs/advice.md`.
pub const FIELDS: &[PolicyField] = &[
    PolicyField {
        path: "round_trip_weight",
        group: Group::Weights,
        kind: Kind::Number,
        default: 1.0,
        min: 0.0,
        max: 1e6,
        unit: "points per (ms × in-flight request)",
        meaning: "cost of one ms of RTT on a flow of weight 1",
        get: |p| p.round_trip_weight,
        set: |p, v| p.round_trip_weight = v,
    },
    PolicyField {
        path: "cross_site_weight",
        group: Group::Weights,
        kind: Kind::Number,
        default: 8.0,
        min: 0.0,
        max: 1e6,
        unit: "points per MB/s",
        meaning: "cost of traffic whose two ends are on different sites",
        get: |p| p.cross_site_weight,
        set: |p, v| p.cross_site_weight = v,
    },
    PolicyField {
        path: "headroom_weight",
        group: Group::Weights,
        kind: Kind::Number,
        default: 15.0,
        min: 0.0,
        max: 1e6,
        unit: "points per resource at 100 %",
        meaning: "penalty for a cluster resource at 100 % utilisation (linear from the threshold)",
        get: |p| p.headroom_weight,
        set: |p, v| p.headroom_weight = v,
    },
    PolicyField {
        path: "headroom_threshold",
        group: Group::Weights,
        kind: Kind::Number,
        default: 0.8,
        min: 0.0,
        max: 0.99,
        unit: "utilisation, 0–1",
        meaning: "utilisation below which the headroom penalty is zero",
        get: |p| p.headroom_threshold,
        set: |p, v| p.headroom_threshold = v,
    },
    PolicyField {
        path: "copy_weight_per_gb",
        group: Group::Weights,
        kind: Kind::Number,
        default: 0.5,
        min: 0.0,
        max: 1e6,
        unit: "points per GB",
        meaning:
            "one-off cost of copying a service's persistent data, subtracted from a move's gain",
        get: |p| p.copy_weight_per_gb,
        set: |p, v| p.copy_weight_per_gb = v,
    },
    PolicyField {
        path: "min_gain_fraction",
        group: Group::Bars,
        kind: Kind::Number,
        default: 0.15,
        min: 0.0,
        max: 10.0,
        unit: "share of current cost",
        meaning: "a move must gain at least this share of the service's current cost",
        get: |p| p.min_gain_fraction,
        set: |p, v| p.min_gain_fraction = v,
    },
    PolicyField {
        path: "min_gain_points",
        group: Group::Bars,
        kind: Kind::Number,
        default: 2.0,
        min: 0.0,
        max: 1e9,
        unit: "points",
        meaning: "a move must gain at least this many points",
        get: |p| p.min_gain_points,
        set: |p, v| p.min_gain_points = v,
    },
    PolicyField {
        path: "max_moves",
        group: Group::Bars,
        kind: Kind::Integer,
        default: 40.0,
        min: 0.0,
        max: 10_000.0,
        unit: "moves",
        meaning: "longest list of recommended moves",
        get: |p| p.max_moves as f64,
        set: |p, v| p.max_moves = v as usize,
    },
    PolicyField {
        path: "margins.measured",
        group: Group::Margins,
        kind: Kind::Number,
        default: 0.05,
        min: 0.0,
        max: 1.0,
        unit: "relative",
        meaning: "margin of error of a measured fact",
        get: |p| p.margins.measured,
        set: |p, v| p.margins.measured = v,
    },
    PolicyField {
        path: "margins.reported",
        group: Group::Margins,
        kind: Kind::Number,
        default: 0.15,
        min: 0.0,
        max: 1.0,
        unit: "relative",
        meaning: "margin of error of a reported fact",
        get: |p| p.margins.reported,
        set: |p, v| p.margins.reported = v,
    },
    PolicyField {
        path: "margins.inferred",
        group: Group::Margins,
        kind: Kind::Number,
        default: 0.35,
        min: 0.0,
        max: 1.0,
        unit: "relative",
        meaning: "margin of error of an inferred fact",
        get: |p| p.margins.inferred,
        set: |p, v| p.margins.inferred = v,
    },
    PolicyField {
        path: "margins.guessed",
        group: Group::Margins,
        kind: Kind::Number,
        default: 1.0,
        min: 0.0,
        max: 1.0,
        unit: "relative",
        meaning: "margin of error of a guessed fact",
        get: |p| p.margins.guessed,
        set: |p, v| p.margins.guessed = v,
    },
    PolicyField {
        path: "staleness.measured_s",
        group: Group::Windows,
        kind: Kind::Integer,
        default: (15 * 60) as f64,
        min: 1.0,
        max: 1e10,
        unit: "seconds",
        meaning: "after this a measurement counts only as reported",
        get: |p| p.staleness.measured_s as f64,
        set: |p, v| p.staleness.measured_s = v as i64,
    },
    PolicyField {
        path: "staleness.reported_s",
        group: Group::Windows,
        kind: Kind::Integer,
        default: (24 * 3600) as f64,
        min: 1.0,
        max: 1e10,
        unit: "seconds",
        meaning: "after this a report counts only as inferred",
        get: |p| p.staleness.reported_s as f64,
        set: |p, v| p.staleness.reported_s = v as i64,
    },
    PolicyField {
        path: "staleness.inferred_s",
        group: Group::Windows,
        kind: Kind::Integer,
        default: (7 * 24 * 3600) as f64,
        min: 1.0,
        max: 1e10,
        unit: "seconds",
        meaning: "after this an inference counts only as a guess",
        get: |p| p.staleness.inferred_s as f64,
        set: |p, v| p.staleness.inferred_s = v as i64,
    },
    PolicyField {
        path: "rtt.same_cluster_ms",
        group: Group::NominalValues,
        kind: Kind::Number,
        default: 0.3,
        min: 0.0,
        max: 1e4,
        unit: "ms",
        meaning: "nominal RTT inside one cluster",
        get: |p| p.rtt.same_cluster_ms,
        set: |p, v| p.rtt.same_cluster_ms = v,
    },
    PolicyField {
        path: "rtt.same_site_ms",
        group: Group::NominalValues,
        kind: Kind::Number,
        default: 1.0,
        min: 0.0,
        max: 1e4,
        unit: "ms",
        meaning: "nominal RTT between clusters of one site",
        get: |p| p.rtt.same_site_ms,
        set: |p, v| p.rtt.same_site_ms = v,
    },
    PolicyField {
        path: "rtt.unknown_ms",
        group: Group::NominalValues,
        kind: Kind::Number,
        default: 80.0,
        min: 0.0,
        max: 1e4,
        unit: "ms",
        meaning: "RTT assumed when nothing is known (pessimistic on purpose)",
        get: |p| p.rtt.unknown_ms,
        set: |p, v| p.rtt.unknown_ms = v,
    },
    PolicyField {
        path: "unknown_flow.weight",
        group: Group::Assumptions,
        kind: Kind::Number,
        default: 1.0,
        min: 0.0,
        max: 1e6,
        unit: "in-flight requests",
        meaning: "weight assumed for a flow whose weight is unknown (guessed)",
        get: |p| p.unknown_flow.weight,
        set: |p, v| p.unknown_flow.weight = v,
    },
    PolicyField {
        path: "unknown_flow.mb_s",
        group: Group::Assumptions,
        kind: Kind::Number,
        default: 0.1,
        min: 0.0,
        max: 1e6,
        unit: "MB/s",
        meaning: "traffic assumed for a flow whose volume is unknown (guessed)",
        get: |p| p.unknown_flow.mb_s,
        set: |p, v| p.unknown_flow.mb_s = v,
    },
    PolicyField {
        path: "placement.headroom_bonus",
        group: Group::Placement,
        kind: Kind::Number,
        default: 10.0,
        min: 0.0,
        max: 1e6,
        unit: "points",
        meaning: "placement scorer: bonus for free room left on a cluster",
        get: |p| p.placement.headroom_bonus,
        set: |p, v| p.placement.headroom_bonus = v,
    },
    PolicyField {
        path: "placement.target_utilisation",
        group: Group::Placement,
        kind: Kind::Number,
        default: 0.8,
        min: 0.01,
        max: 1.0,
        unit: "utilisation, 0–1",
        meaning: "placement scorer: utilisation above which a cluster is over target",
        get: |p| p.placement.target_utilisation,
        set: |p, v| p.placement.target_utilisation = v,
    },
    PolicyField {
        path: "placement.over_target_cost",
        group: Group::Placement,
        kind: Kind::Number,
        default: 1000.0,
        min: 0.0,
        max: 1e9,
        unit: "points",
        meaning: "placement scorer: flat cost of being over target",
        get: |p| p.placement.over_target_cost,
        set: |p, v| p.placement.over_target_cost = v,
    },
    PolicyField {
        path: "placement.over_target_ramp",
        group: Group::Placement,
        kind: Kind::Number,
        default: 100.0,
        min: 0.0,
        max: 1e9,
        unit: "points per unit of utilisation",
        meaning: "placement scorer: cost per unit of utilisation past the target",
        get: |p| p.placement.over_target_ramp,
        set: |p, v| p.placement.over_target_ramp = v,
    },
    PolicyField {
        path: "placement.incumbency_bonus",
        group: Group::Placement,
        kind: Kind::Number,
        default: 5.0,
        min: 0.0,
        max: 1e6,
        unit: "points",
        meaning: "placement scorer: bonus for staying where it is",
        get: |p| p.placement.incumbency_bonus,
        set: |p, v| p.placement.incumbency_bonus = v,
    },
    PolicyField {
        path: "placement.blast_radius_cost",
        group: Group::Placement,
        kind: Kind::Number,
        default: 2.0,
        min: 0.0,
        max: 1e6,
        unit: "points per service",
        meaning: "placement scorer: cost per service of the same owner already there",
        get: |p| p.placement.blast_radius_cost,
        set: |p, v| p.placement.blast_radius_cost = v,
    },
    PolicyField {
        path: "placement.youth_bonus",
        group: Group::Placement,
        kind: Kind::Number,
        default: 3.0,
        min: 0.0,
        max: 1e6,
        unit: "points",
        meaning: "placement scorer: bonus for a newly enrolled cluster",
        get: |p| p.placement.youth_bonus,
        set: |p, v| p.placement.youth_bonus = v,
    },
    PolicyField {
        path: "placement.youth_window_s",
        group: Group::Placement,
        kind: Kind::Integer,
        default: (24 * 3600) as f64,
        min: 0.0,
        max: 1e10,
        unit: "seconds",
        meaning: "placement scorer: how long a cluster counts as new",
        get: |p| p.placement.youth_window_s as f64,
        set: |p, v| p.placement.youth_window_s = v as i64,
    },
    PolicyField {
        path: "transfer_price.same_site_usd_per_gb",
        group: Group::Prices,
        kind: Kind::Number,
        default: 0.02,
        min: 0.0,
        max: 1e3,
        unit: "US$ per GB",
        meaning: "price of traffic between two clusters of one site (display only)",
        get: |p| p.transfer_price.same_site_usd_per_gb,
        set: |p, v| p.transfer_price.same_site_usd_per_gb = v,
    },
    PolicyField {
        path: "transfer_price.same_jurisdiction_usd_per_gb",
        group: Group::Prices,
        kind: Kind::Number,
        default: 0.02,
        min: 0.0,
        max: 1e3,
        unit: "US$ per GB",
        meaning: "price of traffic between two sites of one jurisdiction (display only)",
        get: |p| p.transfer_price.same_jurisdiction_usd_per_gb,
        set: |p, v| p.transfer_price.same_jurisdiction_usd_per_gb = v,
    },
    PolicyField {
        path: "transfer_price.across_jurisdictions_usd_per_gb",
        group: Group::Prices,
        kind: Kind::Number,
        default: 0.08,
        min: 0.0,
        max: 1e3,
        unit: "US$ per GB",
        meaning: "price of traffic between sites of different jurisdictions (display only)",
        get: |p| p.transfer_price.across_jurisdictions_usd_per_gb,
        set: |p, v| p.transfer_price.across_jurisdictions_usd_per_gb = v,
    },
    PolicyField {
        path: "outcome_lookback_s",
        group: Group::Outcomes,
        kind: Kind::Integer,
        default: (14 * 24 * 3600) as f64,
        // At least a minute: the advice a move is matched to was evaluated
        // before it, and the driver evaluates every few minutes at most.
        min: 60.0,
        max: 1e10,
        unit: "seconds",
        meaning: "how far back an applied move is matched to the advice that recommended it",
        get: |p| p.outcome_lookback_s as f64,
        set: |p, v| p.outcome_lookback_s = v as i64,
    },
    PolicyField {
        path: "outcome_settle_s",
        group: Group::Outcomes,
        kind: Kind::Integer,
        default: 3600.0,
        min: 0.0,
        max: 1e10,
        unit: "seconds",
        meaning: "how long after a move its outcome waits before it is judged",
        get: |p| p.outcome_settle_s as f64,
        set: |p, v| p.outcome_settle_s = v as i64,
    },
];
