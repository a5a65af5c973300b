package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// stopContext is cancelled by the signals that stop a command owning a lab
// (up, up --foreground, demo), which then removes what it built: SIGINT
// and SIGTERM always (down stops a daemon with SIGTERM), and SIGHUP and
// SIGQUIT unless they were ignored at start. Go's default for an uncaught
// SIGHUP is to exit at once, and for SIGQUIT (Ctrl-\) to dump the
// goroutines and exit, so closing the terminal of an up --foreground or a
// demo (or a kill -HUP of a daemon) left the lab's namespaces behind;
// under nohup SIGHUP stays ignored, as the user asked. (SIGABRT still
// dumps the goroutines, for debugging.)
//
// SIGPIPE is caught and dropped: Go's default for a write to a closed
// stdout or stderr (up --foreground | head, a closed terminal) is to die
// at once, which left the lab behind as well. Writes there then fail
// and the lab runs on until it is stopped. (Caught, not ignored: the
// commands the lab starts get the default back.)
func stopContext() (context.Context, context.CancelFunc) {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	sigs := []os.Signal{syscall.SIGINT, syscall.SIGTERM}
	for _, s := range []os.Signal{syscall.SIGHUP, syscall.SIGQUIT} {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	return signal.NotifyContext(context.Background(), sigs...)
}
