//! Where an exporter may send: its destination URL read strictly ([`Destination`]) and the
//! operator's allow-list ([`DestinationPolicy`], `REGISTRY_EXPORTER_ALLOWED_DESTINATIONS`).
//!
//! A destination is untrusted: an exporter's definition is written by any admin of the registry,
//! so its URL must not reach what the registry's own network position can reach (metadata
//! services, loopback, the private network) unless the operator says so.
//! - The URL is `http(s)://host[:port][/path]`: no user info (credentials never go in URLs), no
//!   query, no fragment (a `#` would pin every call to one path).
//! - `REGISTRY_EXPORTER_ALLOWED_DESTINATIONS` unset or empty: any public address is allowed;
//!   loopback, link-local, private, shared, unspecified, multicast and reserved addresses are
//!   refused, for an IP literal (decimal and other spellings are read as the WHATWG URL parser
//!   reads them) and for every address a name resolves to, at each connection (the transport's
//!   resolver checks them with [`DestinationPolicy::admits_address`]).
//! - Set: a comma-separated list of hosts (`registry.example.com`, `10.1.2.3`, `[::1]`),
//!   `host:port` pairs and CIDR ranges (`10.0.0.0/8`). A destination is allowed when its host (and
//!   port, for a pair) is listed, or when its address (an IP literal, or each address its name
//!   resolves to) lies in a listed range or equals a listed address. Nothing else is allowed.
//! - Redirects are never followed (a 3xx is a refusal), so no redirect can lead elsewhere.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use url::Url;

/// The operator's allow-list variable.
pub const ALLOWED_VAR: &str = "REGISTRY_EXPORTER_ALLOWED_DESTINATIONS";

/// One allow-list entry.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Entry {
    /// A host name (lower case) or an IP address, any port.
    Host(String),
    /// A host name (lower case) or an IP address, and a port.
    HostPort(String, u16),
    /// An address range.
    Range(IpAddr, u8),
}

/// The allow-list: `None` is the default (public addresses only).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DestinationPolicy {
    entries: Option<Vec<Entry>>,
}

impl DestinationPolicy {
    /// The policy `REGISTRY_EXPORTER_ALLOWED_DESTINATIONS` sets (the default when unset or empty).
    pub fn from_env() -> Result<Self, String> {
        match std::env::var(ALLOWED_VAR) {
            Ok(text) => Self::parse(&text),
            Err(std::env::VarError::NotPresent) => Ok(Self::default()),
            Err(std::env::VarError::NotUnicode(_)) => Err(format!("{ALLOWED_VAR} is not UTF-8")),
        }
    }

    /// The policy of an allow-list text (see the module documentation); empty: the default.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut entries = Vec::new();
        for item in text.split(',').map(str::trim).filter(|item| !item.is_empty()) {
            entries.push(
                parse_entry(item)
                    .ok_or_else(|| format!("{ALLOWED_VAR}: '{item}' is not a host, host:port or CIDR range"))?,
            );
        }
        Ok(Self { entries: if entries.is_empty() { None } else { Some(entries) } })
    }

    /// Whether the allow-list admits `destination` by its host: `Ok(true)` when the host itself
    /// is admitted (its name is listed, or its IP literal is allowed), `Ok(false)` when it is a
    /// name whose resolved addresses decide, `Err` (the reason) when it is refused.
    pub fn admits_host(&self, destination: &Destination) -> Result<bool, String> {
        let host = destination.host.as_str();
        let port = destination.port;
        let literal = destination.ip();
        if let Some(entries) = &self.entries {
            let named = entries.iter().any(|entry| match entry {
                Entry::Host(listed) => same_host(listed, host),
                Entry::HostPort(listed, listed_port) => same_host(listed, host) && *listed_port == port,
                Entry::Range(..) => false,
            });
            if named {
                return Ok(true);
            }
        }
        match literal {
            Some(ip) if self.admits_address(ip) => Ok(true),
            Some(ip) => Err(self.refusal(&ip.to_string())),
            None if self.entries.is_none() && is_local_name(host) => Err(self.refusal(host)),
            None => Ok(false),
        }
    }

    /// Whether a resolved (or literal) address is allowed.
    pub fn admits_address(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        match &self.entries {
            None => is_public(ip),
            Some(entries) => entries.iter().any(|entry| match entry {
                Entry::Host(listed) => listed.parse::<IpAddr>().is_ok_and(|listed| canonical(listed) == ip),
                Entry::HostPort(..) => false,
                Entry::Range(network, bits) => in_range(ip, *network, *bits),
            }),
        }
    }

    /// Why `what` (an address or a host) is refused, naming the allow-list.
    pub fn refusal(&self, what: &str) -> String {
        match self.entries {
            None => format!(
                "destination address {what} is loopback, private, link-local or otherwise not public: not allowed unless {ALLOWED_VAR} lists it"
            ),
            Some(_) => format!("destination {what} is not in {ALLOWED_VAR}"),
        }
    }
}

