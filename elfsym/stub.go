package elfsym

import "github.com/utap/utap/probe"

// TEMPORARY STUB: the elfsym implementer replaces this file.

// Resolve matches every spec to its sites in t. A spec that matches no
// site is an error naming it. Probe (the index into specs) is set on each
// site. Every Site.Addr is checked to be an instruction boundary.
func Resolve(specs []*probe.Spec, t Target) ([]probe.Site, error) { panic("elfsym: not implemented") }

// List returns every probe-able location of t whose name matches the glob
// pattern ("" for all).
func List(t Target, pattern string) ([]Symbol, error) { panic("elfsym: not implemented") }

// Maps reads /proc/PID/maps.
func Maps(pid int) ([]Mapping, error) { panic("elfsym: not implemented") }

// Bias returns the load bias of object (an absolute path, matched by path
// or by inode) in maps: runtime address = link-time address + bias.
func Bias(maps []Mapping, object string) (uint64, error) { panic("elfsym: not implemented") }
