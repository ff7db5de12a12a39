package pgtest

// CreateDatabase is NewDatabase for code that has no testing.TB, such as
// the servers behind Example functions: a migrated copy whose name says
// label. The caller drops it with drop; the shared server and everything
// on it go away when Main returns anyway.
func CreateDatabase(label string) (dsn string, drop func() error, err error) {
	s, err := get()
	if err != nil {
		return "", nil, err
	}
	name, err := s.createDatabase(label, true)
	if err != nil {
		return "", nil, err
	}
	return s.connString(name), func() error { return s.dropDatabase(name) }, nil
}
