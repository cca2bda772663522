//! The network side of a node, whichever run it plays (a divide-and-conquer
//! tree, `driver.rs`, or a task graph, `workflow/node.rs`): the thread's
//! tokio runtime, the endpoint and the address peers reach it at, the
//! handshake it sends, the accept loop, and the links to its peers
//! ([`Net`]). Each driver keeps only its own protocol and event loop.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use super::conn::{
    accept_loop, advertised, endpoint, endpoint_on, Accepting, Inputs, Link, Net, SameHost, SharedDictionary,
};
use super::contract::ChildEnv;
use super::netfault::Faults;
use super::tls::Pool;
use super::wire::{Frame, Message};
use super::Launch;
use satin_proto::codec::{self, Hello};
use satin_proto::{ClusterId, NodeId};

/// Stands for the contact node until its real id is known: a joiner sends
/// its first messages to this id, at the contact's address.
pub(crate) const CONTACT: NodeId = u64::MAX;

/// Who a node is on the network and how it connects: what both kinds of
/// node take from the command line (`Identity::from_launch`).
#[derive(Clone)]
pub(crate) struct Identity {
    pub(crate) id: NodeId,
    pub(crate) cluster: ClusterId,
    /// The cluster's name (`--cluster`), of which `cluster` is a hash.
    pub(crate) cluster_name: String,
    pub(crate) listen: SocketAddr,
    /// `None`: this node starts the run and waits for others.
    pub(crate) contact: Option<SocketAddr>,
    pub(crate) idle_timeout: Duration,
    pub(crate) max_frame: usize,
    /// What peers check before they accept this node's connections.
    pub(crate) hello: Hello,
    /// How logs, statistics and traces name this node: its number under a
    /// supervisor, else the address it listens on (empty until
    /// [`NodeIo::open`] knows it). Never the random id.
    pub(crate) label: String,
    pub(crate) trace: Option<PathBuf>,
    /// Started by `--local-nodes`: the supervisor writes its orders (death
    /// notices, chaos) to this node's standard input.
    pub(crate) supervised: bool,
}

impl Identity {
    /// The node `id` of a run launched with `args`, joining `contact`
    /// (`None`: it starts the run); `label` names it where the supervisor
    /// did not.
    pub(crate) fn from_launch(
        args: &Launch,
        id: NodeId,
        contact: Option<SocketAddr>,
        hello: Hello,
        label: Option<String>,
    ) -> Identity {
        let listen = args.listen.unwrap_or_else(|| {
            let loopback = contact.is_some_and(|j| j.ip().is_loopback());
            SocketAddr::from(if loopback { ([127, 0, 0, 1], 0) } else { ([0, 0, 0, 0], 0) })
        });
        Identity {
            id,
            cluster: u32::from_le_bytes(
                blake3::hash(args.cluster.as_bytes()).as_bytes()[..4].try_into().expect("4 bytes"),
            ),
            cluster_name: args.cluster.clone(),
            listen,
            contact,
            idle_timeout: Duration::from_millis(args.idle_timeout_ms),
            max_frame: args.max_frame,
            hello,
            label: label.or_else(|| ChildEnv::current().node_index.map(|i| i.to_string())).unwrap_or_default(),
            trace: args.trace.clone(),
            supervised: ChildEnv::current().supervised,
        }
    }
}

/// A node's open network: its links to peers, and the accept loop that
/// feeds the driver's input with what peers send.
pub(crate) struct NodeIo<M, I> {
    pub(crate) net: Net<M, I>,
    /// The accept loops: this node's own address, and any other it holds
    /// for the run (a rendezvous, see `driver/gather.rs`).
    accept: Vec<JoinHandle<()>>,
    accepting: Accepting<I>,
    idle_timeout: Duration,
    faults: Option<Arc<Faults>>,
    /// Where this node listens, as its peers reach it.
    pub(crate) addr: SocketAddr,
}

