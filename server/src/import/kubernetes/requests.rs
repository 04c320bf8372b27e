//! Requests: the CPU and memory a pod asks for, from its containers.

use super::*;

/// A request for one resource in base units (millicores or bytes);
/// `None` = unknown.
pub(super) type Amount = Option<i128>;

/// Sums saturate: an absurd total stays absurd (and is refused by the
/// range check of `workload`) instead of wrapping or turning unknown.
pub(super) fn add(a: Amount, b: Amount) -> Amount {
    Some(a?.saturating_add(b?))
}

/// The two resources, in estate field order.
pub(super) const RESOURCES: [(&str, &str); 2] = [("cpu", "CPU"), ("memory", "memory")];

/// One container's request per resource: `requests`, else `limits`
/// (Kubernetes defaults a missing request to the limit), else unknown.
pub(super) fn container_request(
    r: &mut Reader,
    path: &str,
    notes: &mut Vec<(NoteCode, String)>,
) -> [Amount; 2] {
    let name = r
        .at(&format!("{path}/name"))
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_string();
    let mut out = [None, None];
    let mut from_limit = Vec::new();
    for (k, (res, word)) in RESOURCES.iter().enumerate() {
        let req = format!("{path}/resources/requests/{res}");
        let lim = format!("{path}/resources/limits/{res}");
        let value = if r.at(&req).is_some() {
            r.quantity(&req).map(|q| (q, &req))
        } else if r.at(&lim).is_some() {
            let q = r.quantity(&lim);
            if q.is_some() {
                from_limit.push(*word);
            }
            q.map(|q| (q, &lim))
        } else {
            None
        };
        out[k] = value.and_then(|(q, at)| r.scaled(q, at, k == 0));
    }
    if !from_limit.is_empty() {
        let what = match from_limit.as_slice() {
            [one] => format!("a {one} limit but no request"),
            _ => format!("{} limits but no requests", from_limit.join(" and ")),
        };
        notes.push((
            NoteCode::RequestFromLimit,
            format!(
                "container {name} declares {what}: the request is the limit, as Kubernetes sets it"
            ),
        ));
    }
    out
}

/// "CPU", "memory" or "CPU and memory" for the resources flagged.
pub(super) fn resource_words(which: [bool; 2]) -> String {
    RESOURCES
        .iter()
        .zip(which)
        .filter(|(_, w)| *w)
        .map(|((_, word), _)| *word)
        .collect::<Vec<_>>()
        .join(" and ")
}

