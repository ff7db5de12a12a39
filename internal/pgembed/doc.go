// Package pgembed runs a private PostgreSQL server from binaries already
// installed on the machine, so lethe can be developed, tested and demoed
// without a separately managed database.
//
// The cluster lives in a folder of its own (Config.DataDir): the data
// directory in DataDir/data and the server log in DataDir/pg.log. Data is
// kept between starts, so a Cluster can be stopped and started again.
//
// When the process runs as root the server runs as the "postgres" OS user,
// because PostgreSQL refuses to run as root. If that user cannot reach
// DataDir (for example under /root), the cluster is placed in a folder
// under os.TempDir() instead; Cluster.Dir reports where it ended up.
//
// One DataDir belongs to one Cluster at a time: Start stops a server it
// finds still running from the same folder.
package pgembed
