//! The terminal picture of a table. Every function here is pure (view and events in, text
//! out), so the picture can be snapshot-tested; the commands only decide when to print it.

use std::fmt::Write as _;

use bete_api::pb;
use pb::event::Body;

/// Text from the network (bot names, ids, reasons) made safe to print: control characters and
/// Unicode format characters (bidi overrides, zero-width characters, the BOM, tags), which could
/// move the cursor, recolour the terminal or reorder what is shown, become `\u{..}` escapes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || is_format(c) {
            let _ = write!(out, "\\u{{{:04x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// Unicode general category Cf (format), plus the line and paragraph separators.
fn is_format(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{0600}'..='\u{0605}' | '\u{061C}' | '\u{06DD}' | '\u{070F}'
        | '\u{0890}'..='\u{0891}' | '\u{08E2}' | '\u{180E}' | '\u{200B}'..='\u{200F}'
        | '\u{2028}'..='\u{202E}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206F}'
        | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}' | '\u{110BD}' | '\u{110CD}'
        | '\u{13430}'..='\u{1343F}' | '\u{1BCA0}'..='\u{1BCA3}' | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0001}' | '\u{E0020}'..='\u{E007F}')
}

/// The markers of a table that is not an ordinary one: a ladder table, a chosen seed.
pub fn table_marks(table: &pb::Table) -> Vec<String> {
    let mut marks = Vec::new();
    if !table.ladder_id.is_empty() {
        marks.push(format!("ladder {}", escape(&table.ladder_id)));
    }
    if table.seed_chosen {
        marks.push("chosen seed (not rated; its creator can know every deck)".into());
    }
    marks
}

/// A card code ("KS", "TH") with its suit symbol ("K♠", "10♥"). Empty or unknown codes come
/// back as "??" (a face-down card hidden from the viewer).
pub fn card(code: &str) -> String {
    let code = code.trim();
    if code.len() != 2 {
        return "??".into();
    }
    let mut chars = code.chars();
    let (Some(rank), Some(suit)) = (chars.next(), chars.next()) else {
        return "??".into();
    };
    let rank = match rank.to_ascii_uppercase() {
        'T' => "10".to_string(),
        r => r.to_string(),
    };
    let suit = match suit.to_ascii_uppercase() {
        'S' => '♠',
        'H' => '♥',
        'D' => '♦',
        'C' => '♣',
        _ => '?',
    };
    format!("{rank}{suit}")
}

/// Cards joined with spaces.
pub fn cards(codes: &[String]) -> String {
    codes.iter().map(|c| card(c)).collect::<Vec<_>>().join(" ")
}

/// The symbol of a trump suit.
pub fn suit(suit: i32) -> &'static str {
    match pb::Suit::try_from(suit) {
        Ok(pb::Suit::Spades) => "♠",
        Ok(pb::Suit::Hearts) => "♥",
        Ok(pb::Suit::Diamonds) => "♦",
        Ok(pb::Suit::Clubs) => "♣",
        _ => "none",
    }
}

/// The text id of a ruleset ("bete", "beste-boer").
pub fn ruleset(ruleset: i32) -> &'static str {
    use pb::Ruleset as R;
    match R::try_from(ruleset) {
        Ok(R::Bete) => "bete",
        Ok(R::BeteAceHigh) => "bete-ace-high",
        Ok(R::Beast) => "beast",
        Ok(R::BesteBoer) => "beste-boer",
        Ok(R::Lanterlui) => "lanterlui",
        Ok(R::BesterBube) => "bester-bube",
        Ok(R::Mouche) => "mouche",
        Ok(R::Mistigri) => "mistigri",
        Ok(R::Loo) => "loo",
        Ok(R::Rams) => "rams",
        _ => "?",
    }
}

/// An action as a person reads it: the server's text form with suit symbols.
pub fn action(action: &pb::Action) -> String {
    let verb = pb::ActionKind::try_from(action.kind)
        .map(|k| {
            k.as_str_name()
                .trim_start_matches("ACTION_KIND_")
                .to_ascii_lowercase()
        })
        .unwrap_or_else(|_| "?".into());
    let text = if action.text.is_empty() {
        verb.clone()
    } else {
        escape(&action.text)
    };
    if action.cards.is_empty() {
        return text;
    }
    let name = text.split_whitespace().next().unwrap_or(&verb).to_string();
    format!("{name} {}", cards(&action.cards))
}

/// The name shown for a seat: the occupant's name when the table is known (escaped).
pub fn seat_name(table: Option<&pb::Table>, seat: u32) -> String {
    table
        .and_then(|t| t.seats.get(seat as usize))
        .map(|s| escape(&s.bot_name))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "—".into())
}

