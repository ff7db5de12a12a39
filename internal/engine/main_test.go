package engine_test

import (
	"testing"

	"lethe/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
