//! Addresses: the hosts a variable's value names (URLs, host:port,
//! connection strings).

use super::*;

/// Connection-string keys that name a host, compared case-insensitively
/// with runs of spaces read as one: ADO.NET and Npgsql (`Host`, `Server`,
/// `Data Source`, `Address`, `Addr`, `Network Address`), libpq (`host`),
/// JDBC properties (`serverName`).
pub(super) const HOST_KEYS: [&str; 8] = [
    "host",
    "hostname",
    "server",
    "servername",
    "data source",
    "address",
    "addr",
    "network address",
];

/// Of those, the keys whose value is SQL Server's
/// `[protocol:]host[\instance][,port]`: there a comma starts the port,
/// not a second host (as it does in Npgsql's and libpq's `Host=a,b`).
pub(super) const SERVER_KEYS: [&str; 5] = [
    "server",
    "data source",
    "address",
    "addr",
    "network address",
];

/// SQL Server's protocol prefixes of a `Server` value (`tcp:db,1433`).
pub(super) const SERVER_PROTOCOLS: [&str; 4] = ["tcp", "np", "lpc", "admin"];

/// The `host[:port]` items a connection string names, when `value` is
/// one: `key=value` pairs separated by `;` (ADO.NET, Npgsql, JDBC
/// properties), or by spaces when there is no `;` (libpq), at least one of
/// whose keys names a host. `None` when no key names a host.
pub(super) fn connection_string_hosts(value: &str) -> Option<Vec<&str>> {
    let pieces: Vec<&str> = if value.contains(';') {
        value.split(';').collect()
    } else {
        value.split_whitespace().collect()
    };
    let mut found: Option<Vec<&str>> = None;
    for piece in pieces {
        let Some((key, v)) = piece.split_once('=') else {
            continue;
        };
        let key = key
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_ascii_lowercase();
        if !HOST_KEYS.contains(&key.as_str()) {
            continue;
        }
        let out = found.get_or_insert_with(Vec::new);
        let v = v.trim().trim_matches(['"', '\'']);
        if SERVER_KEYS.contains(&key.as_str()) {
            let v = match v.split_once(':') {
                Some((protocol, rest))
                    if SERVER_PROTOCOLS.contains(&protocol.to_ascii_lowercase().as_str()) =>
                {
                    rest
                }
                _ => v,
            };
            let v = v.split('\\').next().unwrap_or("");
            match v.split_once(',') {
                Some((host, port)) if port.trim().bytes().all(|b| b.is_ascii_digit()) => {
                    out.push(host.trim());
                }
                _ => out.extend(v.split(',').map(str::trim)),
            }
        } else {
            out.extend(v.split(',').map(str::trim));
        }
    }
    found
}

/// The host of Oracle's thin JDBC form, `jdbc:oracle:thin:@[//]host:port…`.
pub(super) fn oracle_thin_host(piece: &str) -> Option<&str> {
    if !piece.get(..12)?.eq_ignore_ascii_case("jdbc:oracle:") {
        return None;
    }
    let (_, rest) = piece.split_once('@')?;
    let rest = rest.trim_start_matches('/');
    Some(rest.split([':', '/']).next().unwrap_or(""))
}

/// The `host[:port]` items an address holds: a connection string; else a
/// comma-separated list of plain `host[:port]` items and URLs
/// (`scheme://[user@]host[:port][/path]`, `jdbc:postgresql://…`
/// included). After a URL's host, items up to its path are more hosts
/// of the same URL (MongoDB's `mongodb://a:27017,b:27017/db`, JDBC
/// fail-over lists); items after its path has begun are its query.
pub(super) fn address_items(value: &str) -> Vec<&str> {
    if let Some(items) = connection_string_hosts(value) {
        return items;
    }
    let mut out = Vec::new();
    let mut in_url = false;
    let mut authority_open = false;
    for piece in value.split(',') {
        let piece = piece.trim();
        let path_at = |s: &str| s.find(['/', '?', '#', ';']);
        if let Some(i) = piece.find("://") {
            let rest = &piece[i + 3..];
            let end = path_at(rest);
            out.push(&rest[..end.unwrap_or(rest.len())]);
            in_url = true;
            authority_open = end.is_none();
        } else if let Some(host) = oracle_thin_host(piece) {
            out.push(host);
            in_url = true;
            authority_open = false;
        } else if !in_url || authority_open {
            let end = path_at(piece);
            out.push(&piece[..end.unwrap_or(piece.len())]);
            if in_url && end.is_some() {
                authority_open = false;
            }
        }
    }
    out
}

