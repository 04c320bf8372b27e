//! Decider secrets at rest.
//!
//! A decider's shared secret must be usable by the server (it signs every
//! call) yet never readable from the database alone: a leaked backup or a
//! read-only SQL injection must not hand out the keys that let someone
//! impersonate Berth to a decider. So secrets are sealed with
//! ChaCha20-Poly1305 under a key that lives outside the database — in the
//! environment (`BERTH_SECRET_KEY`) or a key file — and the decider's name
//! is bound in as associated data, so a sealed secret copied onto another
//! decider's row does not open.
//!
//! Sealed form: `v1:` + base64(12-byte nonce || ciphertext || 16-byte tag).
//! The version prefix leaves room for a key rotation scheme later.

use std::fmt;
use std::path::Path;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};

/// The at-rest key. `Debug` never shows it.
#[derive(Clone)]
pub struct Vault {
    cipher: ChaCha20Poly1305,
    /// Where the key came from, for the startup log line (never the key).
    pub source: String,
}

impl fmt::Debug for Vault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Vault {{ key: <redacted>, source: {:?} }}", self.source)
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum VaultError {
    #[error("{source_name}: the secret key must be 32 bytes written as base64 (44 characters); generate one with `openssl rand -base64 32`")]
    BadKey { source_name: String },
    #[error("cannot read the secret key file {path}: {message}")]
    Unreadable { path: String, message: String },
    #[error("cannot write the secret key file {path}: {message}")]
    Unwritable { path: String, message: String },
    #[error("a stored decider secret does not open with this server's secret key (was the key changed?)")]
    WrongKey,
    #[error("a stored decider secret is not in a form this server knows")]
    Garbled,
}

/// Key length of ChaCha20-Poly1305.
const KEY_BYTES: usize = 32;
/// Nonce length of ChaCha20-Poly1305. Nonces are random: at 96 bits a
/// collision needs ~2^48 seals under one key, far beyond the number of
/// secret rotations any installation will ever make.
const NONCE_BYTES: usize = 12;
const PREFIX: &str = "v1:";

impl Vault {
    /// A key from its base64 text (surrounding whitespace ignored, so a
    /// key file may end with a newline).
    pub fn from_key_text(text: &str, source: &str) -> Result<Vault, VaultError> {
        let bad = || VaultError::BadKey {
            source_name: source.to_string(),
        };
        let bytes = B64.decode(text.trim()).map_err(|_| bad())?;
        if bytes.len() != KEY_BYTES {
            return Err(bad());
        }
        Ok(Vault {
            cipher: ChaCha20Poly1305::new(Key::from_slice(&bytes)),
            source: source.to_string(),
        })
    }

    /// Read the key file, or create it (mode 0600) with a fresh key when
    /// it does not exist yet: the default for a single-machine install, so
    /// `berth serve` works out of the box and the key still never enters
    /// the database.
    pub fn from_file(path: &Path, create: bool) -> Result<Vault, VaultError> {
        let shown = path.display().to_string();
        match std::fs::read_to_string(path) {
            Ok(text) => {
                if let Some(problem) = key_file_exposure(path) {
                    // A warning, not a refusal: a key mounted from a
                    // Kubernetes Secret is 0644 unless the manifest sets
                    // defaultMode, inside a volume only the pod sees.
                    tracing::warn!(path = %shown, "{problem}");
                }
                Vault::from_key_text(&text, &format!("key file {shown}"))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && create => {
                let text = generate_key_text();
                write_private(path, &text).map_err(|e| VaultError::Unwritable {
                    path: shown.clone(),
                    message: e.to_string(),
                })?;
                Vault::from_key_text(&text, &format!("key file {shown} (created)"))
            }
            Err(e) => Err(VaultError::Unreadable {
                path: shown,
                message: e.to_string(),
            }),
        }
    }

    /// Seal `plaintext` for the decider `name`.
    pub fn seal(&self, name: &str, plaintext: &str) -> String {
        let mut nonce = [0u8; NONCE_BYTES];
        getrandom::fill(&mut nonce).expect("the operating system's random source");
        let sealed = self
            .cipher
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: plaintext.as_bytes(),
                    aad: name.as_bytes(),
                },
            )
            .expect("sealing cannot fail for inputs under 256 GiB");
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        format!("{PREFIX}{}", B64.encode(out))
    }

    /// Open what [`Vault::seal`] made for the decider `name`.
    pub fn open(&self, name: &str, sealed: &str) -> Result<String, VaultError> {
        let body = sealed.strip_prefix(PREFIX).ok_or(VaultError::Garbled)?;
        let bytes = B64.decode(body).map_err(|_| VaultError::Garbled)?;
        if bytes.len() < NONCE_BYTES + 16 {
            return Err(VaultError::Garbled);
        }
        let (nonce, ct) = bytes.split_at(NONCE_BYTES);
        let plain = self
            .cipher
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: ct,
                    aad: name.as_bytes(),
                },
            )
            .map_err(|_| VaultError::WrongKey)?;
        String::from_utf8(plain).map_err(|_| VaultError::Garbled)
    }
}

