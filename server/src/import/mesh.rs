//! The service meshes Berth reads flows from, as data: for each, the
//! labels that name a call's two workloads (and, where the mesh has them,
//! their clusters), the PromQL that gives requests/s, mean duration, bytes/s
//! and sample coverage per workload edge, and what the mesh cannot tell.
//! Pure: the queries are text; `crate::prom_client` runs them and
//! `super::prometheus` turns the answers into flows. `docs/observations.md`
//! has one section per mesh, with a worked example.
//!
//! Every preset counts each call once. Where both ends of a call report it
//! (Istio's two sidecars, Linkerd's two proxies, Hubble's two endpoints)
//! the caller's report is taken: its duration is what the caller waits,
//! network included, which is what a flow's weight (requests in flight,
//! `docs/advice.md` §1) is about. The OpenTelemetry service graph pairs a
//! client span with its server span into one edge, so it reports each call
//! once already.

use std::fmt;

/// The rate window of every preset's queries. At the usual 15–60 s scrape
/// intervals 5 minutes hold 5 or more samples, so one missed scrape or a
/// burst does not swing the figure; shorter windows jitter, longer ones
/// lag behind a move.
pub const WINDOW: &str = "5m";

/// A mesh whose standard metrics Berth knows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mesh {
    #[default]
    Istio,
    Linkerd,
    OtelServicegraph,
    Hubble,
}

impl Mesh {
    pub const ALL: [Mesh; 4] = [
        Mesh::Istio,
        Mesh::Linkerd,
        Mesh::OtelServicegraph,
        Mesh::Hubble,
    ];

