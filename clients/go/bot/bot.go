package bot

import (
	betev1 "github.com/bete-game/bete/clients/go/gen/bete/v1"
)

// Bot makes decisions. Decide gets the seat's view with `legal_actions` filled and returns the
// action to submit: best one of `view.LegalActions` (a copy made with the helpers of this package
// works as well). Returning nil plays the first legal action.
//
// The Runner calls a bot for several tables at once: calls for one table are serial (hooks and
// Decide in event order), calls for different tables may run concurrently.
type Bot interface {
	Decide(view *betev1.SeatView) *betev1.Action
}

// BotFunc adapts a plain function to a Bot.
type BotFunc func(view *betev1.SeatView) *betev1.Action

// Decide calls f.
func (f BotFunc) Decide(view *betev1.SeatView) *betev1.Action { return f(view) }

// DealStartHook is an optional interface: a Bot that implements it hears every deal's start at
// its tables, with the seat's dealt hand.
type DealStartHook interface {
	DealStarted(tableID string, seat uint32, ev *betev1.DealStarted)
}

// DealEndHook is an optional interface: a Bot that implements it hears every deal's settlement.
type DealEndHook interface {
	DealSettled(tableID string, seat uint32, ev *betev1.DealSettled)
}

// MatchEndHook is an optional interface: a Bot that implements it hears the final result of
// every match it played.
type MatchEndHook interface {
	MatchEnded(tableID string, seat uint32, ev *betev1.MatchEnded)
}

// EventHook is an optional interface: a Bot that implements it sees every event of its tables,
// exactly once and in sequence order, as projected for its seat.
type EventHook interface {
	Event(tableID string, seat uint32, ev *betev1.Event)
}

// MyTurn tells whether the view is of the seat that must act now (legal actions filled).
func MyTurn(view *betev1.SeatView) bool {
	return view.ViewerSeat != nil && view.ToAct != nil && view.GetViewerSeat() == view.GetToAct() &&
		len(view.GetLegalActions()) > 0
}
