package faults_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lethe-mq/lethe/client/api"
	"github.com/lethe-mq/lethe/internal/pgtest"
)

// procConsumerEnv holds a procConsumerJob as JSON. When set, the test
// binary is a consumer child process, not a test run (see init).
const procConsumerEnv = "LETHE_FAULTS_PROC_CONSUMER"

// procConsumerJob tells a consumer child what to do: pop one batch of a
// partition, ack the first Ack messages, then hold the lease until killed.
type procConsumerJob struct {
	URL, Queue, Partition, Group string
	Batch, Ack                   int
}

func init() {
	if job := os.Getenv(procConsumerEnv); job != "" {
		os.Exit(procConsumerChild(job))
	}
}

// procConsumerChild is the consumer process. It reports on stdout, one line
// each: "popped <pop response JSON>", "acked <transactionId>" once lethe
// confirmed the ack, then "holding", and waits to be killed.
func procConsumerChild(jobJSON string) int {
	var job procConsumerJob
	if err := json.Unmarshal([]byte(jobJSON), &job); err != nil {
		fmt.Println("error", err)
		return 2
	}
	a := procNewAPI(func() string { return job.URL }, procNewTally("child"))
	resp, rep := a.pop(job.Queue, job.Partition, job.Group, job.Batch, 5000)
	if rep.err != nil || rep.status != http.StatusOK {
		fmt.Printf("error pop: %d %v %s\n", rep.status, rep.err, rep.body)
		return 2
	}
	line, _ := json.Marshal(resp)
	fmt.Printf("popped %s\n", line)
	for _, m := range resp.Messages[:min(job.Ack, len(resp.Messages))] {
		results, rep := a.ackAll(job.Group, []api.Message{m})
		if rep.err != nil || rep.status != http.StatusOK || len(results) != 1 || !results[0].Success {
			fmt.Printf("error ack %s: %d %v %s\n", m.TransactionID, rep.status, rep.err, rep.body)
			return 2
		}
		fmt.Printf("acked %s\n", m.TransactionID)
	}
	fmt.Println("holding")
	time.Sleep(2 * time.Minute) // the parent kills us long before
	return 3
}

// procChildReport is what the parent read from a consumer child.
type procChildReport struct {
	popped api.PopResponse
	acked  []string
}

// procRunConsumerChild starts a consumer child, reads its report until it
// holds its lease, and SIGKILLs it.
func procRunConsumerChild(t *testing.T, job procConsumerJob) procChildReport {
	t.Helper()
	jobJSON, _ := json.Marshal(job)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), procConsumerEnv+"="+string(jobJSON))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start consumer child: %v", err)
	}
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		for sc := bufio.NewScanner(stdout); sc.Scan(); {
			lines <- sc.Text()
		}
	}()
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var rep procChildReport
	timeout := time.After(20 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("consumer child exited before holding its lease")
			}
			verb, rest, _ := strings.Cut(line, " ")
			switch verb {
			case "popped":
				if err := json.Unmarshal([]byte(rest), &rep.popped); err != nil {
					t.Fatalf("consumer child: %v", err)
				}
			case "acked":
				rep.acked = append(rep.acked, rest)
			case "holding":
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatalf("SIGKILL consumer child: %v", err)
				}
				return rep
			default:
				t.Fatalf("consumer child: %s", line)
			}
		case <-timeout:
			t.Fatalf("consumer child did not hold a lease within 20s")
		}
	}
}

// procConsumerRounds: partition, how many of a batch of 10 the child acks
// before it is killed.
var procConsumerRounds = []struct {
	partition string
	ack       int
}{{"c0", 0}, {"c1", 4}, {"c2", 9}, {"c3", 10}}

const procConsumerLease = time.Second

