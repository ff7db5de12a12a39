// Package failover tests lethe across a PostgreSQL failover: a primary
// with a synchronous streaming standby, lethe connected to both through
// one multi-host connection string (target_session_attrs=read-write), the
// primary killed and the standby promoted. It holds only tests.
package failover
