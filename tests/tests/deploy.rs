//! The Kubernetes manifest and the Dockerfile, checked without a cluster:
//! the names and ports that must agree do, and the pods' command line is
//! one the launcher accepts with `--k8s`.

use serde_norway::Value;

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The manifest's documents, by kind.
fn manifest() -> (Value, Value) {
    let text = std::fs::read_to_string(root().join("deploy/k8s/satin.yaml")).unwrap();
    let docs: Vec<Value> =
        serde_norway::Deserializer::from_str(&text).map(|d| Value::deserialize(d).expect("valid YAML")).collect();
    let of = |kind: &str| docs.iter().find(|d| d["kind"] == kind).unwrap_or_else(|| panic!("no {kind}")).clone();
    (of("Service"), of("StatefulSet"))
}

use serde::Deserialize;

fn str_of(v: &Value) -> &str {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v:?}"))
}

#[test]
fn the_manifest_s_names_and_ports_agree() {
    let (service, set) = manifest();
    let service_name = str_of(&service["metadata"]["name"]);
    assert_eq!(service["spec"]["clusterIP"], "None", "the Service is headless");
    assert_eq!(service["spec"]["publishNotReadyAddresses"], true);
    assert_eq!(set["spec"]["serviceName"], service_name);
    let set_name = str_of(&set["metadata"]["name"]);

    // One label set: the Service's selector picks the StatefulSet's pods.
    let pod_labels = &set["spec"]["template"]["metadata"]["labels"];
    assert_eq!(&set["spec"]["selector"]["matchLabels"], pod_labels);
    assert_eq!(&service["spec"]["selector"], pod_labels);

    let pod = &set["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    let args: Vec<String> = container["args"].as_sequence().unwrap().iter().map(|a| str_of(a).to_string()).collect();

    // The launcher accepts the command line and it means --k8s.
    let argv = std::iter::once("nqueens".to_string()).chain(args.iter().cloned());
    let split = satin::net::Launch::from_args("nqueens", argv).expect("the pods' arguments parse");
    let satin::net::Split::Run(launch, own) = split else { panic!("help instead of a run") };
    assert!(launch.k8s, "{args:?}");
    assert_eq!(own, vec!["nqueens".to_string(), "16".to_string()], "the program's own arguments");
    // Pod 0 is NAME-0.SERVICE: without --k8s-service the Service must be
    // named as the StatefulSet.
    assert_eq!(launch.k8s_service.as_deref().unwrap_or(set_name), service_name);

    // The port pod 0 listens on is the one the Service and the container
    // open, over UDP.
    let port = launch.k8s_port as u64;
    assert_eq!(service["spec"]["ports"][0]["port"].as_u64(), Some(port));
    assert_eq!(service["spec"]["ports"][0]["protocol"], "UDP");
    assert_eq!(container["ports"][0]["containerPort"].as_u64(), Some(port));
    assert_eq!(container["ports"][0]["protocol"], "UDP");

    // The pool credential: SATIN_POOL points into the Secret's mount.
    let env = container["env"].as_sequence().unwrap();
    let pool = env.iter().find(|e| e["name"] == "SATIN_POOL").expect("SATIN_POOL is set");
    let pool_path = std::path::Path::new(str_of(&pool["value"]));
    let mount = &container["volumeMounts"][0];
    assert_eq!(pool_path.parent().unwrap(), std::path::Path::new(str_of(&mount["mountPath"])));
    let volume = pod["volumes"].as_sequence().unwrap().iter().find(|v| v["name"] == mount["name"]).expect("mounted");
    assert!(volume["secret"]["secretName"].is_string(), "the credential comes from a Secret");

    // The run's size, for `--table auto`, is the StatefulSet's.
    let nodes = env.iter().find(|e| e["name"] == satin::net::NODES_ENV).expect("SATIN_NODES is set");
    assert_eq!(str_of(&nodes["value"]).parse::<u64>().ok(), set["spec"]["replicas"].as_u64(), "SATIN_NODES = replicas");

    // The command is an example binary, which the image carries.
    let command = str_of(&container["command"][0]);
    assert!(root().join(format!("satin-examples/src/bin/{command}.rs")).exists(), "{command} is an example");
    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    assert!(dockerfile.contains("cargo build --release -p satin-examples --bins"));
    assert!(dockerfile.contains("COPY --from=build /out/ /usr/local/bin/"), "multi-stage: binaries only");
    assert_eq!(dockerfile.matches("FROM ").count(), 2);
}

#[test]
fn k8s_flags_parse_and_conflict_as_documented() {
    let parse = |args: &[&str]| satin::net::Launch::from_args("x", ["x"].iter().chain(args).map(|a| a.to_string()));
    let Ok(satin::net::Split::Run(launch, _)) = parse(&["--k8s", "--k8s-service", "nodes", "--k8s-port", "9000"])
    else {
        panic!("parses")
    };
    assert!(launch.k8s && launch.k8s_service.as_deref() == Some("nodes") && launch.k8s_port == 9000);
    assert!(launch.goes_beyond_this_process());
    for bad in [&["--k8s", "--slurm"][..], &["--k8s", "--listen", "0.0.0.0:1"], &["--k8s-port", "9000"]] {
        assert!(parse(bad).is_err(), "{bad:?} must be refused");
    }
}

#[test]
fn the_table_flags_choose_homes_from_128_expected_nodes() {
    use satin::net::{table_placement, TableArg};
    use satin::proto::TablePlacement;
    let parse = |args: &[&str]| satin::net::Launch::from_args("x", ["x"].iter().chain(args).map(|a| a.to_string()));
    let Ok(satin::net::Split::Run(launch, _)) = parse(&["--table", "home", "--table-replicas", "3"]) else {
        panic!("parses")
    };
    assert_eq!((launch.table, launch.table_replicas), (TableArg::Home, 3));
    for bad in [&["--table-replicas", "0"][..], &["--table-replicas", "17"], &["--table", "ring"]] {
        assert!(parse(bad).is_err(), "{bad:?} must be refused");
    }
    let home = TablePlacement::Home { replicas: 2 };
    assert_eq!(table_placement(TableArg::Auto, 2, None), TablePlacement::Broadcast);
    assert_eq!(table_placement(TableArg::Auto, 2, Some(127)), TablePlacement::Broadcast);
    assert_eq!(table_placement(TableArg::Auto, 2, Some(128)), home);
    assert_eq!(table_placement(TableArg::Broadcast, 2, Some(10_000)), TablePlacement::Broadcast);
    assert_eq!(table_placement(TableArg::Home, 2, Some(4)), home);
}
