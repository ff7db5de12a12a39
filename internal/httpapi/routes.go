package httpapi

import "github.com/lethe-mq/lethe/internal/auth"

// Roles, as the route table reads: each includes the ones above it.
const (
	public   = auth.Public
	read     = auth.Read  // lists and shows
	write    = auth.Write // produces and consumes
	operator = auth.Operator
)

// routes is the route table: every route lethe serves and the role it needs.
// docs/api.md has the same table; TestRouteTableMatchesTheDocs keeps them
// equal. Everything that can delete or skip data needs the operator.
func (s *Server) routes() {
	s.dashboardRoutes()
	s.handle("GET /health", public, s.health)
	s.handle("GET /ready", public, s.ready)
	s.handle("GET /metrics/prometheus", public, s.serveMetrics)
	s.handle("GET /metrics", public, s.serveMetrics)
	s.handle("GET /api/v1/openapi.json", public, s.openAPIDocument)

	s.handle("POST /api/v1/push", write, s.push)
	s.handle("GET /api/v1/pop", write, s.pop)
	s.handle("GET /api/v1/pop/queue/{queue}", write, s.pop)
	s.handle("GET /api/v1/pop/queue/{queue}/partition/{partition}", write, s.pop)
	s.handle("POST /api/v1/ack", write, s.ack)
	s.handle("POST /api/v1/ack/batch", write, s.ackBatch)
	s.handle("POST /api/v1/transaction", write, s.transaction)
	s.handle("POST /api/v1/lease/{leaseId}/extend", write, s.extendLease)

	s.handleDoc("POST /api/v1/configure", write, configureDocRole, s.configure)
	s.handle("GET /api/v1/resources/queues", read, s.listQueues)
	s.handle("GET /api/v1/resources/queues/{queue}", read, s.getQueue)
	s.handle("DELETE /api/v1/resources/queues/{queue}", operator, s.deleteQueue)
	s.handle("GET /api/v1/resources/overview", read, s.overview)
	s.handle("GET /api/v1/resources/namespaces", read, s.namespaces)
	s.handle("GET /api/v1/resources/tasks", read, s.tasks)

	s.handle("GET /api/v1/consumer-groups", read, s.listConsumerGroups)
	s.handle("GET /api/v1/consumer-groups/lagging", read, s.laggingConsumerGroups)
	s.handle("GET /api/v1/consumer-groups/{group}", read, s.getConsumerGroup)
	s.handle("DELETE /api/v1/consumer-groups/{group}", operator, s.deleteConsumerGroup)
	s.handle("DELETE /api/v1/consumer-groups/{group}/queues/{queue}", operator, s.deleteConsumerGroup)
	s.handle("POST /api/v1/consumer-groups/{group}/subscription", operator, s.updateSubscription)
	s.handle("POST /api/v1/consumer-groups/{group}/queues/{queue}/seek", operator, s.seek)
	s.handle("POST /api/v1/consumer-groups/{group}/queues/{queue}/partitions/{partition}/seek", operator, s.seek)

	s.handle("GET /api/v1/dlq", read, s.listDeadLetters)
	s.handle("DELETE /api/v1/dlq/{id}", operator, s.deleteDeadLetter)
	s.handle("POST /api/v1/dlq/{id}/replay", operator, s.replayDeadLetter)
	s.handle("GET /api/v1/messages", read, s.listMessages)
	s.handle("GET /api/v1/messages/{partitionId}/{transactionId}", read, s.getMessage)
	s.handle("DELETE /api/v1/messages/{partitionId}/{transactionId}", operator, s.deleteMessage)

	s.handle("GET /api/v1/status", read, s.status)
	s.handle("GET /api/v1/status/queues", read, s.queueStatuses)
	s.handle("GET /api/v1/status/queues/{queue}", read, s.queueStatus)
	s.handle("GET /api/v1/retention/status", read, s.retentionStatus)
	s.handle("GET /api/v1/retention/history", read, s.retentionHistory)
	s.handle("GET /api/v1/analytics/retention", read, s.retentionAnalytics)
	s.handle("GET /api/v1/analytics/postgres-stats", read, s.postgresStats)
	s.handle("GET /api/v1/analytics/table-stats", read, s.tableStats)
	s.handle("GET /api/v1/retention/tiers", read, s.retentionTiers)
	s.handle("GET /api/v1/retention/explain/{queue}", read, s.retentionExplain)
	s.handle("GET /api/v1/doctor", read, s.doctor)
	s.handle("POST /api/v1/retention/changes/{queue}/confirm", operator, s.confirmTierChange)
	s.handle("GET /api/v1/retention/holds", read, s.listHolds)
	s.handle("POST /api/v1/retention/holds", operator, s.placeHold)
	s.handle("DELETE /api/v1/retention/holds/{id}", operator, s.releaseHold)

	s.handle("POST /api/v1/traces", write, s.recordTrace)
	s.handle("GET /api/v1/traces/names", read, s.traceNames)
	s.handle("GET /api/v1/traces/by-name/{traceName}", read, s.tracesByName)
	s.handle("GET /api/v1/traces/{partitionId}/{transactionId}", read, s.messageTraces)

	// Queen asks read-write for all three, state reads included; a reset
	// (a new config_hash with reset: true) drops the query's state, as
	// the DELETE does, so it needs the operator.
	s.handleDoc("POST /streams/v1/queries", write, registerQueryDocRole, s.registerStreamQuery)
	s.handle("DELETE /streams/v1/queries/{name}", operator, s.removeStreamQuery)
	s.handle("POST /streams/v1/cycle", write, s.streamCycle)
	s.handle("POST /streams/v1/state/get", write, s.streamState)

	s.handle("GET /api/v1/system/maintenance", read, s.getPushMaintenance)
	s.handle("POST /api/v1/system/maintenance", operator, s.setPushMaintenance)
	s.handle("GET /api/v1/system/maintenance/pop", read, s.getPopMaintenance)
	s.handle("POST /api/v1/system/maintenance/pop", operator, s.setPopMaintenance)
}
