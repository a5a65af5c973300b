// Package dumbnet implements DumbNet (Li et al., EuroSys '18): a data-center
// fabric whose switches have no tables, no state and no configuration.
// Hosts write the whole path into each frame as one-byte tags (EtherType
// 0x9800, one tag per hop, 0xFF ends the path); a switch pops the first tag
// and forwards the frame on the port it names, answers tag 0 with its
// unique ID, and broadcasts its port state changes with a hop limit.
//
// Three elements, all sans-IO state machines that run unchanged in the
// simulator and the emulator:
//
//   - Switch, on every switch (§3.2, §4.1, §4.2).
//   - Agent, on every host, between the host's unmodified stack (the Local
//     port) and its NIC (§5.2): it pushes the path from its PathTable onto
//     outgoing frames, strips the end marker from incoming ones, answers
//     the stack's ARP from what the controller told it, answers probing
//     messages, fails over locally on a port notification and floods it to
//     the hosts it talks to (§4.2 stage 1), and optionally balances flowlets
//     (§6.2). Hosts find the controller by its announcement or by probing.
//   - Controller, inside one host's Agent (§4): BFS topology discovery with
//     probing messages (§4.1), path graphs on query (§4.3: primary path,
//     Algorithm 1's local detours, backup path), and topology patches
//     (§4.2 stage 2). Its state sits behind Store.
//
// Use it through the scheme registry (Register, New) and place
// Fabric.Element(n) on every node; Fabric.Controller exposes discovery's
// progress and result (Done, DoneAt, Topology), Expected the topology it
// should find, and Fabric.Counters every element's counters. docs/dumbnet.md
// describes the design decisions and the measurements.
package dumbnet
