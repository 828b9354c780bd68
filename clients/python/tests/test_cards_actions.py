"""Card codes, action builders and the text form, without a server."""

import pytest

from bete.v1 import cards_pb2
from bete_bot import actions, cards
from bete_bot.actions import ActionError, action_text, parse_action


def test_every_card_code_round_trips_case_insensitively():
    for r in cards.RANKS:
        for s in cards.SUITS:
            code = r + s
            assert cards.normalize(code.lower()) == code
            assert str(cards.parse_card(code)) == code
    assert len({r + s for r in cards.RANKS for s in cards.SUITS}) == 52


@pytest.mark.parametrize("bad", ["", "K", "KSS", "1S", "KX", "10H", " KS", None])
def test_bad_card_codes_are_rejected_naming_the_token(bad):
    with pytest.raises(cards.CardError) as e:
        cards.parse_card(bad)
    assert repr(bad) in str(e.value)


def test_builders_make_the_messages_the_server_expects():
    a = actions.exchange("7h", "8C")
    assert a.kind == cards_pb2.ACTION_KIND_EXCHANGE and list(a.cards) == ["7H", "8C"]
    assert a.text == "exchange 7H 8C"
    assert actions.card("ks") == cards_pb2.Action(kind=cards_pb2.ACTION_KIND_CARD, cards=["KS"], text="card KS")
    assert actions.stand().kind == cards_pb2.ACTION_KIND_STAND and not actions.stand().cards
    assert action_text(actions.pass_()) == "pass"
    assert action_text(actions.hidden("7H")) == "hidden 7H"
    assert action_text(actions.discard("9S")) == "discard 9S"


@pytest.mark.parametrize(
    "text",
    ["pass", "play", "contre", "drop", "stand", "exchange 7H 8C TD JS QC", "discard 9S", "challenge",
     "decline", "card KS", "hidden 2C"],
)
def test_text_round_trips_through_the_protobuf_bytes(text):
    a = parse_action(text)
    wire = cards_pb2.Action(kind=a.kind, cards=a.cards).SerializeToString()
    assert action_text(cards_pb2.Action.FromString(wire)) == text


def test_text_is_read_case_insensitively_and_written_canonically():
    assert action_text(parse_action("Card ks")) == "card KS"
    assert action_text(parse_action("EXCHANGE th 2d")) == "exchange TH 2D"


@pytest.mark.parametrize(
    "bad", ["", "exchange", "exchange 7H 8C 9D TD JD QD", "card", "card KS QS", "pass KS", "fold",
            "card  KS", " pass", "card K", "exchange 7H 7h"],
)
def test_malformed_actions_are_rejected(bad):
    with pytest.raises(ActionError):
        parse_action(bad)


def test_same_action_ignores_text_and_exchange_order():
    assert actions.same_action(actions.exchange("7H", "8C"), cards_pb2.Action(kind=6, cards=["8C", "7H"]))
    assert not actions.same_action(actions.card("KS"), actions.hidden("KS"))


def test_card_order_of_each_ruleset():
    # Bete: K > Q > J > A (B3); an off-suit card never wins; a trump beats the led suit.
    assert cards.trick_winner(["AS", "JS", "KH"], "D", "bete") == 1
    assert cards.trick_winner(["KS", "AS", "7H"], "H", "bete") == 2
    # Ace high: A > K (AH1).
    assert cards.trick_winner(["KS", "AS"], None, "bete-ace-high") == 1
    # Bower games: trump jack > same-colour jack > ace of trumps (BO2); the same-colour jack is a trump.
    assert cards.trick_winner(["AH", "JD", "JH"], "H", "beste-boer") == 2
    assert cards.trick_winner(["AD", "JH"], "D", "lanterlui") == 1
    assert cards.trick_winner(["AS", "JC"], "H", "bester-bube") == 0
    assert cards.effective_suit("JC", "S", "bester-bube") == "S"
    assert cards.effective_suit("JC", "S", "bete") == "C"


def test_ruleset_ids_match_the_enum():
    for number, rid in cards.RULESET_IDS.items():
        assert cards_pb2.Ruleset.Name(number) == "RULESET_" + rid.upper().replace("-", "_")


def test_part_two_rulesets_and_their_card_orders():
    # RULES.md 19: ids 7-10
    assert [cards.ruleset_id(n) for n in (7, 8, 9, 10)] == ["mouche", "mistigri", "loo", "rams"]
    # Mouche: the Écarté order (MO3), no top card
    assert cards.trick_winner(["AH", "KH"], "S", "mouche") == 1
    assert cards.effective_suit("JC", "H", "mouche") == "C"
    # Mistigri: J♣ above the King of trumps (MI2); a lone J♣ is no club
    assert cards.effective_suit("JC", "H", "mistigri") == "H"
    assert cards.trick_winner(["KH", "JC"], "H", "mistigri") == 1
    assert cards.trick_winner(["9C", "JC"], "H", "mistigri") == 1
    # Loo: Pam above the Ace of trumps (LO2), ace high
    assert cards.trick_winner(["AH", "JC", "KH"], "H", "loo") == 1
    assert cards.trick_winner(["KS", "AS"], "H", "loo") == 1
    # Rams: ace high by default (RA2)
    assert cards.trick_winner(["KD", "AD"], "S", "rams") == 1


def test_rams_verbs_round_trip():
    for text, kind in (("widow", cards_pb2.ACTION_KIND_WIDOW), ("general", cards_pb2.ACTION_KIND_GENERAL)):
        a = parse_action(text)
        assert a.kind == kind and list(a.cards) == []
        assert action_text(a) == text
    assert parse_action("WIDOW").kind == cards_pb2.ACTION_KIND_WIDOW
