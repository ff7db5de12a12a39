module github.com/lethe-mq/lethe/client

go 1.22

require (
	github.com/google/uuid v1.6.0
	github.com/lethe-mq/lethe/api v0.0.0
)

replace github.com/lethe-mq/lethe/api => ../api
