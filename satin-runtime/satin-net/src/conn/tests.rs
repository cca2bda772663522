//! The connections between real endpoints on loopback.

use super::*;
use crate::tls::{init_pool, Pool};
use satin_proto::codec::Hello;
use satin_proto::Msg;

const MAX: usize = 1 << 20;

/// A pool of the test's own (its file made in a directory removed once
/// it is loaded).
fn fresh_pool() -> Pool {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = init_pool(&dir.path().join("pool.pem")).expect("a pool");
    Pool::load(&file).expect("the pool loads")
}

fn endpoint(pool: &Pool) -> Endpoint {
    let (mut server, mut client) = pool.quic_configs().expect("configs");
    server.transport_config(transport(Duration::from_secs(30)));
    client.transport_config(transport(Duration::from_secs(30)));
    let mut e = Endpoint::server(server, SocketAddr::from(([127, 0, 0, 1], 0))).expect("an endpoint");
    e.set_default_client_config(client);
    e
}

fn net(endpoint: Endpoint, me: NodeId, hello: &Hello, input: UnboundedSender<Link<Msg>>) -> Net<Msg, Link<Msg>> {
    let addr = endpoint.local_addr().expect("bound");
    let hello_frame = codec::encode(
        &Frame::<Msg>::Hello { hello: hello.clone(), id: me, cluster: 0, addr, label: me.to_string() },
        MAX,
    )
    .expect("small");
    Net::new(endpoint, me, hello_frame, MAX, input, None, None)
}

fn accepting<I>(hello: &Hello, input: UnboundedSender<I>) -> incoming::Accepting<I> {
    incoming::Accepting {
        ours: hello.clone(),
        max_frame: MAX,
        inputs: Inputs { urgent: input.clone(), ordinary: input },
        dictionary: None,
        same_host: None,
    }
}

/// After a short outage one connection may time out and the other
/// survive: the node that gives its peer up must make the peer see it,
/// or the peer may wait forever for a result that will not come.
#[tokio::test]
async fn a_node_declared_dead_hears_of_it_on_its_own_connection() {
    let pool = fresh_pool();
    let hello = Hello::new("test", &[]);
    let (a_in, mut a_rx) = unbounded_channel();
    let (b_in, mut b_rx) = unbounded_channel();
    let mut a = net(endpoint(&pool), 1, &hello, a_in);
    let mut b = net(endpoint(&pool), 2, &hello, b_in.clone());
    tokio::spawn(accept_loop::<Msg, _>(b.endpoint.clone(), accepting(&hello, b_in)));
    a.addrs.insert(2, b.endpoint.local_addr().expect("bound"));

    let outcome = tokio::time::timeout(Duration::from_secs(20), async move {
        a.send(2, Msg::Leave);
        let Some(Link::Hello { id: 1, conn, .. }) = b_rx.recv().await else { panic!("expected A's hello") };
        assert!(matches!(b_rx.recv().await, Some(Link::Message { from: 1, msg: Msg::Leave })));
        b.linked(1, conn);
        b.cut(1);
        assert!(b.dead.contains(&1) && b.links.is_empty());
        loop {
            match a_rx.recv().await {
                Some(Link::Linked { id: 2, .. }) => continue,
                Some(Link::PeerDown { id: 2, reason, unanswered, declared_dead, .. }) => {
                    assert!(declared_dead);
                    return (reason, unanswered);
                }
                _ => panic!("expected B to be reported down"),
            }
        }
    })
    .await;
    let (reason, unanswered) = outcome.expect("A hears of it long before its idle timeout");
    assert!(reason.contains("declared dead"), "{reason}");
    assert!(!unanswered);
}

