package probe

// Bind fills s.Fetches and s.Cond from s.Spec, resolving parameter names
// (Ident) against s.Params. elfsym.Resolve calls it for every site.
// TEMPORARY: copies without resolving; the parser's author replaces it.
func (s *Site) Bind() error {
	s.Fetches = s.Spec.Fetches
	s.Cond = s.Spec.Cond
	return nil
}
