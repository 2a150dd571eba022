"""Hostile neighbours for the connection-limit test: many TCP clients that never send a
request (idle) and clients that send a request head one byte every two seconds
(slowloris), each reconnecting as soon as the server closes it, for a while.

usage: flood.py SECONDS IDLE_PORT:IDLE_COUNT[,...] SLOW_PORT:SLOW_COUNT[,...]
Prints "ready" once every client has been opened, then at the end one JSON line:
{"opened", "closed_by_server", "refused", "idle_longest_s", "slow_longest_s"}.
"""

import json
import resource
import selectors
import socket
import sys
import time

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

seconds = float(sys.argv[1])


def plan(argument):
    wanted = []
    for part in filter(None, argument.split(",")):
        port, count = part.split(":")
        wanted += [int(port)] * int(count)
    return wanted


idle_ports = plan(sys.argv[2])
slow_ports = plan(sys.argv[3])
selector = selectors.DefaultSelector()
stats = {"opened": 0, "closed_by_server": 0, "refused": 0, "idle_longest_s": 0.0, "slow_longest_s": 0.0}
reopen = []  # (when, kind, port)


class Client:
    def __init__(self, kind, port):
        self.kind, self.port, self.sent = kind, port, 0
        self.head = ("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Padding: %s\r\n\r\n" % (port, "a" * 200)).encode()
        self.socket = socket.socket()
        self.socket.setblocking(False)
        self.socket.connect_ex(("127.0.0.1", port))
        self.opened = time.monotonic()
        selector.register(self.socket, selectors.EVENT_READ, self)
        stats["opened"] += 1

    def close(self, by_server):
        lived = time.monotonic() - self.opened
        key = "idle_longest_s" if self.kind == "idle" else "slow_longest_s"
        # Only connections that ended while the flood ran tell how long the server waits.
        if by_server:
            stats["closed_by_server"] += 1
            stats[key] = max(stats[key], round(lived, 2))
        selector.unregister(self.socket)
        self.socket.close()


clients = [Client("idle", port) for port in idle_ports] + [Client("slow", port) for port in slow_ports]
print("ready", flush=True)
end = time.monotonic() + seconds
next_drip = time.monotonic() + 2
while time.monotonic() < end:
    for key, _ in selector.select(timeout=0.2):
        client = key.data
        try:
            data = client.socket.recv(65536)
        except BlockingIOError:
            continue
        except OSError:
            data = b""
            stats["refused"] += 1
        if not data:
            client.close(by_server=True)
            clients.remove(client)
            reopen.append((time.monotonic() + 0.1, client.kind, client.port))
    now = time.monotonic()
    if now >= next_drip:
        next_drip = now + 2
        for client in clients:
            if client.kind == "slow" and client.sent < len(client.head) - 1:
                try:
                    client.socket.send(client.head[client.sent:client.sent + 1])
                    client.sent += 1
                except OSError:
                    pass
    due = [entry for entry in reopen if entry[0] <= now]
    reopen = [entry for entry in reopen if entry[0] > now]
    for _, kind, port in due:
        try:
            clients.append(Client(kind, port))
        except OSError:
            stats["refused"] += 1
for client in clients:
    client.close(by_server=False)
print(json.dumps(stats), flush=True)
