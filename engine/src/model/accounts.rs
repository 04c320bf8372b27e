//! The rules of a user account as it is typed: its name and its password.
//! One place for the server, which refuses, and the browser, which says
//! so at the field while it is typed, in the same words.

/// Shortest password accepted: 12 characters is the length current
/// guidance (NIST SP 800-63B allows 8; 12 buys margin) puts beyond offline
/// guessing against Argon2id, which the server stores.
pub const MIN_PASSWORD_CHARS: usize = 12;

/// Longest user name: a login, not a sentence; it also names the account
/// in the audit.
pub const MAX_NAME_CHARS: usize = 64;

/// What is wrong with `name` as a user name, or `None`.
pub fn name_problem(name: &str) -> Option<String> {
    let rule = format!(
        "1–{MAX_NAME_CHARS} characters of a–z, 0–9, '-' and '_', starting with a letter or digit"
    );
    if name.is_empty() {
        return Some(format!("a user name is needed: {rule}"));
    }
    let count = name.chars().count();
    if count > MAX_NAME_CHARS {
        return Some(format!("{count} characters; a user name is {rule}"));
    }
    for (i, c) in name.chars().enumerate() {
        let ok = c.is_ascii_lowercase() || c.is_ascii_digit() || (i > 0 && (c == '-' || c == '_'));
        if !ok {
            let what = if c.is_ascii_uppercase() {
                format!("{c:?} is a capital letter")
            } else {
                format!("{c:?} cannot be part of one")
            };
            return Some(format!("character {} {what}; a user name is {rule}", i + 1));
        }
    }
    None
}

/// What is wrong with `password` for a new account, or `None`.
pub fn password_problem(password: &str) -> Option<String> {
    let count = password.chars().count();
    (count < MIN_PASSWORD_CHARS)
        .then(|| format!("at least {MIN_PASSWORD_CHARS} characters; this one has {count}"))
}

/// Every problem of a new account as (JSON pointer of the field, words).
pub fn new_user_problems(name: &str, password: &str) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(p) = name_problem(name) {
        out.push(("/name", p));
    }
    if let Some(p) = password_problem(password) {
        out.push(("/password", p));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_passwords_in_plain_words() {
        assert_eq!(name_problem("ops-lead_2"), None);
        assert!(name_problem("")
            .unwrap()
            .starts_with("a user name is needed"));
        assert!(name_problem("Ana")
            .unwrap()
            .starts_with("character 1 'A' is a capital letter"));
        assert!(name_problem("-x")
            .unwrap()
            .starts_with("character 1 '-' cannot"));
        assert!(name_problem(&"a".repeat(65))
            .unwrap()
            .starts_with("65 characters"));
        assert_eq!(
            password_problem("short").as_deref(),
            Some("at least 12 characters; this one has 5")
        );
        assert_eq!(password_problem("twelve chars"), None);
        let paths: Vec<&str> = new_user_problems("", "x").iter().map(|p| p.0).collect();
        assert_eq!(paths, ["/name", "/password"]);
    }
}
