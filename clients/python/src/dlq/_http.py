"""HTTP/1.1 keep-alive connections to dlqd (http.client), and what a failed exchange means:
nothing sent (safe to resend anything) or maybe sent (safe only for calls that cannot double an
effect). A connection is used by one thread at a time; abort() may come from any thread."""

from __future__ import annotations

import http.client
import select
import socket
import ssl
import threading
import urllib.parse


class NotSent(Exception):
    """The request never left: connecting failed, or the connection was aborted first."""


class MaybeSent(Exception):
    """The request may have reached dlqd, but no complete answer came back."""


class Aborted(Exception):
    """abort() closed the connection (a worker stopping ends its parked claim this way)."""


class Endpoint:
    """Where dlqd is: scheme, host, port and a path prefix (a proxy may mount dlqd below /)."""

    def __init__(self, url: str, ca_file: str | None = None) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("dlq: URL must be http://HOST[:PORT] or https://HOST[:PORT], "
                             f"not {url!r}")
        self.url = url
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.https else 80)
        self.prefix = parts.path.rstrip("/")
        self.ssl_context = None
        if self.https:
            self.ssl_context = ssl.create_default_context(cafile=ca_file)


class _Plain(http.client.HTTPConnection):
    def connect(self) -> None:
        super().connect()
        # Small requests and answers: Nagle's wait would add 40 ms to every other exchange.
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _Tls(http.client.HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _dropped(sock: socket.socket) -> bool:
    """An idle keep-alive socket that is readable has been closed by the server (idle timeout,
    restart): sending on it would fail after the fact, so reconnect before sending instead."""
    try:
        poller = select.poll()
        poller.register(sock, select.POLLIN | select.POLLERR | select.POLLHUP)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True


class Connection:
    """One persistent connection; exchange() reconnects when needed."""

    def __init__(self, endpoint: Endpoint, connect_timeout: float) -> None:
        self._endpoint = endpoint
        self._connect_timeout = connect_timeout
        self._http: http.client.HTTPConnection | None = None
        self._lock = threading.Lock()  # guards _http and _aborted against abort()
        self._aborted = False

    def _open(self) -> http.client.HTTPConnection:
        ep = self._endpoint
        if ep.https:
            return _Tls(ep.host, ep.port, timeout=self._connect_timeout, context=ep.ssl_context)
        return _Plain(ep.host, ep.port, timeout=self._connect_timeout)

    def exchange(self, method: str, target: str, body: bytes | None, headers: dict[str, str],
                 timeout: float) -> tuple[int, bytes]:
        """Sends one request and reads its whole answer: (status, body bytes)."""
        with self._lock:
            if self._aborted:
                raise Aborted()
            conn = self._http
            if conn is not None and (conn.sock is None or _dropped(conn.sock)):
                conn.close()
                conn = None
            if conn is None:
                conn = self._http = self._open()
        if conn.sock is None:
            try:
                conn.connect()
            except (OSError, http.client.HTTPException) as e:
                self._discard(conn)
                raise NotSent(f"cannot connect to {self._endpoint.url}: {e}") from e
            with self._lock:
                if self._aborted:
                    conn.close()
                    raise Aborted()
        try:
            conn.sock.settimeout(timeout)
            conn.request(method, target, body=body, headers=headers)
            answer = conn.getresponse()
            data = answer.read()
        except (OSError, http.client.HTTPException, AttributeError) as e:
            # AttributeError: abort() closed the socket under us (conn.sock became None).
            self._discard(conn)
            if self._aborted:
                raise Aborted() from e
            raise MaybeSent(f"{method} {target}: {type(e).__name__}: {e}") from e
        if answer.will_close:
            self._discard(conn)
        return answer.status, data

    def _discard(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if self._http is conn:
                self._http = None
        conn.close()

    def abort(self) -> None:
        """Ends the exchange under way (if any) and every later one: the socket is shut down,
        so a parked long-poll returns at once and dlqd gives back what it had claimed for it."""
        with self._lock:
            self._aborted = True
            conn = self._http
        if conn is not None and conn.sock is not None:
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        with self._lock:
            conn, self._http = self._http, None
        if conn is not None:
            conn.close()
