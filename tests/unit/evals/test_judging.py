"""The built-in judge through the real runtime on a scripted model: rubric grading,
position-swapped pairwise comparison, and gating on the last calibration."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mir.contracts import EvalCase, JudgeSettings
from mir.contracts.eval_suite import Pairwise, Rubric
from mir.errors import ConfigError
from mir.evals.calibration_records import CalibrationRecord, append_calibrations
from mir.evals.judge_identity import judge_home, judge_prompt_hash
from mir.evals.judging import ModelJudge, open_judge
from mir.project import find_project
from mir.traces import TraceStore

CASE = EvalCase(id="mug", input={"message": "My mug arrived broken."})
MINE = {"action": "refund", "reply": "Sorry! Your refund of 24.90 EUR is on its way."}
THEIRS = {"action": "refund", "reply": "Refund issued."}


def said(**decision: object) -> str:
    """One scripted raw output of the judge (a JSON string line of the responses file)."""
    return json.dumps(json.dumps({"reason": "because", "confidence": 0.9, **decision}))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    (root / "capabilities").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.mir]\ncapabilities = "capabilities"\n')
    return root


def scripted_judge(project: Path, *lines: str, **settings: object) -> ModelJudge:
    (project / "judge.jsonl").write_text("\n".join(lines) + "\n")
    judge_settings = JudgeSettings(provider="scripted", responses="judge.jsonl", **settings)  # type: ignore[arg-type]
    return open_judge(judge_settings, suite_dir=project, project=find_project(project))


@pytest.fixture
def opened() -> Iterator[list[ModelJudge]]:
    judges: list[ModelJudge] = []
    yield judges
    for judge in judges:
        judge.close()


def pairwise(**changes: object) -> Pairwise:
    return Pairwise(type="pairwise", criteria="Which reply is kinder?", reference=THEIRS, **changes)  # type: ignore[arg-type]


def test_a_judge_that_always_prefers_position_a_only_produces_ties(project, opened):
    """The issue's done-when line: the swap catches a first-position bias."""
    judge = scripted_judge(project, *[said(verdict="A")] * 8)
    opened.append(judge)
    results = [judge.compare(pairwise(), CASE, MINE, None) for _ in range(4)]
    assert [r.actual for r in results] == ["tie"] * 4
    assert [r.position_consistent for r in results] == [False] * 4
    consistency = sum(bool(r.position_consistent) for r in results) / len(results)
    assert consistency == 0.0
    # a tie passes the default accept (win or tie), never an assertion that wants a win
    assert all(r.passed for r in results)
    strict = judge_again(project, opened, said(verdict="A"), said(verdict="A"))
    result = strict.compare(pairwise(accept=["win"]), CASE, MINE, None)
    assert result.passed is False
    assert "flipped with the positions" in result.message


def judge_again(project: Path, opened: list[ModelJudge], *lines: str) -> ModelJudge:
    judge = scripted_judge(project, *lines)
    opened.append(judge)
    return judge


def test_a_consistent_judge_counts_wins_and_losses(project, opened):
    # candidate as A first, then as B: "A then B" names the candidate both times
    judge = scripted_judge(
        project,
        said(verdict="A"),
        said(verdict="B"),
        said(verdict="B"),
        said(verdict="A"),
        said(verdict="tie"),
        said(verdict="tie"),
    )
    opened.append(judge)
    win, loss, tie = (judge.compare(pairwise(), CASE, MINE, None) for _ in range(3))
    assert (win.actual, win.score, win.passed, win.position_consistent) == ("win", 1.0, True, True)
    assert (loss.actual, loss.passed, loss.position_consistent) == ("loss", False, True)
    assert loss.message == "the candidate's outcome is loss"
    assert (tie.actual, tie.position_consistent) == ("tie", True)
    assert win.tier == "judge" and win.reason == "as A: because | as B: because"


def test_against_baseline_uses_the_reference_it_is_given(project, opened):
    judge = scripted_judge(project, said(verdict="A"), said(verdict="B"))
    opened.append(judge)
    assertion = Pairwise(type="pairwise", criteria="kinder", against="baseline")
    missing = judge.compare(assertion, CASE, MINE, None)
    assert missing.passed is None and "no baseline decision" in missing.message
    assert judge.compare(assertion, CASE, MINE, THEIRS).actual == "win"
    assert judge.compare(assertion, CASE, None, THEIRS).passed is None


def test_the_judge_sees_both_orders(project, opened):
    judge = scripted_judge(project, said(verdict="A"), said(verdict="B"))
    opened.append(judge)
    judge.compare(pairwise(), CASE, MINE, None)
    store = TraceStore.for_project(find_project(project))
    try:
        snapshots = [e for e in store.events() if e.step == "snapshot"]
    finally:
        store.close()
    assert {e.agent for e in snapshots} == {"judge.compare"}
    # judgements are eval flows: never production decisions, nothing executed or claimed
    assert {e.data.get("source") for e in snapshots} == {"eval"}
    assert not (project / ".mir" / "executions.db").exists()
    shown = sorted(
        (e.data["input"]["a"]["reply"], e.data["input"]["b"]["reply"]) for e in snapshots
    )
    assert shown == sorted([(MINE["reply"], THEIRS["reply"]), (THEIRS["reply"], MINE["reply"])])


