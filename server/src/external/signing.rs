//! TEMPORARY SHIM — replaced by the signing module from branch `sign`.
use std::fmt;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

pub struct Secret {
    text: String,
    key: Vec<u8>,
}
impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}
#[derive(Debug, thiserror::Error)]
#[error("bad secret")]
pub struct SecretError;
impl Secret {
    pub fn parse(s: &str) -> Result<Secret, SecretError> {
        let b = s.strip_prefix("whsec_").ok_or(SecretError)?;
        let key = B64.decode(b).map_err(|_| SecretError)?;
        Ok(Secret {
            text: s.to_string(),
            key,
        })
    }
    pub fn expose(&self) -> &str {
        &self.text
    }
    pub fn fingerprint(&self) -> String {
        format!("sha256:{}", &hex::encode(Sha256::digest(&self.key))[..16])
    }
}
pub fn generate() -> Secret {
    let mut k = [0u8; 32];
    getrandom::fill(&mut k).unwrap();
    Secret::parse(&format!("whsec_{}", B64.encode(k))).unwrap()
}
pub fn new_webhook_id() -> String {
    let mut k = [0u8; 16];
    getrandom::fill(&mut k).unwrap();
    format!("msg_{}", hex::encode(k))
}
pub struct SignatureHeaders {
    pub berth_signature: String,
    pub webhook_id: String,
    pub webhook_timestamp: String,
    pub webhook_signature: String,
}
pub fn sign(secrets: &[&Secret], webhook_id: &str, t: i64, body: &[u8]) -> SignatureHeaders {
    let mut v1 = vec![];
    let mut sw = vec![];
    for s in secrets {
        let mut m = Hmac::<Sha256>::new_from_slice(s.text.as_bytes()).unwrap();
        m.update(format!("{t}.").as_bytes());
        m.update(body);
        v1.push(format!("v1={}", hex::encode(m.finalize().into_bytes())));
        let mut m = Hmac::<Sha256>::new_from_slice(&s.key).unwrap();
        m.update(format!("{webhook_id}.{t}.").as_bytes());
        m.update(body);
        sw.push(format!("v1,{}", B64.encode(m.finalize().into_bytes())));
    }
    SignatureHeaders {
        berth_signature: format!("t={t},{}", v1.join(",")),
        webhook_id: webhook_id.to_string(),
        webhook_timestamp: t.to_string(),
        webhook_signature: sw.join(" "),
    }
}
