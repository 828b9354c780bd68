// A live table as a spectator sees it: WatchTable's snapshot and events, resumed from the last
// sequence number after a break, with the seats' names and strikes from GetTable.
import { useEffect, useRef, useState } from "preact/hooks";
import { Code, ConnectError } from "@connectrpc/connect";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { tables } from "./api";
import type { Event, SeatView } from "./gen/bete/v1/game_pb";
import type { Table } from "./gen/bete/v1/table_pb";
import { Board } from "./board";
import { Card } from "./cards";
import { RulesPanel } from "./rules";
import { describe, rulesetName, stateName } from "./format";
import { errorText } from "./errors";

type Conn = "connecting" | "live" | "reconnecting" | "over" | "failed";

const LOG_LINES = 400;
const VIEW_REFRESH_MS = 250;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((ok) => {
    const t = setTimeout(ok, ms);
    signal.addEventListener("abort", () => { clearTimeout(t); ok(); }, { once: true });
  });

/** Errors after which reconnecting cannot help. */
function fatal(e: unknown): boolean {
  return e instanceof ConnectError && [Code.NotFound, Code.PermissionDenied, Code.InvalidArgument, Code.Unauthenticated].includes(e.code);
}

/** RULES.md 0.4 item 17: `rounds` (default 2) × the seats, then more until the pots are clear. */
export function plannedDeals(t: Table): number {
  const rounds = Number(t.config.rounds ?? "2");
  return Number.isInteger(rounds) && rounds > 0 ? rounds * t.seatCount : 0;
}

