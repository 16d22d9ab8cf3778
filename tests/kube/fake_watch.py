"""fake_watch.py - watches for fakeapi.py, as kube-apiserver serves them.

fakeapi.py records every change here (ADDED/MODIFIED from Store.finish,
DELETED from deletes) and hands `GET ...?watch=true` requests to serve():

- a chunked stream of {"type", "object"} lines for the changes after the
  request's resourceVersion (none or "0": the current objects first, as ADDED);
- a label selector turns an object that stops matching into DELETED and one
  that starts matching into ADDED;
- with allowWatchBookmarks=true, a BOOKMARK carrying the newest resourceVersion
  whenever the history moved on without an event for this watch (at most once
  per `bookmark_interval` seconds);
- the stream ends cleanly after timeoutSeconds;
- a resourceVersion older than the kept history gets an ERROR event with a
  410 Expired Status; history is compacted on request, beyond MAX_HISTORY
  events, and at a restart;
- /_fake/watch/cut drops every open stream without the closing chunk (what a
  client sees when the API server restarts or a proxy resets it);
- /_fake/watch/raw {"line": text} sends `text` and a newline, as it is, on
  every open stream (what a broken proxy or API server could send).

Control API (POST, no auth): /_fake/watch/compact, /_fake/watch/cut,
/_fake/watch/raw, /_fake/watch/config {"bookmark_interval": seconds}.

persist(path) keeps the objects (not the history) across a restart of the
server: loaded at start, written at SIGTERM - an API server that comes back
with its data and a compacted watch cache.
"""
import copy
import json
import os
import signal
import socket
import threading
import time

MAX_HISTORY = 20000


class Hub:
    def __init__(self):
        self.cond = threading.Condition()
        self.bookmark_interval = 1.0
        self.generation = 0
        self.muted = 0
        self.raw = []  # lines for /_fake/watch/raw, sent by every stream open when they came
        self.reset(1000)

    def reset(self, rv):
        with self.cond:
            self.events = []        # [(rv:int, type, key, obj, old)]
            self.compacted = rv     # watching from an older resourceVersion is 410
            self.latest = rv
            self.generation += 1    # a reset ends every stream
            self.cond.notify_all()

    def record(self, typ, key, obj, old=None):
        """Called with the store's lock held, after obj got its new resourceVersion."""
        if self.muted:
            return
        rv = int(obj["metadata"]["resourceVersion"])
        with self.cond:
            self.events.append((rv, typ, key, copy.deepcopy(obj), copy.deepcopy(old) if old else None))
            self.latest = max(self.latest, rv)
            if len(self.events) > MAX_HISTORY:
                drop = len(self.events) - MAX_HISTORY
                self.compacted = self.events[drop - 1][0]
                del self.events[:drop]
            self.cond.notify_all()

    def compact(self):
        with self.cond:
            self.compacted = self.latest
            self.events = []

    def cut(self):
        with self.cond:
            self.generation += 1
            self.cond.notify_all()

    def control(self, path, raw):
        if path == "/_fake/watch/compact":
            self.compact()
        elif path == "/_fake/watch/cut":
            self.cut()
        elif path == "/_fake/watch/raw":
            with self.cond:
                self.raw.append(json.loads(raw)["line"].encode() + b"\n")
                self.cond.notify_all()
        elif path == "/_fake/watch/config":
            cfg = json.loads(raw or b"{}")
            self.bookmark_interval = float(cfg.get("bookmark_interval", self.bookmark_interval))
        else:
            return False
        return True


HUB = Hub()


def _send_chunk(handler, data):
    handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
    handler.wfile.flush()


def _line(typ, obj):
    return (json.dumps({"type": typ, "object": obj}) + "\n").encode()


def serve(handler, store, resources, plural, ns, query, selector_matches, reqs):
    """Answer one watch request on `handler` (a fakeapi Handler), streaming until
    timeoutSeconds, a cut, a 410, or the client going away."""
    gv, kind = resources[plural][0], resources[plural][1]
    rv_text = query.get("resourceVersion") or ""
    timeout = float(query.get("timeoutSeconds") or 1800)
    bookmarks = query.get("allowWatchBookmarks") == "true"

    def visible(key, obj):
        return obj is not None and key[0] == plural and (ns is None or key[1] == ns) and \
            selector_matches(reqs, obj["metadata"].get("labels"))

    initial = []
    with store.lock:
        with HUB.cond:
            gen = HUB.generation
            raw_pos = len(HUB.raw)
            if rv_text in ("", "0"):
                pos = HUB.latest
                initial = [copy.deepcopy(o) for k, o in sorted(store.objects.items(), key=lambda kv: str(kv[0]))
                           if visible(k, o)]
            else:
                pos = int(rv_text)
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    try:
        if rv_text not in ("", "0") and pos < HUB.compacted:
            st = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                  "message": "too old resource version: %d (%d)" % (pos, HUB.compacted), "reason": "Expired",
                  "code": 410}
            _send_chunk(handler, _line("ERROR", st))
            handler.wfile.write(b"0\r\n\r\n")
            return
        for o in initial:
            _send_chunk(handler, _line("ADDED", o))
        deadline = time.time() + timeout
        last_sent, told = time.time(), pos
        while True:
            with HUB.cond:
                if HUB.latest <= pos and HUB.generation == gen and len(HUB.raw) == raw_pos and \
                        time.time() < deadline:
                    HUB.cond.wait(min(0.5, max(0.01, deadline - time.time())))
                cut = HUB.generation != gen
                batch = [e for e in HUB.events if e[0] > pos]
                latest = HUB.latest
                raw_lines, raw_pos = HUB.raw[raw_pos:], len(HUB.raw)
            if cut:
                # no closing chunk: the client sees the connection drop
                handler.close_connection = True
                try:
                    handler.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            for line in raw_lines:
                _send_chunk(handler, line)
            for rv, typ, key, obj, old in batch:
                was, now = visible(key, old), visible(key, obj)
                if typ == "DELETED":
                    out = "DELETED" if now else None
                elif was and now:
                    out = "MODIFIED"
                elif now:
                    out = "ADDED"
                elif was:
                    out = "DELETED"
                else:
                    out = None
                if out:
                    _send_chunk(handler, _line(out, obj))
                    last_sent, told = time.time(), rv
                pos = rv
            pos = max(pos, latest)
            if bookmarks and pos > told and time.time() - last_sent >= HUB.bookmark_interval:
                _send_chunk(handler, _line("BOOKMARK", {"kind": kind, "apiVersion": gv,
                                                        "metadata": {"resourceVersion": str(pos)}}))
                last_sent, told = time.time(), pos
            if time.time() >= deadline:
                handler.wfile.write(b"0\r\n\r\n")
                handler.wfile.flush()
                return
    except OSError:
        handler.close_connection = True  # the client went away


def persist(path, store, key_of):
    """Load the objects saved at the last SIGTERM (if any); save them at the next."""
    if os.path.exists(path):
        with open(path) as f:
            saved = json.load(f)
        with store.lock:
            for o in saved["objects"]:
                store.objects[key_of(o)] = o
            store.rv = saved["rv"]
        HUB.reset(store.rv)  # the watch cache starts empty: older resourceVersions are 410

    def save(signum, frame):
        with store.lock:
            data = {"rv": store.rv, "objects": list(store.objects.values())}
        with open(path + ".tmp", "w") as f:
            json.dump(data, f)
        os.rename(path + ".tmp", path)
        os._exit(0)

    signal.signal(signal.SIGTERM, save)