/// A destination URL, read strictly.
#[derive(Clone, Debug)]
pub struct Destination {
    /// `scheme://host[:port][/path]`, without a trailing `/`.
    pub base: String,
    /// The host as the URL parser reads it (lower case; an IPv6 address without brackets).
    host: String,
    port: u16,
}

impl Destination {
    /// The first of `url`'s comma-separated URLs, if it is a destination URL. The reason never
    /// repeats the URL (it may hold a password).
    pub fn parse(url: &str) -> Result<Self, String> {
        let first = url.split(',').next().unwrap_or_default().trim();
        let parsed = Url::parse(first).map_err(|error| format!("schema.registry.url is not a URL ({error})"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err("schema.registry.url is not an http(s) URL".to_owned());
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(
                "schema.registry.url holds user info: credentials go in basic.auth.user.info, never in the URL"
                    .to_owned(),
            );
        }
        if parsed.query().is_some() || parsed.fragment().is_some() || first.contains(['?', '#']) {
            return Err("schema.registry.url has a query or a fragment".to_owned());
        }
        // The parser's host: an IPv4 address in dotted form whatever its spelling, an IPv6 one in
        // brackets, a name in lower case.
        let host = match parsed.host_str() {
            Some(host) if !host.is_empty() => host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase(),
            _ => return Err("schema.registry.url has no host".to_owned()),
        };
        let port = parsed.port_or_known_default().unwrap_or(80);
        let base = parsed.as_str().trim_end_matches('/').to_owned();
        Ok(Self { base, host, port })
    }

    fn ip(&self) -> Option<IpAddr> {
        self.host.parse().ok()
    }
}

fn parse_entry(item: &str) -> Option<Entry> {
    if let Some((network, bits)) = item.split_once('/') {
        let network: IpAddr = network.trim_start_matches('[').trim_end_matches(']').parse().ok()?;
        let bits: u8 = bits.parse().ok()?;
        let width = if network.is_ipv4() { 32 } else { 128 };
        return (bits <= width).then_some(Entry::Range(canonical(network), bits));
    }
    if let Ok(ip) = item.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
        return Some(Entry::Host(ip.to_string()));
    }
    let (host, port) = match item.rsplit_once(':') {
        Some((host, port)) => (host, Some(port.parse::<u16>().ok()?)),
        None => (item, None),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let host = match host.parse::<IpAddr>() {
        Ok(ip) => ip.to_string(),
        Err(_) if !host.is_empty() && host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-')) => {
            host.to_ascii_lowercase()
        }
        Err(_) => return None,
    };
    Some(match port {
        Some(port) => Entry::HostPort(host, port),
        None => Entry::Host(host),
    })
}

fn same_host(listed: &str, host: &str) -> bool {
    match (listed.parse::<IpAddr>(), host.parse::<IpAddr>()) {
        (Ok(listed), Ok(host)) => canonical(listed) == canonical(host),
        _ => listed.eq_ignore_ascii_case(host.trim_end_matches('.')),
    }
}

