//! Launching under SLURM's `srun`: every task runs the same command line
//! with `--slurm`; the task numbers and the step's host list say who is
//! the master and where it listens.
//!
//! Task 0 is the master. With `srun`'s default (block) distribution it runs
//! on the first host of the step, which is where the others look for it.

use std::net::{SocketAddr, ToSocketAddrs};

/// Largest host list this expands: a typo such as `n[0-99999999]` must be
/// an error, not an allocation of gigabytes.
const MAX_HOSTS: usize = 1 << 16;

/// What `--slurm` makes of the environment `srun` sets up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SlurmTask {
    /// `SLURM_PROCID`: 0 is the master.
    pub(crate) rank: u32,
    /// The first host of the step, where task 0 runs.
    pub(crate) master_host: String,
    /// `SLURM_CPUS_PER_TASK`, the default worker count.
    pub(crate) cpus_per_task: Option<u32>,
}

impl SlurmTask {
    /// Reads the task from variables looked up with `var` (the process
    /// environment in real runs).
    pub(crate) fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<SlurmTask, String> {
        let rank = var("SLURM_PROCID")
            .ok_or("--slurm: SLURM_PROCID is not set; start the command with srun")?
            .trim()
            .parse::<u32>()
            .map_err(|_| "--slurm: SLURM_PROCID is not a task number")?;
        let (name, list) = ["SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"]
            .into_iter()
            .find_map(|n| var(n).map(|v| (n, v)))
            .ok_or("--slurm: none of SLURM_STEP_NODELIST, SLURM_JOB_NODELIST, SLURM_NODELIST is set")?;
        let hosts = expand_hostlist(&list).map_err(|e| format!("--slurm: {name}: {e}"))?;
        let master_host = hosts.into_iter().next().ok_or_else(|| format!("--slurm: {name} is empty"))?;
        let cpus_per_task = match var("SLURM_CPUS_PER_TASK") {
            Some(v) => Some(
                v.trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|&c| c > 0)
                    .ok_or_else(|| format!("--slurm: SLURM_CPUS_PER_TASK={v} is not a positive number"))?,
            ),
            None => None,
        };
        Ok(SlurmTask { rank, master_host, cpus_per_task })
    }

    /// The master's address: its host's (IPv4 preferred) at `port`.
    pub(crate) fn master_addr(&self, port: u16) -> Result<SocketAddr, String> {
        let addrs: Vec<SocketAddr> = (self.master_host.as_str(), port)
            .to_socket_addrs()
            .map_err(|e| format!("--slurm: cannot resolve the master's host {}: {e}", self.master_host))?
            .collect();
        addrs
            .iter()
            .find(|a| a.is_ipv4())
            .or(addrs.first())
            .copied()
            .ok_or_else(|| format!("--slurm: the master's host {} has no address", self.master_host))
    }
}

/// Expands a SLURM host list: `n[01-03,07],gpu1` → n01 n02 n03 n07 gpu1.
/// Several bracket groups in one name multiply (`r[1-2]n[1-2]` → 4 hosts);
/// numbers keep the zero padding of the range's start.
pub(crate) fn expand_hostlist(list: &str) -> Result<Vec<String>, String> {
    let mut hosts = Vec::new();
    for name in split_top_level(list)? {
        let name = name.trim();
        if name.is_empty() {
            continue;
        }
        expand_name(name, String::new(), &mut hosts)?;
    }
    Ok(hosts)
}

