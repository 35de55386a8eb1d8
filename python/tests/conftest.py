"""Shared fixtures: the `kumo-gen` binary (to compare against), and a
scripted chat-completions server on loopback.

The binary is `$KUMO_GEN_BIN`, else `release/kumo-gen` under
`$CARGO_TARGET_DIR` or the repository's `target/`. Without it the tests
that compare with the CLI skip on a developer machine and fail under
`CI=true`.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest

import kumo_gen

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"


def _find_binary() -> Optional[Path]:
    candidates = []
    if os.environ.get("KUMO_GEN_BIN"):
        candidates.append(Path(os.environ["KUMO_GEN_BIN"]))
    if os.environ.get("CARGO_TARGET_DIR"):
        candidates.append(Path(os.environ["CARGO_TARGET_DIR"]) / "release" / "kumo-gen")
    candidates.append(REPO / "target" / "release" / "kumo-gen")
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    return None


@pytest.fixture(scope="session")
def kumo_bin() -> Path:
    found = _find_binary()
    if found is None:
        message = "no kumo-gen binary: build it with `cargo build --release --locked` or set KUMO_GEN_BIN"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.fixture(scope="session")
def run_cli(kumo_bin: Path) -> Callable[..., subprocess.CompletedProcess]:
    def run(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [str(kumo_bin), *map(str, args)],
            capture_output=True,
            text=True,
            timeout=600,
            **kwargs,
        )
        if result.returncode != 0:
            raise AssertionError(f"kumo-gen {' '.join(map(str, args))} exited {result.returncode}:\n{result.stderr}")
        return result

    return run


def script(index: int, instance: Dict[str, Any], turn: int) -> str:
    """The scripted player's reply `turn` (0-based) on instance `index`:
    six behaviours, chosen by `index % 6`."""
    opt = instance["optimal"]
    actions = instance["actions"]
    answer = opt["golden_answer"]
    wrong = next(t for t in instance["truths"] if t != answer)
    kind = index % 6
    if kind == 0:  # optimal play
        seq = [f"I test this.\n<ANSWER> {a} </ANSWER>" for a in opt["golden_trajectory"]]
        seq.append(f"So it is\n<ANSWER> {answer} </ANSWER>")
    elif kind == 1:  # a repeated action, then a ruled-out truth
        seq = [f"<ANSWER> {actions[0]} </ANSWER>"] * 2 + [f"<ANSWER> {wrong} </ANSWER>"]
    elif kind == 2:  # no usable answer: a parse error
        seq = ["I do not know."]
    elif kind == 3:  # KUMO's ${name} form, then several tags (the last counts)
        seq = [
            "<ANSWER> ${%s} </ANSWER>" % actions[-1],
            f"<ANSWER> {wrong} </ANSWER> no, rather <ANSWER> {answer} </ANSWER>",
        ]
    elif kind == 4:  # actions until the reply limit
        seq = [f"<ANSWER> {actions[i % len(actions)]} </ANSWER>" for i in range(100)]
    else:  # the answer at once
        seq = [f"<ANSWER>{answer}</ANSWER>"]
    return seq[turn] if turn < len(seq) else "out of script"


TOKENS_PER_REPLY = 7


class ScriptedServer:
    """An OpenAI-compatible chat-completions server on 127.0.0.1 that plays
    `script`, recognising the instance by the request's first message, and
    records every request's messages per instance."""

    def __init__(self, prompts: Dict[str, int], instances: List[Dict[str, Any]]) -> None:
        self.prompts = prompts
        self.instances = instances
        self.requests: Dict[int, List[List[Dict[str, Any]]]] = {}
        self.unknown: List[str] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                messages = [{"role": m["role"], "content": m["content"]} for m in body.get("messages", [])]
                text = server.reply(messages)
                out = json.dumps(
                    {
                        "id": "chatcmpl-scripted",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body.get("model", "scripted"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": text},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": TOKENS_PER_REPLY},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def reply(self, messages: List[Dict[str, Any]]) -> str:
        first = messages[0]["content"] if messages else ""
        index = self.prompts.get(first)
        with self.lock:
            if index is None:
                self.unknown.append(first[:200])
                return "unknown prompt"
            self.requests.setdefault(index, []).append(messages)
        turn = sum(1 for m in messages if m["role"] == "assistant")
        return script(index, self.instances[index], turn)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> "ScriptedServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)


# The setting `eval_run` plays: every script kind twice, a short reply limit.
DOMAIN, TRUTHS, ACTIONS, N, SEED, MAX_STEPS = "medical", 4, 6, 12, 0, 6


@pytest.fixture(scope="session")
def eval_run(run_cli, tmp_path_factory) -> Dict[str, Any]:
    """`kumo-gen generate` + `kumo-gen eval` with the scripted player."""
    root = tmp_path_factory.mktemp("eval")
    data, results = root / "data", root / "results"
    run_cli("generate", "--domain", DOMAIN, "--truths", TRUTHS, "--actions", ACTIONS, "-n", N, "--seed", SEED, "--out", data)
    setting = kumo_gen.setting_name(TRUTHS, ACTIONS)
    lines = (data / DOMAIN / f"{setting}.jsonl").read_text().splitlines()
    env = kumo_gen.Env(DOMAIN, TRUTHS, ACTIONS, seed=SEED, n=N, model="scripted", max_steps=MAX_STEPS)
    instances = [json.loads(line) for line in lines]
    prompts = {env.task(i).system_prompt: i for i in range(N)}
    with ScriptedServer(prompts, instances) as server:
        run_cli(
            "eval", "--api-base", server.url, "--model", "scripted", "--data", data, "--domain", DOMAIN,
            "--trials", 1, "--concurrency", 1, "--max-steps", MAX_STEPS, "--out", results, "--retries", 0,
            env={**os.environ, "KUMO_API_KEY": "test"},
        )
    assert not server.unknown, f"eval sent system prompts the Env does not have: {server.unknown[:1]}"
    out = results / "scripted" / "VanillaAgent" / DOMAIN / setting / "eval_times=1.jsonl"
    by_seed = {}
    for line in out.read_text().splitlines():
        record = json.loads(line)
        by_seed[record["seed"]] = record["trajectories"][0]
    return {"lines": lines, "env": env, "requests": server.requests, "trials": by_seed, "data": data}


def need(module: str) -> Any:
    """Imports a framework the test exercises: skips without it on a
    developer machine, fails under `CI=true` (CI installs them all)."""
    if os.environ.get("CI") == "true":
        import importlib

        return importlib.import_module(module)
    return pytest.importorskip(module)
