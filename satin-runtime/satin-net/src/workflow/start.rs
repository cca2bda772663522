//! How a run starts. The master, once `--nodes` nodes are in, makes the
//! plan and sends the roster (`Start`); every node makes the same plan,
//! checks its digest and opens a connection to every other node, then says
//! `Ready`; when all are ready (or after a while), the master names a
//! wall-clock moment a little ahead (`Go`) and every clock starts then.
//! Opening the connections first keeps the handshakes (n² of them) out of
//! the run: a 32-node run started on the roster alone began 60–170 ms late
//! on some nodes.

use std::collections::HashSet;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::msg::GraphMsg;
use super::node::{GraphDriver, Plan, MASTER};
use crate::trace::Trace;
use satin_dag::processor::Processor;
use satin_dag::{ft_schedule, FtSchedule, TaskGraph, Workflow};
use satin_proto::NodeId;

/// From `Go` to the start of the clocks: time for it to reach every node.
const GO_LEAD: Duration = Duration::from_millis(20);
/// The master starts the clocks this long after the plan even if some
/// node never said it is ready (it may have died: the run finds out).
const READY_WAIT: Duration = Duration::from_secs(10);
/// Stands for "not yet" in `Plan::started`.
const NOT_YET: Duration = Duration::from_secs(24 * 3600);

impl GraphDriver<'_> {
    /// The master starts the run once every node it waits for is in.
    pub(super) fn maybe_start(&mut self) {
        if self.spec.me.contact.is_some() || self.plan.is_some() || self.members.len() < self.spec.nodes {
            return;
        }
        let roster = self.members.clone();
        if let Some(digest) = self.begin(roster.clone(), None) {
            for &id in &roster[1..] {
                self.io.net.send(id, GraphMsg::Start { roster: roster.clone(), digest });
            }
        }
    }

    /// Makes the plan for `roster` (its clock not started); a joiner checks
    /// its plan against the master's digest and opens its connections.
    /// Returns the plan's digest.
    pub(super) fn begin(&mut self, roster: Vec<NodeId>, expected: Option<[u8; 32]>) -> Option<[u8; 32]> {
        let Some(me) = roster.iter().position(|&id| id == self.spec.me.id) else {
            self.fail("the master started the run without this node".into());
            return None;
        };
        let graph = self.workflow.graph();
        let schedule = ft_schedule(graph, roster.len(), self.spec.params);
        let digest = plan_digest(self.workflow, &schedule);
        if expected.is_some_and(|e| e != digest) {
            self.fail(
                "this node's plan differs from the master's: every node must run the same program on the same \
                 workflow"
                    .into(),
            );
            return None;
        }
        let processor = Processor::all_of(graph, &schedule).swap_remove(me);
        let procs = schedule.originals.procs();
        let me_id = self.spec.me.id;
        let peers: Vec<NodeId> = roster.iter().copied().filter(|&id| id != me_id && id != MASTER).collect();
        self.plan = Some(Plan {
            schedule,
            processor,
            roster,
            me,
            started: Instant::now() + NOT_YET,
            down: vec![None; procs],
            finished: vec![None; graph.len()],
            replanned: false,
            heard: HashSet::new(),
            linked: HashSet::new(),
            ready: HashSet::new(),
            said_ready: false,
            made: Instant::now(),
        });
        self.last_progress = Instant::now();
        // A joiner already has its connection to the master (its contact);
        // the master opened one to each joiner with `Start`.
        if self.spec.me.contact.is_some() {
            for id in peers {
                self.io.net.send(id, GraphMsg::Join);
            }
            self.on_linked(MASTER);
        }
        Some(digest)
    }

    /// A connection this node opened is up.
    pub(super) fn on_linked(&mut self, id: NodeId) {
        let me = self.spec.me.id;
        let joiner = self.spec.me.contact.is_some();
        let Some(plan) = &mut self.plan else { return };
        plan.linked.insert(Self::who(id));
        let all = plan.roster.iter().all(|&r| r == me || plan.linked.contains(&r));
        if joiner && all && !plan.said_ready {
            plan.said_ready = true;
            let to = self.route(MASTER);
            self.io.net.send(to, GraphMsg::Ready);
        }
    }

    /// The master hears that `from` is ready.
    pub(super) fn on_ready(&mut self, from: NodeId) {
        if let Some(plan) = &mut self.plan {
            plan.ready.insert(from);
        }
    }

    /// The master starts the clocks once every node is ready (or after
    /// [`READY_WAIT`]).
    pub(super) fn maybe_go(&mut self) {
        let me = self.spec.me.id;
        if self.spec.me.contact.is_some() || self.running_clock() {
            return;
        }
        let Some(plan) = &self.plan else { return };
        if plan.started < Instant::now() + NOT_YET / 2 {
            return; // `Go` already sent
        }
        let all = plan.roster.iter().all(|&r| r == me || (plan.ready.contains(&r) && plan.linked.contains(&r)));
        if !all && plan.made.elapsed() < READY_WAIT {
            return;
        }
        let lead = GO_LEAD + Duration::from_millis(plan.roster.len() as u64);
        let at = (SystemTime::now() + lead).duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64);
        let peers: Vec<NodeId> = plan.roster.iter().copied().filter(|&r| r != me).collect();
        for id in peers {
            self.io.net.send(id, GraphMsg::Go { at });
        }
        self.go(at);
    }

    /// The clocks start at `at` (the same moment on every node).
    pub(super) fn go(&mut self, at: u64) {
        let unit = self.spec.unit;
        let graph = self.workflow.graph();
        let Some(plan) = &mut self.plan else { return };
        plan.started = start_instant(at);
        if let Some(t) = &mut self.trace {
            draw_plan(t, graph, &plan.schedule, plan.me, plan.started, unit);
        }
        self.last_progress = Instant::now();
    }
}

