package pgstore

// StopHeartbeat stops s renewing its lease, as a hung process would.
func StopHeartbeat(s *Store) {
	close(s.stop)
	s.done.Wait()
	s.stop = make(chan struct{})
}
