//! TEMPORARY SHIM — replaced by the forwarder from branch `forward`.
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

#[derive(Clone, Debug, Default)]
pub struct AllowList(pub Vec<String>);
impl AllowList {
    pub fn parse(items: &[String]) -> Result<AllowList, String> {
        Ok(AllowList(items.to_vec()))
    }
}
#[derive(Clone, Debug)]
pub struct ForwardPolicy {
    pub allow: AllowList,
    pub max_request_bytes: usize,
    pub max_response_bytes: usize,
    pub max_concurrent: usize,
}
pub struct Reply {
    pub status: u16,
    pub body: bytes::Bytes,
    pub retry_after: Option<Duration>,
    pub remote: SocketAddr,
}
#[derive(Debug, thiserror::Error)]
pub enum ForwardError {
    #[error("bad url: {0}")]
    BadUrl(String),
    #[error("blocked {host} {addr}: {reason}")]
    Blocked {
        host: String,
        addr: IpAddr,
        reason: &'static str,
    },
    #[error("timeout")]
    Timeout,
    #[error("redirect {status}")]
    Redirect { status: u16 },
    #[error("http: {0}")]
    Http(String),
}
pub fn validate_url(url: &str) -> Result<url::Url, ForwardError> {
    let u = url::Url::parse(url).map_err(|e| ForwardError::BadUrl(e.to_string()))?;
    if !["http", "https"].contains(&u.scheme()) {
        return Err(ForwardError::BadUrl("scheme".into()));
    }
    Ok(u)
}
pub struct Forwarder {
    client: reqwest::Client,
}
impl Forwarder {
    pub fn new(_p: ForwardPolicy) -> Forwarder {
        Forwarder {
            client: reqwest::Client::builder()
                .no_proxy()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
        }
    }
    pub async fn post(
        &self,
        url: &str,
        headers: &[(&'static str, String)],
        body: bytes::Bytes,
        timeout: Duration,
    ) -> Result<Reply, ForwardError> {
        let mut r = self.client.post(url).timeout(timeout).body(body);
        for (k, v) in headers {
            r = r.header(*k, v);
        }
        let resp = r.send().await.map_err(|e| {
            if e.is_timeout() {
                ForwardError::Timeout
            } else {
                ForwardError::Http(e.to_string())
            }
        })?;
        let status = resp.status().as_u16();
        if (300..400).contains(&status) {
            return Err(ForwardError::Redirect { status });
        }
        let remote = resp.remote_addr().unwrap_or(([127, 0, 0, 1], 0).into());
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
            .map(Duration::from_secs);
        let body = resp
            .bytes()
            .await
            .map_err(|e| ForwardError::Http(e.to_string()))?;
        Ok(Reply {
            status,
            body,
            retry_after,
            remote,
        })
    }
}
impl Default for ForwardPolicy {
    fn default() -> ForwardPolicy {
        ForwardPolicy {
            allow: AllowList::default(),
            max_request_bytes: 8 << 20,
            max_response_bytes: 4 << 20,
            max_concurrent: 32,
        }
    }
}
