"""The verifiers adapter: an evaluation with the scripted player over
loopback gives eval's requests and eval's outcomes."""

from __future__ import annotations

import json
import os

import pytest

import kumo_gen
from conftest import DOMAIN, MAX_STEPS, N, ScriptedServer


def _require_verifiers():
    if os.environ.get("KUMO_SKIP_VERIFIERS") == "1":
        pytest.skip("KUMO_SKIP_VERIFIERS=1")
    try:
        import verifiers as vf

        vf.MultiTurnEnv  # noqa: B018
    except (ImportError, AttributeError):
        if os.environ.get("CI") == "true":
            raise
        pytest.skip("verifiers with MultiTurnEnv (verifiers>=0.3.1,<0.4) is not installed")
    return vf


@pytest.mark.parametrize("exact_history", [True, False])
def test_verifiers_evaluation_equals_eval(eval_run, exact_history: bool, monkeypatch) -> None:
    vf = _require_verifiers()
    import kumo_gen.verifiers as kv

    monkeypatch.setenv("KUMO_TEST_API_KEY", "test")
    lines = eval_run["lines"]
    env = kv.load_environment(DOMAIN, tasks=lines, max_steps=MAX_STEPS, exact_history=exact_history)
    assert isinstance(env, vf.MultiTurnEnv)
    instances = [json.loads(line) for line in lines]
    prompts = {kumo_gen.Task(kumo_gen.load_domain(DOMAIN), line).system_prompt: i for i, line in enumerate(lines)}
    with ScriptedServer(prompts, instances) as server:
        client = vf.ClientConfig(api_base_url=server.url, api_key_var="KUMO_TEST_API_KEY", max_retries=0)
        results = env.evaluate_sync(client=client, model="scripted", num_examples=-1, max_concurrent=1)
    assert not server.unknown
    outputs = results["outputs"]
    assert len(outputs) == N
    for out in outputs:
        i = out["example_id"]
        trial = eval_run["trials"][i]
        assert out.get("error") is None, out.get("error")
        metrics = out["metrics"]
        assert metrics["kumo_success"] == (1.0 if trial["successful"] else 0.0), i
        assert metrics["kumo_action_count"] == len(trial["actions"]), i
        assert metrics["kumo_parse_error"] == (1.0 if trial["parse_error"] else 0.0), i
        assert out["reward"] == metrics["kumo_success"]
        sent = server.requests[i]
        if exact_history:
            # Exactly the requests eval sent.
            assert sent == eval_run["requests"][i], i
        else:
            # Append-only: the same first request and the same latest
            # observation message; every earlier turn kept as sent.
            assert sent[0] == eval_run["requests"][i][0]
            for got, want in zip(sent, eval_run["requests"][i]):
                assert got[-1] == want[-1]
            for earlier, later in zip(sent, sent[1:]):
                assert later[: len(earlier)] == earlier


def test_verifiers_finds_the_environment_by_id() -> None:
    vf = _require_verifiers()
    env = vf.load_environment("kumo-gen", domain="mineral-lab", truths=4, actions=6, n=3, eval_n=2)
    assert isinstance(env, vf.MultiTurnEnv)
    assert len(env.get_dataset()) == 3 and len(env.get_eval_dataset()) == 2
    row = env.get_dataset()[0]
    line = row["info"]["line"]
    assert kumo_gen.dumps(json.loads(line)) == kumo_gen.generate_lines("mineral-lab", 4, 6, 3)[0]
    assert row["prompt"][0]["content"] == kumo_gen.Task(kumo_gen.load_domain("mineral-lab"), line).system_prompt
