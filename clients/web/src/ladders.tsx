// Ladders: each ladder's leaderboard (rating with its interval as a bar), the live results
// stream, and a bot's page with its rating over time and recent matches linking to replays.
import { useEffect, useState } from "preact/hooks";
import { Code, ConnectError } from "@connectrpc/connect";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { transport } from "./api";
import { LadderService } from "./gen/bete/v1/ladder_service_pb";
import { LadderMatchState, type GetCrosstableResponse, type Ladder, type LadderMatch, type Standing } from "./gen/bete/v1/ladder_service_pb";
import { Crosstable } from "./crosstable";
import { rulesetName, signed } from "./format";
import { errorText } from "./errors";

const RESULTS_SHOWN = 20;
const ladders = createClient(LadderService, transport);

function ladderError(e: unknown): string {
  if (e instanceof ConnectError && e.code === Code.Unimplemented) return "this server runs no ladders";
  return errorText(e);
}

const fixed = (n: number, d = 1) => n.toFixed(d);
const when = (m: LadderMatch) => (m.ratedAt ? new Date(timestampMs(m.ratedAt)).toLocaleString() : m.startedAt ? new Date(timestampMs(m.startedAt)).toLocaleString() : "");

/** Replay links of a match's tables: once it is rated. Until then its tables are private and
 * their records withheld (a set's later rotations share the earlier ones' decks). */
function MatchTables({ m }: { m: LadderMatch }) {
  if (m.state !== LadderMatchState.RATED) return <span class="meta">in play</span>;
  return (
    <>
      {m.tables.map((t, i) => (
        <span key={t.tableId}>
          {i ? ", " : ""}
          <a href={`#/replay/${t.tableId}`}>replay{m.tables.length > 1 ? ` ${i + 1}` : ""}</a>
        </span>
      ))}
      {m.tables.length > 1 ? <> · <a href={`#/set/${m.tables.map((t) => t.tableId).join(",")}`} data-testid="set-link">side by side</a></> : null}
    </>
  );
}

function MatchLine({ m, ladderId }: { m: LadderMatch; ladderId: string }) {
  if (m.state !== LadderMatchState.RATED) {
    return (
      <li>
        <span class="when">{when(m)}</span>{" "}
        {m.entrants.map((e, i) => (
          <span key={e.botId}>{i ? ", " : ""}<a href={`#/ladders/${ladderId}/bot/${e.botId}`}>{e.botName || e.botId}</a></span>
        ))}{" "}
        — <MatchTables m={m} />
      </li>
    );
  }
  const order = [...m.entrants].sort((a, b) => a.place - b.place);
  return (
    <li>
      <span class="when">{when(m)}</span>{" "}
      {order.map((e, i) => (
        <span key={e.botId}>
          {i ? " · " : ""}
          {e.place}. <a href={`#/ladders/${ladderId}/bot/${e.botId}`}>{e.botName || e.botId}</a> {signed(e.net)}{" "}
          <span class="delta" title="rating mean before → after">({fixed(e.muBefore)} → {fixed(e.muAfter)})</span>
        </span>
      ))}{" "}
      — <MatchTables m={m} />
    </li>
  );
}

export function Ladders() {
  const [list, setList] = useState<Ladder[] | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    ladders.listLadders({}).then((r) => setList(r.ladders), (e) => setError(ladderError(e)));
  }, []);
  return (
    <main>
      <h1>Ladders</h1>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {list && !list.length ? <p>No ladder is declared on this server.</p> : null}
      {list?.length ? (
        <ul class="ladders" data-testid="ladders">
          {list.map((l) => (
            <li key={l.ladderId}>
              <a href={`#/ladders/${l.ladderId}`}>{l.ladderId}</a> — {rulesetName(l.ruleset)}, {l.seatCount} seats{l.duplicate ? ", duplicate" : ""} · {l.entrants} entrants, {l.online} online · {String(l.matchesRated)} matches rated
            </li>
          ))}
        </ul>
      ) : null}
    </main>
  );
}

