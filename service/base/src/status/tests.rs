//! The mapping's tests: each error's code, reason and details.

use super::*;

/// tonic's bare refusal of an over-size request becomes the gate's, with its ErrorInfo;
/// any other status, our own OUT_OF_RANGE included, is left alone.
#[test]
fn the_transport_limit_refusal_gets_the_gate_reason() {
    let tonic_says = Status::out_of_range(
        "Error, decoded message length too large: found 1126404 bytes, the limit is: 1048576 bytes",
    );
    let e = over_transport_limit(&tonic_says, 65_536).unwrap();
    assert_eq!(
        e,
        ServerError::field(
            "(request)",
            "the request is 1126404 bytes; the limit is 65536"
        )
    );
    let ours = ServerError::FromSeqOutOfRange {
        from_seq: 9,
        last_seq: 3,
        table_id: Some("t_1".into()),
    }
    .to_status();
    assert_eq!(over_transport_limit(&ours, 65_536), None);
    assert_eq!(
        over_transport_limit(&Status::out_of_range("other"), 1),
        None
    );
}

#[test]
fn statuses_carry_reason_and_fields() {
    let st = ServerError::InvalidArgument(vec![FieldViolation {
        field: "action.cards[1]".into(),
        description: "\"ZZ\" is not a card".into(),
    }])
    .to_status();
    assert_eq!(st.code(), Code::InvalidArgument);
    let d = st.get_error_details();
    let info = d.error_info().unwrap();
    assert_eq!(info.reason, "INVALID_ARGUMENT");
    assert_eq!(info.domain, "bete.v1");
    assert_eq!(
        d.bad_request().unwrap().field_violations[0].field,
        "action.cards[1]"
    );

    let st = ServerError::StaleSeq {
        expected: 3,
        last_seq: 9,
    }
    .to_status();
    assert_eq!(st.code(), Code::Aborted);
    let d = st.get_error_details();
    assert_eq!(d.error_info().unwrap().metadata["last_seq"], "9");
}

/// A stream's rejection carries exactly what the unary status carries.
#[test]
fn rejections_match_statuses() {
    let stale = ServerError::StaleSeq {
        expected: 3,
        last_seq: 9,
    };
    let r = stale.to_rejection();
    assert_eq!(r.code, Code::Aborted as i32);
    assert_eq!(r.reason, "STALE_SEQ");
    assert_eq!(r.domain, DOMAIN);
    assert_eq!(r.message, stale.to_status().message());
    assert_eq!(r.metadata["last_seq"], "9");
    assert!(r.field_violations.is_empty());

    let bad = ServerError::InvalidArgument(vec![
        FieldViolation {
            field: "action".into(),
            description: "is required".into(),
        },
        FieldViolation {
            field: "table_id".into(),
            description: "is required".into(),
        },
    ]);
    let r = bad.to_rejection();
    assert_eq!(r.code, Code::InvalidArgument as i32);
    assert_eq!(r.reason, "INVALID_ARGUMENT");
    assert_eq!(r.message, bad.to_string());
    let fields: Vec<_> = r
        .field_violations
        .iter()
        .map(|v| v.field.as_str())
        .collect();
    assert_eq!(fields, ["action", "table_id"]);
}

