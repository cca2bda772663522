//! What a supervised node reads on its standard input: death notices and
//! chaos orders from its supervisor.

use std::io::BufRead;
use std::net::SocketAddr;

/// What a supervised node reads on its standard input when a peer's
/// process ended: this prefix, then the peer's address.
pub(crate) const GONE_NOTICE: &str = "gone ";
/// Chaos for a supervised node, on its standard input: `slow F` (its
/// workers run F times slower; `inf`: hung) and `fail P` (jobs it steals
/// fail with probability P).
pub(crate) const SLOW_ORDER: &str = "slow ";
pub(crate) const FAIL_ORDER: &str = "fail ";
/// Chaos for a supervised node's network: this prefix, then an order for
/// its socket's faults (`isolate on`, `block ADDR`, `loss P`, … — see
/// `netfault.rs`).
pub(crate) const NET_ORDER: &str = "net ";
/// The run's first membership, once every member listens: this prefix,
/// then `ID@ADDR` for each member in order (the first is the master).
pub(crate) const ROSTER_ORDER: &str = "roster ";

/// The supervisor holds the answer's output (a node printed it and ended
/// well): the program is over, and a node whose program waits ends.
pub(crate) const OVER_NOTICE: &str = "over";

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
    /// The run's first membership: (id, address), the master first.
    Roster(Vec<(u64, SocketAddr)>),
    /// The answer's output is out ([`OVER_NOTICE`]).
    Over,
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
            let arg = |prefix: &str| line.strip_prefix(prefix).map(str::trim);
            let order = if line.trim() == OVER_NOTICE {
                Order::Over
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
                continue;
            };
            if !take(order) {
                return;
            }
        }
    });
}
