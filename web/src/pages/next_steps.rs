//! Next steps: what the estate still lacks for advice to rest on facts,
//! each item's status computed from the estate's own facts (so it turns
//! done as the facts arrive, whoever sends them), each with the page or
//! the exact command that supplies it. Shown after an estate is created
//! and on Placement while anything is missing.

use std::rc::Rc;

use berth_engine::fact::Class;
use berth_engine::{Estate, Policy};
use leptos::prelude::*;

use crate::client;
use crate::common::Auth;
use crate::engine::Loaded;

/// Where an item's facts come from: a page of this application or a
/// command to run.
#[derive(Clone, Debug, PartialEq)]
pub enum How {
    Page { words: String, href: String },
    Command { words: String, line: String },
}

/// One item of the checklist.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Stable key (`capacities`, `services`, `traffic`, `round_trips`).
    pub key: &'static str,
    pub title: &'static str,
    pub done: bool,
    /// What the estate holds now, in words.
    pub status: String,
    pub how: Vec<How>,
}

/// At most `n` names, then "and N more".
fn some(names: &[String], n: usize) -> String {
    let mut s = names[..names.len().min(n)].join(", ");
    if names.len() > n {
        s.push_str(&format!(" and {} more", names.len() - n));
    }
    s
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What the commands and links of the checklist name.
struct Commands<'a> {
    server: &'a str,
    id: &'a str,
    /// The Import page of the estate.
    import: String,
    first_cluster: String,
}

impl Commands<'_> {
    /// `berth agent` for one cluster of the estate, with `rest`.
    fn agent(&self, cluster: &str, rest: &str) -> String {
        format!(
            "BERTH_TOKEN=… berth agent --server {} --estate {} --cluster {cluster} {rest}",
            self.server, self.id
        )
    }
}

/// The checklist for an estate under its policy. `server` is the address
/// the commands name (the page's own origin), `id` the estate's id.
pub fn steps(estate: &Estate, policy: &Policy, id: &str, server: &str) -> Vec<Step> {
    let cx = Commands {
        server,
        id,
        import: format!("/import?estate={}", berth_api::endpoint::encode(id)),
        first_cluster: estate
            .clusters
            .first()
            .map(|c| c.id.clone())
            .unwrap_or_else(|| "CLUSTER".into()),
    };
    vec![
        capacities(estate, &cx),
        services(estate, &cx),
        traffic(estate, &cx),
        round_trips(estate, policy, &cx),
    ]
}

/// Step 1: free capacity of every cluster.
fn capacities(estate: &Estate, cx: &Commands) -> Step {
    let lacking: Vec<String> = estate
        .clusters
        .iter()
        .filter(|c| c.cpu_free.value.is_none() || c.memory_free_gib.value.is_none())
        .map(|c| c.id.clone())
        .collect();
    let n_clusters = estate.clusters.len();
    Step {
        key: "capacities",
        title: "Clusters with their free capacity",
        done: lacking.is_empty(),
        status: if lacking.is_empty() {
            format!(
                "All {} know their free CPU and memory.",
                plural(n_clusters, "cluster", "clusters")
            )
        } else {
            format!(
                "{} of {n_clusters} clusters know their free CPU and memory; unknown on {}: a move there is \"can't tell\".",
                n_clusters - lacking.len(),
                some(&lacking, 3)
            )
        },
        how: vec![
            How::Command {
                words:
                    "An agent beside each cluster reads it from the Kubernetes API every minute:"
                        .into(),
                line: cx.agent(lacking.first().unwrap_or(&cx.first_cluster), "--kubernetes"),
            },
            How::Page {
                words:
                    "Or type the free CPU and memory of each cluster into the estate file on the Import page"
                        .into(),
                href: cx.import.clone(),
            },
        ],
    }
}

/// Step 2: services.
fn services(estate: &Estate, cx: &Commands) -> Step {
    let n = estate.services.len();
    let from_kubernetes = estate
        .services
        .iter()
        .filter(|s| {
            s.source
                .as_deref()
                .is_some_and(|s| s.starts_with("kubernetes:"))
        })
        .count();
    Step {
        key: "services",
        title: "Services imported",
        done: n > 0,
        status: if n == 0 {
            "No services yet: there is nothing to place.".into()
        } else {
            format!(
                "{}: {from_kubernetes} from Kubernetes, {} written in the estate file.",
                plural(n, "service", "services"),
                n - from_kubernetes
            )
        },
        how: vec![
            How::Page {
                words: "Import Kubernetes manifests into a cluster (dry run, then Apply)".into(),
                href: cx.import.clone(),
            },
            How::Command {
                words: "Or from the cluster's API, kept in sync by its agent:".into(),
                line: cx.agent(&cx.first_cluster, "--kubernetes"),
            },
        ],
    }
}