/// The service one `[user@]host[:port]` item names, with its namespace:
/// `name` is in `own_ns`; `name.ns`, `name.ns.svc` and
/// `name.ns.svc.<cluster domain>` in `ns`. IP addresses, `localhost` and
/// names outside the cluster name none.
pub(super) fn host_name(item: &str, own_ns: &str) -> Option<(String, String)> {
    let mut h = item.trim();
    if let Some((_, rest)) = h.rsplit_once('@') {
        h = rest;
    }
    if h.starts_with('[') {
        return None; // an IPv6 literal
    }
    if let Some((host, port)) = h.rsplit_once(':') {
        if port.is_empty() || !port.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return None;
        }
        h = host;
    }
    let h = h.trim_end_matches('.').to_ascii_lowercase();
    // A process's own host is no other service.
    if h == "localhost"
        || h.is_empty()
        || !h
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
    {
        return None;
    }
    let labels: Vec<&str> = h.split('.').collect();
    if labels.iter().any(|l| l.is_empty())
        || labels.iter().all(|l| l.bytes().all(|b| b.is_ascii_digit()))
    {
        return None; // malformed, or an IPv4 address
    }
    match labels.as_slice() {
        [name] => Some((name.to_string(), own_ns.to_string())),
        [name, ns] | [name, ns, "svc", ..] => Some((name.to_string(), ns.to_string())),
        _ => None, // a name outside the cluster
    }
}

/// The services an address names, each once, with the namespace each is
/// in (see [`address_items`] and [`host_name`]).
pub(super) fn hosts(value: &str, own_ns: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for item in address_items(value) {
        if let Some(named) = host_name(item, own_ns) {
            if !out.contains(&named) {
                out.push(named);
            }
        }
    }
    out
}

