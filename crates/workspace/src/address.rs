//! Which network addresses a clone may reach. A caller who names a clone URL makes the
//! server connect where the URL points, with the server's own network position and
//! credentials: to its loopback services, the cloud's metadata address, the private
//! network behind it. For remote callers only public addresses are allowed, unless the
//! operator allows more (`clone.allowAddresses`: classes such as `loopback`, or
//! address ranges such as `10.1.0.0/16`). Every address a host resolves to is checked,
//! and an IPv6 address that carries an IPv4 one (mapped, NAT64, 6to4) is checked as
//! that IPv4 address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, ToSocketAddrs};

use ipnet::IpNet;
use serde::Serialize;

/// A kind of address that is not public.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AddressClass {
    /// `127.0.0.0/8`, `::1`: this machine.
    Loopback,
    /// `0.0.0.0/8`, `::`: on Linux, connecting there reaches this machine.
    Unspecified,
    /// `169.254.0.0/16` (cloud metadata), `fe80::/10`.
    LinkLocal,
    /// `10/8`, `172.16/12`, `192.168/16`, shared `100.64/10`, unique local `fc00::/7`.
    Private,
    /// Multicast, broadcast, documentation, benchmarking and reserved ranges.
    Reserved,
}

impl AddressClass {
    /// Every class, in the order errors and docs list them.
    pub const ALL: [AddressClass; 5] = [
        AddressClass::Loopback,
        AddressClass::Unspecified,
        AddressClass::LinkLocal,
        AddressClass::Private,
        AddressClass::Reserved,
    ];

    /// The name `clone.allowAddresses` takes (`loopback`, `link_local`...).
    pub fn name(self) -> &'static str {
        match self {
            AddressClass::Loopback => "loopback",
            AddressClass::Unspecified => "unspecified",
            AddressClass::LinkLocal => "link_local",
            AddressClass::Private => "private",
            AddressClass::Reserved => "reserved",
        }
    }

    /// The class of `ip`, or `None` when it is public.
    pub fn of(ip: IpAddr) -> Option<AddressClass> {
        match ip {
            IpAddr::V4(v4) => class_v4(v4),
            IpAddr::V6(v6) => class_v6(v6),
        }
    }
}

fn class_v4(ip: Ipv4Addr) -> Option<AddressClass> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (127, ..) => AddressClass::Loopback,
        (0, ..) => AddressClass::Unspecified,
        (169, 254, _) => AddressClass::LinkLocal,
        (10, ..) | (192, 168, _) => AddressClass::Private,
        (172, 16..=31, _) | (100, 64..=127, _) => AddressClass::Private,
        (192, 0, 0) | (192, 0, 2) | (198, 51, 100) | (203, 0, 113) | (198, 18..=19, _) => {
            AddressClass::Reserved
        }
        (224..=255, ..) => AddressClass::Reserved,
        _ => return None,
    })
}

fn class_v6(ip: Ipv6Addr) -> Option<AddressClass> {
    if ip.is_loopback() {
        return Some(AddressClass::Loopback);
    }
    if ip.is_unspecified() {
        return Some(AddressClass::Unspecified);
    }
    if let Some(v4) = embedded_v4(ip) {
        return class_v4(v4);
    }
    let s = ip.segments();
    Some(match s[0] {
        0xfe80..=0xfebf => AddressClass::LinkLocal,
        0xfc00..=0xfdff => AddressClass::Private,
        0xff00..=0xffff => AddressClass::Reserved,
        0x2001 if s[1] == 0x0db8 || s[1] == 0 => AddressClass::Reserved,
        0 => AddressClass::Reserved,
        _ => return None,
    })
}

/// The IPv4 address an IPv6 one stands for: mapped (`::ffff:a.b.c.d`), compatible
/// (`::a.b.c.d`), NAT64 (`64:ff9b::/96`) or 6to4 (`2002:AABB:CCDD::/48`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s {
        [0, 0, 0, 0, 0, 0xffff, ..] | [0, 0, 0, 0, 0, 0, ..] => Some(low),
        [0x64, 0xff9b, 0, 0, 0, 0, ..] => Some(low),
        [0x2002, hi, lo, ..] => Some(Ipv4Addr::new(
            (hi >> 8) as u8,
            hi as u8,
            (lo >> 8) as u8,
            lo as u8,
        )),
        _ => None,
    }
}

/// One thing an operator allows: a class, or a range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Allowance {
    /// Every address of a class.
    Class(AddressClass),
    /// Every address in a range (an address alone is its own range).
    Range(IpNet),
}

impl Allowance {
    /// Parses `clone.allowAddresses`: names and ranges separated by commas or
    /// whitespace (`loopback, 10.1.0.0/16, fd00::1`).
    pub fn parse_list(text: &str) -> Result<Vec<Allowance>, String> {
        text.split([',', ' ', '\t', '\n'])
            .filter(|t| !t.is_empty())
            .map(|t| {
                if let Some(class) = AddressClass::ALL.iter().find(|c| c.name() == t) {
                    return Ok(Allowance::Class(*class));
                }
                if let Ok(net) = t.parse::<IpNet>() {
                    return Ok(Allowance::Range(net));
                }
                t.parse::<IpAddr>()
                    .map(|ip| Allowance::Range(IpNet::from(ip)))
                    .map_err(|_| {
                        let names: Vec<&str> = AddressClass::ALL.iter().map(|c| c.name()).collect();
                        format!(
                            "`{t}` is neither an address class ({}) nor an address or range (10.1.0.0/16)",
                            names.join(", ")
                        )
                    })
            })
            .collect()
    }
}