fn signed(n: i64) -> String {
    if n > 0 {
        format!("+{n}")
    } else {
        n.to_string()
    }
}

/// One line for an event, as a spectator or seat reads it.
pub fn describe(event: &pb::Event, table: Option<&pb::Table>) -> String {
    let who = |seat: u32| format!("seat {seat} ({})", seat_name(table, seat));
    let auto = if event.auto {
        " [auto: deadline passed]"
    } else {
        ""
    };
    let text = match &event.body {
        None => "(unknown event)".to_string(),
        Some(Body::MatchStarted(m)) => {
            format!(
                "match started: {} with {} seats, seat {} deals first",
                ruleset(m.ruleset),
                m.seats,
                m.first_dealer
            )
        }
        Some(Body::DealStarted(d)) => {
            let mut s = format!(
                "deal {} by seat {}: turn-up {}, trump {}",
                d.deal + 1,
                d.dealer,
                card(&d.turn_up),
                suit(d.trump)
            );
            if d.muss {
                s.push_str(" (Muss)");
            }
            if !d.hand.is_empty() {
                let _ = write!(s, "; your hand {}", cards(&d.hand));
            }
            s
        }
        Some(Body::Spoke(s)) => {
            format!(
                "{} says {}",
                who(s.seat),
                s.action.as_ref().map(action).unwrap_or_default()
            )
        }
        Some(Body::Curieuse(c)) => {
            format!(
                "Curieuse: {} set aside, new turn-up {}, trump {}",
                card(&c.set_aside),
                card(&c.turn_up),
                suit(c.trump)
            )
        }
        Some(Body::Exchanged(e)) => {
            let mut s = format!("{} exchanges {}", who(e.seat), e.count);
            if !e.set_aside.is_empty() {
                let _ = write!(s, ": {} for {}", cards(&e.set_aside), cards(&e.drawn));
            }
            s
        }
        Some(Body::TookTurnUp(t)) => {
            let mut s = format!("{} takes up the turn-up {}", who(t.seat), card(&t.turn_up));
            if !t.discarded.is_empty() {
                let _ = write!(s, " and discards {}", card(&t.discarded));
            }
            s
        }
        Some(Body::FlushShown(f)) => format!("{} shows a flush: {}", who(f.seat), cards(&f.cards)),
        Some(Body::CardPlayed(c)) => format!("{} plays {}", who(c.seat), card(&c.card)),
        Some(Body::HiddenLead(h)) => {
            let shown = if h.card.is_empty() {
                String::new()
            } else {
                format!(" ({})", card(&h.card))
            };
            format!("{} leads face down: Trumpf!{shown}", who(h.seat))
        }
        Some(Body::TrickWon(w)) => format!("trick {} to {}", w.trick + 1, who(w.winner)),
        Some(Body::DealSettled(s)) => {
            let nets: Vec<String> = s
                .net
                .iter()
                .enumerate()
                .map(|(i, n)| format!("{i}:{}", signed(*n)))
                .collect();
            format!(
                "deal {} settled — {}; net {}",
                s.deal + 1,
                outcome(s),
                nets.join(" ")
            )
        }
        Some(Body::MatchEnded(m)) => {
            let bal: Vec<String> = m
                .balances
                .iter()
                .enumerate()
                .map(|(i, b)| format!("{i}:{}", signed(*b)))
                .collect();
            format!("match over; final balances {}", bal.join(" "))
        }
        Some(Body::SeatTaken(t)) => format!("seat {} taken by {}", t.seat, escape(&t.bot_name)),
        Some(Body::SeatLeft(l)) => format!("seat {} left", l.seat),
        Some(Body::StrikeCounted(s)) => format!("seat {} timed out (strike {})", s.seat, s.strikes),
    };
    format!("#{:<4} {text}{auto}", event.seq)
}

