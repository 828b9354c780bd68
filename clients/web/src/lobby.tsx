// The lobby: live tables first (every page of them), then waiting ones, then finished ones a
// page at a time, refreshed every two seconds. The counter says what is shown, and of what.
import { useEffect, useRef, useState } from "preact/hooks";
import { tables } from "./api";
import { Ruleset } from "./gen/bete/v1/cards_pb";
import { OccupantKind, TableState, type Table } from "./gen/bete/v1/table_pb";
import { RULESETS, STATES, rulesetName, stateName } from "./format";
import { errorText } from "./errors";
import { BotLink } from "./links";

const REFRESH_MS = 2000;
/** Live and waiting tables are read to the end, up to this many pages of 200. */
const MAX_PAGES = 10;
const FINISHED_PAGE = 25;

interface Lists { live: Table[]; waiting: Table[]; finished: Table[]; more: boolean; truncated: boolean }

async function all(ruleset: Ruleset, state: TableState): Promise<{ list: Table[]; truncated: boolean }> {
  const list: Table[] = [];
  let pageToken = "";
  for (let i = 0; i < MAX_PAGES; i++) {
    const r = await tables.listTables({ ruleset, state, pageSize: 200, pageToken });
    list.push(...r.tables);
    if (!r.nextPageToken) return { list, truncated: false };
    pageToken = r.nextPageToken;
  }
  return { list, truncated: true };
}

export function Lobby() {
  const [ruleset, setRuleset] = useState<Ruleset>(Ruleset.UNSPECIFIED);
  const [state, setState] = useState<TableState>(TableState.UNSPECIFIED);
  const [lists, setLists] = useState<Lists | null>(null);
  const [finishedWanted, setFinishedWanted] = useState(FINISHED_PAGE);
  const [error, setError] = useState<string>("");
  const wanted = useRef(finishedWanted);
  wanted.current = finishedWanted;

  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const want = (s: TableState) => state === TableState.UNSPECIFIED || state === s;
    const load = async () => {
      try {
        const [live, waiting] = await Promise.all([
          want(TableState.PLAYING) ? all(ruleset, TableState.PLAYING) : { list: [], truncated: false },
          want(TableState.WAITING) ? all(ruleset, TableState.WAITING) : { list: [], truncated: false },
        ]);
        let finished: Table[] = [];
        let more = false;
        if (want(TableState.FINISHED)) {
          let pageToken = "";
          while (finished.length < wanted.current) {
            const r = await tables.listTables({ ruleset, state: TableState.FINISHED, pageSize: Math.min(200, wanted.current - finished.length), pageToken });
            finished.push(...r.tables);
            pageToken = r.nextPageToken;
            if (!pageToken) break;
          }
          more = pageToken !== "";
          finished = finished.slice(0, wanted.current);
        }
        if (stop) return;
        setLists({ live: live.list, waiting: waiting.list, finished, more, truncated: live.truncated || waiting.truncated });
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
  }, [ruleset, state, finishedWanted]);

  const count = lists ? lists.live.length + lists.waiting.length + lists.finished.length : 0;
  const counter = lists
    ? `${lists.live.length}${lists.truncated ? "+" : ""} live · ${lists.waiting.length} waiting · ${lists.finished.length}${lists.more ? " most recent" : ""} finished${lists.more ? " shown (more below)" : ""}`
    : "loading…";
  const section = (title: string, list: Table[], id: string) => list.length ? (
    <tbody data-section={id}>
      <tr class="section"><th colSpan={5} scope="colgroup">{title} ({list.length})</th></tr>
      {list.map((t) => <Row key={t.tableId} t={t} />)}
    </tbody>
  ) : null;
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
        <a href="#/tv" class="tvlink">TV: follow live tables</a>
        <span class="live" aria-live="polite" data-testid="lobby-count">{error ? <span class="error">{error}</span> : counter}</span>
      </form>
      {lists && count === 0 ? <p>No listed table matches.</p> : null}
      {lists && count ? (
        <table class="lobby" data-testid="lobby">
          <thead>
            <tr><th scope="col">Table</th><th scope="col">Game</th><th scope="col">State</th><th scope="col">Seats</th><th scope="col">Players</th></tr>
          </thead>
          {section("Live", lists.live, "live")}
          {section("Waiting for players", lists.waiting, "waiting")}
          {section("Finished, newest first", lists.finished, "finished")}
        </table>
      ) : null}
      {lists?.more ? <p><button type="button" data-testid="lobby-more" onClick={() => setFinishedWanted((n) => n + FINISHED_PAGE)}>Show {FINISHED_PAGE} more finished tables</button></p> : null}
    </main>
  );
}

function Row({ t }: { t: Table }) {
  const taken = t.seats.filter((s) => s.occupant !== OccupantKind.EMPTY).length;
  return (
    <tr data-table={t.tableId}>
      <td><a href={`#/table/${t.tableId}`}>{t.tableId}</a></td>
      <td>{rulesetName(t.ruleset)}{t.ladderId ? <> · <a href={`#/ladders/${encodeURIComponent(t.ladderId)}`}>{t.ladderId}</a></> : null}</td>
      <td><span class={`state s${t.state}`}>{stateName(t.state)}</span>{t.state === TableState.FINISHED ? <> · <a href={`#/replay/${t.tableId}`}>replay</a></> : null}</td>
      <td>{taken}/{t.seatCount}</td>
      <td class="players">{t.seats.map((s, i) => <span key={i}>{i ? ", " : ""}{s.botName ? <BotLink id={s.botId} name={s.botName} /> : "free"}</span>)}</td>
    </tr>
  );
}
