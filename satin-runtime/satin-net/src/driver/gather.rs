//! A first membership the nodes agree on among themselves
//! (`--expect-nodes N`): nothing is decided until the run's voters are
//! known, so any one of its first nodes may die from its first
//! millisecond on and the others still answer.
//!
//! All nodes are given one address, the *rendezvous* (`--listen R` on
//! the node the user calls first, `--join R` on the others). Whichever
//! process holds R gathers: it counts the `Gather` of each node that
//! reaches it and, once all N are in (or a majority of N, and the rest
//! had [`GRACE`] to come), sends every one of them the `Roster`, itself
//! first (the master). Every node then starts as a static member of that
//! roster, whose quorum has all of them as voters — the same start as a
//! supervisor's `--local-nodes` run (`Node::member`).
//!
//! A node that waits for the roster tries to bind R every [`TICK`]: it
//! succeeds only when the process that held R is gone, and then holds R
//! itself (an accept loop beside its own address, which stays its
//! address) and gathers in its place — counting the one it replaced as
//! gone if it had reached it. A roster that its sender delivered only in
//! part is not lost either: each member passes the roster it got on to
//! the others once. A node that arrives after the run started gets a
//! `Welcome` instead and joins as any joiner.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use tracing::{info, warn};

use super::{Inbox, Input, RECONNECT};
use crate::conn::bind_if_free;
use crate::node_io::{Identity, NodeIo, CONTACT};
use crate::tls::Pool;
use satin_proto::{ClusterId, Msg, NodeId};

/// How often a waiting node looks whether the rendezvous is free.
const TICK: Duration = Duration::from_millis(20);
/// How often a waiting node says again that it waits, on a new
/// connection (a rendezvous that died and was replaced is reached so).
const ASK_AGAIN: Duration = Duration::from_millis(250);
/// How long the last nodes have to arrive once a majority is in.
pub(crate) const GRACE: Duration = Duration::from_millis(500);

/// `--expect-nodes`: how many nodes the run starts with, and where they
/// meet.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Gather {
    pub(crate) expect: usize,
    pub(crate) rendezvous: SocketAddr,
}

/// How a gathering ended for this node.
pub(super) enum Gathered {
    /// The run's first members (id, cluster), the master first; this node
    /// is one of them.
    Members(Vec<(NodeId, ClusterId)>),
    /// The run started without this node: it joins as any joiner (the
    /// `Welcome` it got waits among the early inputs).
    Late,
}

/// Before the node opens its network: a node started to listen on the
/// rendezvous takes it if it is free (the socket to open on), and
/// otherwise waits there as any other node, under an id and address of
/// its own.
pub(super) fn take_rendezvous(g: &Gather, me: &mut Identity) -> Result<Option<UdpSocket>, String> {
    if me.contact.is_some() || me.listen != g.rendezvous || g.rendezvous.port() == 0 {
        return Ok(None);
    }
    match bind_if_free(g.rendezvous) {
        Ok(Some(socket)) => Ok(Some(socket)),
        Ok(None) => {
            let ip = match g.rendezvous.ip() {
                ip if ip.is_unspecified() => std::net::IpAddr::from([127, 0, 0, 1]),
                ip => ip,
            };
            info!("{} is taken: another node gathers the run there, and this one joins it", g.rendezvous);
            me.contact = Some(SocketAddr::new(ip, g.rendezvous.port()));
            me.listen = SocketAddr::new(g.rendezvous.ip(), 0);
            me.id = crate::fresh_id();
            Ok(None)
        }
        Err(e) => Err(format!("cannot listen on {}: {e}", g.rendezvous)),
    }
}

/// One node's part in the gathering, until it knows the roster.
struct Gathering<'a> {
    g: Gather,
    me: &'a Identity,
    /// This node holds the rendezvous and counts the others.
    holds: bool,
    /// Whether binding the rendezvous here can ever succeed (it is an
    /// address of this host).
    may_take: bool,
    /// This node reached the rendezvous's holder (it counts as gone if
    /// this node takes the rendezvous over).
    reached: bool,
    /// Holders of the rendezvous known to be gone.
    gone: usize,
    /// The nodes counted in so far, in the order they came.
    counted: Vec<(NodeId, ClusterId)>,
    /// Since when a majority of the expected nodes is in.
    majority_since: Option<Instant>,
    /// When this node last asked the holder to count it in.
    asked_at: Option<Instant>,
}

impl Gathering<'_> {
    fn majority(&self) -> usize {
        self.g.expect / 2 + 1
    }

    /// Whether the holder has counted enough nodes to start.
    fn ready(&self, now: Instant) -> bool {
        let n = self.counted.len() + 1;
        n + self.gone >= self.g.expect
            || (n >= self.majority() && self.majority_since.is_some_and(|t| now - t >= GRACE))
    }

    /// Counts `from` in; false if it expects another number of nodes.
    fn count(&mut self, from: NodeId, cluster: ClusterId, expect: u32, name: &str) -> bool {
        if expect as usize != self.g.expect {
            warn!("node {name} expects {expect} nodes, this one {}: refused", self.g.expect);
            return false;
        } else if from != self.me.id && !self.counted.iter().any(|(id, _)| *id == from) {
            self.counted.push((from, cluster));
            if self.counted.len() + 1 >= self.majority() {
                self.majority_since.get_or_insert_with(Instant::now);
            }
        }
        true
    }
}

