"""`create_dataset` / `score_answer`, used the way reasoning-gym users do."""

from __future__ import annotations

import json

import kumo_gen


def test_items_are_question_answer_metadata() -> None:
    data = kumo_gen.create_dataset("medical", size=12, seed=4)
    assert len(data) == 12 and data.size == 12 and data.seed == 4
    tasks = kumo_gen.generate("medical", 4, 6, n=12, seed=4)
    for i, entry in enumerate(data):
        assert set(entry) == {"question", "answer", "metadata"}
        meta = entry["metadata"]
        task = dict(tasks[i])
        optimal = task.pop("optimal")
        assert meta["instance"] == task and meta["optimal"] == optimal
        assert meta["source_index"] == i and meta["domain"] == "medical"
        assert meta["setting"] == "truth_num=4+action_num=6+valid_truth_num=1"
        assert entry["answer"] == optimal["golden_answer"] == task["valid_truth"]
        # The question is eval's system message for the instance.
        assert entry["question"] == kumo_gen.Task(kumo_gen.load_domain("medical"), kumo_gen.dumps(tasks[i])).system_prompt
        assert "<ANSWER>" in entry["question"] and task["valid_truth"] in entry["question"]
    assert data[-1] == data[11]
    # Same arguments, same items.
    assert [e["metadata"] for e in kumo_gen.create_dataset("medical", size=12, seed=4)] == [e["metadata"] for e in data]


def test_score_answer_is_kumos_evaluate_answer() -> None:
    data = kumo_gen.create_dataset("mineral-lab", size=10, seed=1, truths=5, actions=7)
    for entry in data:
        answer = entry["answer"]
        truths = entry["metadata"]["instance"]["truths"]
        assert data.score_answer(answer, entry) == 1.0
        assert kumo_gen.score_answer(f"Reasoning...\n<ANSWER> {answer} </ANSWER>", entry) == 1.0
        assert kumo_gen.score_answer("<ANSWER> ${%s} </ANSWER>" % answer, entry) == 1.0
        for t in truths:
            if t != answer:
                # Every other truth of a generated instance is ruled out.
                assert kumo_gen.score_answer(t, entry) == 0.0
        assert kumo_gen.score_answer(None, entry) == 0.0
        assert kumo_gen.score_answer("", entry) == 0.0
        assert kumo_gen.score_answer(answer.upper() + "x", entry) == 0.0
        # An entry stored as JSON and read back scores the same.
        assert kumo_gen.score_answer(answer, json.loads(json.dumps(entry))) == 1.0


def test_accepted_answers_come_from_the_judge() -> None:
    # A KUMO-style instance whose observations leave two truths standing.
    tiny = {
        "name": "tiny",
        "truth_noun": "fault",
        "action_noun": "check",
        "goal": "find the faulty part",
        "truths": ["Fuse", "Relay", "Switch", "Lamp"],
        "actions": [
            {"name": "Continuity check", "type": "str", "states": {"open": ["Lamp"], "closed": ["Fuse", "Relay"]}},
        ],
    }
    domain = kumo_gen.load_domain(tiny)
    line = json.dumps(
        {
            "truths": ["Fuse", "Switch", "Lamp"],
            "actions": ["Continuity check"],
            "observations": {"Continuity check": "closed"},
            "seed": 0,
            "valid_truth": "Lamp",
        }
    )
    task = kumo_gen.Task(domain, line)
    assert [t for t in ["Fuse", "Switch", "Lamp"] if task.judge(t)] == ["Switch", "Lamp"]
