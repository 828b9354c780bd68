// Package bot is the Go SDK for writing bots that play the Bête family of card games on a bete
// server: dial, register, create or join tables, and let a [Runner] call your [Bot] for every
// decision at every table it sits at.
package bot

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	betev1 "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

// ServerEnv is the environment variable Dial reads the address from when addr is empty.
const ServerEnv = "BETE_SERVER"

// DefaultServer is the address Dial uses when addr and $BETE_SERVER are empty.
const DefaultServer = "127.0.0.1:50051"

// TokenEnv is the environment variable Dial reads the bearer token from when Options.Token is empty.
const TokenEnv = "BETE_TOKEN"

// Options configure Dial. The zero value registers a fresh bot named "go-bot" over plaintext,
// which is right for a server on loopback.
type Options struct {
	// Token is the bot's bearer token. Empty: $BETE_TOKEN, and if that is empty too, Dial
	// registers a new bot with Name and Owner and keeps its token.
	Token string
	// Name is the display name used when Dial registers a bot; default "go-bot".
	Name string
	// Owner is who runs the bot, sent when Dial registers one.
	Owner string
	// AccountToken, when Dial registers a bot, makes the bot belong to that account (see
	// [Client.CreateAccount]); ladders never seat two bots of one account at one table.
	AccountToken string
	// Version is the version Dial registers the bot with (empty: "1"). A new version of a
	// name is a new bot id, rated from scratch.
	Version string
	// TLS enables transport security with this config (see [TLSFiles]). nil: TLS as the
	// address ("https://host:port") or the environment ([TLSFromEnv]) asks, else plaintext
	// (loopback, tests).
	TLS *tls.Config
	// DialOptions are passed to grpc.NewClient after the SDK's own (e.g. a custom dialer).
	DialOptions []grpc.DialOption
}

// Client is a connection to a bete server with a bot identity. Its Tables and Bots stubs add
// the bearer token to every call and return failures as *Error.
type Client struct {
	// Tables is the TableService stub; use it for any call the helpers do not cover.
	Tables betev1.TableServiceClient
	// Bots is the BotService stub.
	Bots betev1.BotServiceClient
	// Ladders is the LadderService stub.
	Ladders betev1.LadderServiceClient
	// Accounts is the AccountService stub.
	Accounts betev1.AccountServiceClient

	conn  *grpc.ClientConn
	token *bearer
	botID string
}

