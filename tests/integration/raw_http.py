"""Raw-socket HTTP/1.1 for tests that must send what urllib refuses to send
(malformed framing, pipelined requests, half-sent requests, thousands of
idle connections) and see exactly what comes back, byte for byte.

Only loopback addresses are used. Every read has a deadline; nothing here
blocks without one.
"""

import errno
import json
import selectors
import socket
import time

LOOPBACK = "127.0.0.1"


class Answer:
    """One parsed HTTP response."""

    def __init__(self, status, reason, headers, body):
        self.status = status
        self.reason = reason
        self.headers = headers  # lower-case name -> list of values
        self.body = body

    def header(self, name):
        values = self.headers.get(name.lower())
        return values[-1] if values else None

    def json(self):
        """The body as JSON, or None when it is not JSON."""
        try:
            return json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return None

    def is_json_error(self):
        doc = self.json()
        return isinstance(doc, dict) and doc.get("status") == "error" and "error" in doc

    def __repr__(self):
        return f"<HTTP {self.status} {self.body[:160]!r}>"


class Incomplete(Exception):
    pass


def _parse_chunked(buf, pos):
    body = bytearray()
    while True:
        eol = buf.find(b"\r\n", pos)
        if eol < 0:
            raise Incomplete()
        size = int(buf[pos:eol].split(b";")[0].strip() or b"0", 16)
        pos = eol + 2
        if size == 0:
            # Trailer section, ended by an empty line.
            end = buf.find(b"\r\n", pos)
            while end >= 0 and end != pos:
                pos = end + 2
                end = buf.find(b"\r\n", pos)
            if end < 0:
                raise Incomplete()
            return bytes(body), end + 2
        if len(buf) < pos + size + 2:
            raise Incomplete()
        body += buf[pos:pos + size]
        pos += size + 2


def parse_answer(buf, eof, head_request=False):
    """(Answer, bytes consumed) for the first response in buf, or None when
    more bytes are needed. `eof`: the peer closed, so a response without a
    length ends here."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None
    lines = buf[:end].decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/"):
        raise ValueError(f"not an HTTP status line: {lines[0]!r}")
    status = int(parts[1])
    reason = parts[2] if len(parts) > 2 else ""
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers.setdefault(name.strip().lower(), []).append(value.strip())
    pos = end + 4
    if status < 200 or status in (204, 304) or head_request:
        return Answer(status, reason, headers, b""), pos
    te = ",".join(headers.get("transfer-encoding", [])).lower()
    if "chunked" in te:
        try:
            body, pos = _parse_chunked(buf, pos)
        except Incomplete:
            return None
        return Answer(status, reason, headers, body), pos
    if "content-length" in headers:
        n = int(headers["content-length"][-1])
        if len(buf) < pos + n:
            return None
        return Answer(status, reason, headers, bytes(buf[pos:pos + n])), pos + n
    if not eof:
        return None
    return Answer(status, reason, headers, bytes(buf[pos:])), len(buf)


class Conn:
    """One client connection with a receive buffer."""

    def __init__(self, port, timeout=5.0, sock=None):
        self.sock = sock or socket.create_connection((LOOPBACK, port), timeout=timeout)
        self.sock.settimeout(None)
        self.buf = bytearray()
        self.eof = False
        self.reset = False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def send(self, data):
        """Sends everything; False when the peer closed or reset first."""
        try:
            self.sock.sendall(data)
            return True
        except (BrokenPipeError, ConnectionResetError):
            self.reset = True
            return False

    def _fill(self, deadline):
        """Reads what is there (waiting until deadline); False on timeout."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        self.sock.settimeout(remaining)
        try:
            data = self.sock.recv(1 << 16)
        except socket.timeout:
            return False
        except ConnectionResetError:
            self.reset = True
            self.eof = True
            return True
        finally:
            self.sock.settimeout(None)
        if not data:
            self.eof = True
        self.buf += data
        return True

    def answer(self, timeout=5.0, head_request=False):
        """The next response; None when none arrived in time or the peer
        closed without one."""
        deadline = time.monotonic() + timeout
        while True:
            parsed = parse_answer(self.buf, self.eof, head_request)
            if parsed:
                a, used = parsed
                del self.buf[:used]
                return a
            if self.eof or not self._fill(deadline):
                return None

    def closed_within(self, timeout):
        """True when the peer closes (FIN or RST) within timeout; bytes that
        arrive first stay in self.buf."""
        deadline = time.monotonic() + timeout
        while not self.eof:
            if not self._fill(deadline):
                return False
        return True

    def send_while_reading(self, data, chunk=1 << 16, timeout=10.0):
        """Sends data in chunks, stopping as soon as the server answers or
        closes (a server may refuse a huge request before it is all sent);
        then waits for the answer. Returns (Answer or None, bytes sent)."""
        deadline = time.monotonic() + timeout
        sent = 0
        self.sock.setblocking(False)
        sel = selectors.DefaultSelector()
        sel.register(self.sock, selectors.EVENT_READ | selectors.EVENT_WRITE)
        try:
            while sent < len(data) and time.monotonic() < deadline and not self.eof:
                for _, events in sel.select(timeout=max(0.0, deadline - time.monotonic())):
                    if events & selectors.EVENT_READ:
                        try:
                            got = self.sock.recv(1 << 16)
                        except (ConnectionResetError, BrokenPipeError):
                            got = b""
                            self.reset = True
                        except BlockingIOError:
                            continue
                        if not got:
                            self.eof = True
                        self.buf += got
                    if events & selectors.EVENT_WRITE and not self.buf and not self.eof:
                        try:
                            sent += self.sock.send(data[sent:sent + chunk])
                        except BlockingIOError:
                            pass
                        except (BrokenPipeError, ConnectionResetError):
                            self.reset = True
                            self.eof = True
                if self.buf:
                    break
        finally:
            sel.close()
            self.sock.setblocking(True)
        return self.answer(timeout=max(0.1, deadline - time.monotonic())), sent


