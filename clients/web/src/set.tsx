// A duplicate set side by side: the same deals at each of the set's tables (seats rotated), one
// deal at a time, every hand face up, with how each table settled it.
import { useEffect, useState } from "preact/hooks";
import { createClient } from "@connectrpc/connect";
import { tables, transport } from "./api";
import { ReplayService, type ReplayRecordResponse } from "./gen/bete/v1/replay_service_pb";
import { Board } from "./board";
import { describe, rulesetName } from "./format";
import { errorText } from "./errors";

const replays = createClient(ReplayService, transport);

interface One { id: string; replay: ReplayRecordResponse; names: string[] }

export function SetReplay({ ids }: { ids: string[] }) {
  const [set, setSet] = useState<One[] | null>(null);
  const [deal, setDeal] = useState(0);
  const [error, setError] = useState("");
  useEffect(() => {
    Promise.all(ids.map(async (id) => {
      const replay = await replays.replayRecord({ source: { case: "tableId", value: id } });
      const names = await tables.getTable({ tableId: id }).then((r) => r.table?.seats.map((s) => s.botName) ?? [], () => []);
      return { id, replay, names };
    })).then(setSet, (e) => setError(errorText(e)));
  }, [ids.join(",")]);
  const deals = Math.max(0, ...(set ?? []).map((o) => new Set(o.replay.steps.map((s) => s.deal)).size));
  return (
    <main>
      <h1>Duplicate set</h1>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {set ? (
        <>
          <p class="meta">{rulesetName(set[0].replay.ruleset)} · {set.length} tables with the same deals, seats rotated</p>
          <nav class="steps" aria-label="deal">
            <button type="button" onClick={() => setDeal(Math.max(0, deal - 1))} disabled={deal === 0}>« deal</button>
            <span data-testid="set-deal">deal {deal + 1} of {deals}</span>
            <button type="button" onClick={() => setDeal(Math.min(deals - 1, deal + 1))} disabled={deal >= deals - 1} data-testid="set-next">deal »</button>
          </nav>
          <div class="side-by-side" data-testid="set">
            {set.map((o) => {
              // The deal's last step: its settlement, every hand as it was dealt is in the first.
              const steps = o.replay.steps.filter((s) => s.deal === deal);
              const first = steps[0];
              const settled = steps.flatMap((s) => s.events).find((e) => e.body.case === "dealSettled");
              const name = (s: number) => `#${s + 1} ${o.names[s] ?? ""}`.trim();
              return (
                <section key={o.id} aria-label={`table ${o.id}`}>
                  <h2><a href={`#/replay/${o.id}/${first ? o.replay.steps.indexOf(first) : 0}`}>{o.id}</a></h2>
                  <p class="meta">{settled ? describe(settled, name) : "not played at this table"}</p>
                  {first?.view ? <Board view={first.view} names={o.names} hands={first.hands.map((h) => h.cards)} /> : null}
                </section>
              );
            })}
          </div>
        </>
      ) : error ? null : <p role="status">replaying {ids.length} tables…</p>}
    </main>
  );
}