/// The local instant of a wall-clock moment (microseconds since the Unix
/// epoch); across machines this assumes clocks kept in step (NTP): a skew
/// shows as a node starting early or late.
fn start_instant(at: u64) -> Instant {
    let at = UNIX_EPOCH + Duration::from_micros(at);
    let now = (SystemTime::now(), Instant::now());
    match at.duration_since(now.0) {
        Ok(ahead) => now.1 + ahead.min(Duration::from_secs(60)),
        Err(_) => now.1,
    }
}

/// A digest of the plan: the tasks' names and the schedule.
fn plan_digest(workflow: &Workflow, schedule: &FtSchedule) -> [u8; 32] {
    let graph = workflow.graph();
    let names: Vec<&str> = (0..graph.len()).map(|t| graph.name(t)).collect();
    *blake3::hash(format!("{names:?}{schedule:?}").as_bytes()).as_bytes()
}

/// The trace's process that shows the plan: one thread per processor.
const PLAN_PID: u64 = 1 << 40;

/// Draws processor `me`'s part of the plan beside the run: its originals,
/// and the stretch each of its duplicates is planned to occupy fault-free
/// (until its abort).
fn draw_plan(trace: &mut Trace, graph: &TaskGraph, schedule: &FtSchedule, me: usize, start: Instant, unit: Duration) {
    trace.process_name(PLAN_PID, "plan (a thread per processor)");
    let at = |t: f64| start + unit.mul_f64(t);
    for p in schedule.originals.placements().iter().filter(|p| p.proc == me) {
        let took = unit.mul_f64(p.finish - p.start);
        trace.span_in(PLAN_PID, p.proc, "planned", graph.name(p.task), at(p.start), took);
    }
    for d in schedule.duplicates.iter().filter(|d| d.proc == me && !d.is_dummy()) {
        let (from, to) = d.fault_free_busy();
        let name = format!("duplicate of {}", graph.name(d.task));
        trace.span_in(PLAN_PID, d.proc, "planned duplicate", &name, at(from), unit.mul_f64(to - from));
    }
}
