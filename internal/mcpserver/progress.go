package mcpserver

import (
	"context"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressRelay forwards a backend's progress (api.ProgressFunc) to the
// client as notifications/progress without ever blocking the backend: report
// only records the newest value and wakes a sender goroutine, which sends
// the newest value it finds; values that arrive while a send is in flight
// replace one another, so a slow client sees fewer notifications, never a
// slower search. Progress only goes up (the protocol requires it): a value
// not above the last one is dropped. After stop nothing more is sent.
type progressRelay struct {
	ctx   context.Context
	token any
	send  func(context.Context, *mcp.ProgressNotificationParams) error
	log   *slog.Logger

	mu       sync.Mutex
	pending  *mcp.ProgressNotificationParams
	last     float64
	reported bool
	stopped  bool

	wake chan struct{}
	quit chan struct{}
	done chan struct{} // closed when the sender goroutine has ended
}

func newProgressRelay(ctx context.Context, token any, send func(context.Context, *mcp.ProgressNotificationParams) error, log *slog.Logger) *progressRelay {
	p := &progressRelay{
		ctx:   ctx,
		token: token,
		send:  send,
		log:   log,
		wake:  make(chan struct{}, 1),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go p.run()
	return p
}

// report is the api.ProgressFunc handed to the backend.
func (p *progressRelay) report(done, total int, message string) {
	progress := float64(done)
	p.mu.Lock()
	if p.stopped || (p.reported && progress <= p.last) {
		p.mu.Unlock()
		return
	}
	p.reported = true
	p.last = progress
	n := &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: progress, Message: message}
	if total > 0 {
		n.Total = float64(total)
	}
	p.pending = n
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default: // the sender is already due to look
	}
}

// stop ends the relay without waiting for a send in flight.
func (p *progressRelay) stop() {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	p.stopped = true
	p.pending = nil
	p.mu.Unlock()
	close(p.quit)
}

func (p *progressRelay) run() {
	defer close(p.done)
	for {
		select {
		case <-p.quit:
			return
		case <-p.wake:
		}
		p.mu.Lock()
		n := p.pending
		p.pending = nil
		stopped := p.stopped
		p.mu.Unlock()
		if stopped {
			return
		}
		if n == nil {
			continue
		}
		if err := p.send(p.ctx, n); err != nil {
			p.log.Debug("progress notification not sent", "error", err)
		}
	}
}
