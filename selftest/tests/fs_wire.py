"""Raw memtrace-fs frames for the fs_* and rely_* tests (imported, not a test).
The encoding is docs/protocol.md's, written again here from the document so
that the tests do not share the code they check."""
import socket
import struct

MAGIC, VERSION = 0x4D544653, 1
HELLO, OPEN_PATH, OPEN_BUILD_ID, READ, CLOSE = 1, 2, 3, 5, 6
OPENED, DATA, CLOSED, ERROR = 0x82, 0x85, 0x86, 0x7F


def frame(t, payload, flags=0, reserved=0):
    return struct.pack(">IBBH", len(payload), t, flags, reserved) + payload


def hello(name=b"test"):
    return frame(HELLO, struct.pack(">IHH", MAGIC, VERSION, len(name)) + name)


def open_path(path, flags=0, reserved=0):
    return frame(OPEN_PATH, struct.pack(">H", len(path)) + path, flags, reserved)


def open_build_id(bid):
    return frame(OPEN_BUILD_ID, bytes([len(bid)]) + bid)


def read(handle, off, n):
    return frame(READ, struct.pack(">IQI", handle, off, n))


def connect(port, src=None, host="127.0.0.1", timeout=10):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    if src:
        s.bind((src, 0))
    s.connect((host, port))
    return s


def recv_frame(s):
    """(type, flags, payload), or None when the peer closed."""
    try:
        h = b""
        while len(h) < 8:
            c = s.recv(8 - len(h))
            if not c:
                return None
            h += c
        n, t, f, _ = struct.unpack(">IBBH", h)
        p = b""
        while len(p) < n:
            c = s.recv(n - len(p))
            if not c:
                return None
            p += c
        return t, f, p
    except (ConnectionResetError, socket.timeout, BrokenPipeError):
        return None


def session(port, src=None):
    s = connect(port, src)
    s.sendall(hello())
    r = recv_frame(s)
    if not r or r[0] != HELLO:
        raise RuntimeError("no hello from the server: %r" % (r,))
    return s


def error_text(payload):
    code, n = struct.unpack(">IH", payload[:6])
    return code, payload[6:6 + n].decode(errors="replace")