/// Does this variable announce an address? By its name's ending, by being
/// a connection string that names a host, or by a value shaped like an
/// address (a scheme, a port, a cluster DNS name, or JDBC's `jdbc:`).
pub(super) fn looks_like_address(name: &str, value: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if ADDRESS_SUFFIXES.iter().any(|s| upper.ends_with(s)) {
        return true;
    }
    if connection_string_hosts(value).is_some() {
        return true;
    }
    if value.is_empty() || value.chars().any(char::is_whitespace) {
        return false;
    }
    value.contains("://")
        || value.contains(".svc")
        || value
            .get(..5)
            .is_some_and(|p| p.eq_ignore_ascii_case("jdbc:"))
        || value.rsplit_once(':').is_some_and(|(h, p)| {
            !h.is_empty() && !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        let h = |v: &str| hosts(v, "shop");
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(h("cart:7070"), [pair("cart", "shop")]);
        assert_eq!(h("http://cart"), [pair("cart", "shop")]);
        assert_eq!(
            h("grpc://user:pw@cart.other:50051/x?y"),
            [pair("cart", "other")]
        );
        assert_eq!(
            h("cart.other.svc.cluster.local:80"),
            [pair("cart", "other")]
        );
        assert_eq!(
            h("cart.other.svc.example.internal"),
            [pair("cart", "other")]
        );
        assert_eq!(
            h("kafka-0:9092,kafka-1:9092"),
            [pair("kafka-0", "shop"), pair("kafka-1", "shop")]
        );
        assert_eq!(h("Cart:80"), [pair("cart", "shop")]);
        for none in [
            "api.example.com",
            "10.0.0.1:80",
            "[::1]:80",
            "localhost:8080",
            ":8080",
            "$(HOST)",
            "",
        ] {
            assert!(h(none).is_empty(), "{none}");
        }
        assert!(looks_like_address("CART_SERVICE_ADDR", "cartservice:7070"));
        assert!(looks_like_address("redis_host", "redis"));
        assert!(looks_like_address("mongo", "user-db:27017"));
        assert!(looks_like_address(
            "ZIPKIN",
            "zipkin.jaeger.svc.cluster.local"
        ));
        assert!(!looks_like_address(
            "JAVA_OPTS",
            "-Xms64m -Dfile=file:/dev/urandom"
        ));
        assert!(!looks_like_address("PORT", "8080"));
        assert!(!looks_like_address("MODE", "cart"));
    }

    /// Connection strings and multi-host URLs name their hosts; a URL's
    /// query names none.
    #[test]
    fn connection_strings() {
        let h = |v: &str| hosts(v, "shop");
        let names = |list: &[&str]| -> Vec<(String, String)> {
            list.iter()
                .map(|n| match n.split_once('.') {
                    Some((name, ns)) => (name.to_string(), ns.to_string()),
                    None => (n.to_string(), "shop".to_string()),
                })
                .collect()
        };
        for (value, want) in [
            (
                "Host=postgresql;Port=5432;Database=x;Username=u",
                vec!["postgresql"],
            ),
            (
                "host=pg-0,pg-1:5433;Target Session Attributes=primary",
                vec!["pg-0", "pg-1"],
            ),
            (
                "Server=tcp:sql.data,1433;Database=x;User Id=sa",
                vec!["sql.data"],
            ),
            (
                "Data Source=mssql\\SQLEXPRESS;Initial Catalog=x",
                vec!["mssql"],
            ),
            ("Server=mssql;Database=x", vec!["mssql"]),
            ("SERVER = mssql , 1433 ; Database=x", vec!["mssql"]),
            ("host=pg port=5432 dbname=x", vec!["pg"]),
            (
                "jdbc:postgresql://ledger-db:5432/postgresdb",
                vec!["ledger-db"],
            ),
            (
                "jdbc:postgresql://pg-0:5432,pg-1:5432/db?targetServerType=primary",
                vec!["pg-0", "pg-1"],
            ),
            ("jdbc:sqlserver://mssql:1433;databaseName=x", vec!["mssql"]),
            (
                "jdbc:sqlserver://;serverName=mssql;databaseName=x",
                vec!["mssql"],
            ),
            ("jdbc:oracle:thin:@//oracle:1521/ORCL", vec!["oracle"]),
            ("jdbc:oracle:thin:@oracle.db:1521:ORCL", vec!["oracle.db"]),
            (
                "mongodb://u:p@mongo-0:27017,mongo-1.data:27017/db?replicaSet=rs0",
                vec!["mongo-0", "mongo-1.data"],
            ),
            (
                "PLAINTEXT://kafka-0:9092,PLAINTEXT://kafka-1:9092",
                vec!["kafka-0", "kafka-1"],
            ),
            (
                "http://collector:4318/v1/traces?x=cart,orders",
                vec!["collector"],
            ),
            (
                "redis-cart:6379,password=secret,ssl=false",
                vec!["redis-cart"],
            ),
            ("Server=tcp:db.example.com,1433", vec![]),
            ("jdbc:h2:mem:test", vec![]),
        ] {
            assert_eq!(h(value), names(&want), "{value}");
        }
        assert!(looks_like_address(
            "ConnectionStrings__Db",
            "Host=db;Port=5432"
        ));
        assert!(looks_like_address("PGSERVICE", "host=db port=5432"));
        assert!(looks_like_address("SPRING_DATASOURCE", "jdbc:h2:mem:x"));
        assert!(!looks_like_address("JAVA_OPTS", "-Xmx1g -Dhost=db"));
    }
}
