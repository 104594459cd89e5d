//! Who is on the other end of the attach socket, and where the socket lives. Only the user
//! who runs nbook may attach: both sides compare the peer's uid (SO_PEERCRED) with their own
//! effective uid, and the socket file is made owner-only.

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

/// `.nbook/mcp.sock` of the project whose `.nbook` folder is `nbook_dir`.
pub fn socket_path(nbook_dir: &Path) -> PathBuf {
    nbook_dir.join("mcp.sock")
}

/// This process's effective uid.
pub fn my_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The uid of the process on the other end of a connected Unix socket.
pub fn peer_uid(sock: &impl AsFd) -> std::io::Result<u32> {
    let cred = rustix::net::sockopt::socket_peercred(sock).map_err(std::io::Error::from)?;
    Ok(cred.uid.as_raw())
}

/// `Ok` when the peer runs as this user; otherwise what to tell it.
pub fn check_same_user(sock: &impl AsFd) -> Result<(), String> {
    let me = my_uid();
    match peer_uid(sock) {
        Ok(uid) if uid == me => Ok(()),
        Ok(uid) => Err(format!(
            "refused: the other end of the nbook attach socket runs as uid {uid}, not as uid {me} who owns this nbook; only the project's owner can attach"
        )),
        Err(e) => Err(format!("refused: cannot tell who is on the attach socket ({e})")),
    }
}