/// The pod's effective request per resource, by the Kubernetes rule:
/// `max(Σ app containers + Σ sidecars, max over init containers i of
/// (request_i + Σ sidecars started before i))`, plus the pod overhead.
/// Sidecars are init containers with `restartPolicy: Always`; they run for
/// the pod's life, so like app containers a missing request makes the
/// result unknown. A plain init container without a request is left out
/// of the max with a note. Returns the amounts and the notes.
pub(super) fn pod_request(r: &mut Reader, spec: &str) -> ([Amount; 2], Vec<(NoteCode, String)>) {
    let mut notes = Vec::new();
    let mut apps = [Some(0i128), Some(0i128)];
    let mut missing: [Vec<String>; 2] = [Vec::new(), Vec::new()];
    let containers = r.list(&format!("{spec}/containers"));
    if containers.is_empty() && r.errors.is_empty() {
        r.err(
            &format!("{spec}/containers"),
            "a pod needs at least one container".into(),
        );
    }
    let name_at = |r: &Reader, p: &str| {
        r.at(&format!("{p}/name"))
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string()
    };
    for i in 0..containers.len() {
        let p = format!("{spec}/containers/{i}");
        let req = container_request(r, &p, &mut notes);
        for k in 0..2 {
            if req[k].is_none() {
                missing[k].push(name_at(r, &p));
            }
            apps[k] = add(apps[k], req[k]);
        }
    }
    let mut sidecars = [Some(0i128), Some(0i128)];
    let mut init_max = [Some(0i128), Some(0i128)];
    let inits = r.list(&format!("{spec}/initContainers"));
    for i in 0..inits.len() {
        let p = format!("{spec}/initContainers/{i}");
        let sidecar = r.string(&format!("{p}/restartPolicy")) == Some("Always");
        let req = container_request(r, &p, &mut notes);
        let mut left_out = [false, false];
        for k in 0..2 {
            if sidecar {
                if req[k].is_none() {
                    missing[k].push(format!("{} (sidecar)", name_at(r, &p)));
                }
                sidecars[k] = add(sidecars[k], req[k]);
            } else if let Some(v) = req[k] {
                let peak = sidecars[k].map(|s| s.saturating_add(v));
                init_max[k] = match (init_max[k], peak) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    _ => None,
                };
            } else {
                left_out[k] = true;
            }
        }
        if left_out.iter().any(|&x| x) {
            notes.push((
                NoteCode::InitContainerWithoutRequest,
                format!(
                    "init container {} declares no {} request; it runs to completion before the app starts, so it is left out",
                    name_at(r, &p),
                    resource_words(left_out).replace(" and ", " or ")
                ),
            ));
        }
    }
    let mut out = [None, None];
    for k in 0..2 {
        let running = add(apps[k], sidecars[k]);
        out[k] = match (running, init_max[k]) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
        let overhead = format!("{spec}/overhead/{}", RESOURCES[k].0);
        if r.at(&overhead).is_some() {
            let o = r.amount(&overhead, k == 0);
            out[k] = add(out[k], o);
        }
    }
    // One note when the same containers miss both requests.
    let groups: Vec<([bool; 2], &Vec<String>)> = if missing[0] == missing[1] {
        vec![([true, true], &missing[0])]
    } else {
        vec![([true, false], &missing[0]), ([false, true], &missing[1])]
    };
    for (which, names) in groups {
        if names.is_empty() {
            continue;
        }
        let one = names.len() == 1;
        notes.push((
            NoteCode::UnknownRequest,
            format!(
                "{} request{} unknown: container{} {} declare{} none",
                resource_words(which),
                if which == [true, true] { "s" } else { "" },
                if one { "" } else { "s" },
                names.join(", "),
                if one { "s" } else { "" }
            ),
        ));
    }
    (out, notes)
}

#[cfg(test)]
mod tests {
    use super::super::{parse, Input, Options};

    /// A one-pod Deployment with these containers and init containers
    /// (YAML flow sequences), imported: (cpu, memory GiB) and the notes.
    fn pod(containers: &str, inits: &str, extra: &str) -> (Option<f64>, Option<f64>, Vec<String>) {
        let text = format!(
            "kind: Deployment\nmetadata: {{name: w}}\nspec:\n  template:\n    spec:\n{extra}      containers: {containers}\n      initContainers: {inits}\n"
        );
        let i = parse(
            &[Input {
                name: "t.yaml",
                text: &text,
            }],
            Options::default(),
        )
        .unwrap_or_else(|e| panic!("{e:?}\n{text}"));
        let s = &i.services[0];
        let notes = i
            .notes
            .iter()
            .map(|n| format!("[{}] {}", n.code.as_str(), n.message))
            .collect();
        (s.cpu, s.memory_gib, notes)
    }

    fn c(name: &str, cpu: &str, mem: &str) -> String {
        format!("{{name: {name}, resources: {{requests: {{cpu: {cpu}, memory: {mem}}}}}}}")
    }

    fn sidecar(name: &str, cpu: &str, mem: &str) -> String {
        format!("{{name: {name}, restartPolicy: Always, resources: {{requests: {{cpu: {cpu}, memory: {mem}}}}}}}")
    }

    const GI: f64 = 1.0;
    const MI: f64 = 1.0 / 1024.0;