/// One of every variant (with metadata and field violations where a variant has them).
fn every_error() -> Vec<ServerError> {
    vec![
        ServerError::InvalidArgument(vec![
            FieldViolation {
                field: "action".into(),
                description: "is required".into(),
            },
            FieldViolation {
                field: "table_id".into(),
                description: "is required".into(),
            },
        ]),
        ServerError::BadConfig {
            field: "config.target".into(),
            message: "must be 1-1000".into(),
        },
        ServerError::IllegalAction("you must follow suit".into()),
        ServerError::StaleSeq {
            expected: 3,
            last_seq: 9,
        },
        ServerError::TableNotFound("t-1".into()),
        ServerError::Unauthenticated("no token"),
        ServerError::NotYourSeat { to_act: 2 },
        ServerError::NobodyToAct,
        ServerError::SpectatorCannotAct,
        ServerError::TableFull,
        ServerError::SeatTaken(1),
        ServerError::TableFinished,
        ServerError::NotSeated,
        ServerError::FromSeqOutOfRange {
            from_seq: 50,
            last_seq: 9,
            table_id: None,
        },
        ServerError::WatcherTooSlow {
            table_id: "t-1".into(),
            from_seq: 7,
        },
        ServerError::ShuttingDown,
        ServerError::DuplicateRequestConflict("r-1".into()),
        ServerError::AlreadySeated(0),
        ServerError::TablePrivate,
        ServerError::TableNotFinished,
        ServerError::Internal("store: disk full".into()),
        ServerError::AdminRequired("needs the admin token"),
        ServerError::SignupClosed("signup is closed"),
        ServerError::LadderNotFound("l-1".into()),
        ServerError::LadderAlreadyEntered("l-1".into()),
        ServerError::LadderNotEntered("l-1".into()),
        ServerError::LadderTable("t-1".into()),
        ServerError::BotVersionExists {
            name: "b".into(),
            version: "2".into(),
        },
        ServerError::AccountBotLimit(100),
        ServerError::BadRecord("not valid JSON: EOF".into()),
        ServerError::RateLimited {
            what: "calls",
            retry_after: Duration::from_millis(250),
        },
        ServerError::TooManyTables {
            what: "created",
            limit: 3,
        },
        ServerError::SeatChangeRefused { held: 1 },
        ServerError::TableClosed("stopped by an operator".into()),
        ServerError::Overloaded {
            retry_after: Duration::from_millis(100),
        },
        ServerError::TooManyStreams { limit: 8 },
        ServerError::StoreUnavailable,
        ServerError::TableElsewhere {
            table: "t-1".into(),
            node: "node-b".into(),
            addr: "10.0.0.2:50051".into(),
        },
        ServerError::TokenRevoked,
        ServerError::NotBotOwner("only the owner"),
        ServerError::BotNotFound("b_1".into()),
        ServerError::OwnerUnreachable {
            table: "t-1".into(),
            node: "node-b".into(),
            addr: "10.0.0.2:50051".into(),
            retry_after: Duration::from_millis(3000),
        },
        ServerError::Relayed {
            code: Code::FailedPrecondition as i32,
            message: "the match is over".into(),
            details: ServerError::TableFinished.to_status().details().to_vec(),
        },
        ServerError::SearchBudget {
            field: "house_bots[0].search_budget_ms".into(),
            message: "0 is outside 1..=10000 milliseconds per decision".into(),
        },
        ServerError::BudgetExhausted {
            budget: "waiting_tables_per_address",
            what: "waiting tables from your address",
            retry_after: Duration::from_secs(5),
        },
        ServerError::StreamReplaced,
        ServerError::LadderCooldown {
            ladder: "l-1".into(),
            removals: 2,
            retry_after: Duration::from_secs(120),
        },
        ServerError::LadderRemoved("t-1".into()),
        ServerError::TooManySubscriptions { limit: 16 },
        ServerError::InvitationRequired,
        ServerError::InvitationWrong,
        ServerError::NameLooksTaken {
            ladder: "l-1".into(),
            taken: "house".into(),
        },
        ServerError::DeadlineExceeded { timeout_ms: 200 },
    ]
}

/// The variant's position in [`every_error`]; exhaustive, so a new variant must be added
/// there before this compiles.
fn variant(e: &ServerError) -> usize {
    match e {
        ServerError::InvalidArgument(_) => 0,
        ServerError::BadConfig { .. } => 1,
        ServerError::IllegalAction(_) => 2,
        ServerError::StaleSeq { .. } => 3,
        ServerError::TableNotFound(_) => 4,
        ServerError::Unauthenticated(_) => 5,
        ServerError::NotYourSeat { .. } => 6,
        ServerError::NobodyToAct => 7,
        ServerError::SpectatorCannotAct => 8,
        ServerError::TableFull => 9,
        ServerError::SeatTaken(_) => 10,
        ServerError::TableFinished => 11,
        ServerError::NotSeated => 12,
        ServerError::FromSeqOutOfRange { .. } => 13,
        ServerError::WatcherTooSlow { .. } => 14,
        ServerError::ShuttingDown => 15,
        ServerError::DuplicateRequestConflict(_) => 16,
        ServerError::AlreadySeated(_) => 17,
        ServerError::TablePrivate => 18,
        ServerError::TableNotFinished => 19,
        ServerError::Internal(_) => 20,
        ServerError::AdminRequired(_) => 21,
        ServerError::SignupClosed(_) => 22,
        ServerError::LadderNotFound(_) => 23,
        ServerError::LadderAlreadyEntered(_) => 24,
        ServerError::LadderNotEntered(_) => 25,
        ServerError::LadderTable(_) => 26,
        ServerError::BotVersionExists { .. } => 27,
        ServerError::AccountBotLimit(_) => 28,
        ServerError::BadRecord(_) => 29,
        ServerError::RateLimited { .. } => 30,
        ServerError::TooManyTables { .. } => 31,
        ServerError::SeatChangeRefused { .. } => 32,
        ServerError::TableClosed(_) => 33,
        ServerError::Overloaded { .. } => 34,
        ServerError::TooManyStreams { .. } => 35,
        ServerError::StoreUnavailable => 36,
        ServerError::TableElsewhere { .. } => 37,
        ServerError::TokenRevoked => 38,
        ServerError::NotBotOwner(_) => 39,
        ServerError::BotNotFound(_) => 40,
        ServerError::OwnerUnreachable { .. } => 41,
        ServerError::Relayed { .. } => 42,
        ServerError::SearchBudget { .. } => 43,
        ServerError::BudgetExhausted { .. } => 44,
        ServerError::StreamReplaced => 45,
        ServerError::LadderCooldown { .. } => 46,
        ServerError::LadderRemoved(_) => 47,
        ServerError::TooManySubscriptions { .. } => 48,
        ServerError::InvitationRequired => 49,
        ServerError::InvitationWrong => 50,
        ServerError::NameLooksTaken { .. } => 51,
        ServerError::DeadlineExceeded { .. } => 52,
    }
}