/// Splits at commas outside brackets.
fn split_top_level(list: &str) -> Result<Vec<&str>, String> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0u32, 0);
    for (i, c) in list.char_indices() {
        match c {
            '[' if depth == 0 => depth = 1,
            '[' => return Err(format!("nested `[` in `{list}`")),
            ']' if depth == 1 => depth = 0,
            ']' => return Err(format!("`]` without `[` in `{list}`")),
            ',' if depth == 0 => {
                parts.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(format!("`[` without `]` in `{list}`"));
    }
    parts.push(&list[start..]);
    Ok(parts)
}

/// Appends every host `prefix + name` stands for.
fn expand_name(name: &str, prefix: String, out: &mut Vec<String>) -> Result<(), String> {
    let Some(open) = name.find('[') else {
        push(out, prefix + name)?;
        return Ok(());
    };
    let close = open + name[open..].find(']').ok_or_else(|| format!("`[` without `]` in `{name}`"))?;
    let (head, ranges, rest) = (&name[..open], &name[open + 1..close], &name[close + 1..]);
    for range in ranges.split(',') {
        let range = range.trim();
        let (lo, hi) = range.split_once('-').unwrap_or((range, range));
        let bad = || format!("`{range}` in `{name}` is not a number or a range of numbers");
        if lo.is_empty() || !lo.bytes().all(|b| b.is_ascii_digit()) || !hi.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let (a, b) = (lo.parse::<u64>().map_err(|_| bad())?, hi.parse::<u64>().map_err(|_| bad())?);
        if a > b {
            return Err(format!("`{range}` in `{name}` runs backwards"));
        }
        if b - a >= MAX_HOSTS as u64 {
            return Err(format!("`{range}` in `{name}` names more than {MAX_HOSTS} hosts"));
        }
        for k in a..=b {
            let host = format!("{prefix}{head}{k:0width$}", width = lo.len());
            expand_name(rest, host, out)?;
        }
    }
    Ok(())
}

fn push(out: &mut Vec<String>, host: String) -> Result<(), String> {
    if out.len() >= MAX_HOSTS {
        return Err(format!("the list names more than {MAX_HOSTS} hosts"));
    }
    out.push(host);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn host_lists_expand_as_slurm_writes_them() {
        assert_eq!(expand_hostlist("node1").unwrap(), ["node1"]);
        assert_eq!(expand_hostlist("n[01-03,07],gpu1").unwrap(), ["n01", "n02", "n03", "n07", "gpu1"]);
        assert_eq!(expand_hostlist("r[1-2]n[8-9]").unwrap(), ["r1n8", "r1n9", "r2n8", "r2n9"]);
        assert_eq!(expand_hostlist("c[098-101]-ib").unwrap(), ["c098-ib", "c099-ib", "c100-ib", "c101-ib"]);
        assert_eq!(expand_hostlist("a, b").unwrap(), ["a", "b"]);
    }

    #[test]
    fn bad_host_lists_are_errors_not_panics() {
        for bad in ["n[1-3", "n1-3]", "n[[1]]", "n[x]", "n[3-1]", "n[-2]", "n[1-]x", "n[0-99999999]", "n[]"] {
            assert!(expand_hostlist(bad).is_err(), "{bad}");
        }
        assert!(expand_hostlist("a[0-255]b[0-255]c[0-1]").is_err(), "131072 hosts");
    }

    proptest::proptest! {
        #[test]
        fn any_host_list_expands_or_is_refused_without_panicking(list in "[a-c0-9,\\[\\]-]{0,24}") {
            if let Ok(hosts) = expand_hostlist(&list) {
                proptest::prop_assert!(hosts.len() <= MAX_HOSTS);
                proptest::prop_assert!(hosts.iter().all(|h| !h.is_empty() && !h.contains(['[', ']', ','])));
            }
        }
    }

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn the_task_comes_from_srun_variables() {
        let t = SlurmTask::from_env(env(&[
            ("SLURM_PROCID", "3"),
            ("SLURM_STEP_NODELIST", "cn[12-13]"),
            ("SLURM_JOB_NODELIST", "cn[10-13]"),
            ("SLURM_CPUS_PER_TASK", "8"),
        ]))
        .unwrap();
        assert_eq!(t, SlurmTask { rank: 3, master_host: "cn12".into(), cpus_per_task: Some(8) });
        let t = SlurmTask::from_env(env(&[("SLURM_PROCID", "0"), ("SLURM_NODELIST", "x")])).unwrap();
        assert_eq!(t, SlurmTask { rank: 0, master_host: "x".into(), cpus_per_task: None });
    }

    #[test]
    fn missing_or_garbled_variables_say_which() {
        let err = |pairs: &[(&str, &str)]| SlurmTask::from_env(env(pairs)).unwrap_err();
        assert!(err(&[("SLURM_NODELIST", "x")]).contains("SLURM_PROCID is not set"));
        assert!(err(&[("SLURM_PROCID", "one"), ("SLURM_NODELIST", "x")]).contains("SLURM_PROCID"));
        assert!(err(&[("SLURM_PROCID", "0")]).contains("SLURM_STEP_NODELIST"));
        assert!(err(&[("SLURM_PROCID", "0"), ("SLURM_NODELIST", "x[")]).contains("SLURM_NODELIST"));
        assert!(err(&[("SLURM_PROCID", "0"), ("SLURM_NODELIST", "x"), ("SLURM_CPUS_PER_TASK", "0")])
            .contains("SLURM_CPUS_PER_TASK"));
    }

    #[test]
    fn the_master_address_prefers_ipv4() {
        let t = SlurmTask { rank: 1, master_host: "localhost".into(), cpus_per_task: None };
        let a = t.master_addr(7411).unwrap();
        assert!(a.is_ipv4() && a.ip().is_loopback() && a.port() == 7411, "{a}");
    }
}
