"""A TCP proxy for the fs_* and rely_* tests (run, not imported as a test).

    tcp_proxy.py LISTEN_PORT_FILE TARGET_PORT [--delay MS] [--record PREFIX]

Listens on 127.0.0.1 (port written to LISTEN_PORT_FILE), forwards every
connection to 127.0.0.1:TARGET_PORT.  --delay holds each chunk the server
sends for MS milliseconds (a slow link or a slow host); --record appends
what each side sent to PREFIX.c2s / PREFIX.s2c and counts the bytes in
PREFIX.count ("c2s s2c", rewritten after every chunk)."""
import socket, sys, threading, time

port_file, target = sys.argv[1], int(sys.argv[2])
delay = 0.0
record = None
args = sys.argv[3:]
while args:
    if args[0] == "--delay":
        delay = float(args[1]) / 1000; args = args[2:]
    elif args[0] == "--record":
        record = args[1]; args = args[2:]
    else:
        sys.exit("bad argument " + args[0])
lock = threading.Lock()
counts = {"c2s": 0, "s2c": 0}

def pump(src, dst, way):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if way == "s2c" and delay:
                time.sleep(delay)
            if record:
                with lock:
                    counts[way] += len(data)
                    open(record + "." + way, "ab").write(data)
                    open(record + ".count", "w").write("%d %d\n" % (counts["c2s"], counts["s2c"]))
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", 0))
ls.listen(16)
open(port_file + ".tmp", "w").write("%d\n" % ls.getsockname()[1])
import os
os.rename(port_file + ".tmp", port_file)
while True:
    c, _ = ls.accept()
    try:
        s = socket.create_connection(("127.0.0.1", target))
    except OSError:
        c.close()
        continue
    for a, b, way in ((c, s, "c2s"), (s, c, "s2c")):
        threading.Thread(target=pump, args=(a, b, way), daemon=True).start()
