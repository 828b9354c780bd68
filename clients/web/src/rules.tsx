// What a visitor needs to follow a game: each ruleset in a few lines with the rulebook's
// section (served by the server at /RULES.md), and hints on the game's own words.
import { Ruleset } from "./gen/bete/v1/cards_pb";
import { rulesetName } from "./format";

const SUMMARY: Partial<Record<Ruleset, [string, string]>> = {
  [Ruleset.BETE]: ["1", "Five cards each and a turn-up for trump. Players bid to play; the declarer must take the most tricks (or the first two of a split), and a player may say contre against them. A player who fails is bête: they pay a bête, staked on later deals. The dealer may turn a second card (the Curieuse) when all pass."],
  [Ruleset.BETE_ACE_HIGH]: ["2", "Bête with the Ace ranking high, and a pool paid to whoever holds the Ace of trumps."],
  [Ruleset.BEAST]: ["3", "No bidding: stakes go into three heaps, the King, the Play and the Triolet, taken by the King of trumps, by tricks, and by three of a kind."],
  [Ruleset.BESTE_BOER]: ["4", "Each player drops, stands or exchanges cards from the talon; the dealer may take up the turn-up and discard. Each trick takes a share of the pot; a player who stays and takes no trick is bête. A deal with a small pot is a Muss: nobody may drop."],
  [Ruleset.LANTERLUI]: ["5", "Beste Boer with flushes (the Lanterlui, five of trumps) and a challenge: dropped players may challenge a lone stayer."],
  [Ruleset.BESTER_BUBE]: ["6", "Exchange game with bowers: the Jack of trumps is the best card, the Jack of the same colour next. Bêtes may wait in a queue and enter the pot one by one."],
  [Ruleset.MOUCHE]: ["12", "One exchange round; tricks are paid from the basket pro rata. A player who stays and takes no trick makes the mouche and pays the pool into the next deal."],
  [Ruleset.MISTIGRI]: ["13", "Mouche where the Jack of clubs (Mistigri) is the top trump, whatever the trump suit."],
  [Ruleset.LOO]: ["14", "Three to ten players; Pam (the Jack of clubs) is the highest trump; flushes win outright; a player who stands and takes no trick is looed and pays into the next pool."],
  [Ruleset.RAMS]: ["15", "32 cards and a widow; players stay in or pass; the pool is shared by tricks, and a player who stays and takes no trick pays the whole pool. General Rams: one player undertakes all five tricks."],
};

/** The rules panel of a ruleset: a summary, and the rulebook's section. */
export function RulesPanel({ ruleset }: { ruleset: Ruleset }) {
  const s = SUMMARY[ruleset];
  if (!s) return null;
  return (
    <details class="rules" data-testid="rules">
      <summary>How {rulesetName(ruleset)} is played</summary>
      <p>{s[1]}</p>
      <p>The full rules: <a href="/RULES.md" target="_blank" rel="noopener">the rulebook, section {s[0]}</a>. <a href="#/glossary">Words of the game</a>.</p>
    </details>
  );
}

export const GLOSSARY: [string, string][] = [
  ["bête", "the forfeit of a player who failed (took too few tricks, or none): paid and staked on later deals"],
  ["bête queue", "bêtes waiting their turn to enter the pot, one a deal (Bester Bube's successive pay-off)"],
  ["bête staked", "the bête played for in this deal"],
  ["contre", "a player's challenge to the declarer, playing against them for a doubled stake"],
  ["Curieuse", "when everyone passes, the dealer sets the turn-up aside and turns the next card"],
  ["declarer", "the player who undertook to win the deal"],
  ["dévole", "a declarer who wanted all five tricks and took none"],
  ["fiches", "counters worth several jetons each (5 by default in Bête)"],
  ["heaps", "Beast's three stakes: the King (the King of trumps), the Play (tricks) and the Triolet (three of a kind)"],
  ["jetons", "the unit of money; balances are in jetons"],
  ["King/Ace pool", "a pool paid to whoever holds the King (or Ace) of trumps"],
  ["Muss", "a deal in which nobody may drop out (the first deal, or when the pot is small)"],
  ["pot", "the stakes of the deal, paid out by tricks"],
  ["talon", "the cards left after the deal, drawn from when exchanging"],
  ["turn-up", "the card turned after the deal: its suit is trump"],
  ["vole", "all five tricks taken by one player"],
];

/** The game's word `word` with its meaning as a hint (a title, and an accessible description). */
export function Term({ word, children }: { word: string; children?: preact.ComponentChildren }) {
  const hint = GLOSSARY.find(([w]) => w.toLowerCase() === word.toLowerCase())?.[1];
  if (!hint) return <>{children ?? word}</>;
  return <abbr class="term" title={`${word}: ${hint}`} tabIndex={0}>{children ?? word}</abbr>;
}

export function Glossary() {
  return (
    <main>
      <h1>Words of the game</h1>
      <dl class="glossary" data-testid="glossary">
        {GLOSSARY.map(([w, d]) => <div key={w}><dt>{w}</dt><dd>{d}</dd></div>)}
      </dl>
      <p>The full rules of every game: <a href="/RULES.md" target="_blank" rel="noopener">the rulebook</a>.</p>
    </main>
  );
}
