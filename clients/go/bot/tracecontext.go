package bot

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// TraceIDHeader is the response header in which the server names the trace a call joined.
const TraceIDHeader = "x-bete-trace-id"

// traceContext writes W3C Trace Context (traceparent, tracestate): what the server reads.
var traceContext = propagation.TraceContext{}

// withTraceContext adds the OpenTelemetry span of ctx (if any) to the call's metadata as a
// W3C traceparent, so the server's spans of the call join the caller's trace.
func withTraceContext(ctx context.Context) context.Context {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	carrier := propagation.MapCarrier{}
	traceContext.Inject(ctx, carrier)
	for k, v := range carrier {
		ctx = metadata.AppendToOutgoingContext(ctx, k, v)
	}
	return ctx
}

// unaryTrace and streamTrace send the caller's trace context on every call.
func unaryTrace(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return invoker(withTraceContext(ctx), method, req, reply, cc, opts...)
}

func streamTrace(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return streamer(withTraceContext(ctx), desc, cc, method, opts...)
}
