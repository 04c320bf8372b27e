//! Import, into the estate shown: Kubernetes manifests into one of its
//! clusters (a dry run first, whose report says what would be added,
//! changed and removed and every note; Apply only for exactly the input
//! that was checked), or a whole estate file replacing it (checked by the
//! engine in the browser, with a diff against the current file by id).

use std::collections::BTreeMap;

use berth_api::{EstateSummary, ImportAnswer, KubernetesImportRequest, ManifestFile};
use leptos::prelude::*;
use serde_json::Value;

use super::new_estate::Problem;
use super::{arr, num, s};
use crate::client;
use crate::common::{Auth, Gate};

/// What changed in one kind of entry (sites, clusters, …), by id.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KindDiff {
    pub kind: &'static str,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
    pub unchanged: usize,
}

/// How an entry of one kind is named in the diff.
type EntryName = fn(&Value) -> String;

/// The kinds of entry an estate file has, and how an entry of each is
/// named (its id, or its two ends).
const KINDS: &[(&str, EntryName)] = &[
    ("sites", |v| s(&v["id"])),
    ("clusters", |v| s(&v["id"])),
    ("links", |v| format!("{}↔{}", s(&v["a"]), s(&v["b"]))),
    ("paths", |v| format!("{}↔{}", s(&v["a"]), s(&v["b"]))),
    ("services", |v| s(&v["id"])),
    ("flows", |v| format!("{}→{}", s(&v["from"]), s(&v["to"]))),
];

/// Both estate files entry by entry: what the new one adds, removes and
/// changes against the old one, per kind, in id order.
pub fn diff(old: &Value, new: &Value) -> Vec<KindDiff> {
    KINDS
        .iter()
        .map(|(kind, name_of)| {
            let by_id = |doc: &Value| -> BTreeMap<String, Value> {
                arr(&doc[*kind])
                    .into_iter()
                    .map(|e| (name_of(&e), e))
                    .collect()
            };
            let (a, b) = (by_id(old), by_id(new));
            let mut d = KindDiff {
                kind,
                ..Default::default()
            };
            for (id, e) in &b {
                match a.get(id) {
                    None => d.added.push(id.clone()),
                    Some(x) if x != e => d.changed.push(id.clone()),
                    Some(_) => d.unchanged += 1,
                }
            }
            d.removed = a
                .keys()
                .filter(|id| !b.contains_key(*id))
                .cloned()
                .collect();
            d
        })
        .collect()
}

/// An estate file's text in the engine's canonical form (what the server
/// stores), or the engine's errors with their lines.
pub fn canonical(text: &str) -> Result<Value, Vec<Problem>> {
    berth_engine::front::read_estate(text)
        .map(|e| berth_engine::export::to_file(&e))
        .map_err(|errors| errors.iter().map(Problem::of).collect())
}

/// The request body of a Kubernetes import of these files.
pub fn kubernetes_body(
    cluster: &str,
    files: &[(String, String)],
    dry_run: bool,
) -> KubernetesImportRequest {
    KubernetesImportRequest {
        cluster: cluster.to_string(),
        files: ManifestFile::all(files),
        skip_invalid: false,
        dry_run,
        incomplete: false,
    }
}

