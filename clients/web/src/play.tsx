// A person plays: a token (a guest's with one click on an open-signup server, or a pasted
// account or bot token), a table against house bots or friends, and the legal actions as
// buttons. The person is a bot to the server: the same seat view (their own hand only), the
// same deadline, the same checks.
//
// The token stays in this tab (sessionStorage), is sent only to the server this page came from
// (never to a `?api=` address) and never appears in a URL.
import { useEffect, useRef, useState } from "preact/hooks";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { TableService } from "./gen/bete/v1/table_service_pb";
import { BotService } from "./gen/bete/v1/bot_service_pb";
import { AccountService } from "./gen/bete/v1/account_service_pb";
import { Ruleset, type Action } from "./gen/bete/v1/cards_pb";
import type { SeatView } from "./gen/bete/v1/game_pb";
import { HouseBotPolicy, Visibility, type Table } from "./gen/bete/v1/table_pb";
import { apiBase } from "./api";
import { muxFetch } from "./mux";
import { Board } from "./board";
import { plannedDeals } from "./table";
import { RULESETS, actionText, describe, rulesetName } from "./format";
import { errorText } from "./errors";

const TOKEN_KEY = "bete.play.token";
/** A well-formed table id no table has. */
const NO_TABLE = "t_0000000000000000";
const NAME_KEY = "bete.play.name";