/// For every variant, the stream's rejection is the unary status field by field: code,
/// message, reason, domain, metadata and field violations.
#[test]
fn every_rejection_mirrors_its_status() {
    let all = every_error();
    let seen: Vec<usize> = all.iter().map(variant).collect();
    assert_eq!(
        seen,
        (0..=52).collect::<Vec<_>>(),
        "one of every variant, in order"
    );
    for e in &all {
        let s = e.to_status();
        let r = e.to_rejection();
        if let ServerError::Relayed { .. } = e {
            // The owner's status, passed on whole: its reason is the owner's.
            let owner = ServerError::TableFinished.to_status();
            assert_eq!(s.code(), owner.code());
            assert_eq!(s.details(), owner.details());
            assert_eq!(r, ServerError::TableFinished.to_rejection());
            continue;
        }
        assert_eq!(r.code, s.code() as i32, "{e:?}");
        assert_eq!(r.code, e.code() as i32, "{e:?}");
        assert_eq!(r.message, s.message(), "{e:?}");
        assert_eq!(r.message, e.to_string(), "{e:?}");
        let d = s.get_error_details();
        let info = d.error_info().unwrap();
        assert_eq!(r.reason, info.reason, "{e:?}");
        assert_eq!(r.reason, e.reason(), "{e:?}");
        assert_eq!(r.domain, info.domain, "{e:?}");
        assert_eq!(r.domain, DOMAIN, "{e:?}");
        assert_eq!(r.metadata, info.metadata, "{e:?}");
        assert_eq!(r.metadata, e.metadata(), "{e:?}");
        let status_fields: Vec<(String, String)> = d
            .bad_request()
            .map(|b| {
                b.field_violations
                    .iter()
                    .map(|v| (v.field.clone(), v.description.clone()))
                    .collect()
            })
            .unwrap_or_default();
        let fields: Vec<(String, String)> = r
            .field_violations
            .iter()
            .map(|v| (v.field.clone(), v.description.clone()))
            .collect();
        assert_eq!(fields, status_fields, "{e:?}");
        match e {
            ServerError::InvalidArgument(_) => assert_eq!(fields.len(), 2),
            ServerError::BadConfig { .. }
            | ServerError::FromSeqOutOfRange { .. }
            | ServerError::SearchBudget { .. } => assert_eq!(fields.len(), 1),
            _ => assert!(fields.is_empty(), "{e:?}"),
        }
        assert_eq!(
            d.retry_info().and_then(|r| r.retry_delay),
            e.retry_after(),
            "{e:?}"
        );
    }
}

/// However many and however long the bad fields, the status stays small.
#[test]
fn statuses_are_bounded() {
    let many = ServerError::InvalidArgument(
        (0..5000)
            .map(|i| FieldViolation {
                field: format!("house_bots[{i}].seat"),
                description: "x".repeat(10_000),
            })
            .collect(),
    );
    let st = many.to_status();
    assert!(st.message().len() <= MAX_MESSAGE_BYTES);
    assert!(st.details().len() < 8 * 1024, "{}", st.details().len());
    let d = st.get_error_details();
    let v = &d.bad_request().unwrap().field_violations;
    assert_eq!(v.len(), MAX_VIOLATIONS + 1);
    assert_eq!(v[MAX_VIOLATIONS].description, "and 4984 more bad fields");
    assert_eq!(bounded("abc", 3), "abc");
    assert_eq!(bounded("abcdef", 5), "ab…");
    assert_eq!(bounded("ééé", 4), "…");
}