def test_the_judge_sees_the_cases_world_when_it_has_one(project, opened):
    judge = scripted_judge(
        project, said(verdict="pass", score=1.0), said(verdict="pass", score=1.0)
    )
    opened.append(judge)
    rubric = Rubric(type="rubric", rubric="Does the amount fit the order?")
    judge.grade(rubric, CASE, MINE)
    world = EvalCase(id="w", input=CASE.input, context={"order": {"refundable": 24.9}})
    judge.grade(rubric, world, MINE)
    store = TraceStore.for_project(find_project(project))
    try:
        shown = [e.data["input"] for e in store.events() if e.step == "snapshot"]
    finally:
        store.close()
    assert sorted("context" in s for s in shown) == [False, True]
    assert {"order": {"refundable": 24.9}} in [s.get("context") for s in shown]


def test_rubric_grading_passes_at_min_score(project, opened):
    judge = scripted_judge(
        project,
        said(verdict="pass", score=0.8),
        said(verdict="fail", score=0.3),
        said(verdict="pass", score=0.7),
    )
    opened.append(judge)
    rubric = Rubric(type="rubric", rubric="Is the reply polite?", path="reply")
    good, bad = judge.grade(rubric, CASE, MINE), judge.grade(rubric, CASE, MINE)
    assert (good.passed, good.score, good.reason, good.path) == (True, 0.8, "because", "reply")
    assert (bad.passed, bad.score) == (False, 0.3)
    assert bad.message == "judge said fail with score 0.3 (needs pass and >= 0.5)"
    strict = Rubric(type="rubric", rubric="Polite?", min_score=0.75, gate=False)
    result = judge.grade(strict, CASE, MINE)
    assert (result.passed, result.gating) == (False, False)


def test_a_pass_verdict_with_a_low_score_is_not_a_pass(project, opened):
    # SmolLM2 answers "pass" with score 0: the assertion and the calibration both read it
    # as a fail, so the kappa a calibration measures is that of what gates.
    judge = scripted_judge(
        project, said(verdict="pass", score=0.0), said(verdict="fail", score=0.9)
    )
    opened.append(judge)
    rubric = Rubric(type="rubric", rubric="Is the reply polite?", path="reply")
    assert judge.grade(rubric, CASE, MINE).passed is False
    assert judge.grade(rubric, CASE, MINE).passed is False


def test_a_judge_without_a_valid_verdict_leaves_the_assertion_unevaluated(project, opened):
    judge = scripted_judge(project, '"not json"', '"still not"', '"nope"')
    opened.append(judge)
    result = judge.grade(Rubric(type="rubric", rubric="Polite?"), CASE, MINE)
    assert result.passed is None
    assert result.message.startswith("the judge gave no verdict: flow ")
    assert "not_json" in result.message


def test_nothing_to_grade(project, opened):
    judge = scripted_judge(project)
    opened.append(judge)
    rubric = Rubric(type="rubric", rubric="Polite?", path="reply.text")
    assert judge.grade(rubric, CASE, None).message == "no decision to grade"
    assert judge.grade(rubric, CASE, MINE).message == "no field 'reply.text' in the decision"


def record(judge: ModelJudge, kappa: float | None, *, kind: str = "rubric", **changes: object):
    return CalibrationRecord.model_validate(
        {
            "judge_model": judge.identity.model_label,
            "prompt_hash": judge.identity.prompt_hash,
            "kind": kind,
            "kappa": kappa,
            "agreement": 0.8,
            "n": 20,
            "labels": "labels.jsonl",
            "at": "2026-11-30T12:00:00Z",
            **changes,
        }
    )


def test_gating_follows_the_latest_calibration_of_this_judge(project, opened):
    ungated = scripted_judge(project)
    opened.append(ungated)
    assert ungated.gating() == (True, None)

    def gating() -> tuple[bool, str | None]:
        judge = scripted_judge(project, min_kappa=0.6)
        opened.append(judge)
        return judge.gating()

    allowed, note = gating()
    assert not allowed and note is not None
    assert note.startswith("judge not calibrated: no calibration of model scripted, prompt ")
    assert "mir eval calibrate" in note

    calibration = project / "judge-calibration.json"
    append_calibrations(calibration, [record(ungated, 0.9), record(ungated, 0.41)])
    allowed, note = gating()
    assert not allowed
    assert (
        f"rubric kappa 0.41 < min_kappa 0.6 (model scripted, prompt {ungated.identity.prompt_hash})"
        in str(note)
    )

    append_calibrations(calibration, [record(ungated, 0.75)])
    assert gating() == (True, None)
    # another judge's calibration (another prompt) does not count, nor an undefined kappa
    append_calibrations(calibration, [record(ungated, 0.1, prompt_hash="0" * 16)])
    assert gating() == (True, None)
    append_calibrations(calibration, [record(ungated, None, kind="pairwise")])
    allowed, note = gating()
    assert not allowed and "pairwise kappa undefined" in str(note)


