"""The server of ``annotate serve``: waitress, guarded against slow and greedy clients, and a bounded cache.

Waitress reads requests on one thread and serves them on a few; an idle connection costs no worker, but it
holds one of the server's connection slots. Left as waitress has it (100 slots, a connection closed after
120 s without a byte), 150 connections that send a header line now and then lock every annotator out for as
long as they stay. So a lab app's server here:

- gives every request :data:`REQUEST_SECONDS` to arrive in full (request line, headers and body), counted from
  the moment the connection was opened or its previous answer sent; a connection that is neither sending a
  whole request in time nor being answered is closed (a browser opens a new one when it needs it);
- lets one client address hold at most :data:`PER_CLIENT` connections (a browser opens about six, a lab behind
  one NAT address many more); more are closed as they come;
- has :data:`CONNECTION_LIMIT` slots in all; a connection arriving when they are all held takes the place of
  an idle connection of the address that holds the most (:class:`Holders`), so addresses that keep their
  connections alive with a request every few seconds never lock out an annotator holding a few.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

REQUEST_SECONDS = 10.0
PER_CLIENT = 100  # a lab behind one NAT address still seats 50 annotators at once (bench_lab.py)
CONNECTION_LIMIT = 500
EVICTION_SLACK = 50  # connections over the limit for a moment: evicted ones close on the loop's next turn
CACHED_ANNOTATORS = 256  # annotators whose item order is kept in memory (drawn again when needed)


class BoundedCache:
    """A mapping that keeps the ``size`` entries used last: the per-name caches of the app never grow with
    the number of distinct names that log in.

    >>> cache = BoundedCache(2)
    >>> cache["a"], cache["b"] = 1, 2
    >>> _ = cache.get("a"); cache["c"] = 3
    >>> sorted(cache.keys())
    ['a', 'c']
    """

    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, default=None):
        with self._lock:
            if key not in self._items:
                return default
            self._items.move_to_end(key)
            return self._items[key]

    def __setitem__(self, key, value) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)

    def keys(self) -> list:
        with self._lock:
            return list(self._items)


class Holders:
    """Who holds the server's connections, by client address (the loop thread's accounting): a connection that
    arrives while :data:`CONNECTION_LIMIT` are held takes the place of an idle one of the address holding the
    most (:meth:`make_room`), so a crowd of addresses keeping connections alive with a request every few
    seconds (never past :data:`REQUEST_SECONDS`) no longer locks an annotator out."""

    def __init__(self, limit: int):
        self.limit = limit
        self.by_client: dict[str, dict[int, object]] = {}
        self.total = 0
        self.evicted = 0
        self.lock = threading.Lock()

    def add(self, client: str, channel) -> None:
        self.by_client.setdefault(client, {})[id(channel)] = channel
        self.total += 1

    def remove(self, client: str, channel) -> bool:
        held = self.by_client.get(client, {})
        if held.pop(id(channel), None) is None:
            return False
        self.total -= 1
        if not held:
            self.by_client.pop(client, None)
        return True

    def count(self, client: str) -> int:
        return len(self.by_client.get(client, ()))

    def make_room(self, newcomer) -> None:
        """While more than ``limit`` are held: close an idle connection (no request in progress, the longest
        idle) of the largest holder, the next largest if it has none idle; never ``newcomer``."""
        while self.total > self.limit:
            victim = None
            for client in sorted(self.by_client, key=lambda c: -len(self.by_client[c])):
                idle = [c for c in self.by_client[client].values() if c is not newcomer and not c.requests]
                if idle:
                    victim = min(idle, key=lambda c: c.idle_since)
                    break
            if victim is None:
                return  # every connection is being answered: waitress's own limit (with slack) holds
            self.remove(victim.client, victim)
            victim.will_close = True  # closed on the loop's next turn
            self.evicted += 1


def _guarded_channel(base, request_seconds: float, per_client: int, holders: Holders):
    """Waitress's channel class with the request deadline, the per-client limit and the eviction of this
    module."""

    class GuardedChannel(base):
        def __init__(self, server, sock, addr, adj, map=None):
            self.idle_since = time.monotonic()
            self.client = addr[0] if isinstance(addr, tuple) else str(addr)
            with holders.lock:
                self.over_limit = holders.count(self.client) >= per_client
            super().__init__(server, sock, addr, adj, map)
            if self.over_limit:
                self.will_close = True  # closed on the loop's next turn, before a byte is read
                return
            with holders.lock:
                holders.add(self.client, self)
                holders.make_room(self)

        def readable(self):
            if (
                not self.will_close
                and not self.requests
                and time.monotonic() - self.idle_since > request_seconds
            ):
                self.will_close = True  # no whole request in time: the slot goes back
            return (not self.over_limit) and super().readable()

        def received(self, data):
            if self.over_limit:
                return False
            return super().received(data)

        def service(self):
            try:
                return super().service()
            finally:
                self.idle_since = time.monotonic()  # the next request's time starts with this answer sent

        def del_channel(self, map=None):
            with holders.lock:
                holders.remove(self.client, self)
            super().del_channel(map)

    return GuardedChannel


def serve(server) -> None:
    """Serve until Ctrl-C or ``kill``, which reach the caller. Waitress's own ``run()`` catches
    ``KeyboardInterrupt`` and returns, so ``annotate serve`` ended with exit status 0 and no word; here its loop
    runs as ``run()`` runs it, and the interrupt goes on to the CLI (one line, 130 or 143)."""
    # one socket: the server's own map; several: MultiSocketServer.map
    loop_map = getattr(server, "_map", None)
    if loop_map is None:
        loop_map = server.map
    server.asyncore.loop(
        timeout=server.adj.asyncore_loop_timeout, map=loop_map, use_poll=server.adj.asyncore_use_poll
    )


def make_server(
    app,
    host: str,
    port: int,
    *,
    max_body: int,
    request_seconds: float = REQUEST_SECONDS,
    per_client: int = PER_CLIENT,
    connection_limit: int = CONNECTION_LIMIT,
):
    """A waitress server of ``app`` (not yet running; ``.run()`` serves, ``.close()`` stops); port 0 picks a
    free one.

    Waitress refuses a body beyond ``max_body`` before reading it (413), so a large POST never fills memory or
    disk; slow and greedy clients are handled as the module says."""
    from waitress import create_server

    server = create_server(
        app,
        host=host,
        port=port,
        threads=4,
        max_request_body_size=max_body,
        connection_limit=connection_limit + EVICTION_SLACK,  # ours is `connection_limit` (Holders)
        cleanup_interval=max(1, int(request_seconds)),
        channel_timeout=max(1, int(request_seconds)),
    )
    servers = getattr(server, "map", {}).values() if not hasattr(server, "channel_class") else [server]
    holders = Holders(connection_limit)
    for one in servers:
        if hasattr(one, "channel_class"):
            one.channel_class = _guarded_channel(one.channel_class, request_seconds, per_client, holders)
    server.holders = holders
    return server
