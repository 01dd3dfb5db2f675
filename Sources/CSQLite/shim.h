// The system's SQLite (Debian's libsqlite3-dev), the benchmark's durable peer.
#include <sqlite3.h>