fn outcome(settled: &pb::DealSettled) -> String {
    use pb::deal_result::Outcome;
    let Some(outcome) = settled.result.as_ref().and_then(|r| r.outcome.as_ref()) else {
        return "settled".into();
    };
    let fate = |o: i32| {
        pb::BidderOutcome::try_from(o)
            .map(|o| {
                o.as_str_name()
                    .trim_start_matches("BIDDER_OUTCOME_")
                    .to_ascii_lowercase()
                    .replace('_', " ")
            })
            .unwrap_or_default()
    };
    match outcome {
        Outcome::Bidders(b) => {
            let mut s = format!("declarer seat {} {}", b.declarer, fate(b.declarer_outcome));
            if let Some(c) = b.contrer {
                let _ = write!(s, ", contrer seat {c} {}", fate(b.contrer_outcome));
            }
            s
        }
        Outcome::AllPassed(_) => "everyone passed".into(),
        Outcome::Heaps(h) => {
            let heap = |w: Option<u32>| w.map_or("stays".to_string(), |s| format!("seat {s}"));
            format!(
                "King heap {}, Play heap {}, Triolet heap {}",
                heap(h.king),
                heap(h.play),
                heap(h.triolet)
            )
        }
        Outcome::Played(p) => {
            let seats: Vec<String> = p.stayers.iter().map(u32::to_string).collect();
            format!("played by seats {}", seats.join(", "))
        }
        Outcome::LoneStayer(l) => format!("seat {} stayed alone and takes the pot", l.seat),
        Outcome::Carried(_) => "nobody stayed; the pot carries".into(),
        Outcome::Flush(f) => format!(
            "seat {} wins with a {} flush",
            f.seat,
            if f.dealt { "dealt" } else { "made" }
        ),
        Outcome::DealerTakesPot(d) => format!("dealer seat {} takes the pot", d.seat),
    }
}

fn phase(view: &pb::SeatView) -> String {
    use pb::Phase as P;
    match P::try_from(view.phase).unwrap_or(P::Unspecified) {
        P::AwaitingPlayers => "waiting for players".into(),
        P::AwaitingDeck => "waiting for the deck".into(),
        P::Bidding => "bidding".into(),
        P::Exchange => format!("exchange, round {}", view.exchange_round),
        P::DealerDiscard => "dealer's discard".into(),
        P::Challenge => "challenge".into(),
        P::Trick => format!("trick {} of 5", view.trick_index + 1),
        P::MatchOver => "match over".into(),
        P::Unspecified => "?".into(),
    }
}

fn pools(p: &pb::Pools) -> String {
    let mut parts = Vec::new();
    let mut add = |name: &str, v: i64| {
        if v != 0 {
            parts.push(format!("{name} {v}"));
        }
    };
    add("pot", p.pot);
    add("dish (fiches)", p.fiches);
    add("king pool", p.king_pool);
    add("King heap", p.heap_king);
    add("Play heap", p.heap_play);
    add("Triolet heap", p.heap_triolet);
    if let Some(b) = p.staked_bete {
        parts.push(format!("staked bête {b}"));
    }
    if !p.bete_queue.is_empty() {
        let q: Vec<String> = p.bete_queue.iter().map(i64::to_string).collect();
        parts.push(format!("bêtes waiting {}", q.join(", ")));
    }
    if p.bete_streak > 0 {
        parts.push(format!("bête streak {}", p.bete_streak));
    }
    if parts.is_empty() {
        "empty".into()
    } else {
        parts.join(" · ")
    }
}

fn status(state: &pb::SeatState) -> String {
    let mut parts = Vec::new();
    if state.declarer {
        parts.push("declarer".to_string());
    }
    if state.contrer {
        parts.push("contre".to_string());
    }
    if state.dropped {
        parts.push("dropped".to_string());
    }
    if let Some(a) = &state.last_spoke
        && !state.dropped
        && !state.declarer
        && !state.contrer
    {
        parts.push(format!("said {}", action(a)));
    }
    parts.join(", ")
}