/// Which addresses are reachable: everything (a local caller's clone), or public
/// addresses plus what the operator allows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddressPolicy {
    open: bool,
    allowed: Vec<Allowance>,
}

impl AddressPolicy {
    /// Every address: the local user's own clone.
    pub fn open() -> AddressPolicy {
        AddressPolicy {
            open: true,
            allowed: Vec::new(),
        }
    }

    /// Public addresses only, plus `allowed`.
    pub fn public_and(allowed: Vec<Allowance>) -> AddressPolicy {
        AddressPolicy {
            open: false,
            allowed,
        }
    }

    /// Whether every address is reachable (nothing to check).
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// `Err(class)` when `ip` is of a class this policy does not reach.
    pub fn check(&self, ip: IpAddr) -> Result<(), AddressClass> {
        let ip = match ip {
            IpAddr::V6(v6) => embedded_v4(v6)
                .filter(|_| !v6.is_loopback() && !v6.is_unspecified())
                .map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        let Some(class) = AddressClass::of(ip).filter(|_| !self.open) else {
            return Ok(());
        };
        let allowed = self.allowed.iter().any(|a| match a {
            Allowance::Class(c) => *c == class,
            Allowance::Range(net) => net.contains(&ip),
        });
        if allowed { Ok(()) } else { Err(class) }
    }

    /// Resolves `host` (a name, or an address in any form the system resolver reads:
    /// `127.1`, `2130706433`, `[::1]`) and checks every address it gives. The checked
    /// addresses, to connect to; the first refused class; or `None` when the name does
    /// not resolve.
    pub fn resolve(&self, host: &str, port: u16) -> Result<Vec<IpAddr>, Refusal> {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let addrs: Vec<IpAddr> = match bare.parse::<IpAddr>() {
            Ok(ip) => vec![ip],
            Err(_) => (bare, port)
                .to_socket_addrs()
                .map_err(|_| Refusal::Unresolvable)?
                .map(|a| a.ip())
                .collect(),
        };
        if addrs.is_empty() {
            return Err(Refusal::Unresolvable);
        }
        for ip in &addrs {
            self.check(*ip).map_err(Refusal::Forbidden)?;
        }
        Ok(addrs)
    }
}

/// Why a host may not be reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// It resolves to an address of this class, which the policy does not reach.
    Forbidden(AddressClass),
    /// It does not resolve.
    Unresolvable,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(text: &str) -> Option<&'static str> {
        AddressClass::of(text.parse().unwrap()).map(AddressClass::name)
    }

    #[test]
    fn every_non_public_range_has_its_class_and_public_ones_none() {
        for (ip, want) in [
            ("127.0.0.1", Some("loopback")),
            ("127.255.1.2", Some("loopback")),
            ("::1", Some("loopback")),
            ("::ffff:127.0.0.1", Some("loopback")),
            ("64:ff9b::7f00:1", Some("loopback")),
            ("2002:7f00:1::", Some("loopback")),
            ("0.0.0.0", Some("unspecified")),
            ("::", Some("unspecified")),
            ("169.254.169.254", Some("link_local")),
            ("fe80::1", Some("link_local")),
            ("10.1.2.3", Some("private")),
            ("172.16.0.1", Some("private")),
            ("172.31.255.255", Some("private")),
            ("192.168.0.10", Some("private")),
            ("100.64.0.1", Some("private")),
            ("fd00::1", Some("private")),
            ("::ffff:10.0.0.1", Some("private")),
            ("224.0.0.1", Some("reserved")),
            ("255.255.255.255", Some("reserved")),
            ("192.0.2.1", Some("reserved")),
            ("2001:db8::1", Some("reserved")),
            ("ff02::1", Some("reserved")),
            ("8.8.8.8", None),
            ("172.32.0.1", None),
            ("100.128.0.1", None),
            ("2606:4700::1111", None),
        ] {
            assert_eq!(class(ip), want, "{ip}");
        }
    }

    #[test]
    fn the_operator_allows_classes_and_ranges_and_nothing_else() {
        let allowed = Allowance::parse_list("loopback, 10.1.0.0/16 fd00::7").unwrap();
        let policy = AddressPolicy::public_and(allowed);
        for ok in ["127.0.0.1", "::1", "10.1.200.3", "fd00::7", "8.8.8.8"] {
            assert_eq!(policy.check(ok.parse().unwrap()), Ok(()), "{ok}");
        }
        for (no, why) in [
            ("10.2.0.1", AddressClass::Private),
            ("fd00::8", AddressClass::Private),
            ("169.254.169.254", AddressClass::LinkLocal),
            ("0.0.0.0", AddressClass::Unspecified),
        ] {
            assert_eq!(policy.check(no.parse().unwrap()), Err(why), "{no}");
        }
        assert_eq!(
            AddressPolicy::open().check("127.0.0.1".parse().unwrap()),
            Ok(())
        );
        assert!(
            Allowance::parse_list("loopbak")
                .unwrap_err()
                .contains("loopbak")
        );
        assert!(Allowance::parse_list("10.0.0.0/33").is_err());
        assert_eq!(Allowance::parse_list(" ,").unwrap(), vec![]);
    }

    #[test]
    fn names_and_odd_spellings_resolve_before_the_check() {
        let policy = AddressPolicy::public_and(Vec::new());
        for host in ["localhost", "127.1", "2130706433", "[::1]"] {
            assert_eq!(
                policy.resolve(host, 80),
                Err(Refusal::Forbidden(AddressClass::Loopback)),
                "{host}"
            );
        }
        assert_eq!(
            policy.resolve("no-such-host.invalid", 80),
            Err(Refusal::Unresolvable)
        );
    }
}
