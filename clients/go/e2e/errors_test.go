package e2e

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/bete-game/bete/clients/go/bot"
	betev1 "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

// waitMyTurn polls the seat's view until it must act.
func waitMyTurn(t *testing.T, ctx context.Context, c *bot.Client, id string) *betev1.SeatView {
	t.Helper()
	for {
		v, err := c.View(ctx, id)
		if err != nil {
			t.Fatalf("GetSeatView: %v", err)
		}
		if bot.MyTurn(v) {
			return v
		}
		if v.GetMatchOver() {
			t.Fatal("the match ended before the bot's turn")
		}
		select {
		case <-ctx.Done():
			t.Fatal("timed out waiting for the bot's turn")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// illegalFor returns a well-formed action that is not among the view's legal actions.
func illegalFor(v *betev1.SeatView) *betev1.Action {
	var candidates []*betev1.Action
	for _, c := range v.GetHand() {
		candidates = append(candidates, bot.PlayCard(c), bot.Discard(c))
	}
	candidates = append(candidates, bot.Pass(), bot.Play(), bot.Drop(), bot.Stand(), bot.Challenge())
	for _, a := range candidates {
		if !bot.IsLegal(v, a) {
			return a
		}
	}
	return nil
}

// TestErrorsCarryErrorInfo: an illegal action, a stale expected_seq, a bad card code, an
// unknown table and a bad token each fail with the documented code and ErrorInfo reason; a
// retried request_id is applied once.
func TestErrorsCarryErrorInfo(t *testing.T) {
	ctx := testContext(t, 30*time.Second)
	c := dial(t, ctx, "go-errors")
	tab := houseTable(t, ctx, c, betev1.Ruleset_RULESET_BETE, 3, betev1.HouseBotPolicy_HOUSE_BOT_POLICY_RANDOM)
	id := tab.GetTableId()
	v := waitMyTurn(t, ctx, c, id)

	// Illegal now: FAILED_PRECONDITION + ILLEGAL_ACTION, read straight from the status details.
	bad := illegalFor(v)
	_, err := c.Tables.SubmitAction(ctx, &betev1.SubmitActionRequest{TableId: id, Action: bad, ExpectedSeq: v.GetSeq(), RequestId: "illegal-1"})
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.FailedPrecondition {
		t.Fatalf("illegal %q: got %v, want FAILED_PRECONDITION", bot.ActionText(bad), err)
	}
	var info *errdetails.ErrorInfo
	for _, d := range st.Details() {
		if i, ok := d.(*errdetails.ErrorInfo); ok {
			info = i
		}
	}
	if info == nil || info.GetReason() != "ILLEGAL_ACTION" || info.GetDomain() != bot.ErrorDomain {
		t.Fatalf("illegal %q: ErrorInfo %v, want reason ILLEGAL_ACTION domain bete.v1", bot.ActionText(bad), info)
	}
	if e := bot.AsError(err); e.Code != codes.FailedPrecondition || e.Reason != bot.ReasonIllegalAction || e.Message == "" {
		t.Errorf("typed error %+v", e)
	}

	// Stale expected_seq: ABORTED + STALE_SEQ with last_seq, nothing applied.
	legal := v.GetLegalActions()[0]
	_, err = c.Tables.SubmitAction(ctx, &betev1.SubmitActionRequest{TableId: id, Action: legal, ExpectedSeq: v.GetSeq() - 1, RequestId: "stale-1"})
	if e := bot.AsError(err); e == nil || e.Code != codes.Aborted || e.Reason != bot.ReasonStaleSeq || e.Metadata["last_seq"] != strconv.FormatUint(v.GetSeq(), 10) {
		t.Errorf("stale seq: %+v", e)
	}

	// Malformed card code: INVALID_ARGUMENT naming the field.
	_, err = c.Tables.SubmitAction(ctx, &betev1.SubmitActionRequest{TableId: id, Action: &betev1.Action{Kind: betev1.ActionKind_ACTION_KIND_CARD, Cards: []string{"ZZ"}}, RequestId: "bad-card"})
	if e := bot.AsError(err); e == nil || e.Code != codes.InvalidArgument || e.Reason != bot.ReasonInvalidArgument {
		t.Errorf("bad card: %+v", e)
	} else if _, ok := e.Violations["action.cards[0]"]; !ok {
		t.Errorf("bad card: BadRequest violations %v, want action.cards[0]", e.Violations)
	}

	// The same request_id twice: applied once, the retry is the stored result.
	req := &betev1.SubmitActionRequest{TableId: id, Action: legal, ExpectedSeq: v.GetSeq(), RequestId: "once-" + id}
	first, err := c.Tables.SubmitAction(ctx, req)
	if err != nil {
		t.Fatalf("legal submit: %v", err)
	}
	again, err := c.Tables.SubmitAction(ctx, req)
	if err != nil {
		t.Fatalf("retried submit: %v", err)
	}
	if first.GetReplayed() || !again.GetReplayed() || again.GetSeq() != first.GetSeq() {
		t.Errorf("idempotent submit: first %v, again %v", first, again)
	}

	// Unknown table and unknown token.
	_, err = c.View(ctx, "no-such-table")
	if e := bot.AsError(err); e == nil || e.Code != codes.NotFound || e.Reason != bot.ReasonTableNotFound {
		t.Errorf("unknown table: %+v", e)
	}
	stranger, err := bot.Dial(ctx, serverAddr, bot.Options{Token: "not-a-token"})
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	_, err = stranger.View(ctx, id)
	if e := bot.AsError(err); e == nil || e.Code != codes.Unauthenticated || e.Reason != bot.ReasonUnauthenticated {
		t.Errorf("bad token: %+v", e)
	}
	// A runner with a bad token gives up at once with the typed error, not retrying forever.
	runErr := bot.NewRunner(stranger, bot.BotFunc(func(v *betev1.SeatView) *betev1.Action { return nil }), bot.RunnerOptions{}).Run(ctx)
	if e := bot.AsError(runErr); e == nil || e.Reason != bot.ReasonUnauthenticated {
		t.Errorf("runner with a bad token: %v", runErr)
	}
	if _, err := c.Tables.LeaveTable(ctx, &betev1.LeaveTableRequest{TableId: id}); err != nil {
		t.Errorf("leave: %v", err)
	}
}

// TestReflectionListsTableService: grpc reflection (v1) lists bete.v1.TableService.
func TestReflectionListsTableService(t *testing.T) {
	ctx := testContext(t, 10*time.Second)
	conn, err := grpc.NewClient(serverAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	for _, want := range []string{"bete.v1.TableService", "bete.v1.BotService"} {
		if !slices.Contains(names, want) {
			t.Errorf("reflection lists %v, missing %s", names, want)
		}
	}
	// The descriptor of the service resolves too.
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "bete.v1.TableService"}}); err != nil {
		t.Fatal(err)
	}
	resp, err = stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetFileDescriptorResponse().GetFileDescriptorProto()) == 0 {
		t.Errorf("no file descriptor for bete.v1.TableService: %v", resp.GetErrorResponse())
	}
	_ = stream.CloseSend()
}
