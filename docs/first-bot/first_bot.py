"""Your first bete bot, in Python, from generated stubs only (docs/protocol.md, "Your first bot
in 15 minutes, without an SDK").

Generate the stubs first (from the repository root):

    python -m grpc_tools.protoc -I proto --python_out=gen --pyi_out=gen --grpc_python_out=gen proto/bete/v1/*.proto

then run it with the stubs on the path:

    PYTHONPATH=gen python docs/first-bot/first_bot.py --server 127.0.0.1:50051 --account-token beteacct_...
    PYTHONPATH=gen python docs/first-bot/first_bot.py --server 127.0.0.1:50051 --account-token beteacct_... --ladder beste-boer-4

It registers a bot (owned by your account when you give its token, as a server with closed signup
requires), creates a table against house bots, takes the free seat, plays the whole match on one
WatchBot stream and prints the final balances. With --ladder it enters the ladder instead, plays
one match (a duplicate set: one table per seat), leaves, and prints its line of the leaderboard.
scripts/walkthrough.sh runs it in the test command on a closed-signup server, once per ruleset and
once on a ladder.
"""

import argparse
import os
import sys
import uuid

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from bete.v1 import (
    bot_service_pb2,
    bot_service_pb2_grpc,
    cards_pb2,
    ladder_service_pb2,
    ladder_service_pb2_grpc,
    table_pb2,
    table_service_pb2,
    table_service_pb2_grpc,
)


# --- Step 4: errors are data --------------------------------------------------------------------
def error_reason(err: grpc.RpcError) -> tuple[str, dict]:
    """The ErrorInfo reason (e.g. "STALE_SEQ") and metadata of a failed call."""
    status = rpc_status.from_call(err)  # google.rpc.Status from the trailers, or None
    if status is not None:
        for detail in status.details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                return info.reason, dict(info.metadata)
    return "", {}


# --- Step 5: the decision -------------------------------------------------------------------------
def choose(view) -> "cards_pb2.Action":
    """Pick one of view.legal_actions. Start simple: the first one is always legal.

    A better bot looks at view.hand, view.trump, view.tricks and view.seat_states here.
    """
    return view.legal_actions[0]


def check_chips(view) -> None:
    """Chip conservation (RULES.md 11.4): balances plus everything on the table is zero."""
    balances = sum(s.balance for s in view.seat_states)
    assert balances + view.pools.on_table == 0, (balances, view.pools)


def play(tables, auth, matches: int, on_seated=None) -> int:
    """Step 3: one WatchBot stream, act on DecisionRequest only, until `matches` tables ended.
    `on_seated(n)` runs when the bot is seated at its n-th table."""
    decisions = 0
    ended = 0
    seated = 0
    for msg in tables.WatchBot(table_service_pb2.WatchBotRequest(), metadata=auth):
        kind = msg.WhichOneof("kind")
        if kind == "decision":
            d = msg.decision
            check_chips(d.view)
            action = choose(d.view)
            try:
                tables.SubmitAction(
                    table_service_pb2.SubmitActionRequest(
                        table_id=d.table_id,
                        action=action,
                        expected_seq=d.seq,  # "I decided on the state at this seq"
                        request_id=str(uuid.uuid4()),  # makes a retry safe
                    ),
                    metadata=auth,
                )
                decisions += 1
            except grpc.RpcError as err:
                reason, meta = error_reason(err)
                if reason == "STALE_SEQ":
                    continue  # the table moved on (e.g. our deadline passed): a new decision follows
                raise
        elif kind == "seated":
            t = msg.seated.table
            where = f" of ladder {t.ladder_id}" if t.ladder_id else ""
            print(f"seated at table {t.table_id}{where}: seat {msg.seated.seat}")
            seated += 1
            if on_seated:
                on_seated(seated)
        elif kind == "snapshot":
            view = msg.snapshot
            # Explicit presence: seat 0 is a seat, so ask HasField, never compare with 0.
            seat = view.viewer_seat if view.HasField("viewer_seat") else None
            print(f"snapshot at seq {view.seq}: our seat {seat}")
        elif kind == "event":
            body = msg.event.WhichOneof("body")
            if body == "deal_settled":
                s = msg.event.deal_settled
                assert sum(s.balances) + s.pools.on_table == 0
            elif body == "match_ended":
                balances = list(msg.event.match_ended.balances)
                print(f"match over after {decisions} decisions; balances {balances}")
                assert sum(balances) == 0
                ended += 1
                if ended == matches:
                    return decisions
    raise SystemExit("the stream ended before the match did")


