package bot

import (
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// A RATE_LIMITED status carries the server's delay; the runner waits at least that long.
func TestRateLimitedCarriesTheServersDelay(t *testing.T) {
	st, err := status.New(codes.ResourceExhausted, "too many calls").WithDetails(
		&errdetails.ErrorInfo{Reason: ReasonRateLimited, Domain: ErrorDomain},
		&errdetails.RetryInfo{RetryDelay: durationpb.New(1500 * time.Millisecond)},
	)
	if err != nil {
		t.Fatal(err)
	}
	e := AsError(st.Err())
	if e.Reason != ReasonRateLimited || e.RetryAfter != 1500*time.Millisecond {
		t.Fatalf("got %+v", e)
	}
	if !retryable(e) {
		t.Fatal("RATE_LIMITED must be retried")
	}
	r := &Runner{}
	if got := r.wait(0, e); got < 1500*time.Millisecond {
		t.Fatalf("wait %v, want at least the server's 1.5 s", got)
	}
	// A SubmitActions rejection carries it as ErrorInfo metadata.
	st2, _ := status.New(codes.Unavailable, "busy").WithDetails(
		&errdetails.ErrorInfo{Reason: ReasonOverloaded, Domain: ErrorDomain, Metadata: map[string]string{"retry_after_ms": "250"}},
	)
	if e2 := AsError(st2.Err()); e2.RetryAfter != 250*time.Millisecond || !retryable(e2) {
		t.Fatalf("got %+v", e2)
	}
}
