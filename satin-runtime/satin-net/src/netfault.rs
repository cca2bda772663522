//! Network faults injected below QUIC, on the node's own UDP socket: a
//! node cut off (every packet in and out dropped), packets to some peers
//! dropped (a cut link, in one direction or both), random loss, and delay
//! with jitter (which reorders packets). Nothing is reset or refused:
//! what QUIC sees is a network that loses or delays packets, as a real one
//! does — and as this machine's kernel cannot emulate (no `sch_netem`).
//!
//! The supervisor of `--local-nodes` sets the faults (`--chaos
//! 'partition:…;cut:…;loss:…;delay:…'`): the ones that hold from the
//! start in its environment (`contract::NET_FAULTS`: `;`-separated orders,
//! e.g. `loss 0.2;delay 100 50`), later changes as orders on the node's
//! standard input ([`Faults::apply`]). A node with neither uses the plain
//! socket.

use std::collections::HashSet;
use std::fmt;
use std::io::{self, IoSliceMut};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use quinn::udp::{RecvMeta, Transmit};
use quinn::{AsyncUdpSocket, UdpPoller};

/// What is wrong with this node's network right now.
#[derive(Debug, Default)]
struct State {
    /// Cut off: nothing goes out or comes in.
    isolated: bool,
    /// Packets to these addresses are dropped.
    blocked: HashSet<SocketAddr>,
    /// Probability that a packet sent is lost.
    loss: f64,
    delay: Duration,
    /// Each packet waits `delay` plus up to this much more.
    jitter: Duration,
    /// SplitMix64 state: loss and jitter draws.
    rng: u64,
    /// Packets dropped so far (for the node's statistics and tests).
    dropped: u64,
}

impl State {
    fn next(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The faults of one node's socket, shared by the socket and the driver
/// (which applies the supervisor's orders).
#[derive(Debug, Default)]
pub(crate) struct Faults {
    state: Mutex<State>,
}

/// What a packet that is about to leave meets.
enum Fate {
    Send,
    Drop,
    Delay(Duration),
}

impl Faults {
    /// Faults seeded from `seed` (loss and jitter are drawn from it).
    pub(crate) fn new(seed: u64) -> Arc<Faults> {
        Arc::new(Faults { state: Mutex::new(State { rng: seed, ..State::default() }) })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Applies one order: `isolate on|off`, `block ADDR`, `unblock ADDR`,
    /// `loss P` (0 to 1), `delay MS [JITTER_MS]`. An order that does not
    /// parse is an error that says why (the node logs it and goes on).
    pub(crate) fn apply(&self, order: &str) -> Result<(), String> {
        let mut words = order.split_whitespace();
        let verb = words.next().unwrap_or_default();
        let args: Vec<&str> = words.collect();
        let bad = || format!("bad network fault order {order:?}");
        let ms = |s: &str| s.parse::<f64>().ok().filter(|m| m.is_finite() && *m >= 0.0).map(|m| m / 1e3);
        let mut s = self.state();
        match (verb, args.as_slice()) {
            ("isolate", ["on"]) => s.isolated = true,
            ("isolate", ["off"]) => s.isolated = false,
            ("block", [addr]) => {
                s.blocked.insert(addr.parse().map_err(|_| bad())?);
            }
            ("unblock", [addr]) => {
                s.blocked.remove(&addr.parse().map_err(|_| bad())?);
            }
            ("loss", [p]) => s.loss = p.parse().ok().filter(|p| (0.0..=1.0).contains(p)).ok_or_else(bad)?,
            ("delay", [d]) | ("delay", [d, _]) => {
                s.delay = Duration::from_secs_f64(ms(d).ok_or_else(bad)?);
                s.jitter = Duration::from_secs_f64(args.get(1).map_or(Some(0.0), |j| ms(j)).ok_or_else(bad)?);
            }
            _ => return Err(bad()),
        }
        Ok(())
    }

    /// Applies `;`-separated orders (the form of `contract::NET_FAULTS`).
    pub(crate) fn apply_all(&self, orders: &str) -> Result<(), String> {
        orders.split(';').map(str::trim).filter(|o| !o.is_empty()).try_for_each(|o| self.apply(o))
    }

    /// Packets dropped so far.
    pub(crate) fn dropped(&self) -> u64 {
        self.state().dropped
    }

    fn outgoing(&self, to: SocketAddr) -> Fate {
        let mut s = self.state();
        let lost = s.loss > 0.0 && s.unit() < s.loss;
        if s.isolated || s.blocked.contains(&to) || lost {
            s.dropped += 1;
            return Fate::Drop;
        }
        if s.delay.is_zero() && s.jitter.is_zero() {
            return Fate::Send;
        }
        let extra = s.jitter.mul_f64(s.unit());
        Fate::Delay(s.delay + extra)
    }

    /// No fault applies to any packet now.
    pub(crate) fn quiet(&self) -> bool {
        let s = self.state();
        !s.isolated && s.blocked.is_empty() && s.loss == 0.0 && s.delay.is_zero() && s.jitter.is_zero()
    }

    fn incoming_dropped(&self) -> bool {
        let mut s = self.state();
        if s.isolated {
            s.dropped += 1;
        }
        s.isolated
    }
}

/// The node's UDP socket with [`Faults`] in the way.
pub(crate) struct FaultySocket {
    inner: Arc<dyn AsyncUdpSocket>,
    faults: Arc<Faults>,
}

impl fmt::Debug for FaultySocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultySocket").field("faults", &self.faults).finish_non_exhaustive()
    }
}

impl FaultySocket {
    pub(crate) fn new(inner: Arc<dyn AsyncUdpSocket>, faults: Arc<Faults>) -> FaultySocket {
        FaultySocket { inner, faults }
    }

