//! Which addresses an outbound call to an external decider may reach.
//!
//! One function, [`check_addr`], decides for every address the forwarder
//! is about to connect to — IP literals from the URL and every answer of a
//! DNS lookup alike. There are three kinds of address:
//!
//! * **never reachable**, whatever an administrator allows: unspecified,
//!   link-local, multicast, broadcast, reserved and cloud-metadata
//!   addresses. Nothing legitimate answers decider calls there, and the
//!   metadata services hand out cloud credentials to whoever asks.
//! * **loopback and private** (RFC 1918, CGNAT, unique-local, …): only
//!   when inside the administrator's [`AllowList`]. A decider on the same
//!   host or LAN is a real set-up (and the tests use 127.0.0.1), but by
//!   default the server must not be a door into its own network.
//! * everything else (public unicast): allowed.
//!
//! IPv6 forms that carry an IPv4 address (IPv4-mapped, IPv4-compatible,
//! IPv4-translated, NAT64, 6to4, Teredo) are unwrapped and the IPv4
//! address inside is checked too. The embedded address must be public:
//! the allow-list applies to plain addresses only, because an
//! administrator who allows `127.0.0.1` means that address, not a
//! translation of it, and a decider never needs to be spelled that way.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// One CIDR block, `address/prefix`; a bare address means a single host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Whether `ip` lies in this block (never across families).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                prefix_eq(&net.octets(), &ip.octets(), self.prefix)
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                prefix_eq(&net.octets(), &ip.octets(), self.prefix)
            }
            _ => false,
        }
    }
}