    /// The name `--mesh` takes.
    pub fn name(self) -> &'static str {
        match self {
            Mesh::Istio => "istio",
            Mesh::Linkerd => "linkerd",
            Mesh::OtelServicegraph => "otel-servicegraph",
            Mesh::Hubble => "hubble",
        }
    }

    pub fn parse(s: &str) -> Result<Mesh, String> {
        Mesh::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                format!(
                    "--mesh {s:?}: expected one of {}",
                    Mesh::ALL.map(Mesh::name).join(", ")
                )
            })
    }

    /// The workload labels of this mesh's metrics, without clusters.
    pub fn labels(self) -> Labels {
        let l = |sw: &str, sn: Option<&str>, dw: &str, dn: Option<&str>| Labels {
            source_workload: sw.into(),
            source_namespace: sn.map(Into::into),
            destination_workload: dw.into(),
            destination_namespace: dn.map(Into::into),
            source_cluster: None,
            destination_cluster: None,
        };
        match self {
            Mesh::Istio => l(
                "source_workload",
                Some("source_workload_namespace"),
                "destination_workload",
                Some("destination_workload_namespace"),
            ),
            // The proxy's own pod labels (`deployment`, `namespace`, added
            // by linkerd-viz's scrape config) and, on outbound metrics,
            // the destination's (`dst_…`).
            Mesh::Linkerd => l(
                "deployment",
                Some("namespace"),
                "dst_deployment",
                Some("dst_namespace"),
            ),
            // Service names, not workloads; no namespace unless configured
            // as a dimension.
            Mesh::OtelServicegraph => l("client", None, "server", None),
            // With `labelsContext=source_namespace,source_workload,
            // destination_namespace,destination_workload` on the httpV2
            // metric (the context Berth needs; docs/observations.md).
            Mesh::Hubble => l(
                "source_workload",
                Some("source_namespace"),
                "destination_workload",
                Some("destination_namespace"),
            ),
        }
    }

    /// The cluster labels this mesh's metrics name both ends' clusters
    /// by, if it has any; read by default (`--cluster-labels none` turns
    /// them off). Istio labels every metric with both ends' cluster
    /// (`Kubernetes` unless the mesh was installed multi-cluster: one
    /// value, which `super::prometheus::read_clusters` reads as one
    /// cluster, so a single-cluster mesh imports as without them). The
    /// OpenTelemetry service graph has them when the connector is given
    /// the dimension `k8s.cluster.name` (the resource attribute the
    /// collector's `k8sattributes` processor sets): absent, they group
    /// nothing.
    pub fn cluster_labels(self) -> Option<(&'static str, &'static str)> {
        match self {
            Mesh::Istio => Some(("source_cluster", "destination_cluster")),
            Mesh::OtelServicegraph => Some(("client_k8s_cluster_name", "server_k8s_cluster_name")),
            // Linkerd's proxy metrics name no cluster (its multicluster
            // gateway's metrics have no per-call peer), nor do Hubble's
            // label contexts: a Prometheus external label per cluster is
            // named with --cluster-labels.
            Mesh::Linkerd | Mesh::Hubble => None,
        }
    }

    /// The labels a reading groups by default: the workload labels and,
    /// where the mesh has them, its cluster labels.
    pub fn default_labels(self) -> Labels {
        match self.cluster_labels() {
            Some((source, destination)) => self.labels().with_clusters(source, destination),
            None => self.labels(),
        }
    }

    /// The label (and the value kept) that picks one reporting side, for
    /// meshes where both ends of a call report it; `None` where each call
    /// is reported once.
    pub fn side(self) -> Option<(&'static str, &'static str)> {
        match self {
            Mesh::Istio => Some(("reporter", "source")),
            Mesh::Linkerd => Some(("direction", "outbound")),
            Mesh::Hubble => Some(("reporter", "client")),
            Mesh::OtelServicegraph => None,
        }
    }

    /// Workload names that stand for "outside the mesh": no estate service
    /// can be named. Where the mesh leaves the label out instead (Linkerd
    /// and Hubble for peers they did not identify), an absent label means
    /// the same.
    pub fn outside(self) -> &'static [&'static str] {
        match self {
            Mesh::Istio => &["unknown"],
            // Tempo and the collector's connector name the client of a
            // request that arrived with no client span "user".
            Mesh::OtelServicegraph => &["user"],
            Mesh::Linkerd | Mesh::Hubble => &[],
        }
    }

    /// Whether a sample may lack a workload label (the peer was not
    /// identified), as opposed to the query not grouping by it.
    pub fn absent_is_outside(self) -> bool {
        matches!(self, Mesh::Linkerd | Mesh::Hubble)
    }

    /// The metrics each query reads, for messages ("no samples of …").
    pub fn metric_names(self) -> &'static str {
        match self {
            Mesh::Istio => "Istio's istio_requests_total{reporter=\"source\"} (and istio_request_bytes_sum, istio_response_bytes_sum, istio_tcp_sent_bytes_total, istio_tcp_received_bytes_total)",
            Mesh::Linkerd => "Linkerd's request_total{direction=\"outbound\"} (and response_latency_ms, tcp_read_bytes_total, tcp_write_bytes_total)",
            Mesh::OtelServicegraph => "the OpenTelemetry service graph's traces_service_graph_request_total (and traces_service_graph_request_server_seconds)",
            Mesh::Hubble => "Hubble's hubble_http_requests_total{reporter=\"client\"} (and hubble_http_request_duration_seconds)",
        }
    }

    /// What to check when nothing was found.
    pub fn what_to_check(self) -> &'static str {
        match self {
            Mesh::Istio => "that this is the Prometheus that scrapes the mesh (its targets include the Envoy sidecars' :15090/stats/prometheus), that Istio's standard metrics are enabled (Telemetry API or meshConfig)",
            Mesh::Linkerd => "that this is linkerd-viz's Prometheus (or one with its scrape config for the proxies' linkerd-admin port 4191), which adds the deployment and namespace labels",
            Mesh::OtelServicegraph => "that the collector's servicegraph connector (or Tempo's metrics-generator service-graphs processor) is enabled and remote-writes to this Prometheus",
            Mesh::Hubble => "that Hubble metrics are enabled with the httpV2 metric and labelsContext=source_namespace,source_workload,destination_namespace,destination_workload, and that L7 visibility is on for the traffic (HTTP metrics need it)",
        }
    }

    /// The default queries, grouped by `labels` (the preset's, with the
    /// clusters added when asked for).
    pub fn queries(self, labels: &Labels) -> Queries {
        let by = labels.group_by();
        let w = WINDOW;
        let sum = |expr: String| format!("sum by ({by}) ({expr})");
        // Two counters of one edge tagged apart (`label_replace` adds a
        // label of their own), so the two never share a label set: `or`
        // keeps every series of both and `sum by` adds whatever is there.
        // Not one selector over both names (`rate()` drops the name, and
        // Prometheus refuses a vector with two equal label sets), and not
        // `a + b` (which drops an edge that has only one side).
        let tagged = |parts: &[(&str, &str)]| -> String {
            parts
                .iter()
                .map(|(metric, tag)| {
                    format!(
                        "label_replace(rate({metric}[{w}]), \"berth_part\", \"{tag}\", \"\", \"\")"
                    )
                })
                .collect::<Vec<_>>()
                .join(" or ")
        };
        // The mean duration in milliseconds: the rate of the histogram's
        // sum over the rate of its count, times 1000 where it counts in
        // seconds.
        let mean_ms = |sum_metric: &str, count_metric: &str, scale: &str| {
            format!(
                "{scale}sum by ({by}) (rate({sum_metric}[{w}])) / sum by ({by}) (rate({count_metric}[{w}]))"
            )
        };
        // Samples in the window of the best-covered series of each edge:
        // a scrape gap shows as fewer (super::prometheus::coverage).
        let coverage = |metrics: &[&str]| {
            let parts: Vec<String> = metrics
                .iter()
                .map(|m| format!("count_over_time({m}[{w}])"))
                .collect();
            format!("max by ({by}) ({})", parts.join(" or "))
        };
        match self {
            Mesh::Istio => {
                let s = "{reporter=\"source\"}";
                Queries {
                    rate: sum(format!("rate(istio_requests_total{s}[{w}])")),
                    duration: mean_ms(
                        &format!("istio_request_duration_milliseconds_sum{s}"),
                        &format!("istio_request_duration_milliseconds_count{s}"),
                        "",
                    ),
                    // HTTP and gRPC bodies, and what TCP connections (a
                    // database, a cache: no requests to count) carried
                    // each way.
                    bytes: Some(sum(tagged(&[
                        (&format!("istio_request_bytes_sum{s}"), "request"),
                        (&format!("istio_response_bytes_sum{s}"), "response"),
                        (&format!("istio_tcp_sent_bytes_total{s}"), "tcp_sent"),
                        (
                            &format!("istio_tcp_received_bytes_total{s}"),
                            "tcp_received",
                        ),
                    ]))),
                    coverage: Some(coverage(&[
                        &format!("istio_requests_total{s}"),
                        &format!("istio_tcp_sent_bytes_total{s}"),
                    ])),
                }
            }
            Mesh::Linkerd => {
                let s = "{direction=\"outbound\"}";
                // Outbound, towards the destination: what the caller's
                // proxy wrote to it (requests) and read from it
                // (responses) — every byte of the connection, HTTP or not.
                let peer = "{direction=\"outbound\", peer=\"dst\"}";
                Queries {
                    rate: sum(format!("rate(request_total{s}[{w}])")),
                    duration: mean_ms(
                        &format!("response_latency_ms_sum{s}"),
                        &format!("response_latency_ms_count{s}"),
                        "",
                    ),
                    bytes: Some(sum(tagged(&[
                        (&format!("tcp_write_bytes_total{peer}"), "write"),
                        (&format!("tcp_read_bytes_total{peer}"), "read"),
                    ]))),
                    coverage: Some(coverage(&[
                        &format!("request_total{s}"),
                        &format!("tcp_write_bytes_total{peer}"),
                    ])),
                }
            }
            Mesh::OtelServicegraph => Queries {
                rate: sum(format!("rate(traces_service_graph_request_total[{w}])")),
                // The server span's duration: the one every version of the
                // connector and of Tempo writes (the client-side histogram
                // came later); it leaves out the network time, which
                // Berth models through round trips of its own.
                duration: mean_ms(
                    "traces_service_graph_request_server_seconds_sum",
                    "traces_service_graph_request_server_seconds_count",
                    "1000 * ",
                ),
                // Spans carry no body sizes: MB/s stays unknown.
                bytes: None,
                coverage: Some(coverage(&["traces_service_graph_request_total"])),
            },
            Mesh::Hubble => {
                let s = "{reporter=\"client\"}";
                Queries {
                    rate: sum(format!("rate(hubble_http_requests_total{s}[{w}])")),
                    duration: mean_ms(
                        &format!("hubble_http_request_duration_seconds_sum{s}"),
                        &format!("hubble_http_request_duration_seconds_count{s}"),
                        "1000 * ",
                    ),
                    // Hubble's HTTP metrics count requests, not bytes, and
                    // its flow metrics count flows: MB/s stays unknown.
                    bytes: None,
                    coverage: Some(coverage(&[&format!("hubble_http_requests_total{s}")])),
                }
            }
        }
    }

    /// Notes about custom queries that would count calls twice: a query of
    /// a two-sided mesh that does not pick a side.
    pub fn query_warnings(self, queries: &Queries, defaults: &Queries) -> Vec<String> {
        let Some((label, value)) = self.side() else {
            return vec![];
        };
        let mut out = vec![];
        for (name, q, d) in [
            ("rate", Some(&queries.rate), Some(&defaults.rate)),
            (
                "duration",
                Some(&queries.duration),
                Some(&defaults.duration),
            ),
            ("bytes", queries.bytes.as_ref(), defaults.bytes.as_ref()),
        ] {
            let Some(q) = q else { continue };
            if Some(q) != d && !q.contains(label) {
                out.push(format!(
                    "the custom {name} query does not select {label}=\"{value}\": where both ends of a call report it, every figure counts twice"
                ));
            }
        }
        out
    }
}