/// The whole table: header, pools, seats, current trick, the viewer's hand (seats only) and the
/// recent events. `recent` is oldest first.
pub fn board(view: &pb::SeatView, table: Option<&pb::Table>, recent: &[pb::Event]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Table {} · {} · {} seats · deal {} · dealer seat {} · seq {}",
        escape(&view.table_id),
        ruleset(view.ruleset),
        view.seats,
        view.deal + 1,
        view.dealer,
        view.seq
    );
    if let Some(marks) = table.map(table_marks).filter(|m| !m.is_empty()) {
        let _ = writeln!(out, "{}", marks.join(" · "));
    }
    let mut line = format!("Phase: {}", phase(view));
    if !view.turn_up.is_empty() {
        let _ = write!(line, " · turn-up {}", card(&view.turn_up));
    } else if view.turn_up_taken {
        line.push_str(" · turn-up taken");
    }
    let _ = write!(line, " · trump {}", suit(view.trump));
    if view.talon_len > 0 {
        let _ = write!(line, " · talon {}", view.talon_len);
    }
    if view.muss {
        line.push_str(" · Muss");
    }
    let _ = writeln!(out, "{line}");
    if !view.set_aside_turn_ups.is_empty() {
        let _ = writeln!(
            out,
            "Set aside by Curieuse: {}",
            cards(&view.set_aside_turn_ups)
        );
    }
    let _ = writeln!(
        out,
        "Pools: {}",
        view.pools
            .as_ref()
            .map(pools)
            .unwrap_or_else(|| "empty".into())
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "  Seat  Player               Balance  Cards  Tricks  Status"
    );
    for state in &view.seat_states {
        let marker = if view.to_act == Some(state.seat) {
            "▶"
        } else {
            " "
        };
        let you = if view.viewer_seat == Some(state.seat) {
            " (you)"
        } else {
            ""
        };
        let dealer = if view.dealer == state.seat {
            "dealer"
        } else {
            ""
        };
        let mut st = status(state);
        if !dealer.is_empty() {
            st = if st.is_empty() {
                dealer.into()
            } else {
                format!("{dealer}, {st}")
            };
        }
        let name: String = format!("{}{you}", seat_name(table, state.seat))
            .chars()
            .take(20)
            .collect();
        let row = format!(
            "{marker} {:<4}  {:<20} {:>7}  {:>5}  {:>6}  {}",
            state.seat,
            name,
            signed(state.balance),
            state.hand_len,
            state.tricks,
            st
        );
        let _ = writeln!(out, "{}", row.trim_end());
    }
    let _ = writeln!(out);
    match view.tricks.last() {
        Some(trick) => {
            let plays: Vec<String> = trick
                .plays
                .iter()
                .map(|p| {
                    let c = if p.card.is_empty() {
                        "🂠".to_string()
                    } else {
                        card(&p.card)
                    };
                    let down = if p.face_down { " (face down)" } else { "" };
                    format!("seat {}: {c}{down}", p.seat)
                })
                .collect();
            let won = trick
                .winner
                .map(|w| format!(" → won by seat {w}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "Trick {} (led by seat {}): {}{won}",
                view.tricks.len(),
                trick.leader,
                if plays.is_empty() {
                    "—".into()
                } else {
                    plays.join("  ")
                }
            );
        }
        None => {
            let _ = writeln!(out, "No trick yet this deal.");
        }
    }
    if view.viewer_seat.is_some() {
        let _ = writeln!(
            out,
            "Your hand: {}",
            if view.hand.is_empty() {
                "—".into()
            } else {
                cards(&view.hand)
            }
        );
    }
    if view.match_over {
        let bal: Vec<String> = view
            .seat_states
            .iter()
            .map(|s| format!("seat {}: {}", s.seat, signed(s.balance)))
            .collect();
        let _ = writeln!(out, "Final balances: {}", bal.join(", "));
    }
    if !recent.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "Recent events:");
        for event in recent {
            let _ = writeln!(out, "  {}", describe(event, table));
        }
    }
    out
}

/// The numbered legal actions for `bete play`, numbered from 1; in columns when there are
/// many (an exchange may offer 31 choices).
pub fn choices(view: &pb::SeatView) -> String {
    let items: Vec<String> = view
        .legal_actions
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{:>2}) {}", i + 1, action(a)))
        .collect();
    let columns = if items.len() > 10 { 3 } else { 1 };
    let width = items.iter().map(|s| s.chars().count()).max().unwrap_or(0) + 3;
    let rows = items.len().div_ceil(columns);
    let mut out = String::new();
    for row in 0..rows {
        out.push_str("  ");
        for col in 0..columns {
            if let Some(item) = items.get(col * rows + row) {
                let pad = width.saturating_sub(item.chars().count());
                out.push_str(item);
                if col + 1 < columns {
                    out.push_str(&" ".repeat(pad));
                }
            }
        }
        let trimmed = out.trim_end_matches(' ').len();
        out.truncate(trimmed);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_keeps_plain_text_and_escapes_control_and_format_characters() {
        assert_eq!(escape("Bête ♠ bot-1"), "Bête ♠ bot-1");
        assert_eq!(escape("a\u{1b}[31mb"), "a\\u{001b}[31mb");
        assert_eq!(escape("x\ny\r\t"), "x\\u{000a}y\\u{000d}\\u{0009}");
        assert_eq!(escape("\u{202e}evil"), "\\u{202e}evil");
        assert_eq!(escape("a\u{200b}b\u{feff}"), "a\\u{200b}b\\u{feff}");
        assert_eq!(escape("\u{9b}"), "\\u{009b}", "C1 control (CSI)");
        assert_eq!(escape("\u{e0041}"), "\\u{e0041}", "a tag character");
    }

    #[test]
    fn chosen_seed_and_ladder_tables_are_marked() {
        let plain = pb::Table::default();
        assert!(table_marks(&plain).is_empty());
        let chosen = pb::Table {
            seed_chosen: true,
            ..Default::default()
        };
        assert!(table_marks(&chosen)[0].starts_with("chosen seed"));
        let ladder = pb::Table {
            ladder_id: "bete-4".into(),
            ..Default::default()
        };
        assert_eq!(table_marks(&ladder), vec!["ladder bete-4".to_string()]);
    }
}