/// Whether the first `prefix` bits of `a` and `b` agree.
fn prefix_eq(a: &[u8], b: &[u8], prefix: u8) -> bool {
    let full = usize::from(prefix / 8);
    let rest = prefix % 8;
    if a[..full] != b[..full] {
        return false;
    }
    if rest == 0 {
        return true;
    }
    let mask = 0xffu8 << (8 - rest);
    (a[full] & mask) == (b[full] & mask)
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

impl FromStr for Cidr {
    type Err = String;

    /// Parses `10.0.0.0/8`, `127.0.0.1` (= /32), `fd00::/8`, `::1`
    /// (= /128). Host bits below the prefix are refused rather than
    /// masked away: `10.0.0.1/8` is almost always a typo for `/32` or
    /// `10.0.0.0/8`, and silently widening an allow-list is the wrong
    /// way to guess.
    fn from_str(s: &str) -> Result<Cidr, String> {
        let text = s.trim();
        if text.is_empty() {
            return Err("an empty entry is not a CIDR block".to_string());
        }
        let (addr_text, prefix_text) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let addr: IpAddr = addr_text
            .parse()
            .map_err(|_| format!("`{text}`: `{addr_text}` is not an IPv4 or IPv6 address"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix_text {
            None => max,
            Some(p) => {
                let n: u8 = p.parse().map_err(|_| {
                    format!("`{text}`: the prefix length `{p}` is not a number from 0 to {max}")
                })?;
                if n > max {
                    return Err(format!(
                        "`{text}`: the prefix length {n} is longer than the {max} bits of the address"
                    ));
                }
                n
            }
        };
        let cidr = Cidr { addr, prefix };
        let network = match addr {
            IpAddr::V4(a) => IpAddr::V4(Ipv4Addr::from(mask_bits(&a.octets(), prefix))),
            IpAddr::V6(a) => IpAddr::V6(Ipv6Addr::from(mask_bits(&a.octets(), prefix))),
        };
        if network != addr {
            return Err(format!(
                "`{text}`: bits are set below the /{prefix} prefix; write `{network}/{prefix}` for the block or `{addr}/{max}` for the single address"
            ));
        }
        Ok(cidr)
    }
}

/// `bytes` with every bit after the first `prefix` cleared.
fn mask_bits<const N: usize>(bytes: &[u8; N], prefix: u8) -> [u8; N] {
    let mut out = *bytes;
    for (i, b) in out.iter_mut().enumerate() {
        let start = i * 8;
        let keep = usize::from(prefix).saturating_sub(start).min(8);
        *b &= if keep == 0 { 0 } else { 0xffu8 << (8 - keep) };
    }
    out
}

/// The loopback and private blocks an administrator lets deciders live
/// in. Empty by default: then no loopback or private address is reachable.
/// Entries covering never-reachable addresses (say `0.0.0.0/0`) do not
/// make those reachable; the allow-list only opens loopback and private
/// space.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowList {
    cidrs: Vec<Cidr>,
}

impl AllowList {
    /// The empty list: loopback and private addresses all refused.
    pub fn none() -> AllowList {
        AllowList::default()
    }

    /// Parses each entry as a [`Cidr`]; the error names the entry (1-based)
    /// and what is wrong with it.
    pub fn parse<I, S>(entries: I) -> Result<AllowList, String>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut cidrs = Vec::new();
        for (i, entry) in entries.into_iter().enumerate() {
            let cidr = entry
                .as_ref()
                .parse::<Cidr>()
                .map_err(|e| format!("allow-list entry {}: {e}", i + 1))?;
            cidrs.push(cidr);
        }
        Ok(AllowList { cidrs })
    }

    pub fn is_empty(&self) -> bool {
        self.cidrs.is_empty()
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        self.cidrs.iter().any(|c| c.contains(ip))
    }

    pub fn cidrs(&self) -> &[Cidr] {
        &self.cidrs
    }
}

impl FromStr for AllowList {
    type Err = String;

    /// A comma- or whitespace-separated list, as an option or environment
    /// variable gives it: `127.0.0.1/32, 10.0.0.0/8`. Empty text is the
    /// empty list.
    fn from_str(s: &str) -> Result<AllowList, String> {
        AllowList::parse(
            s.split(|c: char| c == ',' || c.is_whitespace())
                .filter(|e| !e.is_empty()),
        )
    }
}

/// Decides whether a call may connect to `ip`: `Ok(())`, or the reason it
/// may not, a short phrase for error messages ("link-local", …).
pub fn check_addr(ip: IpAddr, allow: &AllowList) -> Result<(), &'static str> {
    match ip {
        IpAddr::V4(v4) => {
            if let Some(reason) = never_v4(v4) {
                return Err(reason);
            }
            match local_v4(v4) {
                Some(reason) if !allow.contains(ip) => Err(reason),
                _ => Ok(()),
            }
        }
        IpAddr::V6(v6) => {
            if let Some(reason) = never_v6(v6) {
                return Err(reason);
            }
            for (form, embedded) in embedded_v4(v6) {
                if never_v4(embedded).is_some() || local_v4(embedded).is_some() {
                    return Err(form);
                }
            }
            match local_v6(v6) {
                Some(reason) if !allow.contains(ip) => Err(reason),
                _ => Ok(()),
            }
        }
    }
}

/// The policy for a server an operator names on the command line or in
/// the agent's settings (Prometheus, the Kubernetes API): loopback and
/// private networks are where such servers live, so they are allowed; the
/// never-reachable addresses (link-local, cloud metadata, unspecified,
/// multicast, broadcast, reserved, and private addresses smuggled inside
/// IPv6 forms) are refused as for deciders — an answer that points there,
/// or a DNS name that resolves there, is a trap, not a Prometheus.
pub fn check_configured_target(ip: IpAddr) -> Result<(), &'static str> {
    static LOCAL: std::sync::OnceLock<AllowList> = std::sync::OnceLock::new();
    let local = LOCAL.get_or_init(|| {
        AllowList::parse([
            "127.0.0.0/8",
            "10.0.0.0/8",
            "172.16.0.0/12",
            "192.168.0.0/16",
            "100.64.0.0/10",
            "::1/128",
            "fc00::/7",
        ])
        .expect("the private ranges parse")
    });
    check_addr(ip, local)
}