/** The leaderboard's interval bars: mu ± 3 sigma on one scale for the whole board. */
function RatingBar({ s, lo, hi }: { s: Standing; lo: number; hi: number }) {
  const x = (v: number) => ((Math.min(hi, Math.max(lo, v)) - lo) / (hi - lo || 1)) * 100;
  const a = x(s.mu - 3 * s.sigma);
  const b = x(s.mu + 3 * s.sigma);
  return (
    <span class="ratingbar" role="img" aria-label={`rating ${fixed(s.rating)}, mean ${fixed(s.mu)}, interval ${fixed(s.mu - 3 * s.sigma)} to ${fixed(s.mu + 3 * s.sigma)}`}>
      <span class="interval" style={{ left: `${a}%`, width: `${Math.max(1, b - a)}%` }} />
      <span class="mean" style={{ left: `${x(s.mu)}%` }} />
    </span>
  );
}

export function LadderBoard({ id }: { id: string }) {
  const [ladder, setLadder] = useState<Ladder | null>(null);
  const [standings, setStandings] = useState<Standing[] | null>(null);
  const [results, setResults] = useState<LadderMatch[]>([]);
  const [crosstable, setCrosstable] = useState<GetCrosstableResponse | null>(null);
  const [error, setError] = useState("");
  // The results stream as it is: a marker that says "live" only while the stream answers.
  const [stream, setStream] = useState<{ state: "connecting" | "live" | "reconnecting"; why?: string }>({ state: "connecting" });

  useEffect(() => {
    const abort = new AbortController();
    const loadStandings = () =>
      ladders.getStandings({ ladderId: id, pageSize: 200 }, { signal: abort.signal }).then((r) => setStandings(r.standings), (e) => { if (!abort.signal.aborted) setError(ladderError(e)); });
    // A server without GetCrosstable (older) shows no crosstable; the rest of the page stands.
    const loadCrosstable = () =>
      ladders.getCrosstable({ ladderId: id }, { signal: abort.signal }).then(setCrosstable, () => {});
    ladders.getLadder({ ladderId: id }, { signal: abort.signal }).then((r) => setLadder(r.ladder ?? null), (e) => { if (!abort.signal.aborted) setError(ladderError(e)); });
    loadStandings();
    loadCrosstable();
    ladders.listLadderMatches({ ladderId: id, pageSize: RESULTS_SHOWN }, { signal: abort.signal }).then((r) => setResults(r.matches), () => {});
    // The live results: each rated match moves the board, so it is read again.
    (async () => {
      let backoff = 500;
      while (!abort.signal.aborted) {
        try {
          for await (const m of ladders.watchLadderResults({ ladderId: id }, { signal: abort.signal })) {
            setStream({ state: "live" });
            backoff = 500;
            if (m.kind.case === "rated") {
              const rated = m.kind.value;
              setResults((rs) => [rated, ...rs.filter((r) => r.matchId !== rated.matchId)].slice(0, RESULTS_SHOWN));
              loadStandings();
              loadCrosstable();
            }
          }
          setStream({ state: "reconnecting", why: "the stream ended" });
        } catch (e) {
          if (abort.signal.aborted || (e instanceof ConnectError && [Code.NotFound, Code.Unimplemented].includes(e.code))) return;
          setStream({ state: "reconnecting", why: errorText(e) });
        }
        await new Promise((ok) => setTimeout(ok, backoff));
        backoff = Math.min(backoff * 2, 8000);
      }
    })();
    return () => abort.abort();
  }, [id]);

  const lo = Math.min(0, ...(standings ?? []).map((s) => s.mu - 3 * s.sigma));
  const hi = Math.max(50, ...(standings ?? []).map((s) => s.mu + 3 * s.sigma));
  return (
    <main>
      <h1>Ladder <code>{id}</code></h1>
      {ladder ? <p class="meta">{rulesetName(ladder.ruleset)} · {ladder.seatCount} seats · {ladder.dealsPerMatch} deals a match{ladder.duplicate ? " · duplicate" : ""} · {ladder.entrants} entrants, {ladder.online} online</p> : null}
      {error ? <p class="error" role="alert">{error}</p> : null}
      {standings ? (
        <table class="standings" data-testid="standings">
          <caption>Leaderboard: rating = mean − 3 σ; the bar spans mean ± 3 σ, the tick is the mean</caption>
          <thead><tr><th scope="col">#</th><th scope="col">Bot</th><th scope="col">Rating</th><th scope="col" class="barcol">Interval</th><th scope="col">Matches</th><th scope="col">Jetons / deal</th></tr></thead>
          <tbody>
            {standings.map((s) => (
              <tr key={s.botId} class={s.active ? "" : "inactive"}>
                <td>{s.rank}</td>
                <td><a href={`#/ladders/${id}/bot/${s.botId}`} title={s.botName || s.botId}>{s.botName || s.botId}</a>{!s.house && s.botVersion && s.botVersion !== "1" ? ` v${s.botVersion}` : ""}{s.house ? " (house)" : ""}{s.active ? "" : <span class="left"> (left the ladder)</span>}</td>
                <td class="num">{fixed(s.rating, 2)}</td>
                <td class="barcol"><RatingBar s={s} lo={lo} hi={hi} /></td>
                <td class="num">{s.matches}</td>
                <td class="num">{fixed(s.meanJetonsPerDeal, 2)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <section aria-label="latest results">
        <h2>Latest results <span class={`conn ${stream.state}`} role="status" data-testid="ladder-conn">{stream.state === "live" ? "● live" : stream.state === "connecting" ? "connecting…" : `reconnecting…${stream.why ? ` (${stream.why})` : ""}`}</span></h2>
        {results.length ? <ol class="results" data-testid="results">{results.map((m) => <MatchLine key={m.matchId} m={m} ladderId={id} />)}</ol> : <p>No rated match yet.</p>}
      </section>
      {crosstable ? <Crosstable ladderId={id} table={crosstable} entrants={standings?.length ?? 0} /> : null}
    </main>
  );
}

/** A bot's rating over time (mean, and the conservative rating), drawn from its rated matches. */
function RatingPlot({ points }: { points: { t: number; mu: number; sigma: number }[] }) {
  if (points.length < 2) return <p>Too few rated matches for a plot.</p>;
  const w = 600, h = 200, pad = 30;
  const t0 = points[0].t, t1 = points[points.length - 1].t;
  const vs = points.flatMap((p) => [p.mu + 3 * p.sigma, p.mu - 3 * p.sigma]);
  const v0 = Math.min(...vs), v1 = Math.max(...vs);
  const X = (t: number) => pad + ((t - t0) / (t1 - t0 || 1)) * (w - 2 * pad);
  const Y = (v: number) => h - pad - ((v - v0) / (v1 - v0 || 1)) * (h - 2 * pad);
  const line = (f: (p: { mu: number; sigma: number }) => number) => points.map((p) => `${X(p.t).toFixed(1)},${Y(f(p)).toFixed(1)}`).join(" ");
  const band = points.map((p) => `${X(p.t).toFixed(1)},${Y(p.mu + 3 * p.sigma).toFixed(1)}`).concat([...points].reverse().map((p) => `${X(p.t).toFixed(1)},${Y(p.mu - 3 * p.sigma).toFixed(1)}`)).join(" ");
  const last = points[points.length - 1];
  return (
    <svg class="plot" viewBox={`0 0 ${w} ${h}`} role="img" aria-label={`rating over ${points.length} matches: mean from ${fixed(points[0].mu)} to ${fixed(last.mu)}, rating now ${fixed(last.mu - 3 * last.sigma)}`}>
      <polygon points={band} class="band" />
      <polyline points={line((p) => p.mu)} class="mu" />
      <polyline points={line((p) => p.mu - 3 * p.sigma)} class="rating" />
      <text x={4} y={Y(v1) + 4}>{fixed(v1, 0)}</text>
      <text x={4} y={Y(v0)}>{fixed(v0, 0)}</text>
    </svg>
  );
}

/** A bot's line of a ladder's standings, read page by page (a board has few hundred lines). */
async function standingOf(ladderId: string, botId: string, signal?: AbortSignal): Promise<Standing | undefined> {
  let pageToken = "";
  for (let i = 0; i < 20; i++) {
    const r = await ladders.getStandings({ ladderId, pageSize: 200, pageToken }, { signal });
    const s = r.standings.find((s) => s.botId === botId);
    if (s || !r.nextPageToken) return s;
    pageToken = r.nextPageToken;
  }
  return undefined;
}

function Summary({ s }: { s: Standing }) {
  return (
    <dl class="summary" data-testid="bot-summary">
      <div><dt>Rating</dt><dd>{fixed(s.rating, 2)}</dd></div>
      <div><dt>Rank</dt><dd>{s.rank}</dd></div>
      <div><dt>Matches</dt><dd>{s.matches}</dd></div>
      <div><dt>Mean jetons per deal</dt><dd>{fixed(s.meanJetonsPerDeal, 2)}</dd></div>
      <div><dt>Owner</dt><dd>{s.house ? "house (the server)" : s.ownerId || "—"}</dd></div>
      <div><dt>Version</dt><dd>{s.botVersion || "—"}</dd></div>
      {s.active ? null : <div><dt>Status</dt><dd>left the ladder</dd></div>}
    </dl>
  );
}

/** A bot across the server's ladders: its line on each, linking to its page there. */
export function BotAnywhere({ botId }: { botId: string }) {
  const [found, setFound] = useState<{ ladder: Ladder; s: Standing }[] | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    const abort = new AbortController();
    (async () => {
      try {
        const ls = (await ladders.listLadders({}, { signal: abort.signal })).ladders;
        const out: { ladder: Ladder; s: Standing }[] = [];
        for (const l of ls) {
          const s = await standingOf(l.ladderId, botId, abort.signal);
          if (s) out.push({ ladder: l, s });
        }
        setFound(out);
      } catch (e) { if (!abort.signal.aborted) setError(ladderError(e)); }
    })();
    return () => abort.abort();
  }, [botId]);
  const name = found?.[0]?.s.botName ?? botId;
  return (
    <main>
      <h1>{name}</h1>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {found && !found.length ? <p>This bot is on no ladder of this server.</p> : null}
      {found?.map(({ ladder, s }) => (
        <section key={ladder.ladderId}>
          <h2><a href={`#/ladders/${ladder.ladderId}/bot/${encodeURIComponent(botId)}`}>{ladder.ladderId}</a> — {rulesetName(ladder.ruleset)}</h2>
          <Summary s={s} />
        </section>
      ))}
    </main>
  );
}

export function BotPage({ ladderId, botId }: { ladderId: string; botId: string }) {
  const [matches, setMatches] = useState<LadderMatch[] | null>(null);
  const [standing, setStanding] = useState<Standing | undefined>(undefined);
  const [error, setError] = useState("");
  useEffect(() => {
    ladders.listLadderMatches({ ladderId, botId, pageSize: 200 }).then((r) => setMatches(r.matches), (e) => setError(ladderError(e)));
    standingOf(ladderId, botId).then(setStanding, () => {});
  }, [ladderId, botId]);
  const mine = (matches ?? []).map((m) => ({ m, e: m.entrants.find((e) => e.botId === botId) }));
  const points = mine
    .filter(({ m, e }) => e && m.ratedAt)
    .map(({ m, e }) => ({ t: timestampMs(m.ratedAt!), mu: e!.muAfter, sigma: e!.sigmaAfter }))
    .sort((a, b) => a.t - b.t);
  const name = standing?.botName || (mine.find(({ e }) => e)?.e?.botName ?? botId);
  return (
    <main>
      <h1>{name} <span class="meta">on <a href={`#/ladders/${ladderId}`}>{ladderId}</a></span></h1>
      {error ? <p class="error" role="alert">{error}</p> : null}
      {standing ? <Summary s={standing} /> : null}
      <h2>Rating over time</h2>
      <p class="meta">Line: mean; dashed: rating (mean − 3 σ); band: mean ± 3 σ.</p>
      <RatingPlot points={points} />
      <h2>Recent matches</h2>
      {matches?.length ? <ol class="results">{matches.map((m) => <MatchLine key={m.matchId} m={m} ladderId={ladderId} />)}</ol> : <p>No match yet.</p>}
    </main>
  );
}
