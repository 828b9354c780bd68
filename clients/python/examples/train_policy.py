"""Train a small policy in bete-engine's PettingZoo environment, duel it against `random`, and
put it on a ladder with `bete-bot --policy` (docs/research.md, "End to end").

    python examples/train_policy.py train --minutes 4 --out policy.npz   # CPU, <= 5 minutes
    python examples/train_policy.py duel --weights policy.npz --matches 200
    BETE_POLICY=policy.npz bete-bot --ladder beste-boer-4 --policy examples/train_policy.py:policy

The policy is a linear softmax over the observation tensor (`bete_engine.OBSERVATION_SIZE`
inputs, `bete_engine.NUM_ACTIONS` outputs, illegal ids masked). It learns by imitation: in
matches of the environment, each decision is labelled with the action the engine's
determinized playouts rate best from that seat's view alone (`Determinizer.evaluate`, the loop
in Rust), and the weights are fitted to those labels by gradient descent (numpy, Adam). The
result is a policy that needs nothing but the view, answers in microseconds, and plays through
`bete-bot` unchanged: `policy(view)` turns the `SeatView` into the same tensor and mask
(`bete_engine.observation_of`, `bete_engine.legal_action_ids_of`) and returns an action id.

The duel is paired (the duplicate design): every match is played twice from the same seed, the
tested seat once the policy and once `random`, every other seat `random`; each match gives the
difference of the tested seat's jetons per deal, and the 95 % interval is over the matches.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

import bete_engine as be
from bete_engine.pettingzoo import env as make_env, match_seed

RULESET, SEATS = "beste-boer", 4
DEFAULT_WEIGHTS = Path(__file__).with_name("policy.npz")


# --- the policy -----------------------------------------------------------------------------------


class LinearPolicy:
    """Masked softmax over `obs @ w + b`."""

    def __init__(self, w: np.ndarray, b: np.ndarray) -> None:
        self.w, self.b = w, b

    @classmethod
    def load(cls, path) -> "LinearPolicy":
        data = np.load(path)
        return cls(data["w"], data["b"])

    def save(self, path) -> None:
        np.savez(path, w=self.w, b=self.b)

    def act(self, obs: np.ndarray, legal: list[int]) -> int:
        logits = obs @ self.w[:, legal] + self.b[legal]
        return legal[int(np.argmax(logits))]

    def __call__(self, view) -> int:
        """From a `bete.v1.SeatView` (the message or its bytes) to an action id."""
        obs = np.frombuffer(be.observation_of(view), np.float32)
        return self.act(obs, be.legal_action_ids_of(view))


_loaded: LinearPolicy | None = None


def policy(view) -> int:
    """The entry point of `bete-bot --policy examples/train_policy.py:policy`: the weights in
    $BETE_POLICY (default: policy.npz beside this file), loaded once."""
    global _loaded
    if _loaded is None:
        _loaded = LinearPolicy.load(os.environ.get("BETE_POLICY", DEFAULT_WEIGHTS))
    return _loaded(view)


# --- training -------------------------------------------------------------------------------------


def teacher(view: bytes, playouts: int, seed: int) -> int:
    """The id of the action the engine's playouts rate best from this view."""
    scores = be.Determinizer(view).evaluate(playouts, seed)
    best = max(scores, key=lambda s: s[1])[0]
    ids = be.legal_action_ids_of(view)
    return next(i for i in ids if be.action_of(view, i) == best)


def collect(seconds: float, playouts: int, seed: int):
    """Labelled decisions from matches of the PettingZoo environment, for `seconds`."""
    e = make_env(ruleset=RULESET, seats=SEATS)
    rng = random.Random(seed)
    xs, masks, ys = [], [], []
    deadline = time.monotonic() + seconds
    match = 0
    while time.monotonic() < deadline:
        e.reset(seed=seed * 1_000_003 + match)
        match += 1
        for agent in e.agent_iter():
            obs, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"]).tolist()
            if len(legal) == 1:
                e.step(legal[0])
                continue
            label = teacher(e.unwrapped.view(agent), playouts, rng.getrandbits(63))
            xs.append(obs["observation"])
            masks.append(obs["action_mask"].astype(bool))
            ys.append(label)
            # Half the moves the teacher's, half random: states like the policy's own and others.
            e.step(label if rng.random() < 0.5 else rng.choice(legal))
            if time.monotonic() >= deadline:
                break
    return np.array(xs), np.array(masks), np.array(ys), match