/// Why `a` cannot be an agent's probe address (what its peers connect
/// to), checked after normalising an IPv4-mapped IPv6 address to the IPv4
/// address it is (`[::ffff:0.0.0.0]:7000` is `0.0.0.0:7000`): port 0; the
/// unspecified address and the rest of 0.0.0.0/8 ("this network", which
/// Linux connects to the local host); multicast and broadcast; link-local,
/// where cloud metadata answers. Loopback and private addresses are what
/// probe addresses are (an agent in a pod, tests on one host).
pub fn probe_addr_problem(a: std::net::SocketAddr) -> Option<&'static str> {
    if a.port() == 0 {
        return Some("port 0");
    }
    match a.ip().to_canonical() {
        IpAddr::V4(v4) => {
            if v4.octets()[0] == 0 {
                Some("an address of 0.0.0.0/8 (this host, not a peer)")
            } else if v4.is_multicast() || v4.is_broadcast() {
                Some("a multicast or broadcast address")
            } else if v4.is_link_local() {
                Some("a link-local address (where cloud metadata answers)")
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            if v6.is_unspecified() {
                Some("the unspecified address")
            } else if v6.is_multicast() {
                Some("a multicast address")
            } else if (v6.segments()[0] & 0xffc0) == 0xfe80 {
                Some("a link-local address")
            } else {
                None
            }
        }
    }
}

/// What an administrator would add to reach `ip`, when [`check_addr`]
/// refuses it only for want of an allow-list entry (loopback, private,
/// CGNAT): `--decider-allow 127.0.0.1/32` for one address. `None` for an
/// address no allow-list opens (metadata, link-local, embedded forms…).
pub fn allow_hint(ip: IpAddr) -> Option<String> {
    let everything = AllowList::parse(["0.0.0.0/0", "::/0"]).ok()?;
    if check_addr(ip, &everything).is_err() {
        return None;
    }
    let cidr = match ip {
        IpAddr::V4(_) => format!("{ip}/32"),
        IpAddr::V6(_) => format!("{ip}/128"),
    };
    Some(format!(
        "an administrator can allow it by starting the server with --decider-allow {cidr} (or a wider CIDR)"
    ))
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u8) -> bool {
    prefix_eq(&ip.octets(), &net, prefix)
}

fn in_v6(ip: Ipv6Addr, net: [u16; 8], prefix: u8) -> bool {
    prefix_eq(&ip.octets(), &Ipv6Addr::from(net).octets(), prefix)
}

/// IPv4 addresses no decider may ever have; the reason, if so.
fn never_v4(ip: Ipv4Addr) -> Option<&'static str> {
    // Cloud metadata first, so the message names the real danger:
    // 169.254.169.254 — the instance metadata service of AWS (IMDS), Google
    //   Cloud, Azure (IMDS), Oracle Cloud and OpenStack;
    // 100.100.100.200 — Alibaba Cloud ECS instance metadata (inside the
    //   CGNAT block, so an allow-list for 100.64.0.0/10 must not open it);
    // 168.63.129.16 — Azure's WireServer / host address, which serves the
    //   guest agent its configuration (a public address, so the ranges
    //   below do not catch it).
    const METADATA: [[u8; 4]; 3] = [
        [169, 254, 169, 254],
        [100, 100, 100, 200],
        [168, 63, 129, 16],
    ];
    if METADATA.contains(&ip.octets()) {
        return Some("cloud metadata");
    }
    if in_v4(ip, [0, 0, 0, 0], 8) {
        // RFC 1122 §3.2.1.3 / RFC 6890: "this network"; 0.0.0.0 reaches
        // the local host on Linux.
        return Some("unspecified");
    }
    if in_v4(ip, [169, 254, 0, 0], 16) {
        // RFC 3927 link-local; also AWS ECS task metadata (169.254.170.2).
        return Some("link-local");
    }
    if in_v4(ip, [224, 0, 0, 0], 4) {
        // RFC 5771 multicast.
        return Some("multicast");
    }
    if ip == Ipv4Addr::BROADCAST {
        // RFC 919 limited broadcast (inside 240/4; named apart for clarity).
        return Some("broadcast");
    }
    if in_v4(ip, [240, 0, 0, 0], 4) {
        // RFC 1112 §4 reserved ("class E").
        return Some("reserved");
    }
    None
}

