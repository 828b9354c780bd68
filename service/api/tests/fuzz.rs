//! Fuzz target for the request side of every RPC: any bytes decoded as each request message,
//! then through the conversions the server applies to it. Decoding fails cleanly or gives a
//! message; every conversion answers with a value or a field error, never a panic. (Under
//! `cargo test`: the committed corpus plus a bounded generated run; under libFuzzer with
//! `cargo bolero test -p bete-api --test fuzz requests_never_panic` on a nightly toolchain.)
#![allow(clippy::unwrap_used)]

use bete_api::convert;
use bete_api::pb;
use prost::Message;

fn actions(a: Option<&pb::Action>) {
    if let Some(a) = a {
        let _ = convert::action_from_pb(a, "action");
    }
}

#[test]
fn requests_never_panic() {
    bolero::check!()
        .with_max_len(4096)
        .for_each(|bytes: &[u8]| {
            if let Ok(r) = pb::CreateTableRequest::decode(bytes) {
                let _ = convert::ruleset_from_pb(r.ruleset, "ruleset");
                let _ = convert::config_from_pb(&r.config);
                let _ = r.seed.parse::<bete_rules::Seed>();
            }
            if let Ok(r) = pb::SubmitActionRequest::decode(bytes) {
                actions(r.action.as_ref());
            }
            if let Ok(r) = pb::SubmitActionsRequest::decode(bytes) {
                actions(r.action.as_ref());
            }
            if let Ok(r) = pb::ListTablesRequest::decode(bytes) {
                let _ = convert::ruleset_from_pb(r.ruleset, "ruleset");
            }
            let _ = pb::JoinTableRequest::decode(bytes);
            let _ = pb::LeaveTableRequest::decode(bytes);
            let _ = pb::GetTableRequest::decode(bytes);
            let _ = pb::GetSeatViewRequest::decode(bytes);
            let _ = pb::WatchTableRequest::decode(bytes);
            let _ = pb::WatchBotRequest::decode(bytes);
            let _ = pb::GetGameRecordRequest::decode(bytes);
            let _ = pb::RegisterBotRequest::decode(bytes);
            let _ = pb::CreateAccountRequest::decode(bytes);
            let _ = pb::ListAccountBotsRequest::decode(bytes);
            let _ = pb::ListLaddersRequest::decode(bytes);
            let _ = pb::GetLadderRequest::decode(bytes);
            let _ = pb::EnterLadderRequest::decode(bytes);
            let _ = pb::LeaveLadderRequest::decode(bytes);
            let _ = pb::GetStandingsRequest::decode(bytes);
            let _ = pb::ListLadderMatchesRequest::decode(bytes);
            let _ = pb::WatchLadderResultsRequest::decode(bytes);
        });
}
