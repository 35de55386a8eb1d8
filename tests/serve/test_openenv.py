"""`kumo-gen serve` through openenv-core's own client (WebSocket), plain
HTTP and raw WebSocket frames: episodes equal `eval --player golden`'s,
byte for byte, and hostile clients get typed errors."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from conftest import DOMAIN, LINES, SETTING, SPLIT, read_jsonl, wait_until, without_episode_id

MISSING = ""
try:
    from openenv import GenericEnvClient
    import requests
    import websockets
except ImportError as e:  # pragma: no cover - the CI venv has them
    GenericEnvClient = None
    MISSING = str(e)


def needs_client() -> None:
    if GenericEnvClient is None:
        from conftest import need

        need(f"openenv-core is not installed ({MISSING}): pip install openenv-core")


def replies(golden_line: str):
    """eval's replies of the golden trial, and the tokens they cost (all on
    the first step: the trial records their sum)."""
    trial = json.loads(golden_line)["trajectories"][0]
    texts = trial["generated_text"]
    return [(t, trial["consumed_tokens"] if i == 0 else 0) for i, t in enumerate(texts)]


SECRET_KEYS = {"answer", "successful", "valid_truth", "optimal", "expected_steps", "observations", "golden_trajectory"}


def test_websocket_episodes_equal_eval_golden(start_server, golden, instances, data: Path) -> None:
    needs_client()
    server = start_server()
    sft = read_jsonl(data / DOMAIN / "sft" / f"{SETTING}.jsonl")
    for index in range(LINES):
        with GenericEnvClient(base_url=server.url).sync() as env:
            result = env.reset(split=SPLIT, index=index, model="golden", messages=True)
            assert result.done is False and result.reward is None
            observation = result.observation
            assert observation["system_prompt"] == sft[index]["messages"][0]["content"]
            assert observation["task_id"] == f"{DOMAIN}/{SPLIT}/{index}"
            truth = instances[index]["valid_truth"]
            for text, tokens in replies(golden[index]):
                assert not result.done
                # Nothing the player must not know before the end.
                assert not SECRET_KEYS & set(result.observation)
                state = env.state()
                assert truth not in json.dumps(state) and not SECRET_KEYS & set(state)
                assert state["task_id"] == f"{DOMAIN}/{SPLIT}/{index}"
                messages = result.observation["messages"]
                assert messages[0]["content"] == observation["system_prompt"]
                assert messages[-1]["content"] == result.observation["prompt"]
                result = env.step({"message": text, "tokens": tokens})
            assert result.done and result.reward == 1.0
            final = result.observation
            assert final["successful"] is True and final["answer"] == [truth]
            assert final["action_count"] == len(json.loads(golden[index])["trajectories"][0]["actions"])
            assert final["expected_steps"] == pytest.approx(instances[index]["optimal"]["expected_steps"], abs=1e-12)
    server.stop()
    lines = server.results("golden").read_text().splitlines()
    assert len({json.loads(line)["episode_id"] for line in lines}) == len(lines)
    served = {json.loads(line)["seed"]: without_episode_id(line) for line in lines}
    assert served == golden


def test_http_episodes_equal_eval_golden(start_server, golden) -> None:
    needs_client()
    server = start_server()
    for index in range(LINES):
        r = requests.post(f"{server.url}/reset", json={"split": SPLIT, "index": index, "model": "golden"})
        r.raise_for_status()
        episode = r.json()["observation"]["episode_id"]
        assert len(episode) == 32
        for text, tokens in replies(golden[index]):
            state = requests.get(f"{server.url}/state", params={"episode_id": episode}).json()
            assert state["episode_id"] == episode and not state["done"]
            r = requests.post(f"{server.url}/step", json={"episode_id": episode, "action": {"message": text, "tokens": tokens}})
            r.raise_for_status()
        body = r.json()
        assert body["done"] is True and body["reward"] == 1.0
        # A finished HTTP episode is gone.
        r = requests.post(f"{server.url}/step", json={"episode_id": episode, "action": {"message": "x"}})
        assert r.status_code == 404 and r.json()["code"] == "SESSION_ERROR"
    server.stop()
    lines = server.results("golden").read_text().splitlines()
    assert len({json.loads(line)["episode_id"] for line in lines}) == len(lines)
    served = {json.loads(line)["seed"]: without_episode_id(line) for line in lines}
    assert served == golden


def test_reset_by_seed_task_id_and_the_task_api(start_server) -> None:
    needs_client()
    server = start_server()
    assert requests.get(f"{server.url}/health").json() == {"status": "healthy"}
    assert requests.get(f"{server.url}/list_environments").json() == [DOMAIN]
    splits = requests.get(f"{server.url}/{DOMAIN}/splits").json()
    assert [s["name"] for s in splits] == [SPLIT] and splits[0]["num_tasks"] == LINES
    assert requests.post(f"{server.url}/{DOMAIN}/num_tasks", json={"split": SPLIT}).json() == {"num_tasks": LINES}
    tasks = requests.post(f"{server.url}/{DOMAIN}/tasks", json={"split": SPLIT}).json()
    assert tasks["env_name"] == DOMAIN and len(tasks["tasks"]) == LINES
    task = requests.post(f"{server.url}/{DOMAIN}/task", json={"split": SPLIT, "index": 5}).json()["task"]
    assert task == tasks["tasks"][5] and task["task_id"] == f"{DOMAIN}/{SPLIT}/5"
    window = requests.post(f"{server.url}/{DOMAIN}/task_range", json={"split": SPLIT, "start": 3, "stop": 6}).json()
    assert window["tasks"] == tasks["tasks"][3:6]
    assert requests.post(f"{server.url}/{DOMAIN}/task", json={"split": SPLIT, "index": LINES}).status_code == 400
    assert requests.get(f"{server.url}/nowhere/splits").status_code == 404
    schema = requests.get(f"{server.url}/schema").json()
    assert schema["action"]["required"] == ["message"]
    assert requests.get(f"{server.url}/metadata").json()["name"] == "kumo-gen"

    def first_prompt(**reset) -> str:
        with GenericEnvClient(base_url=server.url).sync() as env:
            return env.reset(**reset).observation["system_prompt"]

    by_index = first_prompt(split=SPLIT, index=7)
    assert first_prompt(task_id=f"{DOMAIN}/{SPLIT}/7") == by_index
    assert first_prompt(seed=7) == by_index
    assert first_prompt(seed=7 + LINES) == by_index
    assert first_prompt(seed=8) != by_index
    server.stop()


async def _raw(url: str, frames, **connect):
    """Sends each frame and collects the answers."""
    answers = []
    async with websockets.connect(url, **connect) as ws:
        for frame in frames:
            await ws.send(frame)
            answers.append(json.loads(await ws.recv()))
    return answers


def test_hostile_frames_get_typed_errors(start_server, instances) -> None:
    needs_client()
    server = start_server("--max-message-bytes", 4096)
    codes = lambda answers: [a["data"].get("code") for a in answers]
    answers = asyncio.run(_raw(server.ws_url, [
        "{not json",
        json.dumps({"type": "dance"}),
        json.dumps([1, 2]),
        json.dumps({"type": "step", "data": {"message": "<ANSWER> x </ANSWER>"}}),
        json.dumps({"type": "reset", "data": {"index": 10_000}}),
        json.dumps({"type": "reset", "data": {"index": -1}}),
        json.dumps({"type": "step", "data": {"msg": "x"}}),
        json.dumps({"type": "state"}),
    ]))
    assert codes(answers) == ["INVALID_JSON", "UNKNOWN_TYPE", "VALIDATION_ERROR", "EXECUTION_ERROR",
                              "VALIDATION_ERROR", "VALIDATION_ERROR", "VALIDATION_ERROR", None]
    assert answers[-1] == {"type": "state", "data": {"episode_id": None, "step_count": 0}}
    assert "10 lines" not in answers[4]["data"]["message"] and "index 0 to" in answers[4]["data"]["message"]
    # A reply that ends the episode, then one more step: out of order.
    answers = asyncio.run(_raw(server.ws_url, [
        json.dumps({"type": "reset", "data": {"index": 0}}),
        json.dumps({"type": "step", "data": {"message": "I give up"}}),
        json.dumps({"type": "step", "data": {"message": "again"}}),
    ]))
    assert answers[1]["data"]["done"] is True and answers[1]["data"]["reward"] == 0.0
    assert answers[1]["data"]["observation"]["parse_error"] is True
    assert answers[2]["data"]["code"] == "EXECUTION_ERROR"

    # A message over the limit closes that connection with a typed error;
    # the server goes on.
    async def huge():
        async with websockets.connect(server.ws_url, max_size=None) as ws:
            await ws.send(json.dumps({"type": "step", "data": {"message": "x" * 100_000}}))
            try:
                return json.loads(await ws.recv())
            except websockets.ConnectionClosed:
                return None
    answer = asyncio.run(huge())
    assert answer is None or answer["data"]["code"] == "VALIDATION_ERROR"
    assert requests.get(f"{server.url}/health").ok
    r = requests.post(f"{server.url}/reset", data="x" * 10_000)
    assert r.status_code == 413
    r = requests.post(f"{server.url}/reset", data="{")
    assert r.status_code == 400 and r.json()["code"] == "INVALID_JSON"
    # No CORS, and requests from another origin are refused.
    r = requests.post(f"{server.url}/reset", json={}, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403 and "access-control-allow-origin" not in {k.lower() for k in r.headers}
    server.stop()


def test_capacity_idle_sessions_and_shutdown_report(start_server) -> None:
    needs_client()
    server = start_server("--max-sessions", 2, "--idle-timeout", 1)

    async def scenario():
        a = await websockets.connect(server.ws_url)
        b = await websockets.connect(server.ws_url)
        await a.send(json.dumps({"type": "reset", "data": {"index": 1}}))
        await a.recv()
        c = await websockets.connect(server.ws_url)
        full = json.loads(await c.recv())
        await c.close()
        # HTTP resets count against the same limit.
        over = requests.post(f"{server.url}/reset", json={})
        # An idle session is told and closed.
        idle = json.loads(await b.recv())
        await a.close()
        await b.close()
        return full, over, idle

    full, over, idle = asyncio.run(scenario())
    assert full["data"]["code"] == "CAPACITY_REACHED" and full["data"]["max_sessions"] == 2
    assert over.status_code == 503 and over.json()["code"] == "CAPACITY_REACHED"
    assert idle["data"]["code"] == "SESSION_ERROR" and "idle" in idle["data"]["message"]
    # Slots come back: an HTTP episode left open is reported at shutdown.
    wait_until(lambda: requests.post(f"{server.url}/reset", json={"index": 4}).ok)
    err = server.stop()
    assert "open episode(s) not recorded" in err or "dropped" in err


def test_shutdown_reports_open_websocket_episodes(start_server) -> None:
    needs_client()
    server = start_server()

    async def scenario():
        ws = await websockets.connect(server.ws_url)
        await ws.send(json.dumps({"type": "reset", "data": {"index": 3}}))
        await ws.recv()
        server.process.send_signal(__import__("signal").SIGTERM)
        bye = json.loads(await ws.recv())
        return bye

    bye = asyncio.run(scenario())
    assert bye["data"]["code"] == "SESSION_ERROR" and "shutting down" in bye["data"]["message"]
    err = server.stop()
    assert f"{DOMAIN}/{SPLIT}/3" in err and "not recorded" in err


def test_the_token_guards_everything_but_health(start_server) -> None:
    needs_client()
    server = start_server(env={"KUMO_SERVE_TOKEN": "s3cret-token"})
    assert requests.get(f"{server.url}/health").ok
    assert requests.get(f"{server.url}/list_environments").status_code == 401
    assert requests.get(f"{server.url}/list_environments", headers={"Authorization": "Bearer nope"}).status_code == 401
    assert requests.get(f"{server.url}/list_environments", headers={"Authorization": "Bearer s3cret-token"}).ok
    with pytest.raises(Exception):
        with GenericEnvClient(base_url=server.url).sync() as env:
            env.reset()
    # openenv's client sends no headers; a URL's user:token@ reaches the
    # server as HTTP Basic.
    authed = server.url.replace("http://", "http://trainer:s3cret-token@", 1)
    with GenericEnvClient(base_url=authed).sync() as env:
        assert env.reset(index=0).observation["task_id"] == f"{DOMAIN}/{SPLIT}/0"
    server.stop()


def test_the_trl_wrapper_of_the_docs_plays_to_the_end(start_server, instances) -> None:
    """docs/serve.md's `environment_factory` class, as written there."""
    needs_client()
    server = start_server()

    class KumoEnv:
        def __init__(self):
            self.client = GenericEnvClient(base_url=server.url).sync()
            self.client.connect()
            self.reward = 0.0

        def reset(self, **row):
            result = self.client.reset(task_id=row["task_id"], model="trl")
            self.reward = 0.0
            return result.observation["system_prompt"] + "\n\n" + result.observation["prompt"]

        def answer(self, reply: str) -> str:
            result = self.client.step({"message": reply})
            if result.done:
                self.reward = result.reward
                return "The game is over."
            return result.observation["prompt"]

    rows = requests.post(f"{server.url}/{DOMAIN}/tasks", json={"split": SPLIT}).json()["tasks"]
    env = KumoEnv()
    for row in rows[:3]:
        first = env.reset(**row)
        assert "Begin the game" not in first and "<ANSWER>" in first
        optimal = instances[row["index"]]["optimal"]
        for action in optimal["golden_trajectory"]:
            assert env.answer(f"<ANSWER> {action} </ANSWER>").startswith("Observation from previous action")
        assert env.answer(f"<ANSWER> {optimal['golden_answer']} </ANSWER>") == "The game is over."
        assert env.reward == 1.0
    env.client.close()
    server.stop()
    assert len(server.results("trl").read_text().splitlines()) == 3
