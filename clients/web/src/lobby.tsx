// The lobby: the listed tables, newest first, refreshed every two seconds.
import { useEffect, useState } from "preact/hooks";
import { tables } from "./api";
import { Ruleset } from "./gen/bete/v1/cards_pb";
import { OccupantKind, TableState, type Table } from "./gen/bete/v1/table_pb";
import { RULESETS, STATES, rulesetName, stateName } from "./format";
import { errorText } from "./errors";

const REFRESH_MS = 2000;

export function Lobby() {
  const [ruleset, setRuleset] = useState<Ruleset>(Ruleset.UNSPECIFIED);
  const [state, setState] = useState<TableState>(TableState.UNSPECIFIED);
  const [list, setList] = useState<Table[] | null>(null);
  const [error, setError] = useState<string>("");

  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      try {
        const r = await tables.listTables({ ruleset, state, pageSize: 100 });
        if (stop) return;
        setList(r.tables);
        setError("");
      } catch (e) {
        if (!stop) setError(errorText(e));
      }
      if (!stop) timer = setTimeout(load, REFRESH_MS);
    };
    load();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [ruleset, state]);

  return (
    <main>
      <h1>Tables</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Game{" "}
          <select value={ruleset} onChange={(e) => setRuleset(Number(e.currentTarget.value))} data-testid="filter-ruleset">
            <option value={Ruleset.UNSPECIFIED}>any</option>
            {RULESETS.map(([v, n]) => <option key={v} value={v}>{n}</option>)}
          </select>
        </label>
        <label>
          State{" "}
          <select value={state} onChange={(e) => setState(Number(e.currentTarget.value))} data-testid="filter-state">
            <option value={TableState.UNSPECIFIED}>any</option>
            {STATES.map(([v, n]) => <option key={v} value={v}>{n}</option>)}
          </select>
        </label>
        <span class="live" aria-live="polite">{error ? <span class="error">{error}</span> : list ? `${list.length} table${list.length === 1 ? "" : "s"}, live` : "loading…"}</span>
      </form>
      {list && list.length === 0 ? <p>No listed table matches.</p> : null}
      {list && list.length ? (
        <table class="lobby" data-testid="lobby">
          <thead>
            <tr><th scope="col">Table</th><th scope="col">Game</th><th scope="col">State</th><th scope="col">Seats</th><th scope="col">Players</th></tr>
          </thead>
          <tbody>
            {list.map((t) => {
              const taken = t.seats.filter((s) => s.occupant !== OccupantKind.EMPTY).length;
              return (
                <tr key={t.tableId} data-table={t.tableId}>
                  <td><a href={`#/table/${t.tableId}`}>{t.tableId}</a></td>
                  <td>{rulesetName(t.ruleset)}</td>
                  <td><span class={`state s${t.state}`}>{stateName(t.state)}</span>{t.state === TableState.FINISHED ? <> · <a href={`#/replay/${t.tableId}`}>replay</a></> : null}</td>
                  <td>{taken}/{t.seatCount}</td>
                  <td class="players">{t.seats.map((s) => s.botName || "free").join(", ")}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
    </main>
  );
}
