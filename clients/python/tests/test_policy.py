"""`bete-bot --policy module:function`: a Python callable from the view to an action plays on a
ladder; the training example (examples/train_policy.py) in a bounded quick run, its policy
entering a ladder through the ordinary runner. (The full five-minute run and its duel are in
docs/research.md; no test here waits for them.)"""

import os
import subprocess
import sys
import uuid

import pytest

import bete_engine as be
from bete_bot.actions import action_text, parse_action
from bete_bot.policy import PolicyError, load_policy, to_action
from bete.v1 import game_pb2

from conftest import REPO

EXAMPLE = REPO / "clients" / "python" / "examples" / "train_policy.py"


def view_of(game):
    return game_pb2.SeatView.FromString(game.view(game.to_act))


def test_a_policy_answer_becomes_the_action_it_names():
    game = be.Game("beste-boer", 4, seed="0c" * 32)
    view = view_of(game)
    ids = be.legal_action_ids_of(view)
    for i in ids:
        assert action_text(to_action(view, i)) == be.action_of(view, i)
    assert action_text(to_action(view, "drop")) == "drop"
    assert to_action(view, parse_action("stand")).kind == parse_action("stand").kind
    illegal = next(i for i in range(be.NUM_ACTIONS) if i not in ids)
    with pytest.raises(be.IllegalActionError, match=f"action id {illegal}"):
        to_action(view, illegal)
    with pytest.raises(PolicyError, match="not float"):
        to_action(view, 1.5)


def test_a_policy_spec_is_loaded_or_refused_by_name(tmp_path):
    assert load_policy(f"{EXAMPLE}:policy").__name__ == "policy"
    assert load_policy("random:random") is not None
    f = tmp_path / "mine.py"
    f.write_text("class P:\n    def __call__(self, view):\n        return 0\n")
    assert callable(load_policy(f"{f}:P()"))
    for spec, msg in [
        ("nocolon", "MODULE:FUNCTION"),
        ("no_such_module_xyz:f", "cannot import"),
        ("random:no_such_fn", "has no 'no_such_fn'"),
        (f"{tmp_path / 'absent.py'}:f", "no file"),
        ("math:pi", "not callable"),
    ]:
        with pytest.raises(PolicyError, match=msg):
            load_policy(spec)


def test_a_trained_policy_enters_a_ladder_with_bete_bot(server, tmp_path):
    weights = tmp_path / "policy.npz"
    trained = subprocess.run(
        [sys.executable, str(EXAMPLE), "train", "--minutes", "0.1", "--playouts", "10", "--out", str(weights)],
        capture_output=True, text=True, timeout=120,
    )
    assert trained.returncode == 0, trained.stderr
    assert weights.is_file() and "agrees with the teacher" in trained.stdout
    duel = subprocess.run(
        [sys.executable, str(EXAMPLE), "duel", "--weights", str(weights), "--matches", "8", "--rounds", "1"],
        capture_output=True, text=True, timeout=120,
    )
    assert duel.returncode == 0 and "paired matches" in duel.stdout, duel.stderr

    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "BETE_POLICY": str(weights)}
    env.pop("BETE_TOKEN", None)
    tag = uuid.uuid4().hex[:6]
    runs = [
        ["--policy", f"{EXAMPLE}:policy", "--name", f"py-policy-{tag}"],
        ["--bot", "random", "--name", f"py-sparring-{tag}"],
    ]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "bete_bot", "--server", server, "--ladder", "beste-boer-4", "--matches", "4", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        for extra in runs
    ]
    try:
        outs = [p.communicate(timeout=150) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, (stdout, stderr) in zip(procs, outs):
        assert p.returncode == 0, stderr
        assert "entered ladder beste-boer-4" in stderr, stderr
        tables = [line for line in stdout.splitlines() if line.startswith("table ")]
        # Every decision the policy answered was legal: nothing refused, nothing replaced.
        assert len(tables) == 4 and all("0 refused" in line for line in tables), stdout
    assert "playing the safe action" not in outs[0][1], outs[0][1]


def test_a_bad_policy_spec_exits_2(server):
    out = subprocess.run(
        [sys.executable, "-m", "bete_bot", "--server", server, "--policy", "no_such_module_xyz:f"],
        capture_output=True, text=True, timeout=30,
    )
    assert out.returncode == 2 and "cannot import 'no_such_module_xyz'" in out.stderr, out.stderr
