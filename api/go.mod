module github.com/lethe-mq/lethe/api

go 1.22