def test_judge_assertions_do_not_gate_while_uncalibrated(project, opened):
    judge = scripted_judge(project, said(verdict="pass", score=0.9), min_kappa=0.5)
    opened.append(judge)
    result = judge.grade(Rubric(type="rubric", rubric="Polite?"), CASE, MINE)
    assert (result.passed, result.gating) == (True, False)


def test_a_broken_records_file_means_not_calibrated(project, opened):
    (project / "judge-calibration.json").write_text("{oops")
    judge = scripted_judge(project, min_kappa=0.5)
    opened.append(judge)
    allowed, note = judge.gating()
    assert not allowed and "calibration records unreadable" in str(note)


def test_the_judge_is_found_in_the_repository_and_hashed_stably():
    home = judge_home()
    assert (home / "agents" / "grade.yaml").is_file() and (home / "agents" / "compare.j2").is_file()
    assert judge_prompt_hash(home) == judge_prompt_hash(home)
    assert len(judge_prompt_hash(home)) == 16


def test_the_prompt_hash_follows_the_prompt(tmp_path):
    import shutil

    copy = tmp_path / "judge"
    shutil.copytree(judge_home(), copy)
    before = judge_prompt_hash(copy)
    (copy / "agents" / "grade.j2").write_text(
        (copy / "agents" / "grade.j2").read_text() + "\nBe kind."
    )
    assert judge_prompt_hash(copy) != before


def test_route_settings_and_their_errors(project):
    proj = find_project(project)
    with pytest.raises(ConfigError, match="names no judge responses"):
        open_judge(JudgeSettings(provider="scripted"), suite_dir=project, project=proj)
    with pytest.raises(ConfigError, match="names no model"):
        open_judge(JudgeSettings(provider="litellm"), suite_dir=project, project=proj)
    default = open_judge(JudgeSettings(), suite_dir=project, project=proj)
    assert (default.route.provider, default.route.model) == ("llama", "default")
    assert default.identity.model_label == "llama:default"
    remote = open_judge(
        JudgeSettings(
            provider="litellm", model="openai/gpt-4o-mini", api_base="http://127.0.0.1:1"
        ),
        suite_dir=project,
        project=proj,
    )
    assert remote.identity.model_label == "litellm:openai/gpt-4o-mini"
    assert remote.route.api_base == "http://127.0.0.1:1"
    # judge responses are replayed only when the judge runs scripted: its own provider,
    # or a scripted run (offline replay) of a suite whose judge names none
    (project / "j.jsonl").write_text("")
    recorded = JudgeSettings(responses="j.jsonl")
    real = open_judge(recorded, suite_dir=project, project=proj)
    assert (real.route.provider, real.route.responses) == ("llama", None)
    assert real.identity.model_label == "llama:default"
    replay = open_judge(recorded, suite_dir=project, project=proj, provider="scripted")
    assert replay.route.provider == "scripted" and replay.route.responses == str(
        project / "j.jsonl"
    )
    assert replay.identity.model_label == "scripted"
    with pytest.raises(ConfigError, match="names no judge responses"):
        open_judge(JudgeSettings(), suite_dir=project, project=proj, provider="scripted")
    # the agent's --provider is not the judge's: its calibration must keep holding
    for run_provider in ("rules", "litellm", "llama"):
        kept = open_judge(JudgeSettings(), suite_dir=project, project=proj, provider=run_provider)
        assert kept.route.provider == "llama" and kept.identity.model_label == "llama:default"
    explicit = JudgeSettings(provider="litellm", model="m")
    assert (
        open_judge(explicit, suite_dir=project, project=proj, provider="scripted").route.provider
        == "litellm"
    )


def test_a_response_cache_reaches_the_judge_only_where_the_runtime_takes_it(project, opened):
    """mir eval passes its cache folder; a runtime without the cache still judges."""
    import inspect

    from mir.runtime import load_agent

    (project / "judge.jsonl").write_text(said(verdict="pass", score=1.0) + "\n")
    settings = JudgeSettings(provider="scripted", responses="judge.jsonl")
    cache = project / ".mir" / "cache"
    judge = open_judge(
        settings, suite_dir=project, project=find_project(project), response_cache=cache
    )
    opened.append(judge)
    result = judge.grade(Rubric(type="rubric", rubric="Polite?"), CASE, MINE)
    assert result.passed is True
    takes_cache = "response_cache" in inspect.signature(load_agent).parameters
    assert judge._cache_option(load_agent) == ({"response_cache": cache} if takes_cache else {})
