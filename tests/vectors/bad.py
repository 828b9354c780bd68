"""Derived and bad vectors, made by editing good records (called by generate.sh).

    python3 bad.py derived DIR        explicit-deck and mid-deal records from good ones
    python3 bad.py bad DIR BETE       bad/<name>.input.json and bad/<name>.expected.json
"""
import copy
import hashlib
import json
import pathlib
import subprocess
import sys


def load(d, name):
    return json.loads((d / f"{name}.record.json").read_text())


def dump(path, record):
    path.write_text(json.dumps(record, indent=1) + "\n")


def derived(d):
    # The same match with every deck written out and no seed.
    r = load(d, "lanterlui-4-explicit-decks")
    del r["seed"]
    dump(d / "lanterlui-4-explicit-decks.record.json", r)
    # A record that stops in the middle of deal 2 (after 12 actions): no stored balances.
    r = load(d, "bete-5")
    r["deals"] = r["deals"][:3]
    r["deals"][2]["actions"] = r["deals"][2]["actions"][:12]
    del r["balances"]
    dump(d / "bete-5-mid-deal.record.json", r)


def first_card(deal):
    for j, a in enumerate(deal["actions"]):
        if a["action"].startswith("card "):
            return j
    raise ValueError("no card play")


def bad_cases(d):
    cases = {}

    r = load(d, "bete-5")
    j = first_card(r["deals"][0])
    seat = r["deals"][0]["actions"][j]["seat"]
    other = next(a for a in r["deals"][0]["actions"][j:] if a["action"].startswith("card ") and a["seat"] != seat)
    r["deals"][0]["actions"][j]["action"] = other["action"]
    cases["illegal-card-not-in-hand"] = r

    r = load(d, "bete-5")
    a = r["deals"][1]["actions"][0]
    a["seat"] = (a["seat"] + 1) % r["seats"]
    cases["illegal-not-your-turn"] = r

    r = load(d, "bete-3")
    r["deals"][0]["actions"][1]["action"] = "bid"
    cases["illegal-unknown-verb"] = r

    r = load(d, "beast-4")
    r["deals"][0]["actions"][2]["action"] = "card ZZ"
    cases["illegal-bad-card-token"] = r

    r = load(d, "beste-boer-3")
    r["deals"][0]["actions"][0]["action"] = "pass"
    cases["illegal-verb-of-another-ruleset"] = r

    r = load(d, "bester-bube-4")
    r["deals"][0]["actions"][0]["seat"] = 9
    cases["illegal-no-such-seat"] = r

    r = load(d, "bete-5")
    r["deals"][0]["actions"].append(copy.deepcopy(r["deals"][0]["actions"][-1]))
    cases["illegal-action-after-deal-ended"] = r

    r = load(d, "lanterlui-3")
    r["deals"][-1]["actions"].append({"seat": 0, "action": "stand"})
    del r["balances"]
    cases["illegal-action-after-match-ended"] = r

    cases["malformed-not-json"] = '{"format": "bete-record/1", "deals": [\n'

    r = load(d, "bete-3")
    r["format"] = "bete-record/2"
    cases["malformed-format"] = r

    r = load(d, "bete-3")
    r["rules_version"] = 2
    cases["malformed-rules-version"] = r

    r = load(d, "bete-3")
    del r["first_dealer"]
    cases["malformed-missing-field"] = r

    r = load(d, "bete-3")
    r["seats"] = "three"
    cases["malformed-mistyped-field"] = r

    r = load(d, "beste-boer-3")
    r["config"]["contre"] = "model_A"
    cases["malformed-config-key"] = r

    r = load(d, "bete-3")
    r["config"]["fiche_value"] = 7
    cases["malformed-config-value"] = r

    r = load(d, "beast-5")
    r["seats"] = 6
    cases["malformed-seat-count"] = r

    r = load(d, "lanterlui-4-explicit-decks")
    deck = r["deals"][1]["deck"]
    deck[5] = deck[4]
    cases["malformed-deck-duplicate"] = r

    r = load(d, "lanterlui-4-explicit-decks")
    r["deals"][0]["deck"] = r["deals"][0]["deck"][:-1]
    cases["malformed-deck-short"] = r

    r = load(d, "lanterlui-4-explicit-decks")
    r["seed"] = hashlib.sha256(b"lanterlui-4-explicit-decks").hexdigest()
    deck = r["deals"][0]["deck"]
    deck[0], deck[1] = deck[1], deck[0]
    cases["malformed-deck-not-the-seeds"] = r

    r = load(d, "lanterlui-4-explicit-decks")
    del r["deals"][2]["deck"]
    cases["malformed-no-deck-no-seed"] = r

    r = load(d, "bester-bube-3")
    r["deals"][1]["dealer"] = (r["deals"][1]["dealer"] + 1) % r["seats"]
    cases["malformed-wrong-dealer"] = r

    r = load(d, "beast-3")
    extra = copy.deepcopy(r["deals"][-1])
    extra["dealer"] = (r["first_dealer"] + len(r["deals"])) % r["seats"]
    r["deals"].append(extra)
    del r["balances"]
    cases["malformed-deal-after-match-ended"] = r

    r = load(d, "bete-5")
    r["deals"][0]["actions"] = r["deals"][0]["actions"][:10]
    del r["balances"]
    cases["malformed-deal-not-finished"] = r

    r = load(d, "bester-bube-3")
    r["balances"][0] += 1
    r["balances"][1] -= 1
    cases["malformed-balances"] = r

    # Part II (RULES.md 19): verbs outside a ruleset's column, the order of a Rams deal, the
    # seat range and the strict-only legality (RC5).
    r = load(d, "loo-3")
    r["deals"][0]["actions"][0]["action"] = "discard 2S"
    cases["illegal-loo-discard"] = r

    r = load(d, "mouche-3")
    r["deals"][0]["actions"][0]["action"] = "widow"
    cases["illegal-mouche-widow"] = r

    r = load(d, "rams-3")
    r["deals"][0]["actions"][0]["action"] = "stand"
    cases["illegal-rams-declaration-before-robbing"] = r

    r = load(d, "rams-3")
    r["deals"][0]["actions"][1]["action"] = "exchange " + r["deals"][0]["actions"][0]["action"].split()[1]
    cases["illegal-rams-exchange"] = r

    r = load(d, "loo-10")
    r["seats"] = 11
    cases["malformed-loo-eleven-seats"] = r

    r = load(d, "mistigri-3")
    r["config"]["enforce_legality"] = "lenient"
    cases["malformed-mistigri-lenient"] = r
    return cases


def bad(d, bete):
    out = d / "bad"
    out.mkdir(exist_ok=True)
    for name, record in bad_cases(d).items():
        path = out / f"{name}.input.json"
        if isinstance(record, str):
            path.write_text(record)
        else:
            dump(path, record)
        p = subprocess.run([bete, "replay", str(path)], capture_output=True, text=True)
        lines = p.stderr.strip().splitlines()
        assert p.returncode in (1, 2) and len(lines) == 1, (name, p.returncode, p.stderr)
        expected = {"exit": p.returncode, "stderr": lines[0]}
        (out / f"{name}.expected.json").write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    d = pathlib.Path(sys.argv[2])
    if sys.argv[1] == "derived":
        derived(d)
    else:
        bad(d, sys.argv[3])
