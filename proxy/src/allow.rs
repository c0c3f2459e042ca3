//! Access limited by network (`--allow 10.0.0.0/8`): the alternative to credentials for a
//! proxy in front of a site that has its own login. A connection from an address outside
//! every listed network is closed as soon as it is accepted, before a byte is read.

use std::net::IpAddr;

/// One network: an address and how many leading bits of it must match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    bits: u8,
}

impl Cidr {
    /// Reads `10.0.0.0/8`, `2001:db8::/32`, or a bare address (the one host).
    pub fn parse(s: &str) -> Result<Cidr, String> {
        let s = s.trim();
        let (addr, bits) = match s.split_once('/') {
            Some((a, b)) => (a, Some(b)),
            None => (s, None),
        };
        let addr: IpAddr = addr
            .parse()
            .map_err(|_| format!("{s:?}: not an IP address or CIDR network (e.g. 10.0.0.0/8)"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let bits = match bits {
            None => max,
            Some(b) => b
                .parse::<u8>()
                .ok()
                .filter(|&b| b <= max)
                .ok_or_else(|| format!("{s:?}: the prefix length must be 0 to {max}"))?,
        };
        // Host bits set (10.1.2.3/8) are most likely a typo for a narrower network: say so
        // rather than silently widen what is allowed.
        let cidr = Cidr { addr, bits };
        if cidr.network() != addr {
            return Err(format!(
                "{s:?}: host bits are set; the network is {}/{bits}",
                cidr.network()
            ));
        }
        Ok(cidr)
    }

    /// The address with the host bits cleared.
    fn network(&self) -> IpAddr {
        match self.addr {
            IpAddr::V4(a) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(self.bits)).unwrap_or(0);
                IpAddr::V4((u32::from(a) & mask).into())
            }
            IpAddr::V6(a) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.bits))
                    .unwrap_or(0);
                IpAddr::V6((u128::from(a) & mask).into())
            }
        }
    }

    /// Whether `ip` is in this network. IPv4 peers of a dual-stack listener arrive as
    /// IPv4-mapped IPv6 addresses and are compared as IPv4.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(a)) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(self.bits)).unwrap_or(0);
                u32::from(a) & mask == u32::from(net)
            }
            (IpAddr::V6(net), IpAddr::V6(a)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.bits))
                    .unwrap_or(0);
                u128::from(a) & mask == u128::from(net)
            }
            _ => false,
        }
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.bits)
    }
}

/// The networks clients may connect from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowList {
    nets: Vec<Cidr>,
}

impl AllowList {
    /// Parses each of `nets` ([`Cidr::parse`]).
    pub fn parse<S: AsRef<str>>(nets: &[S]) -> Result<AllowList, String> {
        Ok(AllowList {
            nets: nets
                .iter()
                .map(|n| Cidr::parse(n.as_ref()))
                .collect::<Result<_, _>>()?,
        })
    }

    /// Whether `ip` may connect.
    pub fn allows(&self, ip: IpAddr) -> bool {
        self.nets.iter().any(|n| n.contains(ip))
    }

    /// The networks, for messages (`10.0.0.0/8, 192.168.1.7/32`).
    pub fn describe(&self) -> String {
        self.nets
            .iter()
            .map(Cidr::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn networks_contain_their_addresses_only() {
        let list = AllowList::parse(&["10.0.0.0/8", "192.168.1.7", "2001:db8::/32"]).unwrap();
        assert!(list.allows(ip("10.200.3.4")));
        assert!(list.allows(ip("::ffff:10.1.1.1")), "IPv4-mapped");
        assert!(list.allows(ip("192.168.1.7")));
        assert!(!list.allows(ip("192.168.1.8")));
        assert!(!list.allows(ip("11.0.0.1")));
        assert!(list.allows(ip("2001:db8:ffff::1")));
        assert!(!list.allows(ip("2001:db9::1")));
        assert!(!list.allows(ip("127.0.0.1")));
        let all = AllowList::parse(&["0.0.0.0/0", "::/0"]).unwrap();
        assert!(all.allows(ip("8.8.8.8")) && all.allows(ip("::1")));
        assert!(!AllowList::default().allows(ip("127.0.0.1")));
        assert_eq!(list.describe(), "10.0.0.0/8, 192.168.1.7/32, 2001:db8::/32");
    }

    #[test]
    fn bad_networks_say_why() {
        for (bad, why) in [
            ("10.0.0.0/33", "prefix length"),
            ("10.1.2.3/8", "host bits"),
            ("example.com/8", "not an IP"),
            ("", "not an IP"),
            ("::1/129", "prefix length"),
        ] {
            let e = Cidr::parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
