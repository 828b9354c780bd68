// The table as drawn for a spectator (live) or with every hand face up (replay, a settled deal).
import type { Pools, SeatView } from "./gen/bete/v1/game_pb";
import { Card, CardBack, cardText, suitSymbol } from "./cards";
import { BotLink } from "./links";
import { Term } from "./rules";
import { actionText, phaseName, signed } from "./format";
import { Countdown } from "./countdown";

export interface BoardProps {
  view: SeatView;
  names: string[];
  /** The seats' bot ids, for links to their pages. */
  ids?: string[];
  strikes?: number[];
  /** Hands to draw face up, by seat; a seat without one is drawn face down. */
  hands?: (string[] | undefined)[];
  /** The deals of the match: planned (a live table: `rounds` × seats, more while the pots must
   * clear) or played (a replay). */
  deals?: { count: number; planned: boolean };
  /** When the seat to act must have acted (ms since the epoch), if known. */
  deadline?: number;
}

function PoolsLine({ pools }: { pools?: Pools }) {
  if (!pools) return null;
  const items: [string, string][] = [];
  if (pools.pot) items.push(["pot", `${pools.pot}`]);
  if (pools.fiches) items.push(["fiches", `${pools.fiches}`]);
  if (pools.kingPool) items.push(["King/Ace pool", `${pools.kingPool}`]);
  if (pools.stakedBete !== undefined) items.push(["bête staked", `${pools.stakedBete}`]);
  if (pools.beteQueue.length) items.push(["bête queue", pools.beteQueue.join(", ")]);
  if (pools.heapKing || pools.heapPlay || pools.heapTriolet) {
    items.push(["heaps", `King ${pools.heapKing} · Play ${pools.heapPlay} · Triolet ${pools.heapTriolet}`]);
  }
  if (pools.beteStreak) items.push(["bête streak", `${pools.beteStreak}`]);
  if (pools.dealsSinceWon) items.push(["deals since won", `${pools.dealsSinceWon}`]);
  if (!items.length) return <p class="pools">Pools empty.</p>;
  return (
    <dl class="pools">
      {items.map(([k, v]) => (
        <div key={k}><dt><Term word={k} /></dt><dd>{v}</dd></div>
      ))}
    </dl>
  );
}

/** "Deal 3 of 8"; past the planned deals, why the match goes on. */
export function dealOf(n: number, deals?: { count: number; planned: boolean }): string {
  if (!deals || !deals.count) return `Deal ${n}`;
  if (n <= deals.count) return `Deal ${n} of ${deals.count}`;
  return `Deal ${n} (past the ${deals.count} planned, until the pots are clear)`;
}

export function Board({ view, names, ids, strikes, hands, deals, deadline }: BoardProps) {
  const trick = view.tricks[view.tricks.length - 1];
  const toAct = view.toAct;
  return (
    <div class="board">
      <section class="center" aria-label="table centre">
        <p class="status">
          <span data-testid="deal-of">{dealOf(view.deal + 1, deals)}</span> · {phaseName(view.phase)}
          {view.muss ? <> · <Term word="Muss" /></> : ""}
          {toAct !== undefined && !view.matchOver ? (
            <>
              {" "}· <strong>#{toAct + 1} {names[toAct] ?? ""}</strong> to act
              {deadline ? <> · <Countdown until={deadline} /></> : null}
            </>
          ) : null}
        </p>
        <div class="row">
          <div class="turnup">
            <span class="label">Turn-up</span>
            {view.turnUp && view.turnUpTaken ? (
              <span class="taken" data-testid="turnup-taken">taken up by the dealer ({cardText(view.turnUp)})</span>
            ) : view.turnUp ? <span data-testid="turnup"><Card code={view.turnUp} /></span> : <span class="none">none</span>}
            {view.setAsideTurnUps.length ? (
              <span class="aside">
                set aside: {view.setAsideTurnUps.map((c) => <Card key={c} code={c} small />)}
              </span>
            ) : null}
            <span class="trump">trump: {suitSymbol(view.trump) || "none"}</span>
            {view.talonLen ? <span class="talon">talon: {view.talonLen}</span> : null}
          </div>
          <div class="trick" aria-label="current trick" data-testid="trick">
            <span class="label">Trick {view.tricks.length || ""}</span>
            {trick?.plays.length ? (
              <ol>
                {trick.plays.map((p) => (
                  <li key={p.seat}>
                    <span class="who">#{p.seat + 1} {names[p.seat] ?? ""}</span>
                    {p.faceDown && !p.card ? <CardBack /> : <Card code={p.card} />}
                  </li>
                ))}
              </ol>
            ) : (
              <span class="none">no card yet</span>
            )}
          </div>
        </div>
        <PoolsLine pools={view.pools} />
      </section>
      <ol class="seats" aria-label="seats">
        {view.seatStates.map((s) => {
          const hand = hands?.[s.seat];
          const acting = toAct === s.seat && !view.matchOver;
          return (
            <li
              key={s.seat}
              class={`seat${acting ? " acting" : ""}${s.dropped ? " dropped" : ""}`}
              aria-current={acting ? "true" : undefined}
              data-testid={`seat-${s.seat}`}
            >
              <header>
                <span class="name" title={names[s.seat] || "empty seat"}><span class="seatno" aria-label={`seat ${s.seat + 1}`}>{s.seat + 1}</span> {names[s.seat] ? <BotLink id={ids?.[s.seat] ?? ""} name={names[s.seat]} /> : "empty"}</span>
                <span class="badges">
                  {s.seat === view.dealer ? <span class="badge" title="dealer">D</span> : null}
                  {s.declarer ? <span class="badge" title="declarer">declarer</span> : null}
                  {s.contrer ? <span class="badge" title="contre">contre</span> : null}
                  {s.dropped ? <span class="badge">dropped out</span> : null}
                  {acting ? <span class="badge turn">to act</span> : null}
                </span>
              </header>
              <p class="numbers">
                <span>balance <b>{signed(s.balance)}</b></span>
                <span>tricks <b>{s.tricks}</b></span>
                {strikes?.[s.seat] ? <span>strikes <b>{strikes[s.seat]}</b></span> : null}
              </p>
              <div class="hand" data-testid={`hand-${s.seat}`} aria-label={hand ? "hand, face up" : `hand, ${s.handLen} cards face down`}>
                {hand
                  ? hand.map((c) => <Card key={c} code={c} small />)
                  : Array.from({ length: s.handLen }, (_, i) => <CardBack key={i} small />)}
              </div>
              {s.lastSpoke ? <p class="spoke">{actionText(s.lastSpoke)}</p> : null}
            </li>
          );
        })}
      </ol>
    </div>
  );
}
