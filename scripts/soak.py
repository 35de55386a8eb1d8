#!/usr/bin/env python3
"""The soak of issue 55 (BENCHMARKS.md "Soak"): long runs that must hold
flat memory and keep answering, whatever the clients do.

1. The Python `Env`: `--env-episodes` episodes (default 100 000), each
   on a new line, with dense rewards and with the 0/1 outcome, a seeded
   random policy (actions, then a truth); the process's resident memory
   after the first episode and at checkpoints. Needs `kumo_gen` (the
   wheel) in this Python. The first run of a setting and seed also builds
   its line index (docs/performance.md), which grows with the lines
   indexed; run it twice to see the `Env` alone.
2. `kumo-gen serve`: `--served-episodes` whole episodes (default 10 000;
   every other one dense) played over HTTP by `--workers` clients, with
   hostile clients alongside the whole time: idle sockets, half-sent
   headers (slow loris), oversize bodies, requests under a rebound DNS
   name, budgets a line cannot bear, episodes of 1 MiB replies to the
   reply limit, and WebSockets that only ping. Prints the server's
   resident memory before and after (and its peak), `/health`'s latency
   while it ran, and what each hostile client got.

    python scripts/soak.py --bin target/release/kumo-gen
    python scripts/soak.py --bin target/release/kumo-gen \\
        --env-episodes 10000 --served-episodes 2000        # a shorter run

Standard library only (besides `kumo_gen` for part 1); loopback only;
everything it starts is stopped at the end.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional


def rss_mb(pid: Optional[int] = None, field: str = "VmRSS") -> float:
    status = Path(f"/proc/{pid or 'self'}/status").read_text()
    for line in status.splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


# ---- part 1: the Python Env ----


def soak_env(episodes: int, dense: bool, seed: int) -> Dict[str, object]:
    import kumo_gen

    env = kumo_gen.Env("medical", 4, 6, n=episodes, seed=seed, dense=dense)
    rng = random.Random(seed)
    checkpoints = sorted({1, 1000, episodes // 10, episodes // 2, episodes} - {0})
    rss = {}
    started = time.perf_counter()
    for played in range(1, episodes + 1):
        env.reset()
        instance = env.instance(env.index)
        done = False
        while not done:
            names = instance["actions"] if rng.random() < 0.7 else instance["truths"]
            _, _, done, _ = env.step(f"<ANSWER> {rng.choice(names)} </ANSWER>")
        if played in checkpoints:
            rss[played] = round(rss_mb(), 1)
    return {
        "episodes": episodes,
        "dense": dense,
        "seconds": round(time.perf_counter() - started, 1),
        "rss_mb": rss,
    }


# ---- part 2: the server ----


class Server:
    def __init__(self, binary: str, data: Path, out: Path, flags: List[str]):
        self.process = subprocess.Popen(
            [binary, "serve", "--data", str(data), "--out", str(out), "--port", "0", *flags],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        first = self.process.stdout.readline()
        if not first.startswith("serving http://"):
            self.process.kill()
            raise SystemExit(f"the server did not start: {first!r} {self.process.stderr.read()}")
        address = first.split()[1].rstrip("/").removeprefix("http://")
        self.host, port = address.rsplit(":", 1)
        self.port = int(port)

    def stop(self) -> str:
        self.process.send_signal(signal.SIGTERM)
        _, err = self.process.communicate(timeout=60)
        return err


def request(conn: http.client.HTTPConnection, method: str, path: str, body=None, headers=None):
    data = None if body is None else json.dumps(body)
    conn.request(method, path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
    response = conn.getresponse()
    text = response.read()
    try:
        return response.status, json.loads(text)
    except ValueError:
        return response.status, text


class Counters:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: Dict[str, int] = {}

    def add(self, key: str, n: int = 1) -> None:
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + n


def player(server: Server, lines: List[dict], todo: List[int], counters: Counters, seed: int) -> None:
    rng = random.Random(seed)
    conn = http.client.HTTPConnection(server.host, server.port, timeout=120)
    while True:
        with counters.lock:
            if not todo:
                return
            number = todo.pop()
        index = rng.randrange(len(lines))
        line = lines[index]
        reward = "dense" if number % 2 else "outcome"
        try:
            status, reset = request(conn, "POST", "/reset", {"index": index, "model": "soak", "reward": reward})
            if status != 200:
                counters.add(f"player reset {status}")
                continue
            episode = reset["observation"]["episode_id"]
            done = False
            while not done:
                names = line["actions"] if rng.random() < 0.7 else line["truths"]
                status, step = request(conn, "POST", "/step",
                                       {"episode_id": episode, "action": {"message": f"<ANSWER> {rng.choice(names)} </ANSWER>"}})
                if status != 200:
                    counters.add(f"player step {status}")
                    break
                done = step["done"]
            if done:
                counters.add("episodes played")
        except (OSError, http.client.HTTPException) as e:
            counters.add(f"player error {type(e).__name__}")
            conn.close()
            conn = http.client.HTTPConnection(server.host, server.port, timeout=120)


def idle_sockets(server: Server, stop: threading.Event, counters: Counters, n: int = 100) -> None:
    held: List[socket.socket] = []
    while not stop.is_set():
        while len(held) < n:
            try:
                held.append(socket.create_connection((server.host, server.port), timeout=5))
            except OSError:
                counters.add("idle connect failed")
                break
        time.sleep(0.5)
        alive = []
        for s in held:
            s.setblocking(False)
            try:
                if s.recv(1) == b"":
                    counters.add("idle sockets closed by the server")
                    s.close()
                    continue
            except BlockingIOError:
                pass
            except OSError:
                counters.add("idle sockets closed by the server")
                s.close()
                continue
            alive.append(s)
        held = alive
    for s in held:
        s.close()


def slow_loris(server: Server, stop: threading.Event, counters: Counters, n: int = 20) -> None:
    header = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200
    held = []
    while not stop.is_set():
        while len(held) < n:
            try:
                held.append([socket.create_connection((server.host, server.port), timeout=5), 0])
            except OSError:
                counters.add("loris connect failed")
                break
        time.sleep(0.5)
        alive = []
        for entry in held:
            s, sent = entry
            try:
                s.sendall(header[sent:sent + 1])
                entry[1] = (sent + 1) % len(header)
                alive.append(entry)
            except OSError:
                counters.add("slow loris cut off")
                s.close()
        held = alive
    for s, _ in held:
        s.close()


def oversize(server: Server, stop: threading.Event, counters: Counters) -> None:
    body = b'{"model": "' + b"x" * (4 << 20) + b'"}'
    while not stop.is_set():
        try:
            conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
            conn.request("POST", "/reset", body=body, headers={"Content-Type": "application/json"})
            counters.add(f"oversize body answered {conn.getresponse().status}")
            conn.close()
        except (OSError, http.client.HTTPException):
            counters.add("oversize body reset")
        time.sleep(0.2)


def rebound(server: Server, stop: threading.Event, counters: Counters) -> None:
    evil = f"rebind.evil.example:{server.port}"
    while not stop.is_set():
        try:
            conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
            status, _ = request(conn, "POST", "/reset", {}, {"Host": evil, "Origin": f"http://{evil}"})
            counters.add(f"rebound name answered {status}")
            conn.close()
        except (OSError, http.client.HTTPException):
            counters.add("rebound name error")
        time.sleep(0.1)


def budgets(server: Server, stop: threading.Event, counters: Counters) -> None:
    while not stop.is_set():
        try:
            conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
            for budget in (6, 1_000_000):
                status, _ = request(conn, "POST", "/reset", {"budget": budget})
                counters.add(f"budget {budget} answered {status}")
            conn.close()
        except (OSError, http.client.HTTPException):
            counters.add("budget error")
        time.sleep(0.2)


def long_replies(server: Server, lines: List[dict], stop: threading.Event, counters: Counters) -> None:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=120)
    while not stop.is_set():
        try:
            status, reset = request(conn, "POST", "/reset", {"index": 0, "model": "long"})
            if status != 200:
                counters.add(f"long reset {status}")
                time.sleep(0.5)
                continue
            episode = reset["observation"]["episode_id"]
            reply = "y" * ((1 << 20) - 4096) + f"<ANSWER> {lines[0]['actions'][0]} </ANSWER>"
            done, steps = False, 0
            while not done and not stop.is_set():
                status, step = request(conn, "POST", "/step", {"episode_id": episode, "action": {"message": reply}})
                if status != 200:
                    counters.add(f"long step {status}")
                    break
                done, steps = step["done"], steps + 1
            if done:
                counters.add("long episodes (50 replies of 1 MiB) played")
        except (OSError, http.client.HTTPException):
            counters.add("long error")
            conn.close()
            conn = http.client.HTTPConnection(server.host, server.port, timeout=120)


def ws_frame(opcode: int, payload: bytes) -> bytes:
    mask = os.urandom(4)
    head = bytes([0x80 | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def ws_read(s: socket.socket) -> Optional[tuple]:
    def exact(n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = s.recv(n - len(out))
            if not chunk:
                raise ConnectionError("closed")
            out += chunk
        return out

    b0, b1 = exact(2)
    n = b1 & 0x7F
    if n == 126:
        n = int.from_bytes(exact(2), "big")
    elif n == 127:
        n = int.from_bytes(exact(8), "big")
    return b0 & 0x0F, exact(n)


def pinging_websockets(server: Server, stop: threading.Event, counters: Counters, idle: float, n: int = 10) -> None:
    def one() -> None:
        while not stop.is_set():
            try:
                s = socket.create_connection((server.host, server.port), timeout=idle + 10)
                key = base64.b64encode(os.urandom(16)).decode()
                s.sendall((f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
                head = b""
                while b"\r\n\r\n" not in head:
                    head += s.recv(1024)
                s.sendall(ws_frame(1, json.dumps({"type": "reset", "data": {"index": 1}}).encode()))
                ws_read(s)
                started = time.time()
                s.settimeout(0.5)
                while not stop.is_set():
                    s.sendall(ws_frame(9, b"ping"))
                    try:
                        opcode, payload = ws_read(s)
                    except socket.timeout:
                        continue
                    if opcode == 1:
                        message = json.loads(payload)
                        if "idle" in message.get("data", {}).get("message", ""):
                            counters.add("pinging sessions idled out")
                            counters.add("pinging: seconds to idle out x10", round((time.time() - started) * 10))
                        break
                    if opcode == 8:
                        break
                s.close()
            except (OSError, ConnectionError, ValueError):
                counters.add("pinging error")
                time.sleep(0.5)

    threads = [threading.Thread(target=one, daemon=True) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def health(server: Server, stop: threading.Event, latencies: List[float], failures: Counters) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        try:
            conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
            status, _ = request(conn, "GET", "/health")
            conn.close()
            if status == 200:
                latencies.append(time.perf_counter() - started)
            else:
                failures.add(f"/health {status}")
        except (OSError, http.client.HTTPException):
            failures.add("/health failed")
        time.sleep(0.05)


def sample_rss(server: Server, stop: threading.Event, counters: Counters, marks: List[int], rss: Dict[int, float]) -> None:
    """The server's resident memory as the played episodes pass `marks`."""
    while not stop.is_set() and marks:
        if counters.counts.get("episodes played", 0) >= marks[0]:
            rss[marks.pop(0)] = round(rss_mb(server.process.pid), 1)
        time.sleep(0.01)