impl<M: Message, I: From<Link<M>> + Send + 'static> NodeIo<M, I> {
    /// Binds the endpoint (its packets through `faults`, `--chaos`),
    /// starts accepting peers and, for a joiner, names its contact
    /// [`CONTACT`]; `announce` says on standard error where the node
    /// listens (tests and scripts read the line) and a node without a
    /// name is named after that address. Events arrive on `input`.
    pub(crate) fn open(
        pool: &Pool,
        me: &mut Identity,
        faults: Option<Arc<Faults>>,
        announce: bool,
        inputs: Inputs<I>,
        dictionary: Option<SharedDictionary>,
    ) -> Result<NodeIo<M, I>, String> {
        Self::open_on(pool, me, None, faults, announce, inputs, dictionary)
    }

    /// [`open`](Self::open) on `socket` if given (already bound to
    /// `me.listen`), else on a socket of its own.
    pub(crate) fn open_on(
        pool: &Pool,
        me: &mut Identity,
        socket: Option<std::net::UdpSocket>,
        faults: Option<Arc<Faults>>,
        announce: bool,
        inputs: Inputs<I>,
        dictionary: Option<SharedDictionary>,
    ) -> Result<NodeIo<M, I>, String> {
        let endpoint = match socket {
            Some(socket) => endpoint_on(pool, socket, me.idle_timeout, faults.clone())?,
            None => endpoint(pool, me.listen, me.idle_timeout, faults.clone())?,
        };
        let addr = advertised(endpoint.local_addr().unwrap_or(me.listen), me.contact);
        if me.label.is_empty() {
            me.label = addr.to_string();
            if announce {
                eprintln!("satin: node listening on {addr}");
            }
        } else if announce {
            eprintln!("satin: node {} listening on {addr}", me.label);
        }
        if announce {
            crate::contract::Report::Listening(addr).tell();
        }
        let label = me.label.clone();
        let hello = Frame::<M>::Hello { hello: me.hello.clone(), id: me.id, cluster: me.cluster, addr, label };
        let hello_frame =
            codec::encode(&hello, me.max_frame).map_err(|e| format!("cannot encode the handshake: {e}"))?;
        let same_host = SameHost::open(faults.clone());
        let accepting = Accepting {
            ours: me.hello.clone(),
            max_frame: me.max_frame,
            inputs: inputs.clone(),
            dictionary: dictionary.clone(),
            same_host: same_host.clone(),
        };
        let accept = vec![tokio::spawn(accept_loop::<M, I>(endpoint.clone(), accepting.clone()))];
        let mut net = Net::new(endpoint, me.id, hello_frame, me.max_frame, inputs.ordinary, dictionary, same_host);
        if let Some(contact) = me.contact {
            net.addrs.insert(CONTACT, contact);
        }
        Ok(NodeIo { net, accept, accepting, idle_timeout: me.idle_timeout, faults, addr })
    }

    /// Accepts peers on `socket` too, for as long as this node runs:
    /// connections there are this node's as any other (it answers and
    /// sends from its own address).
    pub(crate) fn accept_also(&mut self, pool: &Pool, socket: std::net::UdpSocket) -> Result<(), String> {
        let endpoint = endpoint_on(pool, socket, self.idle_timeout, self.faults.clone())?;
        self.accept.push(tokio::spawn(accept_loop::<M, I>(endpoint, self.accepting.clone())));
        Ok(())
    }

    /// Stops accepting, sends the last frames and closes the endpoint.
    pub(crate) async fn close(self) {
        for accept in &self.accept {
            accept.abort();
        }
        let same_host = self.net.same_host.clone();
        // The last news this node sent must reach the others before it goes.
        self.net.flush().await;
        if let Some(same_host) = same_host {
            same_host.remove();
        }
    }
}

/// Runs a node's event loop on this thread, on a runtime of its own: the
/// event loop keeps this thread, and the network — QUIC's packets and
/// crypto, encoding and decoding frames — runs on two more, so a large
/// message never holds the protocol up (the jobs run on the worker pool).
pub(crate) fn block_on<F: Future>(event_loop: F) -> Result<F::Output, String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("satin-net")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the network runtime: {e}"))?;
    Ok(rt.block_on(event_loop))
}
