// Package probe holds what every utap engine shares: the probe spec language
// (Spec, parsed by Parse), its typed expression IR (Expr), resolved probe
// sites (Site), the events engines emit (Event) and the thin Engine contract.
//
// Data flows one way: Parse → elfsym resolves a Spec to Sites → an Engine
// installs them and streams Events → output writers.
package probe
