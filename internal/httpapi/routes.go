package httpapi

import "github.com/lethe-mq/lethe/internal/auth"

// Roles, as the route table reads.
const (
	public   = auth.Public
	token    = auth.Client
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

	s.handle("POST /api/v1/push", token, s.push)
	s.handle("GET /api/v1/pop", token, s.pop)
	s.handle("GET /api/v1/pop/queue/{queue}", token, s.pop)
	s.handle("GET /api/v1/pop/queue/{queue}/partition/{partition}", token, s.pop)
	s.handle("POST /api/v1/ack", token, s.ack)
	s.handle("POST /api/v1/ack/batch", token, s.ackBatch)
	s.handle("POST /api/v1/transaction", token, s.transaction)
	s.handle("POST /api/v1/lease/{leaseId}/extend", token, s.extendLease)

	s.handleDoc("POST /api/v1/configure", token, configureDocRole, s.configure)
	s.handle("GET /api/v1/resources/queues", token, s.listQueues)
	s.handle("GET /api/v1/resources/queues/{queue}", token, s.getQueue)
	s.handle("DELETE /api/v1/resources/queues/{queue}", operator, s.deleteQueue)
	s.handle("GET /api/v1/resources/overview", token, s.overview)
	s.handle("GET /api/v1/resources/namespaces", token, s.namespaces)
	s.handle("GET /api/v1/resources/tasks", token, s.tasks)

	s.handle("GET /api/v1/consumer-groups", token, s.listConsumerGroups)
	s.handle("GET /api/v1/consumer-groups/lagging", token, s.laggingConsumerGroups)
	s.handle("GET /api/v1/consumer-groups/{group}", token, s.getConsumerGroup)
	s.handle("DELETE /api/v1/consumer-groups/{group}", operator, s.deleteConsumerGroup)
	s.handle("DELETE /api/v1/consumer-groups/{group}/queues/{queue}", operator, s.deleteConsumerGroup)
	s.handle("POST /api/v1/consumer-groups/{group}/subscription", operator, s.updateSubscription)
	s.handle("POST /api/v1/consumer-groups/{group}/queues/{queue}/seek", operator, s.seek)
	s.handle("POST /api/v1/consumer-groups/{group}/queues/{queue}/partitions/{partition}/seek", operator, s.seek)

	s.handle("GET /api/v1/dlq", token, s.listDeadLetters)
	s.handle("DELETE /api/v1/dlq/{id}", operator, s.deleteDeadLetter)
	s.handle("POST /api/v1/dlq/{id}/replay", operator, s.replayDeadLetter)
	s.handle("GET /api/v1/messages", token, s.listMessages)
	s.handle("GET /api/v1/messages/{partitionId}/{transactionId}", token, s.getMessage)
	s.handle("DELETE /api/v1/messages/{partitionId}/{transactionId}", operator, s.deleteMessage)

	s.handle("GET /api/v1/status", token, s.status)
	s.handle("GET /api/v1/status/queues", token, s.queueStatuses)
	s.handle("GET /api/v1/status/queues/{queue}", token, s.queueStatus)
	s.handle("GET /api/v1/retention/status", token, s.retentionStatus)
	s.handle("GET /api/v1/retention/history", token, s.retentionHistory)
	s.handle("GET /api/v1/analytics/retention", token, s.retentionAnalytics)
	s.handle("GET /api/v1/analytics/postgres-stats", token, s.postgresStats)
	s.handle("GET /api/v1/analytics/table-stats", token, s.tableStats)
	s.handle("GET /api/v1/retention/tiers", token, s.retentionTiers)
	s.handle("GET /api/v1/retention/explain/{queue}", token, s.retentionExplain)
	s.handle("POST /api/v1/retention/changes/{queue}/confirm", operator, s.confirmTierChange)

	s.handle("POST /api/v1/traces", token, s.recordTrace)
	s.handle("GET /api/v1/traces/names", token, s.traceNames)
	s.handle("GET /api/v1/traces/by-name/{traceName}", token, s.tracesByName)
	s.handle("GET /api/v1/traces/{partitionId}/{transactionId}", token, s.messageTraces)

	s.handle("POST /streams/v1/queries", token, s.registerStreamQuery)
	s.handle("DELETE /streams/v1/queries/{name}", operator, s.removeStreamQuery)
	s.handle("POST /streams/v1/cycle", token, s.streamCycle)
	s.handle("POST /streams/v1/state/get", token, s.streamState)

	s.handle("GET /api/v1/system/maintenance", token, s.getPushMaintenance)
	s.handle("POST /api/v1/system/maintenance", operator, s.setPushMaintenance)
	s.handle("GET /api/v1/system/maintenance/pop", token, s.getPopMaintenance)
	s.handle("POST /api/v1/system/maintenance/pop", operator, s.setPopMaintenance)
}