// procTestConsumerKilled: consumer processes are SIGKILLed holding a lease
// after acking part of it. What they acked is never delivered again; the
// rest comes back to the group, first unacked message first, only once the
// lease has expired.
func procTestConsumerKilled(t *testing.T, bin string) {
	lethe := procNewLethe(t, bin, pgtest.NewDatabase(t))
	tally := procNewTally("load")
	a := procNewAPI(lethe.URL, tally)
	procConfigure(t, a, "leases", `{"leaseTime":1,"retryLimit":100,"retryDelay":0}`)
	ledger := procNewLedger()
	load := &procLoad{api: a, ledger: ledger, queue: "leases", group: "workers"}
	var batch []procPayload
	for i := range 25 * len(procConsumerRounds) {
		batch = append(batch, procNewPayload(0, i, procConsumerRounds[i%len(procConsumerRounds)].partition))
	}
	ledger.attempt(batch)
	if !load.pushUntilAcked(batch) {
		t.Fatalf("push: %v", load.problemList())
	}
	for _, r := range procConsumerRounds {
		procConsumerRound(t, a, ledger, procConsumerJob{URL: lethe.URL(), Queue: "leases",
			Partition: r.partition, Group: "workers", Batch: 10, Ack: r.ack})
	}
	drained := load.drain(procConsumerLease, procDrainTimeout)
	f := ledger.figures()
	t.Logf("%d consumers SIGKILLed mid-lease: %s", len(procConsumerRounds), f)
	if !drained {
		t.Errorf("drain did not finish within %v", procDrainTimeout)
	}
	for _, p := range load.problemList() {
		t.Errorf("unexpected answer: %s", p)
	}
	procCheckFigures(t, f)
	for _, bad := range tally.unexpected(func(route, outcome string) bool { return procSuccess(outcome) }) {
		t.Errorf("unexpected outcome: %s", bad)
	}
}

// procConsumerRound runs one child, kills it, then pops the partition as
// another consumer of the group and checks what comes back.
func procConsumerRound(t *testing.T, a *procAPI, ledger *procLedger, job procConsumerJob) {
	t.Helper()
	launched := time.Now()
	rep := procRunConsumerChild(t, job)
	msgs := rep.popped.Messages
	if len(msgs) != job.Batch || len(rep.acked) != job.Ack {
		t.Fatalf("%s: child popped %d and acked %d, want %d and %d", job.Partition, len(msgs), len(rep.acked), job.Batch, job.Ack)
	}
	ledger.deliver(msgs)
	ackResults := make([]api.AckResult, len(rep.acked))
	for i, id := range rep.acked {
		ackResults[i] = api.AckResult{TransactionID: id, Success: true}
	}
	ledger.confirm(ackResults, time.Now())

	var next api.PopResponse
	if !procWaitFor(procConsumerLease+15*time.Second, func() bool {
		resp, r := a.pop(job.Queue, job.Partition, job.Group, 100, 500)
		next = resp
		return r.err == nil && r.status == http.StatusOK
	}) {
		t.Fatalf("%s: nothing delivered within %v of the kill", job.Partition, procConsumerLease+15*time.Second)
	}
	answered := time.Now()
	ledger.deliver(next.Messages)
	if results, r := a.ackAll(job.Group, next.Messages); r.err == nil && r.status == http.StatusOK {
		ledger.confirm(results, time.Now())
	}
	first := next.Messages[0]
	if job.Ack == len(msgs) {
		if first.RetryCount != 0 || slices.Contains(rep.acked, first.TransactionID) {
			t.Errorf("%s: after a fully acked lease got %s (retryCount %d)", job.Partition, first.TransactionID, first.RetryCount)
		}
		return
	}
	// The lease began after launch, so it cannot have expired earlier
	// than launch + lease time.
	if answered.Before(launched.Add(procConsumerLease)) {
		t.Errorf("%s: unacked messages redelivered %v after the child started, before its lease could expire",
			job.Partition, answered.Sub(launched))
	}
	unacked := msgs[job.Ack:]
	if first.TransactionID != unacked[0].TransactionID || first.RetryCount < 1 {
		t.Errorf("%s: first redelivery is %s (retryCount %d), want %s with retryCount >= 1",
			job.Partition, first.TransactionID, first.RetryCount, unacked[0].TransactionID)
	}
	for _, m := range unacked {
		if !slices.ContainsFunc(next.Messages, func(n api.Message) bool { return n.TransactionID == m.TransactionID }) {
			t.Errorf("%s: unacked %s not redelivered after the lease expired", job.Partition, m.TransactionID)
		}
	}
}
