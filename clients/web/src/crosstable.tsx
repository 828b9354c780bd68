// A ladder's crosstable (LadderService.GetCrosstable): every pair of entrants that met in rated
// matches (sets), their meetings, and the mean net difference per deal with its 95 % interval,
// each name linking to the bot's page on the ladder. On a phone the bar column goes and the
// names wrap: nothing reaches past the screen's edge.
import type { CrosstablePair, GetCrosstableResponse } from "./gen/bete/v1/ladder_service_pb";

/** A figure with its sign, two decimals (the CLI's `bete ladder crosstable` gives the same). */
export const perDeal = (v: number) => `${v > 0 ? "+" : ""}${v.toFixed(2)}`;

function Name({ ladderId, id, name }: { ladderId: string; id: string; name: string }) {
  return <a href={`#/ladders/${encodeURIComponent(ladderId)}/bot/${encodeURIComponent(id)}`} title={name || id}>{name || id}</a>;
}

/** The interval as a bar on one scale for the whole table, with a tick at 0 (no difference). */
function DiffBar({ p, span }: { p: CrosstablePair; span: number }) {
  const x = (v: number) => 50 + (Math.max(-span, Math.min(span, v)) / (span || 1)) * 50;
  const a = x(p.intervalLow), b = x(p.intervalHigh);
  return (
    <span class="ratingbar diffbar" aria-hidden="true">
      <span class="zero" />
      <span class="interval" style={{ left: `${a}%`, width: `${Math.max(1, b - a)}%` }} />
      <span class="mean" style={{ left: `${x(p.meanNetDifferencePerDeal)}%` }} />
    </span>
  );
}

function interval(p: CrosstablePair): string {
  return p.meetings > 1 ? `${perDeal(p.intervalLow)} to ${perDeal(p.intervalHigh)}` : "one meeting";
}

/** `entrants`: the ladder's entrants known to the page, for "N of M pairs". */
export function Crosstable({ ladderId, table, entrants }: { ladderId: string; table: GetCrosstableResponse; entrants: number }) {
  const possible = (entrants * (entrants - 1)) / 2;
  const span = Math.max(0.5, ...table.pairs.flatMap((p) => [Math.abs(p.intervalLow), Math.abs(p.intervalHigh)]));
  return (
    <section aria-label="crosstable" data-testid="crosstable">
      <h2>Crosstable</h2>
      <p class="meta" data-testid="crosstable-count">
        {table.pairs.length} {table.pairs.length === 1 ? "pair has" : "pairs have"} met
        {possible >= table.pairs.length && possible > 0 ? ` (of ${possible} pairs of ${entrants} entrants)` : ""} in {String(table.matchesRated)} rated {table.matchesRated === 1n ? "match" : "matches"}.
        {" "}A − B is the mean over their meetings of A's net minus B's, in jetons per deal; the interval is 95 %.
      </p>
      {table.pairs.length ? (
        <table class="standings crosstable">
          <thead>
            <tr>
              <th scope="col">Bots (A · B)</th>
              <th scope="col" class="num">Met</th>
              <th scope="col" class="num hide-phone" title="meetings A finished ahead, level, B ahead">A · = · B</th>
              <th scope="col" class="num">A − B / deal</th>
              <th scope="col" class="num">95 % interval</th>
              <th scope="col" class="barcol">Interval (0 marked)</th>
            </tr>
          </thead>
          <tbody>
            {table.pairs.map((p) => (
              <tr key={`${p.botA} ${p.botB}`} data-pair={`${p.botA} ${p.botB}`}>
                <td class="pair"><Name ladderId={ladderId} id={p.botA} name={p.botAName} /> <span class="vs">·</span> <Name ladderId={ladderId} id={p.botB} name={p.botBName} /></td>
                <td class="num" data-testid="meetings">{p.meetings}</td>
                <td class="num hide-phone">{p.aAhead} · {p.level} · {p.bAhead}</td>
                <td class="num" data-testid="mean">{perDeal(p.meanNetDifferencePerDeal)}</td>
                <td class="num" data-testid="interval">{interval(p)}</td>
                <td class="barcol"><DiffBar p={p} span={span} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : <p>No pair has met in a rated match yet.</p>}
    </section>
  );
}
