package bot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrorDomain is the ErrorInfo domain of every failure the bete server returns.
const ErrorDomain = "bete.v1"

// Reasons of the server's ErrorInfo (proto/bete/v1/errors.proto, without the ERROR_REASON_
// prefix). Branch on these, never on message text.
const (
	ReasonIllegalAction            = "ILLEGAL_ACTION"
	ReasonStaleSeq                 = "STALE_SEQ"
	ReasonTableNotFound            = "TABLE_NOT_FOUND"
	ReasonUnauthenticated          = "UNAUTHENTICATED"
	ReasonNotYourSeat              = "NOT_YOUR_SEAT"
	ReasonSpectatorCannotAct       = "SPECTATOR_CANNOT_ACT"
	ReasonTableFull                = "TABLE_FULL"
	ReasonSeatTaken                = "SEAT_TAKEN"
	ReasonInvalidArgument          = "INVALID_ARGUMENT"
	ReasonBadConfig                = "BAD_CONFIG"
	ReasonTableFinished            = "TABLE_FINISHED"
	ReasonNotSeated                = "NOT_SEATED"
	ReasonFromSeqOutOfRange        = "FROM_SEQ_OUT_OF_RANGE"
	ReasonWatcherTooSlow           = "WATCHER_TOO_SLOW"
	ReasonShuttingDown             = "SHUTTING_DOWN"
	ReasonRateLimited              = "RATE_LIMITED"
	ReasonDuplicateRequestConflict = "DUPLICATE_REQUEST_CONFLICT"
	ReasonAlreadySeated            = "ALREADY_SEATED"
	ReasonTablePrivate             = "TABLE_PRIVATE"
	ReasonTableNotFinished         = "TABLE_NOT_FINISHED"
	ReasonInternal                 = "INTERNAL"
	ReasonAdminRequired            = "ADMIN_REQUIRED"
	ReasonSignupClosed             = "SIGNUP_CLOSED"
	ReasonLadderNotFound           = "LADDER_NOT_FOUND"
	ReasonLadderAlreadyEntered     = "LADDER_ALREADY_ENTERED"
	ReasonLadderNotEntered         = "LADDER_NOT_ENTERED"
	ReasonLadderTable              = "LADDER_TABLE"
	ReasonLadderCooldown           = "LADDER_COOLDOWN"
	ReasonLadderRemoved            = "LADDER_REMOVED"
	ReasonStreamReplaced           = "STREAM_REPLACED"
	ReasonBudgetExhausted          = "BUDGET_EXHAUSTED"
	ReasonBotVersionExists         = "BOT_VERSION_EXISTS"
	ReasonAccountBotLimit          = "ACCOUNT_BOT_LIMIT"
	ReasonBadRecord                = "BAD_RECORD"
	ReasonTooManyTables            = "TOO_MANY_TABLES"
	ReasonSeatChangeRefused        = "SEAT_CHANGE_REFUSED"
	ReasonTableClosed              = "TABLE_CLOSED"
	ReasonOverloaded               = "OVERLOADED"
	ReasonTooManyStreams           = "TOO_MANY_STREAMS"
	ReasonStoreUnavailable         = "STORE_UNAVAILABLE"
	ReasonTableElsewhere           = "TABLE_ELSEWHERE"
	ReasonInvitationRequired       = "INVITATION_REQUIRED"
	ReasonInvitationWrong          = "INVITATION_WRONG"
	ReasonNameLooksTaken           = "NAME_LOOKS_TAKEN"
	ReasonDeadlineExceeded         = "DEADLINE_EXCEEDED"
)

// Error is a failed call to the bete server: the gRPC status code plus the ErrorInfo reason the
// server attaches to every failure. Every call made through a [Client] returns its failures as
// *Error, so `errors.As(err, &e)` or [ReasonOf] work on them.
type Error struct {
	// Code is the gRPC status code (e.g. codes.FailedPrecondition).
	Code codes.Code
	// Reason is the ErrorInfo reason, e.g. "ILLEGAL_ACTION"; empty when the failure did not come
	// from the bete server (a dropped connection, a deadline).
	Reason string
	// Message is the status message (the engine's reason for an illegal action).
	Message string
	// Metadata is the ErrorInfo metadata (e.g. "last_seq" for STALE_SEQ).
	Metadata map[string]string
	// Violations are the BadRequest field violations, field name to description (INVALID_ARGUMENT).
	Violations map[string]string
	// RetryAfter is how long the server asked the caller to wait before retrying (a RetryInfo
	// detail, or ErrorInfo metadata "retry_after_ms"), for RATE_LIMITED and OVERLOADED; zero
	// otherwise. The runner's retries wait at least this long.
	RetryAfter time.Duration

	status *status.Status
}

func (e *Error) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("bete: %s (%s): %s", e.Code, e.Reason, e.Message)
	}
	return fmt.Sprintf("bete: %s: %s", e.Code, e.Message)
}

// GRPCStatus keeps status.FromError and status.Code working on an *Error.
func (e *Error) GRPCStatus() *status.Status { return e.status }

// Is makes errors.Is(err, &Error{Reason: ReasonStaleSeq}) match on the reason (and on the code
// when the target sets one).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	return (t.Reason == "" || t.Reason == e.Reason) && (t.Code == codes.OK || t.Code == e.Code)
}

// AsError converts any error of a gRPC call into an *Error (nil stays nil). Errors that are not
// gRPC statuses become code Unknown, context errors become Canceled / DeadlineExceeded.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var be *Error
	if errors.As(err, &be) {
		return be
	}
	st, ok := status.FromError(err)
	if !ok {
		st = status.FromContextError(err)
	}
	e := &Error{Code: st.Code(), Message: st.Message(), status: st}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			e.Reason = d.GetReason()
			e.Metadata = d.GetMetadata()
		case *errdetails.RetryInfo:
			e.RetryAfter = d.GetRetryDelay().AsDuration()
		case *errdetails.BadRequest:
			if e.Violations == nil {
				e.Violations = map[string]string{}
			}
			for _, v := range d.GetFieldViolations() {
				e.Violations[v.GetField()] = v.GetDescription()
			}
		}
	}
	if ms, err := strconv.Atoi(e.Metadata["retry_after_ms"]); e.RetryAfter == 0 && err == nil && ms > 0 {
		e.RetryAfter = time.Duration(ms) * time.Millisecond
	}
	return e
}

// ReasonOf returns the ErrorInfo reason of err ("" when it has none).
func ReasonOf(err error) string {
	if e := AsError(err); e != nil {
		return e.Reason
	}
	return ""
}

// CodeOf returns the gRPC code of err (codes.OK for nil).
func CodeOf(err error) codes.Code {
	if e := AsError(err); e != nil {
		return e.Code
	}
	return codes.OK
}

// unaryErrors turns every unary failure into an *Error.
func unaryErrors(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if err := invoker(ctx, method, req, reply, cc, opts...); err != nil {
		return AsError(err)
	}
	return nil
}

// streamErrors turns the failure of opening a stream and of each Recv into an *Error.
func streamErrors(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return nil, AsError(err)
	}
	return errorStream{s}, nil
}

type errorStream struct{ grpc.ClientStream }

func (s errorStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err == nil || errors.Is(err, io.EOF) {
		return err
	}
	return AsError(err)
}
