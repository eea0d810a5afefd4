package api

// StartDrain puts the server where Run puts it when its context ends:
// draining, and closing too when closing is true (see drainState).
func (s *Server) StartDrain(closing bool) {
	s.drain.draining.Store(true)
	s.drain.closing.Store(closing)
}

// KeepsCredentials is keepsCredentials, for the route review test.
func KeepsCredentials(path string) bool { return keepsCredentials(path) }