    /// One packet, or a batch sent as it is, through the faults.
    fn send_one(&self, transmit: &Transmit) -> io::Result<()> {
        match self.faults.outgoing(transmit.destination) {
            Fate::Send => self.inner.try_send(transmit),
            // A lost packet left as far as the sender can tell.
            Fate::Drop => Ok(()),
            Fate::Delay(wait) => {
                let inner = self.inner.clone();
                let (destination, ecn, src_ip) = (transmit.destination, transmit.ecn, transmit.src_ip);
                let (contents, segment_size) = (transmit.contents.to_vec(), transmit.segment_size);
                tokio::spawn(async move {
                    tokio::time::sleep(wait).await;
                    // A full socket buffer then loses the packet, as a
                    // congested router would.
                    let _ = inner.try_send(&Transmit { destination, ecn, contents: &contents, segment_size, src_ip });
                });
                Ok(())
            }
        }
    }
}

impl AsyncUdpSocket for FaultySocket {
    fn create_io_poller(self: Arc<Self>) -> Pin<Box<dyn UdpPoller>> {
        self.inner.clone().create_io_poller()
    }

    fn try_send(&self, transmit: &Transmit) -> io::Result<()> {
        match transmit.segment_size {
            // A batch of packets (GSO) meets its faults packet by packet;
            // without faults it goes as it is, in one system call.
            Some(size) if size < transmit.contents.len() && !self.faults.quiet() => {
                for packet in transmit.contents.chunks(size) {
                    self.send_one(&Transmit { contents: packet, segment_size: None, ..*transmit })?;
                }
                Ok(())
            }
            _ => self.send_one(transmit),
        }
    }

