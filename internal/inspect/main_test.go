package inspect

import (
	"testing"

	"github.com/lethe-mq/lethe/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
