package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/lethe-mq/lethe/client/api"
)

// checkGrants lists what of schema lethe PUBLIC may use: the schema
// itself, a table, view or sequence with a privilege granted to PUBLIC,
// or a function PUBLIC may execute (PostgreSQL's default for a function
// whose privileges were never set).
func checkGrants(ctx context.Context, q Querier, _ Config) (string, string, string, error) {
	rows, err := q.Query(ctx, `
		SELECT 'schema lethe (' || p || ')'
		  FROM unnest(ARRAY['USAGE', 'CREATE']) p
		 WHERE has_schema_privilege('public', 'lethe', p)
		UNION ALL
		SELECT 'table lethe.' || c.relname || ' (' || string_agg(DISTINCT a.privilege_type, ', ') || ')'
		  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace, aclexplode(c.relacl) a
		 WHERE n.nspname = 'lethe' AND a.grantee = 0
		 GROUP BY c.relname
		UNION ALL
		SELECT 'function ' || p.oid::regprocedure::text
		  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		 WHERE n.nspname = 'lethe'
		   AND (p.proacl IS NULL OR EXISTS (SELECT 1 FROM aclexplode(p.proacl) a WHERE a.grantee = 0))
		 ORDER BY 1`)
	if err != nil {
		return "", "", "", fmt.Errorf("read what PUBLIC is granted: %w", err)
	}
	granted, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", "", "", fmt.Errorf("read what PUBLIC is granted: %w", err)
	}
	if len(granted) == 0 {
		return api.DoctorOK, "PUBLIC holds no privilege on schema lethe, its tables, sequences or functions", "", nil
	}
	shown := granted
	if len(shown) > 10 {
		shown = append(shown[:10:10], fmt.Sprintf("and %d more", len(granted)-10))
	}
	return api.DoctorFail, fmt.Sprintf("PUBLIC, so every role of the cluster, may use %d objects of lethe's: %s",
			len(granted), strings.Join(shown, "; ")),
		"REVOKE ALL ON SCHEMA lethe FROM PUBLIC; REVOKE ALL ON ALL TABLES IN SCHEMA lethe FROM PUBLIC; " +
			"REVOKE ALL ON ALL SEQUENCES IN SCHEMA lethe FROM PUBLIC; REVOKE ALL ON ALL FUNCTIONS IN SCHEMA lethe FROM PUBLIC;", nil
}