    #[test]
    fn app_containers_add_up() {
        let (cpu, mem, notes) = pod(
            &format!("[{}, {}]", c("a", "100m", "64Mi"), c("b", "250m", "1Gi")),
            "[]",
            "",
        );
        assert_eq!((cpu, mem), (Some(0.35), Some(GI + 64.0 * MI)));
        assert!(notes.is_empty(), "{notes:?}");
    }

    /// An init container larger than the app sets the pod's request; a
    /// smaller one does not (max, not sum). Per resource.
    #[test]
    fn init_containers_take_the_max() {
        let apps = format!("[{}]", c("app", "100m", "1Gi"));
        let (cpu, mem, _) = pod(
            &apps,
            &format!(
                "[{}, {}]",
                c("migrate", "500m", "128Mi"),
                c("wait", "200m", "2Gi")
            ),
            "",
        );
        assert_eq!((cpu, mem), (Some(0.5), Some(2.0 * GI)));
    }

    /// Sidecars (restartPolicy: Always) run beside the app: they add to
    /// it, and to every init container started after them, not before.
    #[test]
    fn sidecars_count_as_running_containers() {
        let apps = format!("[{}]", c("app", "100m", "100Mi"));
        // Sidecar first: the init container runs beside it, 300m + 200m.
        let (cpu, mem, _) = pod(
            &apps,
            &format!(
                "[{}, {}]",
                sidecar("proxy", "200m", "50Mi"),
                c("init", "300m", "10Mi")
            ),
            "",
        );
        assert_eq!((cpu, mem), (Some(0.5), Some(150.0 * MI)));
        // Init first: it runs alone (300m); then app + sidecar (300m).
        let (cpu, mem, _) = pod(
            &apps,
            &format!(
                "[{}, {}]",
                c("init", "300m", "10Mi"),
                sidecar("proxy", "200m", "50Mi")
            ),
            "",
        );
        assert_eq!((cpu, mem), (Some(0.3), Some(150.0 * MI)));
        // A sidecar with no request runs for the pod's life: unknown.
        let (cpu, mem, notes) = pod(&apps, "[{name: proxy, restartPolicy: Always}]", "");
        assert_eq!((cpu, mem), (None, None));
        assert_eq!(
            notes,
            ["[unknown_request] CPU and memory requests unknown: container proxy (sidecar) declares none"]
        );
    }

    /// A plain init container without a request is left out (noted); an app
    /// container without one makes the request unknown, per resource.
    #[test]
    fn missing_requests() {
        let (cpu, mem, notes) = pod(
            &format!("[{}]", c("app", "1", "1Gi")),
            "[{name: check}]",
            "",
        );
        assert_eq!((cpu, mem), (Some(1.0), Some(GI)));
        assert_eq!(
            notes,
            ["[init_container_without_request] init container check declares no CPU or memory request; it runs to completion before the app starts, so it is left out"]
        );
        let (cpu, mem, notes) = pod(
            &format!(
                "[{}, {{name: b, resources: {{requests: {{memory: 1Gi}}}}}}]",
                c("a", "1", "1Gi")
            ),
            "[]",
            "",
        );
        assert_eq!((cpu, mem), (None, Some(2.0 * GI)));
        assert_eq!(
            notes,
            ["[unknown_request] CPU request unknown: container b declares none"]
        );
    }

    /// A limit without a request is the request (Kubernetes defaulting);
    /// the pod overhead of a RuntimeClass adds to the pod.
    #[test]
    fn limits_and_overhead() {
        let (cpu, mem, notes) = pod(
            "[{name: a, resources: {limits: {cpu: 2, memory: 1Gi}, requests: {memory: 512Mi}}}]",
            "[]",
            "      overhead: {cpu: 250m, memory: 120Mi}\n",
        );
        assert_eq!((cpu, mem), (Some(2.25), Some(632.0 * MI)));
        assert_eq!(
            notes,
            ["[request_from_limit] container a declares a CPU limit but no request: the request is the limit, as Kubernetes sets it"]
        );
    }
}
