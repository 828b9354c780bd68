package e2e

import (
	"crypto/rand"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/bete-game/bete/clients/go/bot"
	betev1 "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

// TestCallsCarryTheCurrentTrace: a call made with an OpenTelemetry span in its context carries
// it as a traceparent, and the real server joins that trace: it names the trace it joined in
// the x-bete-trace-id response header. A call without a span carries none. (That the server's
// spans then arrive in that trace, at an OTLP receiver, is service/server/tests/traces.rs.)
func TestCallsCarryTheCurrentTrace(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	c := dial(t, ctx, "go-traced")

	var plain metadata.MD
	if _, err := c.Tables.ListTables(ctx, &betev1.ListTablesRequest{PageSize: 1}, grpc.Header(&plain)); err != nil {
		t.Fatalf("ListTables: %v", err)
	}
	if got := plain.Get(bot.TraceIDHeader); len(got) != 0 {
		t.Fatalf("no span, yet the server joined trace %v", got)
	}

	var tid trace.TraceID
	var sid trace.SpanID
	if _, err := rand.Read(tid[:]); err != nil {
		t.Fatal(err)
	}
	if _, err := rand.Read(sid[:]); err != nil {
		t.Fatal(err)
	}
	traced := trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    tid,
		SpanID:     sid,
		TraceFlags: trace.FlagsSampled,
		Remote:     true,
	}))
	var hdr metadata.MD
	if _, err := c.Tables.ListTables(traced, &betev1.ListTablesRequest{PageSize: 1}, grpc.Header(&hdr)); err != nil {
		t.Fatalf("ListTables: %v", err)
	}
	if got := hdr.Get(bot.TraceIDHeader); len(got) != 1 || got[0] != tid.String() {
		t.Fatalf("the server joined %v, want trace %s", got, tid)
	}
}
