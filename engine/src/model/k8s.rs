//! Kubernetes naming rules, for the names a plan's manifests carry
//! (`docs/plans.md`): object names, namespaces, cluster names, kinds and
//! API versions. Each check returns the problem in words, or `None`.
//! A leaf: the loader checks the estate's names with it, and the plan
//! checks the names it derives (ids used as cluster names, object names).

/// A DNS-1123 label (RFC 1123): 1 to 63 lower-case letters, digits and
/// `-`, starting and ending with a letter or digit. Namespaces and the
/// cluster names Karmada and Open Cluster Management take (OCM also puts
/// the name in a label value, which is at most 63 characters).
pub fn label_problem(s: &str) -> Option<String> {
    if s.is_empty() || s.len() > 63 {
        return Some(format!(
            "{s:?} is not a DNS-1123 label: it must be 1 to 63 characters"
        ));
    }
    label_chars(s, "label")
}

/// A DNS-1123 subdomain: at most 253 characters, labels joined by `.`
/// (object names such as a Deployment's or a PropagationPolicy's).
pub fn subdomain_problem(s: &str) -> Option<String> {
    if s.is_empty() || s.len() > 253 {
        return Some(format!(
            "{s:?} is not a DNS-1123 subdomain: it must be 1 to 253 characters"
        ));
    }
    s.split('.').find_map(|part| {
        if part.is_empty() {
            Some(format!(
                "{s:?} is not a DNS-1123 subdomain: it has an empty part between dots"
            ))
        } else {
            label_chars(part, "subdomain").map(|_| {
                format!(
                    "{s:?} is not a DNS-1123 subdomain: only lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
                )
            })
        }
    })
}

fn label_chars(s: &str, what: &str) -> Option<String> {
    let ok_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    let b = s.as_bytes();
    let ends_ok = b[0].is_ascii_alphanumeric() && b[b.len() - 1].is_ascii_alphanumeric();
    (!s.chars().all(ok_char) || !ends_ok).then(|| {
        format!(
            "{s:?} is not a DNS-1123 {what}: only lower-case letters, digits and '-', starting and ending with a letter or digit"
        )
    })
}

/// A kind: an upper-case letter, then letters and digits (`Deployment`).
pub fn kind_problem(s: &str) -> Option<String> {
    let mut chars = s.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_alphanumeric())
        && s.len() <= 63;
    (!ok).then(|| {
        format!(
            "{s:?} is not a Kubernetes kind: an upper-case letter, then letters and digits (e.g. Deployment), at most 63"
        )
    })
}

/// An API version: `v1`, or `<group>/<version>` with a DNS-1123 group
/// (`apps/v1`, `argoproj.io/v1alpha1`).
pub fn api_version_problem(s: &str) -> Option<String> {
    let (group, version) = match s.split_once('/') {
        Some((g, v)) => (Some(g), v),
        None => (None, s),
    };
    let version_ok = !version.is_empty()
        && version.len() <= 63
        && version.starts_with('v')
        && version
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if !version_ok || group.is_some_and(|g| subdomain_problem(g).is_some()) {
        return Some(format!(
            "{s:?} is not a Kubernetes API version: `v1` or `<group>/<version>`, e.g. apps/v1"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["c-fra-1", "a", "shop", "x1"] {
            assert_eq!(label_problem(ok), None, "{ok}");
            assert_eq!(subdomain_problem(ok), None, "{ok}");
        }
        assert_eq!(subdomain_problem("berth.shop-cart"), None);
        for bad in ["", "-a", "a-", "A", "a_b", "a/b", "a.b"] {
            assert!(label_problem(bad).is_some(), "{bad}");
        }
        assert!(label_problem(&"a".repeat(64)).is_some());
        for bad in ["", "a..b", ".a", "a.", "A.b", "a/b"] {
            assert!(subdomain_problem(bad).is_some(), "{bad}");
        }
        assert!(subdomain_problem(&"a".repeat(254)).is_some());
        assert_eq!(kind_problem("StatefulSet"), None);
        assert!(kind_problem("deployment").is_some());
        assert!(kind_problem("Deploy-ment").is_some());
        for ok in ["v1", "apps/v1", "argoproj.io/v1alpha1"] {
            assert_eq!(api_version_problem(ok), None, "{ok}");
        }
        for bad in ["", "apps/", "/v1", "apps/1", "Apps/v1", "a/b/v1"] {
            assert!(api_version_problem(bad).is_some(), "{bad}");
        }
    }
}
