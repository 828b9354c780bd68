#!/usr/bin/env bash
# Regenerates the shared test vectors from the `bete` binary (run from the repository root):
#
#   cargo build -p bete-client && bash tests/vectors/generate.sh
#
# Every record comes from `bete simulate` with a fixed seed (the name's SHA-256), so the files
# change only when the engine's or the house bots' behaviour does; review the diff before committing. The bad
# records are edits of good ones (see bad.py).
set -euo pipefail
cd "$(dirname "$0")/../.."
BETE=${BETE:-target/debug/bete}
out=tests/vectors

gen() {
  local name=$1; shift
  local seed
  seed=$(printf '%s' "$name" | sha256sum | cut -c1-64)
  "$BETE" simulate --seed "$seed" "$@" --out "$out/$name.record.json"
}

gen bete-3                        --ruleset bete --seats 3 --rounds 1 --bots heuristic,random,random
gen bete-5                        --ruleset bete --seats 5 --rounds 1 --bots heuristic,random
gen bete-7                        --ruleset bete --seats 7 --rounds 1 --bots random
gen bete-2-two-players            --ruleset bete --seats 2 --rounds 1 --config two_players=true --bots heuristic,random
gen bete-4-plurality-no-contre    --ruleset bete --seats 4 --rounds 1 --bots random --config win_rule=plurality \
                                  --config contre=disabled --config max_curieuse=3 --config queue_order=largest_first
gen bete-5-lenient                --ruleset bete --seats 5 --rounds 1 --bots random --config enforce_legality=lenient \
                                  --config fiche_value=10 --config deal_pattern=2+1+2
gen bete-ace-high-4               --ruleset bete-ace-high --seats 4 --rounds 1 --bots heuristic,random
gen bete-ace-high-6-literal       --ruleset bete-ace-high --seats 6 --rounds 1 --bots random,heuristic \
                                  --config ante_rule=literal --config must_head_in_suit=false
gen beast-3                       --ruleset beast --seats 3 --rounds 1 --bots heuristic,random --config deal_pattern=2+3
gen beast-4                       --ruleset beast --seats 4 --rounds 1 --bots random
gen beast-5                       --ruleset beast --seats 5 --rounds 1 --bots heuristic
gen beste-boer-3                  --ruleset beste-boer --seats 3 --rounds 1 --bots heuristic,random
gen beste-boer-5                  --ruleset beste-boer --seats 5 --rounds 1 --bots random
gen beste-boer-6-per-bete-follow  --ruleset beste-boer --seats 6 --rounds 1 --bots random,heuristic \
                                  --config bete_growth=plus5_per_bete --config follow_after_trick2=true
gen beste-boer-4-pot-lenient      --ruleset beste-boer --seats 4 --rounds 1 --bots random \
                                  --config bete_growth=pot --config enforce_legality=lenient
gen lanterlui-3                   --ruleset lanterlui --seats 3 --rounds 1 --bots heuristic,random
gen lanterlui-5                   --ruleset lanterlui --seats 5 --rounds 1 --bots random
gen lanterlui-7                   --ruleset lanterlui --seats 7 --rounds 1 --bots heuristic,random
gen lanterlui-4-short-four-flush  --ruleset lanterlui --seats 4 --rounds 1 --bots random --config short_pack=true \
                                  --config four_card_flush=true --config muss_max_pot=10
gen lanterlui-6-forced-plus5      --ruleset lanterlui --seats 6 --rounds 1 --bots random --config forced_after_muss=true \
                                  --config bete_growth=plus5 --config follow_suit=false
gen bester-bube-3                 --ruleset bester-bube --seats 3 --rounds 1 --bots heuristic,random
gen bester-bube-4                 --ruleset bester-bube --seats 4 --rounds 1 --bots random
gen bester-bube-6                 --ruleset bester-bube --seats 6 --rounds 1 --bots heuristic,random,random
gen bester-bube-5-fifo-one        --ruleset bester-bube --seats 5 --rounds 1 --bots random --config bete_payoff=successive_fifo \
                                  --config per_trick=one --config enforce_legality=lenient --config follow_suit=false
gen mouche-3                      --ruleset mouche --seats 3 --rounds 1 --bots heuristic,random
gen mouche-4-queue-per-seat       --ruleset mouche --seats 4 --rounds 1 --bots random --config mouche_payoff=queue_largest_first \
                                  --config dealer_ante=per_seat --config dealt_mouche_penalty=others_pay
gen mouche-5                      --ruleset mouche --seats 5 --rounds 1 --bots random,heuristic
gen mouche-6-sequential           --ruleset mouche --seats 6 --rounds 1 --bots random --config pack_rule=sequential \
                                  --config deal_pattern=2+3 --config exchanged_mouche=false --config must_head_in_suit=false
gen mistigri-3                    --ruleset mistigri --seats 3 --rounds 1 --bots heuristic,random
gen mistigri-4-free-trump-only    --ruleset mistigri --seats 4 --rounds 1 --bots random --config mistigri_laws=free \
                                  --config mistigri_flush=trump_only
gen mistigri-5                    --ruleset mistigri --seats 5 --rounds 1 --bots random
gen mistigri-6                    --ruleset mistigri --seats 6 --rounds 1 --bots heuristic,random,random
gen loo-3                         --ruleset loo --seats 3 --rounds 1 --bots heuristic,random
gen loo-4-pcg-unlimited           --ruleset loo --seats 4 --rounds 1 --bots random --config flush_rule=pcg \
                                  --config loo_amount=unlimited --config deal_pattern=3+2
gen loo-5-trump-jack              --ruleset loo --seats 5 --rounds 1 --bots random --config pam=trump_jack \
                                  --config pam_laws=trump --config pam_be_civil=false --config ace_lead=none
gen loo-6-mixed                   --ruleset loo --seats 6 --rounds 1 --bots random,heuristic --config loo_amount=mixed \
                                  --config loo_limit=10
gen loo-7                         --ruleset loo --seats 7 --rounds 1 --bots random
gen loo-8                         --ruleset loo --seats 8 --rounds 1 --bots heuristic,random
gen loo-9                         --ruleset loo --seats 9 --rounds 1 --bots random
gen loo-10                        --ruleset loo --seats 10 --rounds 1 --bots heuristic,random
gen rams-3                        --ruleset rams --seats 3 --rounds 1 --bots heuristic,random
gen rams-4-ecarte-pool            --ruleset rams --seats 4 --rounds 1 --bots random --config ranking=ecarte \
                                  --config rams_penalty=pool --config undertrump=free --config deal_pattern=2+3
gen rams-5-widow-first            --ruleset rams --seats 5 --rounds 1 --bots random --config drop_requires_widow_taken=true \
                                  --config general_stake=10
# Stopped after two deals: the record ends between deals (the third deal's antes are taken).
gen bete-5-two-deals              --ruleset bete --seats 5 --deals 2 --bots heuristic,random
gen lanterlui-4-explicit-decks    --ruleset lanterlui --seats 4 --rounds 1 --bots heuristic,random --with-decks
# Explicit decks (the seed removed) and a record that stops in the middle of a deal (edits of good ones).
python3 "$out/bad.py" derived "$out"

for f in "$out"/*.record.json; do
  "$BETE" replay --json "$f" > "${f%.record.json}.expected.json"
done
python3 "$out/bad.py" bad "$out" "$BETE"
