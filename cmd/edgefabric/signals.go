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
	sigs := stopSignals()
	return signal.NotifyContext(context.Background(), sigs...)
}

// undoOnSignal runs undo when a stop signal (as stopContext's) arrives
// before the returned stop is called, then dies of that signal as it
// would have: it guards the directories an --out or --pcap flag made
// while a computation that reads no context runs (plan spain, a
// simulator run or reproduction), which a Ctrl-C left behind.
func undoOnSignal(undo func()) (stop func()) {
	sigs := stopSignals()
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case s := <-ch:
			dieOf(s, undo)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
		<-finished
	}
}

// dieOf runs abort, then dies of signal s as it would have uncaught; for
// SIGQUIT it exits 131 instead, as an interrupted run does, since Go's
// own SIGQUIT prints every goroutine's stack and exits 2.
func dieOf(s os.Signal, abort func()) {
	abort()
	if s == syscall.SIGQUIT {
		os.Exit(128 + int(syscall.SIGQUIT))
	}
	signal.Reset(s)
	if sig, ok := s.(syscall.Signal); ok {
		syscall.Kill(os.Getpid(), sig)
	}
	select {} // the signal's default action ends the process
}

// stopSignals are the signals that stop a command (stopContext's):
// SIGINT and SIGTERM, and SIGHUP and SIGQUIT unless ignored (nohup).
func stopSignals() []os.Signal {
	sigs := []os.Signal{syscall.SIGINT, syscall.SIGTERM}
	for _, s := range []os.Signal{syscall.SIGHUP, syscall.SIGQUIT} {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	return sigs
}