impl fmt::Display for Mesh {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The labels that name a call's two ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Labels {
    pub source_workload: String,
    pub source_namespace: Option<String>,
    pub destination_workload: String,
    pub destination_namespace: Option<String>,
    pub source_cluster: Option<String>,
    pub destination_cluster: Option<String>,
}

impl Labels {
    /// The labels to group by, in a fixed order.
    pub fn group_by(&self) -> String {
        [
            Some(&self.source_workload),
            self.source_namespace.as_ref(),
            Some(&self.destination_workload),
            self.destination_namespace.as_ref(),
            self.source_cluster.as_ref(),
            self.destination_cluster.as_ref(),
        ]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ")
    }

    /// With cluster labels (`--cluster-labels SOURCE,DESTINATION`).
    pub fn with_clusters(mut self, source: &str, destination: &str) -> Labels {
        self.source_cluster = Some(source.to_string());
        self.destination_cluster = Some(destination.to_string());
        self
    }
}

/// The PromQL run per tick. `bytes: None` skips MB/s; `coverage: None`
/// skips the scrape-gap check (figures stay *measured*).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Queries {
    pub rate: String,
    pub duration: String,
    pub bytes: Option<String>,
    pub coverage: Option<String>,
}

impl Default for Queries {
    /// Istio's default queries, its cluster labels included.
    fn default() -> Queries {
        Mesh::Istio.queries(&Mesh::Istio.default_labels())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn istio_defaults_group_by_the_workload_and_cluster_labels() {
        let q = Queries::default();
        assert_eq!(
            q.rate,
            "sum by (source_workload, source_workload_namespace, destination_workload, destination_workload_namespace, source_cluster, destination_cluster) (rate(istio_requests_total{reporter=\"source\"}[5m]))"
        );
        assert_eq!(Mesh::Linkerd.default_labels(), Mesh::Linkerd.labels());
        assert!(q.bytes.unwrap().contains("istio_tcp_received_bytes_total"));
    }

    #[test]
    fn clusters_join_the_grouping_and_otel_has_no_namespace() {
        let l = Mesh::Istio
            .labels()
            .with_clusters("source_cluster", "destination_cluster");
        assert!(Mesh::Istio
            .queries(&l)
            .rate
            .starts_with("sum by (source_workload, source_workload_namespace, destination_workload, destination_workload_namespace, source_cluster, destination_cluster)"));
        assert!(Mesh::OtelServicegraph
            .queries(&Mesh::OtelServicegraph.labels())
            .rate
            .starts_with("sum by (client, server) "));
    }

    #[test]
    fn a_custom_query_without_a_side_is_warned_about() {
        let d = Queries::default();
        let mut q = d.clone();
        q.rate = "sum by (source_workload, destination_workload) (rate(istio_requests_total[5m]))"
            .into();
        let w = Mesh::Istio.query_warnings(&q, &d);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("reporter=\"source\""), "{w:?}");
        assert!(Mesh::OtelServicegraph.query_warnings(&q, &d).is_empty());
        assert!(Mesh::parse("consul")
            .unwrap_err()
            .contains("istio, linkerd"));
    }
}
