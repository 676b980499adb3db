package main

// The tracer's CPU profile, for the profile-guided build (default.pgo,
// scripts/pgo): only in a binary built with -tags utapprof
// (pgo_prof.go), which profiles the tracer into $UTAP_PROF.
var (
	startProfile = func() {}
	stopProfile  = func() {}
)