/// IPv4 loopback and private space (allow-list only); the reason, if so.
fn local_v4(ip: Ipv4Addr) -> Option<&'static str> {
    if in_v4(ip, [127, 0, 0, 0], 8) {
        // RFC 1122 loopback.
        return Some("loopback");
    }
    if in_v4(ip, [10, 0, 0, 0], 8)
        || in_v4(ip, [172, 16, 0, 0], 12)
        || in_v4(ip, [192, 168, 0, 0], 16)
    {
        // RFC 1918 private networks.
        return Some("private");
    }
    if in_v4(ip, [100, 64, 0, 0], 10) {
        // RFC 6598 shared address space (carrier-grade NAT): not routed on
        // the internet, used inside providers' and clusters' networks.
        return Some("private (CGNAT)");
    }
    None
}

/// IPv6 addresses no decider may ever have; the reason, if so.
fn never_v6(ip: Ipv6Addr) -> Option<&'static str> {
    // fd00:ec2::254 — the AWS instance metadata service over IPv6 (Nitro
    // instances). It lies in unique-local space, so it is checked before
    // the allow-list could open fc00::/7.
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        return Some("cloud metadata");
    }
    if ip.is_unspecified() {
        // RFC 4291 §2.5.2.
        return Some("unspecified");
    }
    if in_v6(ip, [0xfe80, 0, 0, 0, 0, 0, 0, 0], 10) {
        // RFC 4291 §2.5.6 link-local (zone ids like `%eth0` select one).
        return Some("link-local");
    }
    if in_v6(ip, [0xff00, 0, 0, 0, 0, 0, 0, 0], 8) {
        // RFC 4291 §2.7 multicast.
        return Some("multicast");
    }
    None
}

/// IPv6 loopback and private space (allow-list only); the reason, if so.
fn local_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if ip == Ipv6Addr::LOCALHOST {
        return Some("loopback");
    }
    if in_v6(ip, [0xfc00, 0, 0, 0, 0, 0, 0, 0], 7) {
        // RFC 4193 unique-local addresses.
        return Some("private");
    }
    if in_v6(ip, [0xfec0, 0, 0, 0, 0, 0, 0, 0], 10) {
        // RFC 3879 deprecated site-local: still only ever local.
        return Some("private (site-local)");
    }
    None
}

