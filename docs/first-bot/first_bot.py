"""Your first bete bot, in Python, from generated stubs only (docs/protocol.md, "Your first bot
in 15 minutes, without an SDK").

Generate the stubs first (from the repository root):

    python -m grpc_tools.protoc -I proto --python_out=gen --pyi_out=gen --grpc_python_out=gen proto/bete/v1/*.proto

then run it with the stubs on the path:

    PYTHONPATH=gen python docs/first-bot/first_bot.py --server 127.0.0.1:50051

It registers a bot, creates a table against house bots, takes the free seat, plays the whole match
on one WatchBot stream and prints the final balances. scripts/walkthrough.sh runs it in the test
command, once per ruleset.
"""

import argparse
import sys
import uuid

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from bete.v1 import (
    bot_service_pb2,
    bot_service_pb2_grpc,
    cards_pb2,
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


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--server", default="127.0.0.1:50051")
    p.add_argument("--ruleset", default="RULESET_BETE", help="a Ruleset enum name")
    p.add_argument("--seats", type=int, default=3)
    args = p.parse_args()

    # --- Step 1: connect and register -----------------------------------------------------------
    channel = grpc.insecure_channel(args.server)
    bots = bot_service_pb2_grpc.BotServiceStub(channel)
    me = bots.RegisterBot(bot_service_pb2.RegisterBotRequest(name="first-bot", owner="me@example.org"))
    auth = [("authorization", f"Bearer {me.token}")]  # on every TableService call
    tables = table_service_pb2_grpc.TableServiceStub(channel)

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
    decisions = 0
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
                return 0
    raise SystemExit("the stream ended before the match did")


if __name__ == "__main__":
    sys.exit(main())
