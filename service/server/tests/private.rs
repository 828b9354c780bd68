//! Private means private (issue #26, item 4), and names against names in a ladder (item 3),
//! over real gRPC on loopback: a private casual table is joined only with the invitation code
//! its creator got; a private ladder table (an unrated duplicate set) is read only by its
//! seated bots and the operator; a look-alike of an entered name cannot enter the same ladder.
//! No refusal names a seat, a bot, a code or anything else of the table.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use bete_api::pb;
use bete_api::pb::replay_service_client::ReplayServiceClient;
use common::*;
use tokio_stream::StreamExt as _;
use tonic::Code;
use tonic::transport::Channel;
use tonic_types::StatusExt as _;

const ADMIN: &str = "the-operators-admin-token";

fn private_table(seats: u32) -> pb::CreateTableRequest {
    pb::CreateTableRequest {
        ruleset: pb::Ruleset::Bete.into(),
        seats,
        visibility: pb::Visibility::Private.into(),
        ..Default::default()
    }
}

async fn join(bot: &mut Client, id: &str, code: &str) -> Result<u32, tonic::Status> {
    bot.join_table(pb::JoinTableRequest {
        table_id: id.into(),
        seat: None,
        invitation_code: code.into(),
    })
    .await
    .map(|r| r.into_inner().seat)
}

/// Everything a refusal carries, as text: message, ErrorInfo metadata, details.
fn all_of(s: &tonic::Status) -> String {
    format!(
        "{} {:?} {:?}",
        s.message(),
        s.get_error_details().error_info().map(|i| &i.metadata),
        s.details()
    )
}

/// `s` is `code` with `reason`, and carries none of `secrets`.
fn refused(s: &tonic::Status, code: Code, why: &str, secrets: &[&str]) {
    assert_eq!(s.code(), code, "{s:?}");
    assert_eq!(reason(s), why, "{s:?}");
    let text = all_of(s);
    for secret in secrets {
        assert!(!text.contains(secret), "{secret:?} leaked in {text}");
    }
}

/// Every read a bot or the page can make of table `id`, as `c`: the refusal of each, if any.
async fn reads(c: &mut Client, ch: &Channel, token: Option<&str>, id: &str) -> Vec<tonic::Status> {
    let mut out = Vec::new();
    let table_id = || id.to_string();
    if let Err(s) = c
        .get_table(pb::GetTableRequest {
            table_id: table_id(),
        })
        .await
    {
        out.push(s);
    }
    if let Err(s) = c
        .get_seat_view(pb::GetSeatViewRequest {
            table_id: table_id(),
        })
        .await
    {
        out.push(s);
    }
    match c
        .watch_table(pb::WatchTableRequest {
            table_id: table_id(),
            from_seq: None,
        })
        .await
    {
        Err(s) => out.push(s),
        // A stream that opened must start with the caller's snapshot, not a refusal.
        Ok(r) => match timeout(10, r.into_inner().next()).await.unwrap() {
            Some(Err(s)) => out.push(s),
            Some(Ok(m)) => assert!(
                matches!(m.kind, Some(pb::watch_table_response::Kind::Snapshot(_))),
                "{m:?}"
            ),
            None => panic!("WatchTable ended at once"),
        },
    }
    if let Err(s) = c
        .get_game_record(pb::GetGameRecordRequest {
            table_id: table_id(),
        })
        .await
    {
        out.push(s);
    }
    let mut replay =
        ReplayServiceClient::with_interceptor(ch.clone(), Bearer(token.map(String::from)));
    if let Err(s) = replay
        .replay_record(pb::ReplayRecordRequest {
            source: Some(pb::replay_record_request::Source::TableId(table_id())),
        })
        .await
    {
        out.push(s);
    }
    out
}