/// `localhost` and its subdomains resolve to loopback by definition (RFC 6761).
fn is_local_name(host: &str) -> bool {
    let host = host.trim_end_matches('.');
    host == "localhost" || host.ends_with(".localhost")
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

fn in_range(ip: IpAddr, network: IpAddr, bits: u8) -> bool {
    match (ip, network) {
        (IpAddr::V4(ip), IpAddr::V4(network)) => {
            let mask = if bits == 0 { 0 } else { u32::MAX << (32 - u32::from(bits)) };
            u32::from(ip) & mask == u32::from(network) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(network)) => {
            let mask = if bits == 0 { 0 } else { u128::MAX << (128 - u32::from(bits)) };
            u128::from(ip) & mask == u128::from(network) & mask
        }
        _ => false,
    }
}

/// Whether `ip` is a public unicast address.
fn is_public(ip: IpAddr) -> bool {
    match canonical(ip) {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || a >= 240
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && ip.octets()[2] == 0)
        || (a == 198 && (18..20).contains(&b)))
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || (first & 0xffc0) == 0xfec0
        || first == 0x2001 && ip.segments()[1] == 0x0db8
        || first == 0x0064 && ip.segments()[1] == 0xff9b
        || ip.to_ipv4().is_some_and(|v4| !is_public_v4(v4)) && first == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(policy: &str, url: &str) -> Result<bool, String> {
        let policy = DestinationPolicy::parse(policy)?;
        policy.admits_host(&Destination::parse(url)?)
    }

    #[test]
    fn the_default_refuses_every_non_public_literal() {
        for url in [
            "http://127.0.0.1:8081",
            "http://2130706433:8081",
            "http://0x7f.1:8081",
            "http://[::1]:8081",
            "http://[::ffff:127.0.0.1]/",
            "http://0.0.0.0/",
            "http://[::]/",
            "http://169.254.169.254/latest",
            "http://[fe80::1]/",
            "http://10.1.2.3/",
            "http://172.16.0.1/",
            "http://192.168.1.1/",
            "http://100.64.0.1/",
            "http://[fd00::1]/",
            "http://localhost:8081",
            "http://LocalHost./",
            "http://a.localhost/",
        ] {
            assert!(check("", url).is_err(), "{url} is refused");
        }
        assert_eq!(check("", "https://8.8.8.8/"), Ok(true));
        assert_eq!(check("", "https://registry.example.com/"), Ok(false), "a name: its addresses decide");
    }

    #[test]
    fn a_list_admits_exactly_what_it_names() {
        assert_eq!(check("127.0.0.1", "http://127.0.0.1:9"), Ok(true));
        assert_eq!(check("127.0.0.1", "http://2130706433:9"), Ok(true), "the same address spelled otherwise");
        assert!(check("127.0.0.1:80", "http://127.0.0.1:9").is_err());
        assert_eq!(check("127.0.0.1:9", "http://127.0.0.1:9/"), Ok(true));
        assert_eq!(check("10.0.0.0/8", "http://10.9.8.7/"), Ok(true));
        assert!(check("10.0.0.0/8", "http://11.0.0.1/").is_err());
        assert!(check("10.0.0.0/8", "https://8.8.8.8/").is_err(), "a list replaces the default");
        assert_eq!(check("Registry.Example.com", "http://registry.example.COM:1/"), Ok(true));
        assert_eq!(check("registry.example.com:443", "https://registry.example.com/"), Ok(true));
        assert_eq!(check("10.0.0.0/8", "https://other.example.com/"), Ok(false));
        assert_eq!(check("[::1]", "http://[::1]:9/"), Ok(true));
        assert!(DestinationPolicy::parse("10.0.0.0/33").is_err());
        assert!(DestinationPolicy::parse("a b").is_err());
        assert!(DestinationPolicy::parse("host:port").is_err());
        let policy = DestinationPolicy::parse("10.0.0.0/8, 127.0.0.1").unwrap_or_default();
        assert!(policy.admits_address("10.2.3.4".parse().unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED))));
        assert!(!DestinationPolicy::default().admits_address(IpAddr::V4(Ipv4Addr::LOCALHOST)));
    }

    #[test]
    fn urls_are_read_strictly() {
        for url in [
            "ftp://x/",
            "http://u:p@host/",
            "http://u@host/",
            "http://host/#",
            "http://host/?a=b",
            "http://",
            "nonsense",
        ] {
            let refused = Destination::parse(url).map(|destination| destination.base);
            assert!(refused.is_err(), "{url} is refused");
            if let Err(reason) = refused {
                assert!(!reason.contains(":p@"), "the reason never repeats user info");
            }
        }
        let parsed = Destination::parse("https://Registry.Example.com:8443/base/, http://second").map(|d| d.base);
        assert_eq!(parsed, Ok("https://registry.example.com:8443/base".to_owned()));
    }
}