def fit(xs, masks, ys, seconds: float, seed: int) -> LinearPolicy:
    """Masked softmax regression by minibatch Adam, for `seconds`."""
    rng = np.random.default_rng(seed)
    n, d = xs.shape
    w = np.zeros((d, be.NUM_ACTIONS), np.float32)
    b = np.zeros(be.NUM_ACTIONS, np.float32)
    params = [w, b]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    lr, step = 0.01, 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for batch in np.array_split(rng.permutation(n), max(1, n // 256)):
            x, mask, y = xs[batch], masks[batch], ys[batch]
            logits = np.where(mask, x @ w + b, -1e9)
            logits -= logits.max(axis=1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=1, keepdims=True)
            p[np.arange(len(y)), y] -= 1.0
            grads = [x.T @ p / len(y) + 1e-4 * w, p.mean(axis=0)]
            step += 1
            for k, (param, g) in enumerate(zip(params, grads)):
                m[k] = 0.9 * m[k] + 0.1 * g
                v[k] = 0.999 * v[k] + 0.001 * g * g
                param -= lr * (m[k] / (1 - 0.9**step)) / (np.sqrt(v[k] / (1 - 0.999**step)) + 1e-8)
            if time.monotonic() >= deadline:
                break
    return LinearPolicy(w, b)


def accuracy(pol: LinearPolicy, xs, masks, ys) -> float:
    hits = [pol.act(x, np.flatnonzero(mk).tolist()) == y for x, mk, y in zip(xs, masks, ys)]
    return float(np.mean(hits)) if hits else 0.0


# --- the duel -------------------------------------------------------------------------------------


def play(seed: str, seat: int, pol, rng: random.Random, rounds: int) -> float:
    """One match, `pol` (None: random) at `seat` and random elsewhere: the seat's jetons per deal."""
    game = be.Game(RULESET, SEATS, seed=seed, config={"rounds": rounds})
    own = random.Random(rng.random())  # the tested seat's random moves: apart from the others'
    while not game.is_over():
        s = game.to_act
        ids = game.legal_action_ids(s)
        if s != seat:
            a = rng.choice(ids)
        else:
            a = pol(game.view(s)) if pol is not None else own.choice(ids)
        game.apply_id(s, a)
    return game.settled_balances[seat] / (game.deal + 1)


def duel(pol, matches: int, seed: int, rounds: int = 2) -> tuple[float, float, float]:
    """The paired margin of `pol` over random at one seat: mean and 95 % interval, jetons/deal."""
    diffs = []
    for k in range(matches):
        ms = match_seed(seed * 7919 + k)
        seat = k % SEATS
        # The other seats' random moves come from the same generator state in both matches.
        diffs.append(play(ms, seat, pol, random.Random(k), rounds) - play(ms, seat, None, random.Random(k), rounds))
    d = np.array(diffs)
    half = 1.96 * d.std(ddof=1) / np.sqrt(len(d))
    return float(d.mean()), float(d.mean() - half), float(d.mean() + half)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train", help="collect labelled decisions, fit, save (and duel briefly)")
    t.add_argument("--minutes", type=float, default=4.0, help="the whole budget (collect 60 %%, fit 40 %%)")
    t.add_argument("--playouts", type=int, default=60, help="teacher playouts per decision")
    t.add_argument("--out", type=Path, default=DEFAULT_WEIGHTS)
    t.add_argument("--seed", type=int, default=1)
    dl = sub.add_parser("duel", help="the policy against random, paired")
    dl.add_argument("--weights", type=Path, default=DEFAULT_WEIGHTS)
    dl.add_argument("--matches", type=int, default=200)
    dl.add_argument("--rounds", type=int, default=2)
    dl.add_argument("--seed", type=int, default=2)
    args = p.parse_args(argv)
    if args.cmd == "train":
        start = time.monotonic()
        budget = args.minutes * 60
        xs, masks, ys, matches = collect(0.6 * budget, args.playouts, args.seed)
        print(f"collected {len(ys)} decisions from {matches} matches in {time.monotonic() - start:.0f} s", flush=True)
        if len(ys) == 0:
            print("no decision collected: give it more time", file=sys.stderr)
            return 1
        pol = fit(xs, masks, ys, budget - (time.monotonic() - start), args.seed)
        pol.save(args.out)
        print(f"fitted in {time.monotonic() - start:.0f} s in all; agrees with the teacher on "
              f"{accuracy(pol, xs, masks, ys):.0%} of its decisions; saved {args.out}")
        return 0
    pol = LinearPolicy.load(args.weights)
    mean, lo, hi = duel(pol, args.matches, args.seed, args.rounds)
    verdict = "beats random" if lo > 0 else "does not clearly beat random"
    print(f"policy - random at one seat of {RULESET}/{SEATS}, {args.matches} paired matches: "
          f"{mean:+.3f} jetons/deal, 95% [{lo:+.3f}, {hi:+.3f}]: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
