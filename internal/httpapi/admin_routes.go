package httpapi

// adminRoutes registers consumer-group, dead-letter, message-browsing and
// status routes.
func (s *Server) adminRoutes() {
	m := s.mux
	m.HandleFunc("GET /api/v1/consumer-groups", s.listConsumerGroups)
	m.HandleFunc("GET /api/v1/consumer-groups/lagging", s.laggingConsumerGroups)
	m.HandleFunc("GET /api/v1/consumer-groups/{group}", s.getConsumerGroup)
	m.HandleFunc("DELETE /api/v1/consumer-groups/{group}", s.deleteConsumerGroup)
	m.HandleFunc("POST /api/v1/consumer-groups/{group}/subscription", s.updateSubscription)
	m.HandleFunc("DELETE /api/v1/consumer-groups/{group}/queues/{queue}", s.deleteConsumerGroup)
	m.HandleFunc("POST /api/v1/consumer-groups/{group}/queues/{queue}/seek", s.seek)
	m.HandleFunc("POST /api/v1/consumer-groups/{group}/queues/{queue}/partitions/{partition}/seek", s.seek)

	m.HandleFunc("GET /api/v1/dlq", s.listDeadLetters)
	m.HandleFunc("DELETE /api/v1/dlq/{id}", s.deleteDeadLetter)
	m.HandleFunc("POST /api/v1/dlq/{id}/replay", s.replayDeadLetter)

	m.HandleFunc("GET /api/v1/messages", s.listMessages)
	m.HandleFunc("GET /api/v1/messages/{partitionId}/{transactionId}", s.getMessage)
	m.HandleFunc("DELETE /api/v1/messages/{partitionId}/{transactionId}", s.deleteMessage)

	m.HandleFunc("GET /api/v1/resources/overview", s.overview)
	m.HandleFunc("GET /api/v1/resources/namespaces", s.namespaces)
	m.HandleFunc("GET /api/v1/resources/tasks", s.tasks)
	m.HandleFunc("GET /api/v1/status", s.status)
	m.HandleFunc("GET /api/v1/status/queues", s.queueStatuses)
	m.HandleFunc("GET /api/v1/status/queues/{queue}", s.queueStatus)
}
