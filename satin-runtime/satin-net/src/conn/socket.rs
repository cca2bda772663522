//! The node's UDP socket, with kernel buffers sized for bulk data.
//!
//! A node receives megabytes at a time (a stolen half of a merge sort,
//! its sorted result), and its reading thread shares the cores with the
//! workers. Linux's default receive buffer (208 KiB) holds a few
//! milliseconds of loopback traffic: whenever the reading thread waits
//! for a core, datagrams overflow it and are dropped, QUIC takes each drop
//! for congestion, and halves its window. `mergesort 5000000 --local-nodes
//! 3` lost 230–300 datagrams per run that way (`RcvbufErrors` in
//! `/proc/net/snmp`), and none with the buffers below. The kernel caps the
//! request at `net.core.rmem_max` / `wmem_max` unless the process may
//! exceed them (`CAP_NET_ADMIN`, which the forcing options use).

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

use tracing::debug;

/// What each of the socket's buffers is asked to be.
const BUFFER: libc::c_int = 8 << 20;

/// A UDP socket bound to `addr`, its buffers as large as allowed.
pub(super) fn bind(addr: SocketAddr) -> std::io::Result<UdpSocket> {
    let socket = UdpSocket::bind(addr)?;
    // Within the system's limits first, then beyond them if allowed: a
    // failure leaves the size the previous call got.
    for option in [libc::SO_RCVBUF, libc::SO_RCVBUFFORCE, libc::SO_SNDBUF, libc::SO_SNDBUFFORCE] {
        let _ = set(&socket, option, BUFFER);
    }
    debug!(
        "UDP socket buffers: receive {:?}, send {:?} bytes",
        get(&socket, libc::SO_RCVBUF),
        get(&socket, libc::SO_SNDBUF)
    );
    Ok(socket)
}

fn set(socket: &UdpSocket, option: libc::c_int, value: libc::c_int) -> std::io::Result<()> {
    // SAFETY: the descriptor is the live socket's, and the option value
    // is a `c_int` of the length given.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            option,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn get(socket: &UdpSocket, option: libc::c_int) -> std::io::Result<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: the descriptor is the live socket's; `value` and `len` are
    // valid for writes of a `c_int` and its length.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            option,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if rc == 0 {
        Ok(value)
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_grow_beyond_the_default() {
        let socket = bind(SocketAddr::from(([127, 0, 0, 1], 0))).unwrap();
        let plain = UdpSocket::bind(SocketAddr::from(([127, 0, 0, 1], 0))).unwrap();
        let (ours, default) = (get(&socket, libc::SO_RCVBUF).unwrap(), get(&plain, libc::SO_RCVBUF).unwrap());
        // Linux allows at least 208 KiB without privileges; `.ci/run`
        // runs as root, where the forcing option gets the full size.
        assert!(ours >= default, "receive buffer {ours} < default {default}");
        // SAFETY: `geteuid` reads the process's user id; it cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            assert!(ours >= BUFFER, "as root the buffer is forced to {BUFFER}, got {ours}");
        }
    }
}
