package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/edgefabric/edgefabric/emu"
	"github.com/edgefabric/edgefabric/experiment"
	"github.com/edgefabric/edgefabric/scheme/all"
)

// flagValues are the values shell completion offers for a flag, by name,
// wherever the flag is defined: the same names the commands accept.
func flagValues() map[string][]string {
	return map[string][]string{
		"ties":   {"pair", "random", "ordered", "node"},
		"scheme": append(all.Registry().Names(), emu.KernelBridge),
		"engine": {"emu", "sim"},
		"format": {"yaml", "json", "dot", "clab", "graphml"},
		"log":    {"off", "error", "warn", "info", "debug"},
		"trace":  {"full", "headers"},
	}
}

// dirFlags name a directory, wherever they are defined: completion offers
// directories only (it offered files, which they refuse).
var dirFlags = []string{"out", "pcap"}

// registerCompletions teaches shell completion the values of the flags
// above, lab names for the lab verbs, and the names of reproductions and
// benchmarks: completion offered file names for all of them.
func registerCompletions(root *cobra.Command) {
	values := flagValues()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, vals := range values {
			if c.LocalNonPersistentFlags().Lookup(name) != nil {
				_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp))
			}
		}
		for _, name := range dirFlags {
			if c.LocalNonPersistentFlags().Lookup(name) != nil {
				_ = c.MarkFlagDirname(name)
			}
		}
		switch c.Name() {
		case "down", "status", "exec", "link":
			c.ValidArgsFunction = labArgs
		case "repro":
			c.ValidArgsFunction = firstArg(func() []string {
				var names []string
				for _, r := range experiment.All() {
					names = append(names, r.Name)
				}
				return names
			})
		case "bench":
			c.ValidArgsFunction = firstArg(func() []string { return []string{"spain-plan"} })
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// labArgs completes a lab verb's first argument with the labs that exist
// (link's fourth with down and up, exec's command with file names); the
// others are left to the user.
func labArgs(c *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	switch {
	case len(args) == 0:
		labs, _ := emu.Labs()
		return labs, cobra.ShellCompDirectiveNoFileComp
	case c.Name() == "link" && len(args) == 3:
		return []string{"down", "up"}, cobra.ShellCompDirectiveNoFileComp
	case c.Name() == "exec" && len(args) >= 2:
		// The command and its arguments: a node shares the host's files.
		return nil, cobra.ShellCompDirectiveDefault
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// firstArg completes a command's one argument from names.
func firstArg(names func() []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names(), cobra.ShellCompDirectiveNoFileComp
	}
}

// helpTopics completes help's arguments with the subcommands of the
// command named so far (the root's at first), help included, with their
// descriptions, as cobra's own help command does.
func helpTopics(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	cmd, rest, err := c.Root().Find(args)
	if err != nil || len(rest) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var topics []string
	for _, sub := range cmd.Commands() {
		if (sub.IsAvailableCommand() || sub == c) && strings.HasPrefix(sub.Name(), toComplete) {
			topics = append(topics, sub.Name()+"\t"+sub.Short)
		}
	}
	return topics, cobra.ShellCompDirectiveNoFileComp
}
