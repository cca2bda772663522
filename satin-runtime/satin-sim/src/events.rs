//! The simulator's event queue: what happens next, in virtual time; events
//! at the same instant keep the order they were scheduled in.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::workload::Nanos;
use super::World;
use satin_proto::Msg;

pub(crate) enum Ev {
    Deliver {
        to: usize,
        from: usize,
        msg: Box<Msg>,
    },
    /// One broadcast to every node of a latency class, delivered together.
    Fanout {
        to: Vec<usize>,
        from: usize,
        msg: Box<Msg>,
    },
    LeafDone {
        node: usize,
        inst: u64,
    },
    Timer {
        node: usize,
    },
    PeerDead {
        node: usize,
        peer: usize,
    },
    Fault(usize),
    /// The checkpoint file has been read for `node`.
    DiskOpened {
        node: usize,
    },
    /// A write of `node` reached the disk (or, if `node` crashed, part of it).
    DiskWritten {
        node: usize,
        seq: u64,
        records: u64,
        frames: Vec<u8>,
    },
    /// New nodes start the run again (from the checkpoint).
    Resume,
    /// A cut link's connection may time out now (see `network.rs`).
    LinkTimeout {
        from: usize,
        to: usize,
        episode: u64,
    },
    /// `node` finds its connection with `peer` lost (a suspicion).
    LinkDown {
        node: usize,
        peer: usize,
    },
}

pub(crate) struct Scheduled<E> {
    at: Nanos,
    seq: u64,
    ev: E,
}

impl<E> PartialEq for Scheduled<E> {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl<E> Eq for Scheduled<E> {}
impl<E> PartialOrd for Scheduled<E> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Scheduled<E> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// The events to come, earliest first (divide-and-conquer runs' [`Ev`]
/// by default; task-graph runs have their own).
pub(crate) struct EventQueue<E = Ev> {
    heap: BinaryHeap<Reverse<Scheduled<E>>>,
    seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { heap: BinaryHeap::new(), seq: 0 }
    }
}

impl<E> EventQueue<E> {
    pub(crate) fn push(&mut self, at: Nanos, ev: E) {
        self.seq += 1;
        self.heap.push(Reverse(Scheduled { at, seq: self.seq, ev }));
    }

    /// Every event still to come, in no particular order.
    pub(crate) fn events(&self) -> impl Iterator<Item = &E> {
        self.heap.iter().map(|Reverse(s)| &s.ev)
    }

    /// The earliest event and its instant.
    pub(crate) fn pop(&mut self) -> Option<(Nanos, E)> {
        self.heap.pop().map(|Reverse(s)| (s.at, s.ev))
    }
}

impl World<'_> {
    /// `ev` happens at `at`.
    pub(crate) fn schedule(&mut self, at: Nanos, ev: Ev) {
        self.queue.push(at, ev);
    }
}