/** The clients for one token, to the page's own origin only. */
function clients(token: string) {
  const auth: Interceptor = (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
  const base = location.origin;
  const transport = createGrpcWebTransport({
    baseUrl: base,
    useBinaryFormat: true,
    interceptors: [auth],
    fetch: base.startsWith("http:") ? muxFetch(base) : undefined,
  });
  return {
    tables: createClient(TableService, transport),
    bots: createClient(BotService, transport),
    accounts: createClient(AccountService, transport),
  };
}

/** Calls without a token (registering a guest), to the page's own origin. */
const anonymous = () => {
  const base = location.origin;
  return createClient(BotService, createGrpcWebTransport({ baseUrl: base, useBinaryFormat: true, fetch: base.startsWith("http:") ? muxFetch(base) : undefined }));
};

function useToken(): [string, string, (t: string, name: string) => void] {
  const [token, setToken] = useState(sessionStorage.getItem(TOKEN_KEY) ?? "");
  const [name, setName] = useState(sessionStorage.getItem(NAME_KEY) ?? "");
  return [token, name, (t, n) => {
    if (t) { sessionStorage.setItem(TOKEN_KEY, t); sessionStorage.setItem(NAME_KEY, n); }
    else { sessionStorage.removeItem(TOKEN_KEY); sessionStorage.removeItem(NAME_KEY); }
    setToken(t);
    setName(n);
  }];
}

function TokenForm({ onToken }: { onToken: (t: string, name: string) => void }) {
  const [pasted, setPasted] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const guest = async () => {
    setBusy(true); setError("");
    try {
      const name = `guest-${Math.random().toString(36).slice(2, 7)}`;
      const r = await anonymous().registerBot({ name, owner: "web guest" });
      onToken(r.token, name);
    } catch (e) { setError(errorText(e)); } finally { setBusy(false); }
  };
  const paste = async (e: Event) => {
    e.preventDefault();
    const t = pasted.trim();
    if (!t) return;
    setBusy(true); setError("");
    try {
      const c = clients(t);
      // An account token registers a bot of the account to play with; a bot token plays itself.
      const isAccount = await c.accounts.listAccountBots({}).then(() => true, () => false);
      if (isAccount) {
        const name = `web-${Math.random().toString(36).slice(2, 7)}`;
        const r = await c.bots.registerBot({ name, owner: "web page" });
        onToken(r.token, name);
      } else {
        // A bot token is checked by asking for the seat view of no table: the server knows the
        // token (TABLE_NOT_FOUND) or not (UNAUTHENTICATED).
        const known = await c.tables.getSeatView({ tableId: NO_TABLE }).then(() => true, (e) => {
          if (e instanceof ConnectError && e.code === Code.NotFound) return true;
          if (e instanceof ConnectError && e.code === Code.Unauthenticated) return false;
          throw e;
        });
        if (!known) throw new Error("this server knows no account or bot with that token");
        onToken(t, "your bot");
      }
      setPasted("");
    } catch (e) { setError(errorText(e)); } finally { setBusy(false); }
  };
  return (
    <section aria-label="who plays">
      <p><button type="button" onClick={guest} disabled={busy} data-testid="play-guest">Play as a guest</button> <span class="meta">a new bot of your own, for this tab</span></p>
      <form onSubmit={paste} class="filters">
        <label>or your account or bot token <input type="password" autoComplete="off" value={pasted} onInput={(e) => setPasted(e.currentTarget.value)} data-testid="play-token" /></label>
        <button type="submit" disabled={busy} data-testid="play-token-use">Use it</button>
      </form>
      <p class="meta">The token stays in this tab and is sent only to this server.</p>
      {error ? <p class="error" role="alert" data-testid="play-token-error">{error}</p> : null}
    </section>
  );
}

function NewTable({ token }: { token: string }) {
  const [ruleset, setRuleset] = useState<Ruleset>(Ruleset.BETE);
  const [seats, setSeats] = useState(3);
  const [rounds, setRounds] = useState(1);
  // Seats left free for friends (who come by the shared link); house bots take the rest.
  const [friends, setFriends] = useState(0);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const start = async (e: Event) => {
    e.preventDefault();
    setBusy(true); setError("");
    try {
      const c = clients(token);
      const free = Math.min(friends, seats - 1);
      const t = await c.tables.createTable({
        ruleset, seats, config: { rounds: String(rounds) }, decisionDeadlineMs: 60_000, visibility: Visibility.LISTED,
        houseBots: Array.from({ length: Math.max(0, seats - 1 - free) }, (_, i) => ({ seat: 1 + free + i, policy: HouseBotPolicy.HEURISTIC })),
      });
      const id = t.table!.tableId;
      await c.tables.joinTable({ tableId: id, seat: 0 });
      location.hash = `#/play/${id}`;
    } catch (e) { setError(errorText(e)); } finally { setBusy(false); }
  };
  return (
    <form class="filters" onSubmit={start} aria-label="a new table">
      <label>Game <select value={ruleset} onChange={(e) => setRuleset(Number(e.currentTarget.value))} data-testid="play-ruleset">
        {RULESETS.map(([v, n]) => <option key={v} value={v}>{n}</option>)}
      </select></label>
      <label>Seats <input type="number" min={2} max={10} value={seats} onInput={(e) => setSeats(Number(e.currentTarget.value))} data-testid="play-seats" style={{ width: "4.5em" }} /></label>
      <label>Rounds <input type="number" min={1} max={20} value={rounds} onInput={(e) => setRounds(Number(e.currentTarget.value))} style={{ width: "4.5em" }} /></label>
      <label>Seats for friends <input type="number" min={0} max={seats - 1} value={Math.min(friends, seats - 1)} onInput={(e) => setFriends(Math.max(0, Math.min(seats - 1, Number(e.currentTarget.value) || 0)))} data-testid="play-friends" style={{ width: "4.5em" }} /></label>
      <span class="meta">friends take them by the table's link; house bots play the rest</span>
      <button type="submit" disabled={busy} data-testid="play-start">Start a table</button>
      {error ? <p class="error" role="alert">{error}</p> : null}
    </form>
  );
}

export function Play({ tableId }: { tableId?: string }) {
  const [token, name, setToken] = useToken();
  const foreign = apiBase() !== location.origin;
  return (
    <main>
      <h1>Play</h1>
      {foreign ? <p class="error" role="alert">This page talks to another server ({apiBase()}); playing sends your token only to the server the page came from, {location.origin}. Open the page from that server to play.</p> : null}
      {foreign ? null : !token ? <TokenForm onToken={setToken} /> : (
        <p class="meta" data-testid="play-who">Playing as <b>{name}</b> (token kept in this tab) <button type="button" class="linkish" onClick={() => setToken("", "")}>forget the token</button></p>
      )}
      {token && !foreign && !tableId ? <NewTable token={token} /> : null}
      {token && !foreign && tableId ? <Seat token={token} tableId={tableId} /> : null}
    </main>
  );
}

interface Decision { seq: bigint; actions: Action[]; deadline?: number }

function Seat({ token, tableId }: { token: string; tableId: string }) {
  const [table, setTable] = useState<Table | null>(null);
  const [view, setView] = useState<SeatView | null>(null);
  const [decision, setDecision] = useState<Decision | null>(null);
  const [error, setError] = useState("");
  const [seated, setSeated] = useState<boolean | null>(null);
  const [, setFrame] = useState(0);
  const log = useRef<string[]>([]);
  const c = useRef(clients(token)).current;

  useEffect(() => {
    const abort = new AbortController();
    const signal = abort.signal;
    log.current = [];
    const names = (s: number) => `#${s + 1} ${table?.seats[s]?.botName ?? ""}`.trim();
    let info: Table | null = null;
    const loadTable = async () => {
      info = (await c.tables.getTable({ tableId }, { signal })).table ?? null;
      setTable(info);
    };
    const refresh = async () => {
      try {
        const v = (await c.tables.getSeatView({ tableId }, { signal })).view;
        if (v) setView(v);
      } catch { /* the stream reports a lost server */ }
    };
    (async () => {
      try {
        await loadTable();
        const v = (await c.tables.getSeatView({ tableId }, { signal })).view;
        setSeated(v?.viewerSeat !== undefined);
        if (v) setView(v);
      } catch (e) { if (!signal.aborted) setError(errorText(e)); }
      let backoff = 250;
      while (!signal.aborted) {
        try {
          for await (const m of c.tables.watchBot({}, { signal })) {
            backoff = 250;
            setError("");
            if (m.tableId !== tableId) continue;
            const k = m.kind;
            if (k.case === "seated") { setSeated(true); loadTable(); }
            else if (k.case === "snapshot") setView(k.value);
            else if (k.case === "event") {
              const nm = (s: number) => `#${s + 1} ${info?.seats[s]?.botName ?? ""}`.trim();
              const t = describe(k.value, nm);
              if (t) { log.current.push(t); if (log.current.length > 200) log.current.shift(); }
              if (["seatTaken", "seatLeft", "matchEnded", "matchStarted"].includes(k.value.body.case ?? "")) loadTable();
              refresh();
              setFrame((n) => n + 1);
            } else if (k.case === "decision") {
              const d = k.value;
              setView(d.view ?? null);
              setDecision({ seq: d.seq, actions: d.view?.legalActions ?? [], deadline: d.view?.deadline ? timestampMs(d.view.deadline) : undefined });
            }
          }
        } catch (e) {
          if (signal.aborted) return;
          setError(errorText(e));
        }
        await new Promise((ok) => setTimeout(ok, backoff));
        backoff = Math.min(backoff * 2, 4000);
      }
      void names;
    })();
    return () => abort.abort();
  }, [tableId, token]);

  const act = async (a: Action) => {
    const d = decision;
    if (!d) return;
    setDecision(null);
    try {
      await c.tables.submitAction({ tableId, action: { kind: a.kind, cards: a.cards }, expectedSeq: d.seq });
    } catch (e) {
      setError(errorText(e));
    }
  };
  const join = async () => {
    try { await c.tables.joinTable({ tableId }); setSeated(true); } catch (e) { setError(errorText(e)); }
  };

  const me = view?.viewerSeat;
  const names = (table?.seats ?? []).map((s) => s.botName);
  const ids = (table?.seats ?? []).map((s) => s.botId);
  const hands = me !== undefined && view ? Array.from({ length: view.seats }, (_, i) => (i === me ? view.hand : undefined)) : undefined;
  const link = `${location.origin}${location.pathname}#/play/${tableId}`;
  return (
    <>
      <p class="meta">
        {table ? <>{rulesetName(table.ruleset)} · {table.seatCount} seats · </> : null}
        table <a href={`#/table/${tableId}`}>{tableId}</a> · friends take a free seat with this link: <code class="play-link" data-testid="play-link">{link}</code>
      </p>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {seated === false ? <p><button type="button" onClick={join} data-testid="play-join">Take a free seat</button></p> : null}
      {decision && decision.actions.length ? (
        <section class="actions" aria-label="your move" data-testid="your-move">
          <h2>Your move{decision.deadline ? <> · <DeadlineLeft until={decision.deadline} /></> : null}</h2>
          <div class="buttons">
            {decision.actions.map((a) => (
              <button key={a.text} type="button" data-action={a.text} onClick={() => act(a)}>{actionText(a)}</button>
            ))}
          </div>
        </section>
      ) : view?.matchOver ? <p class="over" data-testid="play-over">The match is over. <a href={`#/replay/${tableId}`}>Replay it</a> or <a href="#/play">start another table</a>.</p> : null}
      {view ? <Board view={view} names={names} ids={ids} hands={hands} deals={table ? { count: plannedDeals(table), planned: true } : undefined} /> : null}
      <section class="log" aria-label="event log">
        <h2>Events</h2>
        <ol>{log.current.slice(-40).reverse().map((t, i) => <li key={log.current.length - i}>{t}</li>)}</ol>
      </section>
    </>
  );
}

function DeadlineLeft({ until }: { until: number }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => { const t = setInterval(() => setNow(Date.now()), 500); return () => clearInterval(t); }, [until]);
  return <span class="countdown" role="timer">{Math.max(0, Math.round((until - now) / 1000))} s left</span>;
}
