use bete_rules::*;
fn main() {
    let mut rng = 0x9E3779B97F4A7C15u64;
    let mut buf = Vec::new();
    let mut ev = Vec::new();
    let t = std::time::Instant::now();
    let mut deals = 0u64;
    for m in 0..400u32 {
        let mut cfg = Config::defaults(RulesetId::Bete, 5);
        cfg.rounds = 100;
        let mut seed = [0u8; 32];
        seed[..4].copy_from_slice(&m.to_le_bytes());
        let (mut g, _) = Game::new(Setup { ruleset: RulesetId::Bete, config: cfg, seats: 5, first_dealer: Seat(0), decks: Decks::Seed(Seed(seed)) }).unwrap();
        while let Some(s) = g.to_act() {
            g.legal_actions_into(s, &mut buf);
            rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
            let a = buf[(rng % buf.len() as u64) as usize];
            ev.clear();
            g.apply_into(s, a, &mut ev).unwrap();
        }
        deals += g.summaries().len() as u64;
    }
    let el = t.elapsed().as_secs_f64();
    println!("{deals} deals in {el:.3}s: {:.0} deals/s", deals as f64 / el);
}