def ladder(channel, auth, bot_id: str, ladder_id: str) -> int:
    """Step 6: a ladder. Enter it, stay online on WatchBot (the scheduler seats only bots with
    a stream open), play one match, leave, read the leaderboard (public: no token needed)."""
    ladders = ladder_service_pb2_grpc.LadderServiceStub(channel)
    tables = table_service_pb2_grpc.TableServiceStub(channel)
    lad = ladders.GetLadder(ladder_service_pb2.GetLadderRequest(ladder_id=ladder_id)).ladder
    ladders.EnterLadder(ladder_service_pb2.EnterLadderRequest(ladder_id=ladder_id, capacity=1), metadata=auth)
    # A duplicate set is one table per seat, played one after another; its result is the total.
    tables_per_match = lad.seat_count if lad.duplicate else 1
    print(f"entered {ladder_id}: {lad.seat_count} seats, {tables_per_match} tables per match")

    def seated(n: int) -> None:
        # Seated at the match's last table: leave now, so no further match is started for us
        # (after LeaveLadder returns no new table seats the bot); this table is still played.
        if n == tables_per_match:
            ladders.LeaveLadder(ladder_service_pb2.LeaveLadderRequest(ladder_id=ladder_id), metadata=auth)

    play(tables, auth, tables_per_match, seated)
    # The match's ratings are stored before its last MatchEnded is sent: they are readable now.
    standings = ladders.GetStandings(ladder_service_pb2.GetStandingsRequest(ladder_id=ladder_id))
    line = next(s for s in standings.standings if s.bot_id == bot_id)
    print(f"left {ladder_id}: rank {line.rank}, rating {line.rating:.2f} after {line.matches} match(es)")
    assert line.matches >= 1
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--server", default="127.0.0.1:50051")
    p.add_argument("--account-token", default=os.environ.get("BETE_ACCOUNT_TOKEN"),
                   help="your account's token (AccountService); needed where signup is closed")
    p.add_argument("--ruleset", default="RULESET_BETE", help="a Ruleset enum name")
    p.add_argument("--seats", type=int, default=3)
    p.add_argument("--ladder", help="play a match on this ladder (e.g. beste-boer-4) instead")
    args = p.parse_args()

    # --- Step 1: connect and register -----------------------------------------------------------
    channel = grpc.insecure_channel(args.server)
    bots = bot_service_pb2_grpc.BotServiceStub(channel)
    # With an account token the bot belongs to the account (a closed-signup server requires it).
    owner = [("authorization", f"Bearer {args.account_token}")] if args.account_token else None
    # An account holds one bot per name and version: each run registers a new version here. A
    # real bot registers once and keeps its token (its rating belongs to that bot id).
    me = bots.RegisterBot(
        bot_service_pb2.RegisterBotRequest(
            name="first-bot", owner="me@example.org", version=uuid.uuid4().hex[:12]
        ),
        metadata=owner,
    )
    auth = [("authorization", f"Bearer {me.token}")]  # on every TableService call
    tables = table_service_pb2_grpc.TableServiceStub(channel)
    if args.ladder:
        return ladder(channel, auth, me.bot_id, args.ladder)

    # Errors carry a reason to branch on: ask for a table that does not exist.
    try:
        tables.GetTable(table_service_pb2.GetTableRequest(table_id="t_does_not_exist"), metadata=auth)
        raise SystemExit("GetTable of an unknown table succeeded")
    except grpc.RpcError as err:
        reason, _ = error_reason(err)
        print(f"as expected: {err.code().name} {reason}")
        assert reason == "TABLE_NOT_FOUND", reason

    # --- Step 2: a table against house bots, and our seat ----------------------------------------
    house = [
        table_pb2.HouseBotSeat(seat=s, policy=table_pb2.HOUSE_BOT_POLICY_HEURISTIC)
        for s in range(1, args.seats)
    ]
    table = tables.CreateTable(
        table_service_pb2.CreateTableRequest(
            ruleset=cards_pb2.Ruleset.Value(args.ruleset), seats=args.seats, house_bots=house
        ),
        metadata=auth,
    ).table
    joined = tables.JoinTable(table_service_pb2.JoinTableRequest(table_id=table.table_id), metadata=auth)
    print(f"table {table.table_id}: seat {joined.seat} of {args.seats}, {args.ruleset}")

    # --- Step 3: one stream, act on DecisionRequest only -----------------------------------------
    play(tables, auth, 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
