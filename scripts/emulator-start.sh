#!/usr/bin/env bash
# Starts the AWS emulator (moto's server: DynamoDB + S3 with conditional writes, transactions and
# S3 If-None-Match) on 127.0.0.1:4566 for the registry-store-aws tests. Idempotent: installs a pinned
# moto into ./.venv only if missing, starts it only if nothing answers yet.
#   PID: .emulator/<port>/moto.pid   log: .emulator/<port>/moto.log (one emulator per port)
# Tests then need: AWS_ENDPOINT_URL=http://127.0.0.1:4566 AWS_REGION=us-east-1
#                  AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
set -euo pipefail

MOTO_VERSION="${MOTO_VERSION:-5.2.5}"
HOST="${EMULATOR_HOST:-127.0.0.1}"
PORT="${EMULATOR_PORT:-4566}"
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
STATE="$ROOT/.emulator/$PORT"
PID_FILE="$STATE/moto.pid"
LOG_FILE="$STATE/moto.log"
URL="http://$HOST:$PORT/moto-api/"

answers() { python3 - "$URL" <<'PY'
import sys, urllib.request
try:
    urllib.request.urlopen(sys.argv[1], timeout=10)
except Exception:
    sys.exit(1)
PY
}

mkdir -p "$STATE"

if [ -f "$PID_FILE" ] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null && answers; then
  echo "emulator already running (pid $(cat "$PID_FILE")) on $HOST:$PORT"
  exit 0
fi

if ! "$VENV/bin/python" -c "import moto, sys; sys.exit(moto.__version__ != '$MOTO_VERSION')" 2>/dev/null; then
  echo "installing moto[server]==$MOTO_VERSION into $VENV"
  venv_install "$VENV" "moto[server]==$MOTO_VERSION"
fi

if answers; then
  echo "something already answers on $HOST:$PORT; not starting another emulator" >&2
  exit 1
fi

# moto_server handles requests on concurrent threads without a lock, so two conditional writes
# can both pass their checks (seen: two TransactWriteItems both creating one item with
# attribute_not_exists). DynamoDB is linearizable per item; to test our races against that
# behaviour, this runs moto_server's own main with each request served under one lock.
#
# moto's TransactWriteItems deep-copies the target table once per item of the transaction (its
# rollback state), so a 100-item transaction on a table of N items copies 100 N items, and every
# transaction's cost grows with its table. Here a transaction copies only the items it targets,
# before the first write, and a cancelled one puts exactly those back (requests are serialized, so
# nothing else changed them meanwhile): the same rollback at a cost independent of the table. A
# transaction whose targets cannot be read up front (malformed: moto answers its error) falls back
# to copying each table once.
#
# moto also recomputes, on every request, two things that never change while it runs: the list of
# its service modules (a directory listing and a stat per module: about a sixth of a request's
# time) and the action names of a service's response class (inspect.getmembers). Both are
# computed once here.
#
# moto also keeps every model object it ever created (each item, each of those table copies) in a
# class-level list for its dashboard and reset, so its memory only grows, by gigabytes over the
# suite, although every test deletes its tables. Objects are not tracked here: a deleted table is
# freed, and the emulator stays at about 100 MB (reset and the dashboard are not used by the tests).
SERIAL_MOTO='
import copy, functools, sys, threading
import moto.backends as backends
import moto.core.responses as responses
import moto.server as server
import moto.dynamodb.models as dynamodb_models
from moto.core.common_models import BaseModel
from moto.dynamodb.models.table import Table

BaseModel.__new__ = staticmethod(lambda cls, *args, **kwargs: object.__new__(cls))

_moto_modules = tuple(backends.list_of_moto_modules())
backends.list_of_moto_modules = lambda: _moto_modules
responses.method_names_from_class = functools.lru_cache(maxsize=None)(responses.method_names_from_class)

_lock = threading.Lock()

class SerializedApp(server.DomainDispatcherApplication):
    def __call__(self, environ, start_response):
        with _lock:
            return list(super().__call__(environ, start_response))

class TablesOncePerCall:
    def __init__(self):
        self.tables = {}
    def deepcopy(self, value, *args, **kwargs):
        if not isinstance(value, Table):
            return copy.deepcopy(value, *args, **kwargs)
        if id(value) not in self.tables:
            self.tables[id(value)] = copy.deepcopy(value, *args, **kwargs)
        return self.tables[id(value)]
    def __getattr__(self, name):
        return getattr(copy, name)

class TablesNotCopied:
    def deepcopy(self, value, *args, **kwargs):
        if isinstance(value, Table):
            return value
        return copy.deepcopy(value, *args, **kwargs)
    def __getattr__(self, name):
        return getattr(copy, name)

def targets(backend, transact_items):
    found = []
    for entry in transact_items:
        ((op_type, op),) = entry.items()
        table = backend.get_table(op["TableName"])
        key = op["Key"] if op_type != "Put" else {
            name: op["Item"][name] for name in (table.hash_key_attr, table.range_key_attr) if name is not None}
        hash_value, range_value = backend.get_keys_value(table, key)
        found.append((table, hash_value, range_value, copy.deepcopy(table.get_item(hash_value, range_value))))
    return found

def restore(found):
    for table, hash_value, range_value, original in reversed(found):
        if original is None:
            table.delete_item(hash_value, range_value)
        elif range_value is not None:
            table.items[hash_value][range_value] = original
        else:
            table.items[hash_value] = original

_transact_write_items = dynamodb_models.DynamoDBBackend.transact_write_items

def transact_write_items(self, transact_items):
    try:
        found = targets(self, transact_items)
    except Exception:
        found = None
    dynamodb_models.copy = TablesOncePerCall() if found is None else TablesNotCopied()
    try:
        return _transact_write_items(self, transact_items)
    except Exception:
        if found is not None:
            restore(found)
        raise
    finally:
        dynamodb_models.copy = copy

dynamodb_models.DynamoDBBackend.transact_write_items = transact_write_items
server.DomainDispatcherApplication = SerializedApp
server.main(sys.argv[1:])
'
nohup "$VENV/bin/python" -c "$SERIAL_MOTO" -H "$HOST" -p "$PORT" >"$LOG_FILE" 2>&1 &
echo $! >"$PID_FILE"

# Up to 120 s: moto's imports take seconds, many more on a machine busy with other jobs; an
# emulator that exits ends the wait at once.
waited_until=$((SECONDS + 120))
while [ "$SECONDS" -lt "$waited_until" ]; do
  if answers; then
    echo "emulator started (pid $(cat "$PID_FILE")) on $HOST:$PORT"
    exit 0
  fi
  if ! kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
    echo "emulator exited; see $LOG_FILE" >&2
    tail -n 20 "$LOG_FILE" >&2 || true
    exit 1
  fi
  sleep 0.2
done
echo "emulator did not answer on $HOST:$PORT within 120 s; see $LOG_FILE" >&2
exit 1