    fn poll_recv(
        &self,
        cx: &mut Context,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> Poll<io::Result<usize>> {
        loop {
            let n = match self.inner.poll_recv(cx, bufs, meta) {
                Poll::Ready(Ok(n)) => n,
                other => return other,
            };
            if !self.faults.incoming_dropped() {
                return Poll::Ready(Ok(n));
            }
            // Everything read is dropped: read again (which registers the
            // waker once the socket has nothing more).
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    // Batches of packets are split when faults apply (see `try_send`).
    fn max_transmit_segments(&self) -> usize {
        self.inner.max_transmit_segments()
    }

    fn max_receive_segments(&self) -> usize {
        self.inner.max_receive_segments()
    }

    fn may_fragment(&self) -> bool {
        self.inner.may_fragment()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_parse_and_bad_ones_say_so() {
        let f = Faults::new(1);
        f.apply_all("loss 0.25; delay 100 50;block 127.0.0.1:9;isolate on").unwrap();
        {
            let s = f.state();
            assert_eq!(s.loss, 0.25);
            assert_eq!(s.delay, Duration::from_millis(100));
            assert_eq!(s.jitter, Duration::from_millis(50));
            assert!(s.isolated && s.blocked.contains(&"127.0.0.1:9".parse().unwrap()));
        }
        f.apply_all("unblock 127.0.0.1:9;isolate off;delay 0").unwrap();
        assert!(!f.state().isolated && f.state().blocked.is_empty() && f.state().jitter.is_zero());
        for bad in ["loss 2", "loss x", "block nowhere", "delay -1", "isolate maybe", "explode"] {
            assert!(f.apply(bad).unwrap_err().contains("bad network fault order"), "{bad}");
        }
    }

    #[test]
    fn loss_drops_about_its_share_and_blocks_drop_all() {
        let f = Faults::new(7);
        f.apply("loss 0.3").unwrap();
        let to: SocketAddr = "127.0.0.1:5".parse().unwrap();
        let dropped = (0..10_000).filter(|_| matches!(f.outgoing(to), Fate::Drop)).count();
        assert!((2_700..3_300).contains(&dropped), "{dropped} of 10 000 dropped at 30 %");
        f.apply("loss 0").unwrap();
        f.apply("block 127.0.0.1:5").unwrap();
        assert!((0..100).all(|_| matches!(f.outgoing(to), Fate::Drop)));
        let other: SocketAddr = "127.0.0.1:6".parse().unwrap();
        assert!(matches!(f.outgoing(other), Fate::Send));
        f.apply("delay 10 10").unwrap();
        let waits: Vec<Duration> = (0..100)
            .map(|_| match f.outgoing(other) {
                Fate::Delay(d) => d,
                _ => panic!("a delayed packet"),
            })
            .collect();
        assert!(waits.iter().all(|d| *d >= Duration::from_millis(10) && *d <= Duration::from_millis(20)));
        assert!(waits.windows(2).any(|w| w[0] != w[1]), "jitter varies the delay");
    }

    /// A socket that keeps what it is asked to send: (bytes, segment size).
    #[derive(Debug, Default)]
    struct Recording(Mutex<Vec<(usize, Option<usize>)>>);

    impl AsyncUdpSocket for Recording {
        fn create_io_poller(self: Arc<Self>) -> Pin<Box<dyn UdpPoller>> {
            unreachable!("these tests only send")
        }
        fn try_send(&self, transmit: &Transmit) -> io::Result<()> {
            self.0.lock().unwrap().push((transmit.contents.len(), transmit.segment_size));
            Ok(())
        }
        fn poll_recv(&self, _: &mut Context, _: &mut [IoSliceMut<'_>], _: &mut [RecvMeta]) -> Poll<io::Result<usize>> {
            Poll::Pending
        }
        fn local_addr(&self) -> io::Result<SocketAddr> {
            Ok(SocketAddr::from(([127, 0, 0, 1], 1)))
        }
        fn max_transmit_segments(&self) -> usize {
            10
        }
    }

    #[test]
    fn a_batch_of_packets_goes_whole_without_faults_and_packet_by_packet_with_them() {
        let inner = Arc::new(Recording::default());
        let faults = Faults::new(3);
        let socket = FaultySocket::new(inner.clone(), faults.clone());
        assert_eq!(socket.max_transmit_segments(), 10, "batches are allowed");
        let to: SocketAddr = "127.0.0.1:7".parse().unwrap();
        let bytes = vec![0u8; 3 * 1200];
        let batch = Transmit { destination: to, ecn: None, contents: &bytes, segment_size: Some(1200), src_ip: None };
        socket.try_send(&batch).unwrap();
        assert_eq!(*inner.0.lock().unwrap(), vec![(3600, Some(1200))], "one system call for the batch");
        inner.0.lock().unwrap().clear();
        faults.apply("loss 0.5").unwrap();
        for _ in 0..100 {
            socket.try_send(&batch).unwrap();
        }
        let sent = inner.0.lock().unwrap().clone();
        assert!(sent.iter().all(|&p| p == (1200, None)), "each packet meets the loss alone");
        assert_eq!(sent.len() as u64 + faults.dropped(), 300);
        assert!((100..200).contains(&sent.len()), "{} of 300 packets sent at 50 % loss", sent.len());
    }
}
