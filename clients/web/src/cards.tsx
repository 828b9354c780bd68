// Cards as the page draws them: rank and suit symbol, the suit also as a letter and in the
// accessible name, so suits are told apart without colour.
const RANKS: Record<string, string> = {
  "2": "two", "3": "three", "4": "four", "5": "five", "6": "six", "7": "seven", "8": "eight",
  "9": "nine", T: "ten", J: "jack", Q: "queen", K: "king", A: "ace",
};
const SUITS: Record<string, { symbol: string; name: string; red: boolean }> = {
  S: { symbol: "♠", name: "spades", red: false },
  H: { symbol: "♥", name: "hearts", red: true },
  D: { symbol: "♦", name: "diamonds", red: true },
  C: { symbol: "♣", name: "clubs", red: false },
};

/** "king of spades" for "KS". */
export function cardName(code: string): string {
  const r = RANKS[code[0]];
  const s = SUITS[code[1]];
  return r && s ? `${r} of ${s.name}` : code;
}

/** "K♠" for "KS": for running text (the event log). */
export function cardText(code: string): string {
  const s = SUITS[code[1]];
  if (!s) return code;
  return `${code[0] === "T" ? "10" : code[0]}${s.symbol}`;
}

export function suitSymbol(suit: number): string {
  return ["", "♠ spades", "♥ hearts", "♦ diamonds", "♣ clubs"][suit] ?? "";
}

export function Card({ code, small }: { code: string; small?: boolean }) {
  const s = SUITS[code[1]];
  const rank = code[0] === "T" ? "10" : code[0];
  return (
    <span
      class={`card${s?.red ? " red" : ""}${small ? " small" : ""}`}
      role="img"
      aria-label={cardName(code)}
      title={cardName(code)}
      data-card={code}
    >
      <span class="rank" aria-hidden="true">{rank}</span>
      <span class="suit" aria-hidden="true">{s?.symbol ?? "?"}</span>
    </span>
  );
}

/** A card whose face this viewer may not see. */
export function CardBack({ small }: { small?: boolean }) {
  return <span class={`card back${small ? " small" : ""}`} role="img" aria-label="face-down card" data-face="down" />;
}