/// The IPv4 addresses an IPv6 address carries, each with the phrase that
/// names the form in a refusal. Several for the local-use NAT64 prefix,
/// whose prefix length (and so the embedding) the network chooses.
fn embedded_v4(ip: Ipv6Addr) -> Vec<(&'static str, Ipv4Addr)> {
    let b = ip.octets();
    let seg = ip.segments();
    let v4 = |o: [u8; 4]| Ipv4Addr::from(o);
    let mut out = Vec::new();
    // ::ffff:a.b.c.d (RFC 4291 §2.5.5.2): what a dual-stack socket
    // connects to as plain IPv4.
    if seg[..5] == [0, 0, 0, 0, 0] && seg[5] == 0xffff {
        out.push((
            "IPv4-mapped form of a non-public IPv4 address",
            v4([b[12], b[13], b[14], b[15]]),
        ));
    }
    // ::a.b.c.d (RFC 4291 §2.5.5.1, deprecated). `::` and `::1` are
    // handled as themselves before this.
    if seg[..6] == [0, 0, 0, 0, 0, 0] && ip != Ipv6Addr::LOCALHOST && !ip.is_unspecified() {
        out.push((
            "IPv4-compatible form of a non-public IPv4 address",
            v4([b[12], b[13], b[14], b[15]]),
        ));
    }
    // ::ffff:0:a.b.c.d (RFC 2765 SIIT "IPv4-translated").
    if seg[..4] == [0, 0, 0, 0] && seg[4] == 0xffff && seg[5] == 0 {
        out.push((
            "IPv4-translated form of a non-public IPv4 address",
            v4([b[12], b[13], b[14], b[15]]),
        ));
    }
    // 64:ff9b::/96 (RFC 6052 well-known NAT64 prefix, always /96).
    if in_v6(ip, [0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96) {
        out.push((
            "NAT64 form of a non-public IPv4 address",
            v4([b[12], b[13], b[14], b[15]]),
        ));
    }
    // 64:ff9b:1::/48 (RFC 8215 local-use NAT64): a network may use any
    // RFC 6052 prefix length from /48 to /96 inside it, and which one is
    // not visible from the address, so every possible position is
    // checked (RFC 6052 §2.2; octet 8 is the reserved "u" octet). An
    // address whose other positions decode to a non-public address
    // (often 0.x.x.x, from zero bytes) is refused too: safety over reach.
    // In practice that refuses most of this local-use prefix, which no
    // decider on the internet can sit behind anyway.
    if in_v6(ip, [0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48) {
        let form = "local-use NAT64 form of a non-public IPv4 address";
        out.push((form, v4([b[6], b[7], b[9], b[10]]))); // /48
        out.push((form, v4([b[7], b[9], b[10], b[11]]))); // /56
        out.push((form, v4([b[9], b[10], b[11], b[12]]))); // /64
        out.push((form, v4([b[12], b[13], b[14], b[15]]))); // /96
    }
    // 2002::/16 (RFC 3056 6to4): the relay's IPv4 address in bits 16..48.
    if seg[0] == 0x2002 {
        out.push((
            "6to4 form of a non-public IPv4 address",
            v4([b[2], b[3], b[4], b[5]]),
        ));
    }
    // 2001::/32 (RFC 4380 Teredo): the server's IPv4 in bits 32..64 and the
    // client's, every bit inverted, in bits 96..128. Both are checked.
    if seg[0] == 0x2001 && seg[1] == 0 {
        let form = "Teredo form of a non-public IPv4 address";
        out.push((form, v4([b[4], b[5], b[6], b[7]])));
        out.push((form, v4([!b[12], !b[13], !b[14], !b[15]])));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn never_reachable_whatever_the_allow_list() {
        let all = AllowList::parse(["0.0.0.0/0", "::/0"]).unwrap();
        for (addr, reason) in [
            ("169.254.169.254", "cloud metadata"),
            ("100.100.100.200", "cloud metadata"),
            ("168.63.129.16", "cloud metadata"),
            ("fd00:ec2::254", "cloud metadata"),
            ("169.254.1.1", "link-local"),
            ("0.0.0.0", "unspecified"),
            ("0.1.2.3", "unspecified"),
            ("224.0.0.1", "multicast"),
            ("239.255.255.250", "multicast"),
            ("255.255.255.255", "broadcast"),
            ("240.0.0.1", "reserved"),
            ("::", "unspecified"),
            ("fe80::1", "link-local"),
            ("febf::1", "link-local"),
            ("ff02::1", "multicast"),
        ] {
            assert_eq!(check_addr(ip(addr), &all), Err(reason), "{addr}");
            assert_eq!(
                check_addr(ip(addr), &AllowList::none()),
                Err(reason),
                "{addr}"
            );
        }
    }

    #[test]
    fn local_only_when_allowed() {
        let allow = AllowList::parse(["127.0.0.1/32", "10.0.0.0/8", "fd12::/16", "::1"]).unwrap();
        for (addr, reason, allowed) in [
            ("127.0.0.1", "loopback", true),
            ("127.0.0.2", "loopback", false),
            ("10.1.2.3", "private", true),
            ("172.16.0.1", "private", false),
            ("172.31.255.255", "private", false),
            ("192.168.1.1", "private", false),
            ("100.64.0.1", "private (CGNAT)", false),
            ("100.127.255.255", "private (CGNAT)", false),
            ("::1", "loopback", true),
            ("fd12::1", "private", true),
            ("fc00::1", "private", false),
            ("fec0::1", "private (site-local)", false),
        ] {
            assert_eq!(
                check_addr(ip(addr), &AllowList::none()),
                Err(reason),
                "{addr}"
            );
            let expect = if allowed { Ok(()) } else { Err(reason) };
            assert_eq!(
                check_addr(ip(addr), &allow),
                expect,
                "{addr} with allow-list"
            );
        }
    }

    #[test]
    fn public_addresses_pass() {
        for addr in [
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "169.253.255.255",
            "223.255.255.255",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
            // Local-use NAT64 whose every possible embedding is 8.8.8.8.
            "64:ff9b:1:808:8:808:808:808",
        ] {
            assert_eq!(check_addr(ip(addr), &AllowList::none()), Ok(()), "{addr}");
        }
    }

    #[test]
    fn embedded_ipv4_is_unwrapped_and_never_opened_by_the_allow_list() {
        let allow = AllowList::parse(["127.0.0.1/32", "::/0"]).unwrap();
        for (addr, form) in [
            ("::ffff:127.0.0.1", "IPv4-mapped"),
            ("::ffff:169.254.169.254", "IPv4-mapped"),
            ("::127.0.0.1", "IPv4-compatible"),
            ("::ffff:0:127.0.0.1", "IPv4-translated"),
            ("64:ff9b::7f00:1", "NAT64"),
            ("64:ff9b::a9fe:a9fe", "NAT64"),
            ("64:ff9b:1:7f00:1::", "local-use NAT64"), // /48 position
            ("64:ff9b:1::a00:1", "local-use NAT64"),   // /96 position
            ("2002:7f00:1::1", "6to4"),
            ("2002:a9fe:a9fe::", "6to4"),
            // RFC 4380's example with the client part set to ~127.0.0.1.
            ("2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo"),
        ] {
            for list in [&AllowList::none(), &allow] {
                let got = check_addr(ip(addr), list).unwrap_err();
                assert!(got.starts_with(form), "{addr}: {got}");
            }
        }
        // The RFC example itself (client 192.0.2.45, public) passes.
        assert_eq!(
            check_addr(
                ip("2001:0:4136:e378:8000:63bf:3fff:fdd2"),
                &AllowList::none()
            ),
            Ok(())
        );
    }

    #[test]
    fn cidr_parsing_errors_are_clear() {
        assert_eq!(
            "10.0.0.0/8".parse::<Cidr>().unwrap().to_string(),
            "10.0.0.0/8"
        );
        assert_eq!(
            "127.0.0.1".parse::<Cidr>().unwrap().to_string(),
            "127.0.0.1/32"
        );
        assert_eq!("::1".parse::<Cidr>().unwrap().to_string(), "::1/128");
        let err = |s: &str| s.parse::<Cidr>().unwrap_err();
        assert!(
            err("10.0.0.1/8").contains("write `10.0.0.0/8`"),
            "{}",
            err("10.0.0.1/8")
        );
        assert!(err("10.0.0.0/33").contains("longer than the 32 bits"));
        assert!(err("10.0.0.0/x").contains("not a number"));
        assert!(err("localhost").contains("not an IPv4 or IPv6 address"));
        assert!(err("").contains("empty"));
        let list = "127.0.0.1/32, bogus".parse::<AllowList>().unwrap_err();
        assert!(list.starts_with("allow-list entry 2: `bogus`"), "{list}");
        assert!("".parse::<AllowList>().unwrap().is_empty());
        let cidr: Cidr = "172.16.0.0/12".parse().unwrap();
        assert!(cidr.contains(ip("172.31.0.1")) && !cidr.contains(ip("172.32.0.1")));
        assert!(!cidr.contains(ip("::ffff:172.16.0.1")));
    }
}

#[cfg(test)]
mod probe_tests {
    use super::probe_addr_problem;

    #[test]
    fn probe_addresses_are_checked_after_unmapping() {
        for bad in [
            "[::ffff:0.0.0.0]:7000",
            "0.0.0.1:80",
            "0.0.0.0:7000",
            "[::]:7000",
            "10.0.0.1:0",
            "169.254.169.254:80",
            "[::ffff:169.254.169.254]:80",
            "224.0.0.1:7000",
            "255.255.255.255:7000",
            "[fe80::1]:7000",
        ] {
            assert!(probe_addr_problem(bad.parse().unwrap()).is_some(), "{bad}");
        }
        for good in [
            "10.1.2.3:7946",
            "127.0.0.1:7000",
            "[fd00::3]:7946",
            "[::ffff:10.0.0.1]:7000",
            "203.0.113.9:7000",
        ] {
            assert_eq!(probe_addr_problem(good.parse().unwrap()), None, "{good}");
        }
    }
}
