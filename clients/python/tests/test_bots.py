"""The ready bots' choices on hand-built views (no server)."""

from bete.v1 import cards_pb2, game_pb2
from bete_bot import RuleAwareBot, actions
from bete_bot.actions import action_text


def _view(ruleset, trump, hand, legal, tricks=(), phase=game_pb2.PHASE_TRICK):
    return game_pb2.SeatView(
        ruleset=ruleset, trump=trump, hand=hand, phase=phase, viewer_seat=0, to_act=0,
        legal_actions=[actions.parse_action(t) for t in legal], tricks=list(tricks),
    )


def _trick(*plays):
    return game_pb2.Trick(leader=plays[0][0], plays=[game_pb2.TrickPlay(seat=s, card=c) for s, c in plays])


def test_plays_the_lowest_winning_card_else_the_lowest():
    bot = RuleAwareBot()
    # bete, spades led with the Ace; K > Q > J > A, so Q is the lowest card that wins.
    v = _view(cards_pb2.RULESET_BETE, cards_pb2.SUIT_HEARTS, ["KS", "QS", "8S"],
              ["card KS", "card QS", "card 8S"], [_trick((1, "AS"))])
    assert action_text(bot.decide(v)) == "card QS"
    # Nothing wins against the King: throw the lowest.
    v = _view(cards_pb2.RULESET_BETE, cards_pb2.SUIT_HEARTS, ["QS", "8S"],
              ["card QS", "card 8S"], [_trick((1, "KS"))])
    assert action_text(bot.decide(v)) == "card 8S"
    # Void in the led suit: the lowest trump wins.
    v = _view(cards_pb2.RULESET_BETE_ACE_HIGH, cards_pb2.SUIT_HEARTS, ["9H", "AH", "7C"],
              ["card 9H", "card AH", "card 7C"], [_trick((1, "AS"))])
    assert action_text(bot.decide(v)) == "card 9H"


def test_leads_its_highest_card():
    v = _view(cards_pb2.RULESET_BESTE_BOER, cards_pb2.SUIT_DIAMONDS, ["AD", "JH", "7C"],
              ["card AD", "card JH", "card 7C"], [])
    assert action_text(RuleAwareBot().decide(v)) == "card JH"  # the Tweede Boer is the top card here


def test_passes_or_drops_weak_hands_and_plays_strong_ones():
    bot = RuleAwareBot()
    weak = ["8S", "9D", "TC", "8C", "9S"]
    strong = ["KH", "QH", "JH", "KS", "8C"]
    bid = ["play", "pass"]
    assert action_text(bot.decide(_view(1, cards_pb2.SUIT_HEARTS, weak, bid, phase=3))) == "pass"
    assert action_text(bot.decide(_view(1, cards_pb2.SUIT_HEARTS, strong, bid, phase=3))) == "play"
    ex = ["drop", "stand", "exchange 8S", "exchange 8S 9D", "exchange 9D"]
    assert action_text(bot.decide(_view(4, cards_pb2.SUIT_HEARTS, ["8S", "9D", "TC", "8C", "7S"], ex,
                                        phase=4))) == "drop"
    got = bot.decide(_view(4, cards_pb2.SUIT_HEARTS, ["AH", "KH", "JD", "8S", "9D"], ex, phase=4))
    assert action_text(got) == "exchange 8S 9D"
