//! Every annotated function of the program, by function id: how a node runs
//! a job that arrived from another machine as bytes.
//!
//! The macro registers one [`JobFn`] per annotated function (through
//! `inventory`, at link time), so the same binary on every node knows the
//! same functions without any setup call.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::Job;
use crate::sched::Ctx;

/// How to run one annotated function's jobs from their encoded parameters.
pub struct JobFn {
    fn_id: &'static str,
    run: fn(&[u8], &Ctx<'_>) -> Result<Vec<u8>, postcard::Error>,
    check: fn(&[u8]) -> Result<(), postcard::Error>,
    policy: crate::proto::JobPolicy,
}

impl JobFn {
    /// The entry for job type `J`; used by generated code.
    pub const fn of<J: Job>() -> JobFn {
        JobFn {
            fn_id: J::FN_ID,
            run: run_encoded::<J>,
            check: check_encoded::<J>,
            policy: crate::proto::JobPolicy { expect: None, retries: None },
        }
    }

    /// With the function's own estimate (nanoseconds) and retries, from
    /// `#[divide_and_conquer(expect = "2s", retries = 3)]`.
    pub const fn with_policy(mut self, expect: Option<u64>, retries: Option<u32>) -> JobFn {
        self.policy = crate::proto::JobPolicy { expect, retries };
        self
    }
}

/// The estimate and retries the annotated function of an encoded call
/// asked for (none for an unknown call).
pub fn policy_of(payload: &[u8]) -> crate::proto::JobPolicy {
    check_call(payload).ok().and_then(|id| by_id().get(id)).map(|f| f.policy).unwrap_or_default()
}

inventory::collect!(JobFn);

fn run_encoded<J: Job>(params: &[u8], ctx: &Ctx<'_>) -> Result<Vec<u8>, postcard::Error> {
    let job: J = postcard::from_bytes(params)?;
    postcard::to_allocvec(&job.run(ctx))
}

fn check_encoded<J: Job>(params: &[u8]) -> Result<(), postcard::Error> {
    postcard::from_bytes::<J>(params).map(drop)
}

fn by_id() -> &'static HashMap<&'static str, &'static JobFn> {
    static MAP: OnceLock<HashMap<&'static str, &'static JobFn>> = OnceLock::new();
    MAP.get_or_init(|| inventory::iter::<JobFn>.into_iter().map(|f| (f.fn_id, f)).collect())
}

/// The ids of every annotated function linked into this program, sorted.
/// Two nodes can work together only if these agree (see `codec::Hello`).
pub fn function_ids() -> Vec<&'static str> {
    let mut ids: Vec<&'static str> = by_id().keys().copied().collect();
    ids.sort_unstable();
    ids
}

/// Encodes a call for another node: its function id, then its parameters.
pub(crate) fn encode_call<J: Job>(job: &J) -> Vec<u8> {
    postcard::to_allocvec(&(J::FN_ID, job)).expect("postcard encodes any serde value into a Vec")
}

/// Why an encoded call cannot run here.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum CallError {
    /// The bytes do not start with a function id.
    Malformed(String),
    /// No annotated function with this id is linked into this program.
    UnknownFunction(String),
    /// The parameters do not decode as the function's parameter types.
    BadParams { fn_id: String, error: String },
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Malformed(e) => write!(f, "malformed job: {e}"),
            CallError::UnknownFunction(id) => write!(f, "job for unknown function {id:?} (different program?)"),
            CallError::BadParams { fn_id, error } => write!(f, "parameters of {fn_id} do not decode: {error}"),
        }
    }
}

impl std::error::Error for CallError {}

fn split_call(payload: &[u8]) -> Result<(&'static JobFn, &[u8]), CallError> {
    let (fn_id, params) =
        postcard::take_from_bytes::<&str>(payload).map_err(|e| CallError::Malformed(e.to_string()))?;
    let f = by_id().get(fn_id).ok_or_else(|| CallError::UnknownFunction(fn_id.to_string()))?;
    Ok((f, params))
}

fn bad_params(f: &JobFn, e: postcard::Error) -> CallError {
    CallError::BadParams { fn_id: f.fn_id.to_string(), error: e.to_string() }
}

/// Decodes and runs an encoded call in `ctx`; returns the encoded result.
pub(crate) fn run_call(payload: &[u8], ctx: &Ctx<'_>) -> Result<Vec<u8>, CallError> {
    let (f, params) = split_call(payload)?;
    (f.run)(params, ctx).map_err(|e| bad_params(f, e))
}

/// Decodes an encoded call as a node would before running it, without
/// running it: the function id it names, or why it cannot run here.
pub fn check_call(payload: &[u8]) -> Result<&'static str, CallError> {
    let (f, params) = split_call(payload)?;
    (f.check)(params).map_err(|e| bad_params(f, e))?;
    Ok(f.fn_id)
}

/// Encodes a call the way a remote steal sends it (see [`check_call`]).
pub fn encode_job<J: Job>(job: &J) -> Vec<u8> {
    encode_call(job)
}