/// Frames of every size, back to back on one stream — some whole in
/// one chunk, some over hundreds, a chunk holding the end of one and
/// the start of the next — arrive whole and in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_of_every_size_arrive_whole_and_in_order() {
    let pool = fresh_pool();
    let hello = Hello::new("test", &[]);
    let (a_in, _a_rx) = unbounded_channel::<Link<Msg>>();
    let (b_in, mut b_rx) = unbounded_channel();
    let mut a = net(endpoint(&pool), 1, &hello, a_in);
    a.max_frame = 64 << 20;
    let b = endpoint(&pool);
    let accepting = Accepting { max_frame: 64 << 20, ..accepting(&hello, b_in) };
    tokio::spawn(accept_loop::<Msg, _>(b.clone(), accepting));
    a.addrs.insert(2, b.local_addr().expect("bound"));
    let mut rng = 11u64;
    let sizes = [10usize, 5_000, 3 << 20, 70_000, 1, 600_000, 4_097, 100, 2 << 20, 3];
    let values: Vec<Vec<u8>> = sizes
        .iter()
        .map(|&n| {
            (0..n)
                .map(|_| {
                    rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (rng >> 33) as u8
                })
                .collect()
        })
        .collect();
    for (stamp, v) in values.iter().enumerate() {
        a.send(2, Msg::JobResult { stamp: stamp as u64, key: satin_proto::JobKey([1; 32]), value: v.clone().into() });
    }
    let got = tokio::time::timeout(Duration::from_secs(30), async {
        let mut got = Vec::new();
        while got.len() < values.len() {
            match b_rx.recv().await {
                Some(Link::Message { from: 1, msg: Msg::JobResult { stamp, value, .. } }) => got.push((stamp, value)),
                Some(_) => {}
                None => panic!("the input closed"),
            }
        }
        got
    })
    .await
    .expect("every frame arrives");
    for (i, (stamp, value)) in got.into_iter().enumerate() {
        assert_eq!(stamp, i as u64, "out of order");
        assert!(value == values[i], "frame {i} ({} bytes) arrived changed", values[i].len());
    }
}

/// A job's parameters that are a stretch of the root's travel as names
/// of chunks both ends hold, and a beat sent after them comes on the
/// control stream, on the urgent input.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_frames_travel_packed_and_beats_take_their_own_stream() {
    let pool = fresh_pool();
    let hello = Hello::new("test", &[]);
    let mut rng = 7u64;
    let root: Vec<u8> = (0..8 << 20)
        .map(|_| {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (rng >> 33) as u8
        })
        .collect();
    let dictionary = || Some(SharedDictionary::new(root.clone()));
    let (a_in, _a_rx) = unbounded_channel::<Link<Msg>>();
    let (urgent, mut urgent_rx) = unbounded_channel();
    let (ordinary, mut ordinary_rx) = unbounded_channel();
    let a_end = endpoint(&pool);
    let addr = a_end.local_addr().expect("bound");
    let hello_frame = codec::encode(
        &Frame::<Msg>::Hello { hello: hello.clone(), id: 1, cluster: 0, addr, label: "1".into() },
        usize::MAX,
    )
    .expect("small");
    let mut a = Net::new(a_end, 1, hello_frame, 64 << 20, a_in, dictionary(), None);
    let b = endpoint(&pool);
    let accepting = Accepting {
        ours: hello.clone(),
        max_frame: 64 << 20,
        inputs: Inputs { urgent, ordinary },
        dictionary: dictionary(),
        same_host: None,
    };
    tokio::spawn(accept_loop::<Msg, _>(b.clone(), accepting));
    a.addrs.insert(2, b.local_addr().expect("bound"));

    let payload = root[1_000_003..7_500_000].to_vec();
    let job = satin_proto::JobSpec::new(satin_proto::JobKey([9; 32]), 4, payload.clone());
    a.send(2, Msg::StealReply { id: 1, job: Some(job) });
    let beat = Msg::Quorum(satin_proto::quorum::QMsg::Appended { term: 3, ok: true, matched: 2 });
    a.send(2, beat.clone());
    let outcome = tokio::time::timeout(Duration::from_secs(20), async {
        assert!(matches!(urgent_rx.recv().await, Some(Link::Hello { id: 1, .. })));
        assert!(matches!(urgent_rx.recv().await, Some(Link::Message { from: 1, msg }) if msg == beat));
        match ordinary_rx.recv().await {
            Some(Link::Message { from: 1, msg: Msg::StealReply { job: Some(job), .. } }) => job.payload,
            _ => panic!("expected the job"),
        }
    })
    .await;
    assert_eq!(outcome.expect("both arrive"), payload, "the job arrives whole");
    let (_, bytes, by_kind) = a.sent();
    let job_bytes = by_kind["StealReply"].1;
    assert!(job_bytes < payload.len() as u64 / 20, "{job_bytes} bytes sent for a job of {}", payload.len());
    assert!(bytes < payload.len() as u64 / 10);
}

