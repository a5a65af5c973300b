package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// stopContext is cancelled by the signals that stop a command owning a lab
// (up, up --foreground, demo), which then removes what it built: SIGINT
// and SIGTERM always (down stops a daemon with SIGTERM), and SIGHUP unless
// it was ignored at start. Go's default for an uncaught SIGHUP is to exit
// at once, so closing the terminal of an up --foreground or a demo (or a
// kill -HUP of a daemon) left the lab's namespaces behind; under nohup
// SIGHUP stays ignored, as the user asked.
func stopContext() (context.Context, context.CancelFunc) {
	sigs := []os.Signal{syscall.SIGINT, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return signal.NotifyContext(context.Background(), sigs...)
}
