//! Launching in Kubernetes: every pod of a StatefulSet (or of an indexed
//! Job) runs the same command with `--k8s`; the pod's name, `NAME-ORDINAL`,
//! says who it is. Pod 0 is the master and listens; the others join it at
//! `NAME-0.SERVICE`, the stable DNS name a headless Service gives pod 0
//! (`deploy/k8s/satin.yaml`).

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::Launch;

/// What `--k8s` makes of the pod's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct K8sPod {
    /// The StatefulSet's (or Job's) name: the pod name without its ordinal.
    pub(crate) set: String,
    /// 0 is the master.
    pub(crate) ordinal: u32,
}

impl K8sPod {
    /// Reads the pod from variables looked up with `var` (the process
    /// environment in real runs): Kubernetes sets `HOSTNAME` to the pod's
    /// name.
    pub(crate) fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<K8sPod, String> {
        let name = var("HOSTNAME").ok_or("--k8s: HOSTNAME is not set (Kubernetes sets it to the pod's name)")?;
        let name = name.trim();
        let not_a_pod = || {
            format!("--k8s: the pod name {name:?} is not NAME-ORDINAL (a pod of a StatefulSet or of an indexed Job)")
        };
        let (set, ordinal) = name.rsplit_once('-').ok_or_else(not_a_pod)?;
        let ordinal = ordinal.parse::<u32>().map_err(|_| not_a_pod())?;
        if set.is_empty() || set.ends_with('-') {
            return Err(not_a_pod());
        }
        Ok(K8sPod { set: set.to_string(), ordinal })
    }

    /// Pod 0's DNS name under the headless Service `service`.
    pub(crate) fn master_host(&self, service: &str) -> String {
        format!("{}-0.{service}", self.set)
    }
}

/// What `--k8s` stands for in this pod: `--listen` on pod 0, `--join` of
/// pod 0 elsewhere; and the pod's ordinal.
pub(super) fn launch(args: &Launch) -> Result<(Launch, u32), String> {
    let pod = K8sPod::from_env(|k| std::env::var(k).ok())?;
    let mut launch = args.clone();
    launch.k8s = false;
    let wait = Duration::from_millis(args.join_wait_ms.unwrap_or(120_000));
    if pod.ordinal == 0 {
        launch.listen = Some(SocketAddr::from(([0, 0, 0, 0], args.k8s_port)));
    } else {
        let service = args.k8s_service.clone().unwrap_or_else(|| pod.set.clone());
        launch.join = Some(resolve(&pod.master_host(&service), args.k8s_port, wait)?);
        launch.join_wait_ms = Some(wait.as_millis() as u64);
    }
    Ok((launch, pod.ordinal))
}

/// Pod 0's address. Its DNS name exists only once pod 0 does (pods of a
/// StatefulSet with parallel start, or of a Job, start in any order): ask
/// again every second until `wait` runs out.
fn resolve(host: &str, port: u16, wait: Duration) -> Result<SocketAddr, String> {
    let until = Instant::now() + wait;
    loop {
        let error = match (host, port).to_socket_addrs() {
            Ok(addrs) => {
                let addrs: Vec<SocketAddr> = addrs.collect();
                if let Some(a) = addrs.iter().find(|a| a.is_ipv4()).or(addrs.first()) {
                    return Ok(*a);
                }
                "no address".to_string()
            }
            Err(e) => e.to_string(),
        };
        if Instant::now() >= until {
            return Err(format!("--k8s: cannot resolve the master pod {host} within {wait:?}: {error}"));
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(hostname: Option<&str>) -> Result<K8sPod, String> {
        K8sPod::from_env(|k| (k == "HOSTNAME").then(|| hostname.map(str::to_string)).flatten())
    }

    #[test]
    fn the_pod_name_says_the_set_and_the_ordinal() {
        assert_eq!(pod(Some("satin-0")), Ok(K8sPod { set: "satin".into(), ordinal: 0 }));
        assert_eq!(pod(Some("my-nqueens-run-12\n")), Ok(K8sPod { set: "my-nqueens-run".into(), ordinal: 12 }));
        assert_eq!(pod(Some("satin-3")).unwrap().master_host("satin"), "satin-0.satin");
        assert_eq!(pod(Some("web-7")).unwrap().master_host("nodes.default.svc"), "web-0.nodes.default.svc");
    }

    #[test]
    fn a_name_that_is_not_a_pod_s_is_refused_with_a_reason() {
        assert!(pod(None).unwrap_err().contains("HOSTNAME is not set"));
        for bad in ["satin", "satin-x", "-3", "satin-", "satin--1"] {
            let err = pod(Some(bad)).unwrap_err();
            assert!(err.contains("is not NAME-ORDINAL"), "{bad}: {err}");
        }
    }

    #[test]
    fn an_unknown_master_is_an_error_once_the_wait_is_over() {
        let err = resolve("satin-0.no-such-service.invalid", 7411, Duration::ZERO).unwrap_err();
        assert!(err.contains("cannot resolve the master pod satin-0.no-such-service.invalid"), "{err}");
    }
}