/// Step 3: traffic observed (docs/advice.md §2, traffic coverage).
fn traffic(estate: &Estate, cx: &Commands) -> Step {
    let n = estate.services.len();
    let (mut observed, mut declared, mut unknown) = (0, 0, Vec::new());
    for (i, s) in estate.services.iter().enumerate() {
        match estate.traffic_of(i) {
            None => declared += 1,
            Some(f) if f.value.is_some() => observed += 1,
            Some(_) => unknown.push(s.id.clone()),
        }
    }
    let flows = plural(estate.flows.len(), "flow", "flows");
    Step {
        key: "traffic",
        title: "Traffic observed",
        done: n > 0 && unknown.is_empty(),
        status: if n == 0 {
            "Nothing to observe until services are imported.".into()
        } else if unknown.is_empty() {
            format!("Every service's traffic is known ({observed} observed, {declared} declared in the file); {flows}.")
        } else {
            format!(
                "Traffic observed for {observed} of {n} services ({declared} declared in the file); never observed for {}, whose moves stay under \"Not enough evidence\"; {flows}.",
                some(&unknown, 3)
            )
        },
        how: vec![
            How::Command {
                words: "Read every call from the service mesh's metrics once:".into(),
                line: format!("BERTH_TOKEN=… berth import prometheus --server {} --estate {} --url PROMETHEUS_URL", cx.server, cx.id),
            },
            How::Command {
                words: "Or keep it fresh with an agent beside each cluster:".into(),
                line: cx.agent(&cx.first_cluster, "--prometheus PROMETHEUS_URL"),
            },
        ],
    }
}

/// Step 4: round trips measured between clusters on different sites: a
/// measured path between the two clusters or a measured link between
/// their sites (docs/advice.md §3 rungs 2 and 3).
fn round_trips(estate: &Estate, policy: &Policy, cx: &Commands) -> Step {
    let n_clusters = estate.clusters.len();
    let measured = |f: &berth_engine::fact::Fact| f.value.is_some() && f.class == Class::Measured;
    let (mut pairs, mut done_pairs, mut reported, mut estimated, mut unknown_pairs) =
        (0, 0, 0, 0, 0);
    for a in 0..n_clusters {
        for b in a + 1..n_clusters {
            let (sa, sb) = (estate.clusters[a].site, estate.clusters[b].site);
            if sa == sb {
                continue;
            }
            pairs += 1;
            let path = estate
                .paths
                .iter()
                .find(|p| (p.a, p.b) == (a, b) || (p.a, p.b) == (b, a));
            let link = estate
                .links
                .iter()
                .find(|l| (l.a, l.b) == (sa, sb) || (l.a, l.b) == (sb, sa));
            if path.is_some_and(|p| measured(&p.rtt_ms))
                || link.is_some_and(|l| measured(&l.rtt_ms))
            {
                done_pairs += 1;
            } else if path.or(link).is_some_and(|x| x.rtt_ms.value.is_some()) {
                reported += 1;
            } else if estate.sites[sa].coords.is_some() && estate.sites[sb].coords.is_some() {
                estimated += 1;
            } else {
                unknown_pairs += 1;
            }
        }
    }
    let mut rest = Vec::new();
    if reported > 0 {
        rest.push(format!("{reported} reported"));
    }
    if estimated > 0 {
        rest.push(format!("{estimated} estimated from the distance"));
    }
    if unknown_pairs > 0 {
        rest.push(format!(
            "{unknown_pairs} unknown ({} ms guessed)",
            crate::pages::ms_text(policy.rtt.unknown_ms)
        ));
    }
    Step {
        key: "round_trips",
        title: "Round trips measured",
        done: done_pairs == pairs,
        status: if pairs == 0 {
            "Every cluster is on one site: there is no round trip between sites to measure.".into()
        } else if rest.is_empty() {
            format!("All {} measured by agents.", plural(pairs, "pair of clusters on different sites", "pairs of clusters on different sites"))
        } else {
            format!(
                "{done_pairs} of {} measured; {}.",
                plural(pairs, "pair of clusters on different sites", "pairs of clusters on different sites"),
                rest.join(", ")
            )
        },
        how: vec![How::Command {
            words: "Run an agent on each cluster that answers and sends round-trip probes (the port must be reachable from the other clusters):".into(),
            line: cx.agent(&cx.first_cluster, "--probe-listen 0.0.0.0:7070 --probe-address NODE_IP:7070"),
        }],
    }
}

