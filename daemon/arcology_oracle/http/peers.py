"""Which local account opened a TCP connection to the daemon, as Linux's kernel says.

Without a token the daemon listens on loopback only, where every account of the machine
can connect. The kernel knows which account opened each socket, and says so to anyone
who asks (what ``ss -e`` and ``identd`` show): the client's end of a connection to the
daemon is the socket whose local address is the connection's remote one and whose
remote address is the daemon's own. :func:`account_of` asks for that one socket through
``sock_diag`` netlink (the kernel looks it up by its addresses: ~10 µs), or, where a
sandbox refuses netlink, reads it from ``/proc/net/tcp`` (every socket listed: ~1 ms with
a few hundred, so only as a fallback).

Only the socket asked for counts: where no socket has the connection's addresses, the
kernel's lookup answers with a socket listening on the peer's address, whoever listens
there (the daemon's own port, when a proxy header named it); that is no client. And only
a live socket counts: a closed client's socket lingering in ``TIME_WAIT`` or closed
by its program is reported with inode 0 (and uid 0 for ``TIME_WAIT``), so it owns
nothing here; otherwise a client that sent its request and closed at once could pass
for root's. On systems with neither (macOS, BSD), or where neither names the daemon's own
connection (tried once, at the first question), the account cannot be told:
:func:`account_of` says :data:`UNKNOWN`.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import ipaddress
import os
import socket
import struct
import sys

UNKNOWN = None  # nothing to ask: not Linux
NOBODY = -1  # the kernel lists no live socket for that connection

_TABLES = {4: "/proc/net/tcp", 6: "/proc/net/tcp6"}
# <linux/sock_diag.h>, <linux/inet_diag.h>, <linux/netlink.h>
_NETLINK_SOCK_DIAG, _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST, _NLMSG_ERROR = 4, 20, 1, 2
_NO_COOKIE = 0xFFFFFFFF
_ALL_STATES = 0xFFFFFFFF
_MSG_ID_AT = 16 + 4  # netlink header, then inet_diag_msg: 4 bytes, the socket id (48), 3 words
_MSG_UID_AT = _MSG_ID_AT + 48 + 12


def account_of(peer: tuple | None, local: tuple | None) -> int | None:
    """The uid owning the client end of the TCP connection from ``peer`` to ``local``
    (``(host, port, ...)`` as a socket's ``getpeername``/``getsockname`` give them),
    :data:`NOBODY` when the kernel lists no live socket for it (or the addresses are not
    an IP connection's), :data:`UNKNOWN` when there is no kernel to ask."""
    try:
        peer_ip, local_ip = ipaddress.ip_address(peer[0]), ipaddress.ip_address(local[0])
        peer_port, local_port = int(peer[1]), int(local[1])
    except (TypeError, ValueError, IndexError):
        return NOBODY
    if peer_ip.version == 6 and peer_ip.ipv4_mapped and local_ip.version == 6 and local_ip.ipv4_mapped:
        peer_ip, local_ip = peer_ip.ipv4_mapped, local_ip.ipv4_mapped  # the client's socket is IPv4
    if peer_ip.version != local_ip.version:
        return NOBODY
    way = _chosen_way()
    if way is None:
        return UNKNOWN
    if way != "table":
        found = _by_netlink(peer_ip, peer_port, local_ip, local_port)
        if found is not _NO_NETLINK:
            return found
    return _by_table(peer_ip, peer_port, local_ip, local_port)


async def account_of_off_loop(peer: tuple | None, local: tuple | None) -> int | None:
    """:func:`account_of` for a coroutine on an event loop: asked in place where netlink
    is the way (~10 µs), in a worker thread where it is the ``/proc`` table, whose reading
    takes milliseconds with a few thousand sockets listed (every new connection's
    request would wait them out on the loop, and so would every other request)."""
    if _chosen_way() == "netlink":
        return account_of(peer, local)
    return await asyncio.to_thread(account_of, peer, local)


def can_tell() -> bool:
    """Whether this system says who owns its TCP sockets (:func:`account_of` answers)."""
    return _chosen_way() is not None


_NO_NETLINK = object()
# How this process asks, chosen once: "netlink" or "table", whichever names a connection
# of its own with its own uid (a kernel without inet_diag for TCP answers ENOENT, "no such
# socket", of every socket; a sandbox's /proc/net/tcp may list none); None where neither
# does (the account cannot be told); "either" where the probe could not open a connection.
_way: str | None = "unasked"


def _chosen_way() -> str | None:
    global _way
    if _way == "unasked":
        _way = _probe()
    return _way


@functools.cache
def _loopback_index() -> int:
    """The device asked for: ``lo``'s index. A socket bound to a device (``SO_BINDTODEVICE``,
    ``curl --interface lo``) matches only its own device; one bound to none matches any."""
    try:
        return socket.if_nametoindex("lo")
    except OSError:
        return 0


def _probe() -> str | None:
    try:
        with socket.create_server(("127.0.0.1", 0)) as server, socket.create_connection(server.getsockname()):
            accepted, (peer, peer_port) = server.accept()
            with accepted:
                local, local_port = accepted.getsockname()
                asked = (ipaddress.ip_address(peer), peer_port, ipaddress.ip_address(local), local_port)
                if _by_netlink(*asked) == os.geteuid():
                    return "netlink"
                return "table" if _by_table(*asked) == os.geteuid() else None
    except OSError:  # no IPv4 loopback, no port free: ask as before, refusing what cannot be told
        return "either"


def _by_netlink(peer_ip, peer_port: int, local_ip, local_port: int):
    """:func:`account_of` by one ``SOCK_DIAG_BY_FAMILY`` request, or ``_NO_NETLINK``
    where netlink is missing or refused."""
    family = socket.AF_INET6 if peer_ip.version == 6 else socket.AF_INET
    socket_id = (
        struct.pack("!HH", peer_port, local_port)
        + peer_ip.packed.ljust(16, b"\0")
        + local_ip.packed.ljust(16, b"\0")
        + struct.pack("=III", _loopback_index(), _NO_COOKIE, _NO_COOKIE)
    )
    request = struct.pack("=BBBBI", family, socket.IPPROTO_TCP, 0, 0, _ALL_STATES) + socket_id
    message = struct.pack("=IHHII", 16 + len(request), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST, 1, 0) + request
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG) as diag:
            diag.settimeout(1.0)
            diag.send(message)
            reply = diag.recv(8192)
    except (AttributeError, OSError):  # no AF_NETLINK (not Linux), or a sandbox refuses it
        return _NO_NETLINK
    if len(reply) < 16:
        return NOBODY
    if struct.unpack_from("=H", reply, 4)[0] == _NLMSG_ERROR:
        code = -struct.unpack_from("=i", reply, 16)[0] if len(reply) >= 20 else 0
        return NOBODY if code == errno.ENOENT else _NO_NETLINK
    # The socket described must be the one asked for: where no socket has those addresses,
    # the kernel's lookup answers with one listening on the peer's (of any account).
    if len(reply) < _MSG_UID_AT + 8 or struct.unpack_from("=H", reply, 4)[0] != _SOCK_DIAG_BY_FAMILY:
        return NOBODY
    if reply[_MSG_ID_AT : _MSG_ID_AT + 36] != socket_id[:36]:  # ports and addresses
        return NOBODY
    uid, inode = struct.unpack_from("=II", reply, _MSG_UID_AT)
    return uid if inode else NOBODY


def _by_table(peer_ip, peer_port: int, local_ip, local_port: int) -> int | None:
    """:func:`account_of` from ``/proc/net/tcp`` or ``tcp6``: the line whose local and
    remote addresses are the connection's client end."""
    wanted = (_kernel_address(peer_ip, peer_port), _kernel_address(local_ip, local_port))
    try:
        with open(_TABLES[peer_ip.version], encoding="ascii") as table:
            next(table, None)  # the header
            for line in table:
                fields = line.split()
                # sl local rem st queues tr retrnsmt uid timeout inode ...
                if len(fields) > 9 and (fields[1], fields[2]) == wanted:
                    return int(fields[7]) if fields[9] != "0" else NOBODY
    except FileNotFoundError:
        return UNKNOWN
    except OSError:
        return NOBODY
    return NOBODY


def _kernel_address(ip: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int) -> str:
    """``ip:port`` as ``/proc/net/tcp`` prints it: each 32-bit word of the address in
    this machine's byte order, in hex, then the port in hex."""
    packed = ip.packed
    words = "".join(f"{int.from_bytes(packed[i:i + 4], sys.byteorder):08X}" for i in range(0, len(packed), 4))
    return f"{words}:{port:04X}"
