package deploy

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

type composeFile struct {
	Services map[string]struct {
		Image string `yaml:"image"`
		Build *struct {
			Context    string `yaml:"context"`
			Dockerfile string `yaml:"dockerfile"`
		} `yaml:"build"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		Healthcheck *struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
		DependsOn map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

// TestComposeRunsLetheAgainstPostgres checks what Docker would need from
// deploy/compose.yaml; no Docker engine runs here.
func TestComposeRunsLetheAgainstPostgres(t *testing.T) {
	t.Parallel()
	var c composeFile
	if err := yaml.Unmarshal([]byte(readFile(t, "compose.yaml")), &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	pg, lethe := c.Services["postgres"], c.Services["lethe"]
	if !strings.HasPrefix(pg.Image, "postgres:15") {
		t.Errorf("postgres image %q, want PostgreSQL 15", pg.Image)
	}
	if pg.Healthcheck == nil || !strings.Contains(strings.Join(pg.Healthcheck.Test, " "), "pg_isready") {
		t.Error("postgres has no pg_isready healthcheck")
	}
	for svc, mount := range map[string]string{"postgres": "/var/lib/postgresql/data", "lethe": "/var/lib/lethe"} {
		s := c.Services[svc]
		named := ""
		for _, v := range s.Volumes {
			if src, dst, ok := strings.Cut(v, ":"); ok && dst == mount {
				named = src
			}
		}
		if _, declared := c.Volumes[named]; named == "" || !declared {
			t.Errorf("%s does not keep %s on a named volume", svc, mount)
		}
	}
	if lethe.DependsOn["postgres"].Condition != "service_healthy" {
		t.Error("lethe does not wait for postgres to be healthy")
	}
	dsn, err := url.Parse(strings.NewReplacer("${POSTGRES_PASSWORD:-lethe}", "lethe").Replace(lethe.Environment["DATABASE_URL"]))
	if err != nil || dsn.Hostname() != "postgres" || dsn.Path != "/"+pg.Environment["POSTGRES_DB"] || dsn.User.Username() != pg.Environment["POSTGRES_USER"] {
		t.Errorf("lethe's DATABASE_URL %q does not name the postgres service's database and user (%v)", lethe.Environment["DATABASE_URL"], err)
	}
	if lethe.Build == nil {
		t.Fatal("lethe has no build section")
	}
	if _, err := os.Stat(filepath.Join(lethe.Build.Context, lethe.Build.Dockerfile)); err != nil {
		t.Errorf("lethe's build context and Dockerfile do not resolve from deploy/: %v", err)
	}
}
