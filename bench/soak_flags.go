package main

import (
	"flag"
	"time"

	"github.com/lethe-mq/lethe/bench/internal/soak"
)

// soakFlags are the -soak-* flags; their defaults are soak.Default's load.
type soakFlags struct {
	interval               time.Duration
	size, batch            int
	groups, consumers      int
	rate, partitions       int
	completed              time.Duration
	retRate, retPartitions int
	retention              time.Duration
}

func (f *soakFlags) register(fs *flag.FlagSet, d *time.Duration) {
	def := soak.Default(0)
	q1, q2 := def.Queues[0], def.Queues[1]
	fs.DurationVar(d, "soak", 0, "run only the soak, for this long (e.g. 2h): a steady mixed load with retention rules, sampling the footprint; writes soak.md, soak.json and soak-footprint.png")
	fs.DurationVar(&f.interval, "soak-interval", def.Interval, "time between two footprint samples of the soak")
	fs.IntVar(&f.size, "soak-size", def.Size, "payload bytes of the soak's messages (incompressible)")
	fs.IntVar(&f.batch, "soak-batch", def.Batch, "messages per push request in the soak")
	fs.IntVar(&f.groups, "soak-groups", def.Groups, "consumer groups reading every soak queue")
	fs.IntVar(&f.consumers, "soak-consumers", def.Consumers, "long-polling consumers per group and queue")
	fs.IntVar(&f.rate, "soak-rate", q1.Rate, "msg/s offered to the soak's completed-retention queue")
	fs.IntVar(&f.partitions, "soak-partitions", q1.Partitions, "partitions of the completed-retention queue")
	fs.DurationVar(&f.completed, "soak-completed-retention", q1.CompletedRetention, "completedRetentionSeconds of that queue")
	fs.IntVar(&f.retRate, "soak-retention-rate", q2.Rate, "msg/s offered to the soak's retention queue (0: no such queue)")
	fs.IntVar(&f.retPartitions, "soak-retention-partitions", q2.Partitions, "partitions of the retention queue")
	fs.DurationVar(&f.retention, "soak-retention", q2.Retention, "retentionSeconds of that queue")
}

// spec is the soak the flags describe.
func (f *soakFlags) spec(d time.Duration) soak.Spec {
	s := soak.Default(d)
	s.Interval, s.Size, s.Batch, s.Groups, s.Consumers = f.interval, f.size, f.batch, f.groups, f.consumers
	s.Queues[0].Rate, s.Queues[0].Partitions, s.Queues[0].CompletedRetention = f.rate, f.partitions, f.completed
	s.Queues[1].Rate, s.Queues[1].Partitions, s.Queues[1].Retention = f.retRate, f.retPartitions, f.retention
	if f.retRate == 0 {
		s.Queues = s.Queues[:1]
	}
	return s
}