export function LiveTable({ id, onOver }: { id: string; onOver?: () => void }) {
  const [table, setTable] = useState<Table | null>(null);
  const [view, setView] = useState<SeatView | null>(null);
  const [conn, setConn] = useState<Conn>("connecting");
  const [problem, setProblem] = useState("");
  // The latest settled deal's hands, face up: kept until the next deal settles, so a deal that
  // settles in the same batch of events as the next one starts is still shown.
  const [reveal, setReveal] = useState<{ deal: number; hands: string[][]; text: string } | undefined>(undefined);
  const [, setFrame] = useState(0);
  const log = useRef<{ seq: bigint; text: string }[]>([]);
  const lastSeq = useRef<bigint>(0n);
  // When the latest event happened: the seat to act has the table's deadline from then on.
  const lastEventMs = useRef<number>(Date.now());

  useEffect(() => {
    const abort = new AbortController();
    const signal = abort.signal;
    log.current = [];
    lastSeq.current = 0n;
    setReveal(undefined);
    let tableInfo: Table | null = null;
    let frameAsked = false;
    let viewTimer: ReturnType<typeof setTimeout> | undefined;

    const names = (seat: number) => `#${seat + 1} ${tableInfo?.seats[seat]?.botName || ""}`.trim();
    // Many events a frame at most one render.
    const paint = () => {
      if (frameAsked) return;
      frameAsked = true;
      requestAnimationFrame(() => { frameAsked = false; setFrame((n) => n + 1); });
    };
    const loadTable = async () => {
      try {
        tableInfo = (await tables.getTable({ tableId: id }, { signal })).table ?? null;
        setTable(tableInfo);
      } catch (e) {
        if (fatal(e)) { setProblem(errorText(e)); setConn("failed"); abort.abort(); }
      }
    };
    // The spectator view, at most every VIEW_REFRESH_MS while events arrive.
    const refreshView = () => {
      if (viewTimer) return;
      viewTimer = setTimeout(async () => {
        viewTimer = undefined;
        try {
          const v = (await tables.getSeatView({ tableId: id }, { signal })).view;
          if (v) setView(v);
        } catch { /* the stream's own error handling reports a lost server */ }
      }, VIEW_REFRESH_MS);
    };
    const onEvent = (e: Event) => {
      lastSeq.current = e.seq;
      lastEventMs.current = e.time ? timestampMs(e.time) : Date.now();
      const text = describe(e, names);
      if (text) {
        log.current.push({ seq: e.seq, text });
        if (log.current.length > LOG_LINES) log.current.splice(0, log.current.length - LOG_LINES);
      }
      switch (e.body.case) {
        case "dealSettled": {
          const r = e.body.value.revealed;
          if (r) setReveal({ deal: e.body.value.deal, hands: r.hands.map((h) => h.cards), text });
          break;
        }
        case "seatTaken": case "seatLeft": case "strikeCounted": case "matchStarted": case "matchEnded":
          loadTable();
          break;
      }
      refreshView();
      paint();
    };

    (async () => {
      await loadTable();
      let backoff = 250;
      let resumeFrom: bigint | undefined = undefined;
      while (!signal.aborted) {
        try {
          setConn(resumeFrom === undefined ? "connecting" : "reconnecting");
          const stream = tables.watchTable({ tableId: id, fromSeq: resumeFrom }, { signal });
          let over = false;
          for await (const m of stream) {
            setConn("live");
            backoff = 250;
            switch (m.kind.case) {
              case "snapshot":
                setView(m.kind.value);
                lastSeq.current = m.kind.value.seq;
                if (m.kind.value.matchOver) over = true;
                break;
              case "event":
                onEvent(m.kind.value);
                if (m.kind.value.body.case === "matchEnded") over = true;
                break;
              case "heartbeat":
                break;
              case "resync":
                lastSeq.current = m.kind.value.fromSeq;
                break;
            }
            resumeFrom = lastSeq.current;
          }
          if (over) { setConn("over"); await loadTable(); refreshView(); onOver?.(); return; }
          // Ended without MatchEnded (a resync, the server draining): resume.
          resumeFrom = lastSeq.current;
        } catch (e) {
          if (signal.aborted) return;
          if (fatal(e)) { setProblem(errorText(e)); setConn("failed"); return; }
          resumeFrom = resumeFrom === undefined && lastSeq.current === 0n ? undefined : lastSeq.current;
          setConn("reconnecting");
          setProblem(errorText(e));
          await sleep(backoff, signal);
          backoff = Math.min(backoff * 2, 4000);
        }
      }
    })();
    return () => { abort.abort(); clearTimeout(viewTimer); };
  }, [id]);

  const names = (table?.seats ?? []).map((s) => s.botName);
  const ids = (table?.seats ?? []).map((s) => s.botId);
  const strikes = (table?.seats ?? []).map((s) => s.strikes);
  // From the latest event's server time, capped at the table's deadline (clocks differ).
  const deadline = view?.toAct !== undefined && table && conn === "live"
    ? Math.min(lastEventMs.current, Date.now()) + table.decisionDeadlineMs
    : undefined;
  return (
    <main>
      <h1>Table <code>{id}</code></h1>
      <p class="meta">
        {table ? <>{rulesetName(table.ruleset)} · {table.seatCount} seats · {stateName(table.state)} · {table.decisionDeadlineMs / 1000} s per decision</> : null}
        {table?.ladderId ? <> · a match of ladder <a href={`#/ladders/${encodeURIComponent(table.ladderId)}`} data-testid="table-ladder">{table.ladderId}</a>{table.ladderMatchId ? <> (match <code>{table.ladderMatchId}</code>)</> : null}</> : null}
        {" "}<a href={`#/replay/${id}`}>replay</a>
      </p>
      {table ? <RulesPanel ruleset={table.ruleset} /> : null}
      <p class={`conn ${conn}`} role="status" data-testid="conn">
        {conn === "live" ? "● live" : conn === "connecting" ? "connecting…" : conn === "reconnecting" ? `reconnecting… (resuming after event ${lastSeq.current})${problem ? ` — ${problem}` : ""}` : conn === "over" ? "match over" : `cannot watch: ${problem}`}
      </p>
      {view ? <Board view={view} names={names} ids={ids} strikes={strikes} hands={reveal && reveal.deal === view.deal ? reveal.hands : undefined} deals={table ? { count: plannedDeals(table), planned: true } : undefined} deadline={deadline} /> : null}
      {reveal && view && reveal.deal !== view.deal ? (
        <section class="settled" aria-label={`deal ${reveal.deal + 1}, settled: the hands`} data-testid="settled">
          <h2>Deal {reveal.deal + 1} settled</h2>
          <p>{reveal.text}</p>
          <ul>
            {reveal.hands.map((h, i) => (
              <li key={i}><span class="who">#{i + 1} {names[i] ?? ""}</span> {h.map((c) => <Card key={c} code={c} small />)}</li>
            ))}
          </ul>
        </section>
      ) : null}
      <section class="log" aria-label="event log">
        <h2>Events</h2>
        <ol data-testid="log" aria-live="off">
          {log.current.slice(-60).reverse().map((l) => <li key={String(l.seq)} value={Number(l.seq)}><span class="seq">{String(l.seq)}</span> {l.text}</li>)}
        </ol>
      </section>
    </main>
  );
}