def soak_serve(binary: str, episodes: int, workers: int, work: Path) -> Dict[str, object]:
    data = work / "data"
    subprocess.run([binary, "--domain", "medical", "--truths", "6", "--actions", "8", "-n", "300",
                    "--no-sft", "--books", "none", "--out", str(data)], check=True, capture_output=True)
    lines = [json.loads(l) for l in (data / "medical" / "truth_num=6+action_num=8+valid_truth_num=1.jsonl").read_text().splitlines()]
    idle = 5
    server = Server(binary, data, work / "results",
                    ["--max-sessions", "512", "--max-connections", "600", "--request-timeout", "2",
                     "--idle-timeout", str(idle)])
    time.sleep(0.5)
    before = rss_mb(server.process.pid)
    stop = threading.Event()
    counters = Counters()
    latencies: List[float] = []
    rss: Dict[int, float] = {}
    marks = sorted({min(1000, episodes), episodes // 2, episodes})
    hostile = [
        threading.Thread(target=sample_rss, args=(server, stop, counters, marks, rss), daemon=True),
        threading.Thread(target=idle_sockets, args=(server, stop, counters), daemon=True),
        threading.Thread(target=slow_loris, args=(server, stop, counters), daemon=True),
        threading.Thread(target=oversize, args=(server, stop, counters), daemon=True),
        threading.Thread(target=rebound, args=(server, stop, counters), daemon=True),
        threading.Thread(target=budgets, args=(server, stop, counters), daemon=True),
        threading.Thread(target=long_replies, args=(server, lines, stop, counters), daemon=True),
        threading.Thread(target=pinging_websockets, args=(server, stop, counters, idle), daemon=True),
        threading.Thread(target=health, args=(server, stop, latencies, counters), daemon=True),
    ]
    for t in hostile:
        t.start()
    todo = list(range(episodes))
    started = time.perf_counter()
    players = [threading.Thread(target=player, args=(server, lines, todo, counters, i)) for i in range(workers)]
    for t in players:
        t.start()
    for t in players:
        t.join()
    seconds = time.perf_counter() - started
    # The hostile clients run 30 s at least (past every timeout).
    time.sleep(max(0.0, 30 - seconds))
    stop.set()
    for t in hostile:
        t.join(timeout=30)
    after = rss_mb(server.process.pid)
    peak = rss_mb(server.process.pid, "VmHWM")
    report = server.stop()
    recorded = sum(len(p.read_text().splitlines()) for p in (work / "results" / "soak").rglob("*.jsonl"))
    latencies.sort()
    q = lambda p: round(1000 * latencies[min(len(latencies) - 1, int(p * len(latencies)))], 2) if latencies else None
    return {
        "episodes": episodes,
        "seconds": round(seconds, 1),
        "episodes_per_second": round(episodes / seconds, 1),
        "server_rss_mb": {"before": round(before, 1), "at_episodes": rss, "after": round(after, 1), "peak": round(peak, 1)},
        "recorded_lines": recorded,
        "health_ms": {"n": len(latencies), "p50": q(0.5), "p99": q(0.99), "max": q(1.0)},
        "counts": dict(sorted(counters.counts.items())),
        "server_report": report.strip().splitlines()[-1] if report.strip() else "",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default="target/release/kumo-gen")
    parser.add_argument("--env-episodes", type=int, default=100_000)
    parser.add_argument("--served-episodes", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--skip-env", action="store_true")
    parser.add_argument("--skip-serve", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"load average at start: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}", flush=True)
    if not args.skip_env:
        for dense in (True, False):
            print(json.dumps({"env": soak_env(args.env_episodes, dense, seed=55)}), flush=True)
    if not args.skip_serve:
        work = Path(tempfile.mkdtemp(prefix="kumo-soak-"))
        try:
            print(json.dumps({"serve": soak_serve(args.bin, args.served_episodes, args.workers, work)}), flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    load = os.getloadavg()
    print(f"load average at end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")


if __name__ == "__main__":
    sys.exit(main())