def request(method, target, headers=(), body=b"", host="127.0.0.1", version="HTTP/1.1"):
    """Bytes of a request; `headers` as (name, value) pairs, written as given
    (no Content-Length is added: framing is the caller's to get wrong)."""
    lines = [f"{method} {target} {version}"]
    if host is not None:
        lines.append(f"Host: {host}")
    lines += [f"{k}: {v}" for k, v in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def connect_many(port, n, timeout=20.0):
    """Opens n connections without waiting on each in turn (a server that
    does not accept must not make this take n times the SYN retry time).
    Returns (connected sockets, number that failed or timed out)."""
    socks = []
    failed = 0
    sel = selectors.DefaultSelector()
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            rc = s.connect_ex((LOOPBACK, port))
            if rc not in (0, errno.EINPROGRESS):
                s.close()
                failed += 1
                continue
            sel.register(s, selectors.EVENT_WRITE)
        deadline = time.monotonic() + timeout
        while sel.get_map() and time.monotonic() < deadline:
            for key, _ in sel.select(timeout=max(0.0, deadline - time.monotonic())):
                s = key.fileobj
                sel.unregister(s)
                if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                    socks.append(s)
                else:
                    s.close()
                    failed += 1
        for key in list(sel.get_map().values()):
            key.fileobj.close()
            failed += 1
    finally:
        sel.close()
    return socks, failed


def exchange_many(socks, data, timeout=20.0):
    """Sends `data` (one request) on every socket, then reads one response
    from each. Returns {socket: Answer or None}; None: no complete answer
    in time (or the connection closed)."""
    results = {s: None for s in socks}
    bufs = {s: bytearray() for s in socks}
    sel = selectors.DefaultSelector()
    try:
        for s in socks:
            try:
                s.send(data)  # small: fits in an empty send buffer
                sel.register(s, selectors.EVENT_READ)
            except OSError:
                pass
        deadline = time.monotonic() + timeout
        while sel.get_map() and time.monotonic() < deadline:
            for key, _ in sel.select(timeout=max(0.0, deadline - time.monotonic())):
                s = key.fileobj
                try:
                    got = s.recv(1 << 16)
                except BlockingIOError:
                    continue
                except OSError:
                    got = b""
                bufs[s] += got
                parsed = parse_answer(bufs[s], not got)
                if parsed or not got:
                    sel.unregister(s)
                    if parsed:
                        results[s] = parsed[0]
    finally:
        sel.close()
    return results


def peer_closed(sock):
    """(closed, bytes received) for a non-blocking socket: closed is True
    when it has seen FIN or RST; the bytes are what the server sent before
    (e.g. a 408 answer)."""
    data = bytearray()
    try:
        while True:
            got = sock.recv(1 << 16)
            if not got:
                return True, bytes(data)
            data += got
    except BlockingIOError:
        return False, bytes(data)
    except OSError:
        return True, bytes(data)