/// The page's own address, as the commands name the server.
fn origin() -> String {
    #[cfg(feature = "hydrate")]
    if let Some(o) = web_sys::window().and_then(|w| w.location().origin().ok()) {
        return o;
    }
    "https://BERTH_SERVER".to_string()
}

/// The steps of a loaded estate and its version, in words.
fn read(l: &Rc<Loaded>, id: &str) -> (Vec<Step>, String) {
    (
        steps(&l.estate, &l.policy, id, &origin()),
        l.meta.version.to_string(),
    )
}

/// The checklist of an estate: `estate` (else the one on show), always
/// (`always`) or only while something is missing.
#[component]
pub fn NextSteps(
    #[prop(optional, into)] estate: Option<String>,
    #[prop(optional)] always: bool,
) -> impl IntoView {
    let auth = expect_context::<Auth>();
    // The steps and the version they were read from.
    let loaded = RwSignal::new(None::<(Vec<Step>, String)>);
    let error = RwSignal::new(None::<String>);
    let fixed = estate.clone();
    Effect::new(move |_| {
        let Some(id) = fixed.clone().or_else(|| auth.estate.get()) else {
            return;
        };
        leptos::task::spawn_local(async move {
            match client::loaded(&id).await {
                Ok(l) => loaded.set(Some(read(&l, &id))),
                Err(f) => error.set(Some(f.message)),
            }
        });
    });
    move || {
        if let Some(e) = error.get() {
            return view! { <p class="error" role="alert" data-testid="next-steps-error">{e}</p> }
                .into_any();
        }
        let Some((list, version)) = loaded.get() else {
            return ().into_any();
        };
        let done = list.iter().filter(|s| s.done).count();
        if done == list.len() && !always {
            return ().into_any();
        }
        let total = list.len();
        view! {
            <section class="next-steps" aria-labelledby="next-steps-h" data-testid="next-steps">
                <h2 id="next-steps-h">{format!("Next steps ({done} of {total} done)")}</h2>
                <p class="hint">"Advice is only as good as the facts it rests on. Each item is read from the estate as it is now (version "{version}"), so it turns done when the facts arrive, whoever sends them."</p>
                <ol>
                    {list.into_iter().map(|s| view! {
                        <li data-step=s.key data-done=if s.done { "true" } else { "false" } class=if s.done { "done" } else { "open" }>
                            <span class="mark" aria-hidden="true">{if s.done { "✓" } else { "○" }}</span>
                            <strong>{s.title}</strong>
                            <span class="visually-hidden">{if s.done { " (done)" } else { " (to do)" }}</span>
                            <p class="status" data-testid="step-status">{s.status}</p>
                            {(!s.done).then(|| view! {
                                <ul class="how">
                                    {s.how.into_iter().map(|h| match h {
                                        How::Page { words, href } => view! { <li><a href=href>{words}</a></li> }.into_any(),
                                        How::Command { words, line } => view! { <li>{words}<pre class="command"><code>{line}</code></pre></li> }.into_any(),
                                    }).collect_view()}
                                </ul>
                            })}
                        </li>
                    }).collect_view()}
                </ol>
            </section>
        }
        .into_any()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn estate(v: serde_json::Value) -> Estate {
        berth_engine::front::read_estate(&v.to_string()).unwrap()
    }

    fn base() -> serde_json::Value {
        json!({
            "schema": 1, "name": "Lab",
            "sites": [
                {"id": "fra", "lat": 50.11, "lon": 8.68, "jurisdiction": "eu"},
                {"id": "dub", "lat": 53.35, "lon": -6.26, "jurisdiction": "eu"},
            ],
            "clusters": [
                {"id": "c-fra-1", "site": "fra", "tier": "prod", "trust_zone": "general", "health": "healthy", "cpu_total": 32, "memory_total_gib": 128},
                {"id": "c-fra-2", "site": "fra", "tier": "prod", "trust_zone": "general", "health": "healthy", "cpu_total": 32, "memory_total_gib": 128, "cpu_free": 8, "memory_free_gib": 30},
                {"id": "c-dub-1", "site": "dub", "tier": "prod", "trust_zone": "general", "health": "healthy", "cpu_total": 16, "memory_total_gib": 64},
            ],
            "links": [{"a": "fra", "b": "dub", "rtt_ms": {"value": 26.5, "class": "reported", "source": "published: Azure"}}],
            "services": [],
        })
    }

    fn by_key<'a>(s: &'a [Step], key: &str) -> &'a Step {
        s.iter().find(|x| x.key == key).unwrap()
    }

    #[test]
    fn a_new_estate_has_everything_to_do_and_says_what_it_holds() {
        let s = steps(&estate(base()), &Policy::default(), "lab", "http://b");
        assert!(s.iter().all(|x| !x.done), "{s:?}");
        assert_eq!(
            by_key(&s, "capacities").status,
            "1 of 3 clusters know their free CPU and memory; unknown on c-dub-1, c-fra-1: a move there is \"can't tell\"."
        );
        assert_eq!(
            by_key(&s, "round_trips").status,
            "0 of 2 pairs of clusters on different sites measured; 2 reported."
        );
        match &by_key(&s, "capacities").how[0] {
            How::Command { line, .. } => assert_eq!(
                line,
                "BERTH_TOKEN=… berth agent --server http://b --estate lab --cluster c-dub-1 --kubernetes"
            ),
            h => panic!("{h:?}"),
        }
    }

    #[test]
    fn items_turn_done_as_the_facts_arrive() {
        let mut v = base();
        // Imported services: traffic unknown (a `kubernetes:` source).
        v["services"] = json!([
            {"id": "web", "owner": "t", "cluster": "c-fra-1", "cpu": 1, "memory_gib": 1, "source": "kubernetes:c-fra-1/default/Deployment/web"},
            {"id": "db", "owner": "t", "cluster": "c-fra-1", "cpu": 1, "memory_gib": 1, "source": "kubernetes:c-fra-1/default/Deployment/db"},
        ]);
        let s = steps(&estate(v.clone()), &Policy::default(), "lab", "http://b");
        assert!(by_key(&s, "services").done);
        assert!(!by_key(&s, "traffic").done);
        assert!(
            by_key(&s, "traffic")
                .status
                .starts_with("Traffic observed for 0 of 2 services"),
            "{}",
            by_key(&s, "traffic").status
        );
        // A flow batch observed both.
        let seen = json!({"value": 60, "class": "measured", "source": "agent", "observed_at": "2026-12-07T10:00:00Z"});
        v["services"][0]["traffic"] = seen.clone();
        v["services"][1]["traffic"] = seen;
        v["flows"] = json!([{"from": "web", "to": "db", "weight": 3, "mb_s": 0.2}]);
        let s = steps(&estate(v.clone()), &Policy::default(), "lab", "http://b");
        assert!(by_key(&s, "traffic").done, "{s:?}");
        assert_eq!(
            by_key(&s, "traffic").status,
            "Every service's traffic is known (2 observed, 0 declared in the file); 1 flow."
        );
        // Agents measured one path across sites; a link measured covers
        // every pair of its sites.
        v["paths"] = json!([{"a": "c-fra-1", "b": "c-dub-1", "rtt_ms": {"value": 25, "class": "measured", "source": "agent"}}]);
        let s = steps(&estate(v.clone()), &Policy::default(), "lab", "http://b");
        assert_eq!(
            by_key(&s, "round_trips").status,
            "1 of 2 pairs of clusters on different sites measured; 1 reported."
        );
        v["links"][0]["rtt_ms"]["class"] = json!("measured");
        assert!(
            by_key(
                &steps(&estate(v), &Policy::default(), "lab", "http://b"),
                "round_trips"
            )
            .done
        );
    }

    #[test]
    fn pairs_without_a_figure_are_estimated_or_unknown() {
        let mut v = base();
        v["links"] = json!([]);
        let s = steps(&estate(v.clone()), &Policy::default(), "lab", "http://b");
        assert_eq!(
            by_key(&s, "round_trips").status,
            "0 of 2 pairs of clusters on different sites measured; 2 estimated from the distance."
        );
        v["sites"][1] = json!({"id": "dub", "jurisdiction": "eu"});
        let s = steps(&estate(v), &Policy::default(), "lab", "http://b");
        assert!(by_key(&s, "round_trips")
            .status
            .ends_with("2 unknown (80 ms guessed)."));
    }
}
