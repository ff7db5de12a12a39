// Package pgembed runs a private PostgreSQL server from binaries already
// installed on the machine, so lethe can be developed, tested and demoed
// without a separately managed database.
//
// The cluster lives in a folder of its own (Config.DataDir): the data
// directory in DataDir/data and the server log in DataDir/pg.log. Data is
// kept between starts, so a Cluster can be stopped and started again.
//
// Private by default: the server listens on a Unix socket only, in a
// folder of mode 0700 owned by the server's OS user (DataDir/socket, or a
// temp folder when that path is too long for a socket), so no other local
// user can connect. A TCP listener is opened only when Config.ListenAddress
// asks for one, and then needs a generated password (SCRAM), kept in
// DataDir/postgres.password with mode 0600. pg_hba.conf is rewritten on
// every start, which also closes clusters made by older versions.
//
// One process per DataDir: Start takes a lock (flock on DataDir/lethe.lock)
// and refuses a folder another process holds with an *InUseError naming
// it, touching nothing. A server found still running from a folder nobody
// holds was left by a killed process, and is stopped and started afresh.
//
// When the process runs as root the server runs as an OS user of lethe's
// own (Config.OSUser, DefaultOSUser "lethe-pg"), created as a system user
// when missing, because PostgreSQL refuses to run as root; never as the
// machine's "postgres" user, which another PostgreSQL runs as: every
// process of the socket folder's owner can connect as superuser. The data
// stays in DataDir: Start hands the cluster's own files to that user (a
// cluster an older lethe ran as postgres too, said in the log), and
// refuses a DataDir it cannot reach with a message saying what to do.
package pgembed