/// A request or size as the import report writes it: up to four decimals
/// (64 MiB is 0.0625 GiB, which three would round), no trailing zeros;
/// "unknown" when nobody declared it.
pub fn amount(v: Option<f64>) -> String {
    // Four decimals: the finest Kubernetes quantities the import meets
    // (a few MiB, a few millicores) still show as more than zero.
    const DIGITS: usize = 4;
    let t = num(&Value::from(v), DIGITS);
    if !t.contains('.') {
        return t;
    }
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The name pasted manifests are reported under.
const PASTED: &str = "pasted.yaml";

#[component]
pub fn ImportPage() -> impl IntoView {
    let auth = expect_context::<Auth>();
    let may_operate = move || matches!(auth.session.get(), Some(Some(s)) if s.may_operate());
    let current = RwSignal::new(None::<Value>);
    let version = RwSignal::new(None::<i64>);
    let load_error = RwSignal::new(None::<String>);
    let reload = move || {
        let Some(id) = auth.estate.get_untracked() else {
            return;
        };
        leptos::task::spawn_local(async move {
            let summary =
                client::get_typed::<EstateSummary>(&berth_api::endpoint::get_estate(&id)).await;
            let file =
                client::request_text("GET", &berth_api::endpoint::export_estate_file(&id), None)
                    .await;
            match (summary, file) {
                (Ok(s), Ok(text)) => {
                    version.set(Some(s.meta.version));
                    match canonical(&text) {
                        Ok(doc) => current.set(Some(doc)),
                        Err(_) => load_error.set(Some(
                            "The stored estate file does not load in this page's engine; reload the page.".into(),
                        )),
                    }
                }
                (Err(f), _) | (_, Err(f)) => load_error.set(Some(f.message)),
            }
        });
    };
    Effect::new(move |_| {
        if auth.estate.get().is_some() && may_operate() {
            reload();
        }
    });
    let estate_label = move || auth.estate.get().unwrap_or_default();
    let form = move || {
        view! {
                    <p class="provenance" data-testid="import-target">
                        "Into estate "<strong>{estate_label}</strong>
                        {move || version.get().map(|v| format!(", now at version {v}"))}
                        ". Nothing is written until you press Apply."
                    </p>
                    {move || load_error.get().map(|m| view! { <p class="error" role="alert">{m}</p> })}
                    <KubernetesImport current=current.into() version=version reload=reload/>
                    <EstateFileImport current=current.into() version=version reload=reload/>
        }
    };
    view! {
        <h1>"Import"</h1>
        <Gate>
            {move || match auth.session.get() {
                Some(Some(_)) if !may_operate() => view! {
                    <p class="notice" role="status" data-testid="operators-only">"Importing changes the estate: it is for operators and administrators. Your role may only look; ask an administrator for an operator account."</p>
                }.into_any(),
                Some(Some(_)) => form().into_any(),
                _ => view! { <p class="loading" role="status">"Loading…"</p> }.into_any(),
            }}
        </Gate>
    }
}

/// What an Apply wrote, or that it had nothing to write.
fn applied_notice(a: ImportAnswer) -> impl IntoView {
    let text = if a.written {
        format!(
            "Applied: estate {} is now at version {}.",
            a.estate, a.version
        )
    } else {
        format!(
            "Nothing to write: estate {} stays at version {}.",
            a.estate, a.version
        )
    };
    view! { <p class="notice" role="status" data-testid="k8s-applied">{text}</p> }
}

/// The manifest files picked, with their lines.
fn picked_view(files: &[(String, String)]) -> Option<impl IntoView> {
    let names: Vec<String> = files
        .iter()
        .map(|(n, t)| format!("{n} ({} lines)", t.lines().count()))
        .collect();
    (!names.is_empty())
        .then(|| view! { <span class="hint" data-testid="k8s-picked">{names.join(", ")}</span> })
}

/// The estate's clusters to import into, the chosen one selected.
fn cluster_options(clusters: Vec<String>, chosen: String) -> impl IntoView {
    clusters
        .into_iter()
        .map(|c| {
            let selected = c == chosen;
            view! { <option value=c.clone() selected=selected>{c.clone()}</option> }
        })
        .collect_view()
}

#[component]
fn KubernetesImport(
    current: Signal<Option<Value>>,
    version: RwSignal<Option<i64>>,
    reload: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let auth = expect_context::<Auth>();
    let cluster = RwSignal::new(String::new());
    let files = RwSignal::new(Vec::<(String, String)>::new());
    let pasted = RwSignal::new(String::new());
    // The input (cluster and files) of the last dry run that succeeded:
    // Apply sends exactly that, and only while it is still the input.
    let checked = RwSignal::new(None::<KubernetesImportRequest>);
    let report = RwSignal::new(None::<ImportAnswer>);
    let applied = RwSignal::new(None::<ImportAnswer>);
    let problems = RwSignal::new(Vec::<berth_api::InputError>::new());
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);

    let clusters = move || {
        current
            .get()
            .map(|d| {
                arr(&d["clusters"])
                    .iter()
                    .map(|c| s(&c["id"]))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    // The first cluster is chosen once the estate is known.
    Effect::new(move |_| {
        if cluster.get_untracked().is_empty() {
            if let Some(first) = clusters().into_iter().next() {
                cluster.set(first);
            }
        }
    });
    let input = Memo::new(move |_| {
        let mut all = files.get();
        let p = pasted.get();
        if !p.trim().is_empty() {
            all.push((PASTED.to_string(), p));
        }
        kubernetes_body(&cluster.get(), &all, true)
    });
    let input_empty = move || input.with(|i| i.files.is_empty());
    // Any change of the input (even back to what was checked) needs a new
    // dry run before Apply.
    Effect::new(move |_| {
        let now = input.get();
        if checked.get_untracked().is_some_and(|c| c != now) {
            checked.set(None);
        }
    });
    let stale_report =
        move || checked.get().is_none() && report.with(|r| r.as_ref().is_some_and(|r| !r.written));
    let may_apply = move || !busy.get() && checked.get().as_ref() == Some(&input.get());

    let send = move |dry_run: bool| {
        let Some(id) = auth.estate.get_untracked() else {
            return;
        };
        let body = input.get_untracked();
        let sent = KubernetesImportRequest {
            dry_run,
            ..body.clone()
        };
        busy.set(true);
        error.set(None);
        problems.set(Vec::new());
        if dry_run {
            applied.set(None);
        }
        leptos::task::spawn_local(async move {
            let path = berth_api::endpoint::import_kubernetes(&id);
            match client::send_typed::<_, ImportAnswer>("POST", &path, &sent).await {
                Ok(a) => {
                    if dry_run {
                        report.set(Some(a));
                        checked.set(Some(body));
                    } else {
                        version.set(Some(a.version));
                        report.set(Some(a.clone()));
                        applied.set(Some(a));
                        checked.set(None);
                        // Every page computes from the new version.
                        client::forget_snapshot();
                        reload();
                    }
                }
                Err(f) => {
                    checked.set(None);
                    report.set(None);
                    let listed = !f.errors.is_empty();
                    problems.set(f.errors.clone());
                    error.set(Some(if listed { f.summary } else { f.message }));
                }
            }
            busy.set(false);
        });
    };
    let on_files = move |ev: leptos::ev::Event| {
        client::read_picked(&ev, move |r| match r {
            Ok(list) => files.set(list),
            Err(f) => error.set(Some(f.message)),
        });
    };

    view! {
        <section aria-labelledby="k8s-h" class="import-part">
            <h2 id="k8s-h">"Kubernetes manifests into a cluster"</h2>
            <p class="hint">"Deployments, StatefulSets and DaemonSets (with their Services, claims and environment addresses) become services of the cluster; a re-import updates what an earlier import of that cluster wrote and leaves the rest alone."</p>
            <div class="entry-grid">
                <div class="field">
                    <label for="k8s-cluster">"Cluster"</label>
                    <select id="k8s-cluster" on:change=move |ev| cluster.set(event_target_value(&ev)) prop:value=move || cluster.get()>
                        {move || cluster_options(clusters(), cluster.get())}
                    </select>
                </div>
                <div class="field wide">
                    <label for="k8s-files">"Manifest files"</label>
                    <input id="k8s-files" type="file" multiple accept=".yaml,.yml,.json" on:change=on_files/>
                    {move || picked_view(&files.get())}
                </div>
            </div>
            <label for="k8s-paste">"Or paste manifests (YAML)"</label>
            <textarea id="k8s-paste" class="source" rows="6" spellcheck="false" bind:value=pasted></textarea>
            <div class="actions">
                <button type="button" on:click=move |_| send(true) disabled=move || busy.get() || input_empty()>"Check (dry run)"</button>
                " "
                <button type="button" data-testid="k8s-apply" on:click=move |_| send(false) disabled=move || !may_apply()>"Apply"</button>
                {move || (!may_apply() && !busy.get()).then(|| view! { <span class="hint">" Apply is possible after a dry run of exactly this input."</span> })}
            </div>
            {move || error.get().map(|m| view! { <p class="error" role="alert" data-testid="k8s-error">{m}</p> })}
            {move || {
                let list = problems.get();
                (!list.is_empty()).then(|| view! { <ImportProblems list=list/> })
            }}
            {move || applied.get().map(applied_notice)}
            {move || stale_report().then(|| view! {
                <p class="notice" role="status" data-testid="k8s-stale">"The input changed since this dry run: check it again before applying."</p>
            })}
            {move || report.get().map(|v| view! { <DryRunReport answer=v/> })}
        </section>
    }
}

/// The manifests' errors (a 422), each with its file, line, document and
/// object.
#[component]
fn ImportProblems(list: Vec<berth_api::InputError>) -> impl IntoView {
    view! {
        <ul class="error problems" data-testid="k8s-problems">
            {list.into_iter().map(|e| {
                let mut at = e.file.clone().unwrap_or_default();
                if let Some(l) = e.line {
                    at.push_str(&format!(" line {l}"));
                }
                if let Some(d) = e.document {
                    at.push_str(&format!(", document {d}"));
                }
                if let Some(o) = &e.object {
                    at.push_str(&format!(", {o}"));
                }
                let path = e.path.clone();
                let path = (path != "/" && !path.is_empty()).then(|| view! { " "<code>{path}</code> });
                view! {
                    <li><strong>{at}</strong>{path}": "{e.message}</li>
                }
            }).collect_view()}
        </ul>
    }
}

/// What a dry run (or an apply) of a Kubernetes import reports: the
/// server's answer and its report.
#[component]
fn DryRunReport(answer: ImportAnswer) -> impl IntoView {
    let written = answer.written;
    let r = answer.report;
    let flows = |v: &[berth_api::FlowRef]| {
        v.iter()
            .map(|f| format!("{} → {}", f.from, f.to))
            .collect::<Vec<_>>()
    };
    let names = |title: &'static str, testid: &'static str, items: Vec<String>| {
        (!items.is_empty()).then(|| {
            view! {
                <h4>{format!("{title} ({})", items.len())}</h4>
                <ul class="names" data-testid=testid>{items.into_iter().map(|i| view! { <li>{i}</li> }).collect_view()}</ul>
            }
        })
    };
    let changed: Vec<String> = r
        .changed
        .iter()
        .map(|c| format!("{} ({})", c.id, c.fields.join(", ")))
        .collect();
    let headline = format!(
        "{} services into cluster {}: {} added, {} changed, {} removed, {} unchanged; flows {} added, {} updated, {} removed.",
        r.services.len(),
        r.cluster,
        r.added.len(),
        r.changed.len(),
        r.removed.len(),
        r.unchanged,
        r.flows_added.len(),
        r.flows_updated.len(),
        r.flows_removed.len(),
    );
    let notes = r.notes;
    // The report's skipped objects, as the API's input errors.
    let skipped: Vec<berth_api::InputError> = r.skipped.into_iter().map(Into::into).collect();
    let ignored: Vec<String> = r.ignored.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let services = r.services;
    view! {
        <div class="report" data-testid="k8s-report" data-written=written.to_string()>
            <h3>{if written { "Applied" } else { "Dry run: what Apply would do" }}</h3>
            <p data-testid="k8s-headline">{headline}</p>
            {names("Added", "k8s-added", r.added)}
            {names("Changed", "k8s-changed", changed)}
            {names("Removed", "k8s-removed", r.removed)}
            {names("Kept as they were (skipped, or the input is incomplete)", "k8s-kept", r.kept)}
            {names("Flows added", "k8s-flows-added", flows(&r.flows_added))}
            {names("Flows updated", "k8s-flows-updated", flows(&r.flows_updated))}
            {names("Flows removed", "k8s-flows-removed", flows(&r.flows_removed))}
            <h4>{format!("Notes ({})", notes.len())}</h4>
            {if notes.is_empty() {
                view! { <p class="empty">"No notes: every request was declared and nothing is pinned."</p> }.into_any()
            } else {
                view! {
                    <ul class="notes" data-testid="k8s-notes">
                        {notes.into_iter().map(|n| view! {
                            <li data-code=n.code.as_str()>
                                <code>{n.code.as_str()}</code>" "
                                {n.service.map(|sv| view! { <strong>{sv}</strong>": " })}
                                {n.message}
                            </li>
                        }).collect_view()}
                    </ul>
                }.into_any()
            }}
            {(!skipped.is_empty()).then(|| view! {
                <h4>{format!("Skipped, could not be understood ({})", skipped.len())}</h4>
                <ImportProblems list=skipped/>
            })}
            {(!ignored.is_empty()).then(|| view! { <p class="hint">"Not imported, by kind: "{ignored.join(", ")}</p> })}
            {(!services.is_empty()).then(|| view! {
                <table class="import-services" data-testid="k8s-services">
                    <thead><tr><th scope="col">"service"</th><th scope="col" class="n">"cores"</th><th scope="col" class="n">"GiB"</th><th scope="col" class="n">"data GB"</th><th scope="col">"pinned"</th><th scope="col">"local volumes"</th></tr></thead>
                    <tbody>
                        {services.into_iter().map(|sv| {
                            // A fact the import could not read is unknown,
                            // never 0 GB or "no" (the notes say why).
                            let unknown = |f: &str| sv.unknown.iter().any(|u| u == f);
                            let data = (!unknown("data_gb")).then_some(sv.data_gb);
                            let local = if unknown("constraints.local_volumes") {
                                "unknown"
                            } else if sv.local_volumes {
                                "yes"
                            } else {
                                ""
                            };
                            view! {
                                <tr>
                                    <th scope="row">{sv.id}</th>
                                    <td class="n">{amount(sv.cpu)}</td>
                                    <td class="n">{amount(sv.memory_gib)}</td>
                                    <td class="n">{amount(data)}</td>
                                    <td>{if sv.pinned { "yes" } else { "" }}</td>
                                    <td>{local}</td>
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
            })}
        </div>
    }
}

#[component]
fn EstateFileImport(
    current: Signal<Option<Value>>,
    version: RwSignal<Option<i64>>,
    reload: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let auth = expect_context::<Auth>();
    let text = RwSignal::new(String::new());
    let file_name = RwSignal::new(None::<String>);
    // The text of the last check that passed, with its diff.
    let checked = RwSignal::new(None::<(String, Vec<KindDiff>, String)>);
    let problems = RwSignal::new(Vec::<Problem>::new());
    let applied = RwSignal::new(None::<EstateSummary>);
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let may_apply =
        move || !busy.get() && checked.with(|c| c.as_ref().map(|c| &c.0) == Some(&text.get()));
    // Editing the text after a check needs a new check, even if the edit
    // is undone.
    Effect::new(move |_| {
        let now = text.get();
        if checked.with_untracked(|c| c.as_ref().is_some_and(|c| c.0 != now)) {
            checked.set(None);
        }
    });

    let on_file = move |ev: leptos::ev::Event| {
        client::read_picked(&ev, move |r| match r {
            Ok(list) => {
                if let Some((name, t)) = list.into_iter().next() {
                    file_name.set(Some(name));
                    text.set(t);
                }
            }
            Err(f) => error.set(Some(f.message)),
        });
    };
    let check = move |_| {
        let t = text.get_untracked();
        error.set(None);
        applied.set(None);
        match canonical(&t) {
            Ok(new) => {
                problems.set(Vec::new());
                let old = current.get_untracked().unwrap_or(Value::Null);
                let renamed = if old["name"] != new["name"] {
                    format!(
                        "The estate's name changes from {} to {}.",
                        old["name"], new["name"]
                    )
                } else {
                    String::new()
                };
                checked.set(Some((t, diff(&old, &new), renamed)));
            }
            Err(p) => {
                checked.set(None);
                problems.set(p);
            }
        }
    };
    let apply = move |_| {
        let Some(id) = auth.estate.get_untracked() else {
            return;
        };
        let t = text.get_untracked();
        let content_type = match berth_engine::Format::sniff(&t) {
            berth_engine::Format::Json => "application/json",
            berth_engine::Format::Yaml => "application/yaml",
        };
        busy.set(true);
        error.set(None);
        leptos::task::spawn_local(async move {
            let path = berth_api::endpoint::import_estate_file(&id);
            let answer = client::request_typed("PUT", &path, Some(t), content_type)
                .await
                .and_then(|text| client::typed_answer::<EstateSummary>(&path, &text));
            match answer {
                Ok(summary) => {
                    version.set(Some(summary.meta.version));
                    applied.set(Some(summary));
                    checked.set(None);
                    client::forget_snapshot();
                    reload();
                }
                Err(f) => {
                    let listed = !f.errors.is_empty();
                    problems.set(f.errors.iter().map(Problem::from_input).collect());
                    checked.set(None);
                    error.set(Some(if listed { f.summary } else { f.message }));
                }
            }
            busy.set(false);
        });
    };

    view! {
        <section aria-labelledby="file-h" class="import-part">
            <h2 id="file-h">"An estate file replacing the estate"</h2>
            <p class="hint">"The whole estate, JSON or YAML (docs/estate-format.md): everything it does not list is gone after Apply. Export the current one with GET /api/estates/{id}/file to edit it."</p>
            <label for="estate-file">"Estate file"</label>
            <input id="estate-file" type="file" accept=".json,.yaml,.yml" on:change=on_file/>
            {move || file_name.get().map(|n| view! { <span class="hint">" "{n}</span> })}
            <div class="source-grid">
                <div>
                    <label for="estate-text">"Estate file text"</label>
                    <textarea id="estate-text" class="source" rows="14" spellcheck="false" bind:value=text></textarea>
                </div>
                {move || {
                    let list = problems.get();
                    (!list.is_empty()).then(|| view! {
                        <ul class="error problems" role="alert" data-testid="estate-file-problems">
                            {list.into_iter().map(|p| {
                                let at = match p.line {
                                    Some(l) => format!("line {l}"),
                                    None => "no line".to_string(),
                                };
                                view! { <li><strong>{at}</strong>" "<code>{p.path}</code>": "{p.message}</li> }
                            }).collect_view()}
                        </ul>
                    })
                }}
            </div>
            <div class="actions">
                <button type="button" on:click=check disabled=move || busy.get() || text.get().trim().is_empty()>"Check"</button>
                " "
                <button type="button" data-testid="file-apply" on:click=apply disabled=move || !may_apply()>"Apply"</button>
                {move || (!may_apply() && !busy.get()).then(|| view! { <span class="hint">" Apply is possible after a check of exactly this text."</span> })}
            </div>
            {move || error.get().map(|m| view! { <p class="error" role="alert">{m}</p> })}
            {move || applied.get().map(|v| view! {
                <p class="notice" role="status" data-testid="file-applied">{format!("Applied: estate {} is now at version {}.", v.meta.id, v.meta.version)}</p>
            })}
            {move || checked.get().map(|(_, d, renamed)| view! { <FileDiff diff=d renamed=renamed/> })}
        </section>
    }
}

#[component]
fn FileDiff(diff: Vec<KindDiff>, renamed: String) -> impl IntoView {
    let any = diff
        .iter()
        .any(|d| !d.added.is_empty() || !d.removed.is_empty() || !d.changed.is_empty())
        || !renamed.is_empty();
    view! {
        <div class="report" data-testid="file-diff">
            <h3>"Check passed: what Apply would change"</h3>
            {(!renamed.is_empty()).then(|| view! { <p>{renamed}</p> })}
            {if any {
                view! {
                    <table class="diff">
                        <thead><tr><th scope="col">"kind"</th><th scope="col">"added"</th><th scope="col">"removed"</th><th scope="col">"changed"</th><th scope="col">"unchanged"</th></tr></thead>
                        <tbody>
                            {diff.into_iter().map(|d| {
                                let cell = |v: Vec<String>| if v.is_empty() { "—".to_string() } else { v.join(", ") };
                                view! {
                                    <tr data-kind=d.kind>
                                        <th scope="row">{d.kind}</th>
                                        <td>{cell(d.added)}</td>
                                        <td>{cell(d.removed)}</td>
                                        <td>{cell(d.changed)}</td>
                                        <td class="n">{d.unchanged}</td>
                                    </tr>
                                }
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any()
            } else {
                view! { <p class="empty">"Nothing: the file says what the estate says now."</p> }.into_any()
            }}
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SAMPLE: &str = include_str!("../../../examples/estates/sample.json");

    #[test]
    fn the_diff_names_entries_by_id() {
        let old = canonical(SAMPLE).unwrap();
        let mut edited = old.clone();
        // A service no flow names, so the file stays valid without it.
        let called: Vec<String> = arr(&old["flows"])
            .iter()
            .flat_map(|f| [s(&f["from"]), s(&f["to"])])
            .collect();
        let gone = arr(&old["services"])
            .iter()
            .position(|x| !called.contains(&s(&x["id"])))
            .expect("the sample has a service without flows");
        let removed = s(&old["services"][gone]["id"]);
        edited["services"].as_array_mut().unwrap().remove(gone);
        edited["clusters"][0]["cpu_total"] = json!(1000);
        edited["sites"]
            .as_array_mut()
            .unwrap()
            .push(json!({"id": "zrh", "lat": 47.38, "lon": 8.54, "jurisdiction": "ch"}));
        let new = canonical(&edited.to_string()).unwrap();
        let d = diff(&old, &new);
        let of = |k: &str| d.iter().find(|x| x.kind == k).unwrap().clone();
        assert_eq!(of("sites").added, vec!["zrh"]);
        assert_eq!(of("clusters").changed, vec![s(&old["clusters"][0]["id"])]);
        assert_eq!(of("services").removed, vec![removed]);
        assert!(of("flows").unchanged > 0);
        assert!(diff(&old, &old)
            .iter()
            .all(|x| x.added.is_empty() && x.removed.is_empty() && x.changed.is_empty()));
    }

    #[test]
    fn a_bad_file_is_refused_with_lines() {
        let bad = SAMPLE.replacen("\"health\": \"healthy\"", "\"health\": \"fine\"", 1);
        let p = canonical(&bad).unwrap_err();
        assert!(
            p.iter()
                .any(|p| p.line.is_some() && p.path.ends_with("/health")),
            "{p:?}"
        );
        let yaml = canonical("schema: 1\nname: [unclosed\n").unwrap_err();
        assert!(!yaml.is_empty());
    }

    #[test]
    fn amounts_read_like_the_cli_report() {
        assert_eq!(amount(Some(0.0625)), "0.0625");
        assert_eq!(amount(Some(0.2)), "0.2");
        assert_eq!(amount(Some(0.0)), "0");
        assert_eq!(amount(None), "unknown");
    }

    #[test]
    fn the_body_is_what_the_server_reads() {
        let b = kubernetes_body("c1", &[("a.yaml".into(), "kind: X".into())], true);
        assert_eq!(b.files[0].name, "a.yaml");
        assert!(b.dry_run);
        assert!(!b.skip_invalid);
        // What the page sends is what the server reads: the API's type.
        let sent: Value = serde_json::to_value(&b).unwrap();
        assert_eq!(sent["files"][0]["name"], "a.yaml");
        assert_eq!(sent["dry_run"], true);
        assert_eq!(sent["skip_invalid"], false);
        assert_eq!(
            serde_json::from_value::<KubernetesImportRequest>(sent).unwrap(),
            b
        );
    }
}
