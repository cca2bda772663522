//! `Launch::from_args`: satin's flags out of a program's own command line.

use satin::net::{Launch, Split};

fn split(args: &[&str]) -> Result<Split, String> {
    Launch::from_args("prog", args.iter().map(|s| s.to_string()))
}

#[test]
fn satin_flags_are_taken_out_and_the_rest_stays_in_order() {
    let Ok(Split::Run(launch, own)) = split(&[
        "prog",
        "in.txt",
        "--workers",
        "3",
        "-v",
        "--local-nodes=2",
        "--fast",
        "--chaos",
        "kill:node=1,at=50%",
    ]) else {
        panic!("a valid command line");
    };
    assert_eq!(own, ["prog", "in.txt", "-v", "--fast"]);
    assert_eq!((launch.workers, launch.local_nodes), (Some(3), Some(2)));
    assert_eq!(launch.chaos.as_deref(), Some("kill:node=1,at=50%"));
    let Ok(Split::Run(launch, own)) = split(&["prog", "-w2", "--", "--workers", "9"]) else { panic!() };
    assert_eq!(launch.workers, Some(2));
    assert_eq!(own, ["prog", "--", "--workers", "9"], "after `--` everything is the program's");
    let Ok(Split::Run(launch, own)) = split(&["prog", "--help"]) else { panic!() };
    assert_eq!((launch.workers, own), (None, vec!["prog".to_string(), "--help".to_string()]));
}

#[test]
fn bad_satin_flags_are_errors_and_satin_help_is_text() {
    let e = split(&["prog", "--workers", "0"]).unwrap_err();
    assert!(e.starts_with("invalid value '0' for '--workers"), "{e}");
    let e = split(&["prog", "--soft-timeout", "0.9"]).unwrap_err();
    assert!(e.contains("soft"), "{e}");
    let e = split(&["prog", "--chaos", "kill:node=1,at=1s"]).unwrap_err();
    assert!(e.contains("--local-nodes"), "{e}");
    let Ok(Split::Help(text)) = split(&["prog", "x", "--satin-help"]) else { panic!("help") };
    assert!(text.contains("--listen") && text.contains("--checkpoint"), "{text}");
}

#[test]
fn a_misspelt_satin_flag_is_an_error_that_names_the_right_one() {
    let e = split(&["prog", "10", "--lisen", "127.0.0.1:1"]).unwrap_err();
    assert!(e.contains("did you mean '--listen'"), "{e}");
    let e = split(&["prog", "--wokers=2"]).unwrap_err();
    assert!(e.contains("did you mean '--workers'"), "{e}");
    // Not every flag near one of satin's is a typo: the program's own stay
    // its own (`--fast` beside `--ft`, `--list` beside `--listen`), and so
    // does what follows `--` or what the program names as its own.
    let Ok(Split::Run(_, own)) = split(&["prog", "--fast", "--list", "--", "--lisen"]) else { panic!() };
    assert_eq!(own, ["prog", "--fast", "--list", "--", "--lisen"]);
    let line = ["prog", "--lisen"].map(String::from);
    let Ok(Split::Run(_, own)) = Launch::from_args_with("prog", line, &["--lisen"]) else { panic!() };
    assert_eq!(own, ["prog", "--lisen"]);
}

/// `Launch::default()` (what a program builds in code) is the command line
/// without flags: the flags' own defaults, which pass the checks.
#[test]
fn the_default_launch_is_the_command_line_without_flags() {
    let Ok(Split::Run(parsed, rest)) = split(&[]) else { panic!("no flags parse") };
    assert!(rest.is_empty());
    let built = Launch::default();
    assert_eq!(format!("{built:?}"), format!("{parsed:?}"));
    assert!(built.soft_timeout > 1.0, "{built:?}");
    built.check().expect("the defaults are a valid launch");
}