/// The ids of the tables `c` is shown by ListTables.
async fn listed(c: &mut Client) -> Vec<String> {
    c.list_tables(pb::ListTablesRequest {
        page_size: 200,
        ..Default::default()
    })
    .await
    .unwrap()
    .into_inner()
    .tables
    .into_iter()
    .map(|t| t.table_id)
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_table_is_joined_with_its_invitation_code_only() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::start(dir.path().to_path_buf(), |c| {
        c.admin_token = Some(ADMIN.into());
    })
    .await;
    let ch = srv.channel().await;
    let mut owner = register(&ch, "owner").await;
    let mut invited = register(&ch, "invited").await;
    let mut nosy = register(&ch, "nosy").await;

    let created = owner
        .client
        .create_table(private_table(3))
        .await
        .unwrap()
        .into_inner();
    let id = created.table.unwrap().table_id;
    let code = created.invitation_code;
    assert_eq!(code.len(), 32, "{code:?}");
    assert!(code.bytes().all(|b| b.is_ascii_hexdigit()), "{code:?}");
    // A second private table has a code of its own; a listed table has none.
    let other = owner
        .client
        .create_table(private_table(3))
        .await
        .unwrap()
        .into_inner();
    assert_ne!(other.invitation_code, code);
    let open = owner
        .client
        .create_table(pb::CreateTableRequest {
            visibility: pb::Visibility::Listed.into(),
            ..private_table(3)
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(open.invitation_code, "");

    // Nothing of the table reaches another bot or the page: not in their listings, no read.
    let secrets = [
        code.as_str(),
        owner.id.as_str(),
        "owner",
        invited.id.as_str(),
    ];
    for c in [&mut nosy.client, &mut client_with(&ch, None)] {
        let ids = listed(c).await;
        assert!(!ids.contains(&id), "{ids:?}");
        assert!(
            ids.contains(&open.table.as_ref().unwrap().table_id),
            "{ids:?}"
        );
    }
    // 4 of the 5 reads: GetGameRecord and the replay of a live table are TABLE_PRIVATE too
    // (the record is checked before the match's state).
    let refusals = reads(&mut nosy.client, &ch, Some(&nosy.token), &id).await;
    assert_eq!(refusals.len(), 5, "{refusals:?}");
    for s in &refusals {
        refused(s, Code::PermissionDenied, "TABLE_PRIVATE", &secrets);
    }

    // Joining: without a code, with a wrong one, with another table's: refused, precisely.
    let s = join(&mut nosy.client, &id, "").await.unwrap_err();
    refused(&s, Code::PermissionDenied, "INVITATION_REQUIRED", &secrets);
    let s = join(&mut nosy.client, &id, "0123456789abcdef0123456789abcdef")
        .await
        .unwrap_err();
    refused(&s, Code::PermissionDenied, "INVITATION_WRONG", &secrets);
    let s = join(&mut nosy.client, &id, &other.invitation_code)
        .await
        .unwrap_err();
    refused(&s, Code::PermissionDenied, "INVITATION_WRONG", &secrets);
    // A code of another case or with spaces is not the code.
    let s = join(&mut nosy.client, &id, &format!(" {code}"))
        .await
        .unwrap_err();
    refused(&s, Code::PermissionDenied, "INVITATION_WRONG", &secrets);
    // Nothing was taken by the refusals: the owner sees every seat free.
    let t = owner
        .client
        .get_table(pb::GetTableRequest {
            table_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .table
        .unwrap();
    assert!(t.seats.iter().all(|s| s.bot_id.is_empty()), "{t:?}");

    // The creator needs no code; the invited bot joins with it and may then read the table.
    assert_eq!(join(&mut owner.client, &id, "").await.unwrap(), 0);
    assert_eq!(join(&mut invited.client, &id, &code).await.unwrap(), 1);
    let refusals = reads(&mut invited.client, &ch, Some(&invited.token), &id).await;
    // Only the record and its replay, refused as the match is not over.
    assert_eq!(refusals.len(), 2, "{refusals:?}");
    for s in &refusals {
        assert_eq!(reason(s), "TABLE_NOT_FINISHED", "{s:?}");
    }
    // Still nothing for the others, and the table is in no listing (not even its own bots').
    assert!(!listed(&mut nosy.client).await.contains(&id));
    assert!(!listed(&mut invited.client).await.contains(&id));
    let refusals = reads(&mut nosy.client, &ch, Some(&nosy.token), &id).await;
    assert_eq!(refusals.len(), 5, "{refusals:?}");
    // The operator reads it (the spectator's view) with the admin token.
    let mut operator = client_with(&ch, Some(ADMIN));
    let refusals = reads(&mut operator, &ch, Some(ADMIN), &id).await;
    assert_eq!(refusals.len(), 2, "{refusals:?}");
    for s in &refusals {
        assert_eq!(reason(s), "TABLE_NOT_FINISHED", "{s:?}");
    }
    let view = operator
        .get_seat_view(pb::GetSeatViewRequest {
            table_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .view
        .unwrap();
    assert!(view.hand.is_empty(), "the operator sees no hand: {view:?}");
    srv.stop().await;
}

fn ladders(ch: &Channel, token: &str) -> Ladders {
    ladder_client(ch, Some(token))
}

/// A ladder table is private while its duplicate set is unrated: its seated bot and the
/// operator read it; another registered bot and the page get TABLE_PRIVATE for every read.
/// Once the set is rated, they read it all, and it is described as listed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unrated_ladder_table_is_read_by_its_seats_and_the_operator_only() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::with_ladders(dir.path(), &duplicate_ladder("duo-3"), |c| {
        c.admin_token = Some(ADMIN.into());
    })
    .await;
    let ch = srv.channel().await;
    let mut me = register(&ch, "ladder-player").await;
    let mut nosy = register(&ch, "ladder-nosy").await;
    ladders(&ch, &me.token)
        .enter_ladder(pb::EnterLadderRequest {
            ladder_id: "duo-3".into(),
            capacity: 1,
        })
        .await
        .unwrap();
    // Slow enough that a set stays unrated while it is looked at.
    let player = tokio::spawn(play_forever(
        srv.addr,
        me.token.clone(),
        Duration::from_millis(200),
    ));
    let mut operator = client_with(&ch, Some(ADMIN));
    let mut anon = client_with(&ch, None);
    let mut checked = false;
    for _ in 0..600 {
        let matches = ladder_matches(&ch, "duo-3").await;
        let Some((m, t)) = matches.iter().find_map(|m| {
            (m.state != pb::LadderMatchState::Rated as i32)
                .then(|| m.tables.iter().find(|t| !t.finished))
                .flatten()
                .map(|t| (m.match_id.clone(), t.table_id.clone()))
        }) else {
            tokio::time::sleep(Duration::from_millis(25)).await;
            continue;
        };
        let nosy_reads = reads(&mut nosy.client, &ch, Some(&nosy.token), &t).await;
        let anon_reads = reads(&mut anon, &ch, None, &t).await;
        let seated = me
            .client
            .get_table(pb::GetTableRequest {
                table_id: t.clone(),
            })
            .await;
        let operator_reads = reads(&mut operator, &ch, Some(ADMIN), &t).await;
        // Only if the set was still unrated after the reads do they say anything.
        let unrated = ladder_matches(&ch, "duo-3")
            .await
            .iter()
            .any(|n| n.match_id == m && n.state != pb::LadderMatchState::Rated as i32);
        if !unrated {
            continue;
        }
        for s in nosy_reads.iter().chain(&anon_reads) {
            refused(
                s,
                Code::PermissionDenied,
                "TABLE_PRIVATE",
                &[&me.id, "ladder-player"],
            );
        }
        assert_eq!(nosy_reads.len(), 5, "{nosy_reads:?}");
        assert_eq!(anon_reads.len(), 5, "{anon_reads:?}");
        let seated = seated.unwrap().into_inner().table.unwrap();
        assert!(seated.seats.iter().any(|s| s.bot_id == me.id), "{seated:?}");
        // The operator: description, seat view and stream; the record not yet.
        for s in &operator_reads {
            assert!(
                ["TABLE_NOT_FINISHED", "TABLE_FINISHED"].contains(&reason(s).as_str()),
                "{s:?}"
            );
        }
        assert!(operator_reads.len() <= 2, "{operator_reads:?}");
        // In no listing.
        assert!(!listed(&mut me.client).await.contains(&t));
        assert!(!listed(&mut nosy.client).await.contains(&t));
        assert!(!listed(&mut anon).await.contains(&t));
        checked = true;

        // Rated, the set is listed for everyone, though its tables' actors loaded it
        // private: every read of the stranger and the page is served, and the description
        // says LISTED (the actor follows the store's rating, it does not keep what it loaded).
        let rated = async {
            loop {
                let now = ladder_matches(&ch, "duo-3").await;
                if now
                    .iter()
                    .any(|n| n.match_id == m && n.state == pb::LadderMatchState::Rated as i32)
                {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        timeout(120, rated).await.expect("the set was never rated");
        for (who, c, token) in [
            ("nosy", &mut nosy.client, Some(nosy.token.as_str())),
            ("page", &mut anon, None),
        ] {
            let refusals = reads(c, &ch, token, &t).await;
            assert!(refusals.is_empty(), "{who}: {refusals:?}");
            let described = c
                .get_table(pb::GetTableRequest {
                    table_id: t.clone(),
                })
                .await
                .unwrap()
                .into_inner()
                .table
                .unwrap();
            assert_eq!(
                described.visibility,
                pb::Visibility::Listed as i32,
                "{who}: {described:?}"
            );
        }
        break;
    }
    assert!(checked, "no unrated ladder table was looked at");
    player.abort();
    srv.stop().await;
}

/// Names in one ladder: a bot whose name looks like an entered bot's (Cyrillic letters,
/// fullwidth forms, another case) cannot enter; the refusal names the ladder and the entered
/// name only. A name of its own enters, and so does another bot of the same owner.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_look_alike_of_an_entered_name_cannot_enter_the_ladder() {
    let dir = tempfile::tempdir().unwrap();
    let srv = TestServer::with_ladders(dir.path(), &duplicate_ladder("duo-3"), |_| {}).await;
    let ch = srv.channel().await;
    let enter = |token: String| {
        let ch = ch.clone();
        async move {
            ladders(&ch, &token)
                .enter_ladder(pb::EnterLadderRequest {
                    ladder_id: "duo-3".into(),
                    capacity: 1,
                })
                .await
        }
    };
    let first = register(&ch, "Robot").await;
    enter(first.token.clone()).await.unwrap();
    // Cyrillic "о" for "o"; fullwidth letters; lower case; Cyrillic "Р"/"о" mixed in.
    for name in ["Rоbot", "Ｒｏｂｏｔ", "robot", "Rоbоt"] {
        let twin = register(&ch, name).await;
        let s = enter(twin.token.clone()).await.unwrap_err();
        assert_eq!(s.code(), Code::AlreadyExists, "{name:?}: {s:?}");
        assert_eq!(reason(&s), "NAME_LOOKS_TAKEN", "{name:?}: {s:?}");
        assert!(s.message().contains("\"Robot\""), "{s:?}");
        let info = s.get_error_details().error_info().unwrap().clone();
        assert_eq!(
            info.metadata.get("ladder_id").map(String::as_str),
            Some("duo-3")
        );
        assert_eq!(info.metadata.len(), 1, "{info:?}");
        assert!(!all_of(&s).contains(&first.id), "{s:?}");
        assert!(!all_of(&s).contains(&first.token), "{s:?}");
    }
    // Names of their own enter.
    enter(register(&ch, "Robot 2").await.token).await.unwrap();
    enter(register(&ch, "Rabbit").await.token).await.unwrap();
    // The first bot left: its name stays taken (its standing is still shown under it).
    ladders(&ch, &first.token)
        .leave_ladder(pb::LeaveLadderRequest {
            ladder_id: "duo-3".into(),
        })
        .await
        .unwrap();
    let late = register(&ch, "ROBOT").await;
    assert_eq!(
        reason(&enter(late.token.clone()).await.unwrap_err()),
        "NAME_LOOKS_TAKEN"
    );
    // Another ladder-free call of the look-alike still works: the name itself is allowed.
    assert!(
        late.client
            .clone()
            .list_tables(pb::ListTablesRequest::default())
            .await
            .is_ok()
    );
    srv.stop().await;
}
