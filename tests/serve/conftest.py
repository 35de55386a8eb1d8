"""Fixtures of the `kumo-gen serve` tests: the binary, a small labelled
dataset, `eval --player golden`'s results on it, and a running server.

These tests play the server as users do: openenv-core's own client (from
PyPI) over WebSocket, plain HTTP requests, raw WebSocket frames for the
hostile cases, and a headless Chromium through WebDriver for the page.
The binary is `$KUMO_GEN_BIN`, else `release/kumo-gen` under
`$CARGO_TARGET_DIR` or the repository's `target/`; without it (or without
the Python packages) the tests skip on a developer machine and fail under
`CI=true`.
"""

from __future__ import annotations

import json
import re
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]
DOMAIN = "medical"
SETTING = "truth_num=6+action_num=8+valid_truth_num=1"
SPLIT = "6x8"
LINES = 12


def need(what: str) -> None:
    """Skips (fails under CI=true) for a missing prerequisite."""
    if os.environ.get("CI") == "true":
        pytest.fail(what)
    pytest.skip(what)


def _binary() -> Optional[Path]:
    candidates = []
    if os.environ.get("KUMO_GEN_BIN"):
        candidates.append(Path(os.environ["KUMO_GEN_BIN"]))
    if os.environ.get("CARGO_TARGET_DIR"):
        candidates.append(Path(os.environ["CARGO_TARGET_DIR"]) / "release" / "kumo-gen")
    candidates.append(REPO / "target" / "release" / "kumo-gen")
    return next((c for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)


@pytest.fixture(scope="session")
def kumo_bin() -> Path:
    found = _binary()
    if found is None:
        need("no kumo-gen binary: build it with `cargo build --release --locked` or set KUMO_GEN_BIN")
    return found


def run(kumo_bin: Path, *args: object, stdin: Optional[str] = None) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [str(kumo_bin), *map(str, args)], input=stdin, capture_output=True, text=True, timeout=600
    )
    if result.returncode != 0:
        raise AssertionError(f"kumo-gen {' '.join(map(str, args))} exited {result.returncode}:\n{result.stderr}")
    return result


@pytest.fixture(scope="session")
def data(kumo_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A labelled medical 6x8 dataset of 12 lines, with books."""
    out = tmp_path_factory.mktemp("data")
    run(kumo_bin, "--domain", DOMAIN, "--truths", 6, "--actions", 8, "-n", LINES, "--out", out)
    return out


def read_jsonl(path: Path) -> List[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="session")
def instances(data: Path) -> List[dict]:
    return read_jsonl(data / DOMAIN / f"{SETTING}.jsonl")


@pytest.fixture(scope="session")
def golden(kumo_bin: Path, data: Path, tmp_path_factory: pytest.TempPathFactory) -> Dict[int, str]:
    """`eval --player golden --trials 1`'s result line of every seed, as written."""
    out = tmp_path_factory.mktemp("eval")
    run(kumo_bin, "eval", "--player", "golden", "--data", data, "--trials", 1, "--out", out)
    path = out / "golden" / "VanillaAgent" / DOMAIN / SETTING / "eval_times=1.jsonl"
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    return {json.loads(line)["seed"]: line for line in lines}


class Server:
    """A running `kumo-gen serve`."""

    def __init__(self, kumo_bin: Path, data: Path, out: Path, *flags: object, env: Optional[dict] = None):
        self.out = out
        self.process = subprocess.Popen(
            [str(kumo_bin), "serve", "--data", str(data), "--port", "0", "--out", str(out), *map(str, flags)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        first = self.process.stdout.readline()
        if not first.startswith("serving http://"):
            self.process.kill()
            raise AssertionError(f"the server did not start: {first!r} {self.process.stderr.read()}")
        self.url = first.split()[1].rstrip("/")
        self.ws_url = self.url.replace("http://", "ws://", 1) + "/ws"

    def results(self, player: str, agent: str = "VanillaAgent") -> Path:
        return self.out / player / agent / DOMAIN / SETTING / "eval_times=1.jsonl"

    def stop(self) -> str:
        """SIGTERM; returns what the server printed on stderr."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            _, err = self.process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise AssertionError("the server did not stop within 20 s of SIGTERM")
        assert self.process.returncode == 0, err
        return err


@pytest.fixture
def start_server(kumo_bin: Path, data: Path, tmp_path: Path) -> Iterator:
    servers: List[Server] = []

    def start(*flags: object, env: Optional[dict] = None, out: Optional[Path] = None) -> Server:
        server = Server(kumo_bin, data, out or tmp_path / f"results-{len(servers)}", *flags, env=env)
        servers.append(server)
        return server

    yield start
    for server in servers:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()


def without_episode_id(line: str) -> str:
    """A served result line without the `episode_id` it ends with (a served
    episode's line carries one so that repeats count as trials; eval's and
    play's lines have none), after checking it is there: 32 hex digits."""
    match = re.fullmatch(r'(.*),"episode_id":"([0-9a-f]{32})"}', line)
    assert match, f"a served line ends with its episode_id: {line[-80:]}"
    return match.group(1) + "}"


def wait_until(check, timeout: float = 10.0) -> None:
    end = time.time() + timeout
    while time.time() < end:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")