/// Between nodes of one host a large frame goes through shared memory
/// once the receiver said where its place is (on its own connection,
/// before anything it sends): it arrives whole, in order, and leaves
/// nothing behind in the receiver's place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_frames_between_nodes_of_one_host_go_through_shared_memory() {
    let pool = fresh_pool();
    let hello = Hello::new("test", &[]);
    // Node `me`, accepting on its own endpoint: its net, its inputs.
    let node = |me: NodeId| {
        let end = endpoint(&pool);
        let addr = end.local_addr().expect("bound");
        let same_host = SameHost::open(None).expect("/dev/shm");
        let hello_frame = codec::encode(
            &Frame::<Msg>::Hello { hello: hello.clone(), id: me, cluster: 0, addr, label: me.to_string() },
            usize::MAX,
        )
        .expect("small");
        let (out_in, _) = unbounded_channel::<Link<Msg>>();
        let (urgent, urgent_rx) = unbounded_channel();
        let (ordinary, ordinary_rx) = unbounded_channel();
        let accepting = Accepting {
            ours: hello.clone(),
            max_frame: 64 << 20,
            inputs: Inputs { urgent, ordinary },
            dictionary: None,
            same_host: Some(same_host.clone()),
        };
        tokio::spawn(accept_loop::<Msg, _>(end.clone(), accepting));
        let net = Net::new(end, me, hello_frame, 64 << 20, out_in, None, Some(same_host.clone()));
        (net, addr, same_host, urgent_rx, ordinary_rx)
    };
    let (mut a, a_addr, _, mut a_urgent, _a_ordinary) = node(1);
    let (mut b, b_addr, b_place, mut b_urgent, mut b_ordinary) = node(2);
    a.addrs.insert(2, b_addr);
    b.addrs.insert(1, a_addr);
    let beat = Msg::Quorum(satin_proto::quorum::QMsg::Appended { term: 3, ok: true, matched: 2 });
    let payload: Vec<u8> = (0..4u32 << 20).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8).collect();
    let outcome = tokio::time::timeout(Duration::from_secs(20), async {
        // B's beat comes after its place on the same stream: once A
        // has it, A knows where B's frames go.
        b.send(1, beat.clone());
        assert!(matches!(a_urgent.recv().await, Some(Link::Hello { id: 2, .. })));
        assert!(matches!(a_urgent.recv().await, Some(Link::Message { from: 2, msg }) if msg == beat));
        let job = satin_proto::JobSpec::new(satin_proto::JobKey([9; 32]), 4, payload.clone());
        a.send(2, Msg::StealReply { id: 1, job: Some(job) });
        a.send(2, Msg::JobRefused { stamp: 5 });
        assert!(matches!(b_urgent.recv().await, Some(Link::Hello { id: 1, .. })));
        let job = match b_ordinary.recv().await {
            Some(Link::Message { from: 1, msg: Msg::StealReply { job: Some(job), .. } }) => job.payload,
            _ => panic!("expected the job"),
        };
        let next = b_ordinary.recv().await;
        assert!(matches!(next, Some(Link::Message { from: 1, msg: Msg::JobRefused { stamp: 5 } })), "in order");
        job
    })
    .await;
    assert!(outcome.expect("both arrive") == payload, "the job arrives whole");
    assert!(a.sent_in_memory() >= payload.len() as u64, "{} bytes through memory", a.sent_in_memory());
    assert_eq!(b.sent_in_memory(), 0, "a beat is small");
    let left: Vec<_> =
        std::fs::read_dir(&b_place.place().0).expect("B's place").flatten().map(|e| e.file_name()).collect();
    assert_eq!(left, [std::ffi::OsString::from("token")], "the frame's file is gone once read");
}

/// A connection this node opened that failed is opened again after its
/// wait, and the driver is told when: it wakes for the retry as for the
/// core's deadlines, so a quiet node does not wait for its next timer.
#[tokio::test]
async fn a_lost_connection_says_when_it_may_be_opened_again() {
    let pool = fresh_pool();
    let hello = Hello::new("retry", &[]);
    let (tx, _rx) = unbounded_channel();
    let mut a = net(endpoint(&pool), 1, &hello, tx);
    a.addrs.insert(2, SocketAddr::from(([127, 0, 0, 1], 9)));
    assert!(a.may_connect(2), "a peer whose address is known may be connected to");
    assert_eq!(a.next_retry(), None, "nothing waits");
    let before = Instant::now();
    a.reconnect_later(2, Duration::from_millis(300));
    assert!(!a.may_connect(2), "not before its wait is over");
    let at = a.next_retry().expect("the retry is named");
    assert!(at > before && at <= Instant::now() + Duration::from_millis(300), "{:?} after the loss", at - before);
    tokio::time::sleep_until(at.into()).await;
    assert!(a.may_connect(2), "from the named instant on");
    assert_eq!(a.next_retry(), None, "a retry that is due is not waited for again");
    assert!(a.connect(2), "opened again");
    assert!(a.retry_at.is_empty(), "an opened connection's wait is forgotten");
}
