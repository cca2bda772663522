//! What a node tells the supervisor that started it, on its standard
//! error, a line each, beside its log: where it listens, how its run
//! ended, the master's estimate for the status line and its board for
//! the dashboard. Each is one [`Report`], written by [`Report::line`] and
//! taken off the node's log by the supervisor ([`Report::parse`]) — the
//! English sentences the log holds for people are never parsed.

use std::net::SocketAddr;

/// How a report's line starts.
const PREFIX: &str = "satin-report ";

/// One thing a node tells its supervisor.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Report {
    /// It listens at this address.
    Listening(SocketAddr),
    /// The run is over and this node was its master: its output is the
    /// answer's.
    Master,
    /// The run is over and this node shows the answer (the run started
    /// here), though another was master.
    OriginShows,
    /// The master's estimate, for the status line (one line of JSON).
    Status(String),
    /// The master's board, for the dashboard (one line of JSON).
    Board(String),
}

impl Report {
    /// The line that carries it.
    pub(crate) fn line(&self) -> String {
        match self {
            Report::Listening(addr) => format!("{PREFIX}listening {addr}"),
            Report::Master => format!("{PREFIX}master"),
            Report::OriginShows => format!("{PREFIX}origin-shows"),
            Report::Status(json) => format!("{PREFIX}status {json}"),
            Report::Board(json) => format!("{PREFIX}board {json}"),
        }
    }

    /// The report a line of a node's log carries, if it is one.
    pub(crate) fn parse(line: &str) -> Option<Report> {
        let rest = line.strip_prefix(PREFIX)?;
        let (word, arg) = rest.split_once(' ').unwrap_or((rest, ""));
        Some(match word {
            "listening" => Report::Listening(arg.parse().ok()?),
            "master" => Report::Master,
            "origin-shows" => Report::OriginShows,
            "status" => Report::Status(arg.to_string()),
            "board" => Report::Board(arg.to_string()),
            _ => return None,
        })
    }

    /// Tells the supervisor, if a supervisor started this process.
    pub(crate) fn tell(&self) {
        if super::ChildEnv::current().supervised {
            eprintln!("{}", self.line());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_report_written_reads_back_and_log_lines_are_none() {
        for report in [
            Report::Listening("127.0.0.1:7000".parse().unwrap()),
            Report::Master,
            Report::OriginShows,
            Report::Status(r#"{"fraction":0.5}"#.into()),
            Report::Board(r#"{"status":{"nodes":[]},"metrics":"a b"}"#.into()),
        ] {
            assert_eq!(Report::parse(&report.line()), Some(report.clone()), "{}", report.line());
        }
        for line in ["[node 1] satin: node 1 listening on 127.0.0.1:7000", "the run is over; this node is its master"] {
            assert_eq!(Report::parse(line), None, "{line}");
        }
        assert_eq!(Report::parse("satin-report listening nowhere"), None);
    }
}
