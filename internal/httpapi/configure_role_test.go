package httpapi

import (
	"testing"

	"github.com/lethe-mq/lethe/client/api"
)

func TestDeletingChanges(t *testing.T) {
	t.Parallel()
	base := api.DefaultQueueOptions()
	with := func(f func(*api.QueueOptions)) api.QueueOptions {
		o := base
		f(&o)
		return o
	}
	on := with(func(o *api.QueueOptions) {
		o.RetentionEnabled, o.RetentionSeconds, o.CompletedRetentionSeconds, o.MaxWaitTimeSeconds = true, 3600, 600, 7200
	})
	for _, c := range []struct {
		name      string
		cur, next api.QueueOptions
		deletes   bool
	}{
		{"nothing changes", on, on, false},
		{"other options", base, with(func(o *api.QueueOptions) { o.LeaseTime, o.RetryLimit, o.DedupWindowSeconds = 5, 0, 1 }), false},
		{"retention turned on", base, with(func(o *api.QueueOptions) { o.RetentionEnabled = true }), true},
		{"retention turned off", on, with(func(o *api.QueueOptions) { *o = on; o.RetentionEnabled = false }), false},
		{"retentionSeconds set", base, with(func(o *api.QueueOptions) { o.RetentionSeconds = 60 }), true},
		{"retentionSeconds lowered", on, with(func(o *api.QueueOptions) { *o = on; o.RetentionSeconds = 60 }), true},
		{"retentionSeconds raised", on, with(func(o *api.QueueOptions) { *o = on; o.RetentionSeconds = 7200 }), false},
		{"retentionSeconds off", on, with(func(o *api.QueueOptions) { *o = on; o.RetentionSeconds = 0 }), false},
		{"completedRetentionSeconds set", base, with(func(o *api.QueueOptions) { o.CompletedRetentionSeconds = 1 }), true},
		{"completedRetentionSeconds lowered", on, with(func(o *api.QueueOptions) { *o = on; o.CompletedRetentionSeconds = 599 }), true},
		{"ttl set", base, with(func(o *api.QueueOptions) { o.TTL = 60 }), true},
		{"ttl lowered", with(func(o *api.QueueOptions) { o.TTL = 600 }), with(func(o *api.QueueOptions) { o.TTL = 60 }), true},
		{"ttl off", with(func(o *api.QueueOptions) { o.TTL = 600 }), base, false},
		{"maxWait raised", on, with(func(o *api.QueueOptions) { *o = on; o.MaxWaitTimeSeconds = 9000 }), true},
		{"maxWait off", on, with(func(o *api.QueueOptions) { *o = on; o.MaxWaitTimeSeconds = 0 }), true},
	} {
		if got := len(deletingChanges(c.cur, c.next)) > 0; got != c.deletes {
			t.Errorf("%s: deletes more = %v, want %v (%v)", c.name, got, c.deletes, deletingChanges(c.cur, c.next))
		}
	}
}
