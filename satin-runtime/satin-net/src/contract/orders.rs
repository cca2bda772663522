//! What a supervisor tells a node it started, on the node's standard
//! input, a line each: death notices, chaos orders (a leave among them),
//! the roster, the end.
//! Written by [`Order::line`], read by [`read_orders`].

use std::io::BufRead;
use std::net::SocketAddr;

/// What a supervised node reads on its standard input when a peer's
/// process ended: this prefix, then the peer's address.
const GONE_NOTICE: &str = "gone ";
/// Chaos for a supervised node, on its standard input: `slow F` (its
/// workers run F times slower; `inf`: hung) and `fail P` (jobs it steals
/// fail with probability P).
const SLOW_ORDER: &str = "slow ";
const FAIL_ORDER: &str = "fail ";
/// Chaos for a supervised node's network: this prefix, then an order for
/// its socket's faults (`isolate on`, `block ADDR`, `loss P`, … — see
/// `netfault.rs`).
const NET_ORDER: &str = "net ";
/// Chaos `leave`: the node leaves the run at once, handing over what it
/// finished (an order, not a second SIGTERM, which a node may take as one
/// with the first).
const LEAVE_ORDER: &str = "leave";
/// The run's first membership, once every member listens: this prefix,
/// then `ID@ADDR` for each member in order (the first is the master).
const ROSTER_ORDER: &str = "roster ";

/// The supervisor holds the answer's output (a node printed it and ended
/// well): the program is over, and a node whose program waits ends.
const OVER_NOTICE: &str = "over";

/// What the supervisor tells a node on its standard input.
pub(crate) enum Order {
    /// The process of the node at this address ended.
    Gone(SocketAddr),
    /// Run the workers this many times slower (infinite: hung).
    Slow(f64),
    /// Jobs stolen from now on fail with this probability.
    Fail(f64),
    /// A change to the faults of the node's network (see `netfault.rs`).
    Net(String),
    /// Leave the run now, handing over what is finished.
    Leave,
    /// The run's first membership: (id, address), the master first.
    Roster(Vec<(u64, SocketAddr)>),
    /// The answer's output is out ([`OVER_NOTICE`]).
    Over,
}

impl Order {
    /// The line that carries it.
    pub(crate) fn line(&self) -> String {
        match self {
            Order::Gone(addr) => format!("{GONE_NOTICE}{addr}"),
            Order::Slow(factor) => format!("{SLOW_ORDER}{factor}"),
            Order::Fail(rate) => format!("{FAIL_ORDER}{rate}"),
            Order::Net(order) => format!("{NET_ORDER}{order}"),
            Order::Roster(members) => {
                let members: Vec<String> = members.iter().map(|(id, addr)| format!("{id}@{addr}")).collect();
                format!("{ROSTER_ORDER}{}", members.join(" "))
            }
            Order::Over => OVER_NOTICE.to_string(),
            Order::Leave => LEAVE_ORDER.to_string(),
        }
    }

    /// The order a line carries, if any.
    fn parse(line: &str) -> Option<Order> {
        let arg = |prefix: &str| line.strip_prefix(prefix).map(str::trim);
        Some(if line.trim() == OVER_NOTICE {
            Order::Over
        } else if line.trim() == LEAVE_ORDER {
            Order::Leave
        } else if let Some(addr) = arg(GONE_NOTICE).and_then(|a| a.parse().ok()) {
            Order::Gone(addr)
        } else if let Some(factor) = arg(SLOW_ORDER).and_then(|f| f.parse().ok()) {
            Order::Slow(factor)
        } else if let Some(rate) = arg(FAIL_ORDER).and_then(|r| r.parse().ok()) {
            Order::Fail(rate)
        } else if let Some(order) = arg(NET_ORDER) {
            Order::Net(order.to_string())
        } else if let Some(members) = arg(ROSTER_ORDER).and_then(roster) {
            Order::Roster(members)
        } else {
            return None;
        })
    }
}

/// `ID@ADDR ID@ADDR …`, or `None` if any part does not parse.
fn roster(text: &str) -> Option<Vec<(u64, SocketAddr)>> {
    text.split_whitespace()
        .map(|m| {
            let (id, addr) = m.split_once('@')?;
            Some((id.parse().ok()?, addr.parse().ok()?))
        })
        .collect()
}

/// Reads this node's orders from its standard input on a thread of its
/// own (the read blocks until the next line) and hands each to `take`,
/// until it returns false or the supervisor closes the input.
pub(crate) fn read_orders(mut take: impl FnMut(Order) -> bool + Send + 'static) {
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines().map_while(Result::ok) {
            let Some(order) = Order::parse(&line) else { continue };
            if !take(order) {
                return;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_order_written_reads_back() {
        let addr: SocketAddr = "127.0.0.1:7000".parse().unwrap();
        let orders = [
            Order::Gone(addr),
            Order::Slow(f64::INFINITY),
            Order::Slow(2.5),
            Order::Fail(0.25),
            Order::Net("block 127.0.0.1:7001".into()),
            Order::Roster(vec![(0, addr), (7, "127.0.0.1:7002".parse().unwrap())]),
            Order::Over,
            Order::Leave,
        ];
        for order in orders {
            let line = order.line();
            assert_eq!(Order::parse(&line).map(|o| o.line()), Some(line.clone()), "{line}");
        }
        assert!(Order::parse("something else").is_none());
    }
}