/// Gathers the run's first membership (see the module's text); what
/// else arrives meanwhile waits in the inbox's `early`.
pub(super) async fn gather(
    g: Gather,
    holds: bool,
    pool: &Pool,
    me: &Identity,
    io: &mut NodeIo<Msg, Input>,
    inbox: Inbox<'_>,
    wait: Duration,
) -> Result<Gathered, String> {
    let Inbox { input, urgent, early } = inbox;
    let mut s = Gathering {
        g,
        me,
        holds,
        may_take: !holds,
        reached: false,
        gone: 0,
        counted: Vec::new(),
        majority_since: (g.expect == 1).then(Instant::now),
        asked_at: None,
    };
    let give_up = Instant::now() + wait;
    let mut tick = tokio::time::interval(TICK);
    loop {
        let now = Instant::now();
        if s.holds && s.ready(now) {
            let mut members = vec![(me.id, me.cluster)];
            members.extend(s.counted.iter().copied());
            info!("the run's first {} members are in; this node leads", members.len());
            for &(id, _) in &members[1..] {
                io.net.send(id, Msg::Roster { members: members.clone() });
            }
            return Ok(Gathered::Members(members));
        }
        if now >= give_up {
            return Err(match s.holds {
                true => format!(
                    "only {} of the {} expected nodes arrived at {} in {:?}",
                    s.counted.len() + 1,
                    g.expect,
                    g.rendezvous,
                    wait
                ),
                false => format!("no node gathering the run answered at {} in {:?}", g.rendezvous, wait),
            });
        }
        // Handshakes first: a peer's hello (its address) comes before
        // its messages on the other input.
        let got = tokio::select! {
            biased;
            Some(got) = urgent.recv() => Some(got),
            _ = tick.tick() => None,
            Some(got) = input.recv() => Some(got),
        };
        let Some(got) = got else {
            s.on_tick(pool, io)?;
            continue;
        };
        if let Some(done) = s.on_input(got, io, early) {
            return done;
        }
    }
}

impl Gathering<'_> {
    /// Takes the rendezvous over if its holder is gone; asks (again) to
    /// be counted otherwise.
    fn on_tick(&mut self, pool: &Pool, io: &mut NodeIo<Msg, Input>) -> Result<(), String> {
        if self.holds {
            return Ok(());
        }
        if self.may_take {
            match bind_if_free(self.g.rendezvous) {
                Ok(Some(socket)) => {
                    io.accept_also(pool, socket)?;
                    io.net.drop_peer(CONTACT);
                    self.holds = true;
                    self.gone = self.reached as usize;
                    info!(
                        "nobody holds {} any more: this node gathers the run's {} first members there",
                        self.g.rendezvous, self.g.expect
                    );
                    return Ok(());
                }
                Ok(None) => {}
                // Another host's address: its holder cannot be replaced here.
                Err(_) => self.may_take = false,
            }
        }
        let now = Instant::now();
        if self.asked_at.is_none_or(|t| now - t >= ASK_AGAIN) {
            self.asked_at = Some(now);
            io.net.drop_peer(CONTACT);
            io.net.send(CONTACT, Msg::Gather { cluster: self.me.cluster, expect: self.g.expect as u32 });
        }
        Ok(())
    }

    /// What `got` means for the gathering: its end, if it is one.
    fn on_input(
        &mut self,
        got: Input,
        io: &mut NodeIo<Msg, Input>,
        early: &mut Vec<Input>,
    ) -> Option<Result<Gathered, String>> {
        match got {
            Input::Hello { id, addr, ref label, ref conn } => {
                io.net.hello(id, addr, label.clone(), conn.clone());
                early.push(got);
            }
            Input::Linked { id, ref conn } => {
                self.reached |= id == CONTACT;
                io.net.outgoing_up(id, conn.clone());
                early.push(got);
            }
            Input::Addr { id, addr, ref label } => {
                io.net.learn(id, addr, label.clone());
                early.push(got);
            }
            Input::PeerDown { id: CONTACT, .. } => io.net.drop_peer(CONTACT),
            Input::PeerDown { id, ours, .. } => {
                if ours {
                    io.net.reconnect_later(id, RECONNECT);
                }
                early.push(got);
            }
            Input::Message { from, msg: Msg::Gather { cluster, expect } } => {
                // An empty roster refuses a node that expects otherwise.
                if self.holds && !self.count(from, cluster, expect, &io.net.name(from)) {
                    io.net.send(from, Msg::Roster { members: Vec::new() });
                }
            }
            Input::Message { msg: Msg::Roster { members }, .. } if members.is_empty() => {
                return Some(Err(format!(
                    "the node gathering the run at {} expects another number of nodes than this one's {}",
                    self.g.rendezvous, self.g.expect
                )));
            }
            Input::Message { from, msg: Msg::Roster { members } } => {
                if members.iter().any(|(id, _)| *id == self.me.id) {
                    // Passed on once, in case its sender did not reach all.
                    for &(id, _) in &members {
                        if id != self.me.id && id != from {
                            io.net.send(id, Msg::Roster { members: members.clone() });
                        }
                    }
                    io.net.drop_peer(CONTACT);
                    return Some(Ok(Gathered::Members(members)));
                }
            }
            Input::Message { msg: Msg::Welcome { .. }, .. } => {
                early.push(got);
                return Some(Ok(Gathered::Late));
            }
            other => early.push(other),
        }
        None
    }
}