/// A fresh key as base64 text.
pub fn generate_key_text() -> String {
    let mut key = [0u8; KEY_BYTES];
    getrandom::fill(&mut key).expect("the operating system's random source");
    B64.encode(key)
}

/// Why the key file at `path` is exposed, if it is: readable or writable
/// by users other than its owner (and the owner's group, for writing).
/// Whoever reads the key opens every sealed secret in a database backup.
pub fn key_file_exposure(path: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Some(format!(
                "the secret key file {} has mode {mode:04o}: other users can read it (or change it), and with it open every decider and channel secret in a database backup; make it private with `chmod 600 {}`",
                path.display(),
                path.display()
            ));
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    None
}

fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path)?;
    f.write_all(text.as_bytes())?;
    f.write_all(b"\n")?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_key_file_others_can_read_is_reported() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret.key");
        std::fs::write(&path, generate_key_text()).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let problem = key_file_exposure(&path).expect("0644 is exposed");
        assert!(
            problem.contains("0644") && problem.contains("chmod 600"),
            "{problem}"
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert!(key_file_exposure(&path).is_some());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(key_file_exposure(&path), None);
        // Still used: a warning, not a refusal.
        assert!(Vault::from_file(&path, false).is_ok());
    }

    fn vault() -> Vault {
        Vault::from_key_text(&generate_key_text(), "test").unwrap()
    }

    #[test]
    fn seals_and_opens_for_the_same_name_only() {
        let v = vault();
        let sealed = v.seal("ranker", "whsec_abc");
        assert!(sealed.starts_with("v1:"));
        assert!(!sealed.contains("whsec_abc"));
        assert_eq!(v.open("ranker", &sealed).unwrap(), "whsec_abc");
        assert_eq!(v.open("other", &sealed), Err(VaultError::WrongKey));
        // Another key does not open it either.
        assert_eq!(vault().open("ranker", &sealed), Err(VaultError::WrongKey));
        // Two seals of one secret differ (random nonce).
        assert_ne!(sealed, v.seal("ranker", "whsec_abc"));
    }

    #[test]
    fn garbled_sealed_text_is_an_error_not_a_panic() {
        let v = vault();
        for bad in ["", "v1:", "v2:AAAA", "v1:!!!", "v1:AAAA", "whsec_abc"] {
            assert!(v.open("x", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn keys_must_be_32_bytes_of_base64() {
        for bad in ["", "short", &B64.encode([0u8; 16]), &B64.encode([0u8; 33])] {
            let e = Vault::from_key_text(bad, "BERTH_SECRET_KEY").unwrap_err();
            assert!(e.to_string().starts_with("BERTH_SECRET_KEY: "), "{e}");
        }
        assert!(Vault::from_key_text(&format!(" {}\n", B64.encode([7u8; 32])), "f").is_ok());
    }

    #[test]
    fn debug_never_shows_the_key() {
        let text = generate_key_text();
        let v = Vault::from_key_text(&text, "env").unwrap();
        let shown = format!("{v:?}");
        assert!(
            !shown.contains(&text) && shown.contains("redacted"),
            "{shown}"
        );
    }

    #[test]
    fn key_file_is_created_once_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/secret.key");
        assert!(matches!(
            Vault::from_file(&path, false),
            Err(VaultError::Unreadable { .. })
        ));
        let a = Vault::from_file(&path, true).unwrap();
        let sealed = a.seal("d", "s");
        let b = Vault::from_file(&path, true).unwrap();
        assert_eq!(b.open("d", &sealed).unwrap(), "s");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
