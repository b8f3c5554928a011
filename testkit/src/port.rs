//! Ports for components that bind them themselves (slapd, the Slurm daemons, slurmrestd): they
//! take no listening socket from their parent and print no port they chose. Checking a port free
//! and releasing it lets another process take it before the component binds it; instead the port
//! stays *reserved* until the component listens: bound on 127.0.0.1 with `SO_REUSEADDR` and not
//! listening. Linux lets a socket that also sets `SO_REUSEADDR` bind beside it (these servers all
//! do) while no listener is on it, and refuses every other bind, port-0 ones included, so nobody
//! else gets the port in between. Dropping the reservation once the component answers frees it
//! for the component alone.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};

use socket2::{Domain, Socket, Type};

/// A port on 127.0.0.1 held for a component until it listens there; released on drop.
#[derive(Debug)]
pub struct ReservedPort {
    _socket: Socket,
    port: u16,
}

impl ReservedPort {
    pub fn new() -> io::Result<Self> {
        let socket = Socket::new(Domain::IPV4, Type::STREAM, None)?;
        socket.set_reuse_address(true)?;
        socket.bind(&SocketAddr::from((Ipv4Addr::LOCALHOST, 0)).into())?;
        let port = socket
            .local_addr()?
            .as_socket()
            .map(|address| address.port())
            .ok_or_else(|| io::Error::other("the reserved socket has no IPv4 address"))?;
        Ok(Self {
            _socket: socket,
            port,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reserved_port_goes_to_the_component_and_to_nobody_else() {
        let reserved = ReservedPort::new().unwrap();
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, reserved.port()));
        // Another process's bind, without SO_REUSEADDR: refused while the port is reserved.
        let other = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        let refused = other.bind(&address.into()).unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::AddrInUse);
        // The component's bind: std's listener sets SO_REUSEADDR, as slapd and Slurm do.
        let component = std::net::TcpListener::bind(address)
            .expect("a server setting SO_REUSEADDR binds a reserved port");
        drop(reserved);
        // It keeps listening after the reservation goes.
        std::net::TcpStream::connect(address).unwrap();
        drop(component);
    }
}
