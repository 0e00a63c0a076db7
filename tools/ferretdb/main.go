// Command ferretdb-embed runs FerretDB 1.24 (SQLite or PostgreSQL backend) as a local MongoDB-wire server for
// development and tests. FerretDB's own `go install`ed command panics at start (its version file
// is generated at release time and is missing from the module zip); embedding the library from a
// module of our own avoids that code path.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to listen on")
	dir := flag.String("data-dir", "", "directory for the SQLite files (SQLite backend; required there)")
	pgURL := flag.String("postgresql-url", "", "PostgreSQL connection URL (selects the PostgreSQL backend)")
	flag.Parse()

	cfg := &ferretdb.Config{Listener: ferretdb.ListenerConfig{TCP: *listen}}
	switch {
	case *pgURL != "" && *dir != "":
		log.Fatal("--data-dir and --postgresql-url are exclusive")
	case *pgURL != "":
		cfg.Handler = "postgresql"
		cfg.PostgreSQLURL = *pgURL
	default:
		// No in-memory mode: with FerretDB 1.24's SQLite backend in memory, every update command hangs.
		if *dir == "" {
			log.Fatal("--data-dir or --postgresql-url is required")
		}
		if err := os.MkdirAll(*dir, 0o700); err != nil {
			log.Fatalf("create data dir: %v", err)
		}
		// BEGIN IMMEDIATE: with deferred transactions, a read that upgrades to a write under WAL fails at once with
		// SQLITE_BUSY (the busy timeout does not apply to that upgrade), which surfaced as sporadic update failures.
		cfg.Handler = "sqlite"
		cfg.SQLiteURL = "file:" + *dir + "/?_txlock=immediate"
	}

	f, err := ferretdb.New(cfg)
	if err != nil {
		log.Fatalf("start FerretDB: %v", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	// The readiness line is parsed by scripts/services; keep its shape.
	fmt.Printf("ready %s\n", f.MongoDBURI())
	f.Run(ctx)
}
