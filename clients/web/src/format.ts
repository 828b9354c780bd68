// Words for what the schema carries: rulesets, phases, actions and events as readable text.
import { ActionKind, Ruleset, type Action } from "./gen/bete/v1/cards_pb";
import { BidderOutcome, Phase, type Event } from "./gen/bete/v1/game_pb";
import { TableState } from "./gen/bete/v1/table_pb";
import { cardText } from "./cards";

export const RULESETS: [Ruleset, string][] = [
  [Ruleset.BETE, "Bête"],
  [Ruleset.BETE_ACE_HIGH, "Bête, Ace high"],
  [Ruleset.BEAST, "Beast"],
  [Ruleset.BESTE_BOER, "Beste Boer"],
  [Ruleset.LANTERLUI, "Lanterlui"],
  [Ruleset.BESTER_BUBE, "Bester Bube"],
  [Ruleset.MOUCHE, "Mouche"],
  [Ruleset.MISTIGRI, "Mistigri"],
  [Ruleset.LOO, "Five-card Loo"],
  [Ruleset.RAMS, "Rams"],
];

export function rulesetName(r: Ruleset): string {
  return RULESETS.find(([v]) => v === r)?.[1] ?? "unknown game";
}

export const STATES: [TableState, string][] = [
  [TableState.WAITING, "waiting"],
  [TableState.PLAYING, "playing"],
  [TableState.FINISHED, "finished"],
];

export function stateName(s: TableState): string {
  return STATES.find(([v]) => v === s)?.[1] ?? "unknown";
}

export function phaseName(p: Phase): string {
  switch (p) {
    case Phase.AWAITING_PLAYERS: return "waiting for players";
    case Phase.AWAITING_DECK: return "shuffling";
    case Phase.BIDDING: return "bidding";
    case Phase.EXCHANGE: return "exchanging";
    case Phase.DEALER_DISCARD: return "dealer discards";
    case Phase.CHALLENGE: return "challenge";
    case Phase.TRICK: return "playing tricks";
    case Phase.MATCH_OVER: return "match over";
    default: return "";
  }
}

export function actionText(a: Action | undefined): string {
  if (!a) return "";
  const cards = a.cards.length ? " " + a.cards.map(cardText).join(" ") : "";
  switch (a.kind) {
    case ActionKind.PASS: return "passes";
    case ActionKind.PLAY: return "plays (je joue)";
    case ActionKind.CONTRE: return "says contre";
    case ActionKind.DROP: return "drops";
    case ActionKind.STAND: return "stands";
    case ActionKind.EXCHANGE: return a.cards.length ? `exchanges${cards}` : "exchanges";
    case ActionKind.DISCARD: return `discards${cards}`;
    case ActionKind.CHALLENGE: return "challenges";
    case ActionKind.DECLINE: return "declines";
    case ActionKind.CARD: return `plays${cards}`;
    case ActionKind.HIDDEN: return a.cards.length ? `leads face down${cards}` : "leads face down";
    case ActionKind.WIDOW: return "takes the widow";
    case ActionKind.GENERAL: return "announces General Rams";
    default: return a.text || "acts";
  }
}

function outcome(o: BidderOutcome): string {
  switch (o) {
    case BidderOutcome.WIN: return "wins";
    case BidderOutcome.WIN_VOLE: return "wins the vole";
    case BidderOutcome.NULL: return "makes no gain (null)";
    case BidderOutcome.LOSE: return "is bête";
    case BidderOutcome.LOSE_DEVOLE: return "is bête (dévole)";
    default: return "";
  }
}

const signed = (n: bigint) => (n > 0n ? `+${n}` : `${n}`);

/** One line of the event log, or "" for events not worth a line. */
export function describe(e: Event, name: (seat: number) => string): string {
  const b = e.body;
  const auto = e.auto ? " (timed out: auto-move)" : "";
  switch (b.case) {
    case "dealStarted": {
      const v = b.value;
      const up = v.turnUp ? `, turn-up ${cardText(v.turnUp)}` : "";
      return `Deal ${v.deal + 1} dealt by ${name(v.dealer)}${up}${v.muss ? " (Muss)" : ""}.`;
    }
    case "spoke": return `${name(b.value.seat)} ${actionText(b.value.action)}${auto}.`;
    case "curieuse": return `Curieuse: ${cardText(b.value.setAside)} set aside, new turn-up ${cardText(b.value.turnUp)}.`;
    case "exchanged": return `${name(b.value.seat)} exchanges ${b.value.count} card${b.value.count === 1 ? "" : "s"}${auto}.`;
    case "tookTurnUp": return `${name(b.value.seat)} takes up the turn-up ${cardText(b.value.turnUp)}${auto}.`;
    case "flushShown": return `${name(b.value.seat)} shows a flush: ${b.value.cards.map(cardText).join(" ")}.`;
    case "cardPlayed": return `${name(b.value.seat)} plays ${cardText(b.value.card)}${auto}.`;
    case "hiddenLead": return `${name(b.value.seat)} leads a card face down${auto}.`;
    case "trickWon": return `Trick ${b.value.trick + 1} to ${name(b.value.winner)}.`;
    case "dealSettled": {
      const v = b.value;
      const r = v.result?.outcome;
      let what = "";
      switch (r?.case) {
        case "bidders": {
          what = `${name(r.value.declarer)} ${outcome(r.value.declarerOutcome)}`;
          if (r.value.contrer !== undefined) what += `; ${name(r.value.contrer)} ${outcome(r.value.contrerOutcome)}`;
          break;
        }
        case "allPassed": what = "everyone passed"; break;
        case "heaps": what = "heaps taken"; break;
        case "played": what = "tricks played"; break;
        case "loneStayer": what = `${name(r.value.seat)} stayed alone and takes the pot`; break;
        case "carried": what = "nobody stayed; the pot carries"; break;
        case "flush": what = `${name(r.value.seat)} wins with a flush`; break;
        case "dealerTakesPot": what = `${name(r.value.seat)} takes the pot`; break;
      }
      const net = v.net.map((n, i) => `${name(i)} ${signed(n)}`).join(", ");
      return `Deal ${v.deal + 1} settled: ${what}. ${net}.`;
    }
    case "matchEnded": return `Match over. Final: ${b.value.balances.map((n, i) => `${name(i)} ${signed(n)}`).join(", ")}.`;
    case "seatTaken": return `${b.value.botName || "A bot"} takes seat ${(b.value.seat ?? 0) + 1}.`;
    case "seatLeft": return `${name(b.value.seat)} leaves.`;
    case "matchStarted": return "The match begins.";
    case "strikeCounted": return `${name(b.value.seat)} timed out (strike ${b.value.strikes}).`;
    default: return "";
  }
}

export { signed };