// Dial connects to the server at addr ("host:port", or "https://host:port" for TLS; empty:
// $BETE_SERVER, else DefaultServer) and settles the bot's token: Options.Token,
// else $BETE_TOKEN, else a new registration. The connection itself is made lazily, so Dial only
// fails early on a bad address or a failed registration.
func Dial(ctx context.Context, addr string, opts Options) (*Client, error) {
	if addr == "" {
		addr = os.Getenv(ServerEnv)
	}
	if addr == "" {
		addr = DefaultServer
	}
	addr, https := splitScheme(addr)
	if opts.TLS == nil {
		fromEnv, err := TLSFromEnv()
		if err != nil {
			return nil, err
		}
		opts.TLS = fromEnv
	}
	if opts.TLS == nil && https {
		opts.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	tok := &bearer{secure: opts.TLS != nil}
	transport := insecure.NewCredentials()
	if opts.TLS != nil {
		transport = credentials.NewTLS(opts.TLS)
	}
	dialOpts := []grpc.DialOption{
		grpc.WithTransportCredentials(transport),
		grpc.WithPerRPCCredentials(tok),
		// The caller's OpenTelemetry span goes out as a W3C traceparent (tracecontext.go).
		grpc.WithChainUnaryInterceptor(unaryTrace, unaryErrors),
		grpc.WithChainStreamInterceptor(streamTrace, streamErrors),
	}
	conn, err := grpc.NewClient(addr, append(dialOpts, opts.DialOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("bete: dial %s: %w", addr, err)
	}
	c := &Client{
		Tables:   betev1.NewTableServiceClient(conn),
		Bots:     betev1.NewBotServiceClient(conn),
		Ladders:  betev1.NewLadderServiceClient(conn),
		Accounts: betev1.NewAccountServiceClient(conn),
		conn:     conn,
		token:    tok,
	}
	token := opts.Token
	if token == "" {
		token = os.Getenv(TokenEnv)
	}
	tok.set(token)
	if token == "" {
		name := opts.Name
		if name == "" {
			name = "go-bot"
		}
		// RegisterBot carries the account's token when there is one; the bot's own replaces it.
		tok.set(opts.AccountToken)
		if _, err := c.register(ctx, &betev1.RegisterBotRequest{Name: name, Owner: opts.Owner, Version: opts.Version}); err != nil {
			_ = conn.Close()
			return nil, err
		}
	}
	return c, nil
}

// Register registers a new bot and switches this client to its token. Dial does this for you
// when it has no token.
func (c *Client) Register(ctx context.Context, name, owner string) (*betev1.RegisterBotResponse, error) {
	return c.register(ctx, &betev1.RegisterBotRequest{Name: name, Owner: owner})
}

func (c *Client) register(ctx context.Context, req *betev1.RegisterBotRequest) (*betev1.RegisterBotResponse, error) {
	resp, err := c.Bots.RegisterBot(ctx, req)
	if err != nil {
		return nil, err
	}
	c.token.set(resp.GetToken())
	c.botID = resp.GetBotId()
	return resp, nil
}

// RotateToken replaces bot botID's token (BotService.RotateBotToken) and returns the new one;
// the old token is revoked at once (its streams end with TOKEN_REVOKED). ownerToken is the
// bot's account token; empty rotates this client's own token (a bot registered without an
// account), and the client switches to the new one.
func (c *Client) RotateToken(ctx context.Context, botID, ownerToken string) (string, error) {
	if ownerToken != "" {
		ctx = context.WithValue(ctx, tokenOverride{}, ownerToken)
	}
	resp, err := c.Bots.RotateBotToken(ctx, &betev1.RotateBotTokenRequest{BotId: botID})
	if err != nil {
		return "", err
	}
	if ownerToken == "" {
		c.token.set(resp.GetToken())
	}
	return resp.GetToken(), nil
}

// tokenOverride is the context key of a token sent instead of the client's on one call.
type tokenOverride struct{}

// Token is the bearer token in use: save it (e.g. as $BETE_TOKEN) to play as the same bot later.
func (c *Client) Token() string { return c.token.get() }

// BotID is the id of the bot Dial registered; empty when the token came from outside.
func (c *Client) BotID() string { return c.botID }

// Conn is the underlying gRPC connection (e.g. for the health or reflection services).
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// HouseBots fills the given seats with house bots of one policy, for CreateTable.
func HouseBots(policy betev1.HouseBotPolicy, seats ...uint32) []*betev1.HouseBotSeat {
	out := make([]*betev1.HouseBotSeat, 0, len(seats))
	for _, s := range seats {
		out = append(out, &betev1.HouseBotSeat{Seat: s, Policy: policy})
	}
	return out
}

// ParseHouseBot reads a house bot as the command lines spell it: "random", "heuristic", "search"
// or "search:<ms>", a search house bot thinking at most that long a decision (the server bounds
// it, 1 to 10,000 ms, and keeps it under the table's deadline; 0 is the server's default).
func ParseHouseBot(text string) (betev1.HouseBotPolicy, uint32, error) {
	name, ms, hasBudget := strings.Cut(strings.ToLower(text), ":")
	var policy betev1.HouseBotPolicy
	switch name {
	case "random":
		policy = betev1.HouseBotPolicy_HOUSE_BOT_POLICY_RANDOM
	case "heuristic":
		policy = betev1.HouseBotPolicy_HOUSE_BOT_POLICY_HEURISTIC
	case "search":
		policy = betev1.HouseBotPolicy_HOUSE_BOT_POLICY_SEARCH
	default:
		return 0, 0, fmt.Errorf("bete: unknown house bot %q (random, heuristic, search or search:<ms>)", text)
	}
	if !hasBudget {
		return policy, 0, nil
	}
	budget, err := strconv.ParseUint(strings.TrimSuffix(ms, "ms"), 10, 32)
	if err != nil || policy != betev1.HouseBotPolicy_HOUSE_BOT_POLICY_SEARCH {
		return 0, 0, fmt.Errorf("bete: bad house bot %q: only search takes a budget, in milliseconds (search:50)", text)
	}
	return policy, uint32(budget), nil
}

// HouseTable is the request for a table of ruleset with seats seats where house bots of policy
// fill every seat but 0, which is left for you.
func HouseTable(ruleset betev1.Ruleset, seats uint32, policy betev1.HouseBotPolicy) *betev1.CreateTableRequest {
	req := &betev1.CreateTableRequest{Ruleset: ruleset, Seats: seats}
	for s := uint32(1); s < seats; s++ {
		req.HouseBots = append(req.HouseBots, &betev1.HouseBotSeat{Seat: s, Policy: policy})
	}
	return req
}

// CreateTable creates a table and returns it. The caller is not seated: call Join.
func (c *Client) CreateTable(ctx context.Context, req *betev1.CreateTableRequest) (*betev1.Table, error) {
	resp, err := c.Tables.CreateTable(ctx, req)
	if err != nil {
		return nil, err
	}
	return resp.GetTable(), nil
}

// Join takes the lowest free seat at tableID and returns it.
func (c *Client) Join(ctx context.Context, tableID string) (uint32, error) {
	resp, err := c.Tables.JoinTable(ctx, &betev1.JoinTableRequest{TableId: tableID})
	if err != nil {
		return 0, err
	}
	return resp.GetSeat(), nil
}

// JoinInvited takes the lowest free seat at the private table tableID with the invitation code
// its creator got from CreateTable (CreateTableResponse.InvitationCode), and returns it.
func (c *Client) JoinInvited(ctx context.Context, tableID, invitationCode string) (uint32, error) {
	resp, err := c.Tables.JoinTable(ctx, &betev1.JoinTableRequest{
		TableId:        tableID,
		InvitationCode: invitationCode,
	})
	if err != nil {
		return 0, err
	}
	return resp.GetSeat(), nil
}

// JoinSeat takes the given seat at tableID.
func (c *Client) JoinSeat(ctx context.Context, tableID string, seat uint32) error {
	_, err := c.Tables.JoinTable(ctx, &betev1.JoinTableRequest{TableId: tableID, Seat: &seat})
	return err
}

// View returns the caller's current view of tableID.
func (c *Client) View(ctx context.Context, tableID string) (*betev1.SeatView, error) {
	resp, err := c.Tables.GetSeatView(ctx, &betev1.GetSeatViewRequest{TableId: tableID})
	if err != nil {
		return nil, err
	}
	return resp.GetView(), nil
}

// Record returns the finished match's bete-record/1 JSON.
func (c *Client) Record(ctx context.Context, tableID string) (string, error) {
	resp, err := c.Tables.GetGameRecord(ctx, &betev1.GetGameRecordRequest{TableId: tableID})
	if err != nil {
		return "", err
	}
	return resp.GetRecordJson(), nil
}

// bearer sends `authorization: Bearer <token>` on every call that has a token (RegisterBot is
// the one call made without).
type bearer struct {
	mu     sync.RWMutex
	token  string
	secure bool
}

func (b *bearer) get() string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.token
}

func (b *bearer) set(token string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.token = token
}

func (b *bearer) GetRequestMetadata(ctx context.Context, _ ...string) (map[string]string, error) {
	t := b.get()
	if o, ok := ctx.Value(tokenOverride{}).(string); ok && o != "" {
		t = o
	}
	if t == "" {
		return nil, nil
	}
	return map[string]string{"authorization": "Bearer " + t}, nil
}

// RequireTransportSecurity is false for plaintext clients: a token over plaintext is only
// acceptable on loopback, which is the caller's choice by not setting Options.TLS.
func (b *bearer) RequireTransportSecurity() bool { return b.secure }
